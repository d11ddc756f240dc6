"""Lazy views: what ``unsqueeze``, ``squeeze``, ``permute`` and ``view`` return under
``set_lazy_legacy(True)`` (the overview's "lazy evaluation").

A ``LazyViewTensorDict`` holds the tensordict it was made from and the shape op. Reading
an entry applies the op to that entry only, when it is read; writing an entry (a new key
too) writes into the source, brought back to the source's layout; every other op runs on
the dense view, whose tensors share storage with the source's, so in-place ops reach the
source as well.

Bringing a value back needs no inverse per op: the op is applied to a fresh tensor of
the source's layout, which gives a view of it in this layout, and the value is copied
into that view. That holds for every op here, since each returns a view. What it
shares with ``_SubTensorDict`` is ``tensordict/_write_through.py``.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import Tensor

from tensordict._registry import register
from tensordict._td import TensorDict
from tensordict._write_through import _WriteThroughView
from tensordict.base import TensorDictBase
from tensordict.utils import set_lazy_legacy


def _dense(td: TensorDictBase) -> TensorDictBase:
    return td._dense() if isinstance(td, LazyViewTensorDict) else td


def _eager(op: Callable, td: TensorDictBase) -> TensorDictBase:
    """The shape op applied now (not as another lazy view)."""
    with set_lazy_legacy(False):
        return op(td)


@register
class LazyViewTensorDict(_WriteThroughView):
    """A shape op on the batch dims of ``source``, applied when entries are read and
    undone when they are written (see the module docstring)."""

    def __init__(self, source: TensorDictBase, op: Callable) -> None:
        self._op = op
        template = TensorDict._new_unsafe({}, source.batch_size, source.device)
        self._init_view(source, _eager(op, template).batch_size)

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

    def _view_entry(self, key: str, value: Any) -> Any:
        if isinstance(value, Tensor):
            return self._forward(key, value)
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            op = self._op
            outer = self._one
            return LazyViewTensorDict(
                value, lambda sub, key=key: _eager(op, outer(key, sub))._tensordict[key]
            )
        return value

    # ------------------------------------------------------------------ primitives
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
            # checked (and converted) against this view's batch size
            value = self._template()._validate(key, value)
        self._source._set_str(
            key, self._to_source_layout(key, value), inplace=inplace, validated=False
        )

    def _set_at_index(self, index, value) -> None:
        self._dense()._set_at_index(index, value)  # views: the writes reach the source

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A dense copy; in place, the source is what to make contiguous."""
        if inplace:
            raise RuntimeError(
                "contiguous(inplace=True) on a lazy view: call it on the tensordict "
                "the view was made from"
            )
        return self._dense().clone()
