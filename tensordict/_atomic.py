"""A failed call changes nothing: the snapshot-and-restore behind that guarantee.

``update``, ``update_``, ``set`` of a nested key, ``td[index] = value``, in-place
arithmetic with a tensordict, ``rename_key_``, ``select``/``exclude`` with
``inplace=True`` and ``lock_`` run inside :func:`unchanged_on_error`. If they raise, the
tensordict is put back as it was: the same keys at every level (nested tensordicts,
members of lazy stacks, the tensordicts inside tensorclasses), the same lock states and,
for the tensors the call was about to write in place, the same values.

The structure is saved as one shallow copy of each level's key -> entry dict (no tensor
is copied); tensor data is saved only for the tensors a call writes in place, and only
the part it writes (``tensor[index]``), so the cost is that of the write itself.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable

import torch
from torch import Tensor

from tensordict import _errors
from tensordict._tensorcollection import TensorCollection


class Snapshot:
    """The structure of a tensordict (and optionally tensor data) to restore."""

    __slots__ = ("_levels", "_locks", "_data")

    def __init__(self, td, structure: bool = True) -> None:
        self._levels: list = []  # (storage owner, its dict as it was)
        self._locks: list = []  # (container, is_locked as it was)
        self._data: list = []  # (tensor, index, saved values)
        # structure=False: only the lock flags (for a block that changes nothing else)
        _save(td, self, set(), structure)

    def save_data(self, tensor: Tensor) -> None:
        """Keep the values of ``tensor``, to write back."""
        self._data.append((tensor, None, tensor.detach().clone()))

    def save_at(self, td, index: Any) -> None:
        """Keep the values of ``td[index]``, to write back at ``index`` (a stack of
        non-tensor values writes in one step: nothing to keep)."""
        if not td._is_non_tensor:
            self._data.append((td, index, td._index(index).clone()))

    def restore(self) -> None:
        for owner, storage in self._levels:
            owner._tensordict = storage
        for container, locked in self._locks:
            object.__setattr__(container, "_is_locked", locked)
        for target, index, saved in reversed(self._data):
            if index is None:
                target.detach().copy_(saved)
            else:
                # only keys that existed are left (the structure is back): in place
                target._set_at_index(index, saved.select(*target.keys(), strict=False))


def _save(node, snap: Snapshot, seen: set, structure: bool = True) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    storage = getattr(node, "_tensordict", None)
    if type(storage) is dict:  # a dense level: its entries, its lock
        if structure:
            snap._levels.append((node, dict(storage)))
        snap._locks.append((node, node._is_locked))
        children: Iterable = storage.values()
    elif isinstance(storage, TensorCollection):  # a tensorclass: the tensordict inside
        children = (storage,)
    elif hasattr(node, "tensordicts"):  # a lazy stack: its members
        snap._locks.append((node, node._is_locked))
        children = node.tensordicts
    elif hasattr(node, "_source"):  # a view: what it writes into
        children = (node._source,)
    else:
        children = ()
    for child in children:
        if isinstance(child, TensorCollection) and not child._is_non_tensor:
            _save(child, snap, seen, structure)


@contextlib.contextmanager
def unchanged_on_error(td):
    """Run the block; if it raises, put ``td`` back as it was, then re-raise. Yields
    the :class:`Snapshot`, on which the block saves the tensor data it will write in
    place (:meth:`Snapshot.save_data`)."""
    snap = Snapshot(td)
    try:
        yield snap
    except BaseException:
        snap.restore()
        raise


def index_write_fails(td, index, value, batch_shape_at) -> bool:
    """For ``td[index] = value`` on a dense tensordict: raise now, before anything is
    written, the errors the write would raise (a bad index, a locked level that would
    get a new key, a value that does not broadcast to the entry at ``index``, a
    tensordict written into a tensor); return True when the write may still fail in a
    way not checked here (the caller then takes a snapshot). ``batch_shape_at(bs,
    index)`` is the batch shape ``index`` leaves of ``bs`` (raising IndexError)."""
    indexed = _indexed_shape(td.batch_size, index, batch_shape_at)  # bad: raises
    if not isinstance(value, (dict, TensorCollection)):
        # a number (or a one-element tensor) fits every entry
        if isinstance(value, (int, float, bool)):
            return False
        return not (isinstance(value, Tensor) and value.dim() == 0)
    if isinstance(value, TensorCollection) and (
        value._is_non_tensor or type(getattr(value, "_tensordict", None)) is not dict
    ):
        return True  # lazy stacks, tensorclasses, non-tensor stacks: not checked here
    if isinstance(value, TensorCollection) and not broadcasts_to(
        tuple(value.batch_size), tuple(indexed)
    ):  # a tensordict of another batch size: 0.15.3's words
        raise _errors.index_batch_mismatch(
            indexed, td.batch_size, index, value.batch_size
        )
    return _check_level(td, value, indexed, len(td.batch_size))


def _check_level(td, value, indexed, ndim) -> bool:
    storage = td._tensordict
    items = (
        value._tensordict.items()
        if isinstance(value, TensorCollection)
        else (value.items())
    )
    for key, sub in items:
        existing = storage.get(key)
        if type(sub) is Tensor and type(existing) is Tensor:  # the common case
            target = indexed + existing.shape[ndim:]
            if sub.shape != target:
                _check_fits(key, sub, target)
            continue
        if type(key) is not str:
            return True  # nested tuple keys: not checked here
        if existing is None:
            if td._is_locked:
                raise _errors.locked(f"set the key {key!r}")
            if isinstance(sub, (dict, TensorCollection)):
                return True  # a new nested level: preallocated, not checked here
            if isinstance(sub, Tensor):  # preallocated as indexed + its feature dims
                _check_fits(key, sub, indexed + sub.shape[len(indexed) :])
            elif not isinstance(sub, (int, float, bool)):
                return True
            continue
        if isinstance(existing, Tensor):
            if isinstance(sub, TensorCollection):
                raise TypeError(
                    f"cannot write a tensordict into the tensor at key {key!r}"
                )
            if isinstance(sub, Tensor):
                _check_fits(key, sub, indexed + existing.shape[ndim:])
            elif not isinstance(sub, (int, float, bool)):
                return True  # lists, arrays: converted by torch, not checked here
            continue
        if type(getattr(existing, "_tensordict", None)) is dict and isinstance(
            sub, (dict, TensorCollection)
        ):
            if isinstance(sub, TensorCollection) and (
                sub._is_non_tensor
                or type(getattr(sub, "_tensordict", None)) is not dict
            ):
                return True
            if _check_level(existing, sub, indexed, ndim):
                return True
            continue
        return True  # non-tensor data and other containers: not checked here
    return False


def _check_fits(key, value: Tensor, target) -> None:
    if not broadcasts_to(value.shape, target):
        raise _errors.InplaceWriteError(
            f"cannot write the value for key {key!r} at the index: its shape "
            f"{tuple(value.shape)} does not broadcast to the shape of the entry "
            f"there, {tuple(target)}"
        )


def broadcasts_to(shape, target) -> bool:
    """True when a tensor of ``shape`` broadcasts to ``target`` (as a write of it
    into a tensor of that shape needs); plain Python, no tensor is made."""
    if shape == target:
        return True
    if len(shape) > len(target):
        return False
    offset = len(target) - len(shape)
    for i, size in enumerate(shape):
        if size != 1 and size != target[offset + i]:
            return False
    return True


def _indexed_shape(batch_size, index, batch_shape_at):
    """The batch shape ``index`` leaves: computed directly for an int, a slice or a
    1-d integer tensor on the first dim, or a tuple of ints and slices (the common
    writes), else by ``batch_shape_at``."""
    kind = type(index)
    if kind is tuple and len(index) <= len(batch_size):
        shape = []
        for size, part in zip(batch_size, index):
            if type(part) is slice:
                shape.append(len(range(*part.indices(size))))
            elif type(part) is not int or not -size <= part < size:
                break  # anything else, or an int out of range: batch_shape_at
        else:
            return tuple(shape) + tuple(batch_size[len(index) :])
    if batch_size:
        first = batch_size[0]
        if kind is slice:
            return (len(range(*index.indices(first))),) + tuple(batch_size[1:])
        if kind is int:
            if -first <= index < first:
                return tuple(batch_size[1:])
        elif (
            kind is Tensor
            and index.dim() == 1
            and not index.is_floating_point()
            and index.dtype is not torch.bool
        ):
            if index.numel() == 0 or (
                int(index.min()) >= -first and int(index.max()) < first
            ):
                return (index.numel(),) + tuple(batch_size[1:])
    return tuple(batch_shape_at(batch_size, index))


def copy_when_safe(td, source) -> bool:
    """``td.update_(source)`` without a snapshot, where no write can fail: every
    level of both sides is a dense tensordict (or, for ``source``, a dict), every
    entry of ``source`` has a plain tensor of the same shape at its key in ``td``,
    and nothing torch checks at the write can refuse it (a target that requires grad
    or is an inference tensor, one with overlapping elements, memory shared with the
    value). Return False, having written nothing, when that is not certain: the
    caller then takes the general path (snapshot, then writes)."""
    pairs: list = []
    if not _copy_pairs(td, source, pairs):
        return False
    grad = torch.is_grad_enabled()
    inference = torch.is_inference_mode_enabled()
    for target, value in pairs:
        if (
            (grad and target.requires_grad)
            or (not inference and target.is_inference())
            or not target.is_contiguous()
            or _may_overlap(target, value)
        ):
            return False
    for target, value in pairs:
        target.copy_(value)
    return True


def _copy_pairs(td, source, out: list) -> bool:
    storage = getattr(td, "_tensordict", None)
    if type(storage) is not dict:
        return False
    items = _dense_items(source)
    if items is None:
        return False
    for key, value in items:
        target = storage.get(key) if type(key) is str else None
        if type(value) is Tensor:
            if type(target) is not Tensor or target.shape != value.shape:
                return False
            out.append((target, value))
        elif not (
            isinstance(value, (dict, TensorCollection))
            and not getattr(value, "_is_non_tensor", False)
            and _copy_pairs(target, value, out)
        ):
            return False
    return True


def _dense_items(source):
    """The items of a plain dict, or of a dense container's storage dict; None for
    anything else (the fast paths then leave it to the general one)."""
    if type(source) is dict:
        return source.items()
    storage = getattr(source, "_tensordict", None)
    if isinstance(source, TensorCollection) and type(storage) is dict:
        return storage.items()
    return None


def _may_overlap(target: Tensor, value: Tensor) -> bool:
    """Whether ``value``'s memory may overlap ``target``'s (contiguous) memory, which
    ``copy_`` refuses unless they are the same elements."""
    if value is target:
        return False
    if not value.is_contiguous():
        return True  # its extent is not simply numel * itemsize: not checked here
    start, end = target.data_ptr(), target.data_ptr() + target.nbytes
    v_start = value.data_ptr()
    return v_start < end and start < v_start + value.nbytes


def set_when_safe(td, source, clone: bool) -> bool:
    """``td.update(source)`` without a snapshot, where no write can fail: every level
    of both sides is dense (``source``'s may be dicts), the levels written are
    unlocked, a nested entry of ``source`` meets a nested tensordict of ``td``, and
    every other entry is a plain tensor whose leading dims are its level's batch size
    (on its device, when the level has one). Return False, having written nothing,
    when that is not certain: the caller then takes the general path."""
    writes: list = []
    if not _set_plan(td, source, writes):
        return False
    for storage, key, value in writes:
        storage[key] = value.clone() if clone else value
    return True


def _set_plan(td, source, out: list) -> bool:
    storage = getattr(td, "_tensordict", None)
    if type(storage) is not dict or td._is_locked:
        return False
    items = _dense_items(source)
    if items is None:
        return False
    bs = td._batch_size
    n = len(bs)
    device = td._device
    for key, value in items:
        if type(key) is not str:
            return False
        if type(value) is Tensor:
            if (
                value.is_nested
                or value.shape[:n] != bs
                or (device is not None and value.device != device)
            ):
                return False
            out.append((storage, key, value))
        elif not (
            isinstance(value, (dict, TensorCollection))
            and not getattr(value, "_is_non_tensor", False)
            and _set_plan(storage.get(key), value, out)
        ):
            return False
    return True
