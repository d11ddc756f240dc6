"""Reductions and scans over batch dims (spec/reduction.yaml): the ``dim`` rule
(``reduce_rule``), the forms a reduction takes (``dim='feature'``, ``reduce=True``, no
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
