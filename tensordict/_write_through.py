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
    def batch_size(self):
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        raise RuntimeError(
            f"Modifying the batch size of a lazy representation of a tensordict is not "
            f"permitted: the batch size of a {self._kind()} follows its source (asked "
            f"for {value}); make it dense first with to_tensordict()"
        )

    @TensorDictBase.names.setter
    def names(self, value) -> None:
        # a view's names follow its source's (0.15.3 refuses too, in these words)
        raise RuntimeError(
            f"{self._names_refusal()} (a {self._kind()} cannot hold names of its own: "
            f"name the source's dims, or name a dense copy)"
        )

    def _names_refusal(self) -> str:
        return "Names of a lazy tensordict cannot be modified. Call to_tensordict() first."

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

    # ------------------------------------------------------------------ capabilities
    # What the base's capabilities need from a view: its dense form where they copy,
    # and a clear refusal where they would replace the entries the source holds.

    def _kind(self) -> str:
        return (
            f"{type(self).__name__} (a view of batch size {list(self._batch_size)} "
            f"of a {type(self._source).__name__})"
        )

    def _replace_contents(self, other) -> None:
        # what flatten_keys / unflatten_keys / ... (inplace=True) end with; 0.15.3
        # said "exclude" for them
        raise RuntimeError(self._in_place_refusal("exclude"))

    def _check_inplace_move(self, op: str) -> None:
        # 0.15.3's phrase first: code matches it
        raise TypeError(
            f"Cannot use inplace=True with {type(self).__name__}.{op}(): a "
            f"{self._kind()} holds the source's tensors, which it cannot replace; "
            f"move or cast the tensordict the view was made from, or call {op}() "
            f"without inplace"
        )

    def _in_place_refusal(self, op: str) -> str:
        return (
            f"Cannot call {op} in place on a {self._kind()}: its entries are the "
            f"source's; call it on the tensordict the view was made from, or on a "
            f"dense copy (to_tensordict())"
        )

    def _memmap_copy_source(self) -> TensorDictBase:
        # memmap(), memmap_like(), save(): a dense tensordict of views of the source
        return self._dense()

    def is_memmap(self) -> bool:
        """Whether the tensordict this view reads is memory-mapped."""
        return self._source.is_memmap()

    def _add_memmap_entry(self, key, shape, dtype, make):
        raise RuntimeError(
            f"Making a memory-mapped tensor after instantiation isn't currently "
            f"allowed for lazy tensordicts: {key!r} cannot be added to a "
            f"{self._kind()}; add it to the memory-mapped tensordict it views"
        )

    def load_memmap_(self, prefix, robust_key=None, *, allow_pickle=None, mode=None):
        """Refused: loading replaces the entries, which are the source's."""
        raise RuntimeError(
            f"load_memmap_: cannot load into a {self._kind()}: its entries are the "
            f"source's; load into the tensordict the view was made from, or use "
            f"TensorDict.load_memmap({str(prefix)!r})"
        )

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
