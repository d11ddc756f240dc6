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

from torch import Tensor

from tensordict._tensorcollection import TensorCollection


class Snapshot:
    """The structure of a tensordict (and optionally tensor data) to restore."""

    __slots__ = ("_levels", "_locks", "_data")

    def __init__(self, td) -> None:
        self._levels: list = []  # (storage owner, its dict as it was)
        self._locks: list = []  # (container, is_locked as it was)
        self._data: list = []  # (tensor, index, saved values)
        _save(td, self, set())

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


def _save(node, snap: Snapshot, seen: set) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    storage = getattr(node, "_tensordict", None)
    if type(storage) is dict:  # a dense level: its entries, its lock
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
            _save(child, snap, seen)


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
