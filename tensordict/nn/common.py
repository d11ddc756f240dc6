"""Modules that read their inputs from a tensordict and write their outputs into it.

:class:`TensorDictModuleBase` is the base: an ``nn.Module`` with ``in_keys`` and
``out_keys`` whose ``forward`` takes a tensordict. Every subclass's ``forward`` also
accepts tensors (see :func:`dispatch`): positional tensors fill ``in_keys`` in order and
the call returns the output tensors; keyword tensors (``module(x=...)``) fill the keys
they name and the call returns the tensordict, as seed 004 describes.

:class:`TensorDictModule` wraps any callable on tensors: it reads ``in_keys``, calls the
callable, and writes the results at ``out_keys``. Errors from the callable come back
naming the module, its input keys and what they held.
"""

from __future__ import annotations

import functools
import inspect
import pickle
import warnings
from typing import Any, Callable, Sequence

import torch
from torch import Tensor, nn
from torch.nn.modules.module import (
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_forward_hooks,
    _global_forward_pre_hooks,
)

from tensordict import _errors
from tensordict._keys import NestedKey, unravel_key, unravel_key_list
from tensordict._registry import container_class
from tensordict.base import TensorDictBase
from tensordict.functional import make_tensordict  # noqa: F401  (tensordict.nn name)
from tensordict.nn.utils import _DISPATCH_TD_NN_MODULES, _SKIP_EXISTING, outputs_exist

__all__ = [
    "TensorDictModule",
    "TensorDictModuleBase",
    "TensorDictModuleWrapper",
    "WrapModule",
    "as_tensordict_module",
    "dispatch",
    "make_tensordict",
]


class _KeysTypeError(TypeError, ValueError):
    """Keys that are not keys (0.15.3 raises ValueError, this project TypeError)."""


def _key_list(keys, what: str, allow_none: bool = True) -> list:
    """``keys`` as a list of unravelled keys; one key (a string or a tuple of strings,
    a nested key) stands for a list of one; None for none (unless ``allow_none`` is
    false)."""
    if keys is None and allow_none:
        return []
    if isinstance(keys, (str, tuple)):
        keys = [keys]
    try:
        return unravel_key_list(list(keys))
    except (TypeError, ValueError) as err:
        raise _KeysTypeError(  # 0.15.3's phrase first
            f"{what} must be of type list, str or tuples of str: {what} must be a key "
            f"(a string or a tuple of strings) or a list of keys, got {keys!r}"
        ) from err


def _flat_name(key, separator: str) -> str:
    return key if isinstance(key, str) else separator.join(key)


def _new_tensordict(batch_size=()):
    return container_class("TensorDict")(batch_size=batch_size)


# --------------------------------------------------------------------------------------
# Calling a tensordict function with tensors
# --------------------------------------------------------------------------------------


def _gather_tensors(in_keys, args, kwargs, separator: str, owner: str):
    """The tensordict a call with tensors stands for: positional tensors at
    ``in_keys`` in order, keyword tensors at the key their name spells (nested keys
    joined with ``separator``: ``next_obs`` for ``("next", "obs")``)."""
    if len(args) > len(in_keys):
        raise TypeError(
            f"{owner} got {len(args)} positional tensors but has only {len(in_keys)} "
            f"in_keys {in_keys}: pass one tensor per input key, or keyword tensors "
            f"named after the keys"
        )
    td = _new_tensordict()
    for key, value in zip(in_keys, args):
        td.set(key, value)
    if kwargs:
        by_name = {_flat_name(key, separator): key for key in in_keys}
        for name, value in kwargs.items():
            key = by_name.get(name)
            if key is None:
                key = tuple(name.split(separator)) if separator in name else name
            td.set(key, value)
    return td


def _dict_outputs(outputs: dict):
    """A module's dict output as a tensordict without batch dims (None where it does
    not make one)."""
    try:
        return container_class("TensorDict")(outputs)
    except (TypeError, ValueError, RuntimeError):
        return None


def _outputs(td, out_keys):
    values = tuple(td.get(key) for key in out_keys)
    return values[0] if len(values) == 1 else values


class dispatch:
    """Let a function of a tensordict be called with tensors.

    ``@dispatch`` on ``forward(self, tensordict)`` (or on a function of a tensordict)
    makes ``forward(x, y)`` and ``forward(x=..., y=...)`` build the tensordict from the
    tensors (positional ones go to the keys of ``source`` in order, keyword ones to the
    key their name spells, nested keys joined by ``separator``), run the function, and
    return the tensors at the keys of ``dest`` (one tensor for one key, else a tuple).
    ``source`` and ``dest`` are lists of keys or names of attributes of the module
    holding them (``"in_keys"`` / ``"out_keys"``). With ``auto_batch_size`` the
    tensordict gets the leading dims its tensors share as batch size. A call with a
    tensordict goes straight through. So does any call under
    ``_set_dispatch_td_nn_modules(False)``: the function takes its arguments as given.

    >>> import torch
    >>> from torch import nn
    >>> class Add(nn.Module):
    ...     in_keys = ["x", ("nested", "y")]
    ...     out_keys = ["z"]
    ...     @dispatch
    ...     def forward(self, tensordict):
    ...         return tensordict.set("z", tensordict["x"] + tensordict["nested", "y"])
    >>> Add()(torch.ones(2), torch.ones(2))
    tensor([2., 2.])
    >>> Add()(x=torch.ones(2), nested_y=torch.zeros(2))
    tensor([1., 1.])
    """

    def __new__(cls, separator="_", *args, **kwargs):
        if callable(separator):  # bare @dispatch
            return cls()(separator)
        return super().__new__(cls)

    def __init__(
        self,
        separator: str = "_",
        source: str | Sequence[NestedKey] = "in_keys",
        dest: str | Sequence[NestedKey] = "out_keys",
        auto_batch_size: bool = True,
    ) -> None:
        self.separator = separator
        self.source = source if isinstance(source, str) else unravel_key_list(source)
        self.dest = dest if isinstance(dest, str) else unravel_key_list(dest)
        self.auto_batch_size = auto_batch_size

    def __call__(self, func: Callable) -> Callable:
        params = list(inspect.signature(func).parameters)
        is_method = bool(params) and params[0] == "self"
        source, dest = self.source, self.dest
        separator, auto_batch_size = self.separator, self.auto_batch_size

        def keys_of(owner, spec):
            return getattr(owner, spec) if isinstance(spec, str) else spec

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            start = 1 if is_method else 0
            if len(args) > start and isinstance(args[start], TensorDictBase):
                return func(*args, **kwargs)
            if "tensordict" in kwargs:
                return func(*args, **kwargs)
            if not _DISPATCH_TD_NN_MODULES.get():
                # _set_dispatch_td_nn_modules(False): the function takes its
                # arguments as written (TorchRL's replay buffers pass a transform
                # plain data this way)
                return func(*args, **kwargs)
            owner = args[0] if is_method else None
            td = _gather_tensors(
                keys_of(owner, source),
                args[start:],
                kwargs,
                separator,
                getattr(func, "__qualname__", "the function"),
            )
            if auto_batch_size:
                td.auto_batch_size_()
            out = func(*args[:start], td)
            return _outputs(out, keys_of(owner, dest))

        wrapper._dispatches = True
        return wrapper


# --------------------------------------------------------------------------------------
# TensorDictModuleBase
# --------------------------------------------------------------------------------------


def _handles_calls(forward: Callable) -> Callable:
    """Wrap a subclass's ``forward(self, tensordict, ...)`` so that it also takes
    tensors (see the module docstring), honours :func:`skip_existing`, and drops the
    outputs :meth:`TensorDictModuleBase.select_out_keys` left out."""

    @functools.wraps(forward)
    def wrapper(self, *args, **kwargs):
        if args:
            tensordict = args[0]
        else:
            tensordict = kwargs.get("tensordict")
        if not isinstance(tensordict, TensorDictBase):
            if (
                tensordict is None and not kwargs
            ):  # forward(None), forward(): as written
                return forward(self, *args, **kwargs)
            if getattr(forward, "_dispatches", False):  # its own @dispatch decides
                return forward(self, *args, **kwargs)
            if not _DISPATCH_TD_NN_MODULES.get():  # _set_dispatch_td_nn_modules(False)
                return forward(self, *args, **kwargs)
            return _call_with_tensors(self, args, kwargs)
        mode = _SKIP_EXISTING.get()
        if mode is not False and outputs_exist(
            tensordict, self.in_keys, self.out_keys, mode
        ):
            return tensordict
        dropped = self.__dict__.get("_dropped_out_keys")
        if not dropped:
            return forward(self, *args, **kwargs)
        had = [key for key in dropped if key in tensordict.keys(True)]
        out = forward(self, *args, **kwargs)
        return out.exclude(*[key for key in dropped if key not in had])

    wrapper._handles_calls = True
    return wrapper


def _call_with_tensors(module, args, kwargs, separator: str = "_"):
    """``module(x, y)`` / ``module(x=..., y=...)``: the call on the tensordict these
    tensors make. Positional tensors give back the output tensors; keyword tensors give
    back the tensordict (its batch size: the leading dims every entry shares)."""
    td = _gather_tensors(module.in_keys, args, kwargs, separator, _describe(module))
    out = module.forward(td)
    if args:
        return _outputs(out, module.out_keys)
    out.auto_batch_size_()
    return out


def _describe(module) -> str:
    """How errors name a module: its class and keys, on one line."""
    return (
        f"{type(module).__name__}(in_keys={getattr(module, 'in_keys', '?')}, "
        f"out_keys={getattr(module, 'out_keys', '?')})"
    )


def _calls_forward_directly(module_dict: dict) -> bool:
    """Whether calling the module whose ``__dict__`` this is may run ``forward`` itself
    instead of ``nn.Module.__call__``: no hook registered on it or globally, no
    ``module.compile()``, no JIT trace. (The dict is read directly:
    ``nn.Module.__getattr__`` makes every ``module.attribute`` a slow lookup.)"""
    d = module_dict
    try:
        if (
            d["_forward_pre_hooks"]
            or d["_forward_hooks"]
            or d["_backward_pre_hooks"]
            or d["_backward_hooks"]
            or ("_compiled_call_impl" in d and d["_compiled_call_impl"] is not None)
        ):
            return False
    except KeyError:  # not set up by nn.Module.__init__: nn.Module.__call__ says so
        return False
    # torch registers global hooks into these very dicts (it never rebinds them)
    return not (
        _global_forward_pre_hooks
        or _global_forward_hooks
        or _global_backward_pre_hooks
        or _global_backward_hooks
        or _get_tracing_state()
    )


_get_tracing_state = torch._C._get_tracing_state


class _ByValue:
    """A plain callable on its way through pickle, sent by value where it must be.

    A lambda or a function defined inside another cannot be pickled by reference, so
    a module holding one could not go to a ``spawn``-ed worker process (TorchRL's
    multiprocess collectors send the policy that way). With ``cloudpickle`` installed
    the callable is pickled by value (``cloudpickle`` still names importable functions
    by reference); without it, by reference as plain pickle does. ``copy.deepcopy``
    keeps the callable itself, as it does for any function.
    """

    __slots__ = ("fn",)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __reduce__(self):
        try:
            import cloudpickle
        except ImportError:
            return (_same, (self.fn,))
        return (pickle.loads, (cloudpickle.dumps(self.fn),))

    def __deepcopy__(self, memo):
        return self.fn


def _same(value):
    return value


def _callables_by_value(state: dict, names: tuple) -> dict:
    """``state`` with its plain callables (not modules) under ``names`` wrapped in
    :class:`_ByValue`."""
    for name in names:
        value = state.get(name)
        if value is not None and not isinstance(value, nn.Module):
            state[name] = _ByValue(value)
    return state


def _callables_unwrapped(state: dict, names: tuple) -> dict:
    for name in names:
        value = state.get(name)
        if isinstance(value, _ByValue):  # copy.copy hands the state back as it was
            state[name] = value.fn
    return state


class TensorDictModuleBase(nn.Module):
    """Base class of the modules that read and write tensordicts.

    A subclass sets ``in_keys`` and ``out_keys`` (class attributes or in
    ``__init__``) and writes ``forward(self, tensordict)``, which returns the
    tensordict (usually the one it got, with the outputs written in). Its ``forward``
    then also takes tensors (see the module docstring), skips itself under
    :class:`set_skip_existing` when its outputs exist, and honours
    :meth:`select_out_keys`.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> class Double(TensorDictModuleBase):
    ...     in_keys = ["x"]
    ...     out_keys = ["y"]
    ...     def forward(self, tensordict):
    ...         return tensordict.set("y", tensordict["x"] * 2)
    >>> Double()(TensorDict(x=torch.ones(2), batch_size=[2]))["y"]
    tensor([2., 2.])
    >>> Double()(torch.ones(2))
    tensor([2., 2.])
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        forward = cls.__dict__.get("forward")
        if forward is not None and not getattr(forward, "_handles_calls", False):
            cls.forward = _handles_calls(forward)
        # 0.15.3 keeps out_keys given as a class attribute (a list) in ``_out_keys``
        # too, the same list. A plain class attribute, so that a subclass that stores
        # its own ``_out_keys`` on the instance (TorchRL's IQLLoss sets it to None)
        # shadows it without touching ``out_keys``; one that keeps ``out_keys`` behind
        # a property has no list here and is left alone.
        for name in ("in_keys", "out_keys"):  # nested tuples unravelled (0.15.3)
            keys = cls.__dict__.get(name)
            if type(keys) in (list, tuple):
                try:
                    type.__setattr__(cls, name, unravel_key_list(list(keys)))
                except (TypeError, ValueError):
                    pass
        out_keys = cls.__dict__.get("out_keys")
        if isinstance(out_keys, (list, tuple)) and "_out_keys" not in cls.__dict__:
            cls._out_keys = out_keys

    def __setattr__(self, name: str, value: Any) -> None:
        if (name == "in_keys" or name == "out_keys") and type(value) in (list, tuple):
            # nested keys given as nested tuples (("c", ("d",))) are unravelled, as
            # in 0.15.3, whoever sets them (a subclass's __init__ included)
            try:
                value = unravel_key_list(list(value))
            except (TypeError, ValueError):
                pass  # not keys: the subclass's own business
        super().__setattr__(name, value)

    def __call__(self, *args, **kwargs):
        """``forward`` straight away when no hook can fire (see
        :func:`_calls_forward_directly`), else ``nn.Module.__call__``, hooks and all.
        A tensordict module often wraps a small layer, and ``nn.Module.__call__``'s
        hook checks and two extra frames cost a third of the call's own work."""
        if _calls_forward_directly(self.__dict__):
            return self.forward(*args, **kwargs)
        return nn.Module.__call__(self, *args, **kwargs)

    def __repr__(self) -> str:
        # a subclass with a layout of its own (extra_repr) keeps nn.Module's; the
        # others print their submodules and keys, as 0.15.3 does
        if type(self).extra_repr is not nn.Module.extra_repr:
            return super().__repr__()
        fields = [
            f"{name}={repr(module)}".replace("\n", "\n    ")
            for name, module in self._modules.items()
        ]
        for name in ("in_keys", "out_keys"):
            try:
                fields.append(f"{name}={getattr(self, name)!r}")
            except Exception:  # a property that cannot answer yet
                continue
        if not fields:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(\n    " + ",\n    ".join(fields) + ")"

    @staticmethod
    def is_tdmodule_compatible(module) -> bool:
        """Whether ``module`` reads and writes tensordicts (it has ``in_keys`` and
        ``out_keys``)."""
        return hasattr(module, "in_keys") and hasattr(module, "out_keys")

    @property
    def _select_before_return(self) -> bool:
        """Whether :meth:`select_out_keys` left outputs out (0.15.3's flag)."""
        return "_out_keys_source" in self.__dict__

    @property
    def out_keys_source(self) -> list:
        """Every key the module writes (``out_keys`` are the ones it returns, after
        :meth:`select_out_keys`)."""
        return self.__dict__.get("_out_keys_source", self.out_keys)

    def select_out_keys(self, *out_keys: NestedKey) -> "TensorDictModuleBase":
        """Return only ``out_keys`` among the outputs (in place; returns the module).
        The other outputs are not written (or are removed after ``forward`` for
        modules that write them anyway), unless they were in the input already.

        >>> import torch
        >>> from tensordict import TensorDict
        >>> from tensordict.nn import TensorDictModule
        >>> module = TensorDictModule(lambda x: (x + 1, x + 2), ["x"], ["y", "z"])
        >>> list(module.select_out_keys("z")(TensorDict(x=torch.zeros(1))).keys())
        ['x', 'z']
        """
        for key in out_keys:  # 0.15.3's phrases lead (existing code matches them)
            if not isinstance(key, (str, tuple)):
                raise RuntimeError(
                    f"key should be a Sequence<NestedKey>: select_out_keys takes the "
                    f"keys unpacked (select_out_keys('a', 'b')), got {key!r}"
                )
        wanted = unravel_key_list(list(out_keys))
        source = list(self.out_keys_source)
        unknown = [key for key in wanted if key not in source]
        if unknown:
            raise _errors.OutKeyNotFoundError(
                f"Can't select non existent key: {unknown[0]}. "
                f"select_out_keys: {unknown} are not among the keys {_describe(self)} "
                f"writes ({source})"
            )
        self.__dict__["_out_keys_source"] = source
        self.out_keys = [key for key in source if key in wanted]
        self.__dict__["_dropped_out_keys"] = [k for k in source if k not in wanted]
        self._out_keys_changed()
        return self

    def reset_out_keys(self) -> "TensorDictModuleBase":
        """Undo :meth:`select_out_keys`: return every output again."""
        source = self.__dict__.pop("_out_keys_source", None)
        self.__dict__.pop("_dropped_out_keys", None)
        if source is not None:
            self.out_keys = source
            self._out_keys_changed()
        return self

    def _out_keys_changed(self) -> None:
        """Called when ``out_keys`` change (subclasses that cache them rebuild)."""

    def reset_parameters_recursive(
        self, parameters: TensorDictBase | None = None
    ) -> TensorDictBase | None:
        """Re-initialise every submodule that has ``reset_parameters``. Given
        ``parameters`` (a tensordict as ``from_module`` returns, without batch dims),
        re-initialise those in place instead, leaving the module's own untouched, and
        return them. Warns when there is nothing to re-initialise."""
        if parameters is not None:
            if parameters.batch_dims:  # 0.15.3's phrase first
                raise RuntimeError(
                    f"reset_parameters_recursive does not support batched TensorDicts: "
                    f"the parameters have batch_size {list(parameters.batch_size)}; "
                    f"reset_parameters initialises one set of parameters: reset them "
                    f"one at a time (for p in params.unbind(0)) or give a tensordict "
                    f"without batch dims"
                )
            with parameters.to_module(self), torch.no_grad():
                self._reset_submodules()
            return parameters
        if not self._reset_submodules():
            warnings.warn(
                "reset_parameters_recursive was called without the parameters "
                "argument and did not find any parameters to reset: no submodule of "
                f"{type(self).__name__} has a reset_parameters method",
                UserWarning,
                stacklevel=2,
            )
        return None

    def _reset_submodules(self) -> int:
        """Call ``reset_parameters`` of every submodule that has one; how many."""
        count = 0
        for module in self.modules():
            if module is not self and callable(
                getattr(module, "reset_parameters", None)
            ):
                module.reset_parameters()
                count += 1
        return count


# --------------------------------------------------------------------------------------
# TensorDictModule
# --------------------------------------------------------------------------------------


class _NotCallableError(TypeError, ValueError):
    """TensorDictModule given something it cannot call (0.15.3 raises ValueError)."""


def _module_input(value):
    """What a module gets for the entry ``value``: non-tensor data as its value (a
    ``NonTensorStack`` as the list of its values), as in 0.15.3."""
    if not getattr(type(value), "_is_non_tensor", False):
        return value
    if isinstance(value, container_class("NonTensorStack")):
        return value.tolist()
    return value.data


class TensorDictModule(TensorDictModuleBase):
    """Wrap a callable on tensors so that it reads and writes a tensordict.

    Args:
        module: the callable (an ``nn.Module`` or any function of tensors).
        in_keys: the keys whose values are passed to ``module``, in order: a key, a
            list of keys, or a dict mapping ``module``'s keyword argument names to
            keys (``{"input": ("obs", "pixels")}``), which are then passed by name.
        out_keys: the keys at which ``module``'s outputs are written, in order.

    Keyword Args:
        out_to_in_map: how a dict of ``in_keys`` reads: ``True`` (the default) maps
            argument names to keys, ``False`` keys to argument names.
        inplace: ``True`` (the default) writes the outputs into the input tensordict;
            ``False`` into a new ``TensorDict`` without batch dims; ``"empty"`` into an
            empty copy of the input (same class, batch size and device); ``None``
            is ``False`` (TorchRL's ``SafeSequential`` passes it on).
        method: call ``module.<method>`` instead of ``module`` itself.
        method_kwargs: extra keyword arguments for every call.
        strict: a missing input key is an error before the call (by default the
            callable gets ``None`` for it, so that optional arguments can be left out).
        get_kwargs: keyword arguments for reading the inputs (``{"default": ...}``).

    A missing input, or a callable that rejects what it gets, raises an error naming
    the module, the keys and what they held.

    >>> import torch
    >>> from torch import nn
    >>> from tensordict import TensorDict
    >>> module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    >>> module(TensorDict(x=torch.randn(10, 3), batch_size=[10]))["y"].shape
    torch.Size([10, 4])
    >>> module(x=torch.randn(10, 3)).batch_size  # keyword tensors: a tensordict
    torch.Size([10])
    >>> module(torch.randn(10, 3)).shape  # positional tensors: the outputs
    torch.Size([10, 4])
    """

    def __init__(
        self,
        module: Callable,
        in_keys: NestedKey | list | dict,
        out_keys: NestedKey | list,
        *,
        out_to_in_map: bool | None = None,
        inplace: bool | str = True,
        method: str | None = None,
        method_kwargs: dict | None = None,
        strict: bool = False,
        get_kwargs: dict | None = None,
    ) -> None:
        super().__init__()
        if type(module) is type or (method is None and not callable(module)):
            # 0.15.3's words first (code matches them); a TypeError too, as before
            raise _NotCallableError(
                f"Module {module!r} of type {type(module).__name__} is not callable: "
                f"TensorDictModule wraps a callable on tensors (an nn.Module "
                f"instance, a function), not a class; pass method= to call one of "
                f"its methods"
            )
        if out_to_in_map is not None and not isinstance(in_keys, dict):
            warnings.warn(  # 0.15.3's words
                "out_to_in_map is not None but is only used when in_key is a "
                "dictionary.",
                UserWarning,
                stacklevel=2,
            )
        if isinstance(in_keys, dict):
            if out_to_in_map is False:  # {in_key: argument name}
                pairs = [(unravel_key(k), name) for k, name in in_keys.items()]
            else:  # {argument name: in_key}
                pairs = [(unravel_key(k), name) for name, k in in_keys.items()]
            for _, name in pairs:
                if not isinstance(name, str):
                    raise TypeError(
                        f"TensorDictModule: in_keys as a dict maps argument names "
                        f"(strings) to keys; {name!r} is not a string (pass "
                        f"out_to_in_map=False for a dict from keys to names)"
                    )
            self.in_keys = [key for key, _ in pairs]
            self._arg_names = [name for _, name in pairs]
        else:
            self.in_keys = _key_list(in_keys, "in_keys", allow_none=False)
            self._arg_names = None
        self.out_keys = _key_list(out_keys, "out_keys", allow_none=False)
        if "_" in self.in_keys:
            warnings.warn(  # 0.15.3's words
                'key "_" is for ignoring output, it should not be used in input keys',
                UserWarning,
                stacklevel=2,
            )
        if inplace not in (True, False, "empty", None):
            raise ValueError(
                f"TensorDictModule: inplace must be True, False or 'empty', got "
                f"{inplace!r}"
            )
        self.module = module
        self.inplace = inplace
        self.method = method
        self.method_kwargs = dict(method_kwargs or {})
        self.strict = strict
        self.get_kwargs = dict(get_kwargs or {})
        self._out_keys_changed()

    def __getstate__(self) -> dict:
        # a lambda as the callable pickles by value (as in 0.15.3): see _ByValue
        return _callables_by_value(super().__getstate__(), ("module",))

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(_callables_unwrapped(state, ("module",)))

    def __getattr__(self, name: str) -> Any:
        # the wrapped module's own attributes and methods read through (as in
        # 0.15.3); dunder names do not (copy.deepcopy must not find the module's)
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__"):
                raise
            module = self.__dict__.get("_modules", {}).get("module")
            if module is None:
                raise
            return getattr(module, name)

    def _out_keys_changed(self) -> None:
        # which outputs of the callable are written, and where: (position, key); the
        # plan holds for this very out_keys list (forward re-plans when it is replaced)
        self.__dict__["_planned_out_keys"] = self.out_keys
        source = self.out_keys_source
        selected = self.out_keys
        self._n_outputs = len(source)
        # an output at "_" is dropped, as in 0.15.3 (out_keys=["_", "y"])
        self._write_plan = [
            (i, k) for i, k in enumerate(source) if k in selected and k != "_"
        ]
        # The common call (positional inputs, one tensor out written in place under a
        # plain key, no option) takes a short path in forward.
        plain = (
            self._arg_names is None
            and self.method is None
            and not self.method_kwargs
            and not self.strict
            and not self.get_kwargs
            and self.inplace is True
            and len(source) == 1
            and self._write_plan == [(0, source[0])]
            and isinstance(source[0], str)
        )
        self._plain_out_key = source[0] if plain else None
        # __call__ may go to _forward_plain itself when forward is TensorDictModule's
        # and the keys live in the instance dict (not properties of a subclass)
        self._call_plain_out_key = (
            self._plain_out_key
            if type(self).forward is TensorDictModule.forward
            and "in_keys" in self.__dict__
            and "out_keys" in self.__dict__
            else None
        )

    def _out_keys_reassigned(self) -> None:
        """``module.out_keys = [...]`` after construction: the new list is the full
        set of outputs (any :meth:`select_out_keys` choice is dropped)."""
        self.out_keys = _key_list(self.out_keys, "out_keys")
        self.__dict__.pop("_out_keys_source", None)
        self.__dict__.pop("_dropped_out_keys", None)
        self._out_keys_changed()

    @property
    def device(self) -> torch.device | None:
        """The device of the first parameter or buffer (None without any).
        Deprecated, as in 0.15.3: a module may hold tensors on several devices."""
        warnings.warn(  # 0.15.3's phrase first
            f"{type(self).__name__}.device is deprecated and will be removed in "
            "TensorDict 0.17. Modules may contain parameters and buffers on multiple "
            "devices; inspect the relevant module state explicitly instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        for tensor in self.parameters():
            return tensor.device
        for tensor in self.buffers():
            return tensor.device
        return None

    @property
    def is_functional(self) -> bool:
        """Always False (deprecated, as in 0.15.3)."""
        warnings.warn(
            f"{type(self).__name__}.is_functional is deprecated and will be removed "
            "in TensorDict 0.17.",
            DeprecationWarning,
            stacklevel=2,
        )
        return False

    def __call__(self, *args, **kwargs):
        """As :meth:`TensorDictModuleBase.__call__`; the common call (one tensordict,
        the plain plan of :meth:`_out_keys_changed`, ``forward`` not overridden) goes
        to :meth:`_forward_plain` without ``forward``'s own argument handling."""
        d = self.__dict__  # see _calls_forward_directly
        try:
            out_key = d["_call_plain_out_key"]
            plain = (
                out_key is not None
                and len(args) == 1
                and not kwargs
                and d["out_keys"] is d["_planned_out_keys"]
                and "forward" not in d  # not replaced on the instance
                and isinstance(args[0], TensorDictBase)
                and _SKIP_EXISTING.get() is False
                and _calls_forward_directly(d)
            )
        except KeyError:  # an attribute deleted or __init__ not run: the long way
            plain = False
        if plain:
            return TensorDictModule._forward_plain(self, d, args[0], out_key)
        return TensorDictModuleBase.__call__(self, *args, **kwargs)

    def _forward_plain(self, d: dict, tensordict: TensorDictBase, out_key: str):
        """``forward`` for the common call: inputs passed positionally, one tensor
        out, written in place at the plain key ``out_key`` (``d`` is
        ``self.__dict__``)."""
        get = tensordict.get
        in_keys = d.get("in_keys")
        if in_keys is None:  # a subclass's property
            in_keys = self.in_keys
        if len(in_keys) == 1:  # without building a list
            value = get(in_keys[0], None)
            inputs = (value if type(value) is Tensor else _module_input(value),)
        else:
            inputs = [get(key, None) for key in in_keys]
            if any(type(value) is not Tensor for value in inputs):
                inputs = [_module_input(value) for value in inputs]
        module = d["_modules"].get("module")  # an nn.Module is registered there
        if module is None:
            module = d["module"]
        try:
            output = module(*inputs)
        except Exception as err:
            if any(value is None for value in inputs):
                raise self._missing_error(tensordict, inputs) from err
            raise _rewrap(err, self._call_failed(tensordict, inputs, err)) from err
        if type(output) is not Tensor:
            return self._write(tensordict, output, None)
        try:
            tensordict._set_str(out_key, output, inplace=False, validated=False)
        except (RuntimeError, ValueError, TypeError) as err:
            raise _rewrap(
                err, f"{_describe(self)} could not write its outputs: {err}"
            ) from err
        return tensordict

    def forward(
        self,
        tensordict: TensorDictBase | None = None,
        *args,
        tensordict_out: TensorDictBase | None = None,
        **kwargs,
    ) -> TensorDictBase:
        """Read ``in_keys`` from ``tensordict``, call the module, write ``out_keys``
        (into ``tensordict_out`` when given). Called with tensors instead of a
        tensordict, see the class docstring. Extra keyword arguments go to the
        wrapped callable."""
        d = self.__dict__  # see _calls_forward_directly
        out_key = d["_plain_out_key"]
        if (
            out_key is not None
            and not args
            and not kwargs
            and tensordict_out is None
            and isinstance(tensordict, TensorDictBase)
            and d.get("out_keys") is d["_planned_out_keys"]
            and _SKIP_EXISTING.get() is False
        ):
            return TensorDictModule._forward_plain(self, d, tensordict, out_key)
        if not isinstance(tensordict, TensorDictBase):
            positional = args if tensordict is None else (tensordict, *args)
            return _call_with_tensors(self, positional, kwargs)
        if args:
            raise TypeError(
                f"{_describe(self)} takes one tensordict, got {len(args)} more "
                f"positional arguments"
            )
        if self.out_keys is not self._planned_out_keys:
            self._out_keys_reassigned()
        mode = _SKIP_EXISTING.get()
        if mode is not False and outputs_exist(
            tensordict, self.in_keys, self.out_keys, mode
        ):
            return tensordict
        get = tensordict.get
        default = self.get_kwargs.get("default")
        inputs = [get(key, default) for key in self.in_keys]
        if any(type(value) is not Tensor for value in inputs):
            inputs = [_module_input(value) for value in inputs]
        if self.strict and any(value is None for value in inputs):
            raise self._missing_error(tensordict, inputs)
        call = self.module if self.method is None else getattr(self.module, self.method)
        if self.method_kwargs:
            kwargs = {**self.method_kwargs, **kwargs}
        try:
            if self._arg_names is None:
                outputs = call(*inputs, **kwargs)
            else:
                outputs = call(**dict(zip(self._arg_names, inputs)), **kwargs)
        except Exception as err:
            if isinstance(err, TypeError) and "unexpected keyword argument" in str(err):
                raise  # the in_keys dict names arguments the callable does not take
            if any(value is None for value in inputs):
                raise self._missing_error(tensordict, inputs) from err
            raise _rewrap(err, self._call_failed(tensordict, inputs, err)) from err
        return self._write(tensordict, outputs, tensordict_out)

    forward._handles_calls = True

    def _write(self, tensordict, outputs, tensordict_out):
        if tensordict_out is not None:
            dest = tensordict_out
        elif self.inplace is True:
            dest = tensordict
        elif self.inplace is False or self.inplace is None:  # None: as False
            dest = _new_tensordict()
        else:
            dest = tensordict.empty()
        kind = type(outputs)
        if outputs is None and not self._n_outputs:  # nothing to write
            return dest
        if kind is not tuple and kind is not list:
            if kind is dict:  # a dict keyed by the out_keys: as a tensordict (0.15.3)
                as_td = _dict_outputs(outputs)
                if as_td is not None and all(
                    key in as_td.keys(True) for _, key in self._write_plan
                ):
                    outputs = as_td
            # a tensordict holding every out_key (one included, as in 0.15.3:
            # TorchRL's spec.zero() of a nested action) gives its entries
            if isinstance(outputs, TensorDictBase) and all(
                key in outputs.keys(True) for _, key in self._write_plan
            ):
                outputs = tuple(
                    outputs.get(key) if key in outputs.keys(True) else None
                    for key in self.out_keys_source
                )
            else:
                outputs = (outputs,)
        if len(outputs) != self._n_outputs:
            raise RuntimeError(
                f"{_describe(self)}: the module returned {len(outputs)} outputs for "
                f"the {self._n_outputs} out_keys {self.out_keys_source}"
            )
        try:
            for index, key in self._write_plan:
                value = outputs[index]
                if value is not None:
                    dest.set(key, value)
        except (RuntimeError, ValueError, TypeError) as err:
            raise _rewrap(
                err, f"{_describe(self)} could not write its outputs: {err}"
            ) from err
        return dest

    def _write_to_tensordict(
        self, tensordict, tensors, tensordict_out=None, out_keys=None
    ) -> TensorDictBase:
        """Write ``tensors`` under ``out_keys`` (default: the module's own), one by
        one, into ``tensordict_out`` or, without it, where ``inplace`` says; as
        0.15.3's, which subclasses (TorchRL's planners) call from their ``forward``.
        A key ``"_"`` skips its tensor; a value that is neither a tensor nor a
        tensor collection is converted with ``TensorDict.from_any``."""
        keys = list(self.out_keys_source if out_keys is None else out_keys)
        tensors = list(tensors)
        if tensordict_out is not None:
            dest = tensordict_out
        elif self.inplace is True:
            dest = tensordict
        elif self.inplace == "empty":
            dest = tensordict.empty()
        else:
            dest = _new_tensordict()
        if len(tensors) > len(keys):
            raise RuntimeError(
                f"There are more tensors ({len(tensors)=}) than out_keys "
                f"(out_keys={keys}): {_describe(self)} writes one tensor per out_key"
            )
        if len(keys) > len(tensors):
            raise RuntimeError(
                f"There are more out_keys than tensors. {_describe(self)} got "
                f"{len(tensors)} tensors for the out_keys {keys}"
            )
        for key, value in zip(keys, tensors):
            if key == "_":
                continue
            if not isinstance(value, (Tensor, TensorDictBase)):
                value = container_class("TensorDict").from_any(value)
            dest.set(key, value)
        return dest

    def _missing_error(self, tensordict, inputs) -> KeyError:
        missing = [key for key, value in zip(self.in_keys, inputs) if value is None]
        return KeyError(
            "Some tensors that are necessary for the module call may not have not "
            f"been found in the input tensordict: the following inputs are None: "
            f"{set(missing)}. "
            f"{_describe(self)}: the input key(s) {missing} are missing from the "
            f"tensordict (its keys: {sorted(map(str, tensordict.keys(True, True)))})"
        )

    def _call_failed(self, tensordict, inputs, err) -> str:
        held = ", ".join(
            f"{key!r}: {_value_summary(value)}"
            for key, value in zip(self.in_keys, inputs)
        )
        return (
            f"{_describe(self)} failed calling {_callable_name(self.module)} on "
            f"{{{held}}} (tensordict batch_size={tuple(tensordict.batch_size)}): "
            f"{type(err).__name__}: {err}"
        )

    def __repr__(self) -> str:
        # 0.15.3's layout: the wrapped callable (a child module or not), the keys,
        # then the options that differ from the defaults (a subclass with an
        # extra_repr of its own keeps nn.Module's layout)
        if type(self).extra_repr is not nn.Module.extra_repr:
            return nn.Module.__repr__(self)
        parts = [
            f"module={self.module!r}".replace("\n", "\n    "),
            f"in_keys={self.in_keys}",
            f"out_keys={self.out_keys}",
        ]
        d = self.__dict__
        if d.get("_arg_names") is not None:
            parts.append(f"arg_names={d['_arg_names']}")
        if d.get("inplace", True) is not True:
            parts.append(f"inplace={d['inplace']!r}")
        if d.get("method") is not None:
            parts.append(f"method={d['method']!r}")
        return f"{type(self).__name__}(\n    " + ",\n    ".join(parts) + ")"


def _callable_name(func) -> str:
    if isinstance(func, nn.Module):
        return type(func).__name__
    return getattr(func, "__qualname__", None) or repr(func)


def _value_summary(value) -> str:
    if isinstance(value, Tensor):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    if value is None:
        return "None (missing)"
    if isinstance(value, TensorDictBase):
        return f"{type(value).__name__}(batch_size={tuple(value.batch_size)})"
    return type(value).__name__


def _rewrap(err: Exception, message: str) -> Exception:
    """An exception of ``err``'s type carrying ``message`` (a RuntimeError where the
    type cannot be built from a message)."""
    try:
        new = type(err)(message)
    except Exception:
        return RuntimeError(message)
    if str(new) != message and not isinstance(new, KeyError):
        return RuntimeError(message)
    return new


# --------------------------------------------------------------------------------------
# Wrappers
# --------------------------------------------------------------------------------------


class WrapModule(TensorDictModuleBase):
    """A function of a tensordict as a module (what :class:`TensorDictSequential`
    makes of the plain functions it is given).

    ``inplace=True`` says the function writes into its input: the input is returned,
    whatever the function returns. ``in_keys`` / ``out_keys`` describe it to
    sequences (empty by default).

    >>> import torch
    >>> from tensordict import TensorDict
    >>> double = WrapModule(lambda td: td.set("y", td["x"] * 2), in_keys=["x"],
    ...                     out_keys=["y"])
    >>> double(TensorDict(x=torch.ones(1)))["y"]
    tensor([2.])
    """

    def __init__(
        self,
        func: Callable[[TensorDictBase], TensorDictBase],
        *,
        inplace: bool = False,
        in_keys: list | None = None,
        out_keys: list | None = None,
    ) -> None:
        super().__init__()
        if not callable(func):
            raise TypeError(f"WrapModule wraps a callable, got {type(func).__name__}")
        self.func = func
        self.inplace = inplace
        self.in_keys = _key_list(in_keys, "in_keys")
        self.out_keys = _key_list(out_keys, "out_keys")

    def __getstate__(self) -> dict:
        return _callables_by_value(super().__getstate__(), ("func",))

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(_callables_unwrapped(state, ("func",)))

    def forward(self, tensordict: TensorDictBase, *args, **kwargs) -> TensorDictBase:
        result = self.func(tensordict, *args, **kwargs)
        if self.inplace or result is None:
            return tensordict
        return result

    def extra_repr(self) -> str:
        return (
            f"func={_callable_name(self.func)}, in_keys={self.in_keys}, "
            f"out_keys={self.out_keys}"
        )


class TensorDictModuleWrapper(TensorDictModuleBase):
    """A module around a tensordict module (to add behaviour in a subclass): calls and
    attributes it does not have go to the wrapped ``td_module``.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> from tensordict.nn import TensorDictModule, TensorDictModuleWrapper
    >>> inner = TensorDictModule(torch.nn.Linear(3, 1), in_keys=["x"], out_keys=["y"])
    >>> wrapped = TensorDictModuleWrapper(inner)
    >>> wrapped.out_keys, wrapped(TensorDict(x=torch.zeros(2, 3), batch_size=[2]))["y"].shape
    (['y'], torch.Size([2, 1]))
    """

    def __init__(self, td_module: TensorDictModuleBase) -> None:
        super().__init__()
        self.td_module = td_module

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or name == "td_module":
                raise
            return getattr(self.__dict__["_modules"]["td_module"], name)

    def forward(self, *args, **kwargs):
        return self.td_module(*args, **kwargs)


class as_tensordict_module:
    """Decorator: a function (or method) of tensors becomes one that also takes a
    tensordict, reading ``in_keys`` and writing ``out_keys``. Called with tensors it
    behaves as before.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> @as_tensordict_module(in_keys=["x"], out_keys=["y"])
    ... def add_one(x):
    ...     return x + 1
    >>> add_one(TensorDict(x=torch.zeros(2), batch_size=[2]))["y"]
    tensor([1., 1.])
    >>> add_one(torch.zeros(2))
    tensor([1., 1.])
    """

    def __init__(self, *, in_keys, out_keys) -> None:
        self.in_keys = _key_list(in_keys, "in_keys")
        self.out_keys = _key_list(out_keys, "out_keys")

    def __call__(self, func: Callable) -> Callable:
        params = list(inspect.signature(func).parameters)
        is_method = bool(params) and params[0] == "self"
        in_keys, out_keys = self.in_keys, self.out_keys

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            start = 1 if is_method else 0
            if len(args) <= start or not isinstance(args[start], TensorDictBase):
                return func(*args, **kwargs)
            td = args[start]
            outputs = func(*args[:start], *(td.get(key) for key in in_keys), **kwargs)
            if not isinstance(outputs, (tuple, list)):
                outputs = (outputs,)
            for key, value in zip(out_keys, outputs):
                td.set(key, value)
            return td

        wrapper.in_keys = in_keys
        wrapper.out_keys = out_keys
        return wrapper
