"""Indexing, device and stacking families (spec/indexing.yaml, spec/device.yaml,
spec/stacking.yaml).

Their rules follow the batch rules' convention above: called once per call, before the
leaves are touched, with the batch size (``*_rule``) or the device
(``*_device_rule``) of the tensordict, the user's arguments and the op's name; they
check the arguments (an error names the op, the argument and what was expected) and
return what the entry's rule ``defines``. The stacking rules get the inputs instead.

This module: the indexing family (spec/indexing.yaml); ``device`` and ``stacking`` hold
the other two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base
from tensordict import _errors
from tensordict._registry import container_class
from tensordict._ops.batch_shape import _SEQUENCES, as_int, _describe, batch_dim
from tensordict._ops.names import dropped_names

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


def _stand_in(batch_size: torch.Size) -> torch.Tensor:
    """A zero-stride tensor of shape ``batch_size``: torch's shape logic applied to it
    gives the batch sizes an op produces, whatever the leaves."""
    return torch.empty((), dtype=torch.uint8).expand(batch_size)


def split_rule(batch_size, split_size: Any, dim: Any, op: str):
    """split: ``(split_size, dim, batch_sizes)``, one batch size per piece."""
    d = batch_dim(dim, batch_size, op)
    size = batch_size[d]
    if isinstance(split_size, _SEQUENCES):
        sizes = [as_int(s, op, "split_size") for s in split_size]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise _errors.SplitSizeError(
                f"{op}(): split sizes {sizes} must be >= 0 and sum to {size}, the size "
                f"of batch dim {d} ({_describe(batch_size)})"
            )
        split_size = sizes
    else:
        split_size = as_int(split_size, op, "split_size")
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
    chunks = as_int(chunks, op, "chunks")
    if chunks <= 0:
        raise ValueError(f"{op}(): chunks must be > 0, got {chunks}")
    size = batch_size[d]
    if size == 0:  # torch gives `chunks` empty pieces: its own rule, on a stand-in
        parts = torch.chunk(_stand_in(batch_size), chunks, d)
        return chunks, d, [p.shape for p in parts]
    # torch.chunk's rule, computed: pieces of ceil(size / chunks), the last one shorter
    step = -(-size // chunks)
    sizes = [step] * (size // step) + ([size % step] if size % step else [])
    head, tail = batch_size[:d], batch_size[d + 1 :]
    return chunks, d, [head + (s,) + tail for s in sizes]


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
            as_int(i, op, "indices_or_sections") for i in indices_or_sections
        ]
    else:
        indices_or_sections = as_int(indices_or_sections, op, "indices_or_sections")
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


def cut_by_index(td: TensorDictBase, dim: int, batch_sizes: list) -> tuple:
    """``result: tensordicts`` (split, chunk, tensor_split, unbind) of a tensordict
    holding lazy stacks: the pieces are read by indexing batch dim ``dim``, so each
    lazy stack inside keeps its stacked tensordicts, which may differ in shape (TorchRL's
    heterogeneous environments); ``batch_sizes``: the pieces' batch sizes, as the
    op's rule gives them (without ``dim`` for unbind)."""
    before = (slice(None),) * dim
    if batch_sizes and len(batch_sizes[0]) < len(td.batch_size):  # unbind
        return tuple(td[before + (i,)] for i in range(len(batch_sizes)))
    pieces, start = [], 0
    for size in batch_sizes:
        stop = start + size[dim]
        pieces.append(td[before + (slice(start, stop),)])
        start = stop
    return tuple(pieces)


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
    the non-tensor stacks ``td`` holds are cut along it too. The names of the batch
    dims stay with their dims (unbind drops ``dim``'s)."""
    names = getattr(td, "_names", None)
    if names is not None and batch_sizes:
        ndim = len(batch_sizes[0])
        names = names if ndim == len(names) else dropped_names(names, dim)
    if new:
        dense = dense_class()
        if type(td) is dense:
            try:
                return tuple(
                    _rebuild_dense_each(
                        td, iter(new), batch_sizes, len(td._batch_size), dense, names
                    )
                )
            except _NotDense:
                pass
        results = tuple(
            rebuild(list(leaves), batch_size=bs, names=names)
            for leaves, bs in zip(zip(*new), batch_sizes)
        )
    else:
        results = tuple(rebuild([], batch_size=bs, names=names) for bs in batch_sizes)
    if dim is not None:  # general path: nested containers, maybe non-tensor stacks
        container_class("NonTensorStack")._split_entries(td, results, dim)
    return results


# Fast paths for dense TensorDicts (the common case): one walk of the structure builds
# every result at once, instead of one rebuild per result. Anything else (a lazy stack
# nested in a dense tensordict, ...) takes the general path, through the primitives.
_DENSE = None


class _NotDense(Exception):
    pass


def dense_class() -> type:
    """``TensorDict`` (from the registry: this layer cannot import it), looked up once."""
    global _DENSE
    if _DENSE is None:
        _DENSE = container_class("TensorDict")
    return _DENSE


def _rebuild_dense_each(td, it, batch_sizes, root_dims: int, dense, names=None) -> list:
    storages = [{} for _ in batch_sizes]
    for key, value in td._tensordict.items():
        if type(value) is torch.Tensor:  # the common case first
            for storage, part in zip(storages, next(it)):
                storage[key] = part
        elif isinstance(value, torch.Tensor) and _base.is_unbatched(value):
            for storage in storages:  # no batch dims to cut: kept as it is
                storage[key] = value
        elif isinstance(value, torch.Tensor):
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
    new_unsafe = dense._from_storage
    return [new_unsafe(s, bs, device, names) for s, bs in zip(storages, sizes)]


def gather_rule(batch_size, dim: Any, index: Any, out: Any, inplace: bool, op: str):
    """gather: ``(dim, index, new_batch_size)``; the result's batch size is the shape
    of ``index``, which has one dim per batch dim. ``out`` and ``inplace=True`` do not
    go together (``ValueError``, as 0.15.3)."""
    if inplace and out is not None:
        raise ValueError(
            f"`out` and `inplace=True` are mutually exclusive in {op}: the result goes "
            f"either into `out` or into the tensordict itself"
        )
    if (
        inplace
        and isinstance(index, torch.Tensor)
        and index.ndim != len(batch_size)
    ):
        # 0.15.3's error type and phrase for this case
        raise NotImplementedError(
            f"{op}(inplace=True) requires index.ndim == self.batch_dims so the result "
            f"keeps the same number of batch dims; got index.ndim={index.ndim} and "
            f"batch_dims={len(batch_size)}. Use inplace=False instead."
        )
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
        raise _errors.MaskShapeError(
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
