"""TensorDict: the dense container, a dict of tensors sharing leading batch dimensions.

Input is validated once, where it enters (the constructor, ``set``, ``__setitem__``);
results the library builds itself (indexing, generated ops, clones) go through
``TensorDict._from_storage``, which skips checks the construction already guarantees.
"""

from __future__ import annotations

from typing import Any

import sys

import numpy as np
import torch
from torch.nn.parameter import is_lazy
from torch import Tensor

from tensordict import _errors, _modes
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._hotreads import ReadsBase, install as install_hot_reads, string_keys
from tensordict._hotreads import install_subclass as install_hot_reads_subclass
from tensordict._keys import unravel_key_to_tuple
from tensordict._linked_list import entry_value
from tensordict._unbatched import is_unbatched, read_from as _unbatched_read
from tensordict.memmap import MemoryMappedTensor
from tensordict._atomic import broadcasts_to
from tensordict._ragged import RAGGED, batch_shape
from tensordict._registry import container_class, register
from tensordict._sub_td import _SubTensorDict  # noqa: F401  (0.15.3's import path)
from tensordict.base import (
    _MISSING,
    _parse_names,
    NO_DEFAULT,
    TensorDictBase,
    _drops_empty,
    _is_node,
    _is_leaf_default,
    _KeysView,
    _looks_like_key,
    _WriteBack,
    _device_recorder,
    is_tensor_collection,  # noqa: F401  (0.15.3's import path: tensordict._td)
)

from tensordict._index_json import (  # noqa: E402,F401  (0.15.3's import path)
    _index_to_str,
    _str_to_index,
)

_CONVERTIBLE = (bool, int, float, complex, list, tuple, np.ndarray, np.generic)


def __getattr__(name: str):
    # 0.15.3's import path of ``lazy_stack`` (``from tensordict._td import
    # lazy_stack``); it lives above this module, so it is looked up when asked for
    if name == "lazy_stack":
        return sys.modules["tensordict"].lazy_stack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_EMPTY_SIZE = torch.Size(())

# The default of TensorDict.get's ``default``: "not given" (not _MISSING, which callers
# pass as a default to tell a missing entry from a stored None).
_NOT_GIVEN = object()


class _DenseKeysView(_KeysView):
    """``td.keys(include_nested, ...)`` of a TensorDict: ``key in`` it reads the storage
    dicts directly while every level is a dense TensorDict, so a miss costs a dict
    lookup, not a raised and caught KeyError per call (``("a",) in td.keys(True)`` in
    users' loops). Any other level or key goes the general way."""

    __slots__ = ()

    def __contains__(self, key) -> bool:
        if type(key) is str:
            path = (key,)
        elif type(key) is tuple and key:
            path = key
        else:
            return _KeysView.__contains__(self, key)
        if len(path) > 1 and not self._include_nested:
            return _KeysView.__contains__(self, key)
        node = self._td
        for part in path[:-1]:
            if type(node) is not TensorDict or type(part) is not str:
                return _KeysView.__contains__(self, key)
            node = node._tensordict.get(part, _MISSING)
            if node is _MISSING:
                return False
        last = path[-1]
        if type(node) is not TensorDict or type(last) is not str:
            return _KeysView.__contains__(self, key)
        value = node._tensordict.get(last, _MISSING)
        if value is _MISSING:
            return False
        if self._leaves_only:
            return (self._is_leaf or _is_leaf_default)(type(value))
        return True


#: Batch sizes of one or two plain ints already checked, by their dims. `TensorDict({},
#: [3, 4])` in a loop built a torch.Size and checked it at every call: half the cost of
#: the call. A torch.Size is immutable, so a kept one cannot go stale; the table stops
#: growing at _SMALL_SIZES_MAX entries (then sizes are built as before).
_SMALL_SIZES: dict[tuple[int, ...], torch.Size] = {}
_SMALL_SIZES_MAX = 1024


def _parse_batch_size(batch_size) -> torch.Size:
    kind = type(batch_size)
    if kind is torch.Size:
        return batch_size
    if kind is list or kind is tuple:
        # exact ints only: 3.0 or True compare equal to 3 or 1 but are refused below
        n = len(batch_size)
        if n == 2:
            first, second = batch_size
            if type(first) is int and type(second) is int:
                size = _SMALL_SIZES.get((first, second))
                if size is not None:
                    return size
        elif n == 1:
            first = batch_size[0]
            if type(first) is int:
                size = _SMALL_SIZES.get((first,))
                if size is not None:
                    return size
        try:
            size = torch.Size(batch_size)
        except (TypeError, ValueError):
            raise _errors.bad_batch_size(batch_size) from None
    elif batch_size is None:
        return _EMPTY_SIZE
    elif isinstance(batch_size, int) and not isinstance(batch_size, bool):
        size = torch.Size((batch_size,))
    elif isinstance(batch_size, Tensor) and batch_size.ndim <= 1:
        size = torch.Size(batch_size.reshape(-1).tolist())
    else:
        try:
            size = torch.Size(batch_size)
        except (TypeError, ValueError):
            raise _errors.bad_batch_size(batch_size) from None
    if size and min(size) < RAGGED:  # -1: a ragged dim (tensordict._ragged)
        raise _errors.bad_batch_size(batch_size)
    if (
        (kind is list or kind is tuple)
        and 0 < len(size) <= 2
        and len(_SMALL_SIZES) < _SMALL_SIZES_MAX
        and all(type(dim) is int for dim in batch_size)
    ):
        _SMALL_SIZES[tuple(size)] = size
    return size


def _parse_device(device) -> torch.device | None:
    if device is None:
        return None
    if isinstance(device, int):
        device = torch.device("cuda", device)
    elif not isinstance(device, torch.device):
        device = torch.device(device)
    if device.type == "cuda" and device.index is None and torch.cuda.is_available():
        device = torch.device("cuda", torch.cuda.current_device())
    return device


_tensor_getitem = Tensor.__getitem__  # torch's indexing, whatever the leaf's subclass
_index_select = torch.index_select
_ROW_INDEX_DTYPES = (torch.int64, torch.int32)


def _normalize_index(index, batch_size: torch.Size):
    """Return ``index`` in a form that, applied to any leaf, indexes only the batch
    dims: an Ellipsis is expanded to the batch dims it stands for (so it never reaches
    feature dims), and an index that addresses more dims than the batch has is an
    error that names both."""
    batch_dims = len(batch_size)
    if type(index) is int or type(index) is slice:
        if batch_dims == 0:
            raise IndexError(
                f"cannot index a tensordict with batch_size=() by {index!r}: it has no "
                f"batch dims to index"
            )
        return index
    parts = index if type(index) is tuple else (index,)
    consumed = 0
    ellipsis_at = -1
    for pos, part in enumerate(parts):
        if part is None or isinstance(part, bool):
            continue
        if part is Ellipsis:
            if ellipsis_at >= 0:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = pos
        elif isinstance(part, Tensor):
            consumed += part.ndim if part.dtype is torch.bool else 1
        elif isinstance(part, np.ndarray):
            consumed += part.ndim if part.dtype == np.bool_ else 1
        else:
            consumed += 1
    if consumed > batch_dims:
        raise IndexError(
            f"too many indices for a tensordict with batch_size "
            f"{tuple(batch_size)}: the index {index!r} "
            f"addresses {consumed} dims but there are only {batch_dims} batch dims"
        )
    if ellipsis_at >= 0:
        fill = (slice(None),) * (batch_dims - consumed)
        parts = parts[:ellipsis_at] + fill + parts[ellipsis_at + 1 :]
        return parts
    return index


def _indexed_batch_shape(batch_size: torch.Size, index) -> torch.Size:
    """The batch shape ``index`` produces, computed on a zero-stride stand-in."""
    device = None
    for part in index if type(index) is tuple else (index,):
        if isinstance(part, Tensor):
            device = part.device
            break
    stand_in = torch.zeros((), dtype=torch.uint8, device=device).expand(batch_size)
    return stand_in[index].shape


def _new_tensordict(
    storage: dict, batch_size: torch.Size, device=None, names=None
) -> TensorDict:
    """A TensorDict over ``storage`` without validation (``TensorDict._from_storage``)."""
    self = object.__new__(TensorDict)
    self._tensordict = storage
    self._batch_size = batch_size
    self._device = device
    self._names = names
    self._is_locked = False
    self._last_lock_op = None
    self._lock_stack = None
    return self


def _new_unsafe(
    source: dict | None = None,
    batch_size=None,
    device=None,
    names=None,
    non_blocking=None,
    lock: bool = False,
    nested: bool = True,
    **kwargs,
) -> TensorDict:
    """``TensorDict._new_unsafe``: a TensorDict over ``source`` without validation;
    plain dicts in it become nested TensorDicts with the same batch size and device
    (with ``nested=True``, as in 0.15.3)."""
    storage = {} if source is None else source
    if type(batch_size) is not torch.Size:
        if batch_size is None:
            batch_size = torch.Size(())
        elif isinstance(batch_size, int):
            batch_size = torch.Size((batch_size,))
        else:
            batch_size = torch.Size(batch_size)
    if device is not None and not isinstance(device, torch.device):
        device = torch.device(device)
    if nested:
        for value in storage.values():
            if type(value) is dict:
                storage = {
                    key: (
                        _new_unsafe(value, batch_size, device)
                        if type(value) is dict
                        else value
                    )
                    for key, value in storage.items()
                }
                break
    out = _new_tensordict(storage, batch_size, device, names)
    if lock:
        out.lock_()
    return out


# The default of _rebuild_from's device/names: "as they are". Not NO_DEFAULT, which the
# generated ops' own defaults are: torch.compile guards that two defaults reached through
# class dicts are the same object with a Python guard that copies those dicts each call.
_UNCHANGED = object()


@register
class TensorDict(
    ReadsBase,  # first: its C reads (when built) come before every Python method
    TensorDictGeneratedOps,
    TensorDictBase,  # with the capabilities every kind has (persistence, map, ...)
):
    """A dictionary of tensors that share leading batch dimensions.

    >>> td = TensorDict({"obs": torch.zeros(3, 4), "next": {"obs": torch.ones(3, 4)}},
    ...                 batch_size=[3])
    >>> td["next", "obs"].shape
    torch.Size([3, 4])
    >>> td[0].batch_size
    torch.Size([])
    """

    __slots__ = (
        # "_tensordict" (the storage dict) is ReadsBase's (tensordict/_hotreads.py)
        "_batch_size",
        "_device",
        "_names",
        "_is_locked",
        "_last_lock_op",
        "_lock_stack",
        "_memmap_prefix",  # set while memory-mapped (tensordict/_persistence.py)
        "_shared_mark",  # set by share_memory_ (base._lock_shared_), read by is_shared
        "_consolidated",  # the storage of a consolidated tensordict (_consolidate.py)
        "__weakref__",
    )

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        install_hot_reads_subclass(cls)  # td[key] in C for subclasses too

    def __init__(
        self,
        source=None,
        batch_size=None,
        device=None,
        names=None,
        non_blocking: bool | None = None,
        lock: bool = False,
        **kwargs: Any,
    ) -> None:
        # the common call, a dict of entries, is told apart first
        if type(source) is dict and not kwargs:
            items = source.items()
        elif source is None:
            items = kwargs.items()
        elif kwargs:
            raise ValueError(  # 0.15.3's type
                "TensorDict takes its entries either as `source` or as keyword "
                f"arguments, not both (got source and {sorted(kwargs)})"
            )
        elif isinstance(source, TensorDictBase):
            items = source._own_items()
            if batch_size is None:
                batch_size = source.batch_size
        elif hasattr(source, "items"):
            items = source.items()
        else:
            raise TypeError(
                f"TensorDict source must be a mapping or a tensordict, got "
                f"{type(source).__name__}"
            )
        bs = self._batch_size = _parse_batch_size(batch_size)
        dev = self._device = None if device is None else _parse_device(device)
        self._names = None if names is None else _parse_names(names, len(bs))
        self._is_locked = False
        self._last_lock_op = None
        self._lock_stack = None
        storage = self._tensordict = {}
        n = len(bs)
        first = bs[0] if n else None
        second = bs[1] if n == 2 else None
        # with a device and no non_blocking, copies are queued without waiting and
        # waited for once at the end if one goes to the host (_device_recorder)
        owner = False
        try:
            for key, value in items:
                if type(key) is str and type(value) is Tensor:
                    # the common case, inlined: a plain tensor under a plain key
                    # (one- and two-dim batches, the most frequent, are checked by
                    # indexing: slicing and comparing a torch.Size costs twice as much)
                    try:
                        shape = value.shape
                    except RuntimeError:  # a strided nested tensor has no sizes
                        shape = batch_shape(value)
                    if n == 1:
                        wrong = not shape or shape[0] != first
                    elif n == 2:
                        wrong = (
                            len(shape) < 2 or shape[0] != first or shape[1] != second
                        )
                    else:
                        wrong = n and shape[:n] != bs
                    if wrong:
                        raise _errors.batch_mismatch(key, shape, bs)
                    if dev is not None and value.device != dev:
                        if non_blocking is None:
                            if not owner and not _device_recorder.marked:
                                _device_recorder.mark()
                                owner = True
                            value = value.to(dev, non_blocking=True)
                            if dev.type != "cuda":
                                _device_recorder.record_transfer(dev)
                        else:
                            value = value.to(dev, non_blocking=bool(non_blocking))
                    storage[key] = value
                elif type(key) is str:
                    storage[key] = self._validate(key, value)
                else:
                    self._set_path(unravel_key_to_tuple(key), value, inplace=False)
            if owner and _device_recorder.has_transfer():
                self._sync_all()
        finally:
            if owner:
                _device_recorder.unmark()
        if lock:
            self.lock_()

    # Build without validation: for results whose shapes are already known to be
    # right (indexing, generated ops, clones), over storage that is already this
    # class's (a dict value there is non-tensor data). Hot walks call the module
    # function _new_tensordict.
    _from_storage = staticmethod(_new_tensordict)
    # 0.15.3's entry point (TorchRL builds tensordicts with it): its signature, and
    # plain dicts in the source become nested tensordicts.
    _new_unsafe = staticmethod(_new_unsafe)

    @classmethod
    def from_dict(
        cls,
        input_dict,
        *,
        auto_batch_size: bool | None = None,
        batch_size=None,
        device=None,
        batch_dims: int | None = None,
        names=None,
    ) -> "TensorDict":
        """Build from a (nested) dict. Without ``batch_size`` the batch size is
        empty unless ``auto_batch_size=True`` or ``batch_dims`` is given.

        >>> td = TensorDict.from_dict({"a": torch.zeros(3, 4), "b": {"c": torch.ones(3)}}, auto_batch_size=True)
        >>> td.batch_size, td["b", "c"].shape
        (torch.Size([3]), torch.Size([3]))
        """
        if batch_size is not None and batch_dims is not None:
            raise ValueError(
                f"Cannot pass both batch_size and batch_dims to `from_dict`: "
                f"batch_size={batch_size!r} says the batch size, batch_dims="
                f"{batch_dims!r} asks for it to be found; give one of them"
            )
        if batch_size is not None:
            return cls(input_dict, batch_size=batch_size, device=device, names=names)
        td = cls(input_dict, device=device)
        if auto_batch_size or batch_dims is not None:
            td.auto_batch_size_(batch_dims)
            if names is not None:
                td.names = names
        return td

    @classmethod
    def from_list(
        cls,
        input,
        *,
        auto_batch_size: bool | None = None,
        batch_size=None,
        device=None,
        batch_dims: int | None = None,
        names=None,
        lazy: bool | None = None,
    ):
        """One tensordict per mapping of ``input`` (``from_dict``), stacked along a new
        first dim. ``batch_size``, ``batch_dims`` and ``names`` describe the result
        (the new dim included). The stack is dense where the tensordicts have the same
        keys and shapes, else a :class:`LazyStackedTensorDict`; ``lazy=True`` always
        gives a lazy stack, ``lazy=False`` always a dense one (an error where the
        tensordicts differ).

        >>> td = TensorDict.from_list([{"a": torch.zeros(2)}, {"a": torch.ones(2)}])
        >>> td.batch_size, td["a"][1].tolist()
        (torch.Size([2]), [1.0, 1.0])
        """
        lazy_cls = container_class("LazyStackedTensorDict")
        members, _, names = lazy_cls._mapping_members(
            list(input),
            "from_list",
            stack_dim=0,
            auto_batch_size=bool(auto_batch_size),
            batch_size=batch_size,
            batch_dims=batch_dims,
            device=device,
            names=names,
        )
        if lazy:
            stack = lazy_cls(*members, stack_dim=0)
        elif lazy is None:
            stack = lazy_cls.maybe_dense_stack(members, 0)
        else:
            stack = torch.stack(members, 0)
        if names is not None:
            stack.names = names
        return stack

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        bs = self._batch_size if batch_size is None else _parse_batch_size(batch_size)
        if names is NO_DEFAULT:
            names = self._names if batch_size is None else None
        else:
            names = _parse_names(names, len(bs))
        device = self._device if device is NO_DEFAULT else _parse_device(device)
        return _new_tensordict({}, bs, device, names)

    # ------------------------------------------------------------------ attributes
    @property
    def batch_size(self) -> torch.Size:
        """The leading dimensions every entry shares (settable: a new size must match
        the entries' leading dims, else ``RuntimeError``).

        >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
        >>> td.batch_size = [3, 4]
        >>> td.batch_size
        torch.Size([3, 4])
        """
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        new = _parse_batch_size(value)
        n = len(new)
        for key, entry in self._tensordict.items():
            if isinstance(entry, Tensor):
                if entry.shape[:n] != new and not is_unbatched(entry):
                    raise _errors.batch_size_incompatible(key, entry.shape, new)
            elif isinstance(entry, TensorDictBase):
                if entry.batch_size[:n] != new:
                    if entry.batch_dims < n:
                        try:
                            entry.batch_size = new
                        except RuntimeError:
                            raise _errors.batch_size_incompatible(
                                key, entry.batch_size, new
                            ) from None
                    else:
                        raise _errors.batch_size_incompatible(
                            key, entry.batch_size, new
                        )
        if self._names is not None and len(self._names) != n:
            self._names = None
        self._batch_size = new

    # ------------------------------------------------------------------ storage
    def _own_items(self):
        return self._tensordict.items()

    def _own_keys(self):
        return self._tensordict.keys()

    def _own_values(self):
        return self._tensordict.values()

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        try:
            return self._tensordict[key]
        except KeyError:
            if default is NO_DEFAULT and not missing_ok:
                raise _errors.key_missing(key, self._tensordict) from None
            return default

    def _dense_get(self, key: tuple) -> Any:
        """The entry at a flat tuple of strings when every level on the way is a
        dense TensorDict; ``_MISSING`` otherwise (the general path then decides,
        errors included)."""
        value = self
        try:
            for part in key:
                value = value._tensordict[part]
        except (KeyError, AttributeError, TypeError):
            return _MISSING
        return value

    # The dict-like reads below are called in users' loops. Where the C extension is
    # built, tensordict._hotreads.install (after the class) replaces get/keys/values/
    # items in this class with C methods and makes td[key] run C; each falls back to
    # the Python method kept as _get_py, _keys_py, ..., which stays the reference
    # behaviour (and what torch.compile traces).
    # Their signatures have no keyword-only parameter: CPython (3.11+) specialises
    # calls to such functions (no generic call path), which is a third of the cost
    # of `key in td.keys()` on the pure-Python path. `sort` stays a keyword in every
    # call the library and its users make.
    def keys(self, include_nested=False, leaves_only=False, is_leaf=None, sort=False):
        """As :meth:`TensorDictBase.keys`; with no argument, the storage dict's own live
        keys view, returned without a further call (the hot path of ``key in td.keys()``),
        as a ``_StringKeys`` (``("a",) in td.keys()`` is ``"a" in td.keys()``).

        >>> td = TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.zeros(2)))
        >>> list(td.keys())
        ['a', 'sub']
        >>> list(td.keys(include_nested=True, leaves_only=True))
        ['a', ('sub', 'b')]
        """
        if include_nested or leaves_only or sort:
            return _DenseKeysView(self, include_nested, leaves_only, is_leaf, sort)
        return string_keys(self._tensordict.keys())

    _keys_py = keys

    def values(self, include_nested=False, leaves_only=False, is_leaf=None, sort=False):
        """As :meth:`TensorDictBase.values`; with no argument, the storage's own view.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2))
        >>> sum(v.sum() for v in td.values())
        tensor(2.)
        """
        if include_nested or leaves_only or sort:
            return TensorDictBase.values(
                self, include_nested, leaves_only, is_leaf, sort=sort
            )
        return _entries_as_read(self).values()

    _values_py = values

    def items(self, include_nested=False, leaves_only=False, is_leaf=None, sort=False):
        """As :meth:`TensorDictBase.items`; with no argument, the storage's own view.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2))
        >>> [(k, v.sum().item()) for k, v in td.items()]
        [('a', 0.0), ('b', 2.0)]
        """
        if include_nested or leaves_only or sort:
            return TensorDictBase.items(
                self, include_nested, leaves_only, is_leaf, sort=sort
            )
        return _entries_as_read(self).items()

    _items_py = items

    def get(
        self,
        key,
        default=_NOT_GIVEN,
        as_list=False,
        as_padded_tensor=False,
        as_nested_tensor=False,
        padding_side="right",
        layout=None,
        padding_value=0.0,
    ):
        """The entry at ``key``; ``get(key, default)`` returns ``default`` if missing.
        The other arguments are a lazy stack's: a dense tensordict's entries are one
        tensor already, so they change nothing here, as in 0.15.3 (code written for
        either container passes them). No ``**kwargs``: CPython specialises calls to
        functions without it, and this is the hot read.

        >>> td = TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.ones(2)))
        >>> td.get(("sub", "b"))
        tensor([1., 1.])
        >>> td.get("missing", torch.zeros(1))
        tensor([0.])
        """
        if type(key) is str:
            value = self._tensordict.get(key, _MISSING)
            if type(value) is Tensor:  # the usual entry: one check, then return
                return value
        elif type(key) is tuple and key and type(key[0]) is str:
            value = self._dense_get(key)
        else:
            value = _MISSING
        if value is not _MISSING:
            if isinstance(value, Tensor):
                if is_unbatched(value):  # labelled with the batch size it is read at
                    return _unbatched_read(value, _holder_of(self, key)._batch_size)
                return value
            if isinstance(value, TensorDictBase):
                return value
            # non-tensor data (stored as the value itself) reads as NonTensorData, as
            # in 0.15.3; td[key] gives the value
            return _non_tensor_entry(self, key, value)
        if (as_list or as_padded_tensor or as_nested_tensor) and type(key) is tuple:
            # a path through a lazy stack: its stack reads the stacked forms
            sub = self._get_path(key[:-1], None) if len(key) > 1 else None
            if isinstance(sub, TensorDictBase) and not isinstance(sub, TensorDict):
                return sub.get(
                    key[-1],
                    None if default is _NOT_GIVEN else default,
                    as_list=as_list,
                    as_padded_tensor=as_padded_tensor,
                    as_nested_tensor=as_nested_tensor,
                    padding_side=padding_side,
                    layout=layout,
                    padding_value=padding_value,
                )
        if default is _NOT_GIVEN:  # TensorDictBase.get decides: None, or raise
            return TensorDictBase.get(self, key)
        return TensorDictBase.get(self, key, default)

    _get_py = get

    def __getitem__(self, index):
        if type(index) is str:
            try:
                value = self._tensordict[index]
            except KeyError:
                raise _errors.key_missing(index, self._tensordict) from None
            # a NonTensorStack reads as the list of its values (entry_value)
            if type(value) is Tensor or type(value) is TensorDict:
                return value
            if is_unbatched(value):
                return _unbatched_read(value, self._batch_size)
            return entry_value(value)
        if type(index) is tuple:
            # self._dense_get(index), inlined and unrolled for the first three levels:
            # the hot nested read, where a loop and checks of the key cost as much as
            # the lookups. A tuple that is no key (empty, or a batch index) fails here
            # at its first part and goes on below.
            try:
                value = self._tensordict[index[0]]
                depth = len(index)
                if depth > 1:
                    value = value._tensordict[index[1]]
                    if depth > 2:
                        value = value._tensordict[index[2]]
                        if depth > 3:
                            for part in index[3:]:
                                value = value._tensordict[part]
            except (KeyError, AttributeError, TypeError, IndexError):
                value = _MISSING
            if type(value) is Tensor:
                return value
            if value is not _MISSING:
                if type(value) is TensorDict:
                    return value
                if is_unbatched(value):
                    holder = _holder_of(self, index)
                    return _unbatched_read(value, holder._batch_size)
                return entry_value(value)
            if index and _looks_like_key(index):
                return entry_value(self._get_path(unravel_key_to_tuple(index)))
        elif isinstance(index, tuple) and index and _looks_like_key(index):
            return entry_value(self._get_path(unravel_key_to_tuple(index)))
        elif isinstance(index, str):  # a str subclass (a str-valued Enum): a key too
            return entry_value(self._get_str(index, NO_DEFAULT))
        return self._index(index)

    _getitem_py = __getitem__

    def _dense_parent(self, key: tuple):
        """For a flat tuple key whose parents all exist as dense TensorDicts, the
        TensorDict holding the last part (else None: the general path handles it)."""
        td = self if len(key) == 1 else self._dense_get(key[:-1])
        if type(td) is not TensorDict or type(key[-1]) is not str:
            return None  # _MISSING, a nested tuple key or a non-dense level
        return td

    def set(
        self, key, item, inplace: bool = False, *, non_blocking: bool = False, **kwargs
    ):
        if type(key) is str:
            self._set_str(key, item, inplace=inplace, validated=False)
            return self
        if type(key) is tuple and key:
            parent = self._dense_parent(key)
            if parent is not None:
                parent._set_str(key[-1], item, inplace=inplace, validated=False)
                return self
            if self._set_under_new_levels(key, item):
                return self
        return TensorDictBase.set(self, key, item, inplace, non_blocking=non_blocking)

    def __setitem__(self, index, value) -> None:
        if type(index) is str:
            self._set_str(index, value, inplace=False, validated=False)
            return
        if type(index) is tuple and index and type(index[0]) is str:
            parent = self._dense_parent(index)
            if parent is not None:
                parent._set_str(index[-1], value, inplace=False, validated=False)
                return
            if self._set_under_new_levels(index, value):
                return
        TensorDictBase.__setitem__(self, index, value)

    def _set_under_new_levels(self, key: tuple, value) -> bool:
        """Set a flat tuple-of-strings ``key`` some of whose levels are missing, where
        every level on the way is an unlocked dense TensorDict: ``value`` is
        validated first, against the deepest existing level (the new ones are empty
        copies of its batch size, device and names), so a bad value raises before
        any level is made and no snapshot is needed. False (nothing done) when
        that does not apply: the general path decides."""
        td = self
        depth = 0
        for part in key[:-1]:
            if type(part) is not str:
                return False
            nested = td._tensordict.get(part, _MISSING)
            if nested is _MISSING:
                break
            if type(nested) is not TensorDict:
                return False
            td = nested
            depth += 1
        if td._is_locked or type(key[-1]) is not str:
            return False
        for part in key[depth:-1]:
            if type(part) is not str:
                return False
        value = td._validate(key[-1], value)
        for part in key[depth:-1]:
            nested = td._new_empty()
            td._tensordict[part] = nested
            td = nested
        td._tensordict[key[-1]] = value
        return True

    def _validate(self, key, value):
        """Check (and convert) a value entering at ``key``; return what to store."""
        bs = self._batch_size
        if isinstance(value, Tensor):
            try:
                shape = batch_shape(value) if value.is_nested else value.shape
            except RuntimeError:
                if not is_lazy(value):
                    raise
                # an uninitialized parameter (torch.nn.LazyLinear...) has no shape to
                # check until its module's first call: it is stored as it is
                return value
            n = len(bs)
            # one batch dim (the usual case) is checked without slicing a torch.Size,
            # which costs as much as the rest of this check
            if n == 1:
                mismatch = not shape or shape[0] != bs[0]
            else:
                mismatch = shape[:n] != bs
            if mismatch and not is_unbatched(value):
                raise _errors.batch_mismatch(key, shape, bs)
            dev = self._device
            if dev is not None and value.device != dev:
                value = value.to(dev)
            return value
        if isinstance(value, TensorDictBase):
            # non-tensor data: NonTensorData gives its value, a NonTensorStack is checked
            if value._is_non_tensor:
                return value._entry_for(key, bs, self._device)
            if value.batch_size[: len(bs)] != bs:
                value = _given_batch_size(key, value, bs)
            if self._names is not None and type(value) is TensorDict:
                value = _named_like_parent(key, value, self._names)
            dev = self._device
            if dev is not None and value.device != dev:
                value = value._moved_to(dev)
            return value
        if isinstance(value, dict):  # the names of the dims it shares with self
            return TensorDict(
                value, batch_size=bs, device=self._device, names=self._names
            )
        if isinstance(value, _CONVERTIBLE):
            try:
                tensor = torch.as_tensor(value, device=self._device)
            except (TypeError, ValueError, RuntimeError):
                if (
                    type(value) is list
                    and value
                    and all(isinstance(v, Tensor) for v in value)
                    and len({v.shape for v in value}) == 1
                ):
                    # tensors of one shape: stacked, as 0.15.3 does
                    return self._validate(key, torch.stack(value))
                if type(value) is list and value and _modes.list_to_stack():
                    # a list of non-tensor values: one per element, as in 0.15.3
                    stack = container_class("NonTensorStack").from_list(value)
                    return self._validate(key, stack)
                return value  # non-tensor data kept as given
            if tensor.shape[: len(bs)] != bs:
                raise _errors.batch_mismatch(key, tensor.shape, bs)
            return tensor
        return value  # non-tensor data, stored as given

    def _set_str(
        self,
        key: str,
        value,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        storage = self._tensordict
        if inplace:
            existing = storage.get(key)
            if isinstance(existing, Tensor):
                if not isinstance(value, Tensor):
                    try:
                        value = torch.as_tensor(value, device=existing.device)
                    except (TypeError, ValueError, RuntimeError) as err:
                        mismatch = _errors.inplace_type_mismatch(key, existing, value)
                        raise mismatch from err
                if not validated:
                    value = self._validate(key, value)
                try:
                    existing.copy_(value)
                except RuntimeError as err:
                    raise _errors.inplace_mismatch(
                        key, value.shape, existing.shape
                    ) from err
                return
            if isinstance(existing, TensorDictBase) and isinstance(
                value, (TensorDictBase, dict)
            ):
                existing.update(value, inplace=True)
                return
            if (
                existing is not None
                and not isinstance(existing, (Tensor, TensorDictBase))
                and isinstance(value, Tensor)
            ):
                raise _errors.inplace_type_mismatch(key, existing, value)
            if (
                existing is not None
                and not isinstance(existing, (Tensor, TensorDictBase))
                and not isinstance(value, Tensor)
                and getattr(value, "_is_non_tensor", True)
            ):
                # a non-tensor value replaced by another, in place: allowed while
                # locked (as 0.15.3's NonTensorData.update_), and written to the
                # folder of a memory-mapped tensordict
                if isinstance(value, TensorDictBase):  # a NonTensorData, a stack
                    value = self._validate(key, value)
                storage[key] = value  # (a number stays a number, as it was)
                if getattr(self, "_memmap_prefix", None) is not None:
                    self._memmap_value_written(key)
                return
        if self._is_locked:
            raise _errors.locked(f"set the key {key!r}")
        storage[key] = value if validated else self._validate(key, value)

    def _del_str(self, key: str) -> None:
        if self._is_locked:
            raise _errors.locked(f"delete the key {key!r}")
        try:
            del self._tensordict[key]
        except KeyError:
            raise _errors.key_missing(key, self._tensordict) from None

    def _adopt(self, source) -> None:
        # update(update_batch_size=True): source's batch size and entries
        entries = {key: source._get_str(key, NO_DEFAULT) for key in source._own_keys()}
        self._tensordict = {}
        self._batch_size = source.batch_size
        self._names = None
        for key, value in entries.items():
            self._set_str(key, value, inplace=False, validated=False)

    def _replace_contents(self, other: "TensorDict") -> None:
        if self._is_locked:
            raise _errors.locked("replace the entries in place")
        self._tensordict = other._tensordict

    def unflatten_keys(self, separator: str = ".", inplace: bool = False):
        """As :meth:`TensorDictBase.unflatten_keys`: the tree is built as plain dicts,
        one lookup per key, and each level made once at the end; keys that merge or
        collide, and entries that are not dense tensordicts, take the general path.

        >>> td = TensorDict({"a.b": torch.zeros(2), "a.c": torch.zeros(2)})
        >>> list(td.unflatten_keys(".").keys(True, True))
        [('a', 'b'), ('a', 'c')]
        """
        storage = _unflattened(self._tensordict, separator)
        if storage is None:
            return TensorDictBase.unflatten_keys(self, separator, inplace)
        out = _dict_tree_to_td(storage, self)
        if inplace:
            self._replace_contents(out)
            return self
        out._last_lock_op = _WriteBack(self, "flatten_keys", separator)
        return out

    # ------------------------------------------------------------------ indexing
    def _index(self, index) -> "TensorDict":
        return self._index_normalized(_normalize_index(index, self._batch_size))

    def _index_normalized(self, idx) -> "TensorDict":
        """``self[idx]`` for an index ``_normalize_index`` gave (nested levels share
        it rather than normalising it again)."""
        if (
            type(idx) is Tensor
            and idx.ndim == 1
            and idx.dtype in _ROW_INDEX_DTYPES
            and idx.device.type == "cpu"
        ):
            # rows by number (what samplers give): index_select, a fifth cheaper per
            # leaf than torch's general indexing on the CPU (on a GPU it is the slower
            # of the two: 1004 against 857 µs for 100 leaves on an H200); it refuses
            # negative or out-of-range rows and an index on another device, which the
            # general indexing below then wraps (negatives) or reports
            try:
                return self._index_leaves(idx, True)
            except (IndexError, RuntimeError):
                pass
        return self._index_leaves(idx, False)

    def _index_leaves(self, idx, rows: bool) -> "TensorDict":
        """``self[idx]``; ``rows``: ``idx`` is a 1-D tensor of row numbers, taken with
        ``index_select`` from contiguous plain and memory-mapped leaves."""
        bs = self._batch_size
        n = len(bs)
        # a tensor index gives copies, never views: MemoryMappedTensor's own
        # __getitem__, which only decides which views stay mapped, can be skipped
        copies = type(idx) is Tensor and idx.ndim > 0
        storage = {}
        new_bs = None
        for key, value in self._tensordict.items():
            if isinstance(value, Tensor):
                kind = type(value)
                if (
                    rows
                    and (kind is Tensor or kind is MemoryMappedTensor)
                    and value.is_contiguous()
                ):
                    result = _index_select(value, 0, idx)
                elif kind is Tensor:
                    result = value[idx]
                elif copies and kind is MemoryMappedTensor:
                    result = _tensor_getitem(value, idx)
                elif is_unbatched(value):
                    storage[key] = value  # no batch dims to index
                    continue
                else:
                    result = value[idx]
                if new_bs is None:
                    new_bs = result.shape[: result.ndim - value.ndim + n]
                storage[key] = result
            elif isinstance(value, TensorDict):
                if type(value) is TensorDict:
                    result = value._index_leaves(idx, rows)
                else:
                    result = value._index(idx)
                if new_bs is None:
                    rbs = result._batch_size
                    new_bs = rbs[: len(rbs) - len(value._batch_size) + n]
                storage[key] = result
            elif isinstance(value, TensorDictBase):
                # _index: a non-tensor stack keeps one value for equal elements
                storage[key] = value._index(idx)
            else:
                storage[key] = value
        if new_bs is None:
            new_bs = _indexed_batch_shape(bs, idx)
        names = None
        if self._names is not None:
            names = _index_names(self._names, idx, len(new_bs))
        result = _new_tensordict(storage, new_bs, self._device, names)
        if self._is_locked and getattr(self, "_memmap_prefix", None) is not None:
            # a view of a memory-mapped tensordict stays one
            result._memmap_view_from(self, idx)
        return result

    def _set_at_index(self, index, value) -> None:
        self._set_at_normalized(_normalize_index(index, self._batch_size), value)

    def _set_at_normalized(self, idx, value) -> None:
        """``_set_at_index`` once ``idx`` is normalized (:func:`_normalize_index`): a
        nested level takes it as it is (its batch dims start with this level's)."""
        if isinstance(value, (TensorDictBase, dict)):
            value_dims = value.batch_dims if isinstance(value, TensorDictBase) else None
            items = (
                value._own_items()
                if isinstance(value, TensorDictBase)
                else value.items()
            )
            for key, sub in items:
                if type(key) is not str:
                    path = unravel_key_to_tuple(key)
                    target = self
                    for part in path[:-1]:
                        nxt = target._get_str(part, None)
                        if nxt is None:
                            nxt = target._create_nested_str(part)
                        target = nxt
                    target._set_at_index(idx, {path[-1]: sub})
                    continue
                existing = self._tensordict.get(key)
                if existing is None:
                    existing = self._preallocate(key, sub, idx, value_dims)
                    if existing is None:
                        continue
                if isinstance(existing, Tensor):
                    if isinstance(sub, TensorDictBase):
                        raise TypeError(
                            f"cannot write a tensordict into the tensor at key {key!r}"
                        )
                    existing[idx] = sub
                elif type(existing) is TensorDict:
                    existing._set_at_normalized(idx, sub)
                elif isinstance(existing, TensorDictBase):
                    existing._set_at_index(idx, sub)
                else:  # non-tensor data: one value, or one per element if they differ
                    self._tensordict[key] = container_class("NonTensorStack")._write_at(
                        existing, idx, sub, self._batch_size
                    )
            return
        if isinstance(value, Tensor) or isinstance(value, (bool, int, float)):
            for leaf in self._leaves():
                leaf[idx] = value
            return
        raise TypeError(
            f"cannot write a {type(value).__name__} at an index of a TensorDict: "
            f"expected a tensordict, a dict, a tensor or a number"
        )

    def _preallocate(self, key: str, value, idx, value_dims):
        """Allocate, on first write at an index, an entry covering the whole batch
        (filled with zeros) that later writes update in place."""
        if self._is_locked:
            raise _errors.locked(f"set the key {key!r}")
        bs = self._batch_size
        if isinstance(value, _CONVERTIBLE) and not isinstance(value, (list, tuple)):
            value = torch.as_tensor(value)
        if isinstance(value, Tensor):
            if value_dims is None:
                value_dims = len(_indexed_batch_shape(bs, idx))
            feature = value.shape[value_dims:]
            device = self._device if self._device is not None else value.device
            entry = torch.zeros(bs + feature, dtype=value.dtype, device=device)
        elif isinstance(value, TensorDictBase):
            if value_dims is None:
                value_dims = len(_indexed_batch_shape(bs, idx))
            extra = value.batch_size[value_dims:]
            entry = _new_tensordict({}, bs + extra, self._device)
            if getattr(value, "_is_tensorclass", False):  # keeps its class
                entry = type(value)._from_td(entry)
        elif isinstance(value, dict):
            entry = _new_tensordict({}, bs, self._device)
        else:
            self._tensordict[key] = value  # non-tensor data
            return None
        self._tensordict[key] = entry
        return entry

    # ------------------------------------------------------------------ leaves
    def _leaves(self) -> list[Tensor]:
        out: list[Tensor] = []
        _collect_leaves(self, out)
        return out

    def _iter_leaves(self):
        for value in self._tensordict.values():
            if type(value) is Tensor or isinstance(value, Tensor):
                yield value
            elif isinstance(value, TensorDictBase):
                yield from value._iter_leaves()

    def _scan_entries(self):
        # the entries as stored: any()/all() skip non-tensor data and let a nested
        # container answer for itself (TensorDictBase._scan_entries)
        return self._tensordict.values()

    def _leaves_and_rebuild(self):
        leaves: list[Tensor] = []
        _collect_leaves(self, leaves)
        return leaves, self._rebuild_from

    def _map_leaves(self, fn):
        return _map_same(self, fn)

    def _batched_leaves_and_rebuild(self):
        # UnbatchedTensor leaves left out; the rebuild puts them back as they are
        leaves: list[Tensor] = []
        if _collect_batched_leaves(self, leaves):
            return leaves, self._rebuild_keeping_unbatched
        return leaves, self._rebuild_from

    def _rebuild_keeping_unbatched(self, new_leaves: list, **options) -> "TensorDict":
        return self._rebuild_from(new_leaves, keep_unbatched=True, **options)

    def _rebuild_from(
        self,
        new_leaves: list,
        *,
        batch_size=None,
        device=_UNCHANGED,
        names=_UNCHANGED,
        leaf_fn=None,
        keep_unbatched: bool = False,
        stack_non_tensor: bool = False,
    ) -> "TensorDict":
        """A TensorDict shaped like this one holding ``new_leaves``: the ``rebuild``
        of ``_leaves_and_rebuild`` (a bound method, so nothing is allocated per call).
        With ``batch_size``, every level's batch size becomes ``batch_size`` followed
        by the dims that level has beyond this one's batch dims. ``leaf_fn`` (the
        per-leaf op that made ``new_leaves``) lets containers without tensor leaves,
        such as non-tensor stacks, move their elements the same way."""
        changes = None
        new_device = device is not _UNCHANGED and device is not NO_DEFAULT
        if (
            batch_size is not None
            or new_device
            or leaf_fn is not None
            or keep_unbatched
        ):
            # stack_non_tensor: a non-tensor value of a level whose batch size changes
            # becomes a NonTensorStack of it (expand, unsqueeze: as 0.15.3)
            new_bs = None if batch_size is None else _parse_batch_size(batch_size)
            # NO_DEFAULT: what _Changes reads as "keep each level's device"
            device = device if new_device else NO_DEFAULT
            changes = _Changes(device, new_bs, len(self._batch_size), leaf_fn)
            changes.keep_unbatched = keep_unbatched
            changes.stack_non_tensor = stack_non_tensor
        it = iter(new_leaves)
        try:
            if changes is None:  # the hot path: only the leaves change
                out = _rebuild_same(self, it)
            else:
                out = _rebuild(self, it, changes)
        except StopIteration:  # fewer new leaves than leaves
            out = None
        if out is None or next(it, NO_DEFAULT) is not NO_DEFAULT:
            raise ValueError(
                f"rebuild expected {len(self._leaves())} leaves, got {len(new_leaves)}"
            )
        if names is not _UNCHANGED and names is not NO_DEFAULT:
            out._names = _parse_names(names, len(out._batch_size))
            if out._names is not None:  # nested levels (new objects) name them too
                _spread_names(out, copy=False)
        return out

    @property
    def names(self) -> list:
        """One name (or None) per batch dim; nested tensordicts share the names of
        the dims they have in common with this one (as 0.15.3).

        >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4], names=["time", None])
        >>> td.names
        ['time', None]
        """
        return (
            [None] * len(self._batch_size) if self._names is None else list(self._names)
        )

    @names.setter
    def names(self, value) -> None:
        self._names = _parse_names(value, len(self._batch_size))
        _spread_names(self, copy=False)

    def _with_dense_stacks(
        self, op: str, key: tuple = (), outer_dims: int | None = None
    ) -> "TensorDict":
        storage = None  # a copy of the storage, made at the first replaced entry
        if outer_dims is None:  # the batch dims of the tensordict the op runs on
            outer_dims = len(self._batch_size)
        for name, value in self._tensordict.items():
            if type(value) is Tensor:  # the common case first
                continue
            if isinstance(value, Tensor) or not isinstance(value, TensorDictBase):
                continue
            dense = value._with_dense_stacks(op, key + (name,), outer_dims)
            if dense is not value:
                if storage is None:
                    storage = dict(self._tensordict)
                storage[name] = dense
        if storage is None:
            return self
        return _new_tensordict(storage, self._batch_size, self._device, self._names)

    def _holds_lazy_stack(self) -> bool:
        for value in self._tensordict.values():
            if type(value) is Tensor or not isinstance(value, TensorDictBase):
                continue
            if isinstance(value, container_class("LazyStackedTensorDict")):
                return True
            if value._holds_lazy_stack():
                return True
        return False

    def _apply(self, fn, others, **options):
        # The common call, td.apply(fn) with no other tensordict and no option that
        # changes the result's shape, device or names, takes one lean walk; the rest
        # is the general loop of TensorDictBase.
        if others or any(
            options.get(name, value) is not value for name, value in _PLAIN_APPLY
        ):
            return TensorDictBase._apply(self, fn, others, **options)
        return _apply_leaves(self, fn, options["filter_empty"])

    def _operand_leaves(self, other, op: str, default=None) -> list:
        out: list = []
        _collect_operand(self, other, out, op, default, ())
        return out

    def _moved_to(self, device) -> "TensorDict":
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([leaf.to(device) for leaf in leaves], device=device)


install_hot_reads(TensorDict)  # the C reads, where built (tensordict/_hotreads.py)


# The options of TensorDictBase._apply for which TensorDict takes _apply_leaves.
_PLAIN_APPLY = (
    ("named", False),
    ("inplace", False),
    ("call_on_nested", False),
    ("batch_size", None),
    ("device", NO_DEFAULT),
    ("names", NO_DEFAULT),
    ("is_leaf", None),
)


def _apply_leaves(td: TensorDict, fn, filter_empty: bool | None) -> TensorDict:
    """``td.apply(fn)``: ``fn`` on every tensor, results validated as any write is,
    ``None`` results dropped, nested tensordicts left empty dropped as
    ``filter_empty`` says (``_drops_empty``); other nested containers apply ``fn``
    their own way."""
    storage = {}
    for key, value in td._tensordict.items():
        if isinstance(value, Tensor):
            result = fn(value)
            if result is not None:
                storage[key] = td._validate(key, result)
            continue
        if isinstance(value, TensorDict):
            result = _apply_leaves(value, fn, filter_empty)
        elif _is_node(value):  # a lazy stack, a tensorclass: its own apply
            result = value.apply(fn, filter_empty=filter_empty)
        else:  # non-tensor data: carried over as it is
            storage[key] = value
            continue
        if result is not None and not _drops_empty(result, value, filter_empty):
            storage[key] = result
    return _new_tensordict(storage, td._batch_size, td._device, td._names)


def _holder_of(td: TensorDict, key) -> TensorDict:
    """The dense level holding the entry at a str or flat tuple ``key`` (present)."""
    return td if type(key) is str or len(key) == 1 else td._dense_get(key[:-1])


def _entries_as_read(td: TensorDict) -> dict:
    """The storage dict itself (its views are live), or, where it holds non-tensor
    data, a copy in which each such value is the ``NonTensorData`` that ``get`` returns
    (``values()``/``items()`` yield what ``get`` reads, as 0.15.3's)."""
    storage = td._tensordict
    for value in storage.values():
        if not isinstance(value, (Tensor, TensorDictBase)):
            break
    else:
        return storage
    return {
        key: (
            value
            if isinstance(value, (Tensor, TensorDictBase))
            else _non_tensor_entry(td, key, value)
        )
        for key, value in storage.items()
    }


def _non_tensor_entry(td: TensorDict, key, value) -> Any:
    """A non-tensor value stored at ``key`` as ``td.get(key)`` returns it: a
    ``NonTensorData`` with the batch size and device of the level holding it."""
    parent = td if type(key) is str or len(key) == 1 else td._dense_get(key[:-1])
    data = container_class("NonTensorData")(
        data=value,
        batch_size=parent._batch_size,
        device=parent._device,
        names=parent._maybe_names(),
    )
    # As 0.15.3's stored NonTensorData: it writes through to the tensordict holding
    # it (update_, update(inplace=True)) and shares its state (locked, shared,
    # memory-mapped)
    data._link_to(parent, key if type(key) is str else key[-1])
    return data


def _given_batch_size(key, value: TensorDictBase, bs: torch.Size) -> TensorDictBase:
    """A nested tensordict without batch dims entering a parent that has some takes the
    parent's batch size, as in 0.15.3 (a shallow copy: ``value`` is left as it is);
    where its entries do not start with it, or it has batch dims of its own that
    differ, the error names the key."""
    if value.batch_size or value._is_non_tensor:
        raise _errors.batch_mismatch(key, value.batch_size, bs)
    copy = value.copy()
    if copy.is_locked:
        copy.unlock_()
    try:
        copy.batch_size = bs
    except (RuntimeError, ValueError):
        err = _errors.batch_mismatch(key, value.batch_size, bs)
        for name, leaf in value.items(True, True):
            if isinstance(leaf, Tensor) and leaf.shape[: len(bs)] != bs:
                # 0.15.3's phrase first (existing code matches it): the entry whose
                # shape does not start with the batch size
                name = name if isinstance(name, str) else ".".join(name)
                err = RuntimeError(
                    f"the Tensor {name} has shape {leaf.shape} which is incompatible "
                    f"with the batch-size {torch.Size(bs)}. {err.args[0]}"
                )
                break
        raise err from None
    return copy


def _named_like_parent(key, value: TensorDict, names: list) -> TensorDict:
    """A nested tensordict entering a parent with dim names: a shallow copy whose
    leading dims have the parent's names (``value`` itself when it has them); a name
    it gives one of those dims that differs is an error naming the key."""
    n = len(names)
    own = value._names or [None] * len(value._batch_size)
    for have, want in zip(own[:n], names):
        if have is not None and want is not None and have != want:
            raise RuntimeError(
                f"the nested tensordict at {key!r} names its leading dims {own[:n]}, "
                f"which differ from the names of the tensordict holding it, {names}; "
                f"rename one of them first"
            )
    wanted = list(names) + list(own[n:])
    if list(own) == wanted:
        return value
    copy = _new_tensordict(
        dict(value._tensordict), value._batch_size, value._device, None
    )
    copy._names = _parse_names(wanted, len(value._batch_size))
    _spread_names(copy, copy=True)
    return copy


def _spread_names(td: TensorDict, *, copy: bool) -> None:
    """The nested TensorDicts of ``td`` take its names for the dims they share
    (``copy``: as renamed shallow copies, leaving the ones held elsewhere as they
    are)."""
    n = len(td._batch_size)
    names = td._names or [None] * n
    storage = td._tensordict
    for key, value in storage.items():
        if type(value) is not TensorDict or len(value._batch_size) < n:
            continue
        own = value._names or [None] * len(value._batch_size)
        wanted = list(names) + list(own[n:])
        if list(own) == wanted:
            continue
        if copy:
            value = storage[key] = _new_tensordict(
                dict(value._tensordict), value._batch_size, value._device, None
            )
        value._names = _parse_names(wanted, len(value._batch_size))
        _spread_names(value, copy=copy)


def _collect_batched_leaves(td: TensorDict, out: list) -> bool:
    """As :func:`_collect_leaves`, leaving out UnbatchedTensor leaves; True when it
    left some out."""
    skipped = False
    for value in td._tensordict.values():
        if type(value) is Tensor:
            out.append(value)
        elif type(value) is TensorDict:  # exact types first, as in _collect_leaves
            skipped = _collect_batched_leaves(value, out) or skipped
        elif isinstance(value, Tensor):
            if is_unbatched(value):
                skipped = True
            else:
                out.append(value)
        elif isinstance(value, TensorDict):
            skipped = _collect_batched_leaves(value, out) or skipped
        elif isinstance(value, TensorDictBase):
            out.extend(value._leaves())
    return skipped


def _collect_leaves(td: TensorDict, out: list) -> None:
    # exact types first: the isinstance checks after them cost more than the op itself
    # on small leaves (the per-op overhead benchmark)
    for value in td._tensordict.values():
        if type(value) is Tensor:
            out.append(value)
        elif type(value) is TensorDict:
            _collect_leaves(value, out)
        elif isinstance(value, Tensor):
            out.append(value)
        elif isinstance(value, TensorDict):
            _collect_leaves(value, out)
        elif isinstance(value, TensorDictBase):
            out.extend(value._leaves())


class _Changes:
    """What a rebuild changes at every level: the device, and the batch size (the new
    leading dims replace the root's ``root_dims`` batch dims; names are dropped).
    ``leaf_fn`` goes to nested containers that are not TensorDicts."""

    __slots__ = (
        "device",
        "batch_size",
        "root_dims",
        "extra",
        "keep_unbatched",
        "stack_non_tensor",
    )

    def __init__(self, device, batch_size, root_dims: int, leaf_fn) -> None:
        self.keep_unbatched = False  # UnbatchedTensor leaves kept as they are
        self.stack_non_tensor = False  # non-tensor values become NonTensorStacks
        self.device = device
        self.batch_size = batch_size
        self.root_dims = root_dims
        self.extra = {} if leaf_fn is None else {"leaf_fn": leaf_fn}

    def level(self, td: TensorDict, storage: dict) -> TensorDict:
        if self.batch_size is None:
            new_bs, names = td._batch_size, td._names
        else:
            new_bs, names = self.batch_size + td._batch_size[self.root_dims :], None
        device = td._device if self.device is NO_DEFAULT else self.device
        return _new_tensordict(storage, new_bs, device, names)

    def stacked_value(self, td: TensorDict, value) -> Any:
        """A non-tensor ``value`` of ``td`` as a NonTensorStack of the new batch size
        (the value itself where that level's batch size stays)."""
        if self.batch_size is None:
            return value
        new_bs = self.batch_size + td._batch_size[self.root_dims :]
        if new_bs == td._batch_size:
            return value
        device = td._device if self.device is NO_DEFAULT else self.device
        data = container_class("NonTensorData")(
            data=value, batch_size=new_bs, device=device
        )
        return container_class("NonTensorStack").from_nontensordata(data)

    def node(self, node: TensorDictBase, rebuild, new_leaves: list) -> TensorDictBase:
        sub_bs = None
        if self.batch_size is not None:
            sub_bs = self.batch_size + node.batch_size[self.root_dims :]
        return rebuild(new_leaves, batch_size=sub_bs, device=self.device, **self.extra)


def _rebuild_same(td: TensorDict, it) -> TensorDict:
    """:func:`_rebuild` without changes (elementwise ops, casts: the hot path): every
    level keeps its batch size, device and names; exact types are checked first."""
    storage = {}
    for key, value in td._tensordict.items():
        if type(value) is Tensor:
            storage[key] = next(it)
        elif type(value) is TensorDict:
            storage[key] = _rebuild_same(value, it)
        elif isinstance(value, Tensor):
            storage[key] = next(it)
        elif isinstance(value, TensorDict):
            storage[key] = _rebuild_same(value, it)
        elif isinstance(value, TensorDictBase):
            sub_leaves, sub_rebuild = value._leaves_and_rebuild()
            storage[key] = sub_rebuild([next(it) for _ in sub_leaves])
        else:
            storage[key] = value
    return _new_tensordict(storage, td._batch_size, td._device, td._names)


def _map_same(td: TensorDict, fn) -> TensorDict:
    """``TensorDict._map_leaves``: :func:`_rebuild_same` of ``fn`` of every leaf, in
    the one walk (no leaf list, no second walk)."""
    storage = {}
    for key, value in td._tensordict.items():
        if type(value) is Tensor:
            storage[key] = fn(value)
        elif type(value) is TensorDict:
            storage[key] = _map_same(value, fn)
        elif isinstance(value, Tensor):
            storage[key] = fn(value)
        elif isinstance(value, TensorDict):
            storage[key] = _map_same(value, fn)
        elif isinstance(value, TensorDictBase):
            storage[key] = value._map_leaves(fn)
        else:
            storage[key] = value
    return _new_tensordict(storage, td._batch_size, td._device, td._names)


def _rebuild(td: TensorDict, it, changes: _Changes | None = None) -> TensorDict:
    """A TensorDict shaped like ``td`` whose tensor leaves are taken from ``it`` in
    ``_collect_leaves`` order, every level changed as ``changes`` says (without
    ``changes``, :func:`_rebuild_same`: every level keeps its batch size, device and
    names)."""
    if changes is None:
        return _rebuild_same(td, it)
    storage = {}
    for key, value in td._tensordict.items():
        if type(value) is Tensor:
            storage[key] = next(it)
        elif isinstance(value, Tensor):
            if changes.keep_unbatched and is_unbatched(value):
                storage[key] = value
            else:
                storage[key] = next(it)
        elif type(value) is TensorDict or isinstance(value, TensorDict):
            storage[key] = _rebuild(value, it, changes)
        elif isinstance(value, TensorDictBase):
            sub_leaves, sub_rebuild = value._leaves_and_rebuild()
            new = [next(it) for _ in sub_leaves]
            node = changes.node(value, sub_rebuild, new)
            if value._is_non_tensor and isinstance(
                node, container_class("NonTensorData")
            ):  # a stack left with one element: stored as its value, as on writes
                node = node.data
            storage[key] = node
        elif changes.stack_non_tensor:
            storage[key] = changes.stacked_value(td, value)
        else:
            storage[key] = value
    return changes.level(td, storage)


def _collect_operand(td, other, out, op, default, prefix) -> None:
    # Tensors and nested tensordicts must match key by key; non-tensor entries have no
    # leaf to combine, so they take no part in the matching.
    other_storage = other._tensordict if isinstance(other, TensorDict) else None
    matched = 0
    for key, value in td._tensordict.items():
        is_tensor = isinstance(value, Tensor)
        if not is_tensor and not _is_node(value):
            continue
        if other_storage is not None:
            other_value = other_storage.get(key, NO_DEFAULT)
        else:
            other_value = other._get_str(key, NO_DEFAULT, missing_ok=True)
        if other_value is NO_DEFAULT:
            if default is None:
                raise _errors.missing_operand_key(op, prefix + (key,))
        else:
            matched += 1
        if is_tensor:
            if other_value is NO_DEFAULT:
                other_value = torch.full_like(value, default)
            elif not isinstance(other_value, Tensor):
                if isinstance(other_value, (bool, int, float, complex, np.number)):
                    # a number held as non-tensor data: combined as a tensor, as
                    # 0.15.3 reads it (from_dict(td.to_dict()) == td)
                    out.append(torch.as_tensor(other_value, device=value.device))
                    continue
                raise TypeError(
                    f"{op}: key {prefix + (key,)!r} is a tensor here but a "
                    f"{type(other_value).__name__} in the other operand"
                )
            elif (
                op[-1] == "_"
                and op[:2] != "__"  # __eq__, __or__, ...: out of place, they broadcast
                and (
                    other_value.shape != value.shape or other_value.dtype != value.dtype
                )
            ):
                # in place: every leaf is checked before the first one is written
                _check_in_place_operand(op, prefix + (key,), value, other_value)
            out.append(other_value)
            continue
        if other_value is NO_DEFAULT:
            out.extend(torch.full_like(leaf, default) for leaf in value._leaves())
            continue
        if not isinstance(other_value, TensorDictBase):
            raise TypeError(
                f"{op}: key {prefix + (key,)!r} is a tensordict here but a "
                f"{type(other_value).__name__} in the other operand"
            )
        if isinstance(value, TensorDict):
            _collect_operand(value, other_value, out, op, default, prefix + (key,))
        else:
            out.extend(value._operand_leaves(other_value, op, default))
    other_len = (
        len(other_storage) if other_storage is not None else len(other._own_keys())
    )
    if matched != other_len:  # keys only the other operand has, or non-tensor ones
        items = (
            other_storage.items() if other_storage is not None else other._own_items()
        )
        for k, v in items:
            if (isinstance(v, Tensor) or _is_node(v)) and k not in td._tensordict:
                message = (
                    f"{op}: key {prefix + (k,)!r} is in the other operand but not in "
                    f"this tensordict"
                )
                if op == "where":  # 0.15.3's phrase first (existing code matches it)
                    shown = k if not prefix else prefix + (k,)
                    message = (
                        f"Key {shown} not found and no pad value provided. ({message})"
                    )
                raise KeyError(message)


# In-place ops whose result is not the operands' promoted type (comparisons write
# booleans as the leaf's dtype): only their shapes are checked.
_NO_PROMOTION_CHECK = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_", "copy_")


def _check_in_place_operand(op: str, key: tuple, leaf: Tensor, other: Tensor) -> None:
    """Raise, naming ``key``, when ``leaf.<op>(other)`` would fail: ``other`` does not
    broadcast to the leaf's shape, or the result's dtype cannot be written into it. Run
    for every leaf before any is written, so that a failed in-place op changes nothing.
    """
    if not broadcasts_to(other.shape, leaf.shape):
        raise _errors.InplaceWriteError(
            f"{op}: the entry {key!r} has shape {tuple(leaf.shape)} but the other "
            f"operand's has shape {tuple(other.shape)}, which does not broadcast to it"
        )
    if not op.startswith(_NO_PROMOTION_CHECK):
        result = torch.result_type(leaf, other)
        if not torch.can_cast(result, leaf.dtype):
            raise _errors.InplaceWriteError(
                f"{op}: the entry {key!r} is {leaf.dtype} but the result with the "
                f"other operand's {other.dtype} is {result}, which cannot be written "
                f"into it in place"
            )


def _index_names(names, idx, new_ndim):
    """The names of the batch dims left by ``td[idx]``: a dim an int removes loses its
    name, one ``None`` adds has none, a slice or a one-dim index (a list, a range, a
    tensor, a one-dim boolean mask) keeps it; a mask over several dims merges them into
    one without a name, an index tensor of several dims gives as many unnamed dims.
    With more than one index tensor (torch moves their dims) the names are dropped."""
    parts = idx if type(idx) is tuple else (idx,)
    advanced = [p for p in parts if isinstance(p, (Tensor, list, range))]
    if len(advanced) > 1:
        return None
    used = 0  # the batch dims the parts other than Ellipsis address
    for part in parts:
        if isinstance(part, Tensor) and part.dtype is torch.bool:
            used += part.ndim
        elif part is not None and part is not Ellipsis:
            used += 1
    out = []
    pos = 0
    for part in parts:
        if part is None:
            out.append(None)
        elif part is Ellipsis:
            skipped = len(names) - used
            out.extend(names[pos : pos + skipped])
            pos += skipped
        elif isinstance(part, (int, slice, list, range)) and not isinstance(part, bool):
            if not isinstance(part, int):
                out.append(names[pos])
            pos += 1
        elif isinstance(part, Tensor) and part.dtype is torch.bool:
            out.append(names[pos] if part.ndim == 1 else None)
            pos += part.ndim
        elif isinstance(part, Tensor):
            if part.ndim == 0:
                pos += 1
                continue
            out.extend([names[pos]] if part.ndim == 1 else [None] * part.ndim)
            pos += 1
        else:
            return None
    out.extend(names[pos:])
    return out if len(out) == new_ndim and any(n is not None for n in out) else None


def _unflattened(storage: dict, separator: str) -> dict | None:
    """``storage`` with keys split at ``separator`` as nested plain dicts (the levels
    to make); None where the general path must decide: a key part is empty, a key
    names an entry twice (merge or collision), a level is held by an entry, or an
    entry is a container other than a TensorDict."""
    root: dict = {}
    levels = {"": root}  # the dotted prefix of a level -> its dict
    for key, value in storage.items():
        if type(value) is TensorDict:
            value = value.unflatten_keys(separator)
        elif isinstance(value, TensorDictBase):
            return None
        prefix, found, last = key.rpartition(separator)
        if found and not (prefix and last):
            return None
        parent = levels.get(prefix)
        if parent is None:
            parent = _dict_level(levels, prefix, separator)
            if parent is None:
                return None
        if last in parent:
            return None
        parent[last] = value
    return root


def _dict_level(levels: dict, prefix: str, separator: str) -> dict | None:
    up, found, last = prefix.rpartition(separator)
    if found and not (up and last):
        return None
    parent = levels.get(up)
    if parent is None:
        parent = _dict_level(levels, up, separator)
        if parent is None:
            return None
    level = parent.get(last)
    if level is None:
        level = parent[last] = {}
    elif type(level) is not dict:
        return None
    levels[prefix] = level
    return level


def _dict_tree_to_td(level: dict, like: TensorDict) -> TensorDict:
    """The nested plain dicts of :func:`_unflattened` as TensorDicts with the batch
    size, device and names of ``like`` (what ``_new_empty`` gives each level)."""
    for key, value in level.items():
        if type(value) is dict:
            level[key] = _dict_tree_to_td(value, like)
    return _new_tensordict(level, like._batch_size, like._device, like._names)
