"""Write-through sub-views: what ``td._get_sub_tensordict(idx)`` returns.

TorchRL (replay buffers, datasets) takes a view of part of a tensordict and fills it:
``sub = td._get_sub_tensordict(idx); sub.set("obs", x)`` must land in ``td["obs"][idx]``.
A ``_SubTensorDict`` holds the source and the index: reading an entry indexes the
source's entry (a view for basic indices); writing an entry, in place or not, an update
or a new key, writes into the source at the index (a new key is created in the source,
zero-filled outside the index, as a write at an index of a tensordict does). Every other
op runs on ``source[idx]``; in-place ops reach the source through it when the index is
basic (slices, integers), as they would on any view.

This module knows only ``base`` and the registry, so ``_td`` can re-export the class
under 0.15.3's import path (``tensordict._td._SubTensorDict``).
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from tensordict import _errors
from tensordict._compat import _getitem_batch_size
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._registry import container_class, register
from tensordict.base import _MISSING, NO_DEFAULT, TensorDictBase, _is_node


@register
class _SubTensorDict(TensorDictGeneratedOps, TensorDictBase):
    """``source[idx]`` whose writes go to ``source`` (see the module docstring)."""

    def __init__(self, source: TensorDictBase, idx: Any) -> None:
        if not isinstance(source, TensorDictBase):
            raise TypeError(
                f"a sub-tensordict views a tensordict, got {type(source).__name__}"
            )
        self._source = source
        self._idx = idx
        self._batch_size = _getitem_batch_size(source.batch_size, idx)
        self._names = None
        self._last_lock_op = None
        self._lock_stack = None

    # ------------------------------------------------------------------ plumbing
    def _dense(self) -> TensorDictBase:
        """``source[idx]``: views of the source's tensors for a basic index."""
        return self._source._index(self._idx)

    def _template(self) -> TensorDictBase:
        # an empty TensorDict shaped like this view: it validates values written here
        return container_class("TensorDict")._new_unsafe(
            {}, self._batch_size, self._source.device
        )

    @property
    def _device(self):
        return self._source.device

    @property
    def _is_locked(self) -> bool:
        return self._source.is_locked

    def _set_lock(self, locked: bool) -> None:
        self._source._set_lock(locked)

    # ------------------------------------------------------------------ primitives
    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        value = self._source._get_str(key, _MISSING, missing_ok=True)
        if value is _MISSING:
            if default is NO_DEFAULT and not missing_ok:
                return self._source._get_str(key, NO_DEFAULT)  # raises naming the key
            return default
        if isinstance(value, Tensor):
            return value[self._idx]
        if _is_node(value):
            return _SubTensorDict(value, self._idx)
        if isinstance(value, TensorDictBase):  # a non-tensor stack
            return value[self._idx]
        return value

    def _set_str(
        self,
        key: str,
        value,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        if not validated:
            value = self._template()._validate(key, value)
        source = self._source
        existing = source._get_str(key, _MISSING, missing_ok=True)
        if existing is _MISSING:
            if source.is_locked:
                raise _errors.locked(f"set the key {key!r}")
            # a new key: created in the source over its whole batch, then written
            if isinstance(value, Tensor):
                feature = value.shape[len(self._batch_size) :]
                existing = value.new_zeros(source.batch_size + feature)
                source._set_str(key, existing, inplace=False, validated=False)
            elif _is_node(value):
                source._set_str(key, source._new_empty(), inplace=False, validated=True)
                self._get_str(key, NO_DEFAULT).update(value)
                return
        try:
            self._source._set_at_index(self._idx, {key: value})
        except RuntimeError as err:
            if isinstance(existing, Tensor) and isinstance(value, Tensor):
                raise _errors.inplace_mismatch(
                    key, value.shape, existing[self._idx].shape
                ) from err
            raise

    def _create_nested_str(self, key: str) -> TensorDictBase:
        # created in the source (whole batch), then viewed at idx like any entry
        source = self._source
        source._set_str(key, source._new_empty(), inplace=False, validated=True)
        return self._get_str(key, NO_DEFAULT)

    def _del_str(self, key: str) -> None:
        self._source._del_str(key)

    def _own_keys(self):
        return list(self._source._own_keys())

    def _own_items(self):
        return [(key, self._get_str(key, NO_DEFAULT)) for key in self._own_keys()]

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        return self._template()._new_empty(batch_size, device, names)

    def _index(self, index):
        return self._dense()._index(index)

    def _set_at_index(self, index, value) -> None:
        # written into source[idx] (a copy for an advanced index), then back at idx
        dense = self._dense()
        dense._set_at_index(index, value)
        self._source._set_at_index(self._idx, dense)

    def _leaves(self):
        return self._dense()._leaves()

    def _leaves_and_rebuild(self):
        return self._dense()._leaves_and_rebuild()

    def _operand_leaves(self, other, op: str, default=None):
        return self._dense()._operand_leaves(other, op, default)

    def _moved_to(self, device):
        return self._dense()._moved_to(device)

    def _with_dense_stacks(self, op: str, key: tuple = ()):
        return self._dense()._with_dense_stacks(op, key)

    def _replace_contents(self, other) -> None:
        raise RuntimeError(
            "cannot replace the entries of a sub-tensordict in place: select or "
            "exclude on the tensordict it views"
        )

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDictBase:
        """A dense copy of the viewed part."""
        return self._dense().clone()

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A dense copy of the viewed part."""
        return self._dense().clone()

    def get_parent_tensordict(self) -> TensorDictBase:
        """The tensordict this view writes into."""
        return self._source

    @property
    def idx(self):
        """The index this view covers in its source."""
        return self._idx
