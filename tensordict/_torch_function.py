"""``torch.X(td, ...)`` for tensordicts: the dispatch behind
``TensorDictBase.__torch_function__``.

The table is generated: ``tensordict/_generated/torch_functions.py`` maps every torch
function a spec entry lists under ``torch_function`` to the op implementing it (see its
docstring for the three kinds of entries). This module looks a call up and makes it:

- ``torch.f(td, *args, **kwargs)`` -> ``td.name(*args, **kwargs)``;
- with a call pattern (``torch.where(condition, self, other)``) the positional
  arguments are named and passed by keyword, ``self`` being the tensordict;
- ``torch.stack(tds, ...)`` -> ``type(tds[0]).stack(tds, ...)``;
- function-only entries (``torch.zeros_like`` & co.) -> the generated function.

A torch function not in the table is refused (``NotImplemented``), so torch raises its
usual ``TypeError`` naming the function; so is a call where the tensordict is not where
the entry expects it (``torch.add(tensor, td)``).

``torch.testing.assert_close`` needs no entry: it compares mappings key by key, and a
tensordict is a registered :class:`collections.abc.Mapping` (see ``base.py``), so two
tensordicts are compared leaf by leaf, nested ones recursively, and a missing key is
reported by name.
"""

from __future__ import annotations

from typing import Any, Callable

from tensordict import _ops
from tensordict._generated.torch_functions import TORCH_FUNCTIONS
from tensordict._registry import container_class
from tensordict.base import TensorDictBase, is_tensor_collection


def dispatch(func: Callable, types, args: tuple, kwargs: dict) -> Any:
    entry = TORCH_FUNCTIONS.get(func)
    if entry is None:
        return _tensor_operator(func, args, kwargs)
    kind, target, params = entry
    if kind == "method":
        if params:
            return _call_pattern(target, params, args, kwargs)
        if not args or not is_tensor_collection(args[0]):
            return NotImplemented
        return getattr(args[0], target)(*args[1:], **kwargs)
    if kind == "classmethod":
        seq = args[0] if args else kwargs.get("tensors", kwargs.get("input"))
        if args:
            args = args[1:]
        else:
            kwargs = {k: v for k, v in kwargs.items() if k not in ("tensors", "input")}
        items = list(seq) if seq is not None else []
        if not items or not is_tensor_collection(items[0]):
            return NotImplemented
        owner = type(items[0])
        if target == "cat":  # a lazy stack among the inputs: the lazy cat, as 0.15.3
            lazy = container_class("LazyStackedTensorDict")
            owner = next((type(x) for x in items if isinstance(x, lazy)), owner)
        try:
            return getattr(owner, target)(items, *args, **kwargs)
        except TypeError as err:  # raised by torch: say which key, where known
            _ops.explain_stack_error(items, target, err)
            raise
        except RuntimeError as err:  # leaves of different shapes: say which key
            _ops.explain_stack_shapes(items, target, err)
            raise
    # "function": the tensordict comes first (``F.l1_loss(tensor, td)`` is refused:
    # torch raises its TypeError)
    args = _unpacked(args)
    if not args or not is_tensor_collection(args[0]):
        return NotImplemented
    return target(*args, **kwargs)


def _unpacked(args: tuple) -> tuple:
    """``torch.autograd.grad(td, inputs)`` reaches the table with its outputs and inputs
    packed in tuples, ``((td,), (inputs,))``: a tuple holding one tensor collection
    stands for it (a tuple of several is left as it is, and refused)."""
    if not args or type(args[0]) is not tuple:
        return args
    return tuple(
        a[0] if type(a) is tuple and len(a) == 1 and is_tensor_collection(a[0]) else a
        for a in args
    )


def _call_pattern(name: str, params: tuple, args: tuple, kwargs: dict) -> Any:
    """``torch.where(condition, td, other)`` with ``params == ("condition", "self",
    "other")``: ``td.where(condition=condition, other=other)``."""
    if len(args) > len(params):
        return NotImplemented
    named = dict(kwargs)
    for param, value in zip(params, args):
        named[param] = value
    self = named.pop("self", named.pop("input", None))
    if not is_tensor_collection(self):
        return NotImplemented
    return getattr(self, name)(**named)


# ``tensor OP td`` reaches __torch_function__ as a Tensor method called with the tensor
# first (``Tensor.mul(tensor, td)``); eager Python then falls back to ``td.__rmul__``
# when this returns NotImplemented, but torch.compile does not: it also rewrites
# ``td OP tensor`` into such a call (``Tensor.__rsub__(tensor, td)`` for ``td -
# tensor``) and stops at NotImplemented. So these calls are answered here, with the
# tensordict operator that means the same: ``F(tensor, td)`` -> ``td.<name>(tensor)``.
# Looked up by the function's name (``torch.mul(tensor, td)`` means the same as
# ``Tensor.mul``), which torch.compile reads as a constant (a lookup keyed by the
# function object itself misses there).
_TENSOR_OPERATORS = {
    # tensor OP td: the tensordict's reflected operator
    "add": "__radd__",
    "__add__": "__radd__",
    "sub": "__rsub__",
    "__sub__": "__rsub__",
    "mul": "__rmul__",
    "__mul__": "__rmul__",
    "div": "__rtruediv__",
    "true_divide": "__rtruediv__",
    "__truediv__": "__rtruediv__",
    "pow": "__rpow__",
    "__pow__": "__rpow__",
    "bitwise_and": "__rand__",
    "__and__": "__rand__",
    "bitwise_or": "__ror__",
    "__or__": "__ror__",
    "bitwise_xor": "__rxor__",
    "__xor__": "__rxor__",
    "gt": "__lt__",
    "__gt__": "__lt__",
    "lt": "__gt__",
    "__lt__": "__gt__",
    "ge": "__le__",
    "__ge__": "__le__",
    "le": "__ge__",
    "__le__": "__ge__",
    "eq": "__eq__",
    "__eq__": "__eq__",
    "ne": "__ne__",
    "__ne__": "__ne__",
    # the tensor's reflected operators: td OP tensor
    "__radd__": "__add__",
    "__rsub__": "__sub__",
    "__rmul__": "__mul__",
    "__rdiv__": "__truediv__",
    "__rtruediv__": "__truediv__",
    "__rpow__": "__pow__",
    "__rmod__": "__mod__",
}


def _tensor_operator(func: Callable, args: tuple, kwargs: dict) -> Any:
    name = _TENSOR_OPERATORS.get(getattr(func, "__name__", None))
    if name is None or kwargs or len(args) != 2 or not is_tensor_collection(args[1]):
        return NotImplemented
    if is_tensor_collection(args[0]):
        return NotImplemented
    method = getattr(args[1], name, None)
    if method is None:
        return NotImplemented
    return method(args[0])


# TensorDictBase.__torch_function__ calls this (base is a layer below the table).
TensorDictBase._torch_dispatch = staticmethod(dispatch)
