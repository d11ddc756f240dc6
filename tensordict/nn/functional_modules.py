"""``make_functional``: a module called with its parameters as an argument.

Seed 004's functional-programming example: ``params = make_functional(model)`` returns
the model's parameters as a tensordict and lets ``model(x, params=params)`` (or
``model(x, params)``, params last) run with whichever parameters it is given, which is
what ``torch.vmap(model, (None, 0))(x, stacked_params)`` needs for an ensemble. The
call puts ``params`` into the module with :meth:`TensorDict.to_module` for its duration.
"""

from __future__ import annotations

from typing import Callable, Sequence

from torch import nn

from tensordict._module_state import from_module
from tensordict._pytree import _exclude_td_from_pytree  # noqa: F401  (TorchRL imports it)
from tensordict.base import TensorDictBase

__all__ = ["make_functional", "is_functional"]

_FUNCTIONAL_CLASSES: dict = {}


def _stateless_error(module: nn.Module) -> RuntimeError:
    return RuntimeError(
        f"{type(module).__name__} was made functional without its parameters "
        f"(make_functional(..., keep_params=False)): pass them, as the last positional "
        f"argument or as params=..."
    )


def _functional_call(self, original: Callable, args: tuple, kwargs: dict):
    params = kwargs.pop("params", None)
    if params is None and self.__dict__.get("_functional_stateless", False):
        if not args or not isinstance(args[-1], TensorDictBase):
            raise _stateless_error(self)
        params, args = args[-1], args[:-1]
    if params is None:
        return original(self, *args, **kwargs)
    with params.to_module(self):
        return original(self, *args, **kwargs)


def _functional_class(cls: type, names: tuple) -> type:
    """A subclass of ``cls`` whose methods ``names`` take ``params`` (cached)."""
    cached = _FUNCTIONAL_CLASSES.get((cls, names))
    if cached is not None:
        return cached
    namespace = {"_functional_methods": names}
    for name in names:
        original = getattr(cls, name)

        def method(self, *args, _original=original, **kwargs):
            return _functional_call(self, _original, args, kwargs)

        method.__name__ = name
        method.__qualname__ = f"Functional{cls.__name__}.{name}"
        method.__doc__ = original.__doc__
        namespace[name] = method
    functional = type(f"Functional{cls.__name__}", (cls,), namespace)
    functional.__module__ = cls.__module__
    _FUNCTIONAL_CLASSES[(cls, names)] = functional
    return functional


def _drop_tensors(module: nn.Module) -> None:
    for child in module.modules():
        for name in child._parameters:
            child._parameters[name] = None
        for name in child._buffers:
            child._buffers[name] = None


def make_functional(
    module: nn.Module,
    funs_to_decorate: Sequence[str] | None = None,
    keep_params: bool = False,
    return_params: bool = True,
):
    """Make ``module`` take its parameters as an argument; return them as a
    tensordict (the tensors themselves, nested like the submodules, as
    :meth:`TensorDict.from_module` gives them).

    The module's methods ``funs_to_decorate`` (``["forward"]`` by default) then take
    a ``params`` keyword, or, unless ``keep_params``, the parameters as their last
    positional argument: ``model(x, params)``, the form ``torch.vmap(model, (None,
    0))(x, stacked_params)`` calls. ``keep_params=False`` (the default) takes the
    tensors out of the module: it only runs with parameters passed in.
    ``keep_params=True`` keeps them, and ``params=`` is optional.

    >>> import torch
    >>> from torch import nn
    >>> model = nn.Linear(3, 4)
    >>> params = make_functional(model)
    >>> list(model.parameters())
    []
    >>> model(torch.randn(2, 3), params=params).shape
    torch.Size([2, 4])
    >>> model(torch.randn(2, 3), params.apply(torch.zeros_like)).abs().sum().item()
    0.0
    """
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"make_functional expects an nn.Module, got {type(module).__name__}"
        )
    names = tuple(funs_to_decorate or ("forward",))
    params = from_module(module, lock=False)
    base = type(module)
    if getattr(base, "_functional_methods", None) is not None:
        base = base.__mro__[1]  # already functional: decorate the original class again
    module.__class__ = _functional_class(base, names)
    module.__dict__["_functional_stateless"] = not keep_params
    if not keep_params:
        _drop_tensors(module)
    return params if return_params else None


def is_functional(module: nn.Module) -> bool:
    """Whether ``module`` went through :func:`make_functional`."""
    return getattr(type(module), "_functional_methods", None) is not None
