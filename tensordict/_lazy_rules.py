"""The batch-dim ops of :class:`~tensordict.LazyStackedTensorDict`, one function per
batch-size rule of the spec (``codegen/schema.py``), called by the generated lazy forms
in ``tensordict/_generated/lazy_ops.py``.

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

from tensordict import _ops
from tensordict._td import TensorDict

_FULL = slice(None)


def _member_dim(d: int, stack_dim: int) -> int:
    """Batch dim ``d`` of the stack as a dim of the stacked tensordicts."""
    return d if d < stack_dim else d - 1


def not_in_place(stack, op: str) -> RuntimeError:
    return RuntimeError(
        f"{op}(inplace=True) is not supported on a LazyStackedTensorDict: this op "
        f"changes the batch size across the stack dim {stack.stack_dim}; call it "
        f"without inplace=True, or on to_tensordict()"
    )


def _done(stack, result, op: str, inplace: bool):
    """``result``, or with ``inplace`` the stack given ``result``'s tensordicts."""
    if not inplace:
        return result
    from tensordict._lazy import LazyStackedTensorDict

    if not isinstance(result, LazyStackedTensorDict) or len(result.tensordicts) != len(
        stack.tensordicts
    ):
        raise not_in_place(stack, op)
    if stack._is_locked:
        raise RuntimeError(
            f"cannot run {op}(inplace=True): the LazyStackedTensorDict is locked"
        )
    for member, new in zip(stack.tensordicts, result.tensordicts):
        if member is not new:
            _ops.assign_inplace(member, new)
    stack.stack_dim = result.stack_dim
    stack._refresh()
    return stack


def _each(stack, fn: Callable, stack_dim: int):
    """``fn`` applied to every stacked tensordict, stacked lazily along ``stack_dim``
    (a result of several tensordicts, like ``max(dim)``'s ``(values, indices)``, gives
    the same kind of result holding one lazy stack per position)."""
    results = [fn(td) for td in stack.tensordicts]
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


def permute(stack, args: tuple, kwargs: dict, op: str):
    dims, _, _ = _ops.permute_rule(stack._batch_size, args, kwargs, op)
    return _permuted(stack, list(dims))


def transpose(stack, dim0: Any, dim1: Any, op: str):
    d0, d1, _ = _ops.transpose_rule(stack._batch_size, dim0, dim1, op)
    order = list(range(len(stack._batch_size)))
    order[d0], order[d1] = order[d1], order[d0]
    return _permuted(stack, order)


def movedim(stack, source: Any, destination: Any, op: str):
    src, dst, _ = _ops.movedim_rule(stack._batch_size, source, destination, op)
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
    dims, _ = _ops.squeeze_rule(stack._batch_size, args, kwargs, op)
    sd = stack.stack_dim
    others = tuple(_member_dim(d, sd) for d in dims if d != sd)
    if sd in dims:  # a stack of one: its tensordict, squeezed
        member = stack.tensordicts[0]
        return member.squeeze(others) if others else member
    if not others:
        return stack._restack(list(stack.tensordicts), sd)
    return _each(stack, lambda td: td.squeeze(others), sd - sum(d < sd for d in dims))


def unsqueeze(stack, args: tuple, kwargs: dict, op: str):
    d, _ = _ops.unsqueeze_rule(stack._batch_size, args, kwargs, op)
    sd = stack.stack_dim
    if d <= sd:
        return _each(stack, lambda td: td.unsqueeze(d), sd + 1)
    return _each(stack, lambda td: td.unsqueeze(d - 1), sd)


def flatten(stack, start_dim: Any, end_dim: Any, op: str, *, inplace: bool = False):
    start, end, _ = _ops.flatten_rule(stack._batch_size, start_dim, end_dim, op)
    sd = stack.stack_dim
    if start == end:
        result = stack._restack(list(stack.tensordicts), sd)
    elif start <= sd <= end:  # merges the stack dim with others
        if inplace:
            raise not_in_place(stack, op)
        return stack._dense_op(op).flatten(start_dim, end_dim)
    elif sd < start:
        result = _each(stack, lambda td: td.flatten(start - 1, end - 1), sd)
    else:
        result = _each(stack, lambda td: td.flatten(start, end), sd - (end - start))
    return _done(stack, result, op, inplace)


def unflatten(stack, dim: Any, sizes: Any, op: str, *, inplace: bool = False):
    d, sizes, _ = _ops.unflatten_rule(stack._batch_size, dim, sizes, op)
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
    _ops.narrow_rule(stack._batch_size, dim, start, length, op)
    d = _ops.batch_dim(dim, stack._batch_size, op)
    sd = stack.stack_dim
    start = _ops._as_int(start, op, "start")
    if start < 0:
        start += stack._batch_size[d]
    length = _ops._as_int(length, op, "length")
    if d == sd:  # a range of the stacked tensordicts
        return stack._index((_FULL,) * sd + (slice(start, start + length),))
    return _each(stack, lambda td: td.narrow(_member_dim(d, sd), start, length), sd)


# --------------------------------------------------------------------------------------
# flip, roll, rot90
# --------------------------------------------------------------------------------------


def flip(stack, dims: Any, op: str):
    _ops.flip_rule(stack._batch_size, dims, op)
    flipped = _ops.batch_dim_tuple(dims, stack._batch_size, op)
    sd = stack.stack_dim
    others = tuple(_member_dim(d, sd) for d in flipped if d != sd)
    members = list(stack.tensordicts)
    if sd in flipped:
        members.reverse()
    if others:
        members = [td.flip(others) for td in members]
    return stack._restack(members, sd)


def roll(stack, shifts: Any, dims: Any, op: str, *, inplace: bool = False):
    _ops.roll_rule(stack._batch_size, shifts, dims, op)
    if dims is None:  # the flattened batch rolls: across the stack dim
        if inplace:
            raise not_in_place(stack, op)
        return stack._dense_op(op).roll(shifts, dims)
    sd = stack.stack_dim
    shift_list = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dim_list = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    dim_list = [_ops.batch_dim(d, stack._batch_size, op) for d in dim_list]
    members = list(stack.tensordicts)
    member_shifts, member_dims = [], []
    for shift, d in zip(shift_list, dim_list):
        if d == sd:
            n = len(members)
            k = _ops._as_int(shift, op, "shifts") % n if n else 0
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
    _ops.rot90_rule(stack._batch_size, k, dims, op)
    d0, d1 = (_ops.batch_dim(d, stack._batch_size, op) for d in dims)
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
    split_size, d, sizes = _ops.split_rule(stack._batch_size, split_size, dim, op)
    return _pieces(stack, d, sizes, lambda td, md: td.split(split_size, md))


def chunk(stack, chunks: Any, dim: Any, op: str):
    chunks, d, sizes = _ops.chunk_rule(stack._batch_size, chunks, dim, op)
    return _pieces(stack, d, sizes, lambda td, md: td.chunk(chunks, md))


def tensor_split(stack, indices_or_sections: Any, dim: Any, op: str):
    ios, d, sizes = _ops.tensor_split_rule(
        stack._batch_size, indices_or_sections, dim, op
    )
    return _pieces(stack, d, sizes, lambda td, md: td.tensor_split(ios, md))


def unbind(stack, dim: Any, op: str):
    d, _ = _ops.unbind_rule(stack._batch_size, dim, op)
    sd = stack.stack_dim
    if d == sd:  # the stacked tensordicts themselves
        return tuple(stack.tensordicts)
    prefix = (_FULL,) * d
    return tuple(stack._index(prefix + (i,)) for i in range(stack._batch_size[d]))


# --------------------------------------------------------------------------------------
# reductions and scans
# --------------------------------------------------------------------------------------


def reduce(
    stack,
    dim: Any,
    keepdim: Any,
    op: str,
    member: Callable,
    whole: Callable,
    *,
    reduce: Any = None,
    out: Any = None,
    no_dim: str = "each_leaf",
    one: bool = False,
    prefix: tuple = (),
    scan: bool = False,
):
    """A reduction (or a scan, ``scan=True``) of a lazy stack.

    ``member(td, dim)`` runs the op on a stacked tensordict over its dim ``dim``;
    ``whole(td)`` runs the ``TensorDict`` form of the op on ``td`` as called. Over dims
    other than the stack dim the op runs per stacked tensordict (a lazy stack); over
    the stack dim, on the dense stack; reducing every leaf to one value
    (``reduce=True``, or ``all()`` / ``any()`` without a dim) reads the stacked
    tensordicts' leaves directly.
    """
    sd = stack.stack_dim
    if out is not None:
        return whole(stack._dense_op(op))
    if reduce:
        return whole(stack)
    if scan:
        d = _ops.batch_dim(dim, stack._batch_size, op)
        if d == sd:
            return whole(stack._dense_op(op))
        return _each(stack, lambda td: member(td, _member_dim(d, sd)), sd)
    dim, keepdim, _ = _ops.reduce_rule(
        stack._batch_size, dim, keepdim, op, one=one, no_dim=no_dim, prefix=prefix
    )
    if dim is None:
        if no_dim in ("all", "any"):
            return whole(stack)
        return whole(stack._dense_op(op))
    shift = len(tuple(prefix))
    if dim == "feature":
        return _each(stack, lambda td: member(td, "feature"), sd + shift)
    dims = dim if isinstance(dim, tuple) else (dim,)
    if sd in dims:
        return whole(stack._dense_op(op))
    member_dims = tuple(_member_dim(d, sd) for d in dims)
    member_dim = member_dims if isinstance(dim, tuple) else member_dims[0]
    new_sd = sd if keepdim else sd - sum(d < sd for d in dims)
    return _each(stack, lambda td: member(td, member_dim), new_sd + shift)


# --------------------------------------------------------------------------------------
# stacking
# --------------------------------------------------------------------------------------


def _dense_inputs(items: list, op: str) -> list:
    from tensordict._lazy import LazyStackedTensorDict

    return [
        x._dense_op(op) if isinstance(x, LazyStackedTensorDict) else x for x in items
    ]


def stack(cls, input, dim: int = 0, *, out=None, op: str = "stack"):
    """``torch.stack`` of lazy stacks: a dense stack, or under
    ``set_lazy_legacy(True)`` a lazy stack of them."""
    items = _ops._stack_inputs(input, op)
    if _ops.lazy_legacy():
        return _ops.lazy_stack(items, dim, out=out)
    return TensorDict.stack(_dense_inputs(items, op), dim, out=out)


def cat(cls, input, dim: int = 0, *, out=None, op: str = "cat"):
    """``torch.cat`` of lazy stacks stacked along the same dim: along that dim, one lazy
    stack of all their tensordicts (no copy); along another dim, their tensordicts
    concatenated one by one (when the stacks hold as many). Otherwise dense."""
    from tensordict._lazy import LazyStackedTensorDict

    items = _ops._stack_inputs(input, op)
    tds, d, _ = _ops.cat_rule(items, dim, op)
    first = tds[0]
    if out is None and all(
        isinstance(x, LazyStackedTensorDict) and x.stack_dim == first.stack_dim
        for x in tds
    ):
        sd = first.stack_dim
        if d == sd:
            members = [m for x in tds for m in x.tensordicts]
            return first._restack(members, sd)
        count = len(first.tensordicts)
        if all(len(x.tensordicts) == count for x in tds):
            md = _member_dim(d, sd)
            members = [
                type(group[0]).cat(list(group), md)
                for group in zip(*(x.tensordicts for x in tds))
            ]
            return first._restack(members, sd)
    return TensorDict.cat(_dense_inputs(tds, op), dim, out=out)
