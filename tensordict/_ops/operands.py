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
from tensordict import _errors
from tensordict._registry import container_class

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
    collection, a tensor, a number or a dict of them. Operators return NotImplemented otherwise.
    """
    return (
        isinstance(value, _SCALAR_OPERANDS)
        or _base.is_tensor_collection(value)
        or isinstance(value, numbers.Number)
        or type(value) is dict
    )


def batch_aligned(tensor: torch.Tensor, ndim: int, batch_ndim: int) -> torch.Tensor:
    """``tensor`` lined up with the batch dims of a leaf of ``ndim`` dims (of which
    ``batch_ndim`` are batch dims): a view with a trailing singleton dim for each of the
    leaf's feature dims, so that torch's broadcasting (from the right) pairs the
    tensor's dims with the leaf's batch dims."""
    extra = ndim - batch_ndim
    if extra <= 0:
        return tensor
    return tensor.reshape(tensor.shape + (1,) * extra)


def batch_broadcast(td: TensorDictBase, op: str, *operands: Any) -> tuple:
    """``(td, *operands)`` with the batch shape broadcast, as in 0.15.3: a tensor
    operand lines up with the batch dims and a tensordict operand's batch size
    broadcasts with this one's, so ``td * t`` has the batch size
    ``broadcast_shapes(td.batch_size, t.shape)``. ``td`` (and a tensordict operand of
    another batch size) is expanded to that shape; the inputs come back as they are
    when nothing widens (the common case: numbers, or operands of the batch shape)."""
    batch_size = td.batch_size
    shape = None
    for other in operands:
        if type(other) in PLAIN_NUMBERS or other is None:
            continue
        if isinstance(other, torch.Tensor):
            if not other.ndim:
                continue
        elif not _base.is_tensor_collection(other):
            continue
        other_shape = other.shape
        if other_shape == batch_size:
            continue
        try:
            shape = torch.broadcast_shapes(shape or batch_size, other_shape)
        except RuntimeError as err:
            what = "tensor" if isinstance(other, torch.Tensor) else "tensordict"
            raise RuntimeError(
                f"{op}(): a {what} operand of shape {list(other_shape)} does not "
                f"broadcast with the batch size {list(batch_size)}: an operand lines up "
                f"with the batch dims (the leading dims of every leaf), not with each "
                f"leaf's trailing dims ({err})"
            ) from None
    if shape is None or shape == batch_size:
        return (td, *operands)
    return (
        td.expand(shape),
        *[
            (
                other.expand(shape)
                if _base.is_tensor_collection(other) and other.shape != shape
                else other
            )
            for other in operands
        ],
    )


def operand_leaves(
    td: TensorDictBase,
    leaves: list,
    other: Any,
    op: str,
    default: Any = None,
    *,
    batch_dims: bool = False,
) -> list:
    """``other`` as one value per leaf of ``td``, aligned with ``leaves``.

    A tensor collection gives its leaves, matched key by key (``td._operand_leaves``,
    which raises ``KeyError`` naming the key that is missing on either side, unless
    ``default`` fills in). A number or ``None`` is repeated for every leaf. A tensor
    with ``batch_dims`` (the binary ops, as 0.15.3) lines up with the batch dims of
    every leaf (see :func:`batch_broadcast`); without it torch broadcasts it against
    each leaf as ``leaf OP tensor`` does. (A lazy stack's leaves lack the stack dim:
    it slices the tensor for each of them.)
    """
    if type(other) in PLAIN_NUMBERS:  # the common case, checked first
        return repeated(other, len(leaves))
    if isinstance(other, _SCALAR_OPERANDS) or other is None:
        if isinstance(other, torch.Tensor) and other.ndim:
            if hasattr(td, "_tensor_operand_leaves"):
                return td._tensor_operand_leaves(other, batch_dims=batch_dims)
            if batch_dims:
                batch_ndim = td.batch_dims
                return [batch_aligned(other, leaf.ndim, batch_ndim) for leaf in leaves]
        return repeated(other, len(leaves))
    if _base.is_tensor_collection(other):
        mine, theirs = td.device, other.device
        if (
            mine is not None
            and theirs is not None
            and mine != theirs
            and leaves
            and op != "new_tensor"  # copies the other's values to this device
        ):
            raise _errors.different_devices(
                op, td, other, "this tensordict", "the other operand"
            )
        return td._operand_leaves(other, op, default)
    if isinstance(other, numbers.Number):
        return repeated(other, len(leaves))
    if type(other) is dict:  # td == td.to_dict(): the dict's entries, key by key
        return td._operand_leaves(_dict_operand(td, other), op, default)
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
    if (
        _functorch_active()
    ):  # no batching rule for _foreach_*: vmap would loop per sample
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


def _dict_operand(td: TensorDictBase, other: dict) -> TensorDictBase:
    """A (nested) dict operand as a tensordict of ``td``'s batch size, so that its
    entries are matched key by key like another tensordict's (``KeyError`` naming a
    key one side lacks)."""
    return container_class("TensorDict").from_dict(other, batch_size=td.batch_size)


def write_into(td: TensorDictBase, out: Any, new: list, op: str) -> Any:
    """Copy ``new`` (aligned with ``td``'s leaves) into the leaves of ``out``; ``out``.
    ``where`` instead gives an unlocked ``out`` the results as new entries (so they
    may require grad). The entries ``out`` lacks are not written (as in 0.15.3: TorchRL's collectors
    stack each step into a preallocated rollout that holds only some keys), except for
    ``where``, which creates them (0.15.3 fills an ``.empty()`` tensordict there)."""
    if op in _OUT_REPLACES and not getattr(out, "is_locked", False):
        # where(out=) gives out the results as its new entries (0.15.3): the tensors
        # out held, which other tensordicts may share (TorchRL's rollouts keep each
        # step's, and its resets write where(..., out=) into the next step), keep
        # their values
        out.update(td._leaves_and_rebuild()[1](new, batch_size=out.batch_size))
        return out
    if torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in new
    ):  # as torch's out= functions, in torch's words
        raise RuntimeError(
            f"functions with out=... arguments don't support automatic "
            f"differentiation, but one of the arguments requires grad. {op}(out=): "
            f"the results require grad; call {op}() without out=, or under "
            f"torch.no_grad()"
        )
    try:
        targets = td._operand_leaves(out, op)
    except KeyError:
        if op in _OUT_CREATES_KEYS:
            return _write_creating(td, out, new)
        return _write_matching(td, out, new)
    if len(targets) != len(new):
        # ``new`` holds the batched leaves only (stack, cat): UnbatchedTensor entries
        # are left as ``out`` holds them
        batched = [not _base.is_unbatched(leaf) for leaf in td._leaves()]
        if len(batched) == len(targets) and sum(batched) == len(new):
            targets = [t for t, keep in zip(targets, batched) if keep]
    if targets:
        if any(torch._debug_has_internal_overlap(t) == 1 for t in targets):
            return _write_matching(td, out, new)
        torch._foreach_copy_(targets, new)
    return out


# ops whose ``out=`` gets the keys it lacks (the others write only the keys it has)
_OUT_CREATES_KEYS = frozenset({"where"})
# ops whose ``out=`` takes the results as new entries, unless it is locked (written
# into then; 0.15.3 raises there)
_OUT_REPLACES = frozenset({"where"})


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


def _write_creating(td: TensorDictBase, out: Any, new: list) -> Any:
    """``out=`` a tensor collection lacking some of the result's keys, as 0.15.3
    accepts: the missing keys are created in ``out`` (validated against its batch
    size), the others written in place; keys only ``out`` has are left as they are."""
    result = td._leaves_and_rebuild()[1](new, batch_size=out.batch_size)
    out.update(result, inplace=True)
    return out


def fill_defaults(td: TensorDictBase, other: Any, default: Any) -> tuple:
    """``td OP other`` with ``default=`` (``pad=`` for ``where``): ``(td, other,
    default)`` to combine. Where ``other`` is a tensor collection holding leaves ``td``
    lacks, a shallow copy of ``td`` gets them, filled with ``default``, so that the
    result has the keys of both sides (``td``'s own missing keys are filled later by
    ``_operand_leaves``). ``default="intersection"`` keeps only the keys both have."""
    if not _base.is_tensor_collection(other):
        return td, other, default
    if isinstance(default, str):
        if default != "intersection":
            raise ValueError(
                f"default must be a number, a tensor or 'intersection', got {default!r}"
            )
        own = set(td.keys(True, True))
        common = [k for k in other.keys(True, True) if k in own]
        return td.select(*common), other.select(*common), None
    missing = [k for k in other.keys(True, True) if td.get(k) is None]
    if not missing:
        return td, other, default
    td = td.copy()
    for key in missing:
        leaf = other.get(key)
        if isinstance(leaf, torch.Tensor):
            td.set(key, torch.full_like(leaf, default))
    return td, other, default


def compare_non_tensor(td, other, result, op: str):
    """``result`` (of ``td OP other``, ``op`` one of ``__eq__``, ``__ne__``,
    ``__xor__``, ``__or__``) with every non-tensor entry of ``td`` that ``other`` also
    holds (as non-tensor data, or a number against a tensor) replaced by the booleans of
    the operator on their values, one per batch element, as 0.15.3 gives them
    (``(td == td.clone())["label"]`` is ``True``, ``td ^ td`` gives ``False``). Entries
    the operator does not apply to (``"a" ^ "b"``) stay as they were. Dense results
    only (a lazy stack's members are compared by their own op)."""
    dense = container_class("TensorDict")
    if type(result) is not dense or not isinstance(other, _base.TensorDictBase):
        return result
    other = _inner(other)
    if type(other) is not dense:
        return result
    compare = container_class("NonTensorStack")._compare_values
    _compare_level(result, td, other, op.strip("_"), compare, dense)
    return result


def _inner(value):
    """A tensorclass's tensordict; anything else as it is."""
    return value._tensordict if getattr(value, "_is_tensorclass", False) else value


def _compare_level(result, td, other, op: str, compare, dense) -> None:
    storage = result._tensordict
    other_storage = other._tensordict
    for key, value in _inner(td)._own_items():
        if isinstance(value, torch.Tensor):
            continue  # (a number the other holds as data was combined as a tensor)
        if _base._is_node(value):
            sub_result = _inner(storage.get(key))
            sub_other = _inner(other_storage.get(key))
            if (
                type(_inner(value)) is dense
                and type(sub_result) is dense
                and type(sub_other) is dense
            ):
                _compare_level(sub_result, value, sub_other, op, compare, dense)
            continue
        other_value = other_storage.get(key, _ABSENT)
        if other_value is _ABSENT or _base._is_node(other_value):
            continue
        compared = compare(value, other_value, td.batch_size, op)
        if compared is not None:
            storage[key] = compared


_ABSENT = object()
