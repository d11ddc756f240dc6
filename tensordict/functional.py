"""Functions that build or combine tensordicts (the functional forms of the API)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from tensordict._compat import _is_leaf_nontensor
from tensordict._conversions import _padded_values, _values_of
from tensordict._keys import NestedKey, unravel_key_to_tuple
from tensordict._lazy import dense_stack_tds as _dense_stack_tds
from tensordict._lazy import lazy_stack as _lazy_stack
from tensordict._lazy import maybe_dense_stack as _maybe_dense_stack
from tensordict._registry import container_class
from tensordict._td import TensorDict
from tensordict.base import TensorDictBase


def from_dict(
    d,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    names=None,
):
    """Build a :class:`~tensordict.TensorDict` from a (nested) dict.

    Without ``batch_size`` the batch size is empty, unless ``auto_batch_size=True``
    (or ``batch_dims``) asks for the longest one every entry shares.

    >>> td = from_dict({"a": torch.zeros(3, 4), "b": {"c": torch.ones(3)}})
    >>> td.batch_size  # none unless asked for
    torch.Size([])
    >>> from_dict({"a": torch.zeros(3, 4), "b": {"c": torch.ones(3)}}, auto_batch_size=True).batch_size
    torch.Size([3])
    """
    return TensorDict.from_dict(
        d,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        names=names,
    )


def make_tensordict(
    input_dict: dict | None = None,
    batch_size=None,
    device=None,
    auto_batch_size: bool | None = None,
    **kwargs: Any,
):
    """Build a tensordict from a dict and/or keyword entries; without ``batch_size``
    the batch size is inferred (the longest one every entry shares). A tensordict given
    is read as its nested dict of entries, so that nested batch sizes are inferred too.

    >>> make_tensordict(a=torch.zeros(3, 4), b=torch.zeros(3)).batch_size
    torch.Size([3])
    >>> make_tensordict({"a": torch.zeros(3, 4)}, batch_size=[]).batch_size
    torch.Size([])
    """
    if input_dict is None:
        entries = {}
    elif isinstance(input_dict, TensorDictBase):
        entries = input_dict.to_dict()
    else:
        entries = dict(input_dict)
    entries.update(kwargs)
    if batch_size is None and auto_batch_size is not False:
        return TensorDict.from_dict(entries, auto_batch_size=True, device=device)
    return TensorDict(entries, batch_size=batch_size, device=device)


def fromkeys(keys: Sequence[NestedKey], value: Any = 0):
    """A tensordict with every key of ``keys`` set to ``value`` (batch size empty).

    >>> td = fromkeys(["a", ("b", "c")], 0)
    >>> td["b", "c"]
    tensor(0)
    """
    return TensorDict.fromkeys(keys, value)


# --------------------------------------------------------------------------------------
# stacking, padding and merging (lazy stacks: tensordict/_lazy.py)
# --------------------------------------------------------------------------------------


def lazy_stack(input, dim: int = 0, *, out=None, **kwargs):
    """Stack tensordicts lazily along ``dim``: a
    :class:`~tensordict.LazyStackedTensorDict` that keeps them (always lazy, whatever
    :func:`~tensordict.lazy_legacy` says). Tensors are stacked with ``torch.stack``.

    >>> tds = [TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(5))]
    >>> s = lazy_stack(tds)          # shapes differ: only a lazy stack can hold them
    >>> s.batch_size, s[1] is tds[1]
    (torch.Size([2]), True)
    """
    return _lazy_stack(input, dim, out=out, **kwargs)


def maybe_dense_stack(input, dim: int = 0, *, out=None, **kwargs):
    """Stack densely (a :class:`~tensordict.TensorDict`) when the tensordicts share
    their keys and shapes, lazily otherwise.

    >>> same = [TensorDict(a=torch.zeros(3)), TensorDict(a=torch.ones(3))]
    >>> type(maybe_dense_stack(same)).__name__
    'TensorDict'
    >>> type(maybe_dense_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(4))])).__name__
    'LazyStackedTensorDict'
    """
    return _maybe_dense_stack(input, dim, out=out, **kwargs)


def dense_stack_tds(td_list, dim: int | None = None):
    """Stack a list of tensordicts, or the members of a lazy stack (along its stack
    dim unless ``dim`` is given), into one dense :class:`~tensordict.TensorDict`.

    >>> s = lazy_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.ones(3))])
    >>> d = dense_stack_tds(s)
    >>> type(d).__name__, d["a"].shape
    ('TensorDict', torch.Size([2, 3]))
    """
    return _dense_stack_tds(td_list, dim)


def merge_tensordicts(*tensordicts, callback_exist=None):
    """One tensordict holding the entries of all ``tensordicts`` (nested keys merged
    key by key). Its batch size is the longest one they all share. Where several hold
    the same key, the first one's entry is kept, unless ``callback_exist`` (a callable,
    or a dict from key to callable) says otherwise for a tensor that every input
    holds: it is called as ``callback(*values)`` (one value per input, in order) and
    its result is stored, as in 0.15.3.

    >>> a = TensorDict(x=torch.zeros(2), sub=TensorDict(y=torch.zeros(2)))
    >>> b = TensorDict(z=torch.ones(2), sub=TensorDict(w=torch.ones(2)))
    >>> sorted(merge_tensordicts(a, b).keys(True, True), key=str)
    [('sub', 'w'), ('sub', 'y'), 'x', 'z']
    """
    if len(tensordicts) < 2:
        raise ValueError("merge_tensordicts needs at least two tensordicts")
    common = []
    for dims in zip(*(td.batch_size for td in tensordicts)):
        if any(d != dims[0] for d in dims):
            break
        common.append(dims[0])
    out = TensorDict(batch_size=common, device=tensordicts[0].device)
    # every leaf (and non-tensor entry) with the values the inputs hold for it, in
    # the order keys are first met
    values: dict = {}
    for td in tensordicts:
        for key, value in td.items(True, True, is_leaf=_is_leaf_nontensor):
            values.setdefault(unravel_key_to_tuple(key), []).append(value)
    for path, found in values.items():
        callback = callback_exist
        if isinstance(callback, dict):
            key = path[0] if len(path) == 1 else path
            callback = callback.get(key, callback.get(path))
        # as 0.15.3: callback(*values) for a tensor every input holds; else the first
        if (
            callback is not None
            and len(found) == len(tensordicts)
            and isinstance(found[0], torch.Tensor)
        ):
            out.set(path, callback(*found))
        else:
            out.set(path, found[0])
    return out


def pad(tensordict, pad_size, value: float = 0.0, inplace: bool = False, safe: bool = True):
    """Pad every tensor along the batch dims: :meth:`TensorDictBase.pad`. ``pad_size``
    lists ``(before, after)`` pairs for the leading batch dims, first dim first:
    ``pad(td, [1, 0, 0, 2])`` adds one row before dim 0 and two after dim 1; the new
    positions hold ``value``. ``inplace=True`` pads ``tensordict`` itself.

    >>> td = TensorDict(a=torch.ones(2, 3), batch_size=[2])
    >>> padded = pad(td, [1, 1])   # one row before and one after, along batch dim 0
    >>> padded.batch_size, padded["a"][:, 0].tolist()
    (torch.Size([4]), [0.0, 1.0, 1.0, 0.0])
    """
    return tensordict.pad(pad_size, value=value, inplace=inplace, safe=safe)


def pad_sequence(
    list_of_tensordicts,
    pad_dim: int = 0,
    padding_value=0.0,
    out=None,
    return_mask=False,
    padding_side: str = "right",
):
    """Stack tensordicts whose tensors differ in length along ``pad_dim`` (a dim of
    their tensors, counted from the first batch dim), padding each with
    ``padding_value`` (a number, or a dict from key to number) on ``padding_side``
    (``"right"`` or ``"left"``). The result has batch size
    ``[len(list_of_tensordicts), *padded batch size]``. With ``return_mask`` (``True``
    for the key ``"masks"``, or a key), a boolean mask of the real values is stored
    for every tensor under that key.

    >>> tds = [TensorDict(a=torch.ones(2)), TensorDict(a=torch.ones(4))]
    >>> out = pad_sequence(tds, return_mask=True)
    >>> out["a"].tolist()
    [[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]
    """
    tds = list(list_of_tensordicts)
    if not tds:
        raise ValueError("pad_sequence needs at least one tensordict")
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    first = tds[0]
    bdims = first.batch_dims
    if pad_dim < 0:
        pad_dim += bdims
    if pad_dim < 0:
        raise ValueError(f"pad_dim {pad_dim} is out of range")
    member_batch = list(first.batch_size)
    if pad_dim < bdims:
        member_batch[pad_dim] = max(td.batch_size[pad_dim] for td in tds)
    result = TensorDict(batch_size=[len(tds), *member_batch], device=first.device)
    mask_root = None
    if return_mask:
        mask_root = ("masks",) if return_mask is True else unravel_key_to_tuple(return_mask)
    for key in first.keys(True, True):
        path = unravel_key_to_tuple(key)
        values = [td.get(path) for td in tds]
        if isinstance(padding_value, dict):
            fill = padding_value.get(key, padding_value.get(path, 0.0))
        else:
            fill = padding_value
        length = max(v.shape[pad_dim] for v in values)
        padded, masks = [], []
        for v in values:
            extra = length - v.shape[pad_dim]
            widths = [0, 0] * (v.ndim - pad_dim - 1)
            widths += [extra, 0] if padding_side == "left" else [0, extra]
            try:
                padded.append(torch.nn.functional.pad(v, widths, value=fill))
            except RuntimeError as err:
                raise RuntimeError(f"pad_sequence failed for key {key!r}: {err}") from None
            if mask_root is not None:
                mask_dims = max(pad_dim + 1, bdims)
                mask = torch.zeros(
                    padded[-1].shape[:mask_dims], dtype=torch.bool, device=v.device
                )
                keep = [slice(None)] * mask_dims
                keep[pad_dim] = (
                    slice(length - v.shape[pad_dim], None)
                    if padding_side == "left"
                    else slice(0, v.shape[pad_dim])
                )
                mask[tuple(keep)] = True
                masks.append(mask)
        try:
            stacked = torch.stack(padded, 0)
        except RuntimeError as err:
            raise RuntimeError(f"pad_sequence failed for key {key!r}: {err}") from None
        result.set(path, stacked)
        if mask_root is not None:
            result.set(mask_root + path, torch.stack(masks, 0))
    _pad_non_tensor_sequence(tds, result, pad_dim, member_batch, padding_side)
    if out is not None:
        out.update(result, inplace=True)
        return out
    if getattr(first, "_is_tensorclass", False) and not first._is_non_tensor:
        return type(first)._from_td(result)  # as 0.15.3: the tensorclass itself
    return result


def _pad_non_tensor_sequence(tds, result, pad_dim, member_batch, padding_side):
    """The non-tensor entries of ``tds`` into ``result`` (``pad_sequence``): one value
    per element of the stacked batch, ``None`` where an element is padding."""
    first = tds[0]
    for key, _ in first.items(True, True, is_leaf=_is_leaf_nontensor):
        path = unravel_key_to_tuple(key)
        stored = [td._get_path(path) for td in tds]
        if isinstance(stored[0], torch.Tensor):
            continue
        parent = path[:-1]
        rows = []
        for td, value in zip(tds, stored):
            level = td._get_path(parent) if parent else td
            values = _values_of(value, level.batch_size)
            pairs = [(0, 0)] * values.ndim
            if pad_dim < values.ndim and pad_dim < len(member_batch):
                extra = member_batch[pad_dim] - values.shape[pad_dim]
                pairs[pad_dim] = (extra, 0) if padding_side == "left" else (0, extra)
            rows.append(_padded_values(values, pairs))
        stack = container_class("NonTensorStack")._from_array(
            np.stack(rows, 0), result.device
        )
        result.set(path, stack)


# batches of samples (tensordict/_collate.py), under 0.15.3's import path
from tensordict._collate import collate, group_by, unpad_sequence  # noqa: E402,F401
