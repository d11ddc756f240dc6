"""Memory-mapped tensordicts and save/load: the methods every container has.

:class:`PersistenceMixin` is a base of ``TensorDictBase``, so every container kind has
it (a kind adjusts it through ``_memmap_copy_source`` and ``_refuses_memmap_in_place``);
it sits below ``base`` in the import graph, reaches the concrete
classes through :func:`tensordict._registry.container_class`, and writes and reads
folders through :mod:`tensordict._disk` (the format). The module functions
``tensordict.save``, ``load``, ``load_memmap`` and ``memmap`` call the same code.

What "memory-mapped" means here: :meth:`memmap_` turns every tensor leaf into a
:class:`~tensordict.MemoryMappedTensor` (in files under ``prefix``, or in anonymous
shared memory without one) and locks the tensordict; :meth:`is_memmap` is true while it
stays locked. :meth:`memmap`, :meth:`memmap_like` and :meth:`save` do the same to a new
tensordict. Loading (:meth:`load_memmap`) maps the files again and restores the class,
batch size, names, device, non-tensor data and the lock state the tensordict had when
it was saved. See ``docs/persistence.md``.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from tensordict import _archive, _disk, _errors, _pickle
from tensordict import memmap as _memmap
from tensordict._disk import PickledValueWarning, SavedDataError
from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection
from tensordict.memmap import MemoryMappedTensor

__all__ = [
    "PersistenceMixin",
    "PickledValueWarning",
    "SavedDataError",
    "append_memmap",
    "is_memmap_archive",
    "pack_memmap",
    "refresh_archive_checksums",
    "unpack_memmap",
    "load",
    "load_memmap",
    "memmap",
    "save",
]

# The mark of a tensordict memory-mapped in anonymous memory (no folder).
_ANONYMOUS = "<anonymous>"
_MISSING_ENTRY = object()


# ----------------------------------------------------------------------------- kinds


def _is_lazy_stack(td) -> bool:
    return isinstance(td, container_class("LazyStackedTensorDict"))


def _is_tensorclass(td) -> bool:
    return getattr(type(td), "_is_tensorclass", False)


def _is_non_tensor_stack(td) -> bool:
    return isinstance(td, container_class("NonTensorStack"))


def _is_container(value) -> bool:
    return isinstance(value, TensorCollection) and not value._is_non_tensor


def _class_name(td) -> str:
    name = type(td).__name__
    if name in ("LazyStackedTensorDict", "NonTensorStack"):
        return name
    return "TensorDict"


_KINDS = _disk.Kinds()
_KINDS.is_lazy_stack = _is_lazy_stack
_KINDS.is_tensorclass = lambda td: _is_tensorclass(td) and not _is_non_tensor_stack(td)
_KINDS.is_non_tensor_stack = _is_non_tensor_stack
_KINDS.is_container = _is_container
_KINDS.class_name = _class_name


def _holder(td):
    """The object that carries the memory-map mark: a tensorclass's tensordict."""
    return td._tensordict if _is_tensorclass(td) else td


def _mark(td, prefix) -> None:
    holder = _holder(td)
    try:
        holder._memmap_prefix = prefix
    except AttributeError:  # a container without the slot (non-tensor stacks)
        pass


def _marked(td):
    return getattr(_holder(td), "_memmap_prefix", None)


def _keeps_file_views(index) -> bool:
    """Whether ``parent[index]`` of a memory-mapped tensordict is memory-mapped (and
    locked) too: as in 0.15.3, for integers, ``...`` and unit-step slices from the
    start (``td[0]``, ``td[:10]``, ``td[:, 3]``). Other indexes (slices starting
    later or with a step, tensors, masks, lists, ``None``) give an unlocked
    tensordict, so that code written for 0.15.3 which adds keys to them still runs."""
    for part in index if type(index) is tuple else (index,):
        if part is Ellipsis or type(part) is int:
            continue
        if type(part) is slice and part.start in (None, 0) and part.step in (None, 1):
            continue
        return False
    return True


# ----------------------------------------------------------------------------- writing


def _memmap_in_place(
    td, prefix, *, like, copy_existing, num_threads, existsok, locked=None, early=False
):
    """Turn every tensor leaf of ``td`` into a MemoryMappedTensor (files under
    ``prefix``, or anonymous memory), mark and lock ``td``; returns ``td``.

    With ``early``, only lays the save out (checks, plan, the hidden folder with its
    subfolders and metadata) and returns the function that finishes it (writes the
    leaves, puts the folder in place, maps the files) and returns ``td``: the part a
    ``return_early`` save leaves to the background."""
    if getattr(type(td), "_refuses_memmap_in_place", False):
        raise RuntimeError(
            f"Cannot build a memmap TensorDict in-place: a {type(td).__name__} keeps "
            f"its data elsewhere ({td._memmap_in_place_refusal}); use memmap() or "
            f"memmap_like() to make a memory-mapped copy"
        )
    was_locked = td.is_locked if locked is None else locked
    plan = _disk.plan_tree(td, _KINDS, like, encode_values=prefix is not None)
    for folder in plan.folders:
        folder.meta["locked"] = was_locked
    if prefix is None:

        def finish():
            new = _disk.run_jobs(
                [partial(_anonymous, job, like) for job in plan.leaves], num_threads
            )
            marks = [(folder.container, _ANONYMOUS) for folder in plan.folders]
            return _put_back(td, plan, new, marks)

        return finish if early else finish()
    dst = Path(os.path.abspath(os.fspath(prefix)))
    _disk.check_target(dst, existsok)
    staged = _disk.stage_tree(
        dst, plan, copy_existing=copy_existing, folder_files=early
    )

    def finish():
        _disk.finish_tree(staged, num_threads)
        base = os.fspath(dst)
        new = [_mapped(job, base) for job in plan.leaves]
        marks = [
            (folder.container, dst / folder.path if folder.path else dst)
            for folder in plan.folders
        ]
        return _put_back(td, plan, new, marks)

    return finish if early else finish()


def _put_back(td, plan, new, marks):
    td._set_lock(False)
    for job, tensor in zip(plan.leaves, new):
        job.owner._set_str(job.key, tensor, inplace=False, validated=True)
    for container, mark in marks:
        _mark(container, mark)
    td.lock_()
    return td


def _anonymous(job, like) -> MemoryMappedTensor:
    if like:
        return MemoryMappedTensor.zeros(job.shape, dtype=job.dtype)
    return MemoryMappedTensor.from_tensor(job.source)


def _mapped(job, base: str) -> MemoryMappedTensor:
    if job.linked and isinstance(job.source, MemoryMappedTensor):
        return job.source  # its own file, kept in place
    # the file was just written with this size: map it without checking again
    return _memmap.map_file(f"{base}/{job.path}", job.dtype, job.shape, True)


def _data_bytes(td) -> int:
    """The bytes of tensor data a save of ``td`` writes (what a queued save holds)."""
    return sum(
        value.numel() * value.element_size()
        for value in td.values(include_nested=True, leaves_only=True)
        if isinstance(value, torch.Tensor)
    )


def _wants_archive(prefix, archive, compression) -> bool:
    """Whether a save to ``prefix`` writes a single-file archive (``archive=True``,
    or a ``.tdz`` path); ``compression`` only goes with one."""
    if not _archive.wants_archive(prefix, archive):
        if compression is not None:  # 0.15.3's words first
            raise ValueError(
                "compression is only supported when writing a memmap archive (pass "
                "archive=True or use a '.tdz' prefix); a folder's files are written "
                "uncompressed"
            )
        return False
    if prefix is None:
        raise ValueError(
            "archive=True needs a path: pass the archive's file name as prefix "
            "(e.g. 'data.tdz')"
        )
    return True


def _save_archive(td, prefix, *, like, locked, compression, existsok):
    """Write ``td`` as the archive ``prefix`` and return it loaded from there (its
    leaves map the archive; with ``like``, zeros that write into the archive)."""
    plan = _disk.plan_tree(td, _KINDS, like, encode_values=True)
    for folder in plan.folders:
        folder.meta["locked"] = locked
    dst = _archive.write_plan(
        plan=plan, dst=prefix, compression=compression, existsok=existsok
    )
    # the values just pickled come back as they are (nothing is unpickled)
    src = _archive._ArchiveReader(
        dst, "r+" if like else None, _archive.pickled_values(plan)
    )
    return _read(src.path, False, "r+" if like else None, src)


# ----------------------------------------------------------------------------- reading


def _read(folder: Path, allow_pickle: bool, mode, src=_archive.FOLDERS) -> Any:
    """The container saved in ``folder`` (recursively), checked against its metadata;
    ``src`` reads the files (a folder's, or an archive's members)."""
    meta = src.read_meta(folder)
    cls_name = meta.get("class")
    batch_size = _disk.check_shape(meta.get("batch_size"), folder, "<batch_size>")
    device = _read_device(meta.get("device"), folder)
    if cls_name == "LazyStackedTensorDict":
        td = _read_lazy_stack(folder, meta, allow_pickle, mode, batch_size, src)
    elif cls_name == "NonTensorStack":
        values = src.read_value(
            folder, meta.get("values") or {}, allow_pickle, "<values>"
        )
        td = _non_tensor_stack(values, batch_size, device, folder, "<values>")
    elif cls_name == "TensorDict":
        td = _read_tensordict(folder, meta, allow_pickle, mode, batch_size, device, src)
    else:
        raise SavedDataError(
            f"{folder / _disk.META}: unknown class {cls_name!r} (expected TensorDict, "
            f"LazyStackedTensorDict or NonTensorStack)"
        )
    names = meta.get("names")
    if names is not None and cls_name != "LazyStackedTensorDict":
        try:
            td.names = names
        except (ValueError, TypeError) as err:
            raise SavedDataError(f"{folder / _disk.META}: bad names {names!r}: {err}") from None
    _mark(td, folder)
    tc_name = meta.get("tensorclass")
    if tc_name is not None:
        td = _find_tensorclass(tc_name, folder)._from_td(td)
    if meta.get("locked") is True:
        td.lock_()
    return td


def _read_device(value, folder: Path):
    if value is None:
        return None
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError):
        raise SavedDataError(f"{folder / _disk.META}: bad device {value!r}") from None
    # the leaves are mapped in CPU memory, wherever the tensordict was saved from
    return torch.device("cpu") if device.type != "cpu" else device


def _read_tensordict(folder, meta, allow_pickle, mode, batch_size, device, src):
    entries = _disk.field_of(meta, "entries", list, folder)
    n = len(batch_size)
    storage: dict = {}
    shared = _disk.shared_for(mode)
    map_leaf = src.map_leaf  # a folder's files are named by the folder as a str
    where = str(folder) if src is _archive.FOLDERS else folder
    for entry in entries:
        if type(entry) is not dict or type(entry.get("key")) is not str:
            raise SavedDataError(f"{folder / _disk.META}: a bad entry {entry!r}")
        key = entry["key"]
        if key in storage:
            raise SavedDataError(f"{folder / _disk.META}: the key {key!r} appears twice")
        kind = entry.get("kind")
        if kind == "tensor":
            value = map_leaf(where, entry, shared)
            if n and value.shape[:n] != batch_size:
                raise SavedDataError(
                    f"the entry {key!r} ({folder / entry['file']}) has shape "
                    f"{tuple(value.shape)}, which does not start with the batch size "
                    f"{tuple(batch_size)} of {folder / _disk.META}"
                )
        elif kind == "nested":
            name = _disk.check_name(entry.get("dir"), folder, key)
            value = _read(folder / name, allow_pickle, mode, src)
            if value.batch_size[:n] != batch_size:
                raise SavedDataError(
                    f"the nested entry {key!r} ({folder / name}) has batch size "
                    f"{tuple(value.batch_size)}, which does not start with the batch "
                    f"size {tuple(batch_size)} of {folder / _disk.META}"
                )
        elif kind == "value":
            value = src.read_value(folder, entry, allow_pickle, key)
        elif kind == "value_stack":
            values = src.read_value(folder, entry, allow_pickle, key)
            shape = _disk.check_shape(entry.get("batch_size"), folder, key)
            value = _non_tensor_stack(values, shape, device, folder, key)
        else:
            raise SavedDataError(
                f"{folder / _disk.META}: the entry {key!r} has an unknown kind {kind!r}"
            )
        storage[key] = value
    return container_class("TensorDict")._from_storage(storage, batch_size, device, None)


def _read_lazy_stack(folder, meta, allow_pickle, mode, batch_size, src):
    members = _disk.field_of(meta, "members", list, folder)
    stack_dim = _disk.field_of(meta, "stack_dim", int, folder)
    tds = [
        _read(folder / _disk.check_name(name, folder, i), allow_pickle, mode, src)
        for i, name in enumerate(members)
    ]
    cls = container_class("LazyStackedTensorDict")
    try:
        stack = cls(
            *tds,
            stack_dim=stack_dim,
            stack_dim_name=meta.get("stack_dim_name"),
            batch_size=batch_size if not tds else None,
        )
    except (RuntimeError, ValueError, TypeError) as err:
        raise SavedDataError(f"{folder / _disk.META}: the members do not stack: {err}") from None
    if stack.batch_size != batch_size:
        raise SavedDataError(
            f"{folder / _disk.META}: the members stack to batch size "
            f"{tuple(stack.batch_size)}, not the recorded {tuple(batch_size)}"
        )
    return stack


def _non_tensor_stack(values, shape, device, folder, key):
    try:
        array = _pickle.object_array(values, tuple(shape))
    except ValueError:
        raise SavedDataError(
            f"{folder / _disk.META}: the non-tensor values of {key!r} do not form a "
            f"batch of size {tuple(shape)}"
        ) from None
    return container_class("NonTensorStack")._from_array(array, device)


def _find_tensorclass(name: Any, folder: Path) -> type:
    """The tensorclass ``"module:qualname"``, among those already defined (no module is
    imported on the file's say-so)."""
    if not isinstance(name, str) or ":" not in name:
        raise SavedDataError(f"{folder / _disk.META}: bad tensorclass name {name!r}")
    module, _, qualname = name.partition(":")
    for cls in _all_tensorclasses():
        if cls.__module__ == module and cls.__qualname__ == qualname:
            return cls
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if isinstance(found, type) and _is_tensorclass(found):
        return found
    raise SavedDataError(
        f"{folder} holds a {qualname} (a tensorclass from {module}), which is not "
        f"defined in this process: import or define it before loading"
    )


def _all_tensorclasses():
    stack = [container_class("TensorClass")]
    while stack:
        cls = stack.pop()
        yield cls
        stack.extend(cls.__subclasses__())


def _pickle_policy(allow_pickle) -> bool:
    """``allow_pickle`` checked: True, False or None (no pickle), nothing else (a
    truthy 1 is no consent to run code from a file), in 0.15.3's words."""
    if allow_pickle is not None and type(allow_pickle) is not bool:
        raise TypeError(
            f"allow_pickle must be a bool or None, got {type(allow_pickle).__name__} "
            f"{allow_pickle!r}"
        )
    return bool(allow_pickle)


def _load(
    prefix, device, non_blocking, out, subpath, mode, allow_pickle, num_threads=0,
    verify=False,
):
    """``load_memmap``: read the folder, move to ``device``, or load into ``out``."""
    folder, src = _source(prefix, mode)
    if src is not _archive.FOLDERS:
        src.verify = bool(verify)  # the payloads' CRC-32 too (reads every page)
        if device is not None and torch.device(device).type == "meta":
            src.meta_only = True  # shapes and dtypes only: no payload is read
        elif num_threads and num_threads > 1:
            src.prefetch_compressed(num_threads)
    if subpath is not None:
        folder = _subfolder(folder, subpath, src)
    result = _read(folder, _pickle_policy(allow_pickle), mode, src)
    if device is not None:
        result = result.to(device, non_blocking=non_blocking)
    if out is not None:
        _load_into(out, result)
        return out
    return result


def _source(prefix, mode):
    """The folder to read and what reads its files: ``prefix`` itself, or the root of
    the archive ``prefix`` (a file: see :mod:`tensordict._archive`)."""
    folder = Path(os.path.abspath(os.fspath(prefix)))
    if folder.is_file():  # an archive (or a damaged one: the source says so)
        src = _archive._ArchiveReader(folder, mode)
        return src.path, src
    return Path(os.fspath(prefix)), _archive.FOLDERS


def _subfolder(folder: Path, subpath, src) -> Path:
    """The folder of the nested entry ``subpath`` (looked up in the metadata): a key,
    a tuple of keys (nested tuples are flattened), or a ``"a/b"`` path; a lazy stack's
    member is named by its index (``"1/sub"``). A tuple names keys as they are (a key
    may hold a ``/``, as ``("../x",)``)."""
    if isinstance(subpath, tuple):
        parts = list(unravel_key_to_tuple(subpath))
    else:
        parts = [
            piece
            for key in unravel_key_to_tuple(subpath)
            for piece in (key.split("/") if isinstance(key, str) else (str(key),))
            if piece
        ]
    for key in parts:
        meta = src.read_meta(folder)
        for entry in meta.get("entries") or ():
            if isinstance(entry, dict) and entry.get("key") == key and entry.get("kind") == "nested":
                folder = folder / _disk.check_name(entry.get("dir"), folder, key)
                break
        else:
            members = meta.get("members")
            if isinstance(members, list) and key in members:
                folder = folder / _disk.check_name(key, folder, key)
                continue
            raise SubpathError(
                f"No tensordict found under subpath {subpath!r}: {folder} has no "
                f"nested tensordict {key!r}"
            )
    return folder


class SubpathError(KeyError, ValueError):
    """``load_memmap(subpath=...)`` names no saved nested tensordict (a ``KeyError``
    as before, and the ``ValueError`` 0.15.3 raises)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _load_into(target, loaded) -> None:
    """Give ``target`` the entries, batch size, names and device of ``loaded``; nested
    TensorDicts present on both sides are reused."""
    target = _holder(target)
    loaded = _holder(loaded)
    if _is_lazy_stack(target) or _is_lazy_stack(loaded):
        if not (
            _is_lazy_stack(target)
            and _is_lazy_stack(loaded)
            and len(target.tensordicts) == len(loaded.tensordicts)
        ):
            raise TypeError(
                f"cannot load a {type(loaded).__name__} into a "
                f"{type(target).__name__} (lazy stacks load into lazy stacks of as "
                f"many members)"
            )
        for mine, theirs in zip(target.tensordicts, loaded.tensordicts):
            _load_into(mine, theirs)
        target._refresh()
        return
    target._set_lock(False)
    for key in list(target._own_keys()):
        if key not in loaded._own_keys():
            target._del_str(key)
    for key, value in loaded._own_items():
        existing = target._get_str(key, None, missing_ok=True)
        if (
            isinstance(existing, TensorCollection)
            and _is_container(existing)
            and _is_container(value)
            and type(existing) is type(value)
            and not _is_tensorclass(existing)
        ):
            _load_into(existing, value)
        else:
            target._set_str(key, value, inplace=False, validated=True)
    target._batch_size = loaded.batch_size
    target._device = loaded.device
    target._names = loaded._names
    _mark(target, _marked(loaded))
    target._set_lock(loaded.is_locked)


# ----------------------------------------------------------------------------- mixin


class PersistenceMixin:
    """Saving to disk, memory-mapping and loading, for every container class."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # torch.load(weights_only=True) may rebuild a tensorclass that is defined here
        if getattr(cls, "_is_tensorclass", False):
            _pickle.allow_class(cls)

    def __reduce_ex__(self, protocol):
        return _pickle.reduce_container(self)

    # Kinds whose data lives elsewhere (an HDF5 file, a module's parameters) set this
    # and say where in ``_memmap_in_place_refusal``: memmap_ refuses, memmap copies.
    _refuses_memmap_in_place = False
    _memmap_in_place_refusal = ""

    def _memmap_copy_source(self):
        """A new container tree holding the same leaves: what :meth:`memmap`,
        :meth:`memmap_like` and :meth:`save` memory-map (this one stays as it is).
        A kind whose leaves are views of another tensordict's gives its dense form."""
        if self._refuses_memmap_in_place:
            return self.to_tensordict()
        return self.copy()

    # ------------------------------------------------------------------ memmap
    def memmap_(
        self,
        prefix: str | os.PathLike | None = None,
        copy_existing: bool = False,
        *,
        num_threads: int = 0,
        return_early: bool = False,
        share_non_tensor: bool = False,
        existsok: bool = True,
        robust_key: bool | None = None,
        atomic: bool | None = None,
    ):
        """Write every tensor to a file under ``prefix`` (one folder per tensordict,
        one raw file per tensor, metadata as JSON; anonymous shared memory without a
        prefix), replace each leaf by a :class:`~tensordict.MemoryMappedTensor` of
        it, lock the tensordict, and return it.

        The folder is written beside ``prefix`` then swapped in, so a crash leaves the
        previous folder or the new one (``atomic`` is accepted; writing is always
        atomic). ``copy_existing=False`` refuses to copy a leaf already mapped to
        another file; ``existsok=False`` refuses to replace a saved tensordict;
        ``num_threads > 1`` writes the files in parallel, and with ``return_early``
        returns a :class:`concurrent.futures.Future` of the result at once.
        ``share_non_tensor`` and ``robust_key`` are accepted for compatibility (file
        names are always safe; non-tensor values are read from the metadata).

        >>> import tempfile
        >>> td = TensorDict(obs=torch.zeros(3, 4), batch_size=[3])
        >>> with tempfile.TemporaryDirectory() as path:
        ...     out = td.memmap_(path)
        ...     print(out is td, td.is_memmap(), td.is_locked, type(td["obs"]).__name__)
        True True True MemoryMappedTensor
        """
        if prefix is None:
            # as 0.15.3: a tensordict memory-mapped in (or loaded from) a folder is
            # mapped there again, not in anonymous memory
            previous = _marked(self)
            if previous not in (None, _ANONYMOUS):
                prefix = previous
        if return_early and num_threads > 1:
            return _disk.in_background(
                partial(
                    _memmap_in_place,
                    self,
                    prefix,
                    like=False,
                    copy_existing=copy_existing,
                    num_threads=num_threads,
                    existsok=existsok,
                    early=True,
                ),
                _data_bytes(self),
            )
        return _memmap_in_place(
            self,
            prefix,
            like=False,
            copy_existing=copy_existing,
            num_threads=num_threads,
            existsok=existsok,
        )

    def memmap(
        self,
        prefix: str | os.PathLike | None = None,
        copy_existing: bool = False,
        *,
        num_threads: int = 0,
        return_early: bool = False,
        share_non_tensor: bool = False,
        existsok: bool = True,
        robust_key: bool | None = None,
        archive: bool | None = None,
        compression: str | int | None = None,
        atomic: bool | None = None,
    ):
        """A memory-mapped copy (see :meth:`memmap_`); this tensordict is unchanged.

        >>> import tempfile
        >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
        >>> with tempfile.TemporaryDirectory() as path:
        ...     saved = td.memmap(path)
        ...     print(saved.is_memmap(), td.is_memmap(), saved["a"].tolist())
        True False [0, 1, 2]
        """
        if _wants_archive(prefix, archive, compression):
            source = self._memmap_copy_source()

            def run():
                return _save_archive(
                    source,
                    prefix,
                    like=False,
                    locked=self.is_locked,
                    compression=compression,
                    existsok=existsok,
                )

            if return_early and num_threads > 1:
                return _disk.in_background(run, _data_bytes(self))
            return run()
        copy = self._memmap_copy_source()

        def run(early=False):
            return _memmap_in_place(
                copy,
                prefix,
                like=False,
                copy_existing=copy_existing,
                num_threads=num_threads,
                existsok=existsok,
                locked=self.is_locked,
                early=early,
            )

        if return_early and num_threads > 1:
            return _disk.in_background(partial(run, True), _data_bytes(self))
        return run()

    def save(
        self,
        prefix: str | os.PathLike | None = None,
        copy_existing: bool = False,
        *,
        num_threads: int = 0,
        return_early: bool = False,
        share_non_tensor: bool = False,
        robust_key: bool | None = None,
        archive: bool | None = None,
        compression: str | int | None = None,
        atomic: bool | None = None,
        existsok: bool = True,
    ):
        """Save to the folder ``prefix``: the same as :meth:`memmap` (it returns the
        memory-mapped copy). Non-tensor values JSON cannot hold are pickled, with a
        :class:`PickledValueWarning` naming their keys: loading them needs
        ``allow_pickle=True``.

        >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).save("saved")
        >>> TensorDict.load("saved")["a"].tolist()
        [0, 1, 2]
        """
        return self.memmap(
            prefix,
            copy_existing,
            num_threads=num_threads,
            return_early=return_early,
            existsok=existsok,
            archive=archive,
            compression=compression,
        )

    dumps = save  # the same call under the other name users know

    def memmap_like(
        self,
        prefix: str | os.PathLike | None = None,
        copy_existing: bool = False,
        *,
        existsok: bool = True,
        num_threads: int = 0,
        return_early: bool = False,
        share_non_tensor: bool = False,
        robust_key: bool | None = None,
        archive: bool | None = None,
    ):
        """A memory-mapped tensordict with the same keys, shapes and dtypes, filled
        with zeros (nothing is copied: the files are sparse until written). A file of
        the right size already under ``prefix`` at a leaf's place keeps its content,
        so a buffer can be reopened. Use it to preallocate a dataset on disk, then fill
        it by indexing.

        >>> import tempfile
        >>> td = TensorDict(image=torch.zeros(8, 8, dtype=torch.uint8), batch_size=[])
        >>> with tempfile.TemporaryDirectory() as path:
        ...     data = td.expand(1000).memmap_like(path)
        ...     data[3] = TensorDict(image=torch.ones(8, 8, dtype=torch.uint8))
        ...     print(data.batch_size, int(data["image"].sum()))
        torch.Size([1000]) 64
        """
        if _wants_archive(prefix, archive, None):
            if return_early and num_threads > 1:  # 0.15.3's refusal
                raise NotImplementedError(
                    "memmap_like to an archive does not support return_early: the "
                    "buffer is written at once (zeros), call it without return_early"
                )
            result = _save_archive(
                self._memmap_copy_source(),
                prefix,
                like=True,
                locked=self.is_locked,
                compression=None,
                existsok=existsok,
            )
            return result
        copy = self._memmap_copy_source()

        def run(early=False):
            return _memmap_in_place(
                copy,
                prefix,
                like=True,
                copy_existing=copy_existing,
                num_threads=num_threads,
                existsok=existsok,
                locked=self.is_locked,
                early=early,
            )

        if return_early and num_threads > 1:
            return _disk.in_background(partial(run, True), 0)  # sparse files: no data
        return run()

    def memmap_refresh_(self, *, allow_pickle: bool | None = None):
        """Load again from :attr:`saved_path` (entries another process added or
        removed appear), stay memory-mapped and locked; returns ``self``.

        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2]).memmap_("saved")
        >>> td.memmap_refresh_() is td, td.is_memmap()
        (True, True)
        """
        prefix = _marked(self)
        if prefix is None or prefix == _ANONYMOUS or not self.is_locked:
            raise RuntimeError(
                "memmap_refresh_ needs a tensordict memory-mapped in a folder (by "
                "memmap_, memmap or memmap_like with a prefix)"
            )
        self.load_memmap_(prefix, allow_pickle=allow_pickle)
        _mark(self, prefix)
        self.lock_()
        return self

    def _memmap_view_from(self, parent, index) -> None:
        """``self`` is ``parent[index]``: a view of a memory-mapped tensordict is
        memory-mapped too, and locked, as users of 0.15.3 expect (it has no folder
        of its own: ``saved_path`` is None)."""
        if _keeps_file_views(index) and parent.is_locked and _marked(parent) is not None:
            _mark(self, _ANONYMOUS)
            self._is_locked = True  # nested views were locked when they were indexed

    def is_memmap(self) -> bool:
        """True for a tensordict made by :meth:`memmap_`, :meth:`memmap` or
        :meth:`memmap_like` (or loaded locked), while it stays locked.

        >>> td = TensorDict(a=torch.zeros(2))
        >>> td.is_memmap(), td.memmap().is_memmap()
        (False, True)
        """
        return _marked(self) is not None and self.is_locked

    @property
    def saved_path(self) -> Path | None:
        """The folder of a memory-mapped tensordict (``None`` for anonymous memory);
        AttributeError if it is not memory-mapped.

        >>> td = TensorDict(a=torch.zeros(2)).memmap_("saved")
        >>> td.saved_path.name
        'saved'
        """
        if not self.is_memmap():
            raise AttributeError(
                "saved_path: the tensordict is not memory-mapped (memmap_ it first; "
                "unlocking a memory-mapped tensordict ends its memory-mapped state)"
            )
        prefix = _marked(self)
        return None if prefix == _ANONYMOUS else Path(prefix)

    def _memmap_value_written(self, key: str) -> None:
        """The non-tensor value at ``key`` of this memory-mapped tensordict was
        replaced in place (``set_``, ``update_``, a NonTensorData's ``update_``): its
        folder's metadata says the new value, as loading it again will read it."""
        folder = _marked(self)
        if folder in (None, _ANONYMOUS):
            return
        folder = Path(folder)
        meta = _disk.read_meta(folder)
        value = self._get_str(key, None)
        if getattr(value, "_is_non_tensor", False):
            value = value.data
        entry = {"key": key, "kind": "value"}
        inline = _disk.inline_entry(value)
        if inline is not None:
            entry.update(inline)
        else:
            file = _new_file_name(meta, key, ".pickle")
            (folder / file).write_bytes(_disk.pickle_bytes(value))
            entry["pickle"] = file
        old = [e for e in meta["entries"] if e.get("key") == key]
        meta["entries"] = [e for e in meta["entries"] if e.get("key") != key]
        meta["entries"].append(entry)
        _disk.rewrite_meta(folder, meta)
        for stale in old:
            if stale.get("pickle") and stale["pickle"] != entry.get("pickle"):
                (folder / stale["pickle"]).unlink(missing_ok=True)

    # ------------------------------------------------------------------ new entries
    def make_memmap(
        self,
        key,
        shape,
        *,
        dtype: torch.dtype | None = None,
        robust_key: bool | None = None,
    ) -> MemoryMappedTensor:
        """Add a new zero-filled memory-mapped entry at ``key`` to this memory-mapped
        tensordict (its file and metadata are written at once) and return it.

        >>> td = TensorDict(batch_size=[4]).memmap_("saved")
        >>> mt = td.make_memmap("x", shape=(4, 2), dtype=torch.float32)
        >>> td["x"].shape, type(mt).__name__
        (torch.Size([4, 2]), 'MemoryMappedTensor')
        """
        shape = torch.Size(shape.tolist() if isinstance(shape, Tensor) else shape)
        dtype = dtype or torch.get_default_dtype()
        return self._add_memmap_entry(
            key,
            shape,
            dtype,
            lambda filename: MemoryMappedTensor.zeros(
                shape, dtype=dtype, filename=filename, existsok=True
            ),
        )

    def make_memmap_from_tensor(
        self,
        key,
        tensor: Tensor,
        *,
        copy_data: bool = True,
        existsok: bool = True,
        robust_key: bool | None = None,
    ) -> MemoryMappedTensor:
        """Add ``tensor`` (copied, or zeros of its shape with ``copy_data=False``) as a
        new memory-mapped entry at ``key`` and return it.

        >>> td = TensorDict(batch_size=[3]).memmap_("saved")
        >>> _ = td.make_memmap_from_tensor("x", torch.arange(3))
        >>> td["x"].tolist()
        [0, 1, 2]
        """
        return self._add_memmap_entry(
            key,
            tensor.shape,
            tensor.dtype,
            lambda filename: MemoryMappedTensor.from_tensor(
                tensor,
                filename=filename,
                existsok=True,
                copy_existing=True,
                copy_data=copy_data,
            ),
        )

    def make_memmap_from_storage(
        self,
        key,
        storage,
        shape,
        *,
        dtype: torch.dtype | None = None,
        robust_key: bool | None = None,
    ) -> MemoryMappedTensor:
        """Add a memory-mapped entry at ``key`` holding the bytes of ``storage`` as
        ``dtype`` and ``shape`` (written to the entry's file) and return it. The
        tensordict must be memory-mapped in a folder.

        >>> td = TensorDict(batch_size=[2]).memmap_("saved")
        >>> source = torch.arange(4, dtype=torch.int32)
        >>> storage = source.untyped_storage()
        >>> mt = td.make_memmap_from_storage("x", storage, (2, 2), dtype=torch.int32)
        >>> td["x"].tolist(), mt.filename.endswith("x.memmap")
        ([[0, 1], [2, 3]], True)
        """
        shape = torch.Size(shape.tolist() if isinstance(shape, Tensor) else shape)
        view = MemoryMappedTensor.from_storage(storage, shape=shape, dtype=dtype)
        return self._add_memmap_entry(
            key,
            shape,
            view.dtype,
            lambda filename: MemoryMappedTensor.from_tensor(
                view, filename=filename, existsok=True, copy_existing=True
            ),
        )

    def _add_memmap_entry(self, key, shape, dtype, make) -> MemoryMappedTensor:
        if not self.is_memmap():
            raise RuntimeError(
                "make_memmap*: the tensordict is not memory-mapped; memmap_ it first "
                "(new entries of a memory-mapped tensordict go to its folder)"
            )
        path = unravel_key_to_tuple(key)
        parent = _holder(self)
        for part in path[:-1]:
            sub = parent._get_str(part, None, missing_ok=True)
            if sub is None:
                sub = _new_nested_memmap(parent, part)
            parent = _holder(sub)
        if parent._get_str(path[-1], _MISSING_ENTRY, missing_ok=True) is not _MISSING_ENTRY:
            raise RuntimeError(
                f"The key {key!r} already exists within the target tensordict: "
                f"make_memmap* adds new entries only (write into the existing "
                f"memory-mapped tensor instead)"
            )
        batch = parent.batch_size
        if tuple(shape[: len(batch)]) != tuple(batch):
            raise _errors.batch_mismatch(key, shape, batch)
        folder = _marked(parent)
        if folder == _ANONYMOUS or folder is None:
            tensor = make(None)
        else:
            folder = Path(folder)
            meta = _disk.read_meta(folder)
            file = _new_file_name(meta, path[-1], ".memmap")
            tensor = make(str(folder / file))
            entries = [e for e in meta["entries"] if e.get("key") != path[-1]]
            entries.append(
                {
                    "key": path[-1],
                    "kind": "tensor",
                    "file": file,
                    "dtype": str(dtype),
                    "shape": list(shape),
                }
            )
            meta["entries"] = entries
            _disk.rewrite_meta(folder, meta)
        with_lock = parent.is_locked
        parent._set_lock(False)
        parent._set_str(path[-1], tensor, inplace=False, validated=True)
        parent._set_lock(with_lock)
        return tensor

    # ------------------------------------------------------------------ loading
    @classmethod
    def load_memmap(
        cls,
        prefix: str | os.PathLike,
        device=None,
        non_blocking: bool = False,
        *,
        out=None,
        robust_key: bool | None = None,
        subpath=None,
        mode: str | None = None,
        num_threads: int = 0,
        allow_pickle: bool | None = None,
        verify: bool = False,
    ):
        """Load the tensordict saved in the folder ``prefix``: its class (lazy stacks
        lazily, member by member; tensorclasses as their class), batch size, names,
        device, lock state, nested tensordicts and non-tensor data; tensors are mapped,
        not read. Non-tensor values saved with pickle load only with
        ``allow_pickle=True``. ``device`` moves the result (then in RAM); ``mode="r"``
        maps copy-on-write; ``subpath`` loads one nested entry; ``out`` loads into an
        existing tensordict. Damaged or foreign folders raise :class:`SavedDataError`
        naming the key and the file. For a single-file archive the metadata's CRC-32
        is always checked; ``verify=True`` also checks every payload's (reading all
        of it, where a load otherwise maps the pages without reading them).

        >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).memmap("saved")
        >>> TensorDict.load_memmap("saved")["a"].tolist()
        [0, 1, 2]
        """
        result = _load(
            prefix, device, non_blocking, out, subpath, mode, allow_pickle, num_threads,
            verify,
        )
        if (
            out is None
            and getattr(cls, "_is_tensorclass", False)
            and not _is_tensorclass(result)
        ):
            result = cls._from_td(result)
        return result

    @classmethod
    def load(cls, prefix: str | os.PathLike, *args, **kwargs):
        """The same as :meth:`load_memmap`.

        >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).save("saved")
        >>> TensorDict.load("saved").batch_size
        torch.Size([3])
        """
        return cls.load_memmap(prefix, *args, **kwargs)

    def load_memmap_(
        self,
        prefix: str | os.PathLike,
        robust_key: bool | None = None,
        *,
        allow_pickle: bool | None = None,
        mode: str | None = None,
    ):
        """Load the tensordict saved in ``prefix`` into this one (its entries replace
        these; nested tensordicts on both sides are reused) and return ``self``.

        >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).memmap("saved")
        >>> td = TensorDict(a=torch.zeros(3, dtype=torch.int64), batch_size=[3])
        >>> td.load_memmap_("saved")["a"].tolist()
        [0, 1, 2]
        """
        folder, src = _source(prefix, mode)
        loaded = _read(folder, _pickle_policy(allow_pickle), mode, src)
        _load_into(self, loaded)
        return self

    def load_(self, prefix: str | os.PathLike, *args, **kwargs):
        """The same as :meth:`load_memmap_`.

        >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).save("saved")
        >>> td = TensorDict(a=torch.zeros(3, dtype=torch.int64), batch_size=[3])
        >>> td.load_("saved")["a"].tolist()
        [0, 1, 2]
        """
        return self.load_memmap_(prefix, *args, **kwargs)

    # ------------------------------------------------------------------ HDF5
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
    ):
        """A :class:`~tensordict.PersistentTensorDict` over the HDF5 file
        ``filename`` (reads are lazy; needs ``pip install tensordict[h5]``).

        >>> TensorDict(a=torch.arange(3), batch_size=[3]).to_h5("data.h5").close()
        >>> td = TensorDict.from_h5("data.h5")
        >>> td["a"].tolist()
        [0, 1, 2]
        >>> td.close()
        """
        return container_class("PersistentTensorDict").from_h5(
            filename,
            mode=mode,
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
            batch_size=batch_size,
            non_tensor_as_stack=non_tensor_as_stack,
        )

    def to_h5(self, filename, **kwargs):
        """Write this tensordict to the HDF5 file ``filename`` and return the
        :class:`~tensordict.PersistentTensorDict` over it.

        >>> h5 = TensorDict(a=torch.zeros(3), batch_size=[3]).to_h5("data.h5")
        >>> type(h5).__name__, h5.batch_size
        ('PersistentTensorDict', torch.Size([3]))
        >>> h5.close()
        """
        return container_class("PersistentTensorDict").from_dict(
            self, filename=filename, **kwargs
        )

    def to_store(
        self,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        device=None,
        **kwargs,
    ):
        """Upload this tensordict to a Redis-compatible server (one transaction) and
        return the :class:`~tensordict.TensorDictStore` over it (a
        :class:`~tensordict.LazyStackedTensorDictStore` for a lazy stack); needs
        ``pip install tensordict[store]``.

        Example:
            >>> from tensordict.store._server import LocalServer
            >>> td = TensorDict(obs=torch.arange(6.0).view(3, 2), batch_size=[3])
            >>> with LocalServer() as server:
            ...     store = td.to_store(port=server.port)
            ...     print(store[1]["obs"])
            ...     store.clear_redis()
            ...     store.close()
            tensor([2., 3.])
        """
        store = container_class("TensorDictStore").from_tensordict(
            self,
            backend=backend,
            host=host,
            port=port,
            db=db,
            unix_socket_path=unix_socket_path,
            prefix=prefix,
            device=device,
            **kwargs,
        )
        if getattr(type(self), "_is_tensorclass", False):  # the class, over the store
            return type(self)._from_td(store)
        return store


    # ------------------------------------------------------------------ zarr
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
    ):
        """A :class:`~tensordict.PersistentTensorDict` over the zarr store
        ``filename`` (reads are lazy; needs ``pip install tensordict[zarr]``); see
        :meth:`PersistentTensorDict.from_zarr`.

        >>> _ = TensorDict(x=torch.arange(3), batch_size=[3]).to_zarr("data.zarr")
        >>> TensorDict.from_zarr("data.zarr")["x"].tolist()
        [0, 1, 2]
        """
        persistent = container_class("PersistentTensorDict")
        out = persistent.from_zarr(
            filename,
            mode=mode,
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
            batch_size=batch_size,
            non_tensor_as_stack=non_tensor_as_stack,
            allow_pickle=allow_pickle,
        )
        # a tensorclass gets an instance of itself over the store
        return cls._from_td(out) if getattr(cls, "_is_tensorclass", False) else out

    def to_zarr(self, filename, *, allow_pickle: bool | None = None, **kwargs):
        """Write this tensordict to a new zarr store ``filename`` (a folder, replaced
        if there, or a ``zarr`` Store object) and return the
        :class:`~tensordict.PersistentTensorDict` over it. ``kwargs`` go to
        ``zarr.Group.create_array`` for each tensor: by default one uncompressed chunk
        per tensor; ``chunks=(16,)`` chunks every leaf along its first dim in blocks
        of 16 (the other dims stay whole), so that indexed reads and writes touch
        only the chunks of their rows; ``compressors=...`` compresses.

        >>> store = TensorDict(x=torch.arange(3), batch_size=[3]).to_zarr("data.zarr")
        >>> type(store).__name__, store.backend
        ('PersistentTensorDict', 'zarr')
        """
        source = self._tensordict if getattr(self, "_is_tensorclass", False) else self
        out = container_class("PersistentTensorDict").from_dict(
            source, filename, backend="zarr", allow_pickle=allow_pickle, **kwargs
        )
        # a tensorclass gives an instance of its class over the store
        return type(self)._from_td(out) if source is not self else out


def _new_file_name(meta: dict, key: str, suffix: str) -> str:
    taken = {
        str(e.get(field_name, "")).lower()
        for e in meta.get("entries") or ()
        if e.get("key") != key
        for field_name in ("file", "dir", "pickle")
    }
    name = _disk.entry_names([key])[key] + suffix
    if name.lower() in taken:
        name = _disk.encoded_name(key) + suffix
    return name


def _new_nested_memmap(parent, key: str):
    """An empty nested tensordict at ``key`` of a memory-mapped ``parent``, with its
    own folder and metadata."""
    nested = parent._new_empty()
    folder = _marked(parent)
    if folder not in (None, _ANONYMOUS):
        folder = Path(folder)
        meta = _disk.read_meta(folder)
        name = _new_file_name(meta, key, "")
        sub = folder / name
        sub.mkdir(exist_ok=True)
        _disk.rewrite_meta(sub, _disk.empty_meta(list(nested.batch_size), nested.device))
        meta["entries"].append({"key": key, "kind": "nested", "dir": name})
        _disk.rewrite_meta(folder, meta)
        _mark(nested, sub)
    else:
        _mark(nested, folder)
    locked = parent.is_locked
    parent._set_lock(False)
    parent._set_str(key, nested, inplace=False, validated=True)
    parent._set_lock(locked)
    return nested


# ----------------------------------------------------------------------------- functions


def memmap(
    data,
    prefix: str | os.PathLike | None = None,
    copy_existing: bool = False,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    existsok: bool = True,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool | None = None,
):
    """``data.memmap(prefix, ...)``: a memory-mapped copy of a tensordict.

    >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
    >>> on_disk = memmap(td, "saved")
    >>> on_disk.is_memmap(), td.is_memmap()
    (True, False)
    """
    return data.memmap(
        prefix,
        copy_existing,
        num_threads=num_threads,
        return_early=return_early,
        existsok=existsok,
        archive=archive,
        compression=compression,
    )


def save(
    data,
    prefix: str | os.PathLike | None = None,
    copy_existing: bool = False,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool | None = None,
    existsok: bool = True,
):
    """``data.save(prefix, ...)``: write a tensordict to the folder ``prefix``.

    >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
    >>> _ = save(td, "saved")
    >>> load("saved")["a"].tolist()
    [0, 1, 2]
    """
    return data.save(
        prefix,
        copy_existing,
        num_threads=num_threads,
        return_early=return_early,
        existsok=existsok,
        archive=archive,
        compression=compression,
    )


def load_memmap(
    prefix: str | os.PathLike,
    device=None,
    non_blocking: bool = False,
    *,
    out=None,
    robust_key: bool | None = None,
    subpath=None,
    mode: str | None = None,
    num_threads: int = 0,
    allow_pickle: bool | None = None,
    verify: bool = False,
):
    """Load the tensordict saved in ``prefix`` (see ``TensorDict.load_memmap``).

    >>> _ = TensorDict(a=torch.arange(3), batch_size=[3]).memmap("saved")
    >>> back = load("saved")
    >>> back.batch_size, back["a"].tolist()
    (torch.Size([3]), [0, 1, 2])
    """
    return _load(
        prefix, device, non_blocking, out, subpath, mode, allow_pickle, num_threads,
        verify,
    )


load = load_memmap


# ----------------------------------------------------------------------------- archives


def append_memmap(prefix, rows, *, allow_pickle: bool | None = None) -> None:
    """Append ``rows`` along the first batch dimension of the tensordict saved in the
    folder ``prefix`` (see ``docs/persistence.md``): all checks run before the first
    byte is written; an archive cannot grow (unpack it first). ``ValueError`` if
    ``prefix`` is not a saved folder or the rows do not fit it (keys, dtypes,
    trailing shapes, non-tensor values).

    >>> _ = TensorDict(a=torch.zeros(3, 2), batch_size=[3]).save("rows")
    >>> append_memmap("rows", TensorDict(a=torch.ones(2, 2), batch_size=[2]))
    >>> load_memmap("rows")["a"].sum(-1).tolist()
    [0.0, 0.0, 0.0, 2.0, 2.0]
    """
    _archive.append_memmap(prefix, rows, allow_pickle=allow_pickle, kinds=_KINDS)


pack_memmap = _archive.pack_memmap
unpack_memmap = _archive.unpack_memmap
is_memmap_archive = _archive.is_memmap_archive
refresh_archive_checksums = _archive.refresh_archive_checksums
