"""Runtime helpers for the generated ops in ``tensordict/_generated/`` (and nothing else).

They hold the few decisions every generated op shares, so that the generated code
reads as plain steps: align the operands, try one ``torch._foreach_*`` call, fall back
to a per-leaf loop where foreach rejects the leaves.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from tensordict.base import TensorDictBase

    # Names the generated signatures use (see TYPE_NAMES in codegen/model.py).
    TensorCollection: TypeAlias = TensorDictBase
    CompatibleType: TypeAlias = Any

# Fast isinstance check for the common Python numbers; numbers.Number catches the rest
# (numpy scalars, fractions, ...).
_NUMBER_TYPES = (int, float, bool, complex)

# What torch raises when a foreach function does not take the leaves (a dtype or device
# mix its kernels do not handle, an overload that does not exist for the operand, an
# empty list). NotImplementedError is a RuntimeError.
_FOREACH_REJECTS = (RuntimeError, TypeError, ValueError)


class Repeated(list):
    """One operand repeated for every leaf. A foreach call is given the value itself
    when it is a number, which takes torch's scalar overload: faster than a list of
    the same number, and the same result."""

    __slots__ = ("value",)

    def __init__(self, value: Any, count: int) -> None:
        super().__init__([value] * count)
        self.value = value


def _foreach_args(args: tuple) -> tuple:
    return tuple(
        arg.value
        if type(arg) is Repeated and isinstance(arg.value, _NUMBER_TYPES)
        else arg
        for arg in args
    )


def is_operand(value: Any) -> bool:
    """Whether ``value`` can be combined with a tensordict leaf by leaf: a tensor
    collection, a tensor or a number. Operators return NotImplemented otherwise."""
    return (
        isinstance(value, (torch.Tensor,) + _NUMBER_TYPES)
        or _base.is_tensor_collection(value)
        or isinstance(value, numbers.Number)
    )


def operand_leaves(
    td: TensorDictBase, leaves: list, other: Any, op: str, default: Any = None
) -> list:
    """``other`` as one value per leaf of ``td``, aligned with ``leaves``.

    A tensor collection gives its leaves, matched key by key (``td._operand_leaves``,
    which raises ``KeyError`` naming the key that is missing on either side, unless
    ``default`` fills in). A tensor, a number or ``None`` is repeated for every leaf:
    torch broadcasts a tensor against each leaf as ``leaf OP tensor`` does.
    """
    if isinstance(other, (torch.Tensor,) + _NUMBER_TYPES) or other is None:
        return Repeated(other, len(leaves))
    if _base.is_tensor_collection(other):
        return td._operand_leaves(other, op, default)
    if isinstance(other, numbers.Number):
        return Repeated(other, len(leaves))
    raise TypeError(
        f"{op}(): unsupported operand of type {type(other).__name__}; expected a "
        f"tensor collection, a torch.Tensor or a number"
    )


def try_foreach(
    fn: Callable, /, leaves: list, *args: Any, **kwargs: Any
) -> list | None:
    """``fn(leaves, *args, **kwargs)`` for a ``torch._foreach_*`` function ``fn``.

    Returns the new leaves, or ``None`` when torch rejects the call; the caller then
    applies the op leaf by leaf, so that an error the op really has surfaces as torch's
    own error for the offending leaf. Nothing is written, so retrying is safe.
    """
    if not leaves:
        return []
    try:
        return fn(leaves, *_foreach_args(args), **kwargs)
    except _FOREACH_REJECTS:
        return None


def try_foreach_(fn: Callable, /, leaves: list, *args: Any, **kwargs: Any) -> bool:
    """In-place ``fn(leaves, *args, **kwargs)``; ``False`` when the caller must loop.

    Only a ``TypeError`` (the call's arguments match no overload, raised before any
    tensor is touched) sends the caller to its per-leaf loop. Any other error is raised
    as is: torch's foreach runs the per-tensor op for leaves its fused kernels do not
    handle, so such an error is the one the per-leaf loop would raise, and some leaves
    may already have been written; running the loop again would apply the op twice.
    """
    if not leaves:
        return True
    try:
        fn(leaves, *_foreach_args(args), **kwargs)
    except TypeError:
        return False
    return True


def write_into(td: TensorDictBase, out: Any, new: list, op: str) -> Any:
    """Copy ``new`` (aligned with ``td``'s leaves) into the leaves of ``out``; ``out``."""
    targets = td._operand_leaves(out, op)
    if targets:
        torch._foreach_copy_(targets, new)
    return out
