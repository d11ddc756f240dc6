"""Lazy views: what ``unsqueeze``, ``squeeze``, ``permute`` and ``view`` return under
``set_lazy_legacy(True)`` (the overview's "lazy evaluation").

A ``LazyViewTensorDict`` holds the tensordict it was made from and the shape op. Reading
an entry applies the op to that entry only, when it is read; writing an entry (a new key
too) writes into the source, brought back to the source's layout; every other op runs on
the dense view, whose tensors share storage with the source's, so in-place ops reach the
source as well.

Bringing a value back needs no inverse per op: the op is applied to a fresh tensor of
the source's layout, which gives a view of it in this layout, and the value is copied
into that view. That holds for every op here, since each returns a view.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import Tensor

from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._registry import register
from tensordict._td import TensorDict
from tensordict.base import _MISSING, NO_DEFAULT, TensorDictBase
from tensordict.utils import set_lazy_legacy


def _dense(td: TensorDictBase) -> TensorDictBase:
    return td._dense() if isinstance(td, LazyViewTensorDict) else td


def _eager(op: Callable, td: TensorDictBase) -> TensorDictBase:
    """The shape op applied now (not as another lazy view)."""
    with set_lazy_legacy(False):
        return op(td)


@register
class LazyViewTensorDict(TensorDictGeneratedOps, TensorDictBase):
    """A shape op on the batch dims of ``source``, applied when entries are read and
    undone when they are written (see the module docstring)."""

    def __init__(self, source: TensorDictBase, op: Callable) -> None:
        self._source = source
        self._op = op
        template = TensorDict._new_unsafe({}, source.batch_size, source.device)
        self._batch_size = _eager(op, template).batch_size
        self._names = None
        self._last_lock_op = None
        self._lock_stack = None

    # ------------------------------------------------------------------ plumbing
    def _dense(self) -> TensorDictBase:
        """The op applied to the whole source: a dense tensordict of views."""
        return _eager(self._op, _dense(self._source))

    def _one(self, key: str, value) -> TensorDict:
        source = self._source
        return TensorDict._new_unsafe({key: value}, source.batch_size, source.device)

    def _forward(self, key: str, value):
        return _eager(self._op, self._one(key, value))._tensordict[key]

    def _to_source_layout(self, key: str, value):
        """``value`` (in this view's layout) as the source stores it."""
        if isinstance(value, Tensor):
            source_bs = self._source.batch_size
            extra = value.shape[len(self._batch_size) :]
            buffer = torch.empty(
                source_bs + extra, dtype=value.dtype, device=value.device
            )
            self._forward(key, buffer).copy_(value)  # a view of buffer
            return buffer
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            leaves, rebuild = value._leaves_and_rebuild()
            return rebuild(
                [self._to_source_layout(key, leaf) for leaf in leaves],
                batch_size=self._source.batch_size,
            )
        return value

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
            return self._forward(key, value)
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            op = self._op
            outer = self._one
            return LazyViewTensorDict(
                value, lambda sub, key=key: _eager(op, outer(key, sub))._tensordict[key]
            )
        return value

    def _set_str(self, key: str, value, *, inplace: bool, validated: bool) -> None:
        if not validated:
            # checked (and converted) against this view's batch size
            value = TensorDict._new_unsafe({}, self._batch_size, self.device)._validate(
                key, value
            )
        self._source._set_str(
            key, self._to_source_layout(key, value), inplace=inplace, validated=False
        )

    def _del_str(self, key: str) -> None:
        self._source._del_str(key)

    def _own_keys(self):
        return list(self._source._own_keys())

    def _own_items(self):
        return [(key, self._get_str(key, NO_DEFAULT)) for key in self._own_keys()]

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        template = TensorDict._new_unsafe({}, self._batch_size, self.device)
        return template._new_empty(batch_size, device, names)

    def _index(self, index):
        return self._dense()._index(index)

    def _set_at_index(self, index, value) -> None:
        self._dense()._set_at_index(index, value)  # views: the writes reach the source

    def _leaves(self):
        return self._dense()._leaves()

    def _leaves_and_rebuild(self):
        return self._dense()._leaves_and_rebuild()

    def _operand_leaves(self, other, op: str, default=None):
        return self._dense()._operand_leaves(other, op, default)

    def _moved_to(self, device):
        return self._dense()._moved_to(device)

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """A dense copy."""
        return self._dense().clone()

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A dense copy; in place, the source is what to make contiguous."""
        if inplace:
            raise RuntimeError(
                "contiguous(inplace=True) on a lazy view: call it on the tensordict "
                "the view was made from"
            )
        return self._dense().clone()
