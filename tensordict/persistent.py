"""PersistentTensorDict: a tensordict over an HDF5 file (h5py) or a zarr store.

A handle is a view of the file, as h5py's ``File``/``Group``/``Dataset`` are: groups are
nested tensordicts, datasets are entries, and nothing is read until asked for. ``get``
reads one dataset; indexing (``td[idx]``, ``get_at``) reads only the rows asked for
(slices, ints, boolean masks and index tensors); every other op reads what it needs and
returns its result in RAM, as a :class:`~tensordict.TensorDict`, exactly as it would on
a TensorDict holding the same data. Writes go to the file: ``td["a"] = x``, ``set_``,
``update_``, ``td[idx] = sub``, and, on a file open for writing, in-place writes into a
tensor that ``get`` returned (``td["a"][idx] = v``, ``td["a"].add_(1)``, in-place ops on
the tensordict): such a tensor writes itself back to its dataset.

The batch size is stored as an attribute of each group written here
(``tensordict_batch_size``); a file written elsewhere gets the longest batch size all
its datasets share (or the one given). Non-tensor values JSON can hold are stored as
JSON strings (attribute ``tensordict_value="json"``); other string datasets are read as
``str``. Pickling a PersistentTensorDict sends the file name and group, not the data.

h5py is an optional dependency: ``pip install tensordict[h5]``.

The class speaks to its storage through a backend object (``_H5`` here; ``_Zarr`` in
``tensordict/_zarr.py``, ``backend="zarr"``, which registers itself in ``_BACKENDS``):
opening, telling groups from arrays from non-tensor values, creating arrays and groups,
and where the batch size is kept. Reading rows, writing rows, write-back tensors,
nesting, locking and every op are this module's, the same for both.
"""

from __future__ import annotations

import importlib.util

import json
import os
import warnings
import weakref
from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensordict import _errors
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._keys import unravel_key_to_tuple
from tensordict._outside_ram import OutsideRam
from tensordict._registry import container_class, register
from tensordict._td import (
    TensorDict,
    _normalize_index,
    _parse_batch_size,
    _parse_device,
)
from tensordict.base import NO_DEFAULT, TensorDictBase, _is_node

__all__ = ["PersistentTensorDict", "from_h5", "from_zarr"]

_BATCH_ATTR = "tensordict_batch_size"
_ABSENT = object()  # a default no entry can be
_VALUE_ATTR = "tensordict_value"


#: Whether h5py can be imported (0.15.3's flag; tests skip HDF5 cases on it).
_has_h5 = importlib.util.find_spec("h5py") is not None


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "PersistentTensorDict needs h5py, an optional dependency: install it with "
            "`pip install tensordict[h5]` (or `pip install h5py`)"
        ) from None
    return h5py


# ---------------------------------------------------------------------------- backends


class _H5:
    """h5py behind :class:`PersistentTensorDict` (the interface ``_Zarr`` follows)."""

    name = "h5"
    where = "HDF5 file"
    #: a group without a stored batch size gets its parent's (zarr: its arrays')
    nested_batch_from_arrays = False
    #: whether len(group) is cheap enough to check on every lookup (zarr lists a folder)
    cheap_len = True

    def __init__(
        self, *, allow_pickle=None, non_tensor_as_stack: bool = False, **options
    ) -> None:
        # create_dataset keywords (compression="gzip", chunks=...) for every dataset
        # this handle creates, nested ones included
        self.options = options

    def open(self, filename, mode: str):
        """The root group of the file."""
        return _h5py().File(filename, mode)

    def root_of(self, group):
        return group.file

    def location(self, root):
        """What reopens the file (pickling): its absolute path."""
        return os.path.abspath(root.filename)

    def mode(self, root) -> str:
        return root.mode

    def group_name(self, group) -> str:
        return group.name

    def close(self, root) -> None:
        if root:
            root.close()

    def is_group(self, item) -> bool:
        return isinstance(item, _h5py().Group)

    def is_value(self, item) -> bool:
        return _is_value_dataset(item)

    def read_value(self, item, batch_size) -> Any:
        value = _read_value(item)
        if type(value) is str:
            # 0.15.3's HDF5 backend reads a string as bytes (and says that 0.17 will
            # read str): code written for it decodes what it reads
            warnings.warn(
                f"The h5 backend of PersistentTensorDict reads the string "
                f"{item.name!r}, which tensordict wrote, as bytes. Starting with "
                f"TensorDict 0.17, the default will change to reading it as str, as "
                f"the other backends do. To support both, decode only bytes: "
                f"`value.decode() if isinstance(value, bytes) else value`.",
                FutureWarning,
                stacklevel=4,
            )
            return value.encode()
        return value

    def write_value(self, group, key: str, value, exists: bool) -> None:
        if getattr(value, "_is_non_tensor", False) and hasattr(value, "tolist"):
            value = value.tolist()
            if _one_value(value):
                # an expanded value (``td.expand(n)`` of a string): stored once, as
                # 0.15.3 stores its expanded NonTensorData; it reads back as that
                # value with the batch size of its level
                while isinstance(value, list):
                    value = value[0]
        _write_value(group, key, value, exists)

    def create_array(self, group, key: str, array: np.ndarray) -> None:
        # h5py refuses filters and chunks on a scalar dataset
        options = self.options if array.ndim else {}
        group.create_dataset(key, data=array, **options)

    def create_group(self, group, key: str):
        return group.create_group(key)

    def items(self, group):
        return group.items()

    def read_batch(self, group):
        """``(batch size, names)`` stored in the group's attributes, or ``None``."""
        if _BATCH_ATTR in group.attrs:
            return torch.Size([int(d) for d in group.attrs[_BATCH_ATTR]]), None
        return None

    def write_batch(self, group, batch_size, names=None) -> None:
        group.attrs[_BATCH_ATTR] = list(batch_size)

    def array_shapes(self, group) -> list:
        """The shape of every tensor dataset under ``group``, at any depth."""
        shapes = []
        h5py = _h5py()

        def visit(name, item):
            if isinstance(item, h5py.Dataset) and not _is_value_dataset(item):
                shapes.append(item.shape)

        group.visititems(visit)
        return shapes

    def structure_changed(self, root) -> None:
        """Called after an entry is created or deleted (nothing to do for HDF5)."""

    def write_new(self, filename, write) -> None:
        """Write a new file at ``filename`` with ``write(root)``: to a temporary name
        renamed into place, so that a failed write leaves the old file."""
        partial = f"{filename}.partial-{os.getpid()}"
        try:
            with _h5py().File(partial, "w") as file:
                write(file)
            os.replace(partial, filename)
        except BaseException:
            if os.path.exists(partial):
                os.unlink(partial)
            raise


#: backend name -> backend class (``tensordict/_zarr.py`` adds "zarr")
_BACKENDS: dict = {"h5": _H5}


def _backend(name: str, **options):
    try:
        return _BACKENDS[name](**options)
    except KeyError:
        raise NotImplementedError(
            f"PersistentTensorDict: backend {name!r} is not supported; expected one of "
            f"{sorted(_BACKENDS)}"
        ) from None


# ----------------------------------------------------------------------------- leaves


_IN_PLACE_DUNDERS = frozenset(
    f"__i{op}__"
    for op in (
        "add sub mul truediv floordiv mod pow and or xor lshift rshift matmul".split()
    )
) | {"__setitem__"}


def _mutates(name: str) -> bool:
    return (name.endswith("_") and not name.endswith("__")) or name in _IN_PLACE_DUNDERS


class _DatasetTensor(Tensor):
    """A tensor read from an HDF5 dataset of a writable file: an in-place write into it
    is written back to the dataset. Other ops give plain tensors."""

    _dataset = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if _mutates(name) and args:
            first = args[0]
            targets = first if isinstance(first, (list, tuple)) else (first,)
            for target in targets:
                if isinstance(target, _DatasetTensor):
                    target._write_back()
        out = kwargs.get("out")
        if isinstance(out, _DatasetTensor):
            out._write_back()
        return result

    def __repr__(self, **kwargs) -> str:
        with torch._C.DisableTorchFunctionSubclass():
            return Tensor.__repr__(self.as_subclass(Tensor), **kwargs)

    def _write_back(self) -> None:
        dataset = self._dataset
        if not dataset:  # h5py datasets are falsy once their file is closed
            raise RuntimeError(
                "cannot write back to the file: it is closed (the tensor was "
                "read from a PersistentTensorDict that has been closed)"
            )
        with torch._C.DisableTorchFunctionSubclass():
            dataset[...] = self.detach().cpu().numpy()


def _as_numpy(key, value: Tensor, where: str = "HDF5") -> np.ndarray:
    value = value.detach().cpu()
    if type(value) is not Tensor:
        value = value.as_subclass(Tensor)
    try:
        return value.numpy()
    except TypeError:
        raise TypeError(
            f"cannot store the entry {key!r} in {where}: numpy (and so h5py and zarr) "
            f"has no dtype {value.dtype}"
        ) from None


def _h5_index(index):
    """``index`` (normalised) as h5py takes it, with what to apply afterwards to get
    torch's result (duplicates, order), or ``None`` when h5py cannot read it directly.
    """
    parts = index if type(index) is tuple else (index,)
    out = []
    after = None
    for pos, part in enumerate(parts):
        if isinstance(part, bool) or part is None or part is Ellipsis:
            return None
        if isinstance(part, int):
            out.append(part)
        elif isinstance(part, slice):
            if part.step is not None and part.step <= 0:
                return None
            out.append(part)
        else:
            if after is not None or pos != 0:
                return None  # h5py takes one array index, on the first dim here
            array = part.cpu().numpy() if isinstance(part, Tensor) else np.asarray(part)
            if array.dtype == np.bool_:
                if array.ndim != 1:
                    return None
                array = np.nonzero(array)[0]
            elif array.ndim != 1 or array.dtype.kind not in "iu":
                return None
            uniq, inverse = np.unique(array, return_inverse=True)
            out.append(uniq)
            after = inverse
    return tuple(out), after


def _read_rows(dataset, index, plan=False, ndim=None):
    """``dataset[index]`` as a tensor, reading only the rows asked for where h5py can
    (``plan``: ``_h5_index(index)``, when the caller computed it once for many
    datasets; ``ndim``: the dataset's, when the caller knows it)."""
    if (dataset.ndim if ndim is None else ndim) == 0:
        return torch.as_tensor(dataset[()])[index]
    if plan is False:
        plan = _h5_index(index)
    if plan is None:
        return torch.from_numpy(np.asarray(dataset[()]))[index]
    h5_index, after = plan
    try:
        data = np.asarray(dataset[h5_index])
    except (IndexError, ValueError, TypeError):
        return torch.from_numpy(np.asarray(dataset[()]))[index]
    tensor = torch.from_numpy(data)
    if after is not None:
        tensor = tensor[torch.from_numpy(after)]
    return tensor


def _one_value(values) -> bool:
    """Whether ``values`` (a non-tensor stack's nested lists) holds one value, the same
    (and of a plain type) at every position."""
    flat = []
    todo = [values]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        else:
            flat.append(item)
    if not flat or not isinstance(flat[0], (str, int, float, bool)):
        return False
    first = flat[0]
    return all(type(v) is type(first) and v == first for v in flat)


def _is_value_dataset(dataset) -> bool:
    # non-tensor values are strings (JSON text, or strings written elsewhere); the
    # dtype says so without reading the attributes
    return dataset.dtype.kind in "SOU"


def _read_value(dataset) -> Any:
    raw = dataset[()]
    if dataset.attrs.get(_VALUE_ATTR) == "json":
        if isinstance(raw, bytes):
            raw = raw.decode()
        return json.loads(raw)
    if isinstance(raw, bytes):
        return raw.decode()
    if isinstance(raw, np.ndarray):
        return [v.decode() if isinstance(v, bytes) else v for v in raw.tolist()]
    return raw


# ----------------------------------------------------------------------------- class


@register
class PersistentTensorDict(OutsideRam, TensorDictGeneratedOps, TensorDictBase):
    """A tensordict over an HDF5 file (see the module docstring).

    >>> import tempfile, os
    >>> td = TensorDict(a=torch.arange(6).reshape(3, 2), batch_size=[3])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with PersistentTensorDict.from_dict(td, os.path.join(folder, "x.h5")) as h5:
    ...         print(h5.batch_size, h5[1]["a"].tolist(), type(h5 + 1).__name__)
    torch.Size([3]) [2, 3] TensorDict
    """

    _refuses_memmap_in_place = True
    _memmap_in_place_refusal = "in its HDF5 file"

    __slots__ = (
        "_file",
        "_group",
        "_filename",
        "_group_name",
        "_mode",
        "_batch_size",
        "_device",
        "_names",
        "_is_locked",
        "_last_lock_op",
        "_lock_stack",
        "_nested",
        "_entries",
        "_objects",
        "_memmap_prefix",
        "_backend",
        "_parent_ref",
        "__weakref__",
    )

    def __init__(
        self,
        *,
        batch_size=None,
        filename=None,
        group=None,
        mode: str = "r",
        backend: str = "h5",
        device=None,
        validate_batch_size: bool = True,
        non_tensor_as_stack: bool = False,
        allow_pickle: bool | None = None,
        **kwargs,
    ) -> None:
        store = _backend(
            backend,
            allow_pickle=allow_pickle,
            non_tensor_as_stack=non_tensor_as_stack,
            **kwargs,
        )
        if (filename is None) == (group is None):
            raise ValueError(
                "PersistentTensorDict needs a filename or an open group (h5py or "
                "zarr), not both"
            )
        if filename is not None:
            file = store.open(filename, mode)
            group = file
        else:
            file = store.root_of(group)
        self._backend = store
        self._file = file
        self._group = group
        self._filename = store.location(file)
        self._group_name = store.group_name(group)
        self._mode = store.mode(file)
        self._device = _parse_device(device)
        self._reset_state()
        self._names = None
        stored = store.read_batch(group)
        if batch_size is not None:
            bs = _parse_batch_size(batch_size)
        elif stored is not None:
            bs, names = stored
            if names is not None and any(n is not None for n in names):
                self._names = list(names)
        else:
            bs = _common_batch(store, group, None)
        if validate_batch_size:
            _check_batch(store, group, bs)
        self._batch_size = bs

    @classmethod
    def _child(cls, parent: "PersistentTensorDict", group) -> "PersistentTensorDict":
        self = object.__new__(cls)
        self._backend = store = parent._backend
        self._file = parent._file
        self._group = group
        self._filename = parent._filename
        self._group_name = store.group_name(group)
        self._mode = parent._mode
        self._device = parent._device
        self._nested = {}
        self._entries = None
        self._objects = None
        self._parent_ref = weakref.ref(parent)
        self._is_locked = parent._is_locked
        self._last_lock_op = None
        self._lock_stack = None
        self._names = None
        stored = store.read_batch(group)
        if stored is not None:
            self._batch_size = stored[0]
        elif store.nested_batch_from_arrays:
            # a group another tool wrote: the longest batch size its arrays share
            # (it starts with the parent's, which every array below shares)
            self._batch_size = _common_batch(store, group, None)
        else:
            self._batch_size = parent._batch_size
        return self

    # ------------------------------------------------------------------ building
    @classmethod
    def from_h5(
        cls,
        filename,
        *,
        mode: str = "r",
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        batch_size=None,
        non_tensor_as_stack: bool = False,
    ) -> "PersistentTensorDict":
        """Open the HDF5 file ``filename`` (``mode`` as h5py's). The batch size is
        ``batch_size`` if given, else the one stored by this library, else the longest
        one every dataset shares (at most ``batch_dims`` dims)."""
        if batch_size is None and (auto_batch_size or batch_dims is not None):
            h5py = _h5py()
            with h5py.File(filename, "r") as file:
                batch_size = _common_batch(_H5(), file, batch_dims)
        return cls(filename=filename, mode=mode, batch_size=batch_size)

    @classmethod
    def from_zarr(
        cls,
        filename,
        *,
        mode: str = "r",
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        batch_size=None,
        non_tensor_as_stack: bool = False,
        allow_pickle: bool | None = None,
    ) -> "PersistentTensorDict":
        """Open the zarr store ``filename`` (a folder path or a ``zarr`` Store object;
        ``mode`` as ``zarr.open_group``'s: ``"r"``, ``"r+"``, ``"a"``). The batch size
        is ``batch_size`` if given, else the one ``to_zarr`` stored, else the longest
        leading shape every array shares (at most ``batch_dims`` dims).
        ``non_tensor_as_stack`` reads a string array written by another tool as a
        ``NonTensorStack`` of its rows; ``allow_pickle=True`` reads the pickled values
        0.15.3 writes for objects JSON cannot hold (refused otherwise). See
        ``tensordict/_zarr.py``."""
        if auto_batch_size and batch_size is not None:
            raise TypeError(
                "from_zarr: pass auto_batch_size=True or batch_size, not both"
            )
        options = {
            "allow_pickle": allow_pickle,
            "non_tensor_as_stack": non_tensor_as_stack,
        }
        if batch_size is None and (auto_batch_size or batch_dims is not None):
            store = _backend("zarr", **options)
            batch_size = _common_batch(store, store.open(filename, "r"), batch_dims)
        return cls(
            filename=filename,
            mode=mode,
            batch_size=batch_size,
            backend="zarr",
            **options,
        )

    @classmethod
    def from_dict(
        cls,
        input_dict,
        filename,
        *,
        auto_batch_size: bool = False,
        batch_size=None,
        device=None,
        backend: str = "h5",
        batch_dims: int | None = None,
        allow_pickle: bool | None = None,
        **kwargs,
    ) -> "PersistentTensorDict":
        """Write a tensordict (or a nested dict of tensors) to a new HDF5 file
        ``filename`` and return the PersistentTensorDict over it (open for reading and
        writing)."""
        if isinstance(input_dict, TensorDictBase):
            source = input_dict
        else:
            source = TensorDict.from_dict(
                input_dict,
                batch_size=batch_size,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
            )
        if batch_size is not None:
            source = source.copy()
            source.batch_size = batch_size
        kwargs.pop("mode", None)  # a new file is written, then open for writing
        store = _backend(backend, allow_pickle=allow_pickle, **kwargs)
        store.write_new(filename, lambda root: _write_group(store, root, source))
        return cls(
            filename=filename,
            mode="r+",
            device=device,
            backend=backend,
            allow_pickle=allow_pickle,
            **kwargs,
        )

    def _reset_state(self) -> None:
        """No cached entries or nested views, unlocked: the state of a freshly opened
        file (a new one, or a shallow clone over the same file)."""
        self._nested = {}
        self._entries = None
        self._objects = None
        self._is_locked = False
        self._last_lock_op = None
        self._lock_stack = None

    def clone(self, recurse: bool = True, *, newfile=None, **kwargs):
        """A copy in RAM (a ``TensorDict``); with ``newfile=path``, a copy written to
        that new HDF5 file and opened there (``PersistentTensorDict``), as 0.15.3's
        ``clone(newfile=...)``."""
        if newfile is not None:
            return type(self).from_dict(
                self.to_tensordict(), filename=newfile, device=self._device
            )
        if not recurse:
            # another PersistentTensorDict over the same file and group, unlocked, as
            # 0.15.3's shallow clone
            copy = object.__new__(type(self))
            for name in type(self).__slots__:
                if name != "__weakref__" and hasattr(self, name):
                    object.__setattr__(copy, name, getattr(self, name))
            copy._reset_state()
            copy._parent_ref = None
            return copy
        return super().clone(recurse, **kwargs)

    def close(self) -> None:
        """Close the file (entries read before stay valid; tensors stop writing back).

        >>> h5 = PersistentTensorDict.from_dict(TensorDict(a=torch.zeros(3), batch_size=[3]), "data.h5")
        >>> h5.close()
        """
        self._backend.close(self._file)

    @property
    def file(self):
        """The h5py ``File`` (the root ``zarr.Group`` of a zarr store).

        >>> h5 = PersistentTensorDict.from_dict(TensorDict(a=torch.zeros(3), batch_size=[3]), "data.h5")
        >>> list(h5.file.keys())
        ['a']
        >>> h5.close()
        """
        return self._file

    @property
    def backend(self) -> str:
        """``"h5"`` or ``"zarr"``.

        >>> h5 = PersistentTensorDict.from_dict(TensorDict(a=torch.zeros(3), batch_size=[3]), "data.h5")
        >>> h5.backend
        'h5'
        >>> h5.close()
        """
        return self._backend.name

    @property
    def filename(self) -> str:
        """The path of the HDF5 file, as given when it was opened.

        >>> h5 = PersistentTensorDict.from_dict(TensorDict(a=torch.zeros(3), batch_size=[3]), "data.h5")
        >>> h5.filename.endswith("data.h5")
        True
        >>> h5.close()
        """
        return self._filename

    def __enter__(self):
        if self._last_lock_op is None:  # `with PersistentTensorDict... as td:` closes
            if self._lock_stack is None:
                self._lock_stack = []
            self._lock_stack.append("close")
            return self
        return TensorDictBase.__enter__(self)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._lock_stack and self._lock_stack[-1] == "close":
            self._lock_stack.pop()
            self.close()
            return False
        return TensorDictBase.__exit__(self, exc_type, exc_val, exc_tb)

    def _pickle_reduce(self):
        mode = "r+" if self._mode == "r+" else "r"
        return _reopen, (
            self._filename,
            self._group_name,
            mode,
            list(self._batch_size),
            None if self._device is None else str(self._device),
            self._backend.name,
            self._backend.options,
        )

    # ------------------------------------------------------------------ attributes
    @property
    def batch_size(self) -> torch.Size:
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        bs = _parse_batch_size(value)
        _check_batch(self._backend, self._group, bs)
        self._batch_size = bs
        self._names = None
        if self._writable():
            self._backend.write_batch(self._group, bs)

    def _writable(self) -> bool:
        return self._mode != "r"

    def _check_writable(self, action: str) -> None:
        if not self._writable():
            raise RuntimeError(
                f"cannot {action}: the {self._backend.where} {self._filename} is open read-only "
                f"(mode='r'); open it with mode='r+' to write"
            )

    # ------------------------------------------------------------------ storage
    def _own_keys(self):
        return [key for key, _ in self._backend.items(self._group)]

    def _own_items(self):
        items = []
        for key, what, ndim in self._read_entries():
            if ndim is not None:
                items.append((key, self._read_dataset(what)))
            elif what is None:
                items.append((key, self._get_str(key, NO_DEFAULT)))
            else:
                items.append((key, what))
        return items

    def _own_values(self):
        return [value for _, value in self._own_items()]

    def _item(self, key: str):
        """The h5py object at ``key`` (``None`` if missing). h5py's lookup of a name
        costs about 20 µs, as much as reading a small dataset, so the objects looked
        up are kept until this tensordict writes to its group (or the group's entry
        count changes), as :meth:`_read_entries` keeps its list. Where counting
        the entries costs a listing of the store (zarr: a few ms), the objects are
        kept until this tensordict writes (a key looked up again is looked up in the
        store only if it was missing)."""
        group = self._group
        count = len(group) if self._backend.cheap_len else None
        cache = self._objects
        if cache is None or cache[0] != count:
            cache = self._objects = (count, {})
        item = cache[1].get(key)
        if item is None:
            item = group.get(key)
            if item is not None:
                cache[1][key] = item
        return item

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        item = self._item(key)
        if item is None:
            if default is NO_DEFAULT and not missing_ok:
                raise _errors.key_missing(key, self._group.keys())
            return default
        store = self._backend
        if store.is_group(item):
            nested = self._nested.get(key)
            if nested is None:
                nested = self._nested[key] = PersistentTensorDict._child(self, item)
            return nested
        if store.is_value(item):
            return store.read_value(item, self._batch_size)
        return self._read_dataset(item)

    def _read_dataset(self, item) -> Tensor:
        """The whole tensor of the dataset ``item`` (a tensor that writes itself back
        to the dataset on a writable file)."""
        tensor = torch.from_numpy(np.asarray(item[()]))
        if self._device is not None and self._device.type != "cpu":
            return tensor.to(self._device)
        if self._writable():
            tensor = Tensor._make_subclass(_DatasetTensor, tensor)
            tensor._dataset = item
        return tensor

    def _read_entries(self) -> list:
        """``(key, what, ndim)`` for each entry, in the group's order: ``what`` is the
        h5py dataset of a tensor, the nested PersistentTensorDict of a group, or
        ``None`` for a non-tensor value. Walking the group and opening each object is
        most of what a small read costs, so it is done once and kept until this
        tensordict writes to its group (or the group's entry count changes)."""
        group = self._group
        entries = self._entries
        if entries is not None and len(entries) == len(group):
            return entries
        store = self._backend
        entries = []
        for key, item in store.items(group):
            if store.is_group(item):
                entries.append((key, self._get_str(key, NO_DEFAULT), None))
            elif store.is_value(item):
                entries.append((key, None, None))
            else:
                entries.append((key, item, item.ndim))
        self._entries = entries
        return entries

    def get(self, key, *args, **kwargs):
        """The entry at ``key`` (see :meth:`TensorDictBase.get`); a non-tensor value
        reads as ``NonTensorData`` with the batch size of its level, as on a
        ``TensorDict`` (``td[key]`` gives the value itself)."""
        path = unravel_key_to_tuple(key)
        value = self._get_path(path, _ABSENT)
        if value is _ABSENT or isinstance(value, (Tensor, TensorDictBase)):
            return TensorDictBase.get(self, key, *args, **kwargs)
        parent = self if len(path) == 1 else self._get_path(path[:-1])
        return container_class("NonTensorData")(
            data=value, batch_size=parent.batch_size, device=parent.device
        )

    def get_at(self, key, *args, **kwargs):
        """``td.get(key)[index]``, reading only the rows of ``index``."""
        index = args[0] if args else kwargs.get("index", kwargs.get("idx"))
        path = unravel_key_to_tuple(key)
        parent = self if len(path) == 1 else self._get_path(path[:-1])
        if isinstance(parent, PersistentTensorDict):
            item = parent._group.get(path[-1])
            store = self._backend
            if (
                item is not None
                and not store.is_group(item)
                and not store.is_value(item)
            ):
                return _read_rows(item, _normalize_index(index, parent._batch_size))
        return TensorDictBase.get_at(self, key, *args, **kwargs)

    def _set_str(
        self,
        key: str,
        value,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        self._check_writable(f"set the key {key!r}")
        self._entries = None
        self._objects = None
        group = self._group
        exists = key in group
        if self._is_locked and not (exists and inplace):
            # a locked tensordict takes in-place writes only (set_, update_), as a
            # TensorDict does
            raise _errors.locked(f"set the key {key!r}")
        if isinstance(value, dict):
            value = TensorDict(value, batch_size=self._batch_size)
        if (
            isinstance(value, np.ndarray)
            and not validated
            and value.dtype.kind in "biufc"
        ):
            value = torch.as_tensor(
                value
            )  # an array is a tensor, as a TensorDict sets it
        if isinstance(value, Tensor):
            n = len(self._batch_size)
            if not validated and value.shape[:n] != self._batch_size:
                raise _errors.batch_mismatch(key, value.shape, self._batch_size)
            store = self._backend
            array = _as_numpy(key, value, store.where)
            item = group.get(key) if exists else None
            if (
                item is not None
                and not store.is_group(item)
                and not store.is_value(item)
                and item.shape == array.shape
                and item.dtype == array.dtype
            ):
                item[...] = array
                return
            if inplace and item is not None:
                raise _errors.inplace_mismatch(key, value.shape, item.shape)
            if exists:
                del group[key]
            store.create_array(group, key, array)
            store.structure_changed(self._file)
            return
        if _is_node(value):
            if (
                not validated
                and value.batch_size[: len(self._batch_size)] != self._batch_size
            ):
                raise _errors.batch_mismatch(key, value.batch_size, self._batch_size)
            if exists:
                if inplace:
                    self._get_str(key, NO_DEFAULT).update(value, inplace=True)
                    return
                del group[key]
                self._nested.pop(key, None)
            store = self._backend
            _write_group(store, store.create_group(group, key), value)
            store.structure_changed(self._file)
            return
        if getattr(value, "_is_non_tensor", False) and hasattr(value, "data"):
            value = value.data
        self._backend.write_value(group, key, value, exists)
        self._backend.structure_changed(self._file)

    def _create_nested_str(self, key: str) -> "PersistentTensorDict":
        # the group written to the file, not the empty tensordict it was made from
        self._set_str(key, self._new_empty(), inplace=False, validated=True)
        return self._get_str(key, NO_DEFAULT)

    def rename_key_(self, old_key, new_key, safe: bool = False):
        """Move the entry at ``old_key`` to ``new_key``; an entry already at
        ``new_key`` is a ``KeyError`` (a file's entry is never overwritten by a
        rename, as in 0.15.3)."""
        new = unravel_key_to_tuple(new_key)
        if (
            new != unravel_key_to_tuple(old_key)
            and self._get_path(new, None) is not None
        ):
            raise KeyError(
                f"key {new_key!r} already present in TensorDict: rename_key_ of a "
                f"PersistentTensorDict does not overwrite an entry (delete it first)"
            )
        return TensorDictBase.rename_key_(self, old_key, new_key, safe=safe)

    def _del_str(self, key: str) -> None:
        self._check_writable(f"delete the key {key!r}")
        if self._is_locked:
            raise _errors.locked(f"delete the key {key!r}")
        if key not in self._group:
            raise _errors.key_missing(key, self._group.keys())
        del self._group[key]
        self._backend.structure_changed(self._file)
        self._nested.pop(key, None)
        self._entries = None
        self._objects = None

    def _set_lock(self, locked: bool) -> None:
        self._is_locked = locked
        for nested in self._nested.values():
            nested._set_lock(locked)

    def unlock_(self) -> "TensorDictBase":
        """As :meth:`TensorDict.unlock_`: a group read from a locked
        ``PersistentTensorDict`` (alive) cannot be unlocked on its own."""
        ref = getattr(self, "_parent_ref", None)
        parent = ref() if ref is not None else None
        if parent is not None and parent._is_locked and self._is_locked:
            # 0.15.3's phrase first (code matches it)
            raise RuntimeError(
                f"Cannot unlock a tensordict that is part of a locked graph. Unlock "
                f"the root tensordict first. (unlock_(): the group {self._group_name!r} "
                f"of {self._filename} is held by a locked PersistentTensorDict)"
            )
        return super().unlock_()

    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        if with_values or is_leaf is not None:
            return TensorDictBase._walk(
                self, include_nested, leaves_only, is_leaf, with_values
            )
        out: list = []
        _walk_keys(self._backend, self._group, include_nested, leaves_only, (), out)
        return out

    # ------------------------------------------------------------------ indexing
    def _index(self, index) -> TensorDict:
        idx = _normalize_index(index, self._batch_size)
        return _read_index(self, idx)

    def _set_at_index(self, index, value) -> None:
        self._check_writable("write at an index")
        idx = _normalize_index(index, self._batch_size)
        writes = _row_writes(self, idx, value)
        if writes is not None:  # only the rows asked for, every leaf checked first
            for dataset, where, array in writes:
                dataset[where] = array
            return
        # other cases (new keys, non-tensor values, indices h5py or zarr cannot
        # write, such as unsorted ones): the whole content, rewritten
        ram = self._to_ram()
        ram._set_at_index(idx, value)
        for key, tensor in ram.items(True, True):
            path = unravel_key_to_tuple(key)
            parent = self if len(path) == 1 else self._get_path(path[:-1])
            parent._set_str(path[-1], tensor, inplace=False, validated=True)

    # ------------------------------------------------------------------ leaves
    def _to_ram(self) -> TensorDict:
        """The whole content as a TensorDict in RAM (plain tensors)."""
        storage = {}
        for key, value in self._own_items():
            if isinstance(value, PersistentTensorDict):
                value = value._to_ram()
            elif isinstance(value, _DatasetTensor):
                value = value.as_subclass(Tensor)
            storage[key] = value
        return TensorDict._from_storage(
            storage, self._batch_size, self._device, self._names
        )

    def _check_inplace_move(self, op: str) -> None:
        # 0.15.3's phrase first: code matches it
        raise TypeError(
            f"Cannot use inplace=True with PersistentTensorDict.{op}(): its entries "
            f"live in its file; call {op}() without inplace for a copy in RAM"
        )

    def _leaves(self) -> list[Tensor]:
        out: list = []
        for _, value in self._own_items():
            if isinstance(value, Tensor):
                out.append(value)
            elif isinstance(value, PersistentTensorDict):
                out.extend(value._leaves())
        return out

    def _leaves_and_rebuild(self):
        return self._to_ram()._leaves_and_rebuild()

    def _operand_leaves(self, other, op: str, default=None) -> list:
        return self._to_ram()._operand_leaves(other, op, default)

    def _moved_to(self, device) -> TensorDict:
        return self._to_ram()._moved_to(device)

    def __repr__(self) -> str:
        backend = (
            "" if self._backend.name == "h5" else f"backend={self._backend.name!r}, "
        )
        return (
            f"PersistentTensorDict(filename={self._filename!r}, group={self._group_name!r}, "
            f"keys={sorted(self._own_keys())}, batch_size={self._batch_size!r}, "
            f"{backend}mode={self._mode!r})"
        )


# ----------------------------------------------------------------------------- helpers


def _reopen(filename, group_name, mode, batch_size, device, backend="h5", options=None):
    root = PersistentTensorDict(
        filename=filename,
        mode=mode,
        device=device,
        batch_size=batch_size if group_name == "/" else None,
        backend=backend,
        **(options or {}),
    )
    if group_name == "/":
        return root
    return root._get_path(tuple(part for part in group_name.split("/") if part))


def _write_group(store, group, td) -> None:
    """Write the entries of ``td`` into the (empty) group."""
    names = list(td.names) if td.batch_dims else None
    if names is not None and all(n is None for n in names):
        names = None
    store.write_batch(group, td.batch_size, names)
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            store.create_array(group, key, _as_numpy(key, value, store.where))
        elif _is_node(value):
            _write_group(store, store.create_group(group, key), value)
        else:
            store.write_value(group, key, value, False)


def _write_value(group, key, value, exists: bool) -> None:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"cannot store the non-tensor entry {key!r} ({type(value).__name__}) in "
            f"HDF5: only values JSON can hold (str, numbers, bool, None, lists, dicts)"
        ) from None
    if exists:
        del group[key]
    dataset = group.create_dataset(key, data=text)
    dataset.attrs[_VALUE_ATTR] = "json"


def _read_index(td: PersistentTensorDict, idx, plan=False) -> TensorDict:
    if plan is False:
        plan = _h5_index(idx)
    storage = {}
    new_bs = None
    n = len(td._batch_size)
    for key, what, ndim in td._read_entries():
        if ndim is not None:
            value = _read_rows(what, idx, plan, ndim)
            if new_bs is None:
                new_bs = value.shape[: value.ndim - ndim + n]
        elif what is None:
            value = td._get_str(key, NO_DEFAULT)
            if getattr(value, "_is_non_tensor", False) and value.batch_dims:
                value = value[idx]
        else:
            value = _read_index(what, idx, plan)
        storage[key] = value
    if new_bs is None:
        stand_in = torch.zeros((), dtype=torch.uint8).expand(td._batch_size)
        new_bs = stand_in[idx].shape
    return TensorDict._from_storage(storage, new_bs, td._device, None)


def _row_writes(td: PersistentTensorDict, idx, value) -> list | None:
    """``[(dataset, index, array)]`` that write ``value`` at ``idx`` row by row, or
    ``None`` where the write is not a plain one (a key to create, a non-tensor value,
    an index the storage cannot take in order). Nothing is written here, so that a
    value that does not fit fails before any row changes."""
    plan = _h5_index(idx)
    if plan is None:
        return None
    where, after = plan
    if after is not None and not np.array_equal(after, np.arange(len(after))):
        return None  # unsorted or repeated indices: the slow path keeps torch's order
    if isinstance(value, TensorDictBase):
        items = value.items(include_nested=True, leaves_only=True)
    elif isinstance(value, (Tensor, bool, int, float)):
        items = [(key, value) for key in td.keys(True, True)]
    else:
        return None
    store = td._backend
    writes = []
    for key, sub in items:
        if not isinstance(sub, (Tensor, bool, int, float)):
            return None
        path = unravel_key_to_tuple(key)
        try:
            parent = td if len(path) == 1 else td._get_path(path[:-1])
        except KeyError:
            return None
        if not isinstance(parent, PersistentTensorDict):
            return None
        item = parent._item(path[-1])
        if item is None or store.is_group(item) or store.is_value(item):
            return None
        if item.ndim == 0:
            return None
        shape = torch.zeros((), dtype=torch.uint8).expand(item.shape)[idx].shape
        array = _as_numpy(key, torch.as_tensor(sub), store.where)
        try:
            array = np.broadcast_to(array, tuple(shape))
        except ValueError:
            return None  # the slow path names the mismatch
        array = np.array(array, dtype=item.dtype, order="C")
        writes.append((item, where, array[()] if array.ndim == 0 else array))
    return writes


def _walk_keys(store, group, include_nested, leaves_only, prefix, out) -> None:
    for key, item in store.items(group):
        name = prefix + (key,) if prefix else key
        if store.is_group(item):
            if include_nested:
                _walk_keys(store, item, True, leaves_only, prefix + (key,), out)
            if not leaves_only:
                out.append(name)
        elif store.is_value(item):
            if not leaves_only:
                out.append(name)
        else:
            out.append(name)


def _common_batch(store, group, batch_dims) -> torch.Size:
    """The longest batch size every dataset (at any depth) shares."""
    shapes = store.array_shapes(group)
    common = []
    for dims in zip(*shapes) if shapes else ():
        if any(d != dims[0] for d in dims):
            break
        common.append(dims[0])
    if batch_dims is not None:
        common = common[:batch_dims]
    return torch.Size(common)


def _check_batch(store, group, batch_size) -> None:
    n = len(batch_size)
    for key, item in store.items(group):
        if not store.is_group(item) and not store.is_value(item):
            if tuple(item.shape[:n]) != tuple(batch_size):
                raise _errors.batch_mismatch(key, item.shape, batch_size)


def from_h5(
    h5_file,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size=None,
    non_tensor_as_stack: bool = False,
) -> PersistentTensorDict:
    """A :class:`PersistentTensorDict` over the HDF5 file ``h5_file``.

    >>> _ = PersistentTensorDict.from_dict(TensorDict(a=torch.arange(3), batch_size=[3]), "data.h5")
    >>> h5 = from_h5("data.h5")
    >>> h5["a"].tolist()
    [0, 1, 2]
    >>> h5.close()
    """
    return PersistentTensorDict.from_h5(
        h5_file,
        mode=mode,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        batch_size=batch_size,
        non_tensor_as_stack=non_tensor_as_stack,
    )


def from_zarr(
    zarr_file,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size=None,
    non_tensor_as_stack: bool = False,
    allow_pickle: bool | None = None,
) -> PersistentTensorDict:
    """A :class:`PersistentTensorDict` over the zarr store ``zarr_file`` (see
    :meth:`PersistentTensorDict.from_zarr`).

    >>> _ = TensorDict(x=torch.arange(3), batch_size=[3]).to_zarr("data.zarr")
    >>> from_zarr("data.zarr")["x"].tolist()
    [0, 1, 2]
    """
    return PersistentTensorDict.from_zarr(
        zarr_file,
        mode=mode,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        batch_size=batch_size,
        non_tensor_as_stack=non_tensor_as_stack,
        allow_pickle=allow_pickle,
    )
