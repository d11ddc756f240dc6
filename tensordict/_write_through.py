"""What the write-through views share: ``_SubTensorDict`` (``source[idx]``, from
``td._get_sub_tensordict(idx)``) and ``LazyViewTensorDict`` (a shape op under
``set_lazy_legacy(True)``).

Such a view holds the tensordict it was made from (``_source``); reading an entry shows
the source's entry as the view sees it (``_view_entry``), writing one writes into the
source (each view's ``_set_str`` / ``_set_at_index``); the keys, the device and the lock
are the source's; every other op runs on the view made dense (``_dense()``: a
tensordict of views of the source's tensors, so in-place ops reach the source too).

This module knows only ``base``, the generated ops and the registry.
"""

from __future__ import annotations

from typing import Any

from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._registry import container_class
from tensordict.base import _MISSING, NO_DEFAULT, TensorDictBase


class _WriteThroughView(TensorDictGeneratedOps, TensorDictBase):
    """Base of the views whose writes go to ``_source`` (see the module docstring).
    A subclass sets ``_source`` and ``_batch_size`` through :meth:`_init_view` and
    gives ``_dense``, ``_view_entry``, ``_set_str`` and ``_set_at_index``."""

    _source: TensorDictBase

    def _init_view(self, source: TensorDictBase, batch_size) -> None:
        self._source = source
        self._batch_size = batch_size
        self._names = None
        self._last_lock_op = None
        self._lock_stack = None

    def _dense(self) -> TensorDictBase:
        raise NotImplementedError

    def _view_entry(self, key: str, value: Any) -> Any:
        """The source's entry ``value`` as this view shows it."""
        raise NotImplementedError

    def _template(self) -> TensorDictBase:
        # an empty TensorDict shaped like this view: it validates values written here
        return container_class("TensorDict")._from_storage(
            {}, self._batch_size, self._source.device
        )

    @property
    def _device(self):
        return self._source.device

    @property
    def _is_locked(self) -> bool:
        return self._source.is_locked

    # ------------------------------------------------------------------ key ops
    # In place, these would replace the view's set of keys, which are its
    # source's: refused, in 0.15.3's words first (existing code matches them).
    def _refuse_inplace(self, op: str, phrase_op: str | None = None):
        raise RuntimeError(
            f"Cannot call {phrase_op or op} inplace on a lazy tensordict. "
            f"({op}(inplace=True) on a {type(self).__name__}, a view of another "
            f"tensordict, would replace the keys of the tensordict it views: call it "
            f"on that tensordict, or without inplace)"
        )

    def select(self, *keys, inplace: bool = False, **kwargs):
        if inplace:
            self._refuse_inplace("select")
        return super().select(*keys, inplace=False, **kwargs)

    def exclude(self, *keys, inplace: bool = False):
        if inplace:
            self._refuse_inplace("exclude")
        return super().exclude(*keys, inplace=False)

    def flatten_keys(self, separator: str = ".", inplace: bool = False, is_leaf=None):
        if inplace:
            self._refuse_inplace("flatten_keys", "exclude")
        return super().flatten_keys(separator, inplace=False, is_leaf=is_leaf)

    def unflatten_keys(self, separator: str = ".", inplace: bool = False):
        if inplace:
            self._refuse_inplace("unflatten_keys", "exclude")
        return super().unflatten_keys(separator, inplace=False)

    def _set_lock(self, locked: bool) -> None:
        self._source._set_lock(locked)

    # ------------------------------------------------------------------ primitives
    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        value = self._source._get_str(key, _MISSING, missing_ok=True)
        if value is _MISSING:
            if default is NO_DEFAULT and not missing_ok:
                return self._source._get_str(key, NO_DEFAULT)  # raises naming the key
            return default
        return self._view_entry(key, value)

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

    def _leaves(self):
        return self._dense()._leaves()

    def _leaves_and_rebuild(self):
        return self._dense()._leaves_and_rebuild()

    def _operand_leaves(self, other, op: str, default=None):
        return self._dense()._operand_leaves(other, op, default)

    def _moved_to(self, device):
        return self._dense()._moved_to(device)

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDictBase:
        """A dense copy of the viewed entries."""
        return self._dense().clone()
