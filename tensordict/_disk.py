"""The on-disk format of a saved tensordict: one folder per tensordict, one raw file per
tensor, the rest as JSON.

A folder holds ``meta.json`` and, for each entry of its tensordict, a raw file (a
tensor: its elements, no header), a subfolder (a nested tensordict, lazy stack member or
tensorclass, each with its own ``meta.json``, so that a subfolder can be loaded alone),
or nothing (a non-tensor value JSON can hold is written in ``meta.json``; any other is
pickled into a ``.pickle`` file, which loading reads only when the caller passes
``allow_pickle=True``). ``meta.json`` names every key and its file, so file names can be
safe whatever the key (``/``, ``..``, NUL, very long, non-ASCII): plain keys keep their
name, the others get a name made of a hash of the key. ``docs/persistence.md`` gives the
schema.

Writing is atomic with respect to the writing process dying: the whole tree is written
into a new folder beside the target, then swapped with it in one ``renameat2`` exchange
(Linux; elsewhere two renames). The old tree is removed by a background thread, or
kept as the target's spare: the next save to the target is written into it (see "spare
trees" below). A reader sees the old folder or the new one. Files are not synced to the disk (a power failure is not
covered).

Reading validates everything it is given (format and version, names, dtypes, shapes,
file sizes, batch sizes) and raises :class:`SavedDataError` naming the key and the file
rather than returning a wrong tensor.

This module builds no container itself: :mod:`tensordict._persistence` turns what it
reads into tensordicts through the class registry.
"""

from __future__ import annotations

import collections
import concurrent.futures
import atexit
import base64
import ctypes
import ctypes.util
import hashlib
import itertools
import json
import os
import pickle
import re
import shutil
import sys
import threading
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import torch
from torch import Tensor

try:
    import fcntl
except ImportError:  # Windows: no leases, spare trees are never written over
    fcntl = None

from tensordict._unbatched import is_unbatched
from tensordict import _futures
from tensordict import memmap as _memmap
from tensordict.memmap import MemoryMappedTensor

FORMAT = "tensordict-memmap"
VERSION = 1
META = "meta.json"

__all__ = [
    "FORMAT",
    "VERSION",
    "META",
    "SavedDataError",
    "PickledValueWarning",
]


# Saving values with pickle warns (PickledValueWarning) only when this is True: as in
# 0.15.3, a save is silent by default (code run with warnings as errors saves such
# values); loading them is what needs consent (allow_pickle=True).
WARN_WHEN_PICKLING = False


class SavedDataError(ValueError):
    """A folder does not hold a saved tensordict this library can read, or holds a
    damaged one (the message names the key and the file)."""


class PickleNotAllowedError(SavedDataError, RuntimeError):
    """A value saved with pickle is read without ``allow_pickle=True`` (a
    ``SavedDataError``, and a ``RuntimeError`` as 0.15.3 raises)."""


class PickledValueWarning(UserWarning):
    """Some non-tensor values were saved with pickle: loading them needs
    ``allow_pickle=True``."""


# ----------------------------------------------------------------------------- names

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}\Z")
_RESERVED_ENDINGS = (".json", ".memmap", ".pickle")


# What 0.15.3 percent-encodes in a key to make a file name of it: control characters,
# the space, DEL and the characters some file systems refuse or read as separators.
_FS_UNSAFE = frozenset(map(chr, range(32))) | frozenset(' "%*/:<>?\\|\x7f')


def fs_encode_key(key: str) -> str:
    """``key`` as 0.15.3 names its file (``robust_key``): each unsafe character as
    ``%XX`` (upper-case hex, ``%`` itself included), ``.`` and ``..`` as ``%2E``s, the
    empty key as ``%``. Decoded by :func:`fs_decode_key`."""
    if not key:
        return "%"
    if key in (".", ".."):
        return "%2E" * len(key)
    if not _FS_UNSAFE.intersection(key):
        return key
    return "".join(f"%{ord(c):02X}" if c in _FS_UNSAFE else c for c in key)


def fs_decode_key(name: str) -> str:
    """The key :func:`fs_encode_key` made ``name`` of (a ``%`` not followed by two hex
    digits stays as it is)."""
    if name == "%":
        return ""
    if "%" not in name:
        return name
    return re.sub(
        r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name
    )


def _encoded_portable(key: str) -> str | None:
    """``fs_encode_key(key)`` where it is a portable file name (ASCII, at most 255
    bytes with a suffix, no reserved ending), else None."""
    name = fs_encode_key(key)
    if (
        not name.isascii()
        or len(name) > 240
        or name.lower().endswith(_RESERVED_ENDINGS)
        or name.startswith("%") and _HASHED_NAME.match(name)
    ):
        return None
    return name


_HASHED_NAME = re.compile(r"%[0-9a-f]{32}-")


def entry_names(keys) -> dict[str, str]:
    """A file name (without suffix) for each key of one folder: the key itself where
    it is a plain, portable name; else its percent-encoding, as 0.15.3 names it
    (``"a/b"`` -> ``"a%2Fb"``), where that is a portable ASCII name; ``%`` + a hash of
    the key (+ a readable hint) otherwise. Unique even on case-insensitive file
    systems."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for key in keys:
        name = key
        if (
            not _PLAIN_NAME.match(key)
            or key.lower().endswith(_RESERVED_ENDINGS)
            or key.lower() in taken
        ):
            name = _encoded_portable(key)
            if name is None or name.lower() in taken:
                name = encoded_name(key)
        taken.add(name.lower())
        out[key] = name
    return out


def encoded_name(key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    hint = re.sub(r"[^A-Za-z0-9_]", "_", key[:32])
    return f"%{digest}-{hint}"


def check_name(name: Any, meta_path: Path, key: Any) -> str:
    """A name read from ``meta.json``: one plain path component, nothing else (a
    damaged or crafted file must not point outside the folder)."""
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\x00" in name
        or len(name.encode("utf-8", "surrogatepass")) > 255
    ):
        raise SavedDataError(
            f"{meta_path}: the entry {key!r} names the file {name!r}, which is not a "
            f"plain file name inside the folder; the metadata is damaged"
        )
    return name


# ----------------------------------------------------------------------------- values


def _json_exact(value: Any) -> bool:
    """True when JSON gives ``value`` back with the same types (str, int, float, bool,
    None, and lists / str-keyed dicts of those)."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return True
    if kind is list:
        return all(_json_exact(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _json_exact(v) for k, v in value.items())
    return False


# ----------------------------------------------------------------------------- writing


@dataclass
class LeafJob:
    """One tensor to write: ``source`` is the tensor (``None``: zeros of ``dtype`` and
    ``shape``, for ``memmap_like``), ``path`` its file relative to the root. ``owner``
    and ``key`` say where it lives, to put the mapped result back."""

    owner: Any
    key: str
    source: Tensor | None
    dtype: torch.dtype
    shape: torch.Size
    path: str
    key_path: tuple
    linked: bool = False  # the file is the leaf's own file, hard-linked, not rewritten


@dataclass
class FolderPlan:
    """A folder to write: its path relative to the root, its container, its metadata."""

    path: str
    container: Any
    meta: dict
    pickles: dict = field(default_factory=dict)  # file name -> bytes


@dataclass
class Plan:
    encode_values: bool = True
    folders: list = field(default_factory=list)
    leaves: list = field(default_factory=list)
    pickled_keys: list = field(default_factory=list)


class Kinds:
    """How the writer tells containers apart; filled by :mod:`tensordict._persistence`
    (which knows the registered classes), so that this module imports none."""

    is_lazy_stack: Callable[[Any], bool]
    is_tensorclass: Callable[[Any], bool]
    is_non_tensor_stack: Callable[[Any], bool]
    is_container: Callable[[Any], bool]
    class_name: Callable[[Any], str]


def plan_tree(root, kinds: Kinds, like: bool, encode_values: bool = True) -> Plan:
    """What writing ``root`` takes: every folder with its metadata, every leaf
    (``encode_values=False``: leaves only, non-tensor values left unencoded)."""
    plan = Plan(encode_values=encode_values)
    _plan_container(root, "", (), kinds, like, plan)
    return plan


def empty_meta(batch_size: list, device) -> dict:
    """The metadata of an empty TensorDict folder."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "class": "TensorDict",
        "batch_size": list(batch_size),
        "shape": list(batch_size),  # the batch size under 0.15.3's name, for its readers
        "device": None if device is None else str(device),
        "names": None,
        "locked": False,
        "entries": [],
    }


def _base_meta(td, kinds: Kinds) -> dict:
    device = td.device
    names = td.names if hasattr(td, "names") else None
    if names is not None and all(n is None for n in names):
        names = None
    return {
        "format": FORMAT,
        "version": VERSION,
        "class": kinds.class_name(td),
        "batch_size": list(td.batch_size),
        "shape": list(td.batch_size),  # the batch size under 0.15.3's name, for its readers
        "device": None if device is None else str(device),
        "names": names,
        "locked": bool(td.is_locked),
    }


def _plan_container(td, path: str, key_path: tuple, kinds, like, plan) -> None:
    if kinds.is_tensorclass(td):
        inner = td._tensordict
        before = len(plan.folders)
        _plan_container(inner, path, key_path, kinds, like, plan)
        meta = plan.folders[before].meta
        cls = type(td)
        meta["tensorclass"] = f"{cls.__module__}:{cls.__qualname__}"
        meta["locked"] = bool(td.is_locked)
        return
    meta = _base_meta(td, kinds)
    folder = FolderPlan(path, td, meta)
    plan.folders.append(folder)
    if kinds.is_non_tensor_stack(td):
        meta["class"] = "NonTensorStack"
        meta["values"] = _value_entry(
            td.tolist(), "values", path, key_path, folder, plan, stack_shape=td.batch_size
        )
        return
    if kinds.is_lazy_stack(td):
        meta["stack_dim"] = td.stack_dim
        meta["stack_dim_name"] = td._stack_dim_name
        meta["names"] = None
        members = []
        for i, member in enumerate(td.tensordicts):
            name = str(i)
            members.append(name)
            _plan_container(
                member, _join(path, name), key_path + (i,), kinds, like, plan
            )
        meta["members"] = members
        return
    entries = []
    items = list(td._own_items())
    names = entry_names([key for key, _ in items])
    for key, value in items:
        name = names[key]
        here = key_path + (key,)
        if isinstance(value, Tensor):
            if value.is_nested:
                raise NotImplementedError(
                    f"cannot memory-map the entry {_fmt(here)}: nested tensors "
                    f"(torch.nested) are not supported on disk; store them as a lazy "
                    f"stack of tensordicts instead"
                )
            if is_unbatched(value):
                raise NotImplementedError(
                    f"cannot memory-map the entry {_fmt(here)}: UnbatchedTensor entries "
                    f"are not supported on disk; exclude it first, e.g. with "
                    f"td.exclude({here[-1]!r}) (as in 0.15.3)"
                )
            file = name + ".memmap"
            plan.leaves.append(
                LeafJob(
                    td,
                    key,
                    None if like else value,
                    value.dtype,
                    value.shape,
                    _join(path, file),
                    here,
                )
            )
            entries.append(
                {
                    "key": key,
                    "kind": "tensor",
                    "file": file,
                    "dtype": str(value.dtype),
                    "shape": list(value.shape),
                }
            )
        elif kinds.is_non_tensor_stack(value):
            entry = {"key": key, "kind": "value_stack", "batch_size": list(value.batch_size)}
            entry.update(
                _value_entry(value.tolist(), name, path, here, folder, plan, stack_shape=value.batch_size)
            )
            entries.append(entry)
        elif kinds.is_container(value):
            entries.append({"key": key, "kind": "nested", "dir": name})
            _plan_container(value, _join(path, name), here, kinds, like, plan)
        else:
            if getattr(value, "_is_non_tensor", False):  # a NonTensorData object
                value = value.data
            entry = {"key": key, "kind": "value"}
            entry.update(_value_entry(value, name, path, here, folder, plan))
            entries.append(entry)
    meta["entries"] = entries


def json_exact(value: Any) -> bool:
    """Whether JSON holds ``value`` exactly (else it is saved with pickle)."""
    return _json_exact(value)


def pickle_bytes(value: Any) -> bytes:
    """``value`` as written to a ``.pickle`` file."""
    return pickle.dumps(value)


def inline_entry(value: Any) -> dict | None:
    """The metadata entry holding ``value`` inline: ``{"json": value}`` for what JSON
    holds exactly, ``{"bytes": base64 text}`` for ``bytes`` (the strings HDF5 reads,
    as 0.15.3); ``None`` when it needs pickle."""
    if _json_exact(value):
        return {"json": value}
    if type(value) is bytes:
        return {"bytes": base64.b64encode(value).decode("ascii")}
    return None


def inline_value(entry: dict) -> Any:
    """The value of an inline entry (see :func:`inline_entry`); ``_NO_INLINE`` when the
    entry is not inline."""
    if "json" in entry:
        return entry["json"]
    if "bytes" in entry:
        return base64.b64decode(entry["bytes"])
    return _NO_INLINE


_NO_INLINE = object()


def _value_entry(value, name, path, key_path, folder, plan, stack_shape=None) -> dict:
    if not plan.encode_values:
        return {"json": value}
    inline = inline_entry(value)
    if inline is not None:
        return inline
    file = name + ".pickle"
    folder.pickles[file] = pickle.dumps(value)
    plan.pickled_keys.append((_fmt(key_path), _join(path, file)))
    return {"pickle": file}


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _fmt(key_path: tuple) -> str:
    if len(key_path) == 1:
        return repr(key_path[0])
    return repr(key_path)


def check_target(dst: Path, existsok: bool) -> None:
    """Refuse to replace what is not ours to replace: a file, or a folder holding
    other files than a saved tensordict (or anything, with ``existsok=False``)."""
    if not dst.exists():
        return
    if not dst.is_dir():
        raise NotADirectoryError(
            f"cannot save a tensordict to {dst}: it is a file, not a folder"
        )
    entries = list(os.scandir(dst))
    if not entries:
        return
    links = sorted(e.name for e in entries if e.is_symlink())
    if links:  # 0.15.3's phrase first (existing code matches it)
        raise RuntimeError(
            f"Refusing to write TensorDict through symlink {dst / links[0]}: the "
            f"folder {dst} holds symbolic links {links}, and writing through them "
            f"would land outside it; choose an empty or new folder"
        )
    if not existsok:
        raise RuntimeError(
            f"cannot save a tensordict to {dst}: a saved tensordict already exists "
            f"there (pass existsok=True to replace it)"
        )
    if not (dst / META).is_file():
        raise RuntimeError(
            f"refusing to replace {dst}: the folder holds files but no {META}, so it "
            f"is not a saved tensordict; choose an empty or new folder"
        )


@dataclass
class Staged:
    """A save laid out by :func:`stage_tree` (its folders and, if staged with them,
    its metadata files, in a hidden folder beside the target), waiting for its leaves
    to be written and the folder put in place by :func:`finish_tree`."""

    dst: Path
    tmp: Path
    reuse: bool
    plan: Plan
    folder_files_written: bool


def stage_tree(
    dst: Path, plan: Plan, *, copy_existing: bool, folder_files: bool = False
) -> Staged:
    """Lay out ``plan`` beside ``dst``: the hidden folder (a spare tree of ``dst``
    when there is one) and its subfolders, and with ``folder_files`` each folder's
    ``meta.json`` and pickles. Checks ``copy_existing`` for every leaf."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(dst)
    tmp = _take_spare(dst)
    reuse = tmp is not None
    if tmp is None:
        tmp = dst.parent / f".{dst.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        tmp.mkdir()
    try:
        if reuse:
            _prune(tmp, plan)
        else:
            base = os.fspath(tmp)
            for folder in plan.folders:
                if folder.path:
                    os.mkdir(f"{base}/{folder.path}")  # parents come first in the plan
        for job in plan.leaves:
            _check_copy(job, dst, copy_existing)
        if folder_files:
            for folder in plan.folders:
                _write_folder_files(folder, os.fspath(tmp), reuse)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Staged(dst, tmp, reuse, plan, folder_files)


def finish_tree(staged: Staged, num_threads: int) -> None:
    """Write the leaves of a staged save (and its metadata, if not staged with it),
    then put its folder in place of the target in one step."""
    dst, tmp, reuse, plan = staged.dst, staged.tmp, staged.reuse, staged.plan
    try:
        base, final = os.fspath(tmp), os.fspath(dst)
        writes = [partial(_write_leaf, job, final, base, reuse) for job in plan.leaves]
        if not staged.folder_files_written:
            writes += [
                partial(_write_folder_files, folder, base, reuse)
                for folder in plan.folders
            ]
        run_jobs(writes, num_threads)
        _commit(tmp, dst, _plan_bytes(plan))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if plan.pickled_keys and WARN_WHEN_PICKLING:
        keys = ", ".join(key for key, _ in plan.pickled_keys)
        _warn_at_caller(
            f"saved with pickle, as JSON cannot hold them: the non-tensor values of "
            f"{keys} (files: {', '.join(f for _, f in plan.pickled_keys)} under "
            f"{dst}); loading them needs allow_pickle=True",
            PickledValueWarning,
        )


def write_tree(
    dst: Path,
    plan: Plan,
    *,
    copy_existing: bool,
    num_threads: int,
) -> None:
    """Write ``plan`` to the folder ``dst`` atomically (see the module docstring).
    With ``num_threads > 1`` the files (leaves, pickles, metadata) are written by a
    pool of threads: ``os.write`` releases the GIL."""
    finish_tree(stage_tree(dst, plan, copy_existing=copy_existing), num_threads)


def run_jobs(jobs: list, num_threads: int) -> list:
    """Call every function of ``jobs`` and return their results, in order; with
    ``num_threads > 1``, in at most that many threads of the process's pool (no more
    than the CPUs it may use), each taking the next job until none is left (one task
    per thread, not one per job: submitting a future costs as much as writing a small
    file). Raises the first error once every thread has stopped."""
    num_threads = min(num_threads or 0, _usable_cpus(), len(jobs))
    if num_threads <= 1:
        return [job() for job in jobs]
    results = [None] * len(jobs)
    taken = itertools.count()
    failed = []

    def worker():
        for i in iter(taken.__next__, None):
            if i >= len(jobs) or failed:
                return
            try:
                results[i] = jobs[i]()
            except BaseException as e:
                failed.append(e)
                return

    pool = _pool("write", num_threads)
    futures = [pool.submit(worker) for _ in range(num_threads - 1)]
    worker()  # the calling thread takes its share
    concurrent.futures.wait(futures)
    if failed:
        raise failed[0]
    return results


def _write_folder_files(folder: FolderPlan, tmp: str, reuse: bool) -> None:
    """The pickle files and ``meta.json`` of one folder of the plan."""
    base = f"{tmp}/{folder.path}" if folder.path else tmp
    for file, data in folder.pickles.items():
        _write_bytes(f"{base}/{file}", data, reuse)
    _write_bytes(f"{base}/{META}", json.dumps(folder.meta).encode(), reuse)


def _write_bytes(path: str, data: bytes, reuse: bool) -> None:
    fd = _open_unused(path) if reuse else None
    if fd is None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if os.fstat(fd).st_size != len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The user's line that queued the save running in this thread (``in_background``):
# a warning of a background save points there, not at the thread pool's code.
_background_origin = threading.local()


def _caller_origin() -> tuple | None:
    """Where ``warnings.warn_explicit`` should point: the first frame outside this
    package, as (filename, lineno, module name, its globals' warning registry)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _PACKAGE_DIR
    ):
        frame = frame.f_back
    if frame is None:
        return None
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_globals.get("__name__"), registry)


def _warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn at the user's line: the caller's, or, in a background save, the line that
    queued it (recorded by ``in_background``)."""
    origin = getattr(_background_origin, "value", None) or _caller_origin()
    if origin is None:  # called from this package only (no user frame)
        warnings.warn(message, category)
        return
    filename, lineno, module, registry = origin
    warnings.warn_explicit(message, category, filename, lineno, module, registry)


def _check_copy(job: LeafJob, dst: Path, copy_existing: bool) -> None:
    source = job.source
    own = _memmap.mapped_file(source) if source is not None else None
    if own is None or copy_existing:
        return
    if _memmap.maps_whole_file(source, str(dst / job.path)):
        return
    raise RuntimeError(
        f"A filename was provided but the tensor already has a file associated: "
        f"the entry {_fmt(job.key_path)} is already memory-mapped to {own}; writing "
        f"it to {dst / job.path} would copy it: pass copy_existing=True to do so"
    )


def _write_leaf(job: LeafJob, dst: str, tmp: str, reuse: bool) -> None:
    target = f"{tmp}/{job.path}"
    final = f"{dst}/{job.path}"
    nbytes = _memmap.nbytes_of(job.shape, job.dtype)
    if job.source is None:  # memmap_like: an existing file of the right size is kept
        if _same_size(final, nbytes) and _link(final, target, reuse):
            job.linked = True
            return
        if reuse:
            _discard(target)  # truncating it would cut a reader's mapping short
        _memmap.allocate_file(target, nbytes)
        return
    if _memmap.maps_whole_file(job.source, final) and _link(final, target, reuse):
        job.linked = True
        return
    fd = _open_unused(target) if reuse else None
    if fd is None:
        _memmap.write_tensor_file(target, job.source)
        return
    try:
        _memmap.overwrite_tensor_file(fd, job.source)
    finally:
        os.close(fd)


def _same_size(path, nbytes: int) -> bool:
    try:
        return os.stat(path).st_size == nbytes
    except OSError:
        return False


def _link(existing: Path, new: Path, reuse: bool = False) -> bool:
    try:
        if reuse:
            _discard(new)
        os.link(existing, new)
        return True
    except OSError:  # no hard links on this file system: write the data instead
        return False


# renameat2(RENAME_EXCHANGE) swaps two paths in one step (Linux >= 3.15, glibc >= 2.28)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = None


def _renameat2():
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            _libc = getattr(lib, "renameat2", False)
        except OSError:
            _libc = False
    return _libc or None


def _exchange(a: Path, b: Path) -> bool:
    fn = _renameat2()
    if fn is None:
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(errno, os.strerror(errno), str(b))


def _plan_bytes(plan: Plan) -> int:
    """The bytes of the files a plan writes (its metadata aside: a few KB)."""
    return sum(_memmap.nbytes_of(job.shape, job.dtype) for job in plan.leaves) + sum(
        len(data) for folder in plan.folders for data in folder.pickles.values()
    )


def _commit(tmp: Path, dst: Path, nbytes: int | None = None) -> None:
    """Put the folder ``tmp`` (``nbytes`` of files) at ``dst``, replacing what is
    there, in one step where the system allows it; the replaced folder is kept as
    ``dst``'s spare or removed in the background."""
    key = str(dst)
    try:
        ino = os.stat(tmp).st_ino
    except OSError:
        ino = None
    try:
        os.rename(tmp, dst)  # dst missing or empty: one atomic rename
    except OSError:
        if not dst.exists():
            raise
        if _exchange(tmp, dst):
            old = tmp  # tmp now holds the old tree
        else:
            old = dst.parent / f".{dst.name}.old-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            os.rename(dst, old)
            os.rename(tmp, dst)
        _keep_or_remove(dst, old, _committed.get(key))
    if nbytes is not None and ino is not None:
        _committed[key] = (ino, nbytes)


# str(target) -> (inode of the tree this process last put there, its bytes): the size
# of the tree a save replaces, without walking it when it is the one we wrote
_committed: dict = {}


# ----------------------------------------------------------------------------- spare trees
#
# Re-saving a tensordict to the same folder (a model's weights at every checkpoint)
# would create every file and folder anew and remove the replaced tree: on a real disk
# each new file costs a metadata write (0.2-1 ms here), more than writing its data. So
# the replaced tree is kept, at its hidden name beside the target, as the spare of that
# target, and the next save to the target is written into the spare's files (their
# pages are in the page cache already) before the two are swapped: the live tree is
# still never written, so a crash leaves the old tree or the new one as before. A file
# of the spare is written over only if nothing has it open or mapped, in this process
# or another (a reader that loaded the old tree keeps its data): a write lease, which
# Linux grants only on a file nobody else holds, says so; otherwise (or where leases
# do not exist) the file is unlinked and written anew. Spares are kept for trees of at
# most _SPARE_BYTES, all spares together (the most recently replaced trees are kept),
# and removed when the process exits.

_SPARE_BYTES = 256 << 20
_spares: dict = {}  # str(target) -> (spare tree, its bytes)


def _keep_or_remove(dst: Path, old: Path, committed=None) -> None:
    """Keep the replaced tree ``old`` as ``dst``'s spare if it is at most
    ``_SPARE_BYTES``, making room by removing the spares kept longest; else remove it.
    ``committed`` (inode, bytes): what this process last put at ``dst``; if ``old`` is
    that tree, its size is known without walking it (files that others added to it
    since are not counted: the cap is a bound on the disk kept, not an account)."""
    size = None
    if committed is not None:
        try:
            if os.stat(old).st_ino == committed[0]:
                size = committed[1] if committed[1] <= _SPARE_BYTES else None
                if size is None:
                    _remove_replaced(old)
                    return
        except OSError:
            pass
    if size is None:
        size = _tree_bytes(old, _SPARE_BYTES)
    if size is None:
        _remove_replaced(old)
        return
    evicted = []
    with _pools_lock:
        previous = _spares.pop(str(dst), None)  # a concurrent save's: replaced by this one
        if previous is not None:
            evicted.append(previous[0])
        while _spares and sum(kept for _, kept in _spares.values()) + size > _SPARE_BYTES:
            evicted.append(_spares.pop(next(iter(_spares)))[0])
        _spares[str(dst)] = (old, size)
    for path in evicted:
        _remove_replaced(path)


def _take_spare(dst: Path) -> Path | None:
    with _pools_lock:
        spare = _spares.pop(str(dst), None)
    return spare[0] if spare is not None and spare[0].is_dir() else None


def _tree_bytes(root: Path, limit: int) -> int | None:
    """The bytes of the files under ``root``; ``None`` once they pass ``limit``."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                return None
            if total > limit:
                return None
    return total


def _prune(tmp: Path, plan: Plan) -> None:
    """Make a spare tree hold the folders ``plan`` writes (creating the missing ones)
    and nothing beyond the files and folders it writes (removing the others)."""
    files: dict = {folder.path: {META, *folder.pickles} for folder in plan.folders}
    dirs: dict = {folder.path: set() for folder in plan.folders}
    for folder in plan.folders:
        if folder.path:
            parent, _, name = folder.path.rpartition("/")
            dirs[parent].add(name)
    for job in plan.leaves:
        parent, _, name = job.path.rpartition("/")
        files[parent].add(name)
    base = os.fspath(tmp)
    for folder in plan.folders:  # parents come first in the plan
        here = f"{base}/{folder.path}" if folder.path else base
        try:
            entries = os.scandir(here)
        except FileNotFoundError:
            os.mkdir(here)
            continue
        want_files, want_dirs = files[folder.path], dirs[folder.path]
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in want_dirs:
                        shutil.rmtree(entry.path, ignore_errors=True)
                elif entry.name not in want_files:
                    _discard(entry.path)


def _open_unused(path: Path) -> int | None:
    """``path`` opened for writing over it if it exists, has no other name (hard
    link) and nobody else has it open or mapped; otherwise ``None``, and the file is
    unlinked (whoever holds it keeps its data) so that a new one takes its place."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except FileNotFoundError:
        return None
    if os.fstat(fd).st_nlink == 1 and _no_other_holder(fd):
        return fd
    os.close(fd)
    _discard(path)
    return None


def _no_other_holder(fd: int) -> bool:
    lease = getattr(fcntl, "F_SETLEASE", None) if fcntl is not None else None
    if lease is None:
        return False
    try:
        fcntl.fcntl(fd, lease, fcntl.F_WRLCK)
    except OSError:  # held by someone (EAGAIN), or no leases here
        return False
    fcntl.fcntl(fd, lease, fcntl.F_UNLCK)
    return True


def _discard(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def release_spares() -> None:
    """Remove the spare trees this process keeps (at exit, or to free the disk)."""
    with _pools_lock:
        spares = [path for path, _ in _spares.values()]
        _spares.clear()
    for path in spares:
        shutil.rmtree(path, ignore_errors=True)


atexit.register(release_spares)


def _remove_replaced(path: Path) -> None:
    """Remove a replaced tree, which nothing reaches any more (it sits at a hidden
    name beside the target), in a background thread: unlinking every file of a large
    tree costs tens of milliseconds the caller need not wait for. The interpreter
    finishes the removals before exiting; if the process dies first, the next writer
    of the target removes the tree (see :func:`_remove_stale_partials`)."""
    _pool("remove", 1).submit(_remove_tree, path)


def _remove_tree(path: Path) -> None:
    _lowest_priority()
    shutil.rmtree(path, ignore_errors=True)


_lowered = threading.local()


def _lowest_priority() -> None:
    """Run this thread (the remover of replaced trees) at the lowest CPU priority:
    freeing a replaced tree's pages is never urgent, and on a busy machine it would
    take CPU time from the saves that follow (Linux: a thread's nice value is its
    own)."""
    if getattr(_lowered, "done", False):
        return
    _lowered.done = True
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


def finish_removals() -> None:
    """Wait until every replaced tree this process is removing is gone."""
    _pool("remove", 1).submit(int).result()  # one worker, first in first out


# the data bytes of the saves started with return_early that have not finished yet
_BACKLOG_BYTES = 1 << 30
_pending: collections.deque = collections.deque()  # (future, nbytes), oldest first


def in_background(start, nbytes: int) -> _futures.TensorDictFuture:
    """A ``return_early`` save of ``nbytes`` bytes of data: ``start()`` runs in the
    caller (it checks the target and lays the tree out: folders, metadata) and returns
    the function that finishes the save (writes the data, puts the tree in place),
    which runs in the process's save thread; returns its future. Saves finish one
    at a time, in call order (two saves to one folder cannot overtake each other).
    Unfinished saves hold at most ``_BACKLOG_BYTES`` of unwritten data (besides the
    oldest one): a caller that saves faster than the disk takes the data first waits
    for the oldest saves to finish, instead of queueing without bound (each queued
    save keeps its tensors alive, and its data ends as dirty pages that the kernel
    must write, which slows every later write)."""
    while True:
        with _pools_lock:
            while _pending and _pending[0][0].done():
                _pending.popleft()
            queued = sum(size for _, size in _pending)
            if not _pending or queued + nbytes <= _BACKLOG_BYTES:
                break
            oldest = _pending[0][0]
        concurrent.futures.wait([oldest])
    finish = start()
    origin = _caller_origin()

    def finish_from_caller():
        _background_origin.value = origin
        try:
            return finish()
        finally:
            _background_origin.value = None

    future = _futures.submit(_pool("save", 1), finish_from_caller)
    with _pools_lock:
        _pending.append((future, nbytes))
    return future


_pools: dict = {}
_pools_lock = threading.Lock()


def _usable_cpus() -> int:
    """The CPUs this process may run on: more writer threads than that only take
    turns (a write to the page cache is a memory copy, done by a CPU)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _pool(kind: str, workers: int) -> ThreadPoolExecutor:
    """A thread pool kept for the life of the process: starting a thread costs a
    round trip through the scheduler (milliseconds on a busy machine), which saves of
    small trees would otherwise pay for every thread at every call."""
    with _pools_lock:
        pool = _pools.get((kind, workers))
        if pool is None:
            pool = ThreadPoolExecutor(workers, thread_name_prefix=f"tensordict-{kind}")
            _pools[(kind, workers)] = pool
        return pool


def _forget_pools() -> None:
    """In a forked child: the parent's pool threads do not exist here."""
    global _pools_lock
    _pools.clear()
    _pending.clear()
    _spares.clear()  # the parent's: it may reuse them
    _committed.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _remove_stale_partials(dst: Path) -> None:
    """Remove the folders that writers of ``dst`` killed mid-way left beside it."""
    prefix = f".{dst.name}."
    try:
        candidates = [p for p in dst.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return
    for path in candidates:
        rest = path.name[len(prefix) :]
        kind, _, tail = rest.partition("-")
        if kind not in ("partial", "old"):
            continue
        pid = tail.partition("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def rewrite_meta(folder: Path, meta: dict) -> None:
    """Replace a folder's ``meta.json`` atomically (new file beside it, then rename)."""
    partial = folder / f".{META}.partial-{os.getpid()}"
    partial.write_text(json.dumps(meta))
    os.replace(partial, folder / META)


# ----------------------------------------------------------------------------- reading


def read_meta(folder: Path) -> dict:
    """The checked metadata of one folder."""
    path = folder / META
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        if not folder.exists():
            raise FileNotFoundError(f"no saved tensordict at {folder}: it does not exist") from None
        if not folder.is_dir():
            raise SavedDataError(f"{folder} is a file, not the folder of a saved tensordict") from None
        raise SavedDataError(
            f"{folder} does not hold a saved tensordict: it has no {META}"
        ) from None
    except IsADirectoryError:
        raise SavedDataError(f"{path} is a folder, not a metadata file") from None
    return parse_meta(text, path)


def parse_meta(text: bytes, path) -> dict:
    """The checked metadata in ``text``, read from ``path`` (a file, or a member of
    an archive: named in the errors)."""
    try:
        meta = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise SavedDataError(f"{path} is not valid JSON ({err}); the file is damaged") from None
    if not isinstance(meta, dict):
        raise SavedDataError(f"{path} does not hold a metadata object")
    if meta.get("format") != FORMAT:
        if "_format_version" in meta or "_type" in meta:
            raise SavedDataError(
                f"{path} was written in another tensordict layout (that of tensordict "
                f"0.15 and earlier), which this version does not read; load it with "
                f"that version and save it again with this one"
            )
        raise SavedDataError(f"{path} is not the metadata of a saved tensordict (no format {FORMAT!r})")
    version = meta.get("version")
    if version != VERSION:
        raise SavedDataError(
            f"{path} was written with format version {version!r}; this version of "
            f"tensordict reads version {VERSION} only"
        )
    return meta


def field_of(meta: dict, name: str, kind, path: Path, what="the metadata"):
    value = meta.get(name, _ABSENT)
    if value is _ABSENT or not isinstance(value, kind):
        raise SavedDataError(f"{path / META}: {what} has no valid {name!r} field (found {value!r})")
    return value


_ABSENT = object()


def check_shape(value, path: Path, key) -> torch.Size:
    if not isinstance(value, list) or not all(
        type(d) is int and d >= 0 for d in value
    ):
        raise SavedDataError(
            f"{path / META}: the entry {key!r} has shape {value!r}, which is not a "
            f"list of non-negative ints; the metadata is damaged"
        )
    return torch.Size(value)


_DTYPES = {str(d): d for d in vars(torch).values() if isinstance(d, torch.dtype)}


def map_leaf(folder: str, entry: dict, shared: bool | None) -> MemoryMappedTensor:
    """The tensor of a ``"tensor"`` entry of the folder ``folder``, mapped after
    checking its name, dtype, shape and the size of its file. On the path of every
    leaf: the checks are inlined, the messages built only on failure."""
    name = entry.get("file")
    dtype = _DTYPES.get(entry.get("dtype"))
    shape = entry.get("shape")
    if (
        type(name) is not str
        or "/" in name
        or "\\" in name
        or "\x00" in name
        or name in ("", ".", "..")
    ):
        check_name(name, Path(folder), entry.get("key"))
    if dtype is None:
        raise SavedDataError(
            f"{folder}{os.sep}{META}: the entry {entry.get('key')!r} has dtype "
            f"{entry.get('dtype')!r}, which is not a torch dtype"
        )
    count = 1
    if type(shape) is list:
        for dim in shape:
            if type(dim) is not int or dim < 0:
                count = -1
                break
            count *= dim
    if type(shape) is not list or count < 0:
        check_shape(shape, Path(folder), entry.get("key"))
    filename = f"{folder}{os.sep}{name}"
    try:
        size = os.stat(filename).st_size
    except FileNotFoundError:
        raise SavedDataError(
            f"the data file {filename} of the entry {entry.get('key')!r} is missing"
        ) from None
    if size != count * dtype.itemsize:
        raise SavedDataError(
            f"the data file {filename} of the entry {entry.get('key')!r} holds {size} "
            f"bytes, but dtype {dtype} and shape {tuple(shape)} need "
            f"{count * dtype.itemsize}: the file is truncated or does not belong to "
            f"this metadata"
        )
    return _memmap.map_file(filename, dtype, shape, shared)


def shared_for(mode: str | None) -> bool | None:
    """How ``load_memmap(mode=...)`` maps files: shared, copy-on-write, or (None)
    shared where writable."""
    if mode not in (None, "r", "r+"):
        raise ValueError(f"mode must be None, 'r' or 'r+', got {mode!r}")
    return None if mode is None else mode == "r+"


def read_value(folder: Path, entry: dict, allow_pickle: bool, key) -> Any:
    """A non-tensor value stored inline (JSON, bytes) or in a pickle file."""
    inline = inline_value(entry)
    if inline is not _NO_INLINE:
        return inline
    if "pickle" not in entry:
        raise SavedDataError(f"{folder / META}: the entry {key!r} has no value")
    name = check_name(entry["pickle"], folder, key)
    path = folder / name
    if not allow_pickle:
        raise PickleNotAllowedError(
            f"the entry {key!r} is a non-tensor value saved with pickle in {path}; "
            f"loading it runs code from the file, so it needs allow_pickle=True "
            f"(pass it only for data you trust)"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SavedDataError(f"the pickle file {path} of the entry {key!r} is missing") from None
    try:
        return pickle.loads(data)
    except Exception as err:
        raise SavedDataError(f"the pickle file {path} of the entry {key!r} cannot be read: {err}") from err
