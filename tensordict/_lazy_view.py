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

What code written for 0.15.3 relies on (issue 14, row 6), found the same way, from
what the ops do to a data-less ("meta") tensor of the source's batch shape:

- an op that undoes a view gives the source back (``td.unsqueeze(0).squeeze(0) is
  td``; ``transpose``, ``permute``, ``view`` alike): the two ops together leave such a
  tensor's shape and strides as they were;
- the view's dim names follow its dims (``unsqueeze`` adds an unnamed one): each dim of
  a tensor given distinct prime strides keeps its stride through these ops;
- with the legacy mode off, ``squeeze``, ``unsqueeze``, ``permute``, ``transpose`` and
  ``view`` of a lazy view raise (make it dense first) instead of densifying silently.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable

import torch
from torch import Tensor

from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import register
from tensordict._td import TensorDict
from tensordict._write_through import _WriteThroughView
from tensordict.base import NO_DEFAULT, TensorDictBase
from tensordict.utils import lazy_legacy, set_lazy_legacy

# What 0.15.3's lazy views refuse with the legacy mode off (they densified the rest).
_REFUSED_WITHOUT_LEGACY = ("squeeze", "unsqueeze", "permute", "transpose", "view")
# the aliases are refused as the op they stand for, named as 0.15.3 names it
_REFUSED_ALIASES = {
    "swapaxes": "transpose",
    "swapdims": "transpose",
    "movedim": "permute",
    "moveaxis": "permute",
}


def _dense(td: TensorDictBase) -> TensorDictBase:
    return td._dense() if isinstance(td, LazyViewTensorDict) else td


def _eager(op: Callable, td: TensorDictBase) -> TensorDictBase:
    """The shape op applied now (not as another lazy view)."""
    with set_lazy_legacy(False):
        return op(td)


def _meta_result(ops: tuple, batch_size: torch.Size, strides: tuple) -> Tensor | None:
    """What ``ops`` (batch-shape ops of tensordicts, in order) do to a data-less tensor
    of ``batch_size`` and ``strides``; None where they cannot (a ``view`` that such
    strides do not allow)."""
    leaf = torch.empty_strided(batch_size, strides, device="meta")
    td = TensorDict._from_storage({"_": leaf}, batch_size, None)
    try:
        for op in ops:
            td = _eager(op, td)
    except RuntimeError:
        return None
    return td._tensordict["_"]


def _contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _primes(n: int) -> tuple:
    """``n`` distinct primes above 1000: strides no op here can make from others."""
    out, k = [], 1009
    while len(out) < n:
        if all(k % p for p in range(2, int(k**0.5) + 1)):
            out.append(k)
        k += 2
    return tuple(out)


def _undoes(source: "LazyViewTensorDict", op: Callable) -> bool:
    """Whether ``op`` on the view ``source`` gives back the tensordict it views: the
    two ops leave a tensor of that batch shape as it was (same shape; same strides
    along the dims of more than one element)."""
    shape = source._source.batch_size
    strides = _contiguous_strides(shape)
    out = _meta_result((source._op, op), shape, strides)
    if out is None or out.shape != shape:
        return False
    return all(a == b for a, b, n in zip(out.stride(), strides, shape) if n > 1)


def _names_after(op: Callable, source: TensorDictBase) -> list | None:
    """The dim names of ``op``'s result: each dim that ``op`` keeps keeps its name
    (found by its stride, distinct primes), new or merged dims have none."""
    if not source._has_names():
        return None
    shape = source.batch_size
    strides = _primes(len(shape))
    out = _meta_result((op,), shape, strides)
    if out is None:
        return None
    by_stride = dict(zip(strides, source.names))
    names = [by_stride.get(s) for s in out.stride()]
    return names if any(n is not None for n in names) else None


@register
class LazyViewTensorDict(_WriteThroughView):
    """A shape op on the batch dims of ``source``, applied when entries are read and
    undone when they are written (see the module docstring)."""

    # the name of the op (``"permute"``, ``"view"``...) where known: what 0.15.3's
    # per-op view classes (``_PermutedTensorDict``...) tell apart
    _op_name: str | None = None

    def __init__(
        self, source: TensorDictBase, op: Callable, name: str | None = None
    ) -> None:
        self._op = op
        if name is not None:
            self._op_name = name
        template = TensorDict._from_storage({}, source.batch_size, source.device)
        self._init_view(source, _eager(op, template).batch_size)
        self._names = _names_after(op, source)

    @classmethod
    def _of(
        cls, source: TensorDictBase, op: Callable, name: str | None = None
    ) -> TensorDictBase:
        """``op`` (named ``name``) of ``source`` as a lazy view; where ``source`` is
        itself a lazy view that ``op`` undoes, the tensordict it views."""
        if isinstance(source, LazyViewTensorDict) and _undoes(source, op):
            return source._source
        return cls(source, op, name)

    def _with_dense_stacks(
        self, op: str, key: tuple = (), outer_dims=None
    ) -> TensorDictBase:
        op = _REFUSED_ALIASES.get(op, op)
        if op in _REFUSED_WITHOUT_LEGACY and not lazy_legacy():
            # 0.15.3's phrases first (existing code matches them)
            hint = "Call `reshape` instead." if op == "view" else (
                "Make it dense before calling this method by calling `to_tensordict`."
            )
            raise RuntimeError(
                f"Cannot call `{op}` on a lazy tensordict. {hint} ({op}() cannot run "
                f"on a lazy view (a {type(self).__name__} of batch size "
                f"{list(self._batch_size)} made under set_lazy_legacy(True)) now that "
                f"the legacy mode is off)"
            )
        return self

    def view(self, *shape, size=None, batch_size=None):
        """A dtype view runs on the dense views of the source's tensors (it keeps
        the batch dims); a new batch shape follows the shape ops' rule above."""
        if shape and isinstance(shape[0], torch.dtype) and not lazy_legacy():
            return self._dense().view(*shape, size=size, batch_size=batch_size)
        return super().view(*shape, size=size, batch_size=batch_size)

    def clone(self, recurse: bool = True, **kwargs) -> TensorDictBase:
        """A copy; ``recurse=False`` keeps the view: the same op over a shallow copy of
        the source (sharing its tensors), as 0.15.3's lazy views do."""
        if not recurse:
            return LazyViewTensorDict(self._source.clone(False), self._op, self._op_name)
        return super().clone(recurse, **kwargs)

    def memmap_(self, prefix=None, copy_existing: bool = False, **kwargs):
        """Memory-map the tensordict this view reads, in place (so the view's
        entries become views of memory-mapped tensors); returns this view. The
        folder ``prefix`` holds that tensordict: loading it gives the source, not
        the view (``docs/compatibility.md``)."""
        early = kwargs.pop("return_early", False) and kwargs.get("num_threads", 0) > 1
        self._source.memmap_(prefix, copy_existing, **kwargs)
        if early:  # written already: a future that is done
            future = concurrent.futures.Future()
            future.set_result(self)
            return future
        return self

    def _check_to_batch_size(self) -> None:
        # 0.15.3's phrase first: code matches it
        raise TypeError(
            f"Cannot pass batch-size to a {type(self).__name__}. (to(batch_size=): a "
            f"lazy view's batch size follows its source; make it dense first with "
            f"to_tensordict())"
        )

    def _create_nested_str(self, key: str) -> TensorDictBase:
        # created in the source, so that what is written through the view stays there
        self._source._create_nested_str(key)
        return self._get_str(key, NO_DEFAULT)

    # ------------------------------------------------------------------ plumbing
    def _dense(self) -> TensorDictBase:
        """The op applied to the whole source: a dense tensordict of views."""
        return _eager(self._op, _dense(self._source))

    def _one(self, key: str, value) -> TensorDict:
        source = self._source
        return TensorDict._from_storage({key: value}, source.batch_size, source.device)

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
            # the nested batch dims beyond this view's are kept
            extra = value.batch_size[len(self._batch_size) :]
            return rebuild(
                [self._to_source_layout(key, leaf) for leaf in leaves],
                batch_size=self._source.batch_size + extra,
            )
        return value

    def _view_entry(self, key: str, value: Any) -> Any:
        if isinstance(value, Tensor):
            return self._forward(key, value)
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            # the closure holds the op and the source's shape, not this view: a nested
            # view read from it must not keep its parents alive (their locks would
            # keep holding it)
            op, bs, device = self._op, self._source.batch_size, self._source.device

            def nested_op(sub, key=key):
                outer = TensorDict._from_storage({key: sub}, bs, device)
                return _eager(op, outer)._tensordict[key]

            return LazyViewTensorDict(value, nested_op, self._op_name)
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
        if isinstance(value, TensorDictBase):
            # keys the source lacks are made there first (zeros), as 0.15.3 fills an
            # empty tensordict through a view of it
            bdims = value.batch_dims
            for key, leaf in value.items(True, True):
                if isinstance(leaf, Tensor) and self._get_path(
                    unravel_key_to_tuple(key), None
                ) is None:
                    self.set(
                        key,
                        leaf.new_zeros(self.batch_size + leaf.shape[bdims:]),
                    )
        self._dense()._set_at_index(index, value)  # views: the writes reach the source

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A dense copy; in place, the source is what to make contiguous."""
        if inplace:
            raise RuntimeError(
                "contiguous(inplace=True) on a lazy view: call it on the tensordict "
                "the view was made from"
            )
        return self._dense().clone()
