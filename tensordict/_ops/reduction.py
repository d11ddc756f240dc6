"""Reductions and scans over batch dims (spec/reduction.yaml): the ``dim`` rule
(``reduce_rule``, ``reduce_one_rule``, ``reduce_batch_rule``), the forms a reduction takes (``dim='feature'``, ``reduce=True``, no
dim) and the results with indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base
from tensordict._ops.batch_shape import (
    _SEQUENCES,
    _describe,
    batch_dim,
    batch_dim_tuple,
    leaf_batch_dims,
)

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


def dims_given(dim: Any) -> bool:
    """Whether a reduction's ``dim`` names dims (``None``, ``NO_DEFAULT`` and ``()``
    mean no dim)."""
    return not (
        dim is None
        or dim is _base.NO_DEFAULT
        or (isinstance(dim, _SEQUENCES) and not len(dim))
    )


def _feature(batch_size: torch.Size, dim: str, keepdim: bool, op: str, prefix: tuple):
    """``dim="feature"``: the feature dims of every leaf; the batch size stays."""
    if dim != "feature":
        raise ValueError(
            f"{op}(): dim must be an int, a tuple of ints, None or 'feature', "
            f"got {dim!r}"
        )
    if keepdim:
        raise TypeError(f"{op}(): dim='feature' is incompatible with keepdim=True")
    return dim, False, torch.Size(prefix + tuple(batch_size)) if prefix else None


def _batch_dims(dim: Any, batch_size: torch.Size, op: str) -> tuple[int, ...]:
    if isinstance(dim, _SEQUENCES):
        return batch_dim_tuple(dim, batch_size, op, "dim")
    return (batch_dim(dim, batch_size, op, "dim"),)


def _reduced(batch_size: torch.Size, dims: tuple, keepdim: bool, prefix: tuple):
    """The batch size once ``dims`` are reduced (kept as ones with ``keepdim``)."""
    if keepdim:
        new = tuple(1 if d in dims else s for d, s in enumerate(batch_size))
    else:
        new = tuple(s for d, s in enumerate(batch_size) if d not in dims)
    return torch.Size(prefix + new)


def reduce_rule(
    batch_size: torch.Size, dim: Any, keepdim: Any, op: str, prefix: tuple = ()
):
    """A reduction's ``dim`` and ``keepdim``: ``(dim, keepdim, new_batch_size)``.

    ``dim`` comes back as None (no dim: every dim of every leaf), ``"feature"`` (the
    feature dims of every leaf; the batch size stays), or batch dims: an int, or a tuple
    of ints where one was given. ``prefix``: leading dims the op puts in front of its
    result (``quantile`` with a 1-d ``q``). ``NO_DEFAULT`` (the signatures' default)
    reads as None for ``dim`` and False for ``keepdim``.
    """
    keepdim, prefix = bool(keepdim), tuple(prefix)
    if isinstance(dim, str):
        return _feature(batch_size, dim, keepdim, op, prefix)
    if not dims_given(dim):
        return None, keepdim, None
    dims = _batch_dims(dim, batch_size, op)
    reduced = _reduced(batch_size, dims, keepdim, prefix)
    return (dims if isinstance(dim, _SEQUENCES) else dims[0]), keepdim, reduced


def reduce_one_rule(
    batch_size: torch.Size, dim: Any, keepdim: Any, op: str, prefix: tuple = ()
):
    """As :func:`reduce_rule` for a torch function taking a single dim (``prod``,
    ``max``, ``quantile``): a tuple of more than one dim raises ``TypeError``."""
    keepdim, prefix = bool(keepdim), tuple(prefix)
    if isinstance(dim, str):
        return _feature(batch_size, dim, keepdim, op, prefix)
    if not dims_given(dim):
        return None, keepdim, None
    dims = _batch_dims(dim, batch_size, op)
    if len(dims) > 1:
        raise TypeError(
            f"{op}(): reduces one batch dim at a time (an int, as torch.{op} "
            f"takes), got dim={dim!r}"
        )
    return dims[0], keepdim, _reduced(batch_size, dims, keepdim, prefix)


def reduce_batch_rule(
    batch_size: torch.Size, dim: Any, keepdim: Any, op: str, prefix: tuple = ()
):
    """As :func:`reduce_rule`, where no dim means every batch dim (``logsumexp``:
    the feature dims stay)."""
    if isinstance(dim, str) or dims_given(dim):
        return reduce_rule(batch_size, dim, keepdim, op, prefix)
    if not batch_size:
        raise ValueError(
            f"{op}(): a tensordict with {_describe(batch_size)} has no batch dims "
            "to reduce; pass dim='feature' to reduce the feature dims"
        )
    return reduce_rule(batch_size, tuple(range(len(batch_size))), keepdim, op, prefix)


def quantile_shape(q: Any) -> tuple:
    """The leading dims ``torch.quantile`` puts in front of its result."""
    return tuple(q.shape) if isinstance(q, torch.Tensor) else ()


def flatten_features(td: TensorDictBase, leaves: list) -> list:
    """``dim='feature'``: each leaf with its feature dims (those past its own level's
    batch dims) flattened into one last dim (of size one when it has none)."""
    return [
        x.flatten(n) if n < x.ndim else x.unsqueeze(-1)
        for x, n in zip(leaves, leaf_batch_dims(td))
    ]


def leaves_as_one(leaves: list, batch_size: torch.Size, dim: Any, op: str):
    """``reduce=True``: the leaves as one tensor. ``dim`` None: every value of every
    leaf (1-d); ``"feature"``: the batch dims, then every leaf's features concatenated
    (the op reduces its last dim); batch dims (an int or a tuple): the leaves
    concatenated along the first of them, which the op then reduces over ``dim`` as
    for one leaf, so that the feature dims stay (as 0.15.3: every leaf must have the
    same shape but along that dim)."""
    if not leaves:
        raise ValueError(
            f"{op}(reduce=True) reduces the tensor leaves together, and this "
            "tensordict has no tensor leaves"
        )
    if dim is None:
        return torch.cat([x.reshape(-1) for x in leaves])
    if dim == "feature":
        return torch.cat([x.reshape(batch_size + (-1,)) for x in leaves], -1)
    first = dim[0] if isinstance(dim, tuple) else dim
    try:
        return torch.cat(leaves, first)
    except RuntimeError:
        shapes = sorted({tuple(x.shape) for x in leaves})
        raise RuntimeError(
            f"{op}(reduce=True, dim={dim}): the leaves are concatenated along batch dim "
            f"{first} and reduced over dim, which needs every leaf to have the same shape "
            f"but along it; the leaves have shapes {[list(s) for s in shapes]} (use "
            f"dim='feature', or no dim, to reduce leaves of different shapes)"
        ) from None


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
            if not _base.is_unbatched(value):  # an UnbatchedTensor is kept as it is
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


def loss_result(
    td: TensorDictBase, new: list, size_average: Any, reduce: Any, reduction: str
) -> TensorDictBase:
    """``result: loss(size_average, reduce, reduction)``: the per-leaf losses ``new``
    as a tensordict. ``reduction="none"`` (or the legacy ``reduce=False``) keeps the
    leaves' shapes and ``td``'s batch size; ``"mean"`` and ``"sum"`` leave one scalar per
    leaf, every level with batch size ``[]``."""
    if size_average is not None or reduce is not None:  # torch's legacy arguments
        reduction = torch.nn._reduction.legacy_get_string(size_average, reduce, emit_warning=False)
    if reduction == "none":
        return td._leaves_and_rebuild()[1](new)
    return _rebuild_levels(td, iter(new), (), False)


# Leaves up to this many elements (all of them together) are reduced as one stacked
# tensor under torch.compile; past it the copy into the stack costs more than the graph
# nodes it saves.
STACKED_REDUCTION_MAX_NUMEL = 1 << 16


def reduce_leaves(reduce: Callable, leaves: list, dim: Any) -> list:
    """``[reduce(x, dim) for x in leaves]``; under ``torch.compile``, leaves of one
    shape, dtype and device (small ones) are stacked and reduced by one call.

    A backend that does not fuse (``eager``, ``aot_eager``) runs each graph node as its
    own dispatch: 50 per-leaf ``sum`` nodes cost more than one ``stack``, one ``sum``
    and the ``unbind`` views (``td.sum(0)`` of 50 [32, 2] leaves, compiled with
    ``aot_eager``: ~500 -> ~190 us a call). Eager keeps the per-leaf calls, which read
    each leaf once instead of copying it first. The stack is dim 0, so a batch dim
    ``d >= 0`` is ``d + 1`` in it (negative dims count from the end: unchanged).
    """
    if len(leaves) < 2 or not torch.compiler.is_compiling():
        return [reduce(x, dim) for x in leaves]
    first = leaves[0]
    for x in leaves:
        if (
            type(x) is not torch.Tensor
            or x.shape != first.shape
            or x.dtype != first.dtype
            or x.device != first.device
        ):
            return [reduce(x, dim) for x in leaves]
    if first.numel() * len(leaves) > STACKED_REDUCTION_MAX_NUMEL:
        return [reduce(x, dim) for x in leaves]
    if isinstance(dim, _SEQUENCES):
        shifted = tuple(d + 1 if d >= 0 else d for d in dim)
    else:
        shifted = dim + 1 if dim >= 0 else dim
    return list(reduce(torch.stack(leaves), shifted).unbind(0))
