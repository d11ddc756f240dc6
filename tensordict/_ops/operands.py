"""Operands and foreach calls, the steps every leaf-wise generated op shares: align
each operand with the leaves (``operand_leaves``), try one ``torch._foreach_*`` call
(``try_foreach``, ``try_foreach_``) before the per-leaf loop, write results into
``out`` (``write_into``).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


# Fast isinstance check for the common Python numbers; numbers.Number catches the rest
# (numpy scalars, fractions, ...).
_NUMBER_TYPES = (int, float, bool, complex)
_SCALAR_OPERANDS = (torch.Tensor,) + _NUMBER_TYPES
# Operands taking generated ops' fast path (a number for every leaf): exact types only,
# so that bool, numpy scalars and other Numbers go the general way.
PLAIN_NUMBERS = frozenset((int, float))

# What torch raises when a foreach function does not take the leaves (a dtype or device
# mix its kernels do not handle, an overload that does not exist for the operand, an
# empty list). NotImplementedError is a RuntimeError.
_FOREACH_REJECTS = (RuntimeError, TypeError, ValueError)


class Repeated(list):
    """One operand repeated for every leaf (made by :func:`repeated`). A foreach call
    is given ``foreach_arg``: the value itself when it is a number, which takes torch's
    scalar overload (faster than a list of the same number, and the same result), else
    the list."""

    __slots__ = ("foreach_arg",)


def repeated(value: Any, count: int) -> Repeated:
    """``value`` once per leaf, as a :class:`Repeated` list."""
    out = Repeated([value] * count)
    # a plain list for torch: torch.compile cannot pass a list subclass into its graph
    out.foreach_arg = value if isinstance(value, _NUMBER_TYPES) else list(out)
    return out


def is_operand(value: Any) -> bool:
    """Whether ``value`` can be combined with a tensordict leaf by leaf: a tensor
    collection, a tensor or a number. Operators return NotImplemented otherwise."""
    return (
        isinstance(value, _SCALAR_OPERANDS)
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
    torch broadcasts a tensor against each leaf as ``leaf OP tensor`` does. (A lazy
    stack's leaves lack the stack dim: it slices the tensor for each of them.)
    """
    if type(other) in PLAIN_NUMBERS:  # the common case, checked first
        return repeated(other, len(leaves))
    if isinstance(other, _SCALAR_OPERANDS) or other is None:
        if (
            isinstance(other, torch.Tensor)
            and other.ndim
            and hasattr(td, "_tensor_operand_leaves")
        ):
            return td._tensor_operand_leaves(other)
        return repeated(other, len(leaves))
    if _base.is_tensor_collection(other):
        return td._operand_leaves(other, op, default)
    if isinstance(other, numbers.Number):
        return repeated(other, len(leaves))
    raise TypeError(
        f"{op}(): unsupported operand of type {type(other).__name__}; expected a "
        f"tensor collection, a torch.Tensor or a number"
    )


# Whether a torch.func transform (vmap, grad, ...) is running: torch's _foreach_* ops
# have no batching rule, so under vmap they fall back to one call per sample, far slower
# than the per-leaf ops, which have one.
_functorch_active = torch._C._are_functorch_transforms_active


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
    if _functorch_active():  # no batching rule for _foreach_*: vmap would loop per sample
        return None
    if len(args) == 1:  # the common case, one operand
        arg = args[0]
        args = (arg.foreach_arg,) if type(arg) is Repeated else args
    else:
        args = [arg.foreach_arg if type(arg) is Repeated else arg for arg in args]
    try:
        return fn(leaves, *args, **kwargs)
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
    if _functorch_active():  # as in try_foreach
        return False
    args = [arg.foreach_arg if type(arg) is Repeated else arg for arg in args]
    try:
        fn(leaves, *args, **kwargs)
    except TypeError:
        return False
    return True


def write_into(td: TensorDictBase, out: Any, new: list, op: str) -> Any:
    """Copy ``new`` (aligned with ``td``'s leaves) into the leaves of ``out``; ``out``.
    The entries ``out`` lacks are not written (as in 0.15.3: TorchRL's collectors
    stack each step into a preallocated rollout that holds only some keys)."""
    try:
        targets = td._operand_leaves(out, op)
    except KeyError:
        return _write_matching(td, out, new)
    if targets:
        if any(torch._debug_has_internal_overlap(t) == 1 for t in targets):
            return _write_matching(td, out, new)
        torch._foreach_copy_(targets, new)
    return out


def _write_matching(td: TensorDictBase, out: Any, new: list) -> Any:
    """:func:`write_into` where ``out`` lacks some of ``td``'s entries, or holds
    expanded tensors: each result is copied into the entry of ``out`` at its key,
    where there is one, and replaces an entry whose elements share memory (which
    cannot be written into; 0.15.3 replaced it too: TorchRL's resets write
    ``where(..., out=)`` into expanded specs' zeros)."""
    _, rebuild = td._leaves_and_rebuild()
    for key, value in rebuild(new).items(True, True):
        target = out.get(key, None)
        if not isinstance(target, torch.Tensor):
            continue
        if torch._debug_has_internal_overlap(target) == 1:
            out.set(key, value)
        else:
            target.copy_(value)
    return out
