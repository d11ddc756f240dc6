"""Runtime helpers for the generated ops in ``tensordict/_generated/`` (and nothing else).

They hold the few decisions every generated op shares, so that the generated code
reads as plain steps: align the operands, try one ``torch._foreach_*`` call, fall back
to a per-leaf loop where foreach rejects the leaves.
"""

from __future__ import annotations

import builtins
import numbers
import operator
from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base

# set_lazy_legacy(True): a stacking or batch-shape op whose spec entry says
# ``lazy: true`` returns a lazy stack / lazy view when ``lazy_legacy()`` is true.
from tensordict.utils import lazy_legacy  # noqa: F401  (the generated code calls it)

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from tensordict.base import TensorDictBase

    # Names the generated signatures use (see TYPE_NAMES in codegen/model.py).
    TensorCollection: TypeAlias = TensorDictBase
    CompatibleType: TypeAlias = Any

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
    out.foreach_arg = value if isinstance(value, _NUMBER_TYPES) else out
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
    args = [arg.foreach_arg if type(arg) is Repeated else arg for arg in args]
    try:
        fn(leaves, *args, **kwargs)
    except TypeError:
        return False
    return True


def write_into(td: TensorDictBase, out: Any, new: list, op: str) -> Any:
    """Copy ``new`` (aligned with ``td``'s leaves) into the leaves of ``out``; ``out``."""
    targets = td._operand_leaves(out, op)
    if targets:
        torch._foreach_copy_(targets, new)
    return out


# ======================================================================================
# Batch dims: the helpers of the batch_shape and reduction families (spec/shape.yaml,
# spec/reduction.yaml).
#
# A shape op calls one rule helper (``*_rule``) once per call, before the leaves are
# touched. It checks the user's dims or shape against the batch size (dims count batch
# dims only; negative dims count from the last batch dim), raises an error that names
# the op, the argument and the batch size, and returns the normalised arguments and the
# new batch size. The op then applies one per-leaf expression and rebuilds once.
# ======================================================================================

_SEQUENCES = (list, tuple, torch.Size)


def _as_int(value: Any, op: str, what: str) -> int:
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


def batch_dim(
    dim: Any, batch_size: torch.Size, op: str, what: str = "dim", *, extra: int = 0
) -> int:
    """``dim`` as an index >= 0 into the batch dims (a negative dim counts from the
    last one). ``extra`` widens the range: ``unsqueeze`` may insert after the last."""
    n = len(batch_size) + extra
    d = _as_int(dim, op, what)
    if not -n <= d < n:
        where = f"in [{-n}, {n - 1}]" if n else "impossible"
        raise IndexError(
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
        raise ValueError(
            f"{op}(): {what}={dims!r} names the same batch dim more than once "
            f"({_describe(batch_size)})"
        )
    return out


def shape_arg(args: tuple, op: str, what: str = "shape") -> tuple[int, ...]:
    """The shape forms users pass: ``(2, 6)`` as ``op(2, 6)``, ``op((2, 6))``,
    ``op([2, 6])`` or ``op(torch.Size([2, 6]))``."""
    if len(args) == 1 and isinstance(args[0], _SEQUENCES):
        args = tuple(args[0])
    return tuple(_as_int(a, op, what) for a in args)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def infer_shape(shape: tuple[int, ...], batch_size: torch.Size, op: str) -> torch.Size:
    """``shape`` (one ``-1`` allowed) as the new batch size for the same elements."""
    numel = _numel(batch_size)
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
    """reshape: ``(new_batch_size, batch_dims)``; ``reshape(-1)``, ``reshape(2, 6)``,
    ``reshape((2, 6))``, ``reshape(shape=...)`` or ``reshape(size=...)``."""
    shape = shape_arg(_positional(args, kwargs, ("shape", "size"), op), op)
    return infer_shape(shape, batch_size, op), len(batch_size)


def view_rule(
    batch_size, shape: tuple, size: Any, new_batch_size: Any, td: Any, op: str
):
    """view: ``(new_batch_size, dtype, batch_dims)``; ``dtype`` is None but for the
    dtype form ``view(torch.float16)``, which keeps the batch size (a leaf without a
    feature dim refuses a dtype of another size, which would rescale a batch dim).
    ``size=`` and ``batch_size=`` give the shape as a keyword."""
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        if size is not None or new_batch_size is not None:
            raise TypeError(f"{op}(): a dtype view takes no size or batch_size")
        dtype = shape[0]
        for x, n in zip(td._leaves(), leaf_batch_dims(td)):
            if x.element_size() != dtype.itemsize and x.ndim <= n:
                raise RuntimeError(
                    f"{op}({dtype}): a leaf of shape {list(x.shape)} and dtype "
                    f"{x.dtype} has no feature dim, and a dtype of another size "
                    f"rescales the last dim, a batch dim of its tensordict "
                    f"({_describe(x.shape[:n])})"
                )
        return batch_size, dtype, len(batch_size)
    given = {"size": size, "batch_size": new_batch_size}
    kwargs = {k: v for k, v in given.items() if v is not None}
    shape = shape_arg(_positional(shape, kwargs, ("size", "batch_size"), op), op)
    return infer_shape(shape, batch_size, op), None, len(batch_size)


def permute_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """permute: ``(dims, positions, new_batch_size)``; ``permute(1, 0)``,
    ``permute((1, 0))`` or ``permute(dims=[1, 0])``. A leaf is
    ``x.movedim(dims, positions)``: its feature dims stay where they are."""
    order = shape_arg(_positional(args, kwargs, ("dims",), op), op, "dims")
    n = len(batch_size)
    out = tuple(batch_dim(d, batch_size, op, "dims") for d in order)
    if sorted(out) != list(range(n)):
        raise ValueError(
            f"{op}(): dims {list(order)} is not a permutation of the batch dims of a "
            f"tensordict with {_describe(batch_size)}"
        )
    return out, tuple(range(n)), torch.Size([batch_size[d] for d in out])


def transpose_rule(batch_size, dim0: Any, dim1: Any, op: str):
    """transpose/swapdims: ``(dim0, dim1, new_batch_size)``."""
    d0 = batch_dim(dim0, batch_size, op, "dim0")
    d1 = batch_dim(dim1, batch_size, op, "dim1")
    new = list(batch_size)
    new[d0], new[d1] = new[d1], new[d0]
    return d0, d1, torch.Size(new)


def movedim_rule(batch_size, source: Any, destination: Any, op: str):
    """movedim/moveaxis: ``(source, destination, new_batch_size)``."""
    src = batch_dim_tuple(source, batch_size, op, "source")
    dst = batch_dim_tuple(destination, batch_size, op, "destination")
    if len(src) != len(dst):
        raise ValueError(
            f"{op}(): source {source!r} and destination {destination!r} must name "
            "as many dims"
        )
    order = [None] * len(batch_size)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(len(batch_size)) if d not in src)
    order = [next(rest) if o is None else o for o in order]
    return src, dst, torch.Size([batch_size[d] for d in order])


def squeeze_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """squeeze: ``(dims, new_batch_size)``: the batch dims of size one among those
    named (``squeeze(0)``, ``squeeze((0, 2))``, ``squeeze(dim=0)``; all of them when
    none is), as ``torch.squeeze`` does."""
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
    return dims, new


def unsqueeze_rule(batch_size, args: tuple, kwargs: dict, op: str):
    """unsqueeze: ``(dim, new_batch_size)``; ``unsqueeze(0)`` or ``unsqueeze(dim=0)``;
    dim may be one past the last batch dim (-1: after the last batch dim)."""
    args = _positional(args, kwargs, ("dim",), op)
    if len(args) != 1:
        raise TypeError(f"{op}() takes one dim, got {len(args)} arguments")
    d = batch_dim(args[0], batch_size, op, "dim", extra=1)
    return d, batch_size[:d] + (1,) + batch_size[d:]


def flatten_rule(batch_size, start_dim: Any, end_dim: Any, op: str):
    """flatten: ``(start_dim, end_dim, new_batch_size)``; defaults: every batch dim."""
    if not batch_size:
        raise ValueError(
            f"{op}(): a tensordict with {_describe(batch_size)} has no "
            "batch dims to flatten"
        )
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
        total = sizes[d] * _as_int(
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
        return _as_int(shifts, op, "shifts"), None, len(batch_size)
    dims = batch_dim_tuple(dims, batch_size, op, "dims")
    shifts = shape_arg((shifts,), op, "shifts")
    if len(shifts) != len(dims):
        raise ValueError(
            f"{op}(): {len(shifts)} shifts for {len(dims)} dims; give one per dim"
        )
    return shifts, dims, len(batch_size)


def rot90_rule(batch_size, k: Any, dims: Any, op: str):
    """rot90: ``(k, dims, new_batch_size)``."""
    k = _as_int(k, op, "k")
    dims = batch_dim_tuple(dims, batch_size, op, "dims")
    if len(dims) != 2:
        raise ValueError(f"{op}(): dims must name two batch dims, got {dims}")
    new = list(batch_size)
    if k % 2:
        new[dims[0]], new[dims[1]] = new[dims[1]], new[dims[0]]
    return k, dims, torch.Size(new)


def atleast_rule(batch_size, ndim: int, op: str):
    """atleast_Nd: ``(new_batch_size, batch_dims)``; size-one dims are added in front."""
    missing = max(ndim - len(batch_size), 0)
    return torch.Size((1,) * missing + tuple(batch_size)), len(batch_size)


def narrow_rule(batch_size, dim: Any, start: Any, length: Any, op: str):
    """narrow: ``(dim, start, new_batch_size)``; a negative start counts from the end."""
    d = batch_dim(dim, batch_size, op, "dim")
    size = batch_size[d]
    start, length = _as_int(start, op, "start"), _as_int(length, op, "length")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise IndexError(
            f"{op}(): start={start} and length={length} do not fit in dim {dim} of "
            f"size {size} ({_describe(batch_size)})"
        )
    return d, start, batch_size[:d] + (length,) + batch_size[d + 1 :]


def assign_inplace(td: TensorDictBase, result: TensorDictBase) -> TensorDictBase:
    """``inplace=True``: ``td`` takes ``result``'s entries and batch size; ``td``."""
    td._replace_contents(result)
    td.batch_size = result.batch_size
    return td


# --------------------------------------------------------------------------------------
# Reductions.
# --------------------------------------------------------------------------------------


def reduce_rule(
    batch_size: torch.Size,
    dim: Any,
    keepdim: Any,
    op: str,
    *,
    one: bool = False,
    no_dim: str = "each_leaf",
    prefix: tuple = (),
):
    """A reduction's ``dim`` and ``keepdim``: ``(dim, keepdim, new_batch_size)``.

    ``dim`` comes back as None (reduce every dim of every leaf), ``"feature"`` (reduce
    the feature dims of every leaf; the batch size stays), or batch dims: an int, or a
    tuple of ints unless ``one`` (the torch function takes a single dim). With
    ``no_dim="batch"``, no dim means every batch dim. ``prefix``: leading dims the op
    puts in front of its result (``quantile`` with a 1-d ``q``). ``NO_DEFAULT`` (the
    signatures' default) reads as None for ``dim`` and False for ``keepdim``.
    """
    keepdim = bool(keepdim)
    prefix = tuple(prefix)
    if isinstance(dim, str):
        if dim != "feature":
            raise ValueError(
                f"{op}(): dim must be an int, a tuple of ints, None or 'feature', "
                f"got {dim!r}"
            )
        if keepdim:
            raise TypeError(f"{op}(): dim='feature' is incompatible with keepdim=True")
        return dim, False, torch.Size(prefix + tuple(batch_size)) if prefix else None
    if (
        dim is None
        or dim is _base.NO_DEFAULT
        or (isinstance(dim, _SEQUENCES) and not len(dim))
    ):
        if no_dim != "batch":
            return None, keepdim, None
        if not batch_size:
            raise ValueError(
                f"{op}(): a tensordict with {_describe(batch_size)} has no batch dims "
                "to reduce; pass dim='feature' to reduce the feature dims"
            )
        dim = tuple(range(len(batch_size)))
    if isinstance(dim, _SEQUENCES):
        dims = batch_dim_tuple(dim, batch_size, op, "dim")
        if one and len(dims) > 1:
            raise TypeError(
                f"{op}(): reduces one batch dim at a time (an int, as torch.{op} "
                f"takes), got dim={dim!r}"
            )
        dim = dims[0] if one else dims
    else:
        dims = (batch_dim(dim, batch_size, op, "dim"),)
        dim = dims[0]
    if keepdim:
        new = tuple(1 if d in dims else s for d, s in enumerate(batch_size))
    else:
        new = tuple(s for d, s in enumerate(batch_size) if d not in dims)
    return dim, keepdim, torch.Size(prefix + new)


def quantile_shape(q: Any) -> tuple:
    """The leading dims ``torch.quantile`` puts in front of its result."""
    return tuple(q.shape) if isinstance(q, torch.Tensor) else ()


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


def flatten_features(td: TensorDictBase, leaves: list) -> list:
    """``dim='feature'``: each leaf with its feature dims (those past its own level's
    batch dims) flattened into one last dim (of size one when it has none)."""
    return [
        x.flatten(n) if n < x.ndim else x.unsqueeze(-1)
        for x, n in zip(leaves, leaf_batch_dims(td))
    ]


def leaves_as_one(leaves: list, batch_size: torch.Size, dim: Any, op: str):
    """``reduce=True``: the leaves as one tensor whose last dim holds every value
    to reduce together. ``dim`` None: every value of every leaf (1-d); ``"feature"``:
    the batch dims, then every leaf's features concatenated; batch dims (an int or a
    tuple): the other batch dims, then those dims and every feature together."""
    if not leaves:
        raise ValueError(
            f"{op}(reduce=True) reduces the tensor leaves together, and this "
            "tensordict has no tensor leaves"
        )
    if dim is None:
        return torch.cat([x.reshape(-1) for x in leaves])
    n = len(batch_size)
    x = torch.cat([x.reshape(batch_size + (-1,)) for x in leaves], -1)
    if dim == "feature":
        return x
    dims = dim if isinstance(dim, tuple) else (dim,)
    x = x.movedim(dims, tuple(range(n - len(dims), n)))
    return x.reshape(x.shape[: n - len(dims)] + (-1,))


def rebuild_reduced(
    td: TensorDictBase, leaves: list, new: list, keepdim: bool, prefix: tuple = ()
) -> TensorDictBase:
    """A tensordict holding ``new`` (every leaf reduced over all its dims): every
    level's batch size becomes ``prefix`` (with ``keepdim``, followed by as many
    ones as the level had batch dims, and the leaves keep their dims as ones)."""
    prefix = tuple(prefix)
    if keepdim:
        new = [y.reshape(prefix + (1,) * x.ndim) for x, y in zip(leaves, new)]
    return _rebuild_levels(td, iter(new), prefix, keepdim)


def _rebuild_levels(td, it, prefix: tuple, keepdim: bool):
    size = prefix + (1,) * len(td.batch_size) if keepdim else prefix
    out = td._new_empty(batch_size=torch.Size(size))
    for key, value in td._own_items():
        if isinstance(value, torch.Tensor):
            value = next(it)
        elif isinstance(value, _base.TensorDictBase):
            value = _rebuild_levels(value, it, prefix, keepdim)
        out._set_str(key, value, inplace=False, validated=True)
    return out


def unzip(pairs: list) -> tuple[list, list]:
    """``[(values, indices), ...]`` (torch.max, torch.cummax...) as two lists."""
    return [p[0] for p in pairs], [p[1] for p in pairs]


def transform_keys(td: TensorDictBase, fn: Callable) -> TensorDictBase:
    """``key_transform``: the same tensordict with every key ``k`` (at every level)
    renamed ``fn(k)``."""
    out = td._new_empty()
    for key, value in td._own_items():
        if isinstance(value, _base.TensorDictBase):
            value = transform_keys(value, fn)
        out._set_str(fn(key), value, inplace=False, validated=True)
    return out


# ======================================================================================
# Indexing, device and stacking families (spec/indexing.yaml, spec/device.yaml,
# spec/stacking.yaml).
#
# Their rules follow the batch rules' convention above: called once per call, before the
# leaves are touched, with the batch size (``*_rule``) or the device
# (``*_device_rule``) of the tensordict, the user's arguments and the op's name; they
# check the arguments (an error names the op, the argument and what was expected) and
# return what the entry's rule ``defines``. The stacking rules get the inputs instead.
# ======================================================================================


def _stand_in(batch_size: torch.Size) -> torch.Tensor:
    """A zero-stride tensor of shape ``batch_size``: torch's shape logic applied to it
    gives the batch sizes an op produces, whatever the leaves."""
    return torch.empty((), dtype=torch.uint8).expand(batch_size)


# ---- indexing -------------------------------------------------------------------------


def split_rule(batch_size, split_size: Any, dim: Any, op: str):
    """split: ``(split_size, dim, batch_sizes)``, one batch size per piece."""
    d = batch_dim(dim, batch_size, op)
    size = batch_size[d]
    if isinstance(split_size, _SEQUENCES):
        sizes = [_as_int(s, op, "split_size") for s in split_size]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise ValueError(
                f"{op}(): split sizes {sizes} must be >= 0 and sum to {size}, the size "
                f"of batch dim {d} ({_describe(batch_size)})"
            )
        split_size = sizes
    else:
        split_size = _as_int(split_size, op, "split_size")
        if split_size <= 0 and not (split_size == 0 and size == 0):
            raise ValueError(
                f"{op}(): split_size must be > 0, got {split_size} "
                f"({_describe(batch_size)})"
            )
    if size and (isinstance(split_size, list) or split_size > 0):
        if isinstance(split_size, list):
            sizes = split_size
        else:
            sizes = [split_size] * (size // split_size)
            if size % split_size:
                sizes.append(size % split_size)
        head, tail = batch_size[:d], batch_size[d + 1 :]
        return split_size, d, [head + (s,) + tail for s in sizes]
    parts = torch.split(_stand_in(batch_size), split_size, d)  # an empty dim
    return split_size, d, [p.shape for p in parts]


def chunk_rule(batch_size, chunks: Any, dim: Any, op: str):
    """chunk: ``(chunks, dim, batch_sizes)``; torch.chunk's rule for the pieces."""
    d = batch_dim(dim, batch_size, op)
    chunks = _as_int(chunks, op, "chunks")
    if chunks <= 0:
        raise ValueError(f"{op}(): chunks must be > 0, got {chunks}")
    parts = torch.chunk(_stand_in(batch_size), chunks, d)
    return chunks, d, [p.shape for p in parts]


def tensor_split_rule(batch_size, indices_or_sections: Any, dim: Any, op: str):
    """tensor_split: ``(indices_or_sections, dim, batch_sizes)``."""
    d = batch_dim(dim, batch_size, op)
    if isinstance(indices_or_sections, torch.Tensor):
        if indices_or_sections.ndim > 1 or indices_or_sections.is_floating_point():
            raise TypeError(
                f"{op}(): indices_or_sections must be an int, a sequence of ints or a "
                f"0-d or 1-d integer tensor, got a tensor of shape "
                f"{list(indices_or_sections.shape)} and dtype {indices_or_sections.dtype}"
            )
        value = indices_or_sections.tolist()
        indices_or_sections = value
    if isinstance(indices_or_sections, _SEQUENCES):
        indices_or_sections = [
            _as_int(i, op, "indices_or_sections") for i in indices_or_sections
        ]
    else:
        indices_or_sections = _as_int(indices_or_sections, op, "indices_or_sections")
        if indices_or_sections <= 0:
            raise ValueError(
                f"{op}(): the number of sections must be > 0, got {indices_or_sections}"
            )
    parts = torch.tensor_split(_stand_in(batch_size), indices_or_sections, d)
    return indices_or_sections, d, [p.shape for p in parts]


def unbind_rule(batch_size, dim: Any, op: str):
    """unbind: ``(dim, batch_sizes)``: ``batch_size[dim]`` results without dim ``dim``."""
    d = batch_dim(dim, batch_size, op)
    return d, [batch_size[:d] + batch_size[d + 1 :]] * batch_size[d]


def rebuild_each(
    td: TensorDictBase,
    rebuild: Callable,
    new: list,
    batch_sizes: list,
    dim: int | None = None,
) -> tuple:
    """``result: tensordicts``: ``new`` holds, per leaf of ``td``, one tensor per
    result; one tensordict per result, ``batch_sizes[i]`` being the batch size of
    result ``i`` (every nested level gets it followed by its own extra dims). ``dim``:
    the batch dim the results cut ``td`` along, in order (split, unbind...), so that
    the non-tensor stacks ``td`` holds are cut along it too."""
    if new:
        dense = _dense_class()
        if type(td) is dense:
            try:
                return tuple(
                    _rebuild_dense_each(
                        td, iter(new), batch_sizes, len(td._batch_size), dense
                    )
                )
            except _NotDense:
                pass
        results = tuple(
            rebuild(list(leaves), batch_size=bs)
            for leaves, bs in zip(zip(*new), batch_sizes)
        )
    else:
        results = tuple(rebuild([], batch_size=bs) for bs in batch_sizes)
    if dim is not None:  # general path: nested containers, maybe non-tensor stacks
        from tensordict.tensorclass import split_non_tensor_entries

        split_non_tensor_entries(td, results, dim)
    return results


# Fast paths for dense TensorDicts (the common case): one walk of the structure builds
# every result at once, instead of one rebuild per result. Anything else (a lazy stack
# nested in a dense tensordict, ...) takes the general path, through the primitives.
_DENSE = None


class _NotDense(Exception):
    pass


def _dense_class():
    global _DENSE
    if _DENSE is None:
        from tensordict._td import TensorDict

        _DENSE = TensorDict
    return _DENSE


def _rebuild_dense_each(td, it, batch_sizes, root_dims: int, dense) -> list:
    storages = [{} for _ in batch_sizes]
    for key, value in td._tensordict.items():
        if isinstance(value, torch.Tensor):
            for storage, part in zip(storages, next(it)):
                storage[key] = part
        elif type(value) is dense:
            subs = _rebuild_dense_each(value, it, batch_sizes, root_dims, dense)
            for storage, sub in zip(storages, subs):
                storage[key] = sub
        elif isinstance(value, _base.TensorDictBase):
            raise _NotDense
        else:
            for storage in storages:
                storage[key] = value
    extra = td._batch_size[root_dims:]
    sizes = [bs + extra for bs in batch_sizes] if extra else batch_sizes
    device = td._device
    new_unsafe = dense._new_unsafe
    return [new_unsafe(s, bs, device, None) for s, bs in zip(storages, sizes)]


def gather_rule(batch_size, dim: Any, index: Any, op: str):
    """gather: ``(dim, index, new_batch_size)``; the result's batch size is the shape
    of ``index``, which has one dim per batch dim."""
    d = batch_dim(dim, batch_size, op)
    if not isinstance(index, torch.Tensor) or index.dtype != torch.int64:
        what = (
            f"a tensor of dtype {index.dtype}"
            if isinstance(index, torch.Tensor)
            else type(index).__name__
        )
        raise TypeError(f"{op}(): index must be an int64 tensor, got {what}")
    if index.ndim != len(batch_size):
        raise IndexError(
            f"{op}(): index has {index.ndim} dims (shape {list(index.shape)}) but the "
            f"tensordict has {_describe(batch_size)}; the index needs one dim per "
            f"batch dim"
        )
    for i, (n, m) in enumerate(zip(index.shape, batch_size)):
        if i != d and n > m:
            raise IndexError(
                f"{op}(): index of shape {list(index.shape)} is larger than the "
                f"tensordict's {_describe(batch_size)} at dim {i} (only dim {d}, the "
                f"gathered one, may be larger)"
            )
    return d, index, index.shape


def expand_index(index: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``index`` (shaped like the batch dims) expanded over the feature dims of ``x``."""
    extra = x.ndim - index.ndim
    if not extra:
        return index
    return index.reshape(index.shape + (1,) * extra).expand(
        index.shape + x.shape[index.ndim :]
    )


def mask_rule(batch_size, mask: Any, op: str, what: str = "mask"):
    """masked_fill, where: ``mask``, a boolean tensor shaped like the leading batch
    dims (all of them or fewer)."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        got = (
            f"a tensor of dtype {mask.dtype}"
            if isinstance(mask, torch.Tensor)
            else type(mask).__name__
        )
        raise TypeError(f"{op}(): {what} must be a boolean tensor, got {got}")
    if mask.shape != batch_size[: mask.ndim] or mask.ndim > len(batch_size):
        raise RuntimeError(
            f"{op}(): {what} of shape {list(mask.shape)} does not match the "
            f"tensordict's {_describe(batch_size)}: its shape must be the batch size "
            f"or its first dims"
        )
    return mask


def expand_mask(mask: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A batch mask expanded over the feature dims of ``x`` (aligned on the left,
    unlike broadcasting)."""
    extra = x.ndim - mask.ndim
    if not extra:
        return mask
    return mask.reshape(mask.shape + (1,) * extra).expand(x.shape)


def where_rule(batch_size, condition: Any, op: str):
    """where: ``condition``, a boolean tensor shaped like the leading batch dims."""
    return mask_rule(batch_size, condition, op, "condition")


def masked_select_rule(batch_size, mask: Any, op: str):
    """masked_select: ``(mask, new_batch_size)``: as many items as ``mask`` has true
    elements, followed by the batch dims the mask does not cover."""
    mask = mask_rule(batch_size, mask, op)
    if mask.ndim == 0:
        raise RuntimeError(
            f"{op}(): mask must have at least one dim (the tensordict has "
            f"{_describe(batch_size)})"
        )
    return mask, torch.Size((int(mask.sum()),)) + batch_size[mask.ndim :]


# ---- device ---------------------------------------------------------------------------


def _as_device(device: Any, op: str) -> torch.device:
    if isinstance(device, torch.device):
        parsed = device
    elif isinstance(device, int) and not isinstance(device, bool):
        parsed = torch.device("cuda", device)
    elif isinstance(device, str):
        parsed = torch.device(device)
    else:
        raise TypeError(f"{op}(): expected a device, got {device!r}")
    if parsed.type == "cuda" and parsed.index is None and torch.cuda.is_available():
        parsed = torch.device("cuda", torch.cuda.current_device())
    return parsed


_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking"})


def to_device_rule(current, args: tuple, kwargs: dict, op: str):
    """to: ``(device, dtype, non_blocking, new_device, unchanged)`` from the forms
    ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)`` (its device
    and dtype), ``to(other_tensordict)`` (its device) and the keywords ``device``,
    ``dtype``, ``non_blocking``. ``unchanged`` when nothing would change."""
    unknown = set(kwargs) - _TO_KEYWORDS
    if unknown:
        raise TypeError(
            f"{op}(): unexpected keyword argument(s) {sorted(unknown)} "
            f"(it takes {sorted(_TO_KEYWORDS)})"
        )
    device = kwargs.get("device")
    dtype = kwargs.get("dtype")
    non_blocking = bool(kwargs.get("non_blocking", False))
    rest = list(args)
    if rest:
        first = rest.pop(0)
        if isinstance(first, torch.dtype):
            dtype = first
        elif isinstance(first, torch.Tensor):
            device, dtype = first.device, first.dtype
        elif _base.is_tensor_collection(first):
            device = first.device
        elif isinstance(first, (str, int, torch.device)) and not isinstance(
            first, bool
        ):
            device = first
            if rest and isinstance(rest[0], torch.dtype):
                dtype = rest.pop(0)
        else:
            raise TypeError(
                f"{op}(): cannot move or cast a tensordict to {first!r}: expected a "
                "device, a dtype, a tensor or a tensordict"
            )
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"{op}(): unexpected positional argument(s) {rest!r}")
    if device is not None:
        device = _as_device(device, op)
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"{op}(): dtype must be a torch.dtype, got {dtype!r}")
    unchanged = dtype is None and (device is None or device == current)
    new_device = _base.NO_DEFAULT if device is None else device
    return device, dtype, non_blocking, new_device, unchanged


def cuda_device_rule(current, device: Any, kwargs: dict, op: str):
    """cuda: as :func:`to_device_rule` for ``device`` (an index, a device or None for
    the current CUDA device)."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int) and not isinstance(device, bool):
        device = torch.device("cuda", device)
    parsed = _as_device(device, op)
    if parsed.type != "cuda":
        raise ValueError(f"{op}(): {device!r} is not a CUDA device")
    return to_device_rule(current, (parsed,), kwargs, op)


def new_device_rule(current, device: Any, op: str):
    """new_zeros & co.: ``(device, new_device)``: ``device`` for the new leaves (None:
    each leaf's own) and the result's device (NO_DEFAULT: the input's)."""
    if device is _base.NO_DEFAULT or device is None:
        return None, _base.NO_DEFAULT
    parsed = _as_device(device, op)
    return parsed, parsed


def new_rule(batch_size, size: Any, op: str):
    """new_zeros & co.: ``(new_batch_size, batch_dims)``: the new batch size, from
    ``*size`` or ``size`` (ints, a list, a tuple or a torch.Size), and the number of
    batch dims of the input (where each leaf's feature dims start)."""
    if not isinstance(size, tuple):
        size = (size,)
    shape = shape_arg(size, op, "size")
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}(): sizes must be >= 0, got {list(shape)}")
    return torch.Size(shape), len(batch_size)


def new_tensor_leaf(x, data, dtype, device, requires_grad, pin_memory):
    """``x.new_tensor(data, ...)`` for one leaf: a copy of ``data`` with the dtype and
    device of ``x`` unless given (a tensor is copied without torch's warning)."""
    if isinstance(data, torch.Tensor):
        out = data.detach().to(
            device=x.device if device is None else device,
            dtype=x.dtype if dtype is None else dtype,
            copy=True,
        )
        if pin_memory:
            out = out.pin_memory()
        return out.requires_grad_(requires_grad) if requires_grad else out
    return x.new_tensor(
        data,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        pin_memory=bool(pin_memory),
    )


def new_tensor_rule(batch_size, data: Any, op: str) -> torch.Size:
    """new_tensor: ``data`` is a tensor collection (its leaves are matched key by key);
    the result has its batch size."""
    if not _base.is_tensor_collection(data):
        raise TypeError(
            f"{op}(): data must be a tensor collection with the same keys, got "
            f"{type(data).__name__}; to fill every leaf with one value use new_full, "
            "or apply(lambda x: x.new_tensor(data))"
        )
    return data.batch_size


def zero_grad_leaf(x: torch.Tensor, set_to_none: bool) -> None:
    grad = x.grad
    if grad is None:
        return
    if set_to_none:
        x.grad = None
    else:
        if grad.grad_fn is not None:
            grad.detach_()
        else:
            grad.requires_grad_(False)
        grad.zero_()


def plain_tensor(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a plain ``torch.Tensor`` (a subclass, e.g. a memory-mapped tensor, is
    viewed as one over the same storage)."""
    return x if type(x) is torch.Tensor else x.as_subclass(torch.Tensor)


def leaves_at(td: TensorDictBase, key: Any, op: str) -> list:
    """``target: key``: the tensor at ``key``, or every leaf of the tensordict there
    (a missing key raises KeyError naming it; non-tensor data has no leaves)."""
    value = td.get(key)
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, _base.TensorDictBase):
        return value._leaves()
    return []


def tolist_leaf(x: torch.Tensor, convert_tensors: Any) -> Any:
    """tolist: one leaf as nested lists (``convert_tensors=True``), a numpy array
    (``"numpy"``) or the tensor itself; indexed along the batch dims afterwards."""
    if convert_tensors == "numpy":
        return x.detach().cpu().numpy()
    if convert_tensors:
        return x.tolist()
    return x


class _Node:
    """A tensordict level in :func:`nested_lists_result`: its entries and batch dims."""

    __slots__ = ("items", "batch_dims")

    def __init__(self, items: dict, batch_dims: int):
        self.items = items
        self.batch_dims = batch_dims


class _Leaf:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _tree(td, it, root_dims: int) -> _Node:
    items = {}
    for key, value in td._own_items():
        if isinstance(value, torch.Tensor):
            items[key] = _Leaf(next(it))
        elif isinstance(value, _base.TensorDictBase):
            items[key] = _tree(value, it, root_dims)
        else:
            items[key] = value
    return _Node(items, len(td.batch_size) - root_dims)


def _index_node(node: _Node, i: int) -> _Node:
    items = {}
    for key, value in node.items.items():
        if isinstance(value, _Leaf):
            value = _Leaf(value.value[i])
        elif isinstance(value, _Node):
            value = _index_node(value, i)
        items[key] = value
    return _Node(items, node.batch_dims)


def _node_lists(node: _Node, sizes: tuple, tolist_first: bool, leaf_sizes) -> Any:
    if sizes:
        return [
            _node_lists(_index_node(node, i), sizes[1:], tolist_first, leaf_sizes)
            for i in range(sizes[0])
        ]
    out = {}
    for key, value in node.items.items():
        if isinstance(value, _Leaf):
            value = value.value
        elif isinstance(value, _Node):
            extra = leaf_sizes(value) if tolist_first else ()
            value = _node_lists(value, extra, tolist_first, leaf_sizes)
        out[key] = value
    return out


def nested_dict_result(td: TensorDictBase, new: list) -> dict:
    """``result: nested_dict``: the new leaves as a nested dict shaped like ``td``
    (non-tensor entries as they are)."""
    return _node_lists(_tree(td, iter(new), len(td.batch_size)), (), False, None)


def nested_lists_result(
    td: TensorDictBase,
    new: list,
    convert_nodes: bool,
    tolist_first: bool,
    as_linked_list: bool,
) -> Any:
    """``result: nested_lists(...)`` (tolist): nested lists along the batch dims, each
    item a dict of the leaves there (a tensordict with ``convert_nodes=False``). With
    ``tolist_first``, nested tensordicts with more batch dims than the root are
    nested lists along those dims too."""
    if not convert_nodes:
        return _td_lists(td, len(td.batch_size))
    sizes = tuple(td.batch_size)

    def leaf_sizes(node: _Node) -> tuple:
        first = next(
            (v.value for v in node.items.values() if isinstance(v, _Leaf)), None
        )
        if first is None or not node.batch_dims:
            return ()
        shape = first.shape if hasattr(first, "shape") else _list_shape(first)
        return tuple(shape[: node.batch_dims])

    root = _tree(td, iter(new), len(sizes))
    return _node_lists(root, sizes, tolist_first, leaf_sizes)


def _list_shape(value) -> tuple:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _td_lists(td, dims: int):
    if not dims:
        return td
    return [_td_lists(item, dims - 1) for item in td.unbind(0)]


# ---- stacking -------------------------------------------------------------------------


def _stack_inputs(input: Any, op: str) -> list:
    if _base.is_tensor_collection(input) or isinstance(input, torch.Tensor):
        raise TypeError(
            f"{op}(): expected a sequence of tensordicts, got one "
            f"{type(input).__name__}"
        )
    tds = list(input)
    if not tds:
        raise ValueError(f"{op}(): expected a non-empty sequence of tensordicts")
    for i, td in enumerate(tds):
        if not _base.is_tensor_collection(td):
            raise TypeError(
                f"{op}(): item {i} is a {type(td).__name__}, not a tensordict; every "
                "item must be a tensor collection"
            )
    return tds


def stack_rule(input: Any, dim: Any, op: str):
    """stack: ``(input, dim, new_batch_size)``; every tensordict has the same batch
    size, and ``dim`` may also be one past the last batch dim."""
    tds = _stack_inputs(input, op)
    bs = tds[0].batch_size
    for i, td in enumerate(tds):
        if td.batch_size != bs:
            raise RuntimeError(
                f"{op}(): every tensordict must have the same batch_size; tensordict "
                f"{i} has {list(td.batch_size)} but tensordict 0 has {list(bs)}"
            )
    d = batch_dim(dim, bs, op, extra=1)
    return tds, d, bs[:d] + (len(tds),) + bs[d:]


def cat_rule(input: Any, dim: Any, op: str):
    """cat: ``(input, dim, new_batch_size)``; the batch sizes agree but at ``dim``."""
    tds = _stack_inputs(input, op)
    bs = tds[0].batch_size
    d = batch_dim(dim, bs, op)
    total = 0
    for i, td in enumerate(tds):
        other = td.batch_size
        if (
            len(other) != len(bs)
            or other[:d] != bs[:d]
            or other[d + 1 :] != bs[d + 1 :]
        ):
            raise RuntimeError(
                f"{op}(): the batch sizes must agree but at dim {d}; tensordict {i} "
                f"has {list(other)} but tensordict 0 has {list(bs)}"
            )
        total += other[d]
    return tds, d, bs[:d] + (total,) + bs[d + 1 :]


def stacked_leaves(tds: list, leaves: list, op: str) -> list:
    """For each leaf of ``tds[0]`` (``leaves``), the matching leaf of every
    tensordict; a key that one of them lacks (or has alone) raises KeyError naming it
    and the tensordict."""
    if len(tds) == 1:
        return [(x,) for x in leaves]
    dense = _dense_class()
    if all(type(td) is dense for td in tds):
        out: list = []
        if _dense_columns([td._tensordict for td in tds], out, dense):
            return out  # else a key differs: the general path names it
    first = tds[0]
    columns = [leaves]
    for i, td in enumerate(tds[1:], 1):
        try:
            columns.append(first._operand_leaves(td, op))
        except (KeyError, TypeError) as err:
            message = str(err.args[0] if err.args else err)
            message = message.replace(f"{op}: ", "", 1)
            message = message.replace("the other operand", f"tensordict {i}")
            message = message.replace("this tensordict", "tensordict 0")
            raise type(err)(
                f"{op}(): the tensordicts must have the same keys: {message}"
            ) from None
    return list(zip(*columns))


def _dense_columns(storages: list, out: list, dense) -> bool:
    """The leaves of dense tensordicts with the same keys, matched key by key (in the
    first one's order); False when a key or an entry's kind differs."""
    first = storages[0]
    n = len(first)
    for storage in storages:
        if len(storage) != n:
            return False
    for key, value in first.items():
        try:
            values = [storage[key] for storage in storages]
        except KeyError:
            return False
        if isinstance(value, torch.Tensor):
            for v in values:
                if not isinstance(v, torch.Tensor):
                    return False
            out.append(values)
        elif type(value) is dense:
            for v in values:
                if type(v) is not dense:
                    return False
            if not _dense_columns([v._tensordict for v in values], out, dense):
                return False
        elif isinstance(value, _base.TensorDictBase):
            return False
        else:
            for v in values:
                if isinstance(v, (torch.Tensor, _base.TensorDictBase)):
                    return False
    return True


def _has_non_tensor(td, dense) -> bool:
    """Whether a dense tensordict holds non-tensor data at any depth."""
    for value in td._tensordict.values():
        if isinstance(value, torch.Tensor):
            continue
        if type(value) is dense:
            if _has_non_tensor(value, dense):
                return True
            continue
        return True
    return False


def lazy_view(td: Any, op: Callable) -> Any:
    """Under set_lazy_legacy(True): ``op`` (a batch-shape op) as a lazy view of ``td``
    whose writes go through to it."""
    from tensordict._lazy_view import LazyViewTensorDict

    return LazyViewTensorDict(td, op)


def lazy_stack(input: Any, dim: int, *, out: Any = None) -> Any:
    from tensordict._lazy import lazy_stack as _lazy_stack  # _lazy imports this module

    return _lazy_stack(input, dim, out=out)


# ---- non-tensor entries of stacked tensordicts (tensordict/tensorclass.py) -------------
_NON_TENSOR_ENTRIES = None


def stack_non_tensor(input: list, out: Any, dim: int, op: str) -> Any:
    """``out``, rebuilt from ``input[0]`` by a stacking op ``op`` along ``dim``, with
    each non-tensor entry made the stack of the inputs' entries: one value where they
    are all the same, a ``NonTensorStack`` where they differ."""
    global _NON_TENSOR_ENTRIES
    first = input[0]
    dense = _dense_class()
    if type(first) is dense and not _has_non_tensor(first, dense):
        return out  # nothing to merge
    if _NON_TENSOR_ENTRIES is None:
        from tensordict.tensorclass import stack_non_tensor_entries

        _NON_TENSOR_ENTRIES = stack_non_tensor_entries
    return _NON_TENSOR_ENTRIES(input, out, dim, op)


# ---- attributes family (spec/attributes.yaml) -----------------------------------------


def common_dtype(new: list) -> torch.dtype | None:
    """The dtype every leaf has; ``None`` when they differ or there is no leaf."""
    dtypes = set(new)
    return dtypes.pop() if len(dtypes) == 1 else None


def present_result(td: TensorDictBase, new: list) -> TensorDictBase | None:
    """The per-leaf values that are not ``None`` (``td.grad``), in a tensordict shaped
    like ``td``; nested tensordicts left empty are dropped; ``None`` when none is."""
    if all(v is None for v in new):
        return None
    values = iter(new)
    return td.apply(lambda x: next(values))


def scalar_result(td: TensorDictBase, new: list) -> TensorDictBase:
    """One scalar int64 tensor per leaf (``data_ptr``), keyed like ``td``, batch size
    ``[]`` at every level, on the cpu. A lazy stack gives one entry per stacked
    tensordict, keyed by its index (``"0"``, ``"1"``, ...): its leaves are theirs."""
    values = iter(new)
    out = _scalars(td, values)
    if next(values, None) is not None:
        raise ValueError(f"scalar_result(): more values than leaves ({len(new)})")
    return out


def _scalars(td: TensorDictBase, values) -> TensorDictBase:
    from tensordict._td import TensorDict

    out = TensorDict({}, batch_size=[], device="cpu")
    if getattr(td, "_per_member_leaves", False):  # a lazy stack: member by member
        for i, member in enumerate(td.tensordicts):
            out.set(str(i), _scalars(member, values))
        return out
    storage = getattr(td, "_tensordict", None)
    if storage is not None and not isinstance(storage, dict):  # a tensorclass
        return _scalars(storage, values)
    for key, value in td._own_items():
        if isinstance(value, torch.Tensor):
            out.set(key, torch.tensor(next(values), dtype=torch.int64))
        elif _base._is_node(value):
            out.set(key, _scalars(value, values))
    return out


def leaf_keys(td: TensorDictBase) -> list:
    """The nested key of every tensor leaf, in the order of ``td._leaves()`` where no
    lazy stack is inside (a lazy stack's leaves are its members', one per member)."""
    return list(td.keys(True, True))


def total(leaves: list, new: list, count_duplicates: bool) -> int:
    """The sum of the per-leaf counts; a tensor stored under several keys counts once
    unless ``count_duplicates``."""
    if count_duplicates:
        return sum(new)
    seen: dict[int, int] = {}
    for x, count in zip(leaves, new):
        seen[id(x)] = count
    return sum(seen.values())


def join_leaves(
    td: TensorDictBase,
    leaves: list,
    fn: Callable,
    dim: int,
    sorted: Any,
    out: Any,
    op: str,
) -> torch.Tensor:
    """``fn(leaves, dim, out=out)`` (``torch.stack`` / ``torch.cat``) over the leaves,
    in insertion order, sorted by key (``sorted=True``) or in the order of the keys
    ``sorted`` lists."""
    if sorted is True:
        keys = builtins.sorted(
            leaf_keys(td), key=lambda k: (k,) if isinstance(k, str) else tuple(k)
        )
        leaves = [td.get(k) for k in keys]
    elif sorted:
        leaves = [td.get(k) for k in sorted]
    if not leaves:
        raise RuntimeError(f"{op}(): the tensordict holds no tensor to join")
    if out is not None:
        return fn(leaves, dim, out=out)
    return fn(leaves, dim)
