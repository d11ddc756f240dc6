"""zarr stores behind :class:`~tensordict.PersistentTensorDict` (``backend="zarr"``).

``td.to_zarr(path, chunks=..., compressors=...)`` writes a store and returns the
PersistentTensorDict over it; ``tensordict.from_zarr(path, mode="r")`` (also
``TensorDict.from_zarr`` and ``PersistentTensorDict.from_zarr``, in
``tensordict/persistent.py``) opens one; importing this module registers the backend. Everything
but the storage calls is ``tensordict/persistent.py``'s, as for HDF5: entries are read
when asked for, ``td[idx]`` and ``get_at`` read only the chunks that hold the rows
asked for, ``td[idx] = sub`` writes only those rows, tensors read from a writable store
write themselves back.

The layout is the one 0.15.3 writes, so that stores go both ways: groups are nested
tensordicts; the batch size (and the dim names) are the group attribute
``"__tensordict__"`` (``{"batch_size": [...], "version": 1, "names": [...]}``);
tensors are arrays, one chunk per array and no compressor unless ``chunks`` /
``compressors`` say otherwise (``chunks`` constrains the leading dims, the others stay
whole); a non-tensor value is a ``uint8`` array of its JSON text marked with the
attribute ``"__tensordict_non_tensor__": {"encoding": "json"}``; a stack of strings
(one per row) is a string array marked ``"__tensordict_stack__": [shape]``.
Values JSON cannot hold are refused on write; pickled values written by 0.15.3 are
read only with ``allow_pickle=True`` (0.15.3 reads them by default, with a warning).
A store written by another tool opens too: its batch size is the longest leading shape
its arrays share, string arrays read as values.

Needs ``zarr>=3.1.1`` (the v3 API): ``pip install "tensordict[zarr]"``.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tensordict._interchange import require
from tensordict._registry import container_class
from tensordict.persistent import _BACKENDS

_META = "__tensordict__"
_VALUE = "__tensordict_non_tensor__"
_STACK = "__tensordict_stack__"
_NUMERIC_KINDS = "biufc"


def _zarr():
    zarr = require("zarr", "the zarr backend of PersistentTensorDict", "zarr")
    if int(zarr.__version__.split(".")[0]) < 3:
        raise ImportError(
            f"the zarr backend of PersistentTensorDict needs zarr 3.1.1 or later (the "
            f"v3 API), found zarr {zarr.__version__}: pip install 'zarr>=3.1.1'"
        )
    return zarr


class _Zarr:
    """zarr v3 behind :class:`PersistentTensorDict`: see ``persistent._H5`` for the
    interface, the module docstring for the layout."""

    name = "zarr"
    where = "zarr store"
    nested_batch_from_arrays = True
    cheap_len = False

    def __init__(
        self,
        *,
        allow_pickle: bool | None = None,
        non_tensor_as_stack: bool = False,
        **options,
    ) -> None:
        self.allow_pickle = allow_pickle
        self.non_tensor_as_stack = non_tensor_as_stack
        # create_array keywords for the arrays this handle creates (chunks, ...)
        self.options = dict(options)
        self._consolidated: bool | None = None  # whether the store keeps a listing

    # ------------------------------------------------------------------ files
    def open(self, filename, mode: str):
        zarr = _zarr()
        if isinstance(filename, Path):
            filename = str(filename)
        mode = "w-" if mode == "x" else mode
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            if mode == "r":  # a consolidated listing, where present, saves store reads
                return zarr.open_group(filename, mode="r")
            return zarr.open_group(filename, mode=mode, use_consolidated=False)

    def root_of(self, group):
        return group

    def location(self, root):
        store = root.store
        path = getattr(store, "root", None)
        if path is not None and root.path == "":
            return os.path.abspath(str(path))
        return store

    def mode(self, root) -> str:
        return "r" if root.read_only else "r+"

    def group_name(self, group) -> str:
        return "/" + group.path

    def close(self, root) -> None:
        close = getattr(root.store, "close", None)
        if close is not None:
            close()

    # ------------------------------------------------------------------ nodes
    def is_group(self, item) -> bool:
        return isinstance(item, _zarr().Group)

    def is_value(self, item) -> bool:
        attrs = item.attrs
        if _VALUE in attrs or _STACK in attrs:
            return True
        return getattr(item.dtype, "kind", "O") not in _NUMERIC_KINDS

    def items(self, group):
        return sorted(group.members(), key=lambda pair: pair[0])

    def array_shapes(self, group) -> list:
        return [
            node.shape
            for _, node in group.members(max_depth=None)
            if not self.is_group(node) and not self.is_value(node)
        ]

    # ------------------------------------------------------------------ values
    def read_value(self, item, batch_size) -> Any:
        attrs = item.attrs
        marker = attrs.get(_VALUE)
        stack = attrs.get(_STACK)
        if marker is not None:
            value = self._decode(item, marker)
        else:
            value = item[...]
            if stack is None:  # a string array of another tool
                n = len(batch_size)
                rows = self.non_tensor_as_stack and value.shape[:n] == tuple(batch_size)
                if not rows or not n:
                    return value.tolist() if value.ndim == 0 else value
            value = value.tolist()
        if stack is not None or marker is None:
            return container_class("NonTensorStack").from_list(value)
        return value

    def _decode(self, item, marker) -> Any:
        encoding = marker.get("encoding") if isinstance(marker, dict) else None
        payload = np.asarray(item[...]).tobytes()
        if encoding == "json":
            return json.loads(payload.decode("utf-8"))
        if encoding == "pickle":
            if not self.allow_pickle:
                raise RuntimeError(
                    f"Refusing to load pickled non-tensor data from a zarr TensorDict "
                    f"(the entry {item.path!r}): unpickling can run any code. Pass "
                    f"allow_pickle=True to from_zarr if the store is trusted"
                )
            return pickle.loads(payload)
        raise ValueError(
            f"the zarr entry {item.path!r} holds a non-tensor value in the unknown "
            f"encoding {encoding!r} (expected 'json' or 'pickle')"
        )

    def write_value(self, group, key: str, value, exists: bool) -> None:
        attrs: dict = {}
        if isinstance(value, container_class("NonTensorStack")):
            values = value.tolist()
            flat = _flatten(values, value.batch_dims)
            if flat and all(v == flat[0] for v in flat[1:]):
                value = flat[0]  # the same value everywhere (an expanded one): once
            else:
                attrs[_STACK] = list(value.batch_size)  # one value per element
                value = values
        elif getattr(value, "_is_non_tensor", False):
            value = value.data  # one value for the whole batch
        if _STACK in attrs and _all_strings(value):
            array = np.array(value, dtype=str)
            if exists:
                del group[key]
            node = group.create_array(
                key,
                shape=array.shape,
                dtype=str,
                chunks=array.shape or None,
                attributes=attrs,
            )
            node[...] = array
            return
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"cannot store the non-tensor entry {key!r} ({type(value).__name__}) "
                f"in a zarr store: only values JSON can hold (str, numbers, bool, None, "
                f"lists, dicts); tensordict writes no pickles"
            ) from None
        payload = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        if exists:
            del group[key]
        attrs[_VALUE] = {"encoding": "json"}
        node = group.create_array(
            key,
            shape=payload.shape,
            dtype=np.uint8,
            chunks=payload.shape,
            compressors=None,
            attributes=attrs,
        )
        node[...] = payload

    # ------------------------------------------------------------------ writing
    def _create_options(self, shape: tuple) -> dict:
        options = dict(self.options)
        options.setdefault("compressors", None)
        chunks = options.pop("chunks", None)
        if shape:
            if chunks is None:
                chunks = shape  # one chunk a leaf: one read per tensor
            else:
                if isinstance(chunks, int):
                    chunks = (chunks,)
                chunks = tuple(chunks)[: len(shape)]
                chunks = chunks + tuple(shape[len(chunks) :])
            options["chunks"] = tuple(max(1, int(c)) for c in chunks)
        return options

    def create_array(self, group, key: str, array: np.ndarray) -> None:
        node = group.create_array(
            key,
            shape=array.shape,
            dtype=array.dtype,
            **self._create_options(array.shape),
        )
        if array.size:
            node[...] = array

    def create_group(self, group, key: str):
        return group.create_group(key)

    def read_batch(self, group):
        meta = group.attrs.get(_META)
        if not isinstance(meta, dict) or "batch_size" not in meta:
            return None
        return torch.Size(int(d) for d in meta["batch_size"]), meta.get("names")

    def write_batch(self, group, batch_size, names=None) -> None:
        meta: dict = {"batch_size": list(batch_size), "version": 1}
        if names is not None:
            meta["names"] = list(names)
        group.attrs[_META] = meta

    def structure_changed(self, root) -> None:
        """A store opened with a consolidated listing (0.15.3 writes one) gets it
        rewritten, so that a reader trusting the listing sees the new entry."""
        zarr = _zarr()
        if self._consolidated is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", category=UserWarning)
                    listing = zarr.open_group(root.store, mode="r").metadata
                self._consolidated = listing.consolidated_metadata is not None
            except Exception:
                self._consolidated = False
        if self._consolidated:
            self._consolidate(root.store)

    @staticmethod
    def _consolidate(store) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            _zarr().consolidate_metadata(store)

    def write_new(self, filename, write) -> None:
        """A new store at ``filename`` (replacing one there): a folder is written
        beside it and swapped in, so that a failed write leaves the old store; a
        ``zarr`` Store object is written in place."""
        zarr = _zarr()
        if not isinstance(filename, (str, os.PathLike)):
            root = zarr.open_group(filename, mode="w", use_consolidated=False)
            write(root)
            if getattr(root.store, "supports_deletes", True):  # not append-only (zip)
                self._consolidate(root.store)
            return
        target = os.path.abspath(os.fspath(filename))
        partial = f"{target}.partial-{os.getpid()}"
        old = f"{target}.old-{os.getpid()}"
        try:
            root = zarr.open_group(partial, mode="w", use_consolidated=False)
            write(root)
            # the listing 0.15.3 writes too: a reader opening with mode="r" reads
            # one file for the whole structure
            self._consolidate(root.store)
            if os.path.exists(target):
                os.replace(target, old)
            os.replace(partial, target)
        finally:
            for leftover in (partial, old):
                if os.path.isdir(leftover):
                    shutil.rmtree(leftover)
                elif os.path.exists(leftover):
                    os.unlink(leftover)


def _flatten(values, dims: int) -> list:
    if dims <= 1:
        return list(values)
    return [v for row in values for v in _flatten(row, dims - 1)]


def _all_strings(values) -> bool:
    if isinstance(values, list):
        return bool(values) and all(_all_strings(v) for v in values)
    return isinstance(values, str)


_BACKENDS["zarr"] = _Zarr
