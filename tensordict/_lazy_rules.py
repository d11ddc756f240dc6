"""The batch-dim ops of :class:`~tensordict.LazyStackedTensorDict`, one function per
batch-size rule of the spec (``codegen/rules.py``), called by the generated lazy forms
in ``tensordict/_generated/lazy_ops.py``: plain functions, each called once.

Each function checks its arguments with the same rule as the ``TensorDict`` op
(``tensordict._ops.<rule>_rule``, so errors read the same), then translates the dims
around the stack dim: a batch dim ``d`` of the stack is dim ``d`` of each stacked
tensordict before the stack dim and ``d - 1`` after it. An op that leaves the stack dim
alone runs on each stacked tensordict and the results are stacked lazily again; an op
that only moves, reorders or selects along the stack dim rearranges the stacked
tensordicts themselves (a permutation moves the stack dim, ``flip`` reverses them,
``narrow`` and ``split`` select them); an op that mixes the stack dim with others runs
on the dense stack (``stack._dense_op``, an error naming the op if the stacked
tensordicts cannot be stacked densely).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from tensordict import _errors
from tensordict._compat import _is_leaf_nontensor
from tensordict._keys import unravel_key_to_tuple

from tensordict._ops.batch_shape import (
    as_int,
    assign_inplace,
    batch_dim,
    batch_dim_tuple,
    expand_rule,
    flatten_rule,
    flip_rule,
    movedim_rule,
    narrow_rule,
    permute_rule,
    repeat_rule,
    reshape_rule,
    roll_rule,
    rot90_rule,
    squeeze_rule,
    transpose_rule,
    unflatten_rule,
    unsqueeze_rule,
    view_rule,
)
from tensordict._ops.indexing import (
    chunk_rule,
    split_rule,
    tensor_split_rule,
    unbind_rule,
)
from tensordict._ops.reduction import (
    dims_given,
    reduce_batch_rule,
    reduce_one_rule,
    reduce_rule,
)
from tensordict._ops.stacking import cat_rule, lazy_stack, stack_inputs
from tensordict._registry import container_class
from tensordict.utils import lazy_legacy

_FULL = slice(None)


def _member_dim(d: int, stack_dim: int) -> int:
    """Batch dim ``d`` of the stack as a dim of the stacked tensordicts."""
    return d if d < stack_dim else d - 1


def not_in_place(stack, op: str) -> NotImplementedError:
    # a NotImplementedError as in 0.15.3 (and a RuntimeError, which it derives from)
    return NotImplementedError(
        f"{op}(inplace=True) is not supported on a LazyStackedTensorDict: this op "
        f"changes the batch size across the stack dim {stack.stack_dim}; call it "
        f"without inplace=True, or on to_tensordict()"
    )


def _done(stack, result, op: str, inplace: bool):
    """``result``, or with ``inplace`` the stack given ``result``'s tensordicts."""
    if not inplace:
        return result
    if not _is_lazy_stack(result) or len(result.tensordicts) != len(stack.tensordicts):
        raise not_in_place(stack, op)
    if stack._is_locked:
        raise RuntimeError(
            f"cannot run {op}(inplace=True): the LazyStackedTensorDict is locked"
        )
    for member, new in zip(stack.tensordicts, result.tensordicts):
        if member is not new:
            assign_inplace(member, new)
    stack.stack_dim = result.stack_dim
    stack._refresh()
    return stack


def _is_lazy_stack(value: Any) -> bool:
    return isinstance(value, container_class("LazyStackedTensorDict"))


def _each(stack, fn: Callable, stack_dim: int):
    """``fn`` applied to every stacked tensordict, stacked lazily along ``stack_dim``."""
    return restack(stack, [fn(td) for td in stack.tensordicts], stack_dim)


def restack(stack, results: list, stack_dim: int):
    """The results of an op on each stacked tensordict, stacked lazily along
    ``stack_dim`` (results of several tensordicts, like ``max(dim)``'s ``(values,
    indices)``, give the same kind of result holding one lazy stack per position)."""
    if results and isinstance(results[0], tuple):
        parts = [stack._restack(list(group), stack_dim) for group in zip(*results)]
        kind = type(results[0])
        return tuple(parts) if kind is tuple else kind(parts)
    return stack._restack(results, stack_dim)


# --------------------------------------------------------------------------------------
# permutations: permute, transpose / swapdims / swapaxes, movedim / moveaxis
# --------------------------------------------------------------------------------------


def _permuted(stack, order: list[int]):
    """The stack with its batch dims in ``order`` (result dim ``p`` is dim
    ``order[p]``): the stack dim moves to where ``order`` puts it, and each stacked
    tensordict is permuted the same way (a view)."""
    sd = stack.stack_dim
    new_sd = order.index(sd)
    member_order = [_member_dim(d, sd) for d in order if d != sd]
    if member_order == sorted(member_order):
        return stack._restack(list(stack.tensordicts), new_sd)
    return _each(stack, lambda td: td.permute(member_order), new_sd)


def _legacy_view(stack, op: Callable):
    """Under set_lazy_legacy(True): the op as a lazy view of the stack (which the
    inverse op gives back, as 0.15.3's legacy views), as a TensorDict's is."""
    return container_class("LazyViewTensorDict")._of(stack, op)


def permute(stack, args: tuple, kwargs: dict, op: str):
    dims, _, _, unchanged = permute_rule(stack._batch_size, args, kwargs, op)
    if unchanged:  # nothing to change: the stack itself, as a TensorDict's
        return stack
    if lazy_legacy() and op == "permute":
        return _legacy_view(stack, lambda td: td.permute(*args, **kwargs))
    return _permuted(stack, list(dims))


def transpose(stack, dim0: Any, dim1: Any, op: str):
    d0, d1, _, unchanged = transpose_rule(stack._batch_size, dim0, dim1, op)
    if unchanged:  # nothing to change: the stack itself, as a TensorDict's
        return stack
    if lazy_legacy() and op == "transpose":
        return _legacy_view(stack, lambda td: td.transpose(d0, d1))
    order = list(range(len(stack._batch_size)))
    order[d0], order[d1] = order[d1], order[d0]
    return _permuted(stack, order)


def movedim(stack, source: Any, destination: Any, op: str):
    src, dst, _, _ = movedim_rule(stack._batch_size, source, destination, op)
    n = len(stack._batch_size)
    order: list = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return _permuted(stack, [next(rest) if o is None else o for o in order])


# --------------------------------------------------------------------------------------
# squeeze, unsqueeze, flatten, unflatten, narrow
# --------------------------------------------------------------------------------------


def squeeze(stack, args: tuple, kwargs: dict, op: str):
    dims, _, unchanged = squeeze_rule(stack._batch_size, args, kwargs, op)
    if unchanged:  # nothing to squeeze: the stack itself, as 0.15.3
        return stack
    sd = stack.stack_dim
    others = tuple(_member_dim(d, sd) for d in dims if d != sd)
    if sd in dims:  # a stack of one: its tensordict, squeezed
        member = stack.tensordicts[0]
        return member.squeeze(others) if others else member
    if not others:
        return stack._restack(list(stack.tensordicts), sd)
    return _each(stack, lambda td: td.squeeze(others), sd - sum(d < sd for d in dims))


def unsqueeze(stack, args: tuple, kwargs: dict, op: str):
    d, _ = unsqueeze_rule(stack._batch_size, args, kwargs, op)
    sd = stack.stack_dim
    if d <= sd:
        return _each(stack, lambda td: td.unsqueeze(d), sd + 1)
    return _each(stack, lambda td: td.unsqueeze(d - 1), sd)


def flatten(stack, start_dim: Any, end_dim: Any, op: str, *, inplace: bool = False):
    start, end, new_batch_size = flatten_rule(stack._batch_size, start_dim, end_dim, op)
    sd = stack.stack_dim
    if start == end:
        result = stack._restack(list(stack.tensordicts), sd)
    elif start <= sd <= end:  # merges the stack dim with others
        if inplace:
            raise not_in_place(stack, op)
        return _reshaped(stack, new_batch_size, op, lambda td, shape: td.reshape(shape))
    elif sd < start:
        result = _each(stack, lambda td: td.flatten(start - 1, end - 1), sd)
    else:
        result = _each(stack, lambda td: td.flatten(start, end), sd - (end - start))
    return _done(stack, result, op, inplace)


def unflatten(stack, dim: Any, sizes: Any, op: str, *, inplace: bool = False):
    d, sizes, _ = unflatten_rule(stack._batch_size, dim, sizes, op)
    sd = stack.stack_dim
    if d == sd:
        if len(sizes) != 1:  # splits the stack dim
            if inplace:
                raise not_in_place(stack, op)
            return stack._dense_op(op).unflatten(dim, sizes)
        result = stack._restack(list(stack.tensordicts), sd)
    elif d < sd:
        result = _each(stack, lambda td: td.unflatten(d, sizes), sd + len(sizes) - 1)
    else:
        result = _each(stack, lambda td: td.unflatten(d - 1, sizes), sd)
    return _done(stack, result, op, inplace)


def narrow(stack, dim: Any, start: Any, length: Any, op: str):
    narrow_rule(stack._batch_size, dim, start, length, op)
    d = batch_dim(dim, stack._batch_size, op)
    sd = stack.stack_dim
    start = as_int(start, op, "start")
    if start < 0:
        start += stack._batch_size[d]
    length = as_int(length, op, "length")
    if d == sd and length == 0:  # no member left to hold the keys: the dense stack
        return stack._dense_op(op).narrow(dim, start, length)
    if d == sd:  # a range of the stacked tensordicts
        return stack._index((_FULL,) * sd + (slice(start, start + length),))
    return _each(stack, lambda td: td.narrow(_member_dim(d, sd), start, length), sd)


# --------------------------------------------------------------------------------------
# view, reshape, expand
# --------------------------------------------------------------------------------------


def _reshaped(stack, new_batch_size, op: str, member_op: Callable):
    """The stack with batch size ``new_batch_size`` (as many elements). Where the dims
    before the stack dim stay and the stack dim's new size is ``k`` times the number
    of stacked tensordicts, each tensordict becomes ``k`` consecutive rows: it is
    reshaped by ``member_op(td, shape)`` (to ``k`` rows, unbound into ``k``
    tensordicts when ``k > 1``), so members of different shapes stay lazy. ``k > 1``
    takes the dense stack where the members allow one (one member per row would be
    slow), and other shapes always do."""
    sd = stack.stack_dim
    bs = stack._batch_size
    n = len(stack.tensordicts)
    new = tuple(new_batch_size)
    prefix = tuple(bs[:sd])
    extra = len(new) - len(bs)
    if (
        n > 0
        and extra > 0
        and new[:sd] == prefix
        and new[sd + extra + 1 :] == tuple(bs[sd + 1 :])
        and _numel(new[sd : sd + extra + 1]) == n
    ):
        # the stack dim split into several: lazy stacks of lazy stacks of the
        # members, in order (no copy), as 0.15.3
        return _nested(stack, list(stack.tensordicts), new[sd : sd + extra + 1], sd)
    fits = n > 0 and len(new) > sd and new[:sd] == prefix and new[sd] % n == 0
    if fits:
        k = new[sd] // n
        rest = new[sd + 1 :]
        fits = k * _numel(rest) == _numel(bs[sd + 1 :])
    if not fits:
        return member_op(stack._dense_op(op), new)
    if k == 1:
        return _each(stack, lambda td: member_op(td, prefix + rest), sd)
    try:
        return member_op(stack._dense_op(op), new)
    except RuntimeError:  # members of different shapes: k rows per member
        rows = [
            row
            for td in stack.tensordicts
            for row in member_op(td, prefix + (k,) + rest).unbind(sd)
        ]
        return stack._restack(rows, sd)


def _nested(stack, members: list, sizes: tuple, sd: int):
    """``members`` as a lazy stack along ``sd`` of ``sizes[0]`` lazy stacks of ...
    (``sizes`` multiply to ``len(members)``)."""
    if len(sizes) == 1:
        return stack._restack(members, sd)
    step = _numel(sizes[1:])
    groups = [
        _nested(stack, members[i * step : (i + 1) * step], sizes[1:], sd)
        for i in range(sizes[0])
    ]
    return stack._restack(groups, sd)


def _numel(shape) -> int:
    out = 1
    for size in shape:
        out *= size
    return out


def view(stack, shape: tuple, size: Any, batch_size: Any, td: Any, op: str):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        # a dtype view of every leaf (the batch size stays): each member checks its own
        return _each(
            stack,
            lambda member: member.view(shape[0], size=size, batch_size=batch_size),
            stack.stack_dim,
        )
    new_batch_size, _, _, unchanged = view_rule(
        stack._batch_size, shape, size, batch_size, td, op
    )
    if lazy_legacy() and op == "view":
        if unchanged:
            return stack
        return _legacy_view(stack, lambda td: td.view(new_batch_size))
    return _reshaped(stack, new_batch_size, op, lambda member, s: member.view(s))


def reshape(stack, args: tuple, kwargs: dict, op: str):
    new_batch_size, _, inplace, _ = reshape_rule(stack._batch_size, args, kwargs, op)
    if inplace:
        raise not_in_place(stack, op)
    return _reshaped(stack, new_batch_size, op, lambda member, s: member.reshape(s))


def expand(stack, shape: Any, kwargs: Any, op: str):
    """New leading dims shift the stack dim; each stacked tensordict is expanded to
    the new batch size without the stack dim (members of different shapes stay
    lazy). Growing the stack dim itself (a stack of one) takes the dense stack."""
    new_batch_size, _ = expand_rule(stack._batch_size, shape, kwargs, op)
    sd = stack.stack_dim + len(new_batch_size) - len(stack._batch_size)
    if new_batch_size[sd] != stack._batch_size[stack.stack_dim]:
        return stack._dense_op(op).expand(new_batch_size)
    member_shape = new_batch_size[:sd] + new_batch_size[sd + 1 :]
    return _each(stack, lambda td: td.expand(member_shape), sd)


def repeat(stack, repeats: Any, op: str, *, inplace: bool = False):
    """Each stacked tensordict repeated along the other dims (and the new leading
    ones); a count ``r`` on the stack dim repeats the sequence of members ``r`` times,
    each repetition a copy, as ``torch.repeat`` does. Members of different shapes stay
    lazy."""
    reps, _, n = repeat_rule(stack._batch_size, repeats, op)
    lead = len(reps) - n
    sd = stack.stack_dim
    times = reps[lead + sd]
    member_reps = reps[:lead] + reps[lead:][:sd] + reps[lead:][sd + 1 :]
    members = [
        td.repeat(*member_reps) for _ in range(times) for td in stack.tensordicts
    ]
    return _done(stack, stack._restack(members, sd + lead), op, inplace)


# --------------------------------------------------------------------------------------
# flip, roll, rot90
# --------------------------------------------------------------------------------------


def flip(stack, dims: Any, op: str):
    flip_rule(stack._batch_size, dims, op)
    flipped = batch_dim_tuple(dims, stack._batch_size, op)
    sd = stack.stack_dim
    others = tuple(_member_dim(d, sd) for d in flipped if d != sd)
    members = list(stack.tensordicts)
    if sd in flipped:
        members.reverse()
    if others:
        members = [td.flip(others) for td in members]
    return stack._restack(members, sd)


def roll(stack, shifts: Any, dims: Any, op: str, *, inplace: bool = False):
    roll_rule(stack._batch_size, shifts, dims, op)
    if dims is None:  # the flattened batch rolls: across the stack dim
        if inplace:
            raise not_in_place(stack, op)
        return stack._dense_op(op).roll(shifts, dims)
    sd = stack.stack_dim
    shift_list = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dim_list = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    dim_list = [batch_dim(d, stack._batch_size, op) for d in dim_list]
    members = list(stack.tensordicts)
    member_shifts, member_dims = [], []
    for shift, d in zip(shift_list, dim_list):
        if d == sd:
            n = len(members)
            k = as_int(shift, op, "shifts") % n if n else 0
            members = members[n - k :] + members[: n - k]
        else:
            member_shifts.append(shift)
            member_dims.append(_member_dim(d, sd))
    if member_dims:
        members = [td.roll(tuple(member_shifts), tuple(member_dims)) for td in members]
    result = stack._restack(members, sd)
    if inplace:
        # the stacked tensordicts keep their places: the rolled values are copied in
        dense = result.to_tensordict()
        return stack._write_back(dense)
    return result


def rot90(stack, k: Any, dims: Any, op: str):
    rot90_rule(stack._batch_size, k, dims, op)
    d0, d1 = (batch_dim(d, stack._batch_size, op) for d in dims)
    sd = stack.stack_dim
    if sd in (d0, d1):
        return stack._dense_op(op).rot90(k, dims)
    member_dims = (_member_dim(d0, sd), _member_dim(d1, sd))
    return _each(stack, lambda td: td.rot90(k, member_dims), sd)


# --------------------------------------------------------------------------------------
# split, chunk, tensor_split, unbind
# --------------------------------------------------------------------------------------


def _pieces(stack, d: int, batch_sizes: list, fn: Callable):
    """The pieces along ``d``: along the stack dim, lazy stacks of the stacked
    tensordicts of each range (no copy); along another dim, each stacked tensordict
    cut by ``fn(td, member_dim)`` and the pieces stacked lazily."""
    sd = stack.stack_dim
    if d == sd:
        out, start = [], 0
        for bs in batch_sizes:
            stop = start + bs[d]
            out.append(stack._index((_FULL,) * sd + (slice(start, stop),)))
            start = stop
        return tuple(out)
    parts = [fn(td, _member_dim(d, sd)) for td in stack.tensordicts]
    return tuple(stack._restack(list(group), sd) for group in zip(*parts))


def split(stack, split_size: Any, dim: Any, op: str):
    split_size, d, sizes = split_rule(stack._batch_size, split_size, dim, op)
    return _pieces(stack, d, sizes, lambda td, md: td.split(split_size, md))


def chunk(stack, chunks: Any, dim: Any, op: str):
    chunks, d, sizes = chunk_rule(stack._batch_size, chunks, dim, op)
    return _pieces(stack, d, sizes, lambda td, md: td.chunk(chunks, md))


def tensor_split(stack, indices_or_sections: Any, dim: Any, op: str):
    ios, d, sizes = tensor_split_rule(stack._batch_size, indices_or_sections, dim, op)
    return _pieces(stack, d, sizes, lambda td, md: td.tensor_split(ios, md))


def unbind(stack, dim: Any, op: str):
    d, _ = unbind_rule(stack._batch_size, dim, op)
    sd = stack.stack_dim
    if d == sd:  # the stacked tensordicts themselves
        return tuple(stack.tensordicts)
    size = stack._batch_size[d]
    if size == -1:
        raise RuntimeError(
            f"{op}(): cannot unbind dim {d} of a lazy stack of batch_size "
            f"{list(stack._batch_size)}: the stacked tensordicts differ in size there "
            f"(-1); unbind the stack dim {sd}, or each stacked tensordict"
        )
    prefix = (_FULL,) * d
    return tuple(stack._index(prefix + (i,)) for i in range(size))


# --------------------------------------------------------------------------------------
# reductions and scans
# --------------------------------------------------------------------------------------


def no_dim(dim: Any) -> bool:
    """Whether a reduction's ``dim`` names no dim (``all()`` / ``any()``: one bool)."""
    return not dims_given(dim)


def _per_member(stack, dim: Any, keepdim: bool, prefix: Any):
    """Where a reduction over the (normalised) batch dims ``dim`` runs: ``(the dims of
    each stacked tensordict, the result's stack dim)``, or None when it reduces the
    stack dim (or every dim): then it runs on the dense stack."""
    sd = stack.stack_dim
    shift = len(tuple(prefix))  # leading dims the result gains (quantile)
    if dim is None:
        return None
    if dim == "feature":
        return "feature", sd + shift
    dims = dim if isinstance(dim, tuple) else (dim,)
    if sd in dims:
        return None
    member_dims = tuple(_member_dim(d, sd) for d in dims)
    new_sd = sd if keepdim else sd - sum(d < sd for d in dims)
    return (member_dims if isinstance(dim, tuple) else member_dims[0]), new_sd + shift


def reduced_dims(stack, dim: Any, keepdim: Any, op: str, prefix: Any = ()):
    """A reduction whose ``dim`` may be a tuple (``sum``): ``(member dims, stack dim)``
    or None (:func:`_per_member`)."""
    dim, keepdim, _ = reduce_rule(stack._batch_size, dim, keepdim, op, prefix)
    return _per_member(stack, dim, keepdim, prefix)


def reduced_dim(stack, dim: Any, keepdim: Any, op: str, prefix: Any = ()):
    """A reduction over one batch dim (``max``, ``quantile``)."""
    dim, keepdim, _ = reduce_one_rule(stack._batch_size, dim, keepdim, op, prefix)
    return _per_member(stack, dim, keepdim, prefix)


def batch_reduced_dims(stack, dim: Any, keepdim: Any, op: str, prefix: Any = ()):
    """A reduction whose no-dim form reduces every batch dim (``logsumexp``)."""
    dim, keepdim, _ = reduce_batch_rule(stack._batch_size, dim, keepdim, op, prefix)
    return _per_member(stack, dim, keepdim, prefix)


def scanned_dim(stack, dim: Any, op: str):
    """A scan along batch dim ``dim`` (``cummax``, ``softmax``): ``(the member dim,
    the stack dim)``, or None along the stack dim."""
    d = batch_dim(dim, stack._batch_size, op)
    sd = stack.stack_dim
    return None if d == sd else (_member_dim(d, sd), sd)


# --------------------------------------------------------------------------------------
# stacking
# --------------------------------------------------------------------------------------


def _dense_inputs(items: list, op: str) -> list:
    return [x._dense_op(op) if _is_lazy_stack(x) else x for x in items]


def stack(cls, input, dim: int = 0, *, out=None, op: str = "stack"):
    """``torch.stack`` with lazy stacks among the inputs. Lazy stacks alike (one
    stack dim, as many tensordicts) give a lazy stack along that dim, as in 0.15.3:
    its tensordicts are the inputs' stacked one by one (members of different shapes
    or batch sizes are fine). Other inputs give a dense stack (or, under
    ``set_lazy_legacy(True)``, a lazy stack of them)."""
    items = stack_inputs(input, op)
    if lazy_legacy():
        return lazy_stack(items, dim, out=out)
    if out is None:
        result = _stack_members(items, dim, op)
        if result is not None:
            return result
    return container_class("TensorDict").stack(_dense_inputs(items, op), dim, out=out)


def _stack_members(items: list, dim: Any, op: str):
    """The lazy stack :func:`stack` gives for lazy stacks alike, or None."""
    first = items[0]
    if not all(_is_lazy_stack(x) for x in items):
        return None
    sd = first.stack_dim
    count = len(first.tensordicts)
    if any(x.stack_dim != sd or len(x.tensordicts) != count for x in items):
        return None
    ndim = first.batch_dims
    if any(x.batch_dims != ndim for x in items) or not -ndim - 1 <= dim <= ndim:
        return None  # the dense path names the error
    d = dim % (ndim + 1)
    # the new dim before (or at) the stack dim moves it one along; each group of
    # members is stacked at the new dim's place among the members' dims
    new_sd = sd + 1 if d <= sd else sd
    md = d if d <= sd else d - 1
    members = [
        type(parts[0]).stack(list(parts), md)
        for parts in zip(*(x.tensordicts for x in items))
    ]
    return first._restack(members, new_sd)


def cat(cls, input, dim: int = 0, *, out=None, op: str = "cat"):
    """``torch.cat`` with lazy stacks among the inputs (stacked along one dim, the
    first one's), as in 0.15.3: a lazy stack along that dim. Concatenated along it,
    its tensordicts are the inputs' (a dense input's unbound along it; no copy);
    along another dim, the inputs' tensordicts are concatenated one by one. Entries
    that differ in shape between the tensordicts stay as they are. With ``out``, the
    result is written into it (member by member into a lazy stack laid out alike)."""
    items = stack_inputs(input, op)
    tds, d, _ = cat_rule(items, dim, op)
    result = _lazy_cat(tds, d)
    if result is not None:
        if out is None:
            return result
        if (
            _is_lazy_stack(out)
            and out.stack_dim == result.stack_dim
            and len(out.tensordicts) == len(result.tensordicts)
            and out.batch_size == result.batch_size
        ):
            for dest, member in zip(out.tensordicts, result.tensordicts):
                dest.update_(member)
            return out
    return container_class("TensorDict").cat(_dense_inputs(tds, op), dim, out=out)


def _lazy_cat(tds: list, d: int):
    """The lazy stack :func:`cat` returns, or None where it densifies (the lazy
    inputs are stacked along different dims)."""
    lazy = [x for x in tds if _is_lazy_stack(x)]
    if not lazy:
        return None
    first = lazy[0]
    sd = first.stack_dim
    if any(x.stack_dim != sd for x in lazy):
        return None
    groups = [
        list(x.tensordicts) if _is_lazy_stack(x) else list(x.unbind(sd)) for x in tds
    ]
    if d == sd:
        return first._restack([m for group in groups for m in group], sd)
    count = len(groups[0])
    if any(len(group) != count for group in groups):
        return None
    md = _member_dim(d, sd)
    members = []
    for parts in zip(*groups):
        # a lazy member (a stack of stacks) concatenates lazily too
        kind = next((type(p) for p in parts if _is_lazy_stack(p)), type(parts[0]))
        members.append(kind.cat(list(parts), md))
    return first._restack(members, sd)


# --------------------------------------------------------------------------------------
# ops on each batch element alone: where, masked_fill
# --------------------------------------------------------------------------------------


def on_members(stack, op: str, kwargs: dict):
    """``op`` on every stacked tensordict, for an op that treats each batch element on
    its own (``where``, ``masked_fill``): each argument that spans the stack dim (a
    tensor or tensordict whose leading dims reach it, ``out``) is cut along it, the
    others go to every member as they are. Members of different shapes are fine.
    Returns a lazy stack of the results, or ``out`` (written member by member) when
    one is given; ``op_`` forms change the members in place."""
    n = len(stack.tensordicts)
    out = kwargs.get("out")
    if out is not None and not _splits_as_members(stack, out):
        # out cannot be cut into the members' parts: the dense stack writes it
        return getattr(stack._dense_op(op), op)(**kwargs)
    results = []
    for i, td in enumerate(stack.tensordicts):
        member_kwargs = {k: _member_part(stack, v, i, n) for k, v in kwargs.items()}
        whole = _where_whole(td, member_kwargs) if op == "where" else None
        results.append(whole if whole is not None else getattr(td, op)(**member_kwargs))
    if out is not None or op.endswith("_"):
        return out if out is not None else stack
    return stack._restack(results, stack.stack_dim)


def _where_whole(td, kwargs: dict):
    """``where`` on one stacked tensordict whose part of the condition is all true or
    all false: it takes one side's entries whole, as 0.15.3 does, so the sides may
    differ in shape (TorchRL's resets of environments whose observations grow: the
    reset member takes the reset's shorter entries). Keys one side lacks take ``pad``
    (``KeyError`` without it); ``out`` gets new entries, as from
    :meth:`TensorDict.where`. None when the condition is mixed or ``other`` is
    not a tensordict: the op then runs element by element."""
    cond, other, out = kwargs["condition"], kwargs["other"], kwargs["out"]
    if not isinstance(cond, torch.Tensor) or not isinstance(
        other, container_class("TensorDictBase")
    ):
        return None
    if cond.all():
        chosen, rest = td, other
    elif not cond.any():
        chosen, rest = other, td
    else:
        return None
    pad = kwargs["pad"]
    entries = {}
    keys = list(td.keys(True, True, is_leaf=_is_leaf_nontensor))
    mine = set(keys)
    keys += [
        key
        for key in other.keys(True, True, is_leaf=_is_leaf_nontensor)
        if key not in mine
    ]
    for key in keys:
        value = chosen.get(key, None)
        in_rest = rest.get(key, None)
        if pad is None and (value is None or in_rest is None):
            raise _errors.missing_operand_key("where", unravel_key_to_tuple(key))
        if value is None:
            if not isinstance(in_rest, torch.Tensor):
                continue  # a non-tensor entry has no pad value
            value = torch.full_like(in_rest, pad)
        entries[key] = value
    if out is None:
        result = td.empty()
        for key, value in entries.items():
            result.set(key, value.clone())
        return result
    for key, value in entries.items():
        current = out.get(key, None)
        if current is value:
            continue
        if out.is_locked and current is not None and current.shape == value.shape:
            current.copy_(value)  # as where(out=) on a TensorDict: see write_into
        else:
            out.set(key, value.clone())
    return out


def member_lists(stack, fn: Callable) -> list:
    """``fn(member)`` (nested lists along the member's batch dims, ``tolist``) for
    every stacked tensordict, nested along the stack dim as the batch dims are: the
    dense stack's lists, without stacking (members of different shapes are fine)."""
    if stack.stack_dim == 0:
        return [fn(td) for td in stack.tensordicts]
    # a batch dim before the stack dim: one list per index there (each a lazy stack
    # of the members indexed, its stack dim one lower)
    return [member_lists(stack[i], fn) for i in range(stack.batch_size[0])]


def _splits_as_members(stack, value) -> bool:
    """Whether ``value`` (an ``out``) is a lazy stack of as many tensordicts along the
    same stack dim: its members then take the members' results."""
    return (
        _is_lazy_stack(value)
        and value.stack_dim == stack.stack_dim
        and len(value.tensordicts) == len(stack.tensordicts)
    )


def _member_part(stack, value: Any, i: int, n: int):
    """The part of an argument that goes with stacked tensordict ``i``."""
    sd = stack.stack_dim
    if _splits_as_members(stack, value):
        return value.tensordicts[i]
    shape = getattr(value, "batch_size", None)
    if shape is None:
        shape = getattr(value, "shape", None)
    if shape is None or len(shape) <= sd or shape[sd] != n:
        return value  # numbers, and tensors covering only the dims before the stack dim
    if tuple(shape[:sd]) != tuple(stack._batch_size[:sd]):
        return value
    if isinstance(value, torch.Tensor):
        return value.select(sd, i)
    return value[(_FULL,) * sd + (i,)]
