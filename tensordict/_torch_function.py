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

from tensordict._generated.torch_functions import TORCH_FUNCTIONS
from tensordict.base import TensorDictBase, is_tensor_collection


def dispatch(func: Callable, types, args: tuple, kwargs: dict) -> Any:
    entry = TORCH_FUNCTIONS.get(func)
    if entry is None:
        return NotImplemented
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
        return getattr(type(items[0]), target)(items, *args, **kwargs)
    return target(*args, **kwargs)  # "function"


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


# TensorDictBase.__torch_function__ calls this (base is a layer below the table).
TensorDictBase._torch_dispatch = staticmethod(dispatch)
