"""The compatibility surface: private names of 0.15.3 that existing code calls.

TorchRL, the largest client, imports these from ``tensordict.utils`` and
``tensordict.base`` and calls the private methods on tensordicts; other code uses them
in ``isinstance`` checks. They are de-facto public, so they are kept here, in one place,
with the behaviour that code relies on, and tested like public API
(``tests/test_compat.py``); ``docs/compatibility.md`` lists them. New code should call
the public names given in each docstring.

This module sits below ``base`` (it imports only ``_keys``, ``_tensorcollection`` and the
registry): ``TensorDictBase`` inherits :class:`CompatMethods`, and the concrete classes
it needs (``_SubTensorDict``) are looked up in the registry.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Sequence

import torch
from torch import Tensor

from tensordict import _lock_graph
from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection

#: The package's logger (``tensordict.utils.logger`` in 0.15.3).
logger = logging.getLogger("tensordict")

#: ``torch.nn.Buffer``, under the name ``tensordict.utils.Buffer``.
Buffer = torch.nn.Buffer

#: The classes a value may be an instance of to be stored as data, not as an opaque
#: object (0.15.3 listed each tensordict class; here they share ``TensorCollection``).
#: TorchRL's ``ListStorage.set`` unpacks them.
_ACCEPTED_CLASSES = (Tensor, TensorCollection)

#: ``zip(..., strict=True)``: an iterable shorter than the others raises ``ValueError``.
_zip_strict = functools.partial(zip, strict=True)


# ------------------------------------------------------------------------------- keys
def _unravel_key_to_tuple(key) -> tuple:
    """``key`` as a flat tuple of strings, or ``()`` when it is not a valid key
    (the public :func:`~tensordict.unravel_key_to_tuple` raises instead)."""
    try:
        return unravel_key_to_tuple(key)
    except (TypeError, KeyError):
        return ()


def is_seq_of_nested_key(seq) -> bool:
    """True for a string or a sequence (list, tuple) of valid nested keys; an empty
    sequence counts."""
    if isinstance(seq, str):
        return True
    if not isinstance(seq, (list, tuple)):
        return False
    return all(_unravel_key_to_tuple(key) != () for key in seq)


# ------------------------------------------------------------------------- classes
def _is_tensor_collection_class(cls: type) -> bool:
    return issubclass(cls, TensorCollection) or getattr(cls, "_is_tensorclass", False)


def _is_tensorclass(cls: type) -> bool:
    """True for a tensorclass (a class, not an instance)."""
    return bool(getattr(cls, "_is_tensorclass", False))


def _is_non_tensor(cls: type) -> bool:
    """True for the classes that hold non-tensor data (``NonTensorData``,
    ``MetaData``, ``NonTensorStack``)."""
    return bool(getattr(cls, "_is_non_tensor", False))


def is_non_tensor(data) -> bool:
    """True for an instance holding non-tensor data (see :func:`_is_non_tensor`)."""
    return _is_non_tensor(type(data))


def is_tensorclass(obj) -> bool:
    """True for a tensorclass, the class or an instance."""
    cls = obj if isinstance(obj, type) else type(obj)
    return bool(getattr(cls, "_is_tensorclass", False))


def _default_is_leaf(cls: type) -> bool:
    """The default ``is_leaf`` of 0.15.3 (``tensordict.default_is_leaf``): anything but
    a tensor collection (a tensordict, a tensorclass, non-tensor data).

    >>> default_is_leaf(torch.Tensor), default_is_leaf(TensorDict), default_is_leaf(NonTensorData)
    (True, False, False)
    """
    return not _is_tensor_collection_class(cls)


def _is_leaf_nontensor(cls: type) -> bool:
    """``is_leaf`` that counts non-tensor data as leaves: ``keys(True, True,
    is_leaf=_is_leaf_nontensor)`` lists tensors and non-tensor entries (kept here as
    the values themselves, or as ``NonTensorData``/``NonTensorStack``).

    >>> td = TensorDict(a=torch.zeros(2), note="hi", batch_size=[2])
    >>> sorted(td.keys(True, True, is_leaf=is_leaf_nontensor))
    ['a', 'note']
    """
    if _is_tensor_collection_class(cls):
        return _is_non_tensor(cls)
    return True


class _NestedTensorsAsLists:
    """An ``is_leaf`` marker (0.15.3's ``_NESTED_TENSORS_AS_LISTS``): in ``keys`` and
    ``values`` it behaves as the default ``is_leaf``, tensors being leaves."""

    def __init__(self, non_tensor_leaves: bool) -> None:
        self._non_tensor_leaves = non_tensor_leaves

    def __call__(self, cls: type) -> bool:
        if self._non_tensor_leaves:
            return _is_leaf_nontensor(cls)
        return issubclass(cls, Tensor)

    def __repr__(self) -> str:
        suffix = "_NONTENSOR" if self._non_tensor_leaves else ""
        return f"_NESTED_TENSORS_AS_LISTS{suffix}"


_NESTED_TENSORS_AS_LISTS = _NestedTensorsAsLists(False)
_NESTED_TENSORS_AS_LISTS_NONTENSOR = _NestedTensorsAsLists(True)


# ---------------------------------------------------------------------------- shapes
def _shape(tensor, nested_shape: bool = False) -> torch.Size:
    """The shape of a tensor, or the batch size of a tensor collection."""
    if isinstance(tensor, Tensor):
        if tensor.is_nested and not nested_shape:
            # a nested tensor: -1 where its components differ
            sizes = [t.shape for t in tensor.unbind()]
            first = sizes[0] if sizes else torch.Size(())
            dims = [
                d if all(s[i] == d for s in sizes) else -1 for i, d in enumerate(first)
            ]
            return torch.Size([len(sizes), *dims])
        return tensor.shape
    return tensor.batch_size


def _maybe_correct_neg_dim(
    dim: int, shape: torch.Size | None, ndim: int | None = None
) -> int:
    """``dim`` made non-negative for ``ndim`` dims (``len(shape)`` when ``ndim`` is
    None); ``IndexError`` naming the dim when it is out of range."""
    if ndim is None:
        ndim = len(shape)
    if dim < 0:
        dim = ndim + dim
    if dim < 0 or dim >= ndim:
        raise IndexError(
            f"dim {dim} is out of range for {ndim} dims"
            + (f" (shape {tuple(shape)})" if shape is not None else "")
        )
    return dim


def _getitem_batch_size(batch_size, index) -> torch.Size:
    """The batch size ``index`` leaves of ``batch_size`` (computed on a zero-stride
    stand-in, so nothing of that size is allocated)."""
    device = None
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, Tensor):
            device = part.device
            break
    stand_in = torch.zeros((), dtype=torch.uint8, device=device).expand(
        torch.Size(batch_size)
    )
    return stand_in[index].shape


# --------------------------------------------------------------------------- methods
class CompatMethods:
    """The private methods of 0.15.3 that existing code calls on tensordicts; every
    container has them (``TensorDictBase`` inherits this class)."""

    __slots__ = ()

    def _fast_apply(
        self,
        fn: Callable,
        *others,
        named: bool = False,
        nested_keys: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        propagate_lock: bool = False,
        out=None,
        checked: bool = True,
        num_threads: int = 0,
        filter_empty: bool | None = False,
        **options,
    ):
        """:meth:`apply` (``named_apply`` with ``named=True``) as 0.15.3's internal
        entry point takes it: ``filter_empty`` is False unless given; ``out`` receives
        the results; ``propagate_lock`` locks the result when this one is locked.
        ``is_leaf(cls)`` says which entry classes ``fn`` gets whole (non-tensor data
        among them, with TorchRL's ``_is_leaf_nontensor``).
        ``checked`` and ``num_threads`` are accepted and change nothing."""
        if named:
            result = self.named_apply(
                fn,
                *others,
                nested_keys=nested_keys,
                filter_empty=filter_empty,
                is_leaf=is_leaf,
                **options,
            )
        else:
            result = self.apply(
                fn, *others, filter_empty=filter_empty, is_leaf=is_leaf, **options
            )
        if out is not None and result is not None and result is not out:
            out.update(result)
            result = out
        if propagate_lock and result is not None and self.is_locked:
            result.lock_()
        return result

    def _exclude(self, *keys, inplace: bool = False, set_shared: bool = True):
        """:meth:`exclude`."""
        return self.exclude(*keys, inplace=inplace)

    def _select(
        self, *keys, inplace: bool = False, strict: bool = True, set_shared: bool = True
    ):
        """:meth:`select`."""
        return self.select(*keys, inplace=inplace, strict=strict)

    def _propagate_lock(self, lock_parents_weakrefs=None, *, is_compiling=False):
        """Lock this tensordict and every nested one (:meth:`lock_`)."""
        _lock_graph.lock(self)

    def _propagate_unlock(self):
        """Unlock this tensordict and every nested one (:meth:`unlock_`)."""
        _lock_graph.unlock(self)

    def _get_sub_tensordict(self, idx):
        """A write-through view of ``self[idx]``: reading gives the entries at ``idx``,
        and ``set``, ``set_``, ``update`` and new keys write into this tensordict at
        ``idx`` (a new key is created here, zero-filled outside ``idx``)."""
        return container_class("_SubTensorDict")(self, idx)

    def clear_device_(self):
        """Forget the device (``device`` becomes None) here and in every nested
        tensordict; the tensors stay where they are. In place; returns self.

        >>> td = TensorDict(a=torch.zeros(2), device="cpu")
        >>> td.clear_device_().device is None
        True
        """
        if _is_tensorclass(type(self)):
            self._tensordict.clear_device_()
            return self
        for value in self._own_values():
            if isinstance(value, TensorCollection) and not _is_non_tensor(type(value)):
                value.clear_device_()
        self._device = None
        return self

    def _has_names(self) -> bool:
        """True when at least one batch dim is named."""
        return any(name is not None for name in self.names)

    def _erase_names(self) -> None:
        """Drop the batch-dim names (``td.names = None``)."""
        self.names = None

    def _maybe_names(self):
        """The names, or None when no batch dim is named."""
        return self.names if self._has_names() else None

    def _check_batch_size(self, *, raise_exception: bool = True):
        """Check that every entry's leading dims equal the batch size; ``True`` if so,
        else a ``RuntimeError`` naming the entry (``False`` with
        ``raise_exception=False``)."""
        bs = self.batch_size
        n = len(bs)
        for key, value in self._own_items():
            if isinstance(value, Tensor):
                shape = value.shape
            elif isinstance(value, TensorCollection) and not _is_non_tensor(
                type(value)
            ):
                shape = value.batch_size
            else:
                continue
            if shape[:n] != bs:
                if not raise_exception:
                    return False
                raise RuntimeError(
                    f"batch dimension mismatch for key {key!r}: the value has shape "
                    f"{tuple(shape)} but the batch_size is {tuple(bs)}"
                )
        return True

    def _check_device(self, *, raise_exception: bool = True) -> bool:
        """Check that every tensor is on the tensordict's device (when it has one);
        ``True`` if so, else a ``RuntimeError`` naming the entry (``False`` with
        ``raise_exception=False``)."""
        device = self.device
        if device is None:
            return True
        for key, value in self.items(True, True):
            if isinstance(value, Tensor) and value.device != device:
                if not raise_exception:
                    return False
                raise RuntimeError(
                    f"device mismatch for key {key!r}: the tensor is on {value.device} "
                    f"but the tensordict's device is {device}"
                )
        return True

    @property
    def _lock_parents_weakrefs(self) -> list:
        """Weak references to the locked tensordicts whose lock reached this one
        (0.15.3's attribute; read only, see ``tensordict/_lock_graph.py``)."""
        return _lock_graph.parents_weakrefs(self)

    @property
    def _is_shared(self) -> bool:
        """0.15.3's attribute for :meth:`is_shared` (read only)."""
        return bool(self.is_shared())

    @property
    def _is_memmap(self) -> bool:
        """0.15.3's attribute for :meth:`is_memmap` (read only)."""
        is_memmap = getattr(self, "is_memmap", None)
        return bool(is_memmap()) if is_memmap is not None else False

    @property
    def _cache(self) -> None:
        """0.15.3's cache of a locked tensordict's results: ``None``, this project
        caches no op results (read only)."""
        return None

    @property
    def _has_non_tensor(self) -> bool:
        """True when a non-tensor entry is held here or in a nested tensordict."""
        for value in self._own_values():
            if isinstance(value, Tensor):
                continue
            if not isinstance(value, TensorCollection) or _is_non_tensor(type(value)):
                return True
            if value._has_non_tensor:
                return True
        return False

    def _values_list(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        *,
        collapse: bool = False,
        is_leaf=None,
        sorting_keys: Sequence | None = None,
    ) -> list:
        """``list(values(...))``; in the order of ``sorting_keys`` when given."""
        if sorting_keys is not None:
            return [self.get(key) for key in sorting_keys]
        return list(self.values(include_nested, leaves_only, is_leaf))

    def _items_list(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        *,
        collapse: bool = False,
        is_leaf=None,
        sorting_keys: Sequence | None = None,
        default: Any = None,
    ) -> tuple[list, list]:
        """``(keys, values)`` as two lists."""
        if sorting_keys is not None:
            return list(sorting_keys), [self.get(key, default) for key in sorting_keys]
        items = list(self.items(include_nested, leaves_only, is_leaf))
        return [k for k, _ in items], [v for _, v in items]

    def _get_tuple(self, key, default, **kwargs):
        """``get`` of a tuple key (``NO_DEFAULT``: raise when missing)."""
        return self.get(key, default)

    def _set_tuple(
        self, key, value, *, inplace: bool, validated: bool, non_blocking: bool = False
    ):
        """``set`` of a tuple key, as ``_set_str`` takes its options."""
        path = unravel_key_to_tuple(key)
        if len(path) == 1:
            self._set_str(path[0], value, inplace=inplace, validated=validated)
            return self
        return self._set_path(path, value, inplace=inplace, validated=validated)
