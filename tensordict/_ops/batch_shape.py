"""Batch dims: the helpers of the batch_shape and reduction families (spec/shape.yaml,
spec/reduction.yaml).

A shape op calls one rule helper (``*_rule``) once per call, before the leaves are
touched. It checks the user's dims or shape against the batch size (dims count batch
dims only; negative dims count from the last batch dim), raises an error that names
the op, the argument and the batch size, and returns the normalised arguments and the
new batch size. The op then applies one per-leaf expression and rebuilds once.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch

import tensordict.base as _base
from tensordict import _errors

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


_SEQUENCES = (list, tuple, torch.Size)


def as_int(value: Any, op: str, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{op}(): {what} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{op}(): {what} must be an int, got {type(value).__name__} {value!r}"
        ) from None


def _describe(batch_size: torch.Size) -> str:
    n = len(batch_size)
    dims = "no batch dims" if n == 0 else f"{n} batch dim{'s' if n > 1 else ''}"
    return f"batch_size {list(batch_size)} ({dims})"


_INCOMPATIBLE_DIM = ("split", "squeeze", "unbind", "chunk", "tensor_split")
_NEEDS_DIMS = {"fliplr": 2, "rot90": 2, "flipud": 1}


def _lead_phrase(op: str, dim: int, batch_size: torch.Size, n: int) -> str:
    """0.15.3's words for a dim out of range, which existing code matches with
    ``re.search``: they lead the message (ours follows them)."""
    if op == "transpose":
        return (
            "The provided dimensions are incompatible with the tensordict batch-size: "
            "dim0 and dim1 must be within the range of the number of dimensions. "
        )
    if op in _NEEDS_DIMS:
        k = _NEEDS_DIMS[op]
        return f"{op} requires at least {k} batch dimension{'s' if k > 1 else ''}: "
    if op in _INCOMPATIBLE_DIM:
        return f"Incompatible dim {dim} for tensordict with shape {batch_size}. "
    if op == "unsqueeze":
        return (
            "unsqueezing is allowed for dims comprised between `-td.batch_dims - 1` "
            f"and `td.batch_dims` only. Got dim={dim} with a batch size of "
            f"{batch_size}. "
        )
    if op == "permute":
        return (
            "Received an permutation order incompatible with the tensordict shape. "
        )
    if op == "cat":
        return (
            "dim must be in the range 0 <= dim < len(batch_size), got "
            f"dim={dim} and batch_size={list(batch_size)}. "
        )
    if op == "gather":
        return f"Cannot gather tensordict with shape {batch_size} along dim {dim}. "
    return (
        f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
        f"got {dim}). "
    )


def batch_dim(
    dim: Any, batch_size: torch.Size, op: str, what: str = "dim", *, extra: int = 0
) -> int:
    """``dim`` as an index >= 0 into the batch dims (a negative dim counts from the
    last one). ``extra`` widens the range: ``unsqueeze`` may insert after the last."""
    n = len(batch_size) + extra
    d = dim if type(dim) is int else as_int(dim, op, what)  # a plain int: no call
    if not -n <= d < n:
        where = f"in [{-n}, {n - 1}]" if n else "impossible"
        raise _errors.DimOutOfRangeError(
            f"{_lead_phrase(op, d, batch_size, n)}"
            f"{op}(): {what}={dim} is out of range for a tensordict with "
            f"{_describe(batch_size)}; dims count batch dims only, so {what} must "
            f"be {where}"
        )
    return d + n if d < 0 else d


def batch_dim_tuple(
    dims: Any, batch_size: torch.Size, op: str, what: str = "dims"
) -> tuple[int, ...]:
    """An int or a sequence of ints, each checked by :func:`batch_dim`, no repeats."""
    items = tuple(dims) if isinstance(dims, _SEQUENCES) else (dims,)
    out = tuple(batch_dim(d, batch_size, op, what) for d in items)
    if len(set(out)) != len(out):
        raise _errors.BatchDimsError(
            f"repeated dim in {what}: {op}(): {what}={dims!r} names the same batch "
            f"dim more than once ({_describe(batch_size)})"
        )
    return out


def shape_arg(args: tuple, op: str, what: str = "shape") -> tuple[int, ...]:
    """The shape forms users pass: ``(2, 6)`` as ``op(2, 6)``, ``op((2, 6))``,
    ``op([2, 6])`` or ``op(torch.Size([2, 6]))``."""
    if len(args) == 1 and isinstance(args[0], _SEQUENCES):
        args = tuple(args[0])
    for a in args:
        if type(a) is not int:  # tensors, numpy ints, bools: checked one by one
            return tuple(as_int(a, op, what) for a in args)
    return args if type(args) is tuple else tuple(args)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def infer_shape(shape: tuple[int, ...], batch_size: torch.Size, op: str) -> torch.Size:
    """``shape`` (one ``-1`` allowed) as the new batch size for the same elements."""
    numel = _numel(batch_size)
    if -1 not in shape and _numel(shape) == numel and min(shape, default=0) >= 0:
        return torch.Size(shape)  # every size given, and they fit
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise RuntimeError(
            f"{op}(): invalid shape {list(shape)} for a tensordict with "
            f"{_describe(batch_size)}: sizes must be >= 0, and only one may be -1"
        )
    known = _numel(s for s in shape if s != -1)
    if unknown and known and numel % known == 0:
        shape = shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    elif unknown or known != numel:
        raise RuntimeError(
            f"{op}(): shape {list(shape)} does not fit a tensordict with "
            f"{_describe(batch_size)}: the batch holds {numel} elements"
        )
    return torch.Size(shape)


def _positional(args: tuple, kwargs: dict, names: tuple[str, ...], op: str) -> tuple:
    """The arguments of a ``(*args, **kwargs)`` op: ``args``, or the value of its one
    keyword (one of ``names``) as a 1-tuple. Unknown keywords raise ``TypeError``."""
    if not kwargs:
        return args
    unknown = sorted(set(kwargs) - set(names))
    if unknown:
        raise TypeError(
            f"{op}() got an unexpected keyword argument {unknown[0]!r} "
            f"(it takes {' or '.join(names)})"
        )
    if args or len(kwargs) > 1:
        raise TypeError(
            f"{op}(): pass the {names[0]} either as arguments or as one of "
            f"{', '.join(n + '=' for n in names)}, not both"
        )
    return tuple(kwargs.values())


def reshape_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """reshape: ``(new_batch_size, batch_dims, inplace, unchanged)``; ``reshape(-1)``,
    ``reshape(2, 6)``, ``reshape((2, 6))``, ``reshape(shape=...)`` or
    ``reshape(size=...)``; ``inplace=True`` (a keyword, as 0.15.3 takes it) makes the
    tensordict itself take the new shape."""
    if "inplace" in kwargs:
        kwargs = dict(kwargs)
        inplace = bool(kwargs.pop("inplace"))
    else:
        inplace = False
    shape = shape_arg(_positional(args, kwargs, ("shape", "size"), op), op)
    new = infer_shape(shape, batch_size, op)
    return new, len(batch_size), inplace, new == batch_size


def view_rule(
    batch_size, shape: tuple, size: Any, new_batch_size: Any, td: Any, op: str
):
    """view: ``(new_batch_size, dtype, batch_dims, unchanged)``; ``dtype`` is None but for the
    dtype form ``view(torch.float16)``, which keeps the batch size (a leaf without a
    feature dim refuses a dtype of another size, which would rescale a batch dim).
    ``size=`` and ``batch_size=`` give the shape as a keyword."""
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        if size is not None and new_batch_size is not None:
            raise TypeError(f"{op}(): give size or batch_size, not both")
        if size is not None or new_batch_size is not None:
            target = size if size is not None else new_batch_size
            return _dtype_view_batch(td, shape[0], target, op), shape[0], len(batch_size), False
        dtype = shape[0]
        for x, n in zip(td._leaves(), leaf_batch_dims(td)):
            if x.element_size() != dtype.itemsize and x.ndim <= n:
                raise RuntimeError(
                    f"{op}({dtype}): a leaf of shape {list(x.shape)} and dtype "
                    f"{x.dtype} has no feature dim, and a dtype of another size "
                    f"rescales the last dim, a batch dim of its tensordict "
                    f"({_describe(x.shape[:n])})"
                )
        return batch_size, dtype, len(batch_size), False
    if size is not None or new_batch_size is not None:  # the shape as a keyword
        given = {"size": size, "batch_size": new_batch_size}
        kwargs = {k: v for k, v in given.items() if v is not None}
        shape = _positional(shape, kwargs, ("size", "batch_size"), op)
    shape = shape_arg(shape, op)
    new = infer_shape(shape, batch_size, op)
    return new, None, len(batch_size), new == batch_size


def _dtype_view_batch(td: Any, dtype: torch.dtype, target: Any, op: str) -> torch.Size:
    """``view(dtype, batch_size=...)``, as 0.15.3 takes it: every leaf viewed as
    ``dtype`` (its last dim rescaled by the ratio of the element sizes), the result
    given ``batch_size``, which must lead every viewed leaf's shape."""
    target = torch.Size(shape_arg(tuple(target), op))
    for x in td._leaves():
        size = x.shape[-1] * x.element_size() if x.ndim else x.element_size()
        viewed = x.shape[:-1] + (size // dtype.itemsize,) if x.ndim else ()
        if tuple(viewed[: len(target)]) != tuple(target):
            raise RuntimeError(
                f"{op}({dtype}, batch_size={list(target)}): a leaf of shape "
                f"{list(x.shape)} and dtype {x.dtype} viewed as {dtype} has shape "
                f"{list(viewed)}, which does not start with batch_size {list(target)}"
            )
    return target


def permute_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """permute: ``(dims, positions, new_batch_size, unchanged)``; ``permute(1, 0)``,
    ``permute((1, 0))`` or ``permute(dims=[1, 0])``. A leaf is
    ``x.movedim(dims, positions)``: its feature dims stay where they are."""
    order = shape_arg(_positional(args, kwargs, ("dims",), op), op, "dims")
    n = len(batch_size)
    out = tuple(batch_dim(d, batch_size, op, "dims") for d in order)
    if sorted(out) != list(range(n)):
        raise _errors.BatchDimsError(
            f"{op}(): dims {list(order)} is not a permutation of the batch dims of a "
            f"tensordict with {_describe(batch_size)}"
        )
    same = out == tuple(range(n))
    return out, tuple(range(n)), torch.Size([batch_size[d] for d in out]), same


def transpose_rule(batch_size, dim0: Any, dim1: Any, op: str):
    """transpose/swapdims: ``(dim0, dim1, new_batch_size, unchanged)``."""
    d0 = batch_dim(dim0, batch_size, op, "dim0")
    d1 = batch_dim(dim1, batch_size, op, "dim1")
    new = list(batch_size)
    new[d0], new[d1] = new[d1], new[d0]
    return d0, d1, torch.Size(new), d0 == d1


def movedim_rule(batch_size, source: Any, destination: Any, op: str):
    """movedim/moveaxis: ``(source, destination, new_batch_size, unchanged)``;
    ``unchanged`` (the op returns the tensordict itself, as 0.15.3) when every dim
    stays where it is."""
    src = batch_dim_tuple(source, batch_size, op, "source")
    dst = batch_dim_tuple(destination, batch_size, op, "destination")
    if len(src) != len(dst):
        raise _errors.BatchDimsError(
            f"movedim: Invalid source or destination dims: source and destination "
            f"must have the same number of elements: {op}(): source {source!r} and "
            f"destination {destination!r} must name as many dims"
        )
    order = [None] * len(batch_size)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(len(batch_size)) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    unchanged = order == list(range(len(batch_size)))
    return src, dst, torch.Size([batch_size[d] for d in order]), unchanged


def squeeze_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """squeeze: ``(dims, new_batch_size, unchanged)``: the batch dims of size one
    among those named (``squeeze(0)``, ``squeeze((0, 2))``, ``squeeze(dim=0)``; all of
    them when none is), as ``torch.squeeze`` does; ``unchanged`` (the op returns the
    tensordict itself, as 0.15.3) when there is none."""
    args = _positional(args, kwargs, ("dim",), op)
    if len(args) == 1 and args[0] is None:
        args = ()
    named = (
        batch_dim_tuple(shape_arg(args, op, "dim"), batch_size, op, "dim")
        if args
        else range(len(batch_size))
    )
    dims = tuple(d for d in named if batch_size[d] == 1)
    new = torch.Size([s for d, s in enumerate(batch_size) if d not in dims])
    return dims, new, not dims


def unsqueeze_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """unsqueeze: ``(dim, new_batch_size)``; ``unsqueeze(0)`` or ``unsqueeze(dim=0)``;
    dim may be one past the last batch dim (-1: after the last batch dim)."""
    args = _positional(args, kwargs, ("dim",), op)
    if len(args) != 1:
        raise TypeError(f"{op}() takes one dim, got {len(args)} arguments")
    d = batch_dim(args[0], batch_size, op, "dim", extra=1)
    return d, batch_size[:d] + (1,) + batch_size[d:]


def flatten_rule(batch_size, start_dim: Any, end_dim: Any, op: str):
    """flatten: ``(start_dim, end_dim, new_batch_size)``; defaults: every batch dim.
    Without batch dims, as ``torch.flatten`` of a 0-d tensor: batch size ``[1]``
    (``end_dim`` < ``start_dim`` then tells the leaf to add that dim)."""
    if not batch_size:
        for name, value in (("start_dim", start_dim), ("end_dim", end_dim)):
            if value not in (None, 0, -1):
                raise IndexError(
                    f"{op}(): {name}={value} is out of range for a tensordict with "
                    f"{_describe(batch_size)}"
                )
        return 0, -1, torch.Size([1])
    start = batch_dim(
        0 if start_dim is None else start_dim, batch_size, op, "start_dim"
    )
    end = batch_dim(-1 if end_dim is None else end_dim, batch_size, op, "end_dim")
    if end < start:
        raise ValueError(
            f"{op}(): end_dim={end_dim} comes before start_dim={start_dim} for a "
            f"tensordict with {_describe(batch_size)}"
        )
    merged = _numel(batch_size[start : end + 1])
    return start, end, batch_size[:start] + (merged,) + batch_size[end + 1 :]


def unflatten_rule(batch_size, dim: Any, sizes: Any, op: str):
    """unflatten: ``(dim, sizes, new_batch_size)``; one size may be -1."""
    d = batch_dim(dim, batch_size, op, "dim")
    given = shape_arg((sizes,), op, "unflattened_size")
    try:
        sizes = infer_shape(given, batch_size[d : d + 1], op)
    except RuntimeError:
        raise RuntimeError(
            f"{op}(): sizes {list(given)} do not multiply to the size of batch dim "
            f"{dim} ({batch_size[d]}) of a tensordict with {_describe(batch_size)}"
        ) from None
    return d, tuple(sizes), batch_size[:d] + sizes + batch_size[d + 1 :]


def expand_rule(batch_size, shape: Any, kwargs: dict | None, op: str):
    """expand/broadcast_to/expand_as: ``(new_batch_size, batch_dims)``;
    ``expand(2, 3, 4)``, ``expand((2, 3, 4))`` or ``expand(size=...)``. New leading
    dims may be added; -1 keeps a size; a size can only grow from one."""
    if not isinstance(shape, tuple):
        shape = (shape,)
    shape = shape_arg(_positional(shape, kwargs or {}, ("size", "shape"), op), op)
    n, lead = len(batch_size), len(shape) - len(batch_size)
    if lead < 0:
        raise RuntimeError(
            f"{op}(): shape {list(shape)} has fewer dims than a tensordict with "
            f"{_describe(batch_size)}"
        )
    new = list(shape)
    for i, size in enumerate(shape):
        old = batch_size[i - lead] if i >= lead else None
        if size == -1 and old is not None:
            new[i] = old
        elif size < 0 or (old is not None and old != 1 and old != size):
            raise RuntimeError(
                f"{op}(): cannot expand a tensordict with {_describe(batch_size)} "
                f"to shape {list(shape)}: size {size} at dim {i} (only size-one "
                "dims grow; -1 keeps a size, and new leading dims need a size)"
            )
    return torch.Size(new), n


def repeat_rule(batch_size, repeats: Any, op: str, *, pad: bool = False):
    """repeat: ``(repeats, new_batch_size, batch_dims)``; one count per batch dim
    (more add leading dims). A leaf is ``x.repeat(repeats + (1,) * features)``."""
    reps = shape_arg(
        repeats if isinstance(repeats, tuple) else (repeats,), op, "repeats"
    )
    n = len(batch_size)
    if len(reps) < n:
        if not pad:
            raise ValueError(
                f"{op}(): {len(reps)} repeat count(s) {list(reps)} for a tensordict "
                f"with {_describe(batch_size)}; give one per batch dim"
            )
        reps = (1,) * (n - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError(f"{op}(): repeat counts {list(reps)} must be >= 0")
    lead = len(reps) - n
    new = reps[:lead] + tuple(r * s for r, s in zip(reps[lead:], batch_size))
    return reps, torch.Size(new), n


def tile_rule(batch_size, dims: Any, op: str):
    """tile: as :func:`repeat_rule`, fewer counts than batch dims padded with ones in
    front, as ``torch.tile`` does."""
    return repeat_rule(batch_size, dims, op, pad=True)


def repeat_interleave_rule(batch_size, repeats: Any, dim: Any, output_size: Any, op):
    """repeat_interleave: ``(dim, flat, new_batch_size, batch_dims)``; with no dim the
    batch dims are flattened first (``flat``), as torch flattens a tensor."""
    n = len(batch_size)
    if dim is None:
        if not n:
            raise ValueError(
                f"{op}(): a tensordict with {_describe(batch_size)} has nothing to "
                "repeat; give it a batch dim"
            )
        d, flat, sizes = 0, True, (_numel(batch_size),)
    else:
        d, flat, sizes = batch_dim(dim, batch_size, op, "dim"), False, batch_size
    if isinstance(repeats, torch.Tensor) and repeats.numel() != 1:
        if repeats.shape != (sizes[d],):
            raise ValueError(
                f"{op}(): repeats of shape {tuple(repeats.shape)} for dim {dim} of "
                f"size {sizes[d]} ({_describe(batch_size)}); give one per element"
            )
        total = output_size if output_size is not None else int(repeats.sum())
    else:
        total = sizes[d] * as_int(
            repeats.item() if isinstance(repeats, torch.Tensor) else repeats,
            op,
            "repeats",
        )
    new = tuple(sizes[:d]) + (total,) + tuple(sizes[d + 1 :])
    return d, flat, torch.Size(new), n


def flip_rule(batch_size, dims: Any, op: str):
    """flip/fliplr/flipud: ``dims`` as a tuple of batch dims (the batch size stays)."""
    return batch_dim_tuple(dims, batch_size, op, "dims")


def roll_rule(batch_size, shifts: Any, dims: Any, op: str):
    """roll: ``(shifts, dims, batch_dims)``; ``dims`` None rolls the flattened batch."""
    if dims is None:
        if not batch_size:
            raise ValueError(
                f"{op}(): a tensordict with {_describe(batch_size)} has no batch dims "
                "to roll"
            )
        return as_int(shifts, op, "shifts"), None, len(batch_size)
    dims = batch_dim_tuple(dims, batch_size, op, "dims")
    shifts = shape_arg((shifts,), op, "shifts")
    if len(shifts) != len(dims):
        raise ValueError(
            f"{op}(): {len(shifts)} shifts for {len(dims)} dims; give one per dim"
        )
    return shifts, dims, len(batch_size)


def rot90_rule(batch_size, k: Any, dims: Any, op: str):
    """rot90: ``(k, dims, new_batch_size)``."""
    k = as_int(k, op, "k")
    dims = batch_dim_tuple(dims, batch_size, op, "dims")
    if len(dims) != 2:
        raise ValueError(f"{op}(): dims must name two batch dims, got {dims}")
    new = list(batch_size)
    if k % 2:
        new[dims[0]], new[dims[1]] = new[dims[1]], new[dims[0]]
    return k, dims, torch.Size(new)


def atleast_rule(batch_size, ndim: int, op: str):
    """atleast_Nd: ``(new_batch_size, batch_dims, unchanged)``; size-one dims are added
    in front; ``unchanged`` (the op returns the tensordict itself, as 0.15.3) when it
    has ``ndim`` batch dims already."""
    missing = max(ndim - len(batch_size), 0)
    return torch.Size((1,) * missing + tuple(batch_size)), len(batch_size), not missing


def narrow_rule(batch_size, dim: Any, start: Any, length: Any, op: str):
    """narrow: ``(dim, start, new_batch_size)``; a negative start counts from the end."""
    d = batch_dim(dim, batch_size, op, "dim")
    size = batch_size[d]
    start, length = as_int(start, op, "start"), as_int(length, op, "length")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise _errors.DimOutOfRangeError(
            f"{op}(): start={start} and length={length} do not fit in dim {dim} of "
            f"size {size} ({_describe(batch_size)})"
        )
    return d, start, batch_size[:d] + (length,) + batch_size[d + 1 :]


def assign_inplace(td: TensorDictBase, result: TensorDictBase) -> TensorDictBase:
    """``inplace=True``: ``td`` takes ``result``'s entries, batch size and device
    (``to(device, inplace=True)``); ``td``."""
    td._replace_contents(result)
    td.batch_size = result.batch_size
    if result.device != td.device:
        td._device = result.device  # where the moved leaves are
    return td


def leaf_batch_dims(td: TensorDictBase) -> list[int]:
    """For each leaf (in :meth:`_leaves` order), the batch dims of its own level."""
    out: list[int] = []
    _leaf_batch_dims(td, out)
    return out


def _leaf_batch_dims(td, out: list) -> None:
    n = len(td.batch_size)
    for value in td._own_values():
        if isinstance(value, torch.Tensor):
            out.append(n)
        elif isinstance(value, _base.TensorDictBase):
            _leaf_batch_dims(value, out)
