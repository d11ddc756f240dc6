"""TensorDictBase: the contract every tensordict container fulfils.

A container stores, at each level, a mapping from string keys to entries; an entry is a
tensor, a nested container, or non-tensor data kept as given. Every container shares a
batch size: the leading dimensions of every tensor entry (and of every nested
container's batch size).

Storage classes implement a handful of primitives (``_get_str``, ``_set_str``,
``_del_str``, ``_own_items``, the batch-size/device/names attributes, ``_index``,
``_set_at_index`` and the leaf primitives of ``docs/architecture.md``); everything here
is written once on top of them, so that every container behaves the same.
"""

from __future__ import annotations

import collections.abc
import threading
import types
from typing import Any, Callable, Iterable, Iterator, Sequence

import torch
from torch import Tensor
from torch.nn.parameter import is_lazy

from tensordict import _atomic, _errors, _lock_graph, _modes
from tensordict._keys import NestedKey, unravel_key, unravel_key_to_tuple
from tensordict._keys import GENERIC_NESTED_ERR as _GENERIC_NESTED_ERR  # 0.15.3's name
from tensordict._hotreads import string_keys
from tensordict._linked_list import entry_value
from tensordict._unbatched import is_unbatched  # noqa: F401  (for tensordict._ops)
from tensordict._compat import (  # noqa: F401  (0.15.3's names in tensordict.base)
    _ACCEPTED_CLASSES,
    _NESTED_TENSORS_AS_LISTS,
    _NESTED_TENSORS_AS_LISTS_NONTENSOR,
    CompatMethods,
    _default_is_leaf,
    _getitem_batch_size,
    _is_leaf_nontensor,
)
from tensordict._compat import (  # noqa: F401  (0.15.3's private name: a class test)
    _is_tensor_collection_class as _is_tensor_collection,
)
from tensordict import _consolidate
from tensordict._consolidate import ConsolidateMixin
from tensordict._conversions import ConversionMethods
from tensordict._distributed import DistributedMixin
from tensordict._map import MapMixin
from tensordict._module_state import ModuleStateMixin
from tensordict._persistence import PersistenceMixin
from tensordict._pytree import PytreeMixin
from tensordict._ragged import RaggedMethods
from tensordict._interchange import InterchangeMethods
from tensordict._pack import PackMethods
from tensordict._tensorcollection import (  # noqa: F401  (imported from base too)
    NO_DEFAULT as NO_DEFAULT,  # re-exported: the stubs and users import it from here
    TensorCollection,
    _is_node,
    _NoDefault,
    _parse_names,
)
from tensordict._registry import container_class, register
from tensordict._repr import container_repr

_MISSING = object()


class _DeviceRecorder(threading.local):
    """Records, per thread, the copies a ``TensorDict(..., device=...)`` construction
    issued without waiting (0.15.3's ``tensordict.base._device_recorder``): while
    ``marked``, the constructor copies leaves with ``non_blocking=True`` and records
    the copies whose destination is not a CUDA device (those to the host must be
    waited for before the values are read); it then synchronises once, through
    ``TensorDictBase._sync_all``, if any was recorded. A construction nested in a
    marked one records into the same state and leaves the synchronisation to it.

    >>> from tensordict.base import _device_recorder
    >>> _device_recorder.marked, _device_recorder.has_transfer()
    (False, False)
    """

    def __init__(self) -> None:
        self.marked = False
        self._has_transfer = False

    def mark(self) -> None:
        if self.marked:
            raise RuntimeError("Can only mark one TensorDict at a time.")
        self.marked = True
        self._has_transfer = False

    def unmark(self) -> None:
        self.marked = False
        self._has_transfer = False

    def record_transfer(self, device) -> None:
        self._has_transfer = True

    def has_transfer(self) -> bool:
        return self._has_transfer


_device_recorder = _DeviceRecorder()


def _sync_accelerator() -> None:
    """Wait for the copies queued on the available accelerator (none: nothing)."""
    if torch.cuda.is_available():
        if not torch.compiler.is_compiling() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        return
    for name in ("mps", "npu", "xpu"):
        module = getattr(torch, name, None)
        available = getattr(module, "is_available", None)
        if available is not None and available():
            module.synchronize()
            return


def is_tensor_collection(obj: Any) -> bool:
    """True when ``obj`` (an instance or a class) is a tensordict-like container.

    >>> is_tensor_collection(TensorDict()), is_tensor_collection(torch.zeros(2))
    (True, False)
    """
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, TensorDictBase) or getattr(cls, "_is_tensorclass", False)


def _is_leaf_default(cls: type) -> bool:
    """Default ``is_leaf``: tensors are leaves, containers and non-tensor data are not."""
    return issubclass(cls, Tensor)


_DICT_KEYS = type({}.keys())


class _KeysView:
    """What ``td.keys(...)`` returns: iterable, sized, and ``in`` accepts nested keys."""

    __slots__ = ("_td", "_include_nested", "_leaves_only", "_is_leaf", "_sort")

    def __init__(self, td, include_nested, leaves_only, is_leaf, sort):
        self._td = td
        self._include_nested = include_nested
        self._leaves_only = leaves_only
        self._is_leaf = is_leaf
        self._sort = sort

    def __iter__(self) -> Iterator[NestedKey]:
        if not self._include_nested and not self._leaves_only:
            keys = self._td._own_keys()
        else:
            keys = self._td._walk(
                self._include_nested, self._leaves_only, self._is_leaf, False
            )
        if self._sort:
            return iter(sorted(keys, key=_sort_key))
        return iter(keys)

    def __len__(self) -> int:
        if not self._include_nested and not self._leaves_only:
            return len(self._td._own_keys())
        if self._is_leaf is None:
            return _count_default(self._td, self._include_nested, self._leaves_only)
        return sum(1 for _ in self)

    def __contains__(self, key) -> bool:
        try:
            path = unravel_key_to_tuple(key)
        except (TypeError, KeyError):
            return False
        if len(path) > 1 and not self._include_nested:
            return False
        td = self._td
        for part in path[:-1]:
            sub = td._get_str(part, None)
            if not isinstance(sub, TensorDictBase):
                return False
            td = sub
        value = td._get_str(path[-1], NO_DEFAULT, missing_ok=True)
        if value is NO_DEFAULT:
            return False
        if self._leaves_only:
            is_leaf = self._is_leaf or _is_leaf_default
            return is_leaf(type(value))
        return True

    def __eq__(self, other) -> bool:
        return (
            list(self) == list(other)
            if not isinstance(other, set)
            else set(self) == other
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)})"


def _range_as_slice(index: range, batch_size) -> slice | None:
    """The slice that selects the same rows of the first batch dim as ``index`` (a
    ``range`` with a positive step, inside the dim), or None. For writes only: a read
    through a slice would be a view where the range gives a copy."""
    if not batch_size or index.step < 0 or not index or index.start < 0:
        return None
    if index[-1] >= batch_size[0]:
        return None
    return slice(index.start, index[-1] + 1, index.step)


def _index_batch_mismatch(batch_size, index, source) -> bool:
    """True when a tensordict of batch size ``source`` cannot be written at ``index``
    of a batch ``batch_size``: it does not broadcast to the indexed batch size. An
    index this cannot read (a tensordict mask...) is left to the write to check."""
    try:
        indexed = _getitem_batch_size(batch_size, index)
    except Exception:
        return False
    return not _atomic.broadcasts_to(tuple(source), tuple(indexed))


@register
class TensorDictBase(
    # The capabilities, each written once against the primitives and so inherited by
    # every container kind (dense, lazy stack, lazy view, sub-tensordict, tensorclass,
    # TensorDictParams, persistent); a kind overrides one only to do it faster or where
    # its storage differs (tests/test_every_kind.py walks every public name on every kind).
    ConsolidateMixin,  # before PersistenceMixin: its pickling of one block comes first
    PersistenceMixin,
    DistributedMixin,
    MapMixin,
    ModuleStateMixin,
    PytreeMixin,
    RaggedMethods,
    CompatMethods,
    ConversionMethods,
    PackMethods,  # pack / attrs / clear_refs_for_compile_ (tensordict/_pack.py)
    InterchangeMethods,
    TensorCollection,
):
    """The shared behaviour of every tensordict container (see the module docstring).

    >>> isinstance(TensorDict(), TensorDictBase), isinstance(TensorDict.lazy_stack([TensorDict()]), TensorDictBase)
    (True, True)
    """

    __slots__ = ()

    # ``TensorDict[str, torch.Tensor]`` in annotations (as 0.15.3 allows): a generic
    # alias, which type checkers read and tensorclasses take as a tensordict field
    __class_getitem__ = classmethod(types.GenericAlias)

    # torch.X(td) dispatch: the table is generated from the spec, in a layer above this
    # module; tensordict/_torch_function.py installs its dispatcher here on import.
    _torch_dispatch: Callable | None = None

    # True for the containers of non-tensor values (tensordict/tensorclass.py:
    # NonTensorData, NonTensorStack): walks carry them over as data, not as nodes.
    _is_non_tensor = False

    # ------------------------------------------------------------------ primitives
    # Storage classes implement these.

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        raise NotImplementedError

    def _set_str(
        self,
        key: str,
        value: Any,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        raise NotImplementedError

    def _del_str(self, key: str) -> None:
        raise NotImplementedError

    def _own_items(self) -> Iterator[tuple[str, Any]]:
        raise NotImplementedError

    def _own_keys(self):
        return [key for key, _ in self._own_items()]

    def _iter_own_items(self):
        """``_own_items`` read lazily where reading an entry costs (lazy stacks); a
        snapshot, so that the caller may write into the tensordict as it walks."""
        return list(self._own_items())

    def _own_values(self):
        return [value for _, value in self._own_items()]

    def _validate(self, key: str, value: Any) -> Any:
        """Check (and convert) a value entering at ``key``, as ``TensorDict`` does,
        against this container's batch size and device; return what to store (with
        ``_set_str(..., validated=True)``). ``TensorDict`` overrides it; the other
        kinds (a tensorclass over a lazy stack writing a field, ...) come here."""
        template = container_class("TensorDict")._from_storage(
            {}, self.batch_size, self.device
        )
        return template._validate(key, value)

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        """A new, empty container with this one's batch size, device and names."""
        raise NotImplementedError

    def _index(self, index) -> "TensorDictBase":
        """The container indexed along its batch dims."""
        raise NotImplementedError

    def _set_at_index(self, index, value) -> None:
        """Write ``value`` (a tensordict, dict, tensor or number) at ``index``."""
        raise NotImplementedError

    # ``to``'s shortcut, ``_moved_whole``: ConsolidateMixin's (tensordict/_consolidate.py)

    # The leaf primitives generated ops call (docs/architecture.md).

    def _leaves(self) -> list[Tensor]:
        """Every tensor leaf, depth first, in key order."""
        raise NotImplementedError

    def _iter_leaves(self) -> Iterator[Tensor]:
        """The leaves of :meth:`_leaves`, one at a time."""
        return iter(self._leaves())

    def _scan_entries(self) -> Iterable:
        """What ``any()`` / ``all()`` with no dim walk: tensors, and nested
        containers that answer for their own leaves. Here every leaf; a container
        that holds its entries gives them as they are (no generator)."""
        return self._iter_leaves()

    def _leaves_and_rebuild(
        self,
    ) -> tuple[list[Tensor], Callable[..., "TensorDictBase"]]:
        """The leaves, and a function building a same-structured container from new
        leaves (``rebuild(new, batch_size=..., device=..., names=...)``)."""
        raise NotImplementedError

    def _map_leaves(self, fn: Callable[[Tensor], Tensor]) -> "TensorDictBase":
        """``rebuild([fn(x) for x in leaves])`` of :meth:`_leaves_and_rebuild`: the
        same structure with ``fn`` of every leaf (a container may do it in one walk)."""
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([fn(x) for x in leaves])

    def _batched_leaves_and_rebuild(
        self,
    ) -> tuple[list[Tensor], Callable[..., "TensorDictBase"]]:
        """As :meth:`_leaves_and_rebuild`, for an op on the batch dims: leaves
        without batch dims (``UnbatchedTensor``) are left out, and the rebuild keeps
        them as they are."""
        return self._leaves_and_rebuild()

    def _holds_lazy_stack(self) -> bool:
        """Whether a lazy stack is among this container's entries, at any depth
        (ops that cut the batch into pieces then read them by indexing)."""
        return False

    def _with_dense_stacks(
        self, op: str, key: tuple = (), outer_dims: int | None = None
    ) -> "TensorDictBase":
        """This container as an op that reads batch dims must see it: every leaf with
        all of its container's batch dims. A lazy stack's leaves lack the stack dim, so
        lazy stacks inside are replaced by their dense stacks (an error naming ``op``
        and the entry's ``key`` where they cannot be stacked); ``self`` when there is
        nothing to replace, as for every container whose leaves are whole.
        ``outer_dims``: the batch dims of the tensordict the op runs on, when this
        container is held in it (a lazy stack whose stack dim lies past them can stay
        lazy for ops on those dims only, see ``LazyStackedTensorDict``)."""
        return self

    def _operand_leaves(self, other, op: str, default=None) -> list[Tensor]:
        """The leaves of ``other`` aligned with :meth:`_leaves` (KeyError on a key
        one side lacks, unless ``default`` fills it)."""
        raise NotImplementedError

    def _moved_to(self, device) -> "TensorDictBase":
        """A copy whose tensors are on ``device``."""
        raise NotImplementedError

    def _check_to_batch_size(self) -> None:
        """``to(..., batch_size=)`` calls this first: a kind whose batch size follows
        other tensordicts' (a lazy stack, a lazy view) raises here."""

    def _check_inplace_move(self, op: str) -> None:
        """``to``/``cpu``/... with ``inplace=True`` call this first: a kind whose
        entries belong to another tensordict (a view, an HDF5 file) raises here."""

    # ------------------------------------------------------------------ shape
    @property
    def batch_size(self) -> torch.Size:
        """The leading dims every entry shares (settable: a new size must match the
        entries' leading dims, else ``RuntimeError``).

        >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
        >>> td.batch_size = [3, 4]
        >>> td.batch_size
        torch.Size([3, 4])
        """
        return self._batch_size

    @property
    def names(self) -> list:
        """One name (or None) per batch dim."""
        if self._names is None:
            return [None] * len(self._batch_size)
        return list(self._names)

    @names.setter
    def names(self, value) -> None:
        self._names = _parse_names(value, len(self._batch_size))

    @property
    def shape(self) -> torch.Size:
        """Same as ``batch_size``: a tensordict's shape is its batch shape.

        >>> TensorDict(a=torch.zeros(3, 4), batch_size=[3]).shape
        torch.Size([3])
        """
        return self.batch_size

    @property
    def batch_dims(self) -> int:
        """The number of batch dims (``len(batch_size)``).

        >>> TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4]).batch_dims
        2
        """
        return len(self.batch_size)

    @property
    def ndim(self) -> int:
        """Same as ``batch_dims``, as on a tensor.

        >>> TensorDict(a=torch.zeros(3, 4), batch_size=[3]).ndim
        1
        """
        return len(self.batch_size)

    def ndimension(self) -> int:
        """Same as ``batch_dims``, as on a tensor.

        >>> TensorDict(a=torch.zeros(3, 4), batch_size=[3]).ndimension()
        1
        """
        return len(self.batch_size)

    def dim(self) -> int:
        """Same as ``batch_dims``, as on a tensor.

        >>> TensorDict(a=torch.zeros(3, 4), batch_size=[3]).dim()
        1
        """
        return len(self.batch_size)

    def numel(self) -> int:
        """The number of elements of the batch (the product of ``batch_size``), not
        the number of scalars stored.

        >>> TensorDict(a=torch.zeros(3, 4, 5), batch_size=[3, 4]).numel()
        12
        """
        return self.batch_size.numel()

    def size(self, dim: int | None = None):
        """The batch size, or its size along ``dim`` (an ``int``), as on a tensor.

        Raises:
            IndexError: ``dim`` is not a batch dim.

        >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
        >>> td.size(), td.size(-1)
        (torch.Size([3, 4]), 4)
        """
        if dim is None:
            return self.batch_size
        return self.batch_size[dim]

    def __len__(self) -> int:
        return self.batch_size[0] if self.batch_size else 0

    def __iter__(self) -> Iterator["TensorDictBase"]:
        """Iterate along the first batch dim, like a tensor."""
        if not self.batch_size:
            raise TypeError(
                "iteration over a tensordict with batch_size=() (no batch dims)"
            )
        return (self[i] for i in range(self.batch_size[0]))

    def __bool__(self) -> bool:
        raise _errors.bool_ambiguous()

    @property
    def device(self) -> torch.device | None:
        """The device every leaf is on, or ``None`` when the tensordict has none (its
        leaves may then be anywhere). Setting it is refused: use ``to(device)``.

        >>> TensorDict(a=torch.zeros(2), device="cpu").device
        device(type='cpu')
        >>> TensorDict(a=torch.zeros(2)).device is None
        True
        """
        return self._device

    @property
    def is_locked(self) -> bool:
        """Whether the tensordict refuses writes (see ``lock_``); setting it to
        ``True`` or ``False`` locks or unlocks it.

        >>> td = TensorDict(a=torch.zeros(2)).lock_()
        >>> td.is_locked
        True
        """
        return self._is_locked

    @is_locked.setter
    def is_locked(self, value: bool) -> None:
        if value:
            self.lock_()
        else:
            self.unlock_()

    # ------------------------------------------------------------------ keys
    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        """Walk the entries once: a list of ``(key, value)`` pairs (of keys alone
        without ``with_values``); nested keys are tuples, and a nested tensordict
        comes after its own entries."""
        out: list = []
        if is_leaf is None:
            _walk_default(self, include_nested, leaves_only, (), out, with_values)
        else:
            _walk_custom(
                self, include_nested, leaves_only, is_leaf, (), out, with_values
            )
        return out

    def keys(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        *,
        sort: bool = False,
    ) -> _KeysView:
        """The keys; nested ones as tuples when ``include_nested``.

        With no argument, a container that stores its entries in a dict hands out that
        dict's own live keys view (as 0.15.3 does, and as fast as a plain dict)."""
        if not (include_nested or leaves_only or sort):
            keys = self._own_keys()
            if type(keys) is _DICT_KEYS:
                return string_keys(keys)
        return _KeysView(self, include_nested, leaves_only, is_leaf, sort)

    def values(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf=None,
        *,
        sort: bool = False,
    ) -> Iterator[Any]:
        """The entries; see :meth:`keys` for the arguments. With no argument, the
        container's own (live) view of its entries, as a dict's ``values()``."""
        if not (include_nested or leaves_only or sort):
            return self._own_values()
        return (
            value
            for _, value in self.items(include_nested, leaves_only, is_leaf, sort=sort)
        )

    def items(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf=None,
        *,
        sort: bool = False,
    ) -> Iterator[tuple[NestedKey, Any]]:
        """``(key, entry)`` pairs; see :meth:`keys` for the arguments. With no
        argument, the container's own view of its pairs, as a dict's ``items()``."""
        if not (include_nested or leaves_only or sort):
            return self._own_items()
        if include_nested and not sort:
            # as 0.15.3: a generator, each nested tensordict before its entries, read
            # one entry at a time (a loop that stops early reads no further, which
            # matters for lazy stacks whose members differ in shape)
            return _iter_nested(self, leaves_only, is_leaf, ())
        items = self._walk(include_nested, leaves_only, is_leaf)
        if sort:
            items.sort(key=lambda item: _sort_key(item[0]))
        return iter(items)

    def __contains__(self, key: NestedKey) -> bool:
        if not isinstance(key, (str, tuple)):
            # 0.15.3's phrase: code matches it
            raise RuntimeError(
                f"key must be a NestedKey (a str or a possibly tuple of str). "
                f"`in` on a tensordict looks up a key, got {type(key).__name__} "
                f"{key!r}; to look for a value, compare the entries"
            )
        return key in self.keys(include_nested=True)

    def is_empty(self) -> bool:
        """True when no entry is stored, at any depth (nested tensordicts that are
        empty do not count; a tensor or non-tensor data does).

        >>> TensorDict().is_empty(), TensorDict(sub=TensorDict()).is_empty()
        (True, True)
        >>> TensorDict(a=torch.zeros(1)).is_empty()
        False
        """
        for value in self._own_values():
            if not _is_node(value) or not value.is_empty():
                return False
        return True

    # ------------------------------------------------------------------ get
    def _get_path(self, key, default=NO_DEFAULT, *, explicit_default: bool = False):
        path = key if isinstance(key, tuple) else (key,)
        td = self
        for i, part in enumerate(path[:-1]):
            sub = td._get_str(part, NO_DEFAULT, missing_ok=default is not NO_DEFAULT)
            if sub is NO_DEFAULT:
                return default
            if not isinstance(sub, TensorDictBase):
                # as 0.15.3: a default passed (or, for a non-tensor value on the way,
                # get's None) stands for the entry a leaf cannot hold
                if explicit_default or (
                    default is None and not isinstance(sub, torch.Tensor)
                ):
                    return default
                raise _errors.not_a_tensordict(path[: i + 1], sub)
            td = sub
        return td._get_str(path[-1], default)

    def __getitem__(self, index) -> Any:
        """``td[key]`` (a string or a tuple of strings) reads an entry; any other
        index indexes the batch dims, as it would a tensor."""
        if type(index) is str:
            return entry_value(self._get_str(index, NO_DEFAULT))
        if isinstance(index, tuple) and index and _looks_like_key(index):
            return entry_value(self._get_path(unravel_key_to_tuple(index)))
        if isinstance(index, str):  # a str subclass (a str-valued Enum): a key too
            return entry_value(self._get_str(index, NO_DEFAULT))
        return self._index(index)

    def get(self, key: NestedKey, *args, **kwargs) -> Any:
        """The entry at ``key``; ``get(key, default)`` returns ``default`` if missing,
        and ``get(key)`` returns ``None`` (as 0.15.3 does; ``td[key]`` raises a
        ``KeyError``, and so does ``get(key, NO_DEFAULT)``)."""
        explicit = True
        if args:
            default = args[0]
        elif "default" in kwargs:
            default = kwargs["default"]
        else:
            explicit = False
            default = None if _modes._GET_DEFAULTS_TO_NONE.value else NO_DEFAULT
        if type(key) is str:
            path = None
            value = self._get_str(key, _MISSING)
        else:
            path = unravel_key_to_tuple(key)
            # through a leaf: _MISSING, so that the call below decides with the default
            value = self._get_path(path, _MISSING, explicit_default=True)
        if value is _MISSING:
            if type(key) is str:
                return self._get_str(key, default)
            return self._get_path(
                path, default, explicit_default=explicit and default is not NO_DEFAULT
            )
        if isinstance(value, (Tensor, TensorDictBase)):
            return value
        # non-tensor data reads as NonTensorData, as TensorDict.get and 0.15.3 give it
        return _non_tensor_read(self, key if path is None else path, value)

    # ------------------------------------------------------------------ set / delete
    def _set_path(self, path: tuple, value, *, inplace: bool, validated: bool = False):
        td = self
        for i, part in enumerate(path[:-1]):
            sub = td._get_str(part, None)
            if sub is None:
                sub = td._create_nested_str(part)
            elif not isinstance(sub, TensorDictBase):
                raise _errors.not_a_tensordict(path[: i + 1], sub)
            td = sub
        td._set_str(path[-1], value, inplace=inplace, validated=validated)
        return self

    def _create_nested_str(self, key: str) -> "TensorDictBase":
        nested = self._new_empty()
        self._set_str(key, nested, inplace=False, validated=True)
        return nested

    def create_nested(self, key: NestedKey) -> "TensorDictBase":
        """Create an empty nested tensordict at ``key`` with this batch size.

        >>> td = TensorDict(batch_size=[3])
        >>> _ = td.create_nested(("a", "b"))
        >>> td["a", "b"].batch_size
        torch.Size([3])
        """
        path = unravel_key_to_tuple(key)
        self._set_path(path[:-1] + (path[-1],), self._new_empty(), inplace=False)
        return self._get_path(path)

    def set(
        self,
        key: NestedKey,
        item: Any,
        inplace: bool = False,
        *,
        non_blocking: bool = False,
        **kwargs,
    ) -> "TensorDictBase":
        """Write ``item`` at ``key``; with ``inplace=True`` an existing tensor is
        updated in place (and a missing key is created).

        Raises:
            RuntimeError: the tensordict is locked, or ``item``'s leading dims do not
                match the batch size (the error names the key and both shapes).

        >>> td = TensorDict(batch_size=[2])
        >>> _ = td.set(("sub", "x"), torch.zeros(2, 3))  # nested tensordicts made as needed
        >>> td["sub"].batch_size
        torch.Size([2])
        """
        if type(key) is str:
            self._set_str(key, item, inplace=inplace, validated=False)
            return self
        path = unravel_key_to_tuple(key)
        if len(path) == 1:
            return self._set_path(path, item, inplace=inplace)
        with _atomic.unchanged_on_error(self):  # levels created on the way
            return self._set_path(path, item, inplace=inplace)

    def set_(
        self, key: NestedKey, item: Any, *, non_blocking: bool = False
    ) -> "TensorDictBase":
        """Update the existing entry at ``key`` in place; a missing key is an error.

        >>> td = TensorDict(a=torch.zeros(2))
        >>> a = td["a"]
        >>> _ = td.set_("a", torch.ones(2))   # writes into the existing tensor
        >>> a.tolist()
        [1.0, 1.0]
        """
        path = unravel_key_to_tuple(key)
        self._get_path(path)  # raises a KeyError naming the key if it is missing
        return self._set_path(path, item, inplace=True)

    def __setitem__(self, index, value) -> None:
        if type(index) is str:
            self._set_str(index, value, inplace=False, validated=False)
        elif isinstance(index, str):  # a str subclass (a str-valued Enum): a key,
            # kept as given (as set() and the constructor keep it)
            self._set_str(index, value, inplace=False, validated=False)
        elif isinstance(index, tuple) and index and _looks_like_key(index):
            with _atomic.unchanged_on_error(self):  # levels created on the way
                self._set_path(unravel_key_to_tuple(index), value, inplace=False)
        elif (
            type(index) is range
            and (rows := _range_as_slice(index, self._batch_size)) is not None
        ):
            # the same rows as a slice: a write through a view (torch's advanced
            # indexing, and its shape check, cost ~16 us more per write)
            self.__setitem__(rows, value)
        elif type(getattr(self, "_tensordict", None)) is dict and (
            not _atomic.index_write_fails(self, index, value, _getitem_batch_size)
        ):
            self._set_at_index(index, value)  # checked: it cannot fail half-way
        else:
            # a write that would fail: a tensordict of another batch size is named
            # in 0.15.3's words (checked here, off the path of writes that succeed)
            if isinstance(value, TensorDictBase) and _index_batch_mismatch(
                self._batch_size, index, value.batch_size
            ):
                raise _errors.index_batch_mismatch(
                    _getitem_batch_size(self._batch_size, index),
                    self._batch_size,
                    index,
                    value.batch_size,
                )
            with _atomic.unchanged_on_error(self) as snapshot:
                snapshot.save_at(self, index)
                self._set_at_index(index, value)

    def setdefault(self, key: NestedKey, default: Any, inplace: bool = False) -> Any:
        """The entry at ``key``; if it is missing, ``default`` is set there first (as
        ``dict.setdefault``).

        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> td.setdefault("b", torch.ones(2))
        tensor([1., 1.])
        >>> td.setdefault("b", torch.zeros(2))  # present: unchanged
        tensor([1., 1.])
        """
        path = unravel_key_to_tuple(key)
        value = self._get_path(path, _MISSING)
        if value is _MISSING:
            self._set_path(path, default, inplace=inplace)
            return self._get_path(path)
        return value

    def del_(self, key: NestedKey) -> "TensorDictBase":
        """Remove the entry at ``key``.

        >>> td = TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.zeros(2)))
        >>> list(td.del_(("sub", "b")).keys(True))
        ['a', 'sub']
        """
        path = unravel_key_to_tuple(key)
        td = self if len(path) == 1 else self._get_path(path[:-1])
        if not isinstance(td, TensorDictBase):
            raise _errors.not_a_tensordict(path[:-1], td)
        td._del_str(path[-1])
        return self

    def __delitem__(self, key: NestedKey) -> None:
        self.del_(key)

    def pop(self, key: NestedKey, default: Any = NO_DEFAULT) -> Any:
        """Remove the entry at ``key`` and return it (or ``default`` if missing).

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2))
        >>> td.pop("b")
        tensor([1., 1.])
        >>> td.pop("b", None) is None
        True
        """
        path = unravel_key_to_tuple(key)
        value = self._get_path(path, _MISSING)
        if value is _MISSING:
            if default is NO_DEFAULT:
                raise _errors.key_missing(path, self.keys(True))
            return default
        self.del_(path)
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove the last-set top-level entry and return ``(key, value)``.

        Raises:
            KeyError: the tensordict is empty.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2))
        >>> td.popitem()
        ('b', tensor([1., 1.]))
        """
        for key, value in reversed(list(self._own_items())):
            self._del_str(key)
            return key, value
        raise KeyError("popitem(): the tensordict is empty")

    def update(
        self,
        input_dict_or_td=None,
        clone: bool = False,
        inplace: bool = False,
        *,
        non_blocking: bool = False,
        keys_to_update: Sequence[NestedKey] | None = None,
        is_leaf=None,
        **kwargs,
    ) -> "TensorDictBase":
        """Write every entry of a dict or tensordict into this one; nested
        tensordicts are updated key by key rather than replaced. Keyword arguments
        are entries too, written after ``input_dict_or_td`` (they win on a shared
        key), as in 0.15.3.

        >>> td = TensorDict(a=torch.zeros(2))
        >>> _ = td.update({"b": torch.ones(2), "sub": {"c": torch.ones(2)}})
        >>> list(td.keys(True, True))
        ['a', 'b', ('sub', 'c')]
        """
        update_batch_size = False
        if kwargs:  # update(a=..., b=...), update(source, a=...)
            update_batch_size = kwargs.pop("update_batch_size", False)
            for option in _UPDATE_OPTIONS:  # 0.15.3's options not needed here
                kwargs.pop(option, None)
        if kwargs:
            if input_dict_or_td is not None:
                self.update(
                    input_dict_or_td,
                    clone,
                    inplace,
                    non_blocking=non_blocking,
                    keys_to_update=keys_to_update,
                    is_leaf=is_leaf,
                    update_batch_size=update_batch_size,
                )
            input_dict_or_td = kwargs
        if input_dict_or_td is None or input_dict_or_td is self:
            return self
        if (
            update_batch_size
            and isinstance(input_dict_or_td, TensorDictBase)
            and input_dict_or_td.batch_size != self.batch_size
        ):
            self._take_batch_size_of(input_dict_or_td, clone)
            return self
        if (
            update_batch_size
            and keys_to_update is None
            and not inplace
            and is_tensor_collection(input_dict_or_td)
        ):
            # the same batch size: nested tensordicts take their sources' batch sizes
            # the same way, keeping their identity (TorchRL's resets of histories)
            _update_resizing(self, input_dict_or_td, clone)
            return self
        if keys_to_update is None and is_leaf is None:
            # no write could fail: no snapshot needed
            if inplace:
                if _atomic.copy_when_safe(self, input_dict_or_td):
                    return self
            elif _atomic.set_when_safe(self, input_dict_or_td, clone):
                return self
        allowed = (
            None
            if keys_to_update is None
            else {unravel_key_to_tuple(k) for k in keys_to_update}
        )
        with _atomic.unchanged_on_error(self) as snapshot:
            if inplace:
                _save_targets(snapshot, self, input_dict_or_td, keys_to_update)
            self._update(input_dict_or_td, clone, inplace, allowed, ())
        return self

    def _take_batch_size_of(self, source: "TensorDictBase", clone: bool) -> None:
        """``update(source, update_batch_size=True)`` where the batch sizes differ:
        this tensordict takes ``source``'s batch size and entries (every key of this
        one must be in ``source``), as in 0.15.3."""
        missing = set(self.keys()) - set(source.keys())
        if missing:
            raise RuntimeError(
                "Some keys of the dest tensordict are not present in the source "
                "during update with mismatching batch-size. batch_size of source="
                f"{source.batch_size}, batch_size of dest={self.batch_size}, keys in "
                f"dest but not in source: {missing}."
            )
        if self._is_locked:
            raise _errors.locked("update the batch size")
        self._adopt(source.clone() if clone else source)

    def _adopt(self, source: "TensorDictBase") -> None:
        raise RuntimeError(
            f"update(update_batch_size=True): a {type(self).__name__} cannot change "
            "its batch size"
        )

    def _update(self, source, clone, inplace, allowed, prefix):
        # one walk over full paths: a mapping meeting a nested tensordict (or only
        # partly selected by keys_to_update) is merged key by key, anything else is set
        items = (
            source._own_items()
            if isinstance(source, TensorDictBase)
            else source.items()
        )
        for key, value in items:
            path = prefix + unravel_key_to_tuple(key)
            if allowed is not None and not any(
                a[: len(path)] == path or path[: len(a)] == a for a in allowed
            ):
                continue
            if isinstance(value, dict) or _is_node(value):
                target = self._get_path(path, None)
                if allowed is None and isinstance(target, TensorDictBase):
                    if (
                        not inplace
                        and type(target) is container_class("TensorDict")
                        and isinstance(getattr(value, "tensordicts", None), list)
                        and value.stack_dim < target.batch_dims
                        and value.batch_size[: target.batch_dims] == target.batch_size
                    ):
                        # a lazy stack's entries may differ in shape between its
                        # members: the dense nested tensordict becomes a lazy stack
                        # along the same dim (its own entries kept), as in 0.15.3
                        target = target.to_lazystack(value.stack_dim)
                        self._set_path(path, target, inplace=False)
                    # the nested tensordict updates itself (a lazy stack member-wise)
                    target._update(value, clone, inplace, None, ())
                    continue
                if isinstance(target, TensorDictBase) or (
                    allowed is not None and path not in allowed
                ):
                    self._update(value, clone, inplace, allowed, path)
                    continue
            if clone and isinstance(value, (Tensor, TensorDictBase)):
                value = value.clone()
            elif (
                not isinstance(value, (Tensor, TensorDictBase, dict))
                and value is not None
                and isinstance(source, TensorDictBase)
            ):
                # a non-tensor value as its tensordict stores it (a number would be
                # read as a tensor): as get() gives it, with the holder's batch size
                value = _walked_non_tensor(source, value)
            self._set_path(path, value, inplace=inplace)

    def update_(
        self,
        input_dict_or_td=None,
        clone: bool = False,
        *,
        non_blocking: bool = False,
        keys_to_update: Sequence[NestedKey] | None = None,
        **kwargs,
    ) -> "TensorDictBase":
        """Update existing entries in place; every key must already exist. Keyword
        arguments are entries too (applied after ``input_dict_or_td``).

        >>> td = TensorDict(a=torch.zeros(2))
        >>> a = td["a"]
        >>> _ = td.update_({"a": torch.ones(2)})   # in place: the existing tensors are written
        >>> a.tolist()
        [1.0, 1.0]
        """
        if kwargs:
            for option in _UPDATE_OPTIONS:
                kwargs.pop(option, None)
        if kwargs:
            if input_dict_or_td is not None:
                self.update_(input_dict_or_td, clone, keys_to_update=keys_to_update)
            input_dict_or_td = kwargs
        if input_dict_or_td is None:
            return self
        if keys_to_update is None and _atomic.copy_when_safe(self, input_dict_or_td):
            return self  # no write could fail: no snapshot needed
        with _atomic.unchanged_on_error(self) as snapshot:
            _save_targets(snapshot, self, input_dict_or_td, keys_to_update)
            if _stacked_alike(self, input_dict_or_td):
                # lazy stacks laid out alike: member by member (members' shapes may
                # differ, which a stacked read of each key cannot give)
                for dest, member in zip(self.tensordicts, input_dict_or_td.tensordicts):
                    dest.update_(member, clone, keys_to_update=keys_to_update)
                return self
            for path, value in _selected_items(
                input_dict_or_td, keys_to_update, clone, True
            ):
                try:
                    self.set_(path, value)
                except KeyError as err:
                    if self._get_path(path, _MISSING) is not _MISSING:
                        raise
                    # 0.15.3's phrase first (code matches it), then ours
                    raise KeyError(
                        f"The key {path[0] if len(path) == 1 else path} was not "
                        f"found in the dest tensordict. ({err.args[0]})"
                    ) from None
        return self

    def rename_key_(
        self, old_key: NestedKey, new_key: NestedKey, safe: bool = False
    ) -> "TensorDictBase":
        """Move the entry at ``old_key`` to ``new_key`` (no copy).

        >>> td = TensorDict(a=torch.zeros(2))
        >>> list(td.rename_key_("a", ("sub", "b")).keys(True, True))
        [('sub', 'b')]
        """
        old = unravel_key_to_tuple(old_key)
        new = unravel_key_to_tuple(new_key)
        if old == new:
            return self
        if self.is_locked:  # before any other check, as 0.15.3
            raise _errors.locked(f"rename the key {old_key!r} to {new_key!r}")
        if safe and self._get_path(new, _MISSING) is not _MISSING:
            raise _errors.key_exists(new_key)
        value = self._get_path(old)
        with _atomic.unchanged_on_error(self):
            if old[: len(new)] == new:
                # the new key holds the old one (("a", "b", "c") -> ("a", "b")): the
                # value replaces that nested tensordict, as in 0.15.3
                self.del_(new)
                self._set_path(new, value, inplace=False, validated=True)
                return self
            self._set_path(new, value, inplace=False, validated=True)
            self.del_(old)
        return self

    # ------------------------------------------------------------------ more mapping
    @property
    def sorted_keys(self) -> list[str]:
        """This level's keys, sorted.

        >>> TensorDict(b=torch.zeros(1), a=torch.zeros(1)).sorted_keys
        ['a', 'b']
        """
        return sorted(self._own_keys())

    @property
    def depth(self) -> int:
        """How deep the nesting goes: 0 for a tensordict without nested ones.

        >>> TensorDict(a=TensorDict(b=TensorDict(c=torch.zeros(1)))).depth
        2
        """
        return max(self._leaf_depth(), 0)

    def _leaf_depth(self) -> int:
        """The nesting depth of the deepest leaf (0: one held here); -1 without any
        leaf. An empty nested tensordict adds no depth, as in 0.15.3."""
        deepest = -1
        for value in self._own_values():
            if _is_node(value):
                below = value._leaf_depth()
                if below >= 0:
                    deepest = max(deepest, 1 + below)
            elif deepest < 0:
                deepest = 0
        return deepest

    def entry_class(self, key: NestedKey) -> type:
        """The class of the entry at ``key`` (``NonTensorData`` for non-tensor data).

        >>> td = TensorDict(a=torch.zeros(1), sub=TensorDict())
        >>> td.entry_class("a").__name__, td.entry_class("sub").__name__
        ('Tensor', 'TensorDict')
        """
        value = self._get_path(unravel_key_to_tuple(key))
        if _is_non_tensor_value(value) and not isinstance(value, TensorDictBase):
            return container_class("NonTensorData")
        return type(value)

    def get_item_shape(self, key: NestedKey) -> torch.Size:
        """The shape of the entry at ``key``: a tensor's shape, a nested tensordict's
        batch size, the enclosing batch size for non-tensor data.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.zeros(3))])
        >>> s.get_item_shape("a")
        torch.Size([2, -1])
        """
        path = unravel_key_to_tuple(key)
        value = self._get_path(path)
        if isinstance(value, Tensor):
            return value.shape
        if isinstance(value, TensorDictBase):
            return value.batch_size
        return (self if len(path) == 1 else self._get_path(path[:-1])).batch_size

    def is_non_tensor(self, key: NestedKey) -> bool:
        """True when the entry at ``key`` is non-tensor data.

        >>> td = TensorDict(a=torch.zeros(1), label="cat")
        >>> td.is_non_tensor("label"), td.is_non_tensor("a")
        (True, False)
        """
        return _is_non_tensor_value(self._get_path(unravel_key_to_tuple(key)))

    def non_tensor_items(self, include_nested: bool = False) -> list[tuple]:
        """``(key, value)`` for every non-tensor entry.

        >>> td = TensorDict(a=torch.zeros(1), label="cat")
        >>> list(td.non_tensor_items())
        [('label', 'cat')]
        """
        return [
            (key, value)
            for key, value in (
                self.items(True) if include_nested else self._own_items()
            )
            if _is_non_tensor_value(value)
        ]

    def set_non_tensor(self, key: NestedKey, value: Any) -> "TensorDictBase":
        """Store ``value`` as non-tensor data, as given (a number stays a number).

        >>> td = TensorDict(batch_size=[2])
        >>> _ = td.set_non_tensor("label", "cat")
        >>> td.get_non_tensor("label"), td[0]["label"]
        ('cat', 'cat')
        """
        path = unravel_key_to_tuple(key)
        parent = self
        for part in path[:-1]:
            sub = parent._get_str(part, None)
            parent = sub if sub is not None else parent._create_nested_str(part)
        if type(value) is container_class("NonTensorData"):
            # stored as its value, as any write of a NonTensorData is (reads give a
            # NonTensorData back; indexed writes of other values make a stack)
            value = value.data
        parent._set_str(path[-1], value, inplace=False, validated=True)
        return self

    def get_non_tensor(self, key: NestedKey, default: Any = NO_DEFAULT) -> Any:
        """The non-tensor value at ``key`` (``default`` if missing).

        >>> td = TensorDict(label="cat", batch_size=[2])
        >>> td.get_non_tensor("label")
        'cat'
        """
        value = self._get_path(unravel_key_to_tuple(key), default)
        return getattr(value, "data", value) if _is_tensorclass_data(value) else value

    def filter_non_tensor_data(self) -> "TensorDictBase":
        """A tensordict without the non-tensor entries, at any depth.

        >>> td = TensorDict(a=torch.zeros(1), label="cat")
        >>> list(td.filter_non_tensor_data().keys())
        ['a']
        """
        out = self._new_empty()
        for key, value in self._own_items():
            if isinstance(value, Tensor):
                out._set_str(key, value, inplace=False, validated=True)
            elif _is_node(value):
                sub = value.filter_non_tensor_data()
                out._set_str(key, sub, inplace=False, validated=True)
        return out

    def filter_empty_(self) -> "TensorDictBase":
        """Remove, in place, the nested tensordicts that hold no entry.

        >>> td = TensorDict(a=torch.zeros(1), empty=TensorDict())
        >>> list(td.filter_empty_().keys())
        ['a']
        """
        return _drop_empty_nested(self, keep=False)

    def clear(self) -> "TensorDictBase":
        """Remove every entry.

        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> td.clear().batch_size, len(td.keys())
        (torch.Size([2]), 0)
        """
        for key in list(self._own_keys()):
            self._del_str(key)
        return self

    @classmethod
    def fromkeys(cls, keys: Sequence[NestedKey], value: Any = 0) -> "TensorDictBase":
        """A tensordict with ``value`` at every key of ``keys``.

        >>> TensorDict.fromkeys(["a", "b"], 1)["b"]
        tensor(1)
        """
        td = container_class("TensorDict")()
        for key in keys:
            td.set(key, value.clone() if isinstance(value, torch.Tensor) else value)
        return td

    def separates(
        self,
        *keys: NestedKey,
        default: Any = NO_DEFAULT,
        strict: bool = True,
        filter_empty: bool = True,
    ) -> "TensorDictBase":
        """Move ``keys`` out of this tensordict into a new one (the inverse of
        :meth:`update`); a missing key takes ``default`` if given, is an error when
        ``strict``, else is skipped. Nested tensordicts left empty are removed.

        >>> td = TensorDict(a=torch.zeros(1), b=torch.zeros(1))
        >>> out = td.separates("a")
        >>> list(out.keys()), list(td.keys())
        (['a'], ['b'])
        """
        out = self._new_empty()
        for key in keys:
            path = unravel_key_to_tuple(key)
            value = self._get_path(path, _MISSING)
            if value is _MISSING:
                if default is not NO_DEFAULT:
                    value = default
                elif strict:
                    raise _errors.key_missing(path, self.keys(True))
                else:
                    continue
            else:
                self.del_(path)
            out._set_path(path, value, inplace=False)
        if filter_empty:
            _drop_empty_nested(self, keep=False)
        return out

    def rename_keys(self, mapping: dict, *, strict: bool = True) -> "TensorDictBase":
        """A copy with the keys renamed as ``mapping`` says (all at once, so keys can
        swap); a missing key is an error when ``strict``.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2))
        >>> sorted(td.rename_keys({"a": "x"}).keys())
        ['b', 'x']
        """
        out = self.copy()
        moved = []
        for old, new in mapping.items():
            old_path = unravel_key_to_tuple(old)
            value = out._get_path(old_path, _MISSING)
            if value is _MISSING:
                if strict:
                    raise _errors.key_missing(old_path, out.keys(True))
                continue
            out.del_(old_path)
            moved.append((unravel_key_to_tuple(new), value))
        for new_path, value in moved:
            out._set_path(new_path, value, inplace=False, validated=True)
        return out

    def replace(self, *args, **kwargs) -> "TensorDictBase":
        """A copy with some entries replaced: ``td.replace(a=x)`` or
        ``td.replace({"a": x})``.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.zeros(2))
        >>> new = td.replace(a=torch.ones(2))       # a copy with some entries replaced
        >>> new["a"].tolist(), td["a"].tolist()
        ([1.0, 1.0], [0.0, 0.0])
        """
        out = self.copy()
        for source in args:
            for key, value in source.items():
                out.set(key, value)
        for key, value in kwargs.items():
            out.set(key, value)
        return out

    def get_at(self, key: NestedKey, *args, **kwargs) -> Any:
        """``td.get(key)[index]``: ``get_at(key, index)`` or
        ``get_at(key, index, default)``.

        >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
        >>> td.get_at("a", 2)
        tensor(2)
        """
        if not args and "index" not in kwargs and "idx" not in kwargs:
            raise TypeError("get_at() needs an index: get_at(key, index[, default])")
        index = args[0] if args else kwargs.get("index", kwargs.get("idx"))
        # a missing key gives None, as get() does (0.15.3), unless told otherwise
        none = None if _modes._GET_DEFAULTS_TO_NONE.value else NO_DEFAULT
        default = args[1] if len(args) > 1 else kwargs.get("default", none)
        value = self._get_path(unravel_key_to_tuple(key), _MISSING)
        if value is _MISSING:
            if default is NO_DEFAULT:
                raise _errors.key_missing(key, self.keys(True))
            return default
        return value[index]

    def set_at_(
        self, key: NestedKey, value: Any, index, *, non_blocking: bool = False
    ) -> "TensorDictBase":
        """Write ``value`` into the existing entry at ``key``, at ``index``.

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
        >>> _ = td.set_at_("a", torch.tensor(5.0), 1)
        >>> td["a"].tolist()
        [0.0, 5.0, 0.0]
        """
        path = unravel_key_to_tuple(key)
        target = self._get_path(path)
        if isinstance(target, TensorDictBase):
            target._set_at_index(index, value)
        elif isinstance(target, Tensor):
            if not isinstance(value, (Tensor, int, float, bool)):
                value = torch.as_tensor(value, device=target.device)  # numpy, lists
            target[index] = value
        else:  # non-tensor data: the value at index (a NonTensorStack where they differ)
            parent = self._get_path(path[:-1]) if len(path) > 1 else self
            written = container_class("NonTensorStack")._write_at(
                target, index, value, parent.batch_size
            )
            parent._set_str(path[-1], written, inplace=False, validated=False)
        return self

    def update_at_(
        self,
        input_dict_or_td,
        idx,
        clone: bool = False,
        *,
        non_blocking: bool = False,
        keys_to_update: Sequence[NestedKey] | None = None,
    ) -> "TensorDictBase":
        """Write every entry of ``input_dict_or_td`` into the existing entries, at
        ``idx``.

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
        >>> _ = td.update_at_({"a": torch.tensor(7.0)}, 0)
        >>> td["a"].tolist()
        [7.0, 0.0, 0.0]
        """
        for path, value in _selected_items(
            input_dict_or_td, keys_to_update, clone, True
        ):
            self.set_at_(path, value, idx)
        return self

    def copy_(self, tensordict, non_blocking: bool = False) -> "TensorDictBase":
        """Copy, in place, every tensor of ``tensordict`` (or a dict) into the tensor
        at the same key here; keys only one side has are left alone.

        >>> td = TensorDict(a=torch.zeros(2))
        >>> _ = td.copy_(TensorDict(a=torch.ones(2)))
        >>> td["a"].tolist()
        [1.0, 1.0]
        """
        for path, value in _leaf_items(tensordict):
            target = self._get_path(path, _MISSING)
            if isinstance(target, Tensor):
                target.copy_(value, non_blocking=non_blocking)
        return self

    def copy_at_(
        self, tensordict, idx, non_blocking: bool = False, *, fast: bool = True
    ) -> "TensorDictBase":
        """:meth:`copy_` into the elements at ``idx``.

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
        >>> _ = td.copy_at_(TensorDict(a=torch.tensor(4.0)), 2)
        >>> td["a"].tolist()
        [0.0, 0.0, 4.0]
        """
        for path, value in _leaf_items(tensordict, non_tensor=True):
            target = self._get_path(path, _MISSING)
            if isinstance(target, Tensor) or (
                target is not _MISSING and not isinstance(value, Tensor)
            ):  # a tensor, or non-tensor data written per index
                self.set_at_(path, value, idx)
        return self

    def stack_tensors(
        self,
        *keys: NestedKey,
        out_key: NestedKey,
        dim: int = 0,
        keep_entries: bool = False,
    ) -> "TensorDictBase":
        """Write ``torch.stack`` of the entries at ``keys`` (``dim`` is torch's dim)
        at ``out_key``, in place, removing the entries unless ``keep_entries``.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2), batch_size=[2])
        >>> td.stack_tensors("a", "b", out_key="ab")["ab"].shape
        torch.Size([2, 2])
        """
        return self._join_tensors(torch.stack, keys, out_key, dim, keep_entries)

    def cat_tensors(
        self,
        *keys: NestedKey,
        out_key: NestedKey,
        dim: int = 0,
        keep_entries: bool = False,
    ) -> "TensorDictBase":
        """Write ``torch.cat`` of the entries at ``keys`` (``dim`` is torch's dim) at
        ``out_key``, in place, removing the entries unless ``keep_entries``.

        >>> td = TensorDict(a=torch.zeros(2, 1), b=torch.ones(2, 3), batch_size=[2])
        >>> td.cat_tensors("a", "b", out_key="ab", dim=-1)["ab"].shape
        torch.Size([2, 4])
        """
        return self._join_tensors(torch.cat, keys, out_key, dim, keep_entries)

    def _join_tensors(self, join, keys, out_key, dim, keep_entries):
        paths = [unravel_key_to_tuple(key) for key in keys]
        self.set(out_key, join([self._get_path(path) for path in paths], dim))
        if not keep_entries:
            out_path = unravel_key_to_tuple(out_key)
            for path in paths:
                if path != out_path:
                    self.del_(path)
        return self

    def backward(
        self,
        gradient=None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Backpropagate from every tensor (as ``torch.autograd.backward`` does for a
        list of outputs): each must be a scalar unless ``gradient`` (a tensordict
        with the same keys) gives its gradient.

        >>> x = torch.ones(2, requires_grad=True)
        >>> td = TensorDict(loss=(x * 3).sum())
        >>> td.backward()         # the one scalar leaf's backward
        >>> x.grad.tolist()
        [3.0, 3.0]
        """
        # the entries autograd can reach: tensors requiring grad (others, and
        # non-tensor data, take no part, as in 0.15.3)
        items = [
            (key, value)
            for key, value in self.items(True, True)
            if isinstance(value, Tensor) and value.requires_grad
        ]
        if not items:
            raise RuntimeError(
                "backward(): no leaf tensor requiring gradients in this tensordict "
                f"(its keys: {sorted(map(str, self.keys(True, True)))}): nothing to "
                f"backpropagate from"
            )
        tensors = [value for _, value in items]
        if gradient is None:
            for key, value in items:
                if value.numel() != 1:
                    raise RuntimeError(
                        f"grad can be implicitly created only for scalar outputs: "
                        f"backward(): the entry {key!r} has shape "
                        f"{tuple(value.shape)}; without `gradient` every entry "
                        f"requiring grad must be a scalar"
                    )
            grads = None
        elif not is_tensor_collection(gradient):
            raise TypeError(
                f"gradient must be a TensorDictBase: backward()'s gradient must be a "
                f"tensordict with one gradient per entry requiring grad, got "
                f"{type(gradient).__name__}"
            )
        else:
            grads = []
            for key, value in items:
                grad = gradient.get(key, None)
                if grad is None:
                    raise KeyError(
                        f"Missing gradient entry for key {key!r}: backward() needs a "
                        f"gradient for every entry requiring grad"
                    )
                grads.append(grad)
        if isinstance(inputs, TensorDictBase):
            inputs = inputs._leaves()
        torch.autograd.backward(
            tensors,
            grad_tensors=grads,
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=inputs,
        )

    def rename(self, *names, **rename_map) -> "TensorDictBase":
        """A copy with renamed batch dims (see :meth:`rename_`).

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3], names=["time"])
        >>> td.rename("step").names, td.names
        (['step'], ['time'])
        """
        out = self.copy()
        out.rename_(*names, **rename_map)
        return out

    def rename_(self, *names, **rename_map) -> "TensorDictBase":
        """Name the batch dims, like torch's named tensors: ``rename_("x", "y")``
        sets every name, ``rename_(None)`` clears them, ``rename_(x="z")`` renames
        one.

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
        >>> td.rename_("time").names
        ['time']
        """
        if names and rename_map:
            raise ValueError("rename_() takes names or a mapping, not both")
        if rename_map:
            current = self.names
            for old in rename_map:
                if old not in current:
                    raise ValueError(
                        f"rename_(): no batch dim is named {old!r} (names: {current})"
                    )
            self.names = [rename_map.get(name, name) for name in current]
        elif len(names) == 1 and names[0] is None:
            self.names = None
        else:
            self.names = _expand_names(names, self.batch_dims, "rename_")
        return self

    def refine_names(self, *names) -> "TensorDictBase":
        """Name the unnamed batch dims (``...`` stands for the dims in between); a
        name that contradicts an existing one is an error.

        >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
        >>> td.refine_names("time", "agent").names
        ['time', 'agent']
        """
        wanted = _expand_names(names, self.batch_dims, "refine_names")
        current = self.names
        refined = []
        for have, want in zip(current, wanted):
            if have is not None and want is not None and have != want:
                raise RuntimeError(
                    f"refine_names(): cannot refine the names {current} to {wanted}: "
                    f"{have!r} is not {want!r}"
                )
            refined.append(have if want is None else want)
        self.names = refined
        return self

    def __getitems__(self, index) -> "TensorDictBase":
        """Batched indexing (what ``torch.utils.data.DataLoader`` calls with a list of
        indices): the same as ``td[index]``."""
        return self[index]

    def _sync_all(self) -> None:
        """Wait for the copies queued on the available accelerator: what a
        construction that copied leaves without waiting calls once (see
        ``_device_recorder``; 0.15.3's method)."""
        _sync_accelerator()

    # ------------------------------------------------------------------ locking
    def lock_(self) -> "TensorDictBase":
        """Refuse new keys and deletions (here and in nested tensordicts) until
        unlocked. Also a context manager: ``with td.lock_(): ...``.

        >>> td = TensorDict(a=torch.zeros(2)).lock_()
        >>> try:
        ...     td["b"] = torch.zeros(2)
        ... except RuntimeError as err:
        ...     print("refused:", "locked" in str(err))
        refused: True
        """
        if self._is_locked:
            # a locked tensordict's tree is locked and recorded already (no nested one
            # can be unlocked, nor an unlocked one set, while it is): nothing to walk
            self._last_lock_op = "lock"
            return self
        snapshot = _atomic.Snapshot(self, structure=False)  # locking changes only flags
        try:
            self._set_lock(True)
        except BaseException:
            snapshot.restore()
            raise
        _lock_graph.record(self)
        self._last_lock_op = "lock"
        return self

    def _lock_shared_(self) -> "TensorDictBase":
        """The last step of :meth:`share_memory_`: lock, and mark this tensordict and
        its nested ones as shared, so that one holding no tensor (only non-tensor
        data) is shared while it stays locked, as in 0.15.3 (:meth:`is_shared`)."""
        _mark_shared(self)
        return self.lock_()

    def unlock_(self) -> "TensorDictBase":
        """Allow writes again. As a context manager, relocks on exit. A tensordict
        held by a locked one cannot be unlocked on its own (``RuntimeError``).

        >>> td = TensorDict(a=torch.zeros(2)).lock_()
        >>> td.unlock_()["b"] = torch.ones(2)
        >>> sorted(td.keys())
        ['a', 'b']
        """
        was_locked = self._is_locked
        _lock_graph.unlock(self)
        _consolidate.forget(self)
        # ``with td.unlock_():`` relocks on exit only what it unlocked (as 0.15.3;
        # "kept", not None: None is a plain ``with``, which closes an HDF5 file)
        self._last_lock_op = "unlock" if was_locked else "kept"
        return self

    def _set_lock(self, locked: bool) -> None:
        if not locked:
            # every unlock may precede a structural change: consolidated caches go stale
            _consolidate.note_unlock()
        self._is_locked = locked
        for _, value in self._own_items():
            if isinstance(value, TensorDictBase):
                value._set_lock(locked)

    def __enter__(self):
        stack = self._lock_stack
        if stack is None:
            stack = self._lock_stack = []
        stack.append(self._last_lock_op)
        self._last_lock_op = None
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        op = self._lock_stack.pop()
        if op == "lock":
            _lock_graph.unlock(self)
        elif op == "unlock":
            _lock_graph.lock(self)
        elif callable(op):  # an undo action set by a feature (to_module's restore),
            op(
                self
            )  # given this tensordict, not holding it: that was a reference cycle
        return False

    # ------------------------------------------------------------------ apply
    def apply(
        self,
        fn: Callable,
        *others,
        batch_size: Sequence[int] | None = None,
        device=NO_DEFAULT,
        names=NO_DEFAULT,
        inplace: bool = False,
        default: Any = NO_DEFAULT,
        filter_empty: bool | None = None,
        propagate_lock: bool = False,
        call_on_nested: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        out: "TensorDictBase | None" = None,
        **constructor_kwargs,
    ) -> "TensorDictBase | None":
        """Apply ``fn`` to every tensor (with the matching tensors of ``others``) and
        collect the results in a new tensordict. A ``None`` result drops the entry;
        nested tensordicts that ``fn`` left empty are dropped (those empty to begin
        with are kept; ``filter_empty=True`` drops every empty one,
        ``filter_empty=False`` none), and when nothing is left at all the result is
        ``None`` (as in 0.15.3). With ``out=``, the results are written into ``out``,
        which is returned.
        ``named=True`` (and ``nested_keys``) make it :meth:`named_apply`, as 0.15.3's
        ``apply`` takes them (TorchRL's collectors pass them). The other options are
        those of :meth:`_apply_nest`.

        >>> td = TensorDict(a=torch.ones(3), sub=TensorDict(b=torch.ones(3)), batch_size=[3])
        >>> out = td.apply(lambda x: x * 2)        # every leaf, nested ones included
        >>> out["sub", "b"].tolist()
        [2.0, 2.0, 2.0]
        >>> td.apply(lambda x, y: x + y, out)["a"].tolist()   # leaf by leaf over two tensordicts
        [3.0, 3.0, 3.0]
        """
        return self._apply_nest(
            fn,
            *others,
            batch_size=batch_size,
            device=device,
            names=names,
            inplace=inplace,
            default=default,
            filter_empty=filter_empty,
            propagate_lock=propagate_lock,
            call_on_nested=call_on_nested,
            is_leaf=is_leaf,
            out=out,
            **constructor_kwargs,
        )

    def apply_(self, fn: Callable, *others, **kwargs) -> "TensorDictBase":
        """Apply ``fn`` to every tensor and write the result into it, in place.

        >>> td = TensorDict(a=torch.ones(2))
        >>> td.apply_(lambda x: x.mul_(3)) is td
        True
        >>> td["a"].tolist()
        [3.0, 3.0]
        """
        kwargs.setdefault("filter_empty", False)  # the result is self either way
        self.apply(fn, *others, inplace=True, **kwargs)
        return self

    def named_apply(
        self,
        fn: Callable,
        *others,
        nested_keys: bool = False,
        batch_size=None,
        device=NO_DEFAULT,
        names=NO_DEFAULT,
        inplace: bool = False,
        default: Any = NO_DEFAULT,
        filter_empty: bool | None = None,
        call_on_nested: bool = False,
        **kwargs,
    ) -> "TensorDictBase | None":
        """Like :meth:`apply`, with the key passed first: ``fn(key, *tensors)``;
        the full nested key as a tuple when ``nested_keys=True``.

        >>> td = TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.zeros(2)))
        >>> out = td.named_apply(lambda key, x: x + len(key), nested_keys=True)
        >>> out["sub", "b"].tolist()      # key ("sub", "b") has length 2
        [2.0, 2.0]
        """
        return self._apply_nest(
            fn,
            *others,
            named=True,
            nested_keys=nested_keys,
            batch_size=batch_size,
            device=device,
            names=names,
            inplace=inplace,
            default=default,
            filter_empty=filter_empty,
            call_on_nested=call_on_nested,
            **kwargs,
        )

    def _apply_nest(
        self,
        fn: Callable,
        *others,
        batch_size: Sequence[int] | None = None,
        device=NO_DEFAULT,
        names=NO_DEFAULT,
        inplace: bool = False,
        checked: bool = False,
        call_on_nested: bool = False,
        default: Any = NO_DEFAULT,
        named: bool = False,
        nested_keys: bool = False,
        prefix: tuple = (),
        filter_empty: bool | None = None,
        is_leaf: Callable[[type], bool] | None = None,
        out: "TensorDictBase | None" = None,
        call_on_unbatched: bool = False,
        propagate_lock: bool = False,
        **constructor_kwargs,
    ) -> "TensorDictBase | None":
        """The walk behind :meth:`apply` and :meth:`named_apply`, under the name and
        with the options 0.15.3 gives it (code such as TorchRL's losses calls it):

        - ``fn(leaf, *matching leaves of others)``; with ``named=True``,
          ``fn(key, leaf, ...)``, the key being ``prefix + path`` as a tuple when
          ``nested_keys=True`` (the last key otherwise);
        - ``call_on_nested=True``: ``fn`` gets the nested tensordicts themselves, not
          their leaves; ``is_leaf(cls)`` says which other entry classes ``fn`` gets
          whole (a nested class, or ``NonTensorData`` for non-tensor data, which is
          otherwise carried over unchanged);
        - ``batch_size``, ``device``, ``names``: those of the result (and of its
          nested levels, for ``batch_size`` and ``device``);
        - ``checked=True``: ``fn``'s results are trusted to fit the result and are
          stored without validation;
        - ``default``: what a key missing from one of ``others`` reads as;
        - ``inplace``, ``out``, ``filter_empty``, ``propagate_lock``: as in
          :meth:`apply`. ``call_on_unbatched`` is accepted for 0.15.3's callers.
        """
        if out is not None and batch_size is not None:
            if torch.Size(batch_size) != out.batch_size:
                raise RuntimeError(
                    "batch_size and out.batch_size must be equal when both are "
                    f"provided: got batch_size={list(batch_size)} and out.batch_size="
                    f"{list(out.batch_size)}."
                )
        produced = None
        if inplace and filter_empty is not False and out is None:
            # in place, a walk where ``fn`` returned None for every leaf (and no
            # non-tensor entry was carried over) has written nothing: None, as the
            # out-of-place walk returns (0.15.3)
            produced = [0, 0]  # leaves seen, results that were not None
            inner_fn = fn

            def fn(*args):
                result = inner_fn(*args)
                produced[0] += 1
                if result is not None:
                    produced[1] += 1
                return result

        result = self._apply(
            fn,
            others,
            named=named,
            nested_keys=nested_keys,
            prefix=tuple(prefix),
            batch_size=batch_size,
            device=device,
            names=names,
            inplace=inplace,
            default=default,
            filter_empty=filter_empty,
            call_on_nested=call_on_nested,
            is_leaf=is_leaf,
            checked=checked,
        )
        result = _apply_result(self, result, inplace, filter_empty, out)
        if (
            produced is not None
            and produced[0]
            and not produced[1]
            and not self._has_non_tensor
        ):
            return None
        if propagate_lock and not inplace and result is not None and self.is_locked:
            result.lock_()
        return result

    def _apply(
        self,
        fn,
        others,
        *,
        named,
        nested_keys,
        prefix,
        batch_size,
        device,
        names,
        inplace,
        default,
        filter_empty,
        call_on_nested,
        is_leaf=None,
        checked=False,
    ):
        out = None
        if not inplace:
            out = self._new_empty(batch_size=batch_size, device=device, names=names)
        for key, value in list(self._own_items()):
            other_values = []
            for other in others:
                other_value = other._get_str(key, NO_DEFAULT, missing_ok=True)
                if other_value is NO_DEFAULT:
                    if default is NO_DEFAULT:
                        raise _errors.key_missing(prefix + (key,), other._own_keys())
                    other_value = default
                other_values.append(other_value)
            is_nested = _is_node(value)
            if is_nested:
                as_leaf = call_on_nested or (
                    is_leaf is not None and is_leaf(type(value))
                )
            else:
                as_leaf = True
            if is_nested and not as_leaf:
                result = value._apply(
                    fn,
                    [
                        ov if isinstance(ov, TensorDictBase) else _Filled(value, ov)
                        for ov in other_values
                    ],
                    named=named,
                    nested_keys=nested_keys,
                    prefix=prefix + (key,),
                    batch_size=batch_size,
                    device=device,
                    names=NO_DEFAULT,
                    inplace=inplace,
                    default=default,
                    filter_empty=filter_empty,
                    call_on_nested=call_on_nested,
                    is_leaf=is_leaf,
                    checked=checked,
                )
                if inplace:
                    continue
                if result is None or _drops_empty(result, value, filter_empty):
                    continue
                out._set_str(key, result, inplace=False, validated=True)
                continue
            if not is_nested and not isinstance(value, Tensor):
                # non-tensor data: carried over as it is, unless ``is_leaf`` asks
                # for it (``fn`` then gets it as NonTensorData, as ``get`` returns it)
                leaf = self._non_tensor_leaf(value, is_leaf)
                if leaf is _MISSING:
                    if not inplace:
                        out._set_str(key, value, inplace=False, validated=True)
                    continue
                value = leaf
                # the matching entries of ``others`` reach ``fn`` in the same form
                # (TorchRL's skipped steps read ``.device`` of both)
                other_values = [
                    ov if ov is default else _as_non_tensor_leaf(other, ov, is_leaf)
                    for other, ov in zip(others, other_values)
                ]
            if named:
                name = prefix + (key,) if (nested_keys and prefix) else key
                result = fn(name, value, *other_values)
            else:
                result = fn(value, *other_values)
            if inplace:
                if result is not None and result is not value:
                    if isinstance(value, Tensor) and isinstance(result, Tensor):
                        try:
                            value.copy_(result)
                        except RuntimeError as err:  # autograd's (a leaf...), shapes
                            raise _errors.InplaceWriteError(
                                f"Failed to update "
                                f"{_errors._fmt_key(prefix + (key,))} in tensordict in "
                                f"place: {err}"
                            ) from err
                    else:
                        self._set_str(key, result, inplace=True, validated=False)
                continue
            if result is None:
                continue
            out._set_str(key, result, inplace=False, validated=checked)
        if inplace:
            return self
        return out

    def _non_tensor_leaf(self, value, is_leaf):
        """What ``fn`` gets for the non-tensor entry ``value`` in :meth:`_apply`:
        ``_MISSING`` (the entry is carried over) unless ``is_leaf`` takes its class."""
        if is_leaf is None:
            return _MISSING
        if isinstance(value, TensorDictBase):  # a NonTensorStack, a NonTensorData
            return value if is_leaf(type(value)) else _MISSING
        cls = container_class("NonTensorData")
        if not is_leaf(cls):
            return _MISSING
        return cls(data=value, batch_size=self.batch_size, device=self.device)

    # ------------------------------------------------------------------ selection
    def select(
        self,
        *keys: NestedKey,
        inplace: bool = False,
        strict: bool = True,
        as_tensordict: bool = False,
    ) -> "TensorDictBase":
        """A tensordict with only ``keys`` (nested keys keep their structure).

        >>> td = TensorDict(a=torch.zeros(2), b=torch.zeros(2), sub=TensorDict(c=torch.zeros(2), d=torch.zeros(2)))
        >>> list(td.select("a", ("sub", "c")).keys(True, True))
        ['a', ('sub', 'c')]
        """
        paths = [unravel_key_to_tuple(k) for k in _flatten_key_args(keys)]
        out = self._new_empty()
        delegated = (
            _select_through_own_selects(self, paths, strict)
            if not inplace and any(len(p) > 1 for p in paths)
            else None
        )
        for path in paths:
            if delegated and path[0] in delegated:
                sub = delegated[path[0]]
                if sub is not None:
                    out._set_str(path[0], sub, inplace=False, validated=True)
                    delegated[path[0]] = None  # written once, in the keys' order
                continue
            value = self._get_path(path, _MISSING)
            if value is _MISSING:
                if strict:
                    raise _errors.key_missing(path, self.keys(True))
                continue
            target = out
            source = self
            for part in path[:-1]:
                source = source._get_str(part, None)
                sub = target._get_str(part, None, missing_ok=True)
                if sub is None:
                    sub = source._new_empty()
                    target._set_str(part, sub, inplace=False, validated=True)
                target = sub
            target._set_str(path[-1], value, inplace=False, validated=True)
        if inplace:
            if self.is_locked:
                raise _errors.locked(
                    f"select({', '.join(repr(p if len(p) > 1 else p[0]) for p in paths)}"
                    f", inplace=True), which removes the other keys"
                )
            with _atomic.unchanged_on_error(self):
                self._replace_contents(out)
            return self
        return out

    def exclude(self, *keys: NestedKey, inplace: bool = False) -> "TensorDictBase":
        """A tensordict without ``keys`` (missing keys are ignored).

        >>> td = TensorDict(a=torch.zeros(2), b=torch.zeros(2), sub=TensorDict(c=torch.zeros(2)))
        >>> list(td.exclude("a", ("sub", "c")).keys(True))
        ['b', 'sub']
        """
        paths = [unravel_key_to_tuple(k) for k in _flatten_key_args(keys)]
        if not inplace:
            return _exclude_paths(self.copy(), paths)
        with _atomic.unchanged_on_error(self):
            return _exclude_paths(self, paths)

    def split_keys(
        self,
        *key_sets,
        inplace: bool = False,
        default: Any = NO_DEFAULT,
        strict: bool = True,
        reproduce_struct: bool = False,
    ) -> tuple["TensorDictBase", ...]:
        """Split into one tensordict per key set, plus one with the remaining keys.

        >>> td = TensorDict(a=torch.zeros(1), b=torch.zeros(1), c=torch.zeros(1))
        >>> first, rest = td.split_keys(["a", "b"])
        >>> sorted(first.keys()), list(rest.keys())
        (['a', 'b'], ['c'])
        """
        parts = []
        taken = []
        for key_set in key_sets:
            if isinstance(key_set, (str, tuple)):
                key_set = [key_set]
            key_set = list(key_set)
            parts.append(self.select(*key_set, strict=strict and default is NO_DEFAULT))
            taken.extend(key_set)
        if inplace:  # the keys are deleted (through a view too, as in 0.15.3)
            present = set(self.keys(True))
            for key in taken:
                single = isinstance(key, tuple) and len(key) == 1 and key[0] in present
                if key in present or single:
                    self.del_(key)
                    if not reproduce_struct:
                        _drop_emptied_parents(self, key)
            return (*parts, self)
        rest = _drop_empty_nested(self.exclude(*taken), keep=reproduce_struct)
        return (*parts, rest)

    # ------------------------------------------------------------------ keys layout
    def flatten_keys(
        self,
        separator: str = ".",
        inplace: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
    ) -> "TensorDictBase":
        """One level: nested entries become ``"outer<sep>inner"`` keys.

        >>> td = TensorDict(a=TensorDict(b=torch.zeros(2), c=TensorDict(d=torch.zeros(2))))
        >>> list(td.flatten_keys(".").keys())
        ['a.b', 'a.c.d']
        """
        out = self._new_empty()
        for key, value in self.items(True, False, is_leaf=is_leaf):
            if _is_node(value) and (is_leaf is None or not is_leaf(type(value))):
                continue
            name = key if isinstance(key, str) else separator.join(key)
            if out._get_str(name, _MISSING, missing_ok=True) is not _MISSING:
                raise _errors.keys_collide("flatten_keys", [key, name])
            if type(value) is container_class("NonTensorData"):
                value = value.data  # stored as its value, as a write of it is
            out._set_str(name, value, inplace=False, validated=True)
        if inplace:
            self._replace_contents(out)
            return self
        out._last_lock_op = _WriteBack(self, "unflatten_keys", separator)
        return out

    def unflatten_keys(
        self, separator: str = ".", inplace: bool = False
    ) -> "TensorDictBase":
        """Inverse of :meth:`flatten_keys`: ``"a<sep>b"`` becomes ``("a", "b")``."""
        out = self._new_empty()
        levels = {(): out}  # path -> nested tensordict of ``out``: each walked once
        for key, value in self._own_items():
            if isinstance(value, TensorDictBase) and not value._is_non_tensor:
                value = value.unflatten_keys(separator)
            path = tuple(key.split(separator)) if separator in key else (key,)
            parent = _unflatten_level(levels, path[:-1])
            if parent is None:  # an entry that is not a tensordict is on the way
                raise _errors.keys_collide("unflatten_keys", [key, path])
            existing = parent._get_str(path[-1], _MISSING, missing_ok=True)
            if isinstance(existing, TensorDictBase) and isinstance(
                value, TensorDictBase
            ):
                held = {unravel_key_to_tuple(k) for k in existing.keys(True, True)}
                prefixes = {h[:n] for h in held for n in range(1, len(h) + 1)}
                # the same leaf twice, or a leaf where the other has a tensordict
                clash = [
                    k
                    for k in map(unravel_key_to_tuple, value.keys(True, True))
                    if k in prefixes or any(k[:n] in held for n in range(1, len(k)))
                ]
                if clash:  # "a.b" and ("a", "b") both become ("a", "b")
                    inner = unravel_key_to_tuple(clash[0])
                    raise _errors.keys_collide("unflatten_keys", [key, path + inner])
                existing.update(value)
                continue
            if existing is not _MISSING:
                raise _errors.keys_collide("unflatten_keys", [key, path])
            parent._set_str(path[-1], value, inplace=False, validated=True)
        if inplace:
            self._replace_contents(out)
            return self
        out._last_lock_op = _WriteBack(self, "flatten_keys", separator)
        return out

    # ------------------------------------------------------------------ copies
    # clone, detach and detach_ are generated (spec/device.yaml)

    def copy(self) -> "TensorDictBase":
        """A new tensordict structure holding the same tensors (a shallow copy).

        >>> td = TensorDict(a=torch.zeros(2))
        >>> c = td.copy()          # a new tensordict, the same tensors
        >>> c["a"] is td["a"], c is td
        (True, False)
        """
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild(leaves)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.clone()

    def empty(
        self,
        recurse: bool = False,
        *,
        batch_size=None,
        device=NO_DEFAULT,
        names=NO_DEFAULT,
    ) -> "TensorDictBase":
        """A tensordict with the same batch size and device and no entries; with
        ``recurse=True`` the nested tensordicts are kept, empty.

        >>> td = TensorDict(a=torch.zeros(3), batch_size=[3], device="cpu")
        >>> e = td.empty()
        >>> list(e.keys()), e.batch_size, e.device
        ([], torch.Size([3]), device(type='cpu'))
        """
        out = self._new_empty(batch_size=batch_size, device=device, names=names)
        if recurse:
            for key, value in self._own_items():
                if isinstance(value, TensorDictBase):
                    out._set_str(
                        key,
                        value.empty(recurse=True, device=device),
                        inplace=False,
                        validated=batch_size is None,
                    )
        return out

    def to_dict(
        self, *, retain_none: bool = True, convert_tensors: bool = False, **kwargs
    ) -> dict:
        """A plain (nested) dict of the entries.

        >>> TensorDict(a=torch.zeros(1), sub=TensorDict(b=torch.ones(1))).to_dict()
        {'a': tensor([0.]), 'sub': {'b': tensor([1.])}}
        """
        out = {}
        for key, value in self._own_items():
            if isinstance(value, TensorDictBase):
                value = value.to_dict(
                    retain_none=retain_none, convert_tensors=convert_tensors
                )
            elif value is None and not retain_none:
                continue
            elif convert_tensors and isinstance(value, Tensor):
                value = value.numpy() if convert_tensors == "numpy" else value.tolist()
            out[key] = value
        return out

    def to_tensordict(self, *, retain_none: bool | None = None) -> "TensorDictBase":
        """A regular :class:`TensorDict` holding copies of the entries.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))])
        >>> dense = s.to_tensordict()
        >>> type(dense).__name__, dense["a"].shape
        ('TensorDict', torch.Size([2, 2]))
        """
        return self.clone()

    # ------------------------------------------------------------------ torch.*
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """``torch.X(td, ...)``: dispatched through the table that
        ``tensordict/_torch_function.py`` builds from the spec."""
        return TensorDictBase._torch_dispatch(func, types, args, kwargs or {})

    # ------------------------------------------------------------------ lazy stacks
    # (implemented in tensordict/_lazy.py)
    @classmethod
    def lazy_stack(cls, input, dim: int = 0, *, out=None, **kwargs):
        """Stack tensordicts lazily along ``dim``: a LazyStackedTensorDict keeping them
        (indexing it along ``dim`` returns them; writes go through to them).

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(4))])
        >>> s.batch_size, s.get_item_shape("a")
        (torch.Size([2]), torch.Size([2, -1]))
        """
        lazy_cls = container_class("LazyStackedTensorDict")
        return lazy_cls.lazy_stack(input, dim, out=out, **kwargs)

    @classmethod
    def maybe_dense_stack(cls, input, dim: int = 0, *, out=None, **kwargs):
        """A dense stack where the tensordicts' keys and shapes allow it, else lazy.

        >>> type(TensorDict.maybe_dense_stack([TensorDict(a=torch.zeros(3))] * 2)).__name__
        'TensorDict'
        """
        lazy_cls = container_class("LazyStackedTensorDict")
        return lazy_cls.maybe_dense_stack(input, dim, out=out, **kwargs)

    def densify(self, layout: torch.layout = torch.strided) -> "TensorDictBase":
        """Turn the lazy stacks held here into dense entries (see
        ``LazyStackedTensorDict.densify``); a dense tensordict is returned as is.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.ones(2)), TensorDict(a=torch.ones(3))])
        >>> s.densify(layout=torch.jagged)["a"].is_nested
        True
        """
        out = self._new_empty()
        for key, value in self._own_items():
            if isinstance(value, TensorDictBase):
                value = value.densify(layout)
            out._set_str(key, value, inplace=False, validated=True)
        return out

    # ------------------------------------------------------------------ misc
    @classmethod
    def from_dict(cls, input_dict, **kwargs) -> "TensorDictBase":
        """A :class:`TensorDict` built from a (nested) dict (see
        ``TensorDict.from_dict``); the kinds that can be built from a dict (lazy
        stacks, tensorclasses, persistent ones) give their own class."""
        return container_class("TensorDict").from_dict(input_dict, **kwargs)

    @classmethod
    def from_list(cls, input, **kwargs) -> "TensorDictBase":
        """One tensordict per mapping of ``input``, stacked along a new first dim (see
        ``TensorDict.from_list``)."""
        return container_class("TensorDict").from_list(input, **kwargs)

    def auto_batch_size_(
        self, batch_dims: int | None = None, keep_compliant_size: bool = False
    ) -> "TensorDictBase":
        """Set the batch size to the longest one every entry shares (at most
        ``batch_dims`` dims, here and in each nested tensordict); nested tensordicts
        get theirs first. With ``keep_compliant_size=True`` and ``batch_dims``, a
        nested tensordict that has ``batch_dims`` dims or more keeps its batch size;
        lazy stacks and non-tensor stacks always keep theirs. A kind whose batch size
        follows another tensordict (lazy stacks, views) refuses the new batch size
        as its ``batch_size`` setter does.

        >>> td = TensorDict(a=torch.zeros(3, 4), b=torch.zeros(3, 4, 5))
        >>> td.auto_batch_size_().batch_size
        torch.Size([3, 4])
        """
        shapes = []
        for value in self._own_values():
            if isinstance(value, TensorDictBase):
                keep = keep_compliant_size and batch_dims is not None
                if type(value) is container_class("TensorDict") and not (
                    keep and value.batch_dims >= batch_dims
                ):
                    value.auto_batch_size_(batch_dims, keep_compliant_size)
                elif getattr(type(value), "_is_tensorclass", False) and not (
                    value._is_non_tensor or (keep and value.batch_dims >= batch_dims)
                ):
                    value._tensordict.auto_batch_size_(batch_dims, keep_compliant_size)
                shapes.append(value.batch_size)
            elif isinstance(value, Tensor) and not is_unbatched(value):
                shapes.append(value.shape)  # (an UnbatchedTensor has no batch dims)
        if not shapes:
            return self
        common = []
        for dims in zip(*shapes):
            if any(d != dims[0] for d in dims):
                break
            common.append(dims[0])
        if batch_dims is not None:
            common = common[:batch_dims]
        self.batch_size = torch.Size(common)
        return self

    def is_shared(self) -> bool:
        """Whether every leaf is in shared memory (``share_memory_()``, or a CUDA
        tensor), so that worker processes see the same storage.

        >>> td = TensorDict(a=torch.zeros(2))
        >>> td.is_shared(), td.share_memory_().is_shared()
        (False, True)
        """
        leaves = self._leaves()
        if not leaves:  # nothing but non-tensor data: shared by share_memory_
            return self._is_locked and getattr(self, "_shared_mark", False)
        # an uninitialized parameter (torch.nn.LazyLinear...) has no memory yet: it
        # does not count
        return bool(leaves) and all(
            leaf.is_shared() for leaf in leaves if not is_lazy(leaf)
        )

    def __repr__(self) -> str:
        return container_repr(self)


def _mark_shared(td) -> None:
    """Mark ``td`` and the tensordicts nested in it as made shared by share_memory_
    (kinds without the slot are left as they are: their leaves say it)."""
    try:
        td._shared_mark = True
    except AttributeError:
        pass
    members = getattr(td, "tensordicts", None)
    if isinstance(members, list):
        # a lazy stack: its members (its own values would be stacks of theirs, made
        # anew, and stacking fails where members differ in shape)
        for member in members:
            if isinstance(member, TensorDictBase) and not member._is_non_tensor:
                _mark_shared(member)
        return
    for value in td._own_values():
        if isinstance(value, TensorDictBase) and not value._is_non_tensor:
            _mark_shared(value)


def _as_non_tensor_leaf(other, value, is_leaf):
    """``value``, read from ``other`` in :meth:`TensorDictBase._apply`, as ``fn``
    gets it beside a non-tensor leaf: a non-tensor entry stored as the value itself
    is wrapped as ``is_leaf`` takes it; tensors, nested tensordicts and defaults
    stand as they are."""
    if not isinstance(other, TensorDictBase) or isinstance(
        value, (Tensor, TensorDictBase)
    ):
        return value
    leaf = other._non_tensor_leaf(value, is_leaf)
    return value if leaf is _MISSING else leaf


class _Filled:
    """Stands in for a missing nested tensordict of ``others`` in ``apply(default=)``:
    every key reads as the default value."""

    __slots__ = ("_like", "_value")

    def __init__(self, like, value):
        self._like = like
        self._value = value

    def _get_str(self, key, default, *, missing_ok=False):
        sub = self._like._get_str(key, NO_DEFAULT, missing_ok=True)
        if isinstance(sub, TensorDictBase):
            return _Filled(sub, self._value)
        return self._value

    def _own_keys(self):
        return self._like._own_keys()


def _walk_default(td, include_nested, leaves_only, prefix, out, with_values) -> None:
    # tensors are leaves, tensordicts are nodes, anything else is non-tensor data
    # (listed unless leaves_only)
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            name = prefix + (key,) if prefix else key
        elif isinstance(value, TensorDictBase):
            full = prefix + (key,)
            if include_nested:
                if type(value)._walk is TensorDictBase._walk:
                    _walk_default(value, True, leaves_only, full, out, with_values)
                else:  # its own walk (a lazy stack lists keys without stacking)
                    _walk_nested(value, leaves_only, None, full, out, with_values)
            if leaves_only:
                continue
            name = full if prefix else key
        elif leaves_only:
            continue
        else:
            name = prefix + (key,) if prefix else key
            if with_values:
                value = _walked_non_tensor(td, value)
        out.append((name, value) if with_values else name)


def _iter_nested(td, leaves_only, is_leaf, prefix):
    """``items(True, leaves_only, is_leaf)`` as 0.15.3 yields them: lazily, each
    nested tensordict before its own entries (``keys(True)`` lists it after)."""
    for key, value in td._iter_own_items():
        full = prefix + (key,)
        name = full if prefix else key
        if isinstance(value, TensorDictBase) and (
            is_leaf is None or not is_leaf(type(value))
        ):
            if not leaves_only:
                yield name, value
            yield from _iter_nested(value, leaves_only, is_leaf, full)
            continue
        if isinstance(value, Tensor):
            if leaves_only and is_leaf is not None and not is_leaf(type(value)):
                continue
        elif isinstance(value, TensorDictBase):  # a node is_leaf calls a leaf
            if leaves_only and not is_leaf(type(value)):
                continue
        else:
            if leaves_only and (is_leaf is None or not is_leaf(_entry_class(value))):
                continue
            value = _walked_non_tensor(td, value)
        yield name, value


def _walk_nested(td, leaves_only, is_leaf, prefix, out, with_values) -> None:
    # a nested container with its own _walk: its entries, under ``prefix``
    for entry in td._walk(True, leaves_only, is_leaf, with_values):
        name = entry[0] if with_values else entry
        full = prefix + (name if isinstance(name, tuple) else (name,))
        out.append((full, entry[1]) if with_values else full)


def _count_default(td, include_nested, leaves_only) -> int:
    # the count _walk_default would list, without building keys
    count = 0
    for value in td._own_values():
        if isinstance(value, TensorDictBase):
            if include_nested:
                if type(value)._walk is TensorDictBase._walk:
                    count += _count_default(value, True, leaves_only)
                else:  # its own walk (a lazy stack counts without stacking)
                    count += len(value._walk(True, leaves_only, None, False))
            if not leaves_only:
                count += 1
        elif not leaves_only or isinstance(value, Tensor):
            count += 1
    return count


def _walk_custom(td, include_nested, leaves_only, is_leaf, prefix, out, with_values):
    for key, value in td._own_items():
        full = prefix + (key,)
        name = full if prefix else key
        if isinstance(value, TensorDictBase) and not is_leaf(type(value)):
            if include_nested:
                if type(value)._walk is TensorDictBase._walk:
                    _walk_custom(
                        value, True, leaves_only, is_leaf, full, out, with_values
                    )
                else:
                    _walk_nested(value, leaves_only, is_leaf, full, out, with_values)
            if leaves_only:
                continue
        elif leaves_only and not is_leaf(_entry_class(value)):
            continue
        if with_values and not isinstance(value, (Tensor, TensorDictBase)):
            value = _walked_non_tensor(td, value)
        out.append((name, value) if with_values else name)


def _entry_class(value) -> type:
    """The class ``is_leaf`` is given for an entry, as :meth:`entry_class` says it:
    ``NonTensorData`` for a non-tensor value kept as the value itself (0.15.3 stores
    it wrapped, so ``default_is_leaf`` skips it)."""
    if not isinstance(value, Tensor) and not _is_node(value):
        return container_class("NonTensorData")
    return type(value)


def _walked_non_tensor(td, value):
    """A non-tensor value stored in ``td`` as ``items(True)``/``values(True)`` list
    it: a NonTensorData with ``td``'s batch size and device, as ``get`` returns it
    (and as 0.15.3 lists it)."""
    return container_class("NonTensorData")(
        data=value, batch_size=td.batch_size, device=td.device, names=td._maybe_names()
    )


def _sort_key(key) -> str:
    return key if isinstance(key, str) else ".".join(key)


def _looks_like_key(index: tuple) -> bool:
    for part in index:
        if isinstance(part, str):
            continue
        if isinstance(part, tuple) and part and _looks_like_key(part):
            continue
        return False
    return True


def _flatten_key_args(keys) -> list:
    # select("a", "b") and select(["a", "b"]) are both accepted
    if len(keys) == 1 and isinstance(keys[0], list):
        return keys[0]
    return list(keys)


def _flat_items(mapping, prefix=()):
    for key, value in mapping.items():
        path = prefix + unravel_key_to_tuple(key)
        if isinstance(value, dict):
            yield from _flat_items(value, path)
        else:
            yield path, value


def _select_through_own_selects(td, paths: list, strict: bool) -> dict:
    """For ``td.select(*paths)``: the nested keys under a nested tensordict are
    selected by it (recursively, so that a lazy stack at any depth selects member by
    member: its members' entries may differ in shape). Returns ``{head: selection}``
    for the keys ``select`` writes so."""
    heads: dict = {}
    whole = {p[0] for p in paths if len(p) == 1}
    for path in paths:
        if len(path) > 1 and path[0] not in whole:
            heads.setdefault(path[0], []).append(path[1:])
    out = {}
    for head, rest in heads.items():
        node = td._get_str(head, None, missing_ok=True)
        if (
            isinstance(node, TensorDictBase)
            and not node._is_non_tensor
            and not getattr(type(node), "_is_tensorclass", False)
        ):
            out[head] = node.select(*rest, strict=strict)
    return out


def _update_resizing(dest, source, clone: bool) -> None:
    """``dest.update(source, update_batch_size=True)`` where the batch sizes are the
    same: entry by entry, nested tensordicts updated the same way (those whose batch
    size differs take their source's, see ``_take_batch_size_of``), so that they keep
    their identity (TorchRL's resets of growing histories)."""
    if _stacked_alike(dest, source):
        # member by member: the members' entries may differ in shape (TorchRL's
        # heterogeneous envs), which a stacked read of each key cannot give
        for mine, theirs in zip(dest.tensordicts, source.tensordicts):
            mine.update(theirs, clone, update_batch_size=True)
        return
    for key, value in list(source.items()):
        target = dest._get_str(key, None) if key in dest.keys() else None
        if _is_node(value) and _is_node(target):
            target.update(value, clone, update_batch_size=True)
            continue
        if clone and isinstance(value, (Tensor, TensorDictBase)):
            value = value.clone()
        elif not isinstance(value, (Tensor, TensorDictBase)) and value is not None:
            value = _walked_non_tensor(source, value)  # a number stays non-tensor
        dest.set(key, value)


# Options of 0.15.3's update / update_ that change nothing here: taken out of their
# ``**kwargs``, whose other names are entries.
_UPDATE_OPTIONS = ("update_batch_size", "ignore_lock")


def _selected_items(source, keys_to_update, clone: bool, non_tensor: bool = False):
    """``(path, value)`` for the leaves of a tensordict or (nested) dict (its
    non-tensor values too with ``non_tensor``), restricted to ``keys_to_update`` when
    given, tensors cloned when ``clone``."""
    items = (
        source.items(True, True, is_leaf=_is_leaf_nontensor if non_tensor else None)
        if isinstance(source, TensorDictBase)
        else _flat_items(source)
    )
    allowed = (
        None
        if keys_to_update is None
        else {unravel_key_to_tuple(k) for k in keys_to_update}
    )
    for key, value in items:
        path = unravel_key_to_tuple(key)
        # a selected key selects the entries under it too (("a",) for ("a", "b"))
        if allowed is not None and not any(
            path[:n] in allowed for n in range(1, len(path) + 1)
        ):
            continue
        if clone and isinstance(value, Tensor):
            value = value.clone()
        yield path, value


def _apply_result(td, result, inplace, filter_empty, out):
    """What ``apply`` returns: ``result`` written into ``out`` when given; ``None``
    when every entry was dropped (unless ``filter_empty=False``)."""
    if inplace or result is None:
        return result
    if (
        filter_empty is not False
        and _has_no_entries(result)
        and not _has_no_entries(td)
    ):
        return None
    if out is not None:
        out.update(result)
        return out
    return result


def _exclude_paths(out: TensorDictBase, paths: list) -> TensorDictBase:
    for path in paths:
        parent = out._get_path(path[:-1], None) if len(path) > 1 else out
        if isinstance(parent, TensorDictBase) and (
            parent._get_str(path[-1], NO_DEFAULT, missing_ok=True) is not NO_DEFAULT
        ):
            parent._del_str(path[-1])
    return out


def _stacked_alike(td, other) -> bool:
    """Whether ``td`` and ``other`` are lazy stacks of as many members, along the same
    dim, member by member of one batch size (an update of one by the other goes
    member-wise)."""
    mine = getattr(td, "tensordicts", None)
    theirs = getattr(other, "tensordicts", None)
    return (
        isinstance(mine, list)
        and isinstance(theirs, list)
        and getattr(other, "stack_dim", None) == getattr(td, "stack_dim", None)
        and len(theirs) == len(mine)
        and all(a.batch_size == b.batch_size for a, b in zip(mine, theirs))
    )


def _save_targets(snapshot, td: TensorDictBase, source, keys_to_update) -> None:
    """Save, for an in-place update, the tensors of ``td`` it will write."""
    members = getattr(td, "tensordicts", None)
    if members is not None:  # a lazy stack: the members' tensors (not stacked copies)
        if _stacked_alike(td, source):
            sources = source.tensordicts
        elif (
            isinstance(getattr(source, "tensordicts", None), list)
            and source.batch_size[: td.batch_dims] == td.batch_size
        ):  # a lazy stack along another dim: the slice each member takes
            lead = (slice(None),) * td.stack_dim
            sources = [source[lead + (i,)] for i in range(len(members))]
        else:
            sources = [source] * len(members)
        for member, member_source in zip(members, sources):
            _save_targets(snapshot, member, member_source, keys_to_update)
        return
    if keys_to_update is None and isinstance(source, TensorDictBase):
        # level by level: a nested lazy stack's leaves may differ in shape between
        # its members, which a walk over the source's stacked leaves cannot read
        for key in source._own_keys():
            target = td._get_str(key, _MISSING, missing_ok=True)
            if isinstance(target, Tensor):
                snapshot.save_data(target)
            elif isinstance(target, TensorDictBase):
                value = source._get_str(key, _MISSING, missing_ok=True)
                if _is_node(value):
                    _save_targets(snapshot, target, value, None)
                else:
                    for leaf in target._leaves():
                        snapshot.save_data(leaf)
        return
    for path, _ in _selected_items(source, keys_to_update, False):
        target = td._get_path(path, _MISSING) if _path_ok(td, path) else _MISSING
        if isinstance(target, Tensor):
            snapshot.save_data(target)
        elif isinstance(target, TensorDictBase):
            for leaf in target._leaves():
                snapshot.save_data(leaf)


def _path_ok(td, path) -> bool:
    # every level on the way is a tensordict (else the update raises, naming it)
    for part in path[:-1]:
        td = td._get_str(part, _MISSING, missing_ok=True)
        if not isinstance(td, TensorDictBase):
            return False
    return True


def _leaf_items(source, non_tensor: bool = False):
    """``(path, tensor)`` for every tensor of a tensordict or (nested) dict (and its
    non-tensor values with ``non_tensor``)."""
    if isinstance(source, TensorDictBase):
        is_leaf = _is_leaf_nontensor if non_tensor else None
        for key, value in source.items(True, True, is_leaf=is_leaf):
            yield unravel_key_to_tuple(key), value
    else:
        for path, value in _flat_items(source):
            if isinstance(value, Tensor):
                yield path, value


def _expand_names(names: tuple, ndim: int, op: str) -> list:
    """``names`` with one ``...`` expanded to as many ``None`` as the dims need."""
    names = (
        list(names[0])
        if len(names) == 1 and isinstance(names[0], (list, tuple))
        else list(names)
    )
    if Ellipsis in names:
        at = names.index(Ellipsis)
        fill = ndim - (len(names) - 1)
        if fill < 0:
            raise _errors.NamesCountError(
                f"{op}(): {len(names) - 1} names for {ndim} batch dims"
            )
        names = names[:at] + [None] * fill + names[at + 1 :]
    if len(names) != ndim:
        raise _errors.NamesCountError(
            f"{op}(): {len(names)} names for {ndim} batch dims"
        )
    return names


def _unflatten_level(levels: dict, path: tuple):
    """The nested tensordict at ``path`` of the result ``unflatten_keys`` builds
    (``levels[()]``), made where missing and remembered in ``levels`` (entries are
    only added to it, so a level found stays the one at its path); None where an
    entry that is not a tensordict is on the way."""
    td = levels.get(path)
    if td is None:
        parent = _unflatten_level(levels, path[:-1])
        if parent is None:
            return None
        td = parent._get_str(path[-1], None, missing_ok=True)
        if td is None:
            td = parent._create_nested_str(path[-1])
        elif not isinstance(td, TensorDictBase):
            return None
        levels[path] = td
    return td


def _is_tensorclass_data(value) -> bool:
    return getattr(type(value), "_is_non_tensor", False) and hasattr(value, "data")


def _is_non_tensor_value(value) -> bool:
    return not isinstance(value, Tensor) and not _is_node(value)


def _non_tensor_read(td: TensorDictBase, key, value) -> Any:
    """The non-tensor ``value`` read at ``key`` (a str or a path) of ``td`` as a
    ``NonTensorData`` with the batch size and device of the level holding it, linked
    to that level (writes to it reach the tensordict, as 0.15.3's stored ones)."""
    parent = td
    if type(key) is not str:
        if len(key) > 1:
            parent = td._get_path(key[:-1])
        key = key[-1]
    data = container_class("NonTensorData")(
        data=value,
        batch_size=parent.batch_size,
        device=parent.device,
        names=parent._maybe_names(),
    )
    data._link_to(parent, key)
    return data


def _has_no_entries(td: TensorDictBase) -> bool:
    for _ in td._own_keys():
        return False
    return True


def _drops_empty(result: TensorDictBase, source: TensorDictBase, filter_empty) -> bool:
    """Whether ``apply`` leaves out ``result``, the walk of the nested ``source``:
    ``filter_empty=True`` drops it when it has no entries; the default (``None``) only
    when ``fn`` emptied it (a tensordict empty to begin with is kept, as in 0.15.3:
    TorchRL sends a collector's state dict, ``env_state_dict`` empty, through
    ``apply``); ``False`` keeps it."""
    if filter_empty is None:
        return _has_no_entries(result) and not _has_no_entries(source)
    return bool(filter_empty) and _has_no_entries(result)


def _drop_emptied_parents(td, key) -> None:
    """After ``key`` was deleted from ``td``: delete the nested tensordicts on its way
    that it left empty, innermost first (``split_keys(inplace=True)``, as 0.15.3)."""
    path = key if isinstance(key, tuple) else (key,)
    for depth in range(len(path) - 1, 0, -1):
        parent = td._get_path(path[:depth], _MISSING)
        if parent is _MISSING or not _is_node(parent) or len(parent._own_keys()):
            return
        td.del_(path[:depth])


def _drop_empty_nested(td: TensorDictBase, keep: bool) -> TensorDictBase:
    if keep:
        return td
    for key, value in list(td._own_items()):
        if _is_node(value):
            _drop_empty_nested(value, keep)
            if _has_no_entries(value):
                td._del_str(key)
    return td


# A tensordict is a mapping of keys to entries: torch.testing.assert_close, and anything
# else that walks mappings, compares two tensordicts key by key.
collections.abc.Mapping.register(TensorDictBase)


class _MovedBack:
    """``with td.to(device_or_dtype) as moved:``: on leaving the block, what was
    written into ``moved`` goes back into ``td`` as in 0.15.3: the entries ``td`` has
    are written in place (keeping their device and dtype), new ones are added (on
    ``td``'s device, when it has one)."""

    __slots__ = ("source",)

    def __init__(self, source) -> None:
        self.source = source

    def __call__(self, moved) -> None:
        self.source.update(moved, inplace=True)


class _WriteBack:
    """``with td.flatten_keys() as flat:`` (or ``unflatten_keys``): on leaving the block,
    what was written into ``flat`` is written back into ``td`` through the inverse op,
    as in 0.15.3 (nested blocks each write back into their own source)."""

    __slots__ = ("source", "inverse", "separator")

    def __init__(self, source, inverse: str, separator: str) -> None:
        self.source, self.inverse, self.separator = source, inverse, separator

    def __call__(self, view) -> None:
        # a locked source takes the values back in place (its keys cannot change)
        self.source.update(
            getattr(view, self.inverse)(self.separator), inplace=self.source.is_locked
        )
