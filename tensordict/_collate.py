"""Batches of samples: ``collate`` (a ``DataLoader``'s ``collate_fn``), ``group_by``
(split rows by the value of an entry) and ``unpad_sequence`` (the inverse of
``pad_sequence(..., return_mask=True)``). Exported from ``tensordict`` and
``tensordict.functional`` as in 0.15.3; see ``docs/lazy.md``.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Mapping, Sequence  # noqa: F401

import torch
from torch import Tensor

from tensordict._keys import NestedKey, unravel_key_to_tuple
from tensordict._lazy import LazyStackedTensorDict
from tensordict._lazy import maybe_dense_stack as _maybe_dense_stack
from tensordict.base import TensorDictBase, is_tensor_collection

__all__ = ["collate", "group_by", "unpad_sequence"]


# ----------------------------------------------------------------------------- collate


def collate(
    batch: Any,
    *,
    pad_keys: Mapping[NestedKey, float] | None = None,
    nested_keys: Sequence[NestedKey] | None = None,
    mask_key: NestedKey | None = None,
) -> Any:
    """Collate the samples ``batch`` (a list) into one batch, by the type of the
    first sample: tensordicts and tensorclasses are stacked (densely when their keys
    and shapes agree, lazily otherwise), tensors with ``torch.stack``, mappings and
    tuples entry by entry, anything else with ``default_collate``. Anything but a
    non-empty list is returned as it is.

    For variable-length entries of the tensordicts: ``pad_keys`` maps an entry to its
    padding value (padded along its first dim to the longest sample, then stacked),
    ``nested_keys`` stacks entries as jagged nested tensors, and ``mask_key`` (with
    ``pad_keys``) stores the masks of the padded entries under that key.

    >>> samples = [TensorDict(obs=torch.ones(n, 2)) for n in (1, 3)]
    >>> collate(samples, pad_keys={"obs": 0.0}, mask_key="mask")["mask", "obs"].tolist()
    [[True, False, False], [True, True, True]]
    """
    if type(batch) is not list or not batch:
        return batch
    first = batch[0]
    if is_tensor_collection(first):
        return _collate_tensordicts(batch, pad_keys, nested_keys, mask_key)
    if isinstance(first, Tensor):
        return torch.stack(batch)
    kwargs = dict(pad_keys=pad_keys, nested_keys=nested_keys, mask_key=mask_key)
    if isinstance(first, collections.abc.Mapping):
        return {key: collate([s[key] for s in batch], **kwargs) for key in first}
    if isinstance(first, tuple):
        columns = [collate(list(column), **kwargs) for column in zip(*batch)]
        if hasattr(first, "_fields"):  # a namedtuple keeps its type
            return type(first)(*columns)
        return tuple(columns)
    from torch.utils.data import default_collate  # torch.utils.data is slow to import

    return default_collate(batch)


def _collate_tensordicts(batch, pad_keys, nested_keys, mask_key):
    if not pad_keys and not nested_keys:
        return _maybe_dense_stack(batch)
    pad_keys = {unravel_key_to_tuple(k): v for k, v in (pad_keys or {}).items()}
    nested = [unravel_key_to_tuple(k) for k in (nested_keys or ())]
    special = list(pad_keys) + nested
    rest = [sample.exclude(*special) for sample in batch]
    out = _maybe_dense_stack(rest)
    masks = {}
    for key, value in pad_keys.items():
        leaves = [_entry(sample, key) for sample in batch]
        padded = torch.nn.utils.rnn.pad_sequence(
            leaves, batch_first=True, padding_value=value
        )
        out.set(key, padded)
        lengths = torch.tensor([leaf.shape[0] for leaf in leaves], device=padded.device)
        masks[key] = (
            torch.arange(padded.shape[1], device=padded.device) < lengths[:, None]
        )
    for key in nested:
        leaves = [_entry(sample, key) for sample in batch]
        out.set(key, torch.nested.as_nested_tensor(leaves, layout=torch.jagged))
    if mask_key is not None and masks:
        prefix = unravel_key_to_tuple(mask_key)
        for key, mask in masks.items():
            out.set(prefix + key, mask)
    return out


def _entry(sample, key):
    value = sample.get(key)
    if not isinstance(value, Tensor):
        raise TypeError(
            f"collate: the entry {key!r} of a sample is a {type(value).__name__}, not "
            f"a tensor; pad_keys and nested_keys name tensor entries"
        )
    return value


# ----------------------------------------------------------------------------- group_by


def group_by(tensordict, key: NestedKey):
    """Split the rows of ``tensordict`` (along its first batch dim) by the value of
    the entry ``key``; returns ``(values, groups)``: the sorted unique values (a
    tensor, or a list for a non-tensor entry) and one tensordict per value holding
    its rows in their original order.

    >>> td = TensorDict(k=torch.tensor([2, 1, 2]), x=torch.arange(3.0), batch_size=[3])
    >>> values, groups = group_by(td, "k")
    >>> values.tolist(), [g["x"].tolist() for g in groups]
    ([1, 2], [[1.0], [0.0, 2.0]])
    """
    if not tensordict.batch_dims:
        raise ValueError(
            "group_by groups the rows along the first batch dimension of the "
            "tensordict, which has none."
        )
    if unravel_key_to_tuple(key) not in [
        unravel_key_to_tuple(k) for k in tensordict.keys(True)
    ]:
        raise KeyError(f"group_by: the tensordict has no entry {key!r}.")
    value = tensordict.get(key)
    if isinstance(value, Tensor):
        rows = value.reshape(value.shape[0], -1) if value.dim() > 1 else value
        dim = 0 if value.dim() > 1 else None
        values, inverse = torch.unique(rows, sorted=True, return_inverse=True, dim=dim)
        if value.dim() > 1:
            values = values.reshape(-1, *value.shape[1:])
        order = torch.sort(inverse, stable=True).indices
        counts = torch.bincount(inverse, minlength=len(values)).tolist()
    else:
        if is_tensor_collection(value) and not getattr(value, "_is_non_tensor", False):
            raise TypeError(
                f"group_by: the entry {key!r} is a tensordict; group by one of its "
                f"tensor or non-tensor entries instead"
            )
        items = value.tolist() if hasattr(value, "tolist") else list(value)
        items = [tuple(i) if isinstance(i, list) else i for i in items]
        try:
            values = sorted(set(items))
        except TypeError as err:
            raise TypeError(
                f"group_by: the values of the entry {key!r} cannot be hashed and "
                f"sorted ({err})"
            ) from None
        index = {v: i for i, v in enumerate(values)}
        inverse = torch.tensor([index[i] for i in items])
        order = torch.sort(inverse, stable=True).indices
        counts = torch.bincount(inverse, minlength=len(values)).tolist()
    gathered = tensordict[order.to(_device_of(tensordict))]
    return values, tuple(gathered.split(counts, 0))


def _device_of(td):
    return td.device if td.device is not None else "cpu"


# ----------------------------------------------------------------------------- unpad


def unpad_sequence(
    padded: TensorDictBase,
    mask: TensorDictBase | Tensor | None = None,
    *,
    pad_dim: int = 0,
) -> LazyStackedTensorDict:
    """Split a batch padded by ``pad_sequence(..., return_mask=True)`` back into its
    samples: each row keeps, in every entry, the positions its mask marks along
    ``pad_dim`` (of the sample). ``mask`` is a tensordict of per-entry masks, a
    boolean ``[len(padded), max_len]`` tensor for every entry, or ``None``: the
    ``"masks"`` entry of ``padded`` (dropped from the result). Returns a lazy stack
    of the samples, whose entries are views of ``padded``.

    >>> seqs = [TensorDict(obs=torch.ones(n, 2)) for n in (1, 3)]
    >>> out = unpad_sequence(pad_sequence(seqs, return_mask=True))
    >>> [s["obs"].shape[0] for s in out.tensordicts]
    [1, 3]
    """
    if mask is None:
        if "masks" not in padded.keys():
            raise KeyError(
                "unpad_sequence: no mask given and the tensordict has no 'masks' "
                "entry (pad it with pad_sequence(..., return_mask=True))"
            )
        mask = padded.get("masks")
        padded = padded.exclude("masks")
    samples = []
    for row in range(padded.shape[0]):
        sample = padded[row]
        if isinstance(mask, Tensor):
            keep = _run(mask[row], row)
            sample = _narrow_all(sample, pad_dim, keep)
        else:
            sample = _narrow_by_masks(sample, mask[row], pad_dim, row)
        samples.append(sample)
    sizes = {tuple(sample.batch_size) for sample in samples}
    if len(sizes) > 1:
        raise NotImplementedError(
            f"unpad_sequence: the samples have different batch sizes "
            f"{sorted(sizes)} (pad_dim={pad_dim} is a batch dim), and a lazy stack of "
            f"members of different batch sizes is not supported here (0.15.3 gives one "
            f"with a -1 batch dim; see docs/compatibility.md): take the samples one by "
            f"one with padded[i][..., :length], or pad a feature dim instead"
        )
    return LazyStackedTensorDict(*samples, stack_dim=0)


def _run(mask: Tensor, row: int) -> tuple[int, int]:
    """The (start, length) of the one run of True in ``mask`` (1-d)."""
    if mask.dim() != 1:
        mask = mask.reshape(mask.shape[0], -1).any(-1)
    where = mask.nonzero().flatten().tolist()
    if not where:
        return 0, 0
    start, stop = where[0], where[-1] + 1
    if stop - start != len(where):
        raise ValueError(
            f"unpad_sequence: the mask of row {row} is not one contiguous run of "
            f"valid positions"
        )
    return start, stop - start


def _narrow_all(sample, pad_dim: int, keep) -> TensorDictBase:
    start, length = keep
    if pad_dim < sample.batch_dims:
        return sample[(slice(None),) * pad_dim + (slice(start, start + length),)]
    return sample.apply(lambda x: x.narrow(pad_dim, start, length))


def _narrow_by_masks(sample, masks, pad_dim: int, row: int):
    keep_batch = None
    out = {}
    for key in sample.keys(True, True):
        leaf = sample.get(key)
        if not isinstance(leaf, Tensor):
            continue
        mask = masks.get(key, None)
        if mask is None:
            out[key] = leaf
            continue
        start, length = _run(mask if mask.dim() <= 1 else mask.flatten(1).any(-1), row)
        if pad_dim < sample.batch_dims:
            keep_batch = (start, length)
        out[key] = leaf.narrow(pad_dim, start, length)
    if keep_batch is not None:
        sample = _narrow_all(sample, pad_dim, keep_batch)
        return sample
    result = sample.clone(False)
    for key, value in out.items():
        result.set(key, value)
    return result
