"""Write-through sub-views: what ``td._get_sub_tensordict(idx)`` returns.

TorchRL (replay buffers, datasets) takes a view of part of a tensordict and fills it:
``sub = td._get_sub_tensordict(idx); sub.set("obs", x)`` must land in ``td["obs"][idx]``.
A ``_SubTensorDict`` holds the source and the index: reading an entry indexes the
source's entry (a view for basic indices); writing an entry, in place or not, an update
or a new key, writes into the source at the index (a new key is created in the source,
zero-filled outside the index, as a write at an index of a tensordict does). Every other
op runs on ``source[idx]``; in-place ops reach the source through it when the index is
basic (slices, integers), as they would on any view.

What it shares with lazy views is ``tensordict/_write_through.py``. This module knows
only ``base`` and the registry, so ``_td`` can re-export the class under 0.15.3's import
path (``tensordict._td._SubTensorDict``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from tensordict import _errors
from tensordict._atomic import broadcasts_to
from tensordict._compat import _getitem_batch_size
from tensordict._modes import lazy_legacy
from tensordict._registry import register
from tensordict._write_through import _WriteThroughView
from tensordict.base import _MISSING, NO_DEFAULT, TensorDictBase, _is_node


@register
class _SubTensorDict(_WriteThroughView):
    """``source[idx]`` whose writes go to ``source`` (see the module docstring)."""

    def __init__(self, source: TensorDictBase, idx: Any) -> None:
        if not isinstance(source, TensorDictBase):
            raise TypeError(
                f"a sub-tensordict views a tensordict, got {type(source).__name__}"
            )
        self._idx = idx
        self._init_view(source, _getitem_batch_size(source.batch_size, idx))

    def clone(self, recurse: bool = True, **kwargs) -> TensorDictBase:
        """A copy (a ``TensorDict``); ``recurse=False`` keeps the view: a
        ``_SubTensorDict`` at the same index of a shallow copy of the source (its
        tensors shared, its keys its own), as 0.15.3."""
        if not recurse:
            return _SubTensorDict(self._source.clone(False), self._idx)
        return super().clone(recurse, **kwargs)

    # A sub-tensordict's lock is its source's: it neither locks nor unlocks it
    # (0.15.3 refuses both, in these words first); asking for the state it already
    # has is a no-op.
    def lock_(self) -> TensorDictBase:
        if not self._source.is_locked:
            raise RuntimeError(
                f"Cannot lock a _SubTensorDict. Lock the parent tensordict instead. "
                f"(a {self._kind()} shares its source's lock; locking it would lock "
                f"the whole source)"
            )
        self._last_lock_op = "kept"  # nothing changed: nothing to undo on exit
        return self

    def unlock_(self) -> TensorDictBase:
        if self._source.is_locked:
            raise RuntimeError(
                f"Cannot unlock a _SubTensorDict. Unlock the parent tensordict instead. "
                f"(a {self._kind()} shares its source's lock; unlocking it would "
                f"unlock the whole source)"
            )
        self._last_lock_op = "kept"  # nothing changed: nothing to undo on exit
        return self

    def _names_refusal(self) -> str:
        return (
            "Names of a subtensordict cannot be modified. Instantiate it as a "
            "TensorDict first."
        )

    def _check_inplace_move(self, op: str) -> None:
        # 0.15.3's phrase first: code matches it
        raise TypeError(
            f"Cannot send a _SubTensorDict instance to device/dtype inplace. "
            f"({op}(inplace=True) on a {self._kind()}: its tensors are views of the "
            f"source's, which it cannot replace; move or cast the source, or call "
            f"{op}() without inplace)"
        )

    # ------------------------------------------------------------------ plumbing
    def _dense(self) -> TensorDictBase:
        """``source[idx]``: views of the source's tensors for a basic index."""
        return self._source._index(self._idx)

    def _view_entry(self, key: str, value: Any) -> Any:
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
                # the nested batch dims beyond this view's are kept
                extra = value.batch_size[len(self._batch_size) :]
                source._set_str(
                    key,
                    source._new_empty(source.batch_size + extra),
                    inplace=False,
                    validated=True,
                )
                self._get_str(key, NO_DEFAULT).update(value)
                return
        elif _is_node(existing) and not isinstance(value, (TensorDictBase, dict)):
            # a write through the view fills the entry at idx: a tensordict cannot
            # become a tensor there (0.15.3's phrase first)
            raise _errors.InplaceWriteError(
                f"Tried to replace a tensordict with an incompatible object of type "
                f"{type(value)}: the entry {key!r} of this {self._kind()} is a "
                f"tensordict, which a write through the view cannot replace; write "
                f"into its entries, or replace it in the source"
            )
        try:
            self._source._set_at_index(self._idx, {key: value})
        except RuntimeError as err:
            if (
                isinstance(existing, Tensor)
                and isinstance(value, Tensor)
                and not broadcasts_to(value.shape, existing[self._idx].shape)
            ):  # a shape mismatch; any other error (autograd's...) as torch said it
                raise _errors.inplace_mismatch(
                    key, value.shape, existing[self._idx].shape
                ) from err
            raise

    def _create_nested_str(self, key: str) -> TensorDictBase:
        # created in the source (whole batch), then viewed at idx like any entry
        source = self._source
        source._set_str(key, source._new_empty(), inplace=False, validated=True)
        return self._get_str(key, NO_DEFAULT)

    def _set_at_index(self, index, value) -> None:
        # written into source[idx] (a copy for an advanced index), then back at idx
        dense = self._dense()
        dense._set_at_index(index, value)
        self._source._set_at_index(self._idx, dense)

    def _with_dense_stacks(self, op: str, key: tuple = (), outer_dims=None):
        return self._dense()._with_dense_stacks(op, key, outer_dims)

    def view(self, *shape, size=None, batch_size=None):
        """A dtype view, as any tensordict's; a new batch shape is refused (outside
        ``set_lazy_legacy(True)``): a view of part of a tensordict is not a view of
        its storage (an advanced index copies). 0.15.3 refuses it too, in these
        words."""
        if not (shape and isinstance(shape[0], torch.dtype)) and not lazy_legacy():
            raise RuntimeError(
                f"Cannot call `view` on a _SubTensorDict. Call `reshape` or "
                f"`to_tensordict()` first. (view() of a sub-tensordict of batch size "
                f"{list(self._batch_size)}, which views its source at an index, would "
                f"not share storage with it)"
            )
        return super().view(*shape, size=size, batch_size=batch_size)

    def pin_memory(self, *args, **kwargs):
        """Refused, as in 0.15.3: pin ``to_tensordict()``, a copy this one does not
        write through to."""
        raise _errors.cannot_pin(self)

    def pin_memory_(self, *args, **kwargs):
        """Refused, as :meth:`pin_memory`."""
        raise _errors.cannot_pin(self)

    def memmap_(self, prefix=None, copy_existing: bool = False, **kwargs):
        """Refused: a sub-tensordict's entries are parts of the source's tensors."""
        raise RuntimeError(
            f"Converting a sub-tensordict values to memmap cannot be done: the "
            f"entries of a {self._kind()} are parts of the source's tensors; "
            f"memmap_ the source, or memmap() this view into a new tensordict"
        )

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
