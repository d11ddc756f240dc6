"""TensorDictParams: a tensordict of parameters that is also an ``nn.Module``.

Its leaves are registered with the module machinery: ``nn.Parameter`` leaves are
parameters (``.parameters()``, optimizers, ``named_parameters`` under ``"a.b"``
names), other tensors are buffers; ``state_dict`` / ``load_state_dict``, ``.to()``,
``.apply()`` and ``zero_grad`` of a module holding a TensorDictParams reach them as they
would any submodule's. As a tensordict it reads and writes like the ``TensorDict`` it
wraps (writes of new tensors are converted to parameters, unless ``no_convert``).

Which call is which where both worlds name a method:

- ``params.to(...)``, ``.cpu()``, ``.cuda()``, ``.clone()``, ``.copy()`` give a new
  TensorDictParams (parameters where there were parameters); other tensordict ops
  give a plain ``TensorDict``; in-place ops give ``params`` itself.
- ``module.to(...)`` / ``.double()`` / ``.cuda()`` on a parent module move the leaves
  in place, keeping the parameter objects (what ``nn.Module`` does), through
  ``_apply``; ``module.apply(fn)`` calls ``fn(params)`` like for any submodule, while
  ``params.apply(fn)`` is the tensordict's leaf-wise ``apply``.
"""

from __future__ import annotations

import collections.abc
import contextlib
import functools
import sys
from typing import Any, Callable, Iterator

import torch
from torch import Tensor, nn

from tensordict._generated.tensorclass_ops import TensorClassGeneratedOps
from tensordict._keys import NestedKey, unravel_key_to_tuple
from tensordict._registry import container_class, register
from tensordict._repr import _indent
from tensordict.base import NO_DEFAULT, TensorDictBase, _is_node

__all__ = ["TensorDictParams"]


def _as_parameter(value: Any) -> Any:
    """What a tensor written into a converting TensorDictParams becomes: a parameter
    for floating-point and complex tensors, itself otherwise (integer tensors and
    ``nn.Buffer``\\ s are buffers)."""
    if (
        isinstance(value, Tensor)
        and not isinstance(value, (nn.Parameter, nn.Buffer))
        and (value.is_floating_point() or value.is_complex())
    ):
        return nn.Parameter(value)
    return value


def _as_buffer(value: Any) -> Any:
    """A tensor leaf that is not a parameter, marked as ``nn.Buffer`` (a detached
    alias of the same data, as 0.15.3 stores them: ``isinstance(t, nn.Buffer)``);
    tensors that carry a graph (an expanded view of a parameter) stay as they are."""
    if (
        isinstance(value, Tensor)
        and not isinstance(value, (nn.Parameter, nn.Buffer))
        and value.grad_fn is None
        and type(value) is Tensor
    ):
        return nn.Buffer(value)
    return value


def _replace_leaves(td: TensorDictBase, convert: Callable) -> None:
    """Replace, in place, each tensor of ``td`` (at any depth) by ``convert(tensor)``
    where that gives another tensor."""
    with td.unlock_() if td.is_locked else contextlib.nullcontext():
        for key, value in list(td._own_items()):
            if isinstance(value, Tensor):
                replaced = convert(value)
                if replaced is not value:
                    td._set_str(key, replaced, inplace=False, validated=True)
            elif _is_node(value):
                _replace_leaves(value, convert)


def _mark_buffers(td: TensorDictBase) -> None:
    """The tensors of ``td`` that are not parameters become :func:`_as_buffer`'s
    marked aliases."""
    _replace_leaves(td, _as_buffer)


def _convert_leaves(td: TensorDictBase) -> None:
    """The tensors of ``td`` (at any depth) become parameters."""
    _replace_leaves(td, _as_parameter)


def _parameter_like(value: Tensor, model: Any) -> Tensor:
    """``value`` as a parameter where ``model`` (the leaf it derives from) is one."""
    if isinstance(model, nn.Parameter) and not isinstance(value, nn.Parameter):
        return nn.Parameter(value.detach(), requires_grad=model.requires_grad)
    return value


class _LeafView(collections.abc.MutableMapping):
    """What a TensorDictParams holds as ``_parameters`` (``parameters=True``) or
    ``_buffers``: its parameter (or other tensor) leaves under ``"a.b"`` names, read
    from the tensordict at every access, so that the two never disagree."""

    __slots__ = ("_owner", "_parameters")

    def __init__(self, owner: "TensorDictParams", parameters: bool) -> None:
        self._owner = owner
        self._parameters = parameters

    def _td(self):
        return self._owner.__dict__["_tensordict"]

    def __iter__(self) -> Iterator[str]:
        for key, value in self._td().items(True, True):
            if isinstance(value, nn.Parameter) is self._parameters:
                yield key if type(key) is str else ".".join(key)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, name: str) -> Tensor:
        if type(name) is not str:
            raise KeyError(name)
        value = self._td().get(tuple(name.split(".")), None)
        if not isinstance(value, Tensor) or (
            isinstance(value, nn.Parameter) is not self._parameters
        ):
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __setitem__(self, name: str, value: Tensor | None) -> None:
        td = self._td()
        path = tuple(name.split("."))
        if value is None:  # nn.Module's way of unregistering
            if path in td.keys(True):
                td.del_(path)
            return
        td._set_path(path, value, inplace=False, validated=True)

    def __delitem__(self, name: str) -> None:
        self[name]  # KeyError for a name that is not here
        self._td().del_(tuple(name.split(".")))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())})"


@register
class TensorDictParams(TensorClassGeneratedOps, TensorDictBase, nn.Module):
    """A tensordict whose tensors are an ``nn.Module``'s parameters and buffers.

    Args:
        parameters: a tensordict (wrapped, not copied: converting its tensors to
            parameters converts them in it) or a dict; ``None`` takes the entries from
            ``kwargs``.

    Keyword Args:
        no_convert: keep the tensors as given (``nn.Parameter`` leaves are parameters,
            the others buffers). By default floating-point tensors become parameters.
        lock: lock the tensordict.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> params = TensorDictParams(TensorDict(w=torch.zeros(3), step=torch.zeros((), dtype=torch.long)))
    >>> [name for name, _ in params.named_parameters()], [name for name, _ in params.named_buffers()]
    (['w'], ['step'])
    >>> optimizer = torch.optim.SGD(params.parameters(), lr=1.0)
    """

    # identity, as for every module (the tensordict __eq__ compares entries)
    __hash__ = nn.Module.__hash__
    # pickled as a module (__getstate__ / __setstate__), not as a tensordict
    __reduce_ex__ = object.__reduce_ex__

    # its leaves are the module's parameters: memmap() and memmap_like() copy them
    # into a TensorDict, memmap_() refuses (as 0.15.3)
    _refuses_memmap_in_place = True
    _memmap_in_place_refusal = "its entries are the module's parameters and buffers"

    def __init__(
        self,
        parameters: TensorDictBase | dict | None = None,
        *,
        no_convert: bool = False,
        lock: bool = False,
        **kwargs,
    ) -> None:
        nn.Module.__init__(self)
        if parameters is None:
            parameters = container_class("TensorDict")(kwargs)
        elif kwargs:
            raise TypeError(
                f"TensorDictParams takes its entries as `parameters` or as keyword "
                f"arguments, not both (got parameters and {sorted(kwargs)})"
            )
        if isinstance(parameters, TensorDictParams):
            parameters = parameters._tensordict
        elif getattr(parameters, "_is_tensorclass", False):
            parameters = parameters._tensordict
        elif isinstance(parameters, dict):
            parameters = container_class("TensorDict")(parameters)
        if type(parameters) is not container_class("TensorDict"):
            raise TypeError(
                f"TensorDictParams wraps a TensorDict (or a dict), got "
                f"{type(parameters).__name__}: registering one tensor per leaf needs "
                f"dense storage (densify a lazy stack first)"
            )
        if not no_convert:
            _convert_leaves(parameters)
        _mark_buffers(parameters)
        self.__dict__["_tensordict"] = parameters
        self.__dict__["_no_convert"] = no_convert
        self.__dict__["_parameters"] = _LeafView(self, parameters=True)
        self.__dict__["_buffers"] = _LeafView(self, parameters=False)
        if lock:
            parameters.lock_()

    # ------------------------------------------------------------------ wrapping
    def _wrap(self, result: Any) -> Any:
        """The result of a forwarded tensordict op: ``self`` for the wrapped
        tensordict (in-place ops), anything else as it is."""
        return self if result is self.__dict__["_tensordict"] else result

    @classmethod
    def _wrap_new(cls, result: Any) -> Any:
        return result

    def _params_like(self, td: TensorDictBase) -> "TensorDictParams":
        """A new TensorDictParams over ``td`` (a same-structured result), with
        parameters where this one has parameters."""
        own = dict(self._tensordict.items(True, True))
        out = td.copy()
        for key, value in td.items(True, True):
            model = own.get(key)
            if model is not None:
                out.set(key, _parameter_like(value, model))
        # a parameter held at several keys (tied weights) stays one parameter
        first_key: dict = {}
        for key, model in own.items():
            first = first_key.setdefault(id(model), key)
            if first != key and key in out.keys(True, True):
                out.set(key, out.get(first))
        return TensorDictParams(out, no_convert=True)

    def to(self, *args, **kwargs) -> "TensorDictParams":
        """A new TensorDictParams on the device / with the dtype asked for (see
        ``TensorDict.to``); a module holding this one moves it in place instead."""
        return self._params_like(self._tensordict.to(*args, **kwargs))

    def cpu(self, **kwargs) -> "TensorDictParams":
        return self._params_like(self._tensordict.cpu(**kwargs))

    def cuda(self, device=None, **kwargs) -> "TensorDictParams":
        return self._params_like(self._tensordict.cuda(device, **kwargs))

    def clone(self, recurse: bool = True, **kwargs) -> "TensorDictParams":
        """A copy with new parameters (not part of the graph of these ones)."""
        if not recurse:
            return self.copy()
        return self._params_like(self._tensordict.detach().clone(**kwargs))

    def to_tensordict(self, *, retain_none: bool | None = None):
        """A plain ``TensorDict`` holding copies of the tensors."""
        return self._tensordict.to_tensordict(retain_none=retain_none)

    def copy(self) -> "TensorDictParams":
        """A new TensorDictParams over a new structure holding the same tensors."""
        return TensorDictParams(self._tensordict.copy(), no_convert=True)

    # ------------------------------------------------------------------ primitives
    @property
    def _param_td(self) -> TensorDictBase:
        """The tensordict of parameters wrapped (0.15.3's attribute; TorchRL's
        objectives tests write into it in place)."""
        return self.__dict__["_tensordict"]

    @_param_td.setter
    def _param_td(self, value: TensorDictBase) -> None:
        # ``params._param_td += 1`` works in place and assigns the same tensordict
        if value is not self.__dict__["_tensordict"]:
            raise AttributeError(
                "TensorDictParams._param_td cannot be replaced; write into it in place "
                "(params._param_td.update(...), +=) instead"
            )

    @property
    def batch_size(self) -> torch.Size:
        return self._tensordict.batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        self._tensordict.batch_size = value

    @property
    def _batch_size(self) -> torch.Size:
        return self.__dict__["_tensordict"]._batch_size

    @property
    def _device(self):
        return self.__dict__["_tensordict"]._device

    @property
    def device(self):
        return self._tensordict.device

    @property
    def names(self) -> list:
        return self._tensordict.names

    @names.setter
    def names(self, value) -> None:
        self._tensordict.names = value

    @property
    def _names(self):
        return self._tensordict._names

    @property
    def _is_locked(self) -> bool:
        return self._tensordict.is_locked

    def _convert(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            return _as_buffer(value if self._no_convert else _as_parameter(value))
        if _is_node(value):
            if not self._no_convert:
                _convert_leaves(value)
            _mark_buffers(value)
        return value

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        return self._tensordict._get_str(key, default, missing_ok=missing_ok)

    # ------------------------------------------------------------------ read hooks
    def register_get_post_hook(self, hook: Callable) -> None:
        """Call ``hook(self, tensor)`` on every tensor read (``get``, ``td[key]``,
        ``values``, ``items``), at any depth; a result other than ``None`` replaces
        the tensor read (``lambda td, x: x.data`` reads the parameters without their
        grad).

        >>> import torch
        >>> from tensordict import TensorDict
        >>> params = TensorDictParams(TensorDict(w=torch.zeros(2)))
        >>> params.register_get_post_hook(lambda td, x: x.data)
        >>> params["w"].requires_grad
        False
        """
        if not callable(hook):
            raise ValueError("Hooks must be callables.")  # 0.15.3's words
        self.__dict__.setdefault("_get_post_hooks", []).append(hook)

    def _hooked(self, value: Any) -> Any:
        hooks = self.__dict__.get("_get_post_hooks")
        if hooks and isinstance(value, Tensor):
            for hook in hooks:
                new = hook(self, value)
                if new is not None:
                    value = new
        return value

    def get(self, key: NestedKey, *args, **kwargs) -> Any:
        return self._hooked(super().get(key, *args, **kwargs))

    def __getitem__(self, index) -> Any:
        return self._hooked(super().__getitem__(index))

    def items(
        self, include_nested=False, leaves_only=False, is_leaf=None, *, sort=False
    ):
        """As :meth:`TensorDictBase.items`; the get post-hooks apply to every value
        of a walk (``include_nested``, ``leaves_only`` or ``sort``).

        >>> params = TensorDictParams(TensorDict(w=torch.zeros(2)))
        >>> params.register_get_post_hook(lambda td, x: x.data)
        >>> [v.requires_grad for _, v in params.items(True, True)]
        [False]
        """
        out = super().items(include_nested, leaves_only, is_leaf, sort=sort)
        if (include_nested or leaves_only or sort) and self.__dict__.get(
            "_get_post_hooks"
        ):
            return ((key, self._hooked(value)) for key, value in out)
        return out

    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        out = super()._walk(include_nested, leaves_only, is_leaf, with_values)
        if with_values and self.__dict__.get("_get_post_hooks"):
            out = [(key, self._hooked(value)) for key, value in out]
        return out

    def _set_str(
        self,
        key: str,
        value: Any,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        self._tensordict._set_str(
            key, self._convert(value), inplace=inplace, validated=validated
        )

    def _set_path(self, path: tuple, value, *, inplace: bool, validated: bool = False):
        self._tensordict._set_path(
            path, self._convert(value), inplace=inplace, validated=validated
        )
        return self

    def _del_str(self, key: str) -> None:
        self._tensordict._del_str(key)

    def _own_items(self):
        return self._tensordict._own_items()

    def _own_keys(self):
        return self._tensordict._own_keys()

    def _own_values(self):
        return self._tensordict._own_values()

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        return self._tensordict._new_empty(batch_size, device, names)

    def _index(self, index):
        return self._tensordict._index(index)

    def _set_at_index(self, index, value) -> None:
        self._tensordict._set_at_index(index, value)

    def _leaves(self) -> list[Tensor]:
        return self._tensordict._leaves()

    def _leaves_and_rebuild(self):
        return self._tensordict._leaves_and_rebuild()

    def _with_dense_stacks(self, op: str, key: tuple = (), outer_dims=None):
        return self._tensordict._with_dense_stacks(op, key, outer_dims)

    def _operand_leaves(self, other, op: str, default=None) -> list:
        if isinstance(other, TensorDictParams):
            other = other._tensordict
        return self._tensordict._operand_leaves(other, op, default)

    def _moved_to(self, device):
        return self._tensordict._moved_to(device)

    def _replace_contents(self, other) -> None:
        if isinstance(other, TensorDictParams):
            other = other._tensordict
        self._tensordict._replace_contents(other)

    def _set_lock(self, locked: bool) -> None:
        self._tensordict._set_lock(locked)

    def lock_(self) -> "TensorDictParams":
        self._tensordict.lock_()
        return self

    def unlock_(self) -> "TensorDictParams":
        self._tensordict.unlock_()
        return self

    def __enter__(self):
        self._tensordict.__enter__()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        return self._tensordict.__exit__(exc_type, exc_val, exc_tb)

    def auto_batch_size_(self, batch_dims: int | None = None) -> "TensorDictParams":
        self._tensordict.auto_batch_size_(batch_dims)
        return self

    # ------------------------------------------------------------------ both worlds
    def _apply(self, fn: Callable, *args, **kwargs):
        """The core's walk (``apply``: ``_apply(fn, others, named=..., ...)``), or
        ``nn.Module._apply(fn, recurse=True)``, what a parent module's ``.to()``,
        ``.cuda()``, ``.double()``, ``.share_memory()`` call on their children."""
        if kwargs or (args and not isinstance(args[0], bool)):
            others = [
                o._tensordict if isinstance(o, TensorDictParams) else o for o in args[0]
            ]
            return self._wrap(self._tensordict._apply(fn, others, *args[1:], **kwargs))
        return self._apply_in_place(fn)

    def _apply_in_place(self, fn: Callable) -> "TensorDictParams":
        # as nn.Module._apply: a parameter keeps its identity (``param.data = ...``),
        # and so does its gradient; a buffer is replaced
        td = self._tensordict
        for key, value in list(td.items(True, True)):
            with torch.no_grad():
                new = fn(value)
            if isinstance(value, nn.Parameter):
                if torch._has_compatible_shallow_copy_type(value, new):
                    value.data = new
                else:
                    td._set_path(
                        unravel_key_to_tuple(key),
                        nn.Parameter(new, requires_grad=value.requires_grad),
                        inplace=False,
                        validated=True,
                    )
                    value = td.get(key)
                if value.grad is not None:
                    with torch.no_grad():
                        value.grad.data = fn(value.grad)
            elif isinstance(
                value, nn.Buffer
            ) and torch._has_compatible_shallow_copy_type(value, new):
                value.data = new  # a buffer keeps its identity too, as in 0.15.3
            else:
                td._set_path(
                    unravel_key_to_tuple(key),
                    _as_buffer(new) if isinstance(value, nn.Buffer) else new,
                    inplace=False,
                    validated=True,
                )
        return self

    def apply(self, fn: Callable, *others, **kwargs):
        """The tensordict's ``apply``: ``fn`` on every leaf, results in a new
        ``TensorDict``. (A parent module's ``module.apply(fn)`` calls ``fn(self)``, as
        for any submodule.)"""
        if not others and not kwargs:
            caller = sys._getframe(1).f_code
            if caller is nn.Module.apply.__code__:  # nn.Module.apply visiting children
                fn(self)
                return self
        return TensorDictBase.apply(self, fn, *others, **kwargs)

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ) -> None:
        # what a parent module's load_state_dict calls on each submodule: the leaves
        # under their "a.b" names after the prefix
        assign = local_metadata.get("assign_to_params_buffers", False)
        names = {}
        td = self._tensordict
        for key, value in td.items(True, True):
            name = prefix + (key if type(key) is str else ".".join(key))
            names[name] = (key, value)
            if name not in state_dict:
                missing_keys.append(name)
                continue
            given = state_dict[name]
            if not isinstance(given, Tensor) or given.shape != value.shape:
                error_msgs.append(
                    f"size mismatch for {name}: copying a param with shape "
                    f"{tuple(getattr(given, 'shape', ()))} from checkpoint, the shape "
                    f"in current model is {tuple(value.shape)}."
                )
                continue
            if assign:
                td.set(key, _parameter_like(given, value))
            else:
                with torch.no_grad():
                    value.copy_(given)
        if strict:
            for name in state_dict:
                if name.startswith(prefix) and name not in names:
                    unexpected_keys.append(name)

    def forward(self, *args, **kwargs):
        """Refused: a TensorDictParams holds parameters, it computes nothing; put them
        into a module with ``to_module`` instead.

        Raises:
            RuntimeError: always.

        >>> params = TensorDictParams(TensorDict(w=torch.zeros(2)))
        >>> try:
        ...     params()
        ... except RuntimeError as err:
        ...     print("to_module" in str(err))
        True
        """
        raise RuntimeError(
            "TensorDictParams holds parameters; it is not a computation to call. "
            "Put them into a module with `params.to_module(module)`"
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(params=\n" f"{_indent(repr(self._tensordict), 1)})"
        )

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        # the views point at their owner: rebuild them for this object
        self.__dict__["_parameters"] = _LeafView(self, parameters=True)
        self.__dict__["_buffers"] = _LeafView(self, parameters=False)


# Writes into the values a TensorDictParams holds act on the parameters' data, as
# ``param.data.zero_()`` would (0.15.3's behaviour): in-place ops on a leaf that
# requires grad are refused by autograd otherwise ("a leaf Variable that requires grad
# is being used in an in-place operation"). Values written are not tracked either.
_WRITES_ON_DATA = (
    "zero_",
    "fill_",
    "copy_",
    "copy_at_",
    "set_",
    "set_at_",
    "update_",
    "update_at_",
    "apply_",
)


def _on_data(method: Callable) -> Callable:
    @functools.wraps(method)
    def on_data(self, *args, **kwargs):
        with torch.no_grad():
            return method(self, *args, **kwargs)

    return on_data


for _name in _WRITES_ON_DATA:
    setattr(TensorDictParams, _name, _on_data(getattr(TensorDictParams, _name)))
del _name
