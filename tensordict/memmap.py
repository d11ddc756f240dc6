"""MemoryMappedTensor: a CPU tensor whose storage is a file, or anonymous shared memory.

The operating system reads only the pages that are touched, so a tensor larger than RAM
can be indexed cheaply, and writes through any view of it reach the file. Sending one to
another process (pickle, a multiprocessing queue) sends the file name, or for anonymous
memory the file descriptor, never the data: the receiver maps the same bytes.

This module needs only torch; it sits below ``base`` and knows nothing of tensordicts.
The file helpers at the bottom (:func:`write_tensor_file`, :func:`allocate_file`,
:func:`parse_dtype`) are shared with the on-disk format of tensordicts
(``tensordict/_disk.py``); :func:`write_pieces` also with ``consolidate(filename=)``.

Design notes:

- ``__torch_function__`` is disabled, so every torch op on a MemoryMappedTensor runs at
  plain-tensor speed and returns a plain :class:`torch.Tensor` (``x + 1`` lives in RAM).
  Indexing, ``unbind``, ``chunk`` and ``split`` are overridden to return
  MemoryMappedTensors wherever the result is a view of the mapped storage.
- The raw file holds the elements only (no header): dtype and shape come from the
  caller, or from a tensordict's ``meta.json``. The file size must match exactly.
- Anonymous memory is an unnamed file (``O_TMPFILE`` where the OS has it) in shared
  memory, ``/dev/shm`` (a tmpfs: RAM, never written back to a disk), when the tensor
  fits there: its bytes are at most the free space of ``/dev/shm`` at the time it is
  made, and at most :data:`SHARED_MEMORY_LIMIT` when that is set. A tensor that does
  not fit goes to an unnamed file in the temporary folder (``tempfile.gettempdir()``)
  instead, so that a tensor larger than the shared memory still works (it costs disk
  pages, only those written). Its file descriptor is kept by an
  :class:`_AnonymousFile` shared by the tensor's views, for other processes to map it.
"""

from __future__ import annotations

import errno
import math
import os
import tempfile
import threading
import time
from functools import partial
from multiprocessing import reduction as _mp_reduction
from typing import Any, Sequence

import torch
from torch import Tensor

try:
    import fcntl as _fcntl
except ImportError:  # not POSIX
    _fcntl = None

__all__ = ["MemoryMappedTensor"]

# Bytes written per call when a tensor is not contiguous and is written in row chunks.
_CHUNK_BYTES = 64 * 1024 * 1024

# Files are written in pieces cut at multiples of the piece size in the file. The kernel
# gives each ``write()`` page-cache folios as large as the piece and serves each folio
# size first from recently freed memory; once that runs out, from memory that a VM's
# balloon (free page reporting) handed back to its host, whose pages each cost a host
# fault at the first touch (a tenth of the speed). Which sizes run out depends on what
# the machine wrote before: on the CI machine, after 5 GB written in 32 KiB pieces,
# 64 MB took 170 ms in 32 KiB pieces and 20 in 16 KiB ones; after 1.3 GB in 256 KiB
# pieces, 160-320 ms in those and 17-30 in 32 KiB ones (docs/distributed.md). So the
# piece size adapts: it starts at the largest (fastest while memory is warm), halves
# after a few pieces in a row written slower than _SLOW_NS_PER_BYTE, and tries the
# double again after _RETRY_BYTES written at speed. One size for the process (the
# kernel's pools are the machine's), read and set by every writer thread.
WRITE_PIECE_MIN, WRITE_PIECE_MAX = 1 << 12, 1 << 18
_SLOW_NS_PER_BYTE = 1.0  # below 1 GB/s: warm memory takes 4-5 GB/s, returned 0.4
_SYSCALL_NS = 1000  # allowed beyond that for the call itself
_SLOW_PIECES = 4  # in a row, so that one preempted write does not count
_JUDGED_BYTES = 1 << 14  # a write of at least this much (or half the size) is timed:
# many small leaves are each written whole, in pieces shorter than the size
_RETRY_BYTES = 64 << 20


class _PieceSize:
    """The process's current piece size, and what the writes at it showed."""

    size = WRITE_PIECE_MAX
    slow_in_a_row = 0
    fast_bytes = 0

    @classmethod
    def judge(cls, size: int, nbytes: int, ns: int) -> None:
        if nbytes < min(size // 2, _JUDGED_BYTES) or size != cls.size:
            return  # a leaf's short end, or another writer changed the size meanwhile
        if ns > nbytes * _SLOW_NS_PER_BYTE + _SYSCALL_NS:
            cls.slow_in_a_row += 1
            if cls.slow_in_a_row >= _SLOW_PIECES:
                cls.size = max(WRITE_PIECE_MIN, size // 2)
                cls.slow_in_a_row = cls.fast_bytes = 0
            return
        cls.slow_in_a_row = 0
        cls.fast_bytes += nbytes
        if cls.fast_bytes >= _RETRY_BYTES and size < WRITE_PIECE_MAX:
            cls.size = size * 2  # freed memory may have refilled the larger pools
            cls.fast_bytes = 0


# Where anonymous memory lives when it fits (see the module docstring), and an optional
# cap on the bytes of one tensor there (None: the free space of the folder is the only
# limit). A tmpfs holds its pages in RAM; a disk-backed file's dirty pages would be
# written back to the disk, which slows every later write (issue 30).
SHARED_MEMORY_DIR: str | None = "/dev/shm"
SHARED_MEMORY_LIMIT: int | None = None


def _fits_shared_memory(nbytes: int) -> bool:
    folder = SHARED_MEMORY_DIR
    limit = SHARED_MEMORY_LIMIT
    if folder is None or (limit is not None and nbytes > limit):
        return False
    if nbytes <= _CHECKED_BYTES and _HAS_PROC_FD:
        return True  # a full tmpfs still shows as ENOSPC when the bytes are given
    try:
        st = os.statvfs(folder)
    except OSError:  # no such folder here (not Linux)
        return False
    return nbytes <= st.f_bavail * st.f_frsize


# Below this size the free space of the shared memory is not looked up first: the
# bytes are given at once (written, or reserved with fallocate), and a full tmpfs
# answers ENOSPC, which sends the tensor to the disk.
_CHECKED_BYTES = 1 << 20
_HAS_PROC_FD = os.path.isdir("/proc/self/fd")


def _unnamed_file(directory: str) -> int | None:
    """An unnamed file (``O_TMPFILE``) in ``directory``, or None where there is none."""
    tmpfile = getattr(os, "O_TMPFILE", None)
    if tmpfile is None or not _HAS_PROC_FD:
        return None
    try:
        return os.open(directory, tmpfile | os.O_RDWR, 0o600)
    except OSError:  # a file system without O_TMPFILE support
        return None


class _Recycled:
    """Shared-memory files of anonymous tensors that nothing maps any more, kept (at
    most :data:`RECYCLE_BYTES` in all) for the next anonymous tensor of the same size
    whose every byte is about to be written: its pages are allocated and warm, so the
    write is a plain copy (allocating fresh tmpfs pages costs about as much again as
    the copy; on a VM, more). A kept file is reused only if the kernel grants a write
    lease on it, which it refuses while any mapping or other opening of the file
    exists, in any process; a descriptor sent to another process, and every file
    made before a ``fork`` (the child shares it), is never kept."""

    generation = 0  # bumped at every fork
    files: dict = {}  # nbytes -> [fd, ...]
    total = 0
    lock = threading.Lock()

    @classmethod
    def keep(cls, fd: int, nbytes: int) -> bool:
        if nbytes < _RECYCLE_MIN_BYTES:
            return False
        with cls.lock:
            if cls.total + nbytes > RECYCLE_BYTES:
                return False
            cls.files.setdefault(nbytes, []).append(fd)
            cls.total += nbytes
        return True

    @classmethod
    def take(cls, nbytes: int) -> int | None:
        while True:
            with cls.lock:
                fds = cls.files.get(nbytes)
                if not fds:
                    return None
                fd = fds.pop()
                cls.total -= nbytes
            if _nobody_else_holds(fd):
                os.lseek(fd, 0, os.SEEK_SET)
                return fd
            os.close(fd)  # still mapped somewhere: its holder keeps the memory

    @classmethod
    def release(cls) -> None:
        """Close every kept file (at a fork, in the child; or to free the memory)."""
        with cls.lock:
            fds = [fd for group in cls.files.values() for fd in group]
            cls.files.clear()
            cls.total = 0
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    @classmethod
    def after_fork_in_parent(cls) -> None:
        cls.generation += 1

    @classmethod
    def after_fork_in_child(cls) -> None:
        cls.generation += 1
        cls.lock = threading.Lock()
        fds = [fd for group in cls.files.values() for fd in group]
        cls.files = {}
        cls.total = 0
        for fd in fds:  # the parent's
            try:
                os.close(fd)
            except OSError:
                pass


# The bytes of unused shared-memory files kept for reuse (0: none kept), and the
# smallest file worth keeping.
RECYCLE_BYTES = 256 << 20
_RECYCLE_MIN_BYTES = 1 << 16

if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        after_in_parent=_Recycled.after_fork_in_parent,
        after_in_child=_Recycled.after_fork_in_child,
    )


def _nobody_else_holds(fd: int) -> bool:
    """Whether the kernel grants a write lease on ``fd``'s file: no other opening
    or mapping of it exists."""
    if _fcntl is None or not hasattr(_fcntl, "F_SETLEASE"):
        return False
    try:
        _fcntl.fcntl(fd, _fcntl.F_SETLEASE, _fcntl.F_WRLCK)
    except OSError:
        return False
    _fcntl.fcntl(fd, _fcntl.F_SETLEASE, _fcntl.F_UNLCK)
    return True


class _AnonymousFile:
    """An unnamed temporary file holding the bytes of anonymous MemoryMappedTensors.

    Keeps the file descriptor open (closed when no tensor refers to it any more), so
    that the memory can be handed to another process; the mapping itself does not
    need it.
    """

    __slots__ = (
        "fd", "nbytes", "path", "in_shared_memory", "recyclable", "__weakref__"
    )

    def __init__(self, fd: int, nbytes: int, path: str, in_shared_memory=False) -> None:
        self.fd = fd
        self.nbytes = nbytes
        self.path = path  # what torch.from_file opens to map it
        self.in_shared_memory = in_shared_memory
        # the fork generation it was made in; None once its descriptor left the
        # process (another process may map it whenever): never recycled then
        self.recyclable = _Recycled.generation if in_shared_memory else None

    def __del__(self) -> None:
        try:
            if (
                self.recyclable == _Recycled.generation
                and self.nbytes >= _RECYCLE_MIN_BYTES
                and _Recycled.keep(
                    self.fd, self.nbytes
                )
            ):
                return
        except Exception:  # interpreter shutdown: module state may be gone
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass

    @classmethod
    def create(
        cls, nbytes: int, shared_memory: bool | None = None, overwritten: bool = False
    ) -> "_AnonymousFile":
        """An unnamed file of ``nbytes`` (zeros, unless ``overwritten``: the caller
        writes every byte): in shared memory if ``shared_memory`` (None: if it fits
        there), else in the temporary folder."""
        if overwritten and shared_memory is not False and nbytes >= _RECYCLE_MIN_BYTES:
            fd = _Recycled.take(nbytes)
            if fd is not None:
                return cls(fd, nbytes, f"/proc/self/fd/{fd}", True)
        if shared_memory is None:
            shared_memory = _fits_shared_memory(nbytes)
        directory = SHARED_MEMORY_DIR if shared_memory else tempfile.gettempdir()
        fd = _unnamed_file(directory)
        if fd is not None:
            os.ftruncate(fd, nbytes)
            return cls(fd, nbytes, f"/proc/self/fd/{fd}", shared_memory)
        fd, path = tempfile.mkstemp(prefix="tensordict-anon-", dir=directory)
        os.ftruncate(fd, nbytes)
        handle = _NamedThenUnlinked(fd, nbytes, path, shared_memory)
        handle.recyclable = None  # no /proc/self/fd path to map it again by
        return handle

    @classmethod
    def adopt(cls, fd: int, nbytes: int) -> "_AnonymousFile":
        """Take ownership of a descriptor received from another process."""
        handle = cls(fd, nbytes, f"/proc/self/fd/{fd}")
        handle.recyclable = None
        return handle


class _NamedThenUnlinked(_AnonymousFile):
    """Where there is no ``O_TMPFILE``: a named temporary file, unlinked once mapped."""

    __slots__ = ()


def _map_bytes(path: str, nbytes: int, shared: bool) -> Tensor:
    """``nbytes`` bytes of the file at ``path``, mapped as a flat uint8 tensor."""
    if nbytes == 0:
        return torch.empty(0, dtype=torch.uint8)
    return torch.from_file(path, shared=shared, size=nbytes, dtype=torch.uint8)


def _on_storage(flat: Tensor, dtype, shape, stride=None, offset: int = 0) -> Tensor:
    """A tensor of ``dtype`` over the storage of ``flat`` (not a view of ``flat``, so
    that in-place ops such as ``detach_`` work on it as on any tensor)."""
    out = torch.empty(0, dtype=dtype)
    if stride is None:
        return out.set_(flat.untyped_storage(), offset, torch.Size(shape))
    return out.set_(flat.untyped_storage(), offset, torch.Size(shape), stride)


def map_file(filename: str, dtype, shape, shared: bool | None) -> "MemoryMappedTensor":
    """The whole file ``filename`` (whose size the caller checked) as a
    MemoryMappedTensor of ``dtype`` and ``shape``; ``shared=None`` maps it shared where
    the file can be written, copy-on-write otherwise. On the path of every leaf a
    tensordict loads: kept lean."""
    count = math.prod(shape)
    if count == 0:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        if shared is None:
            try:
                tensor = torch.from_file(filename, shared=True, size=count, dtype=dtype)
            except RuntimeError:  # not writable: map it copy-on-write
                tensor = torch.from_file(filename, shared=False, size=count, dtype=dtype)
        else:
            tensor = torch.from_file(filename, shared=shared, size=count, dtype=dtype)
        if len(shape) != 1:
            tensor = tensor.view(shape)
    out = Tensor._make_subclass(MemoryMappedTensor, tensor)
    out._filename = filename
    return out


def _anonymous_bytes(nbytes: int, data: Tensor | None = None) -> tuple[Tensor, _AnonymousFile]:
    """``nbytes`` of anonymous shared memory (zeros, or the elements of ``data``,
    written with ``write(2)``: faster than faulting every page of the mapping in)."""
    handle = _AnonymousFile.create(nbytes, overwritten=data is not None)
    if handle.in_shared_memory and nbytes:
        # Every page is given now, so that a full tmpfs fails here (ENOSPC: the
        # tensor goes to the disk instead), never later as a SIGBUS in a page fault.
        try:
            if data is not None:
                _write_tensor_to_fd(handle.fd, data)
            else:
                os.posix_fallocate(handle.fd, 0, nbytes)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.ENOMEM):
                raise
            if isinstance(handle, _NamedThenUnlinked):
                os.unlink(handle.path)
            handle = _AnonymousFile.create(nbytes, shared_memory=False)
            if data is not None:
                _write_tensor_to_fd(handle.fd, data)
    elif data is not None and nbytes:
        _write_tensor_to_fd(handle.fd, data)
    # (the descriptor's offset is left where the write ended: the file is mapped by
    # its path, which opens it anew, and a reused file is rewound when taken)
    flat = _map_bytes(handle.path, nbytes, shared=True)
    if isinstance(handle, _NamedThenUnlinked):
        os.unlink(handle.path)
        handle.path = None
    return flat, handle


# ----------------------------------------------------------------------------- helpers


def parse_dtype(name: str) -> torch.dtype:
    """``"torch.float32"`` or ``"float32"`` -> ``torch.float32`` (ValueError otherwise)."""
    if not isinstance(name, str):
        raise ValueError(f"a dtype name must be a string, got {name!r}")
    attr = name[6:] if name.startswith("torch.") else name
    dtype = getattr(torch, attr, None) if attr.isidentifier() else None
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{name!r} is not a torch dtype")
    return dtype


def _parse_size(args: tuple, kwargs: dict, what: str) -> torch.Size:
    """torch's ways of giving a size: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``,
    ``f(torch.Size([2, 3]))``, ``f(size=...)`` (``shape=`` too)."""
    for name in ("size", "shape"):
        if name in kwargs:
            if args:
                raise TypeError(f"MemoryMappedTensor.{what}: size given twice")
            args = (kwargs.pop(name),)
    if not args:  # as torch.zeros(): a size is required (() for a 0-d tensor)
        raise TypeError(
            f"Could not find the shape argument in the arguments. "
            f"MemoryMappedTensor.{what}: no size given; pass one, e.g. "
            f"MemoryMappedTensor.{what}(()) for a 0-d tensor"
        )
    if len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
    try:
        size = torch.Size([int(d) for d in args])
    except (TypeError, ValueError):
        raise TypeError(
            f"MemoryMappedTensor.{what}: expected a size (ints, a tuple or a "
            f"torch.Size), got {args!r}"
        ) from None
    if any(d < 0 for d in size):
        raise ValueError(f"MemoryMappedTensor.{what}: negative size {tuple(size)}")
    return size


class MemoryMappedDeviceError(RuntimeError, ValueError):
    """A device other than the CPU was asked of a MemoryMappedTensor (a RuntimeError,
    as 0.15.3 raises; a ValueError, as this project raised before)."""


def _check_device(device) -> None:
    if device is not None and torch.device(device).type != "cpu":
        raise MemoryMappedDeviceError(
            f"Only CPU tensors are supported: a MemoryMappedTensor lives on the CPU; "
            f"device={device!r} is not allowed (move it afterwards with .to(device))"
        )


def nbytes_of(shape: Sequence[int], dtype: torch.dtype) -> int:
    return math.prod(shape) * dtype.itemsize


def _flat_bytes(tensor: Tensor) -> Tensor:
    """A contiguous CPU tensor's elements as a flat uint8 tensor (no copy)."""
    return tensor.reshape(-1).view(torch.uint8)


def _write_all(fd: int, data: Tensor) -> None:
    write_pieces(fd, memoryview(data.numpy()), os.lseek(fd, 0, os.SEEK_CUR))


def write_pieces(fd: int, data: memoryview, offset: int) -> None:
    """Write the bytes ``data`` to ``fd`` at its position, ``offset`` bytes into the
    file, in pieces cut at multiples of the current piece size (:class:`_PieceSize`),
    each write timed to adapt that size."""
    start, end = 0, data.nbytes
    clock, write, judge = time.perf_counter_ns, os.write, _PieceSize.judge
    while start < end:
        size = _PieceSize.size
        stop = min(end, start + size - (offset + start) % size)
        began = clock()
        written = write(fd, data[start:stop])
        judge(size, written, clock() - began)
        start += written


def write_tensor_file(path: str | os.PathLike, tensor: Tensor) -> None:
    """Write the raw elements of ``tensor`` (any device, any layout) to ``path``.

    A contiguous CPU tensor is written in one call; others are copied to the CPU and
    made contiguous a chunk of rows at a time, so that an expanded tensor is never
    materialised whole.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_tensor_to_fd(fd, tensor)
    finally:
        os.close(fd)


def overwrite_tensor_file(fd: int, tensor: Tensor) -> None:
    """Write ``tensor``'s elements over the start of the open file ``fd`` and cut the
    file to their size: the file's pages, already in the page cache, are reused
    (truncating to zero first would drop them and, on ext4, start their writeback).
    Written in large pieces (:data:`_OVERWRITE_PIECE`): the pages exist, so the
    piece size does not choose what memory the kernel allocates (see
    :class:`_PieceSize`), and each ``write`` costs a time stamp update of the file."""
    _write_tensor_to_fd(fd, tensor, _OVERWRITE_PIECE)
    nbytes = nbytes_of(tensor.shape, tensor.dtype)
    if os.fstat(fd).st_size != nbytes:
        os.ftruncate(fd, nbytes)


def _write_tensor_to_fd(fd: int, tensor: Tensor, piece: int | None = None) -> None:
    tensor = tensor.detach()
    if type(tensor) is not Tensor:
        tensor = tensor.as_subclass(Tensor)
    write = _write_all if piece is None else partial(_write_fixed, piece=piece)
    if tensor.device.type == "cpu" and tensor.is_contiguous():
        write(fd, _flat_bytes(tensor))
        return
    if tensor.ndim == 0:
        write(fd, _flat_bytes(tensor.cpu().contiguous()))
        return
    row_bytes = max(1, nbytes_of(tensor.shape[1:], tensor.dtype))
    step = max(1, _CHUNK_BYTES // row_bytes)
    for start in range(0, tensor.shape[0], step):
        chunk = tensor[start : start + step].cpu().contiguous()
        write(fd, _flat_bytes(chunk))


# Pieces of a write over a file's existing pages (a spare tree's files).
_OVERWRITE_PIECE = 16 << 20


def _write_fixed(fd: int, data: Tensor, piece: int) -> None:
    view = memoryview(data.numpy())
    start, end, write = 0, view.nbytes, os.write
    while start < end:
        start += write(fd, view[start : start + piece])


def allocate_file(path: str | os.PathLike, nbytes: int) -> None:
    """Create ``path`` holding ``nbytes`` zero bytes (a sparse file: no disk used)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.ftruncate(fd, nbytes)
    finally:
        os.close(fd)


def _replace_file(filename: str, fill) -> None:
    """Write a new file at ``filename`` beside it and rename it into place, so that a
    reader never sees it half-written."""
    partial = f"{filename}.partial-{os.getpid()}"
    try:
        fill(partial)
        os.replace(partial, filename)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


def _file_size_error(filename, size, nbytes, dtype, shape) -> ValueError:
    return ValueError(
        f"the file {filename} holds {size} bytes, but a tensor of dtype "
        f"{dtype} and shape {tuple(shape)} needs {nbytes} bytes: the file is "
        f"truncated, or the dtype or shape is not the one it was written with"
    )


# ----------------------------------------------------------------------------- class



def _writable_target(filename, existsok: bool) -> str:
    """``filename`` as an absolute path, once it is known that a new file may be
    written there: not through a symlink (the write would land wherever the link
    points), and over an existing file only with ``existsok``. 0.15.3's phrases
    lead the messages (existing code matches them)."""
    filename = os.path.abspath(filename)
    if os.path.islink(filename):
        raise RuntimeError(
            f"Refusing to write memory-mapped tensor through symlink {filename}: "
            f"the file would be written wherever the link points; remove the link "
            f"or pass another filename"
        )
    if os.path.exists(filename) and not existsok:
        raise RuntimeError(
            f"The file {filename} already exists. Pass existsok=True to overwrite it"
        )
    return filename

class MemoryMappedTensor(Tensor):
    """A CPU tensor whose storage is a file, or anonymous shared memory.

    Build one with a class method: :meth:`from_tensor` (a copy), :meth:`empty`,
    :meth:`zeros`, :meth:`ones`, :meth:`full` and their ``*_like`` forms (new data),
    :meth:`from_filename` (an existing file), :meth:`from_storage` (an existing
    storage). With a ``filename`` the data is in that file; without one it is in
    anonymous shared memory and :attr:`filename` raises.

    Indexing, :meth:`unbind`, :meth:`chunk` and :meth:`split` give MemoryMappedTensors
    on the same storage where the result is a view; other ops (``x + 1``) give plain
    tensors in RAM. Writes through any view reach the file. Pickling sends the file
    name (or, through multiprocessing, the anonymous file's descriptor), not the data.

    >>> x = MemoryMappedTensor.zeros(2, 3)
    >>> type(x[0]).__name__, type(x + 1).__name__
    ('MemoryMappedTensor', 'Tensor')
    """

    # every torch op runs as on a plain tensor (and returns one): no Python overhead
    __torch_function__ = torch._C._disabled_torch_function_impl

    _filename: str | None = None
    _handle: _AnonymousFile | None = None
    _parent_shape: torch.Size | None = None

    def __new__(
        cls,
        source,
        *,
        dtype=None,
        shape=None,
        index=None,
        device=None,
        handler=None,
        filename=None,
    ):
        _check_device(device)
        if isinstance(source, (str, os.PathLike)):
            if dtype is None or shape is None:
                raise TypeError(
                    "MemoryMappedTensor(filename) needs dtype= and shape= (the file "
                    "holds raw data without a header)"
                )
            return cls.from_filename(source, dtype, shape, index=index)
        if isinstance(source, (torch.UntypedStorage, torch.TypedStorage)):
            return cls.from_storage(
                source,
                shape=shape,
                dtype=dtype,
                index=index,
                filename=filename,
                handler=handler,
            )
        if not isinstance(source, Tensor):
            raise TypeError(
                f"MemoryMappedTensor: source must be a tensor, a storage or a file "
                f"name, got {type(source).__name__}"
            )
        if dtype is not None and filename is not None:
            raise TypeError("MemoryMappedTensor: dtype= cannot go with filename=")
        if filename is not None:
            out = cls.from_tensor(source, filename=filename, shape=shape)
        else:
            out = _wrap(source.detach(), None, handler)
        return out[index] if index is not None else out

    # ------------------------------------------------------------------ building
    @classmethod
    def from_tensor(
        cls,
        input: Tensor,
        *,
        filename: str | os.PathLike | None = None,
        existsok: bool = False,
        copy_existing: bool = False,
        copy_data: bool = True,
        shape: torch.Size | None = None,
    ) -> "MemoryMappedTensor":
        """A MemoryMappedTensor holding a copy of ``input``.

        A MemoryMappedTensor ``input`` is returned as it is when ``filename`` is its
        own file, or when both have no file. Copying one that has a file to another
        file needs ``copy_existing=True`` (so that data on disk is not duplicated by
        mistake); with ``filename=None`` it is copied to anonymous memory. An existing
        ``filename`` is overwritten only with ``existsok=True`` (atomically: the new
        file is written beside it, then renamed). ``copy_data=False`` gives zeros of
        the same shape and dtype; ``shape`` reshapes the result.

        >>> mt = MemoryMappedTensor.from_tensor(torch.arange(4), filename="t.memmap")
        >>> mt.filename.endswith("t.memmap"), mt.tolist()
        (True, [0, 1, 2, 3])
        """
        if not isinstance(input, Tensor):
            raise TypeError(
                f"from_tensor expects a tensor, got {type(input).__name__}"
            )
        if input.requires_grad:
            input = input.detach()
        if isinstance(input, MemoryMappedTensor):
            own = input._filename
            if filename is None and own is None:
                return input
            if filename is not None and own is not None:
                if os.path.abspath(filename) == own and shape is None:
                    return input
                if not copy_existing:
                    raise RuntimeError(
                        f"A filename was provided but the tensor already has a "
                        f"file associated: it is memory-mapped to {own}; copying it "
                        f"to {filename} needs copy_existing=True"
                    )
        target_shape = input.shape if shape is None else torch.Size(shape)
        if copy_data and math.prod(target_shape) != input.numel():
            raise ValueError(
                f"from_tensor: shape {tuple(target_shape)} does not hold the "
                f"{input.numel()} elements of the input of shape {tuple(input.shape)}"
            )
        dtype = input.dtype
        nbytes = nbytes_of(target_shape, dtype)
        if filename is None:
            source = input.reshape(target_shape) if copy_data else None
            flat, handle = _anonymous_bytes(nbytes, source)
            return _wrap(_on_storage(flat, dtype, target_shape), None, handle)
        filename = _writable_target(filename, existsok)
        if copy_data:
            _replace_file(filename, lambda p: write_tensor_file(p, input))
        else:
            _replace_file(filename, lambda p: allocate_file(p, nbytes))
        return cls.from_filename(filename, dtype, target_shape)

    @classmethod
    def from_filename(
        cls,
        filename: str | os.PathLike,
        dtype: torch.dtype,
        shape,
        index=None,
        mode: str | None = None,
    ) -> "MemoryMappedTensor":
        """Map the existing file ``filename``, which holds raw elements of ``dtype``
        forming ``shape`` (its size must match exactly), then apply ``index``.

        ``mode``: ``"r+"`` maps it shared (writes reach the file), ``"r"``
        copy-on-write (writes stay in this process); ``None`` is ``"r+"`` when the
        file is writable, ``"r"`` otherwise.

        >>> _ = MemoryMappedTensor.from_tensor(torch.arange(6), filename="six.memmap")
        >>> MemoryMappedTensor.from_filename("six.memmap", torch.int64, (2, 3)).tolist()
        [[0, 1, 2], [3, 4, 5]]
        """
        if isinstance(dtype, str):
            dtype = parse_dtype(dtype)
        if isinstance(shape, Tensor):
            if shape.ndim > 1:
                raise NotImplementedError(
                    "from_filename: a nested shape (a 2-D tensor of sizes) is not "
                    "supported; save nested tensors in a tensordict instead"
                )
            shape = shape.tolist()
        shape = torch.Size(shape)
        filename = os.path.abspath(filename)
        if mode not in (None, "r", "r+"):
            raise ValueError(f"from_filename: mode must be None, 'r' or 'r+', got {mode!r}")
        try:
            size = os.stat(filename).st_size
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no file {filename} to map (dtype {dtype}, shape {tuple(shape)})"
            ) from None
        nbytes = nbytes_of(shape, dtype)
        if size != nbytes:
            raise _file_size_error(filename, size, nbytes, dtype, shape)
        writable = _is_writable(filename)
        if mode == "r+" and not writable:
            raise PermissionError(f"from_filename: {filename} is not writable (mode='r+')")
        shared = mode == "r+" or (mode is None and writable)
        flat = _map_bytes(filename, nbytes, shared)
        out = _wrap(_on_storage(flat, dtype, shape), filename, None)
        return out[index] if index is not None else out

    @classmethod
    def from_handler(cls, handler, dtype, shape, index=None) -> "MemoryMappedTensor":
        """Map anonymous memory held by ``handler`` (as made by another
        MemoryMappedTensor); ``handler`` is internal: it is what ``_handler`` of an
        anonymous MemoryMappedTensor returns. The result shares the memory.

        >>> mt = MemoryMappedTensor.from_tensor(torch.arange(4.0))  # no filename: anonymous
        >>> same = MemoryMappedTensor.from_handler(mt._handler, torch.float32, (4,))
        >>> same[0] = 7.0
        >>> mt.tolist()
        [7.0, 1.0, 2.0, 3.0]
        >>> MemoryMappedTensor.from_handler(mt._handler, torch.float32, (2, 2), index=1).tolist()
        [2.0, 3.0]
        """
        if not isinstance(handler, _AnonymousFile) or handler.path is None:
            raise TypeError("from_handler expects the handler of an anonymous MemoryMappedTensor")
        shape = torch.Size(shape)
        flat = _map_bytes(handler.path, handler.nbytes, shared=True)
        out = _wrap(_on_storage(flat, dtype, shape), None, handler)
        return out[index] if index is not None else out

    @classmethod
    def from_storage(
        cls,
        storage,
        *,
        shape: torch.Size | None = None,
        dtype: torch.dtype | None = None,
        device=None,
        index=None,
        filename: str | os.PathLike | None = None,
        handler=None,
    ) -> "MemoryMappedTensor":
        """A MemoryMappedTensor viewing ``storage`` (not copied): ``dtype`` (default
        uint8 for an untyped storage) and ``shape`` (default: all of it, flat).
        ``filename`` records the file the storage maps, if any.

        >>> mt = MemoryMappedTensor.from_tensor(torch.arange(4))
        >>> MemoryMappedTensor.from_storage(mt.untyped_storage(), shape=(2, 2), dtype=torch.int64).tolist()
        [[0, 1], [2, 3]]
        """
        _check_device(device)
        if isinstance(storage, torch.TypedStorage):
            dtype = storage.dtype if dtype is None else dtype
            storage = storage.untyped()
        dtype = torch.uint8 if dtype is None else dtype
        flat = torch.empty(0, dtype=torch.uint8).set_(storage)
        if shape is None:
            shape = (storage.nbytes() // dtype.itemsize,)
        if math.prod(shape) * dtype.itemsize > storage.nbytes():
            raise ValueError(
                f"from_storage: a storage of {storage.nbytes()} bytes cannot hold "
                f"shape {tuple(shape)} of dtype {dtype}"
            )
        tensor = _on_storage(flat, dtype, shape)
        name = os.path.abspath(filename) if filename is not None else None
        out = _wrap(tensor, name, handler)
        return out[index] if index is not None else out

    @classmethod
    def empty(cls, *size, **kwargs) -> "MemoryMappedTensor":
        """Uninitialised (here: zero) data, sized as ``torch.empty`` takes it:
        ``empty(2, 3)``, ``empty((2, 3))``, ``empty(torch.Size(...))``; keywords
        ``dtype``, ``filename``, ``existsok``, ``device``.

        >>> MemoryMappedTensor.empty(2, 3, filename="e.memmap").shape
        torch.Size([2, 3])
        """
        return cls._new(size, kwargs, "empty", None)

    @classmethod
    def zeros(cls, *size, **kwargs) -> "MemoryMappedTensor":
        """Zeros, sized as ``torch.zeros`` takes it (see :meth:`empty`).

        >>> MemoryMappedTensor.zeros(2, 3).shape
        torch.Size([2, 3])
        """
        return cls._new(size, kwargs, "zeros", None)

    @classmethod
    def ones(cls, *size, **kwargs) -> "MemoryMappedTensor":
        """Ones, sized as ``torch.ones`` takes it (see :meth:`empty`).

        >>> MemoryMappedTensor.ones((2,), dtype=torch.int64).tolist()
        [1, 1]
        """
        return cls._new(size, kwargs, "ones", 1)

    @classmethod
    def full(cls, *args, **kwargs) -> "MemoryMappedTensor":
        """``fill_value`` everywhere: ``full((2, 3), 1.5)`` as ``torch.full``, or
        ``full(2, 3, fill_value=1.5)``; the dtype follows ``fill_value`` unless
        given.

        >>> MemoryMappedTensor.full((2, 2), 1.5).tolist()
        [[1.5, 1.5], [1.5, 1.5]]
        """
        if "fill_value" in kwargs:
            fill_value = kwargs.pop("fill_value")
            size = args
        elif args:
            size, fill_value = args[:-1], args[-1]
        else:
            raise TypeError("MemoryMappedTensor.full needs a fill_value")
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = torch.full((), fill_value).dtype
        return cls._new(size, kwargs, "full", fill_value)

    @classmethod
    def _new(cls, size, kwargs, what, fill) -> "MemoryMappedTensor":
        kwargs = dict(kwargs)
        shape = _parse_size(size, kwargs, what)
        dtype = kwargs.pop("dtype", None) or torch.get_default_dtype()
        filename = kwargs.pop("filename", None)
        existsok = kwargs.pop("existsok", False)
        _check_device(kwargs.pop("device", None))
        if kwargs:
            raise TypeError(f"MemoryMappedTensor.{what}: unexpected {sorted(kwargs)}")
        return cls._allocate(shape, dtype, filename, existsok, fill)

    @classmethod
    def _allocate(cls, shape, dtype, filename, existsok, fill) -> "MemoryMappedTensor":
        nbytes = nbytes_of(shape, dtype)
        if filename is None:
            flat, handle = _anonymous_bytes(nbytes)
            out = _wrap(_on_storage(flat, dtype, shape), None, handle)
        else:
            filename = _writable_target(filename, existsok)
            _replace_file(filename, lambda p: allocate_file(p, nbytes))
            out = cls.from_filename(filename, dtype, shape)
        if fill is not None and out.numel():
            out.fill_(fill)
        return out

    @classmethod
    def empty_like(cls, input: Tensor, *, filename=None, dtype=None, existsok=False):
        """:meth:`empty` with the shape and dtype of ``input``.

        >>> MemoryMappedTensor.empty_like(torch.zeros(2, 5)).shape
        torch.Size([2, 5])
        """
        return cls._allocate(input.shape, dtype or input.dtype, filename, existsok, None)

    @classmethod
    def zeros_like(cls, input: Tensor, *, filename=None, dtype=None, existsok=False):
        """:meth:`zeros` with the shape and dtype of ``input``.

        >>> MemoryMappedTensor.zeros_like(torch.ones(2, dtype=torch.int32)).dtype
        torch.int32
        """
        return cls._allocate(input.shape, dtype or input.dtype, filename, existsok, None)

    @classmethod
    def ones_like(cls, input: Tensor, *, filename=None, dtype=None, existsok=False):
        """:meth:`ones` with the shape and dtype of ``input``.

        >>> MemoryMappedTensor.ones_like(torch.zeros(3)).tolist()
        [1.0, 1.0, 1.0]
        """
        return cls._allocate(input.shape, dtype or input.dtype, filename, existsok, 1)

    @classmethod
    def full_like(
        cls, input: Tensor, fill_value, *, filename=None, dtype=None, existsok=False
    ):
        """:meth:`full` with the shape and dtype of ``input``.

        >>> MemoryMappedTensor.full_like(torch.zeros(2), 7.0).tolist()
        [7.0, 7.0]
        """
        return cls._allocate(
            input.shape, dtype or input.dtype, filename, existsok, fill_value
        )

    # ------------------------------------------------------------------ attributes
    @property
    def filename(self) -> str:
        """The file holding the data (RuntimeError for anonymous memory).

        >>> MemoryMappedTensor.zeros(3, filename="z.memmap").filename.endswith("z.memmap")
        True
        """
        if self._filename is None:
            raise RuntimeError(
                "this MemoryMappedTensor has no file: it lives in anonymous shared "
                "memory (give filename= when creating it to put it in a file)"
            )
        return self._filename

    @property
    def _handler(self):
        """0.15.3's name of the handle on the anonymous memory (``None`` for a
        tensor in a file): what :meth:`from_handler` takes."""
        return self._handle

    @property
    def parent_shape(self) -> torch.Size:
        """The shape of the whole mapped tensor this one was indexed from.

        >>> mt = MemoryMappedTensor.zeros(4, 3)
        >>> mt[1:3].shape, mt[1:3].parent_shape
        (torch.Size([2, 3]), torch.Size([4, 3]))
        """
        return self._parent_shape if self._parent_shape is not None else self.shape

    # ------------------------------------------------------------------ views
    def __getitem__(self, index) -> Tensor:
        result = Tensor.__getitem__(self, index)
        # a copy (advanced indexing) is a plain tensor in RAM; a view stays mapped
        return self._keep_mapped(result) if result._is_view() else result

    def unbind(self, dim: int = 0) -> tuple:
        """As :meth:`torch.Tensor.unbind`; the slices stay MemoryMappedTensors (views
        of the same file: writes reach it).

        >>> parts = MemoryMappedTensor.zeros(2, 3).unbind(0)
        >>> len(parts), type(parts[0]).__name__
        (2, 'MemoryMappedTensor')
        """
        return tuple(self._keep_mapped(t) for t in Tensor.unbind(self, dim))

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """As :meth:`torch.Tensor.chunk`; the chunks stay MemoryMappedTensors.

        >>> [c.shape[0] for c in MemoryMappedTensor.zeros(5).chunk(2)]
        [3, 2]
        """
        return tuple(self._keep_mapped(t) for t in Tensor.chunk(self, chunks, dim))

    def split(self, split_size, dim: int = 0) -> tuple:
        """As :meth:`torch.Tensor.split`; the pieces stay MemoryMappedTensors.

        >>> [p.shape[0] for p in MemoryMappedTensor.zeros(5).split([1, 4])]
        [1, 4]
        """
        return tuple(self._keep_mapped(t) for t in Tensor.split(self, split_size, dim))

    def detach(self) -> "MemoryMappedTensor":
        """The same mapped storage, out of the autograd graph (still a
        MemoryMappedTensor, so that ``nn.Parameter`` can wrap one).

        >>> type(MemoryMappedTensor.zeros(2).detach()).__name__
        'MemoryMappedTensor'
        """
        out = Tensor._make_subclass(MemoryMappedTensor, Tensor.detach(self))
        out._filename = self._filename
        out._handle = self._handle
        out._parent_shape = self._parent_shape
        return out

    def _keep_mapped(self, result: Tensor) -> Tensor:
        """``result`` as a MemoryMappedTensor if it views this storage, else as is."""
        if result._is_view():
            out = result.as_subclass(MemoryMappedTensor)
            out._filename = self._filename
            out._handle = self._handle
            out._parent_shape = self.parent_shape
            return out
        return result

    # ------------------------------------------------------------------ pickling
    def __reduce_ex__(self, protocol):
        """The file name and the layout, never the data (anonymous memory, which has
        no name outside multiprocessing, is sent as data)."""
        if self._filename is not None:
            return _rebuild_from_file, (self._filename,) + _layout(self)
        return _rebuild_from_data, (self.as_subclass(Tensor).clone(),)

    def __deepcopy__(self, memo):
        return self.as_subclass(Tensor).clone()


def _wrap(tensor: Tensor, filename: str | None, handle) -> MemoryMappedTensor:
    # _make_subclass shares the storage without making a view (as_subclass would)
    out = Tensor._make_subclass(MemoryMappedTensor, tensor)
    if filename is not None:
        out._filename = filename
    if handle is not None:
        out._handle = handle
    return out


def _layout(t: Tensor) -> tuple:
    """What a receiver needs to view the same elements: storage size, dtype name,
    shape, stride, offset."""
    return (
        t.untyped_storage().nbytes(),
        str(t.dtype),
        tuple(t.shape),
        tuple(t.stride()),
        t.storage_offset(),
    )


def _view(flat: Tensor, dtype: str, shape, stride, offset) -> Tensor:
    return _on_storage(flat, parse_dtype(dtype), shape, stride, offset)


def _is_writable(file_path) -> bool:
    """Whether the file can be written: it exists and may be written, or it does not
    exist yet (0.15.3's helper; a file mapped from here is shared only if it is)."""
    file_path = os.fspath(file_path)
    return os.access(file_path, os.W_OK) or not os.path.exists(file_path)


def _rebuild_from_file(filename, nbytes, dtype, shape, stride, offset):
    writable = _is_writable(filename)
    size = os.stat(filename).st_size
    if size < nbytes:
        raise ValueError(
            f"the file {filename} holds {size} bytes, fewer than the {nbytes} bytes "
            f"the pickled MemoryMappedTensor maps: it was truncated since"
        )
    flat = _map_bytes(filename, nbytes, shared=writable)
    out = _wrap(_view(flat, dtype, shape, stride, offset), filename, None)
    return out


def _rebuild_from_data(tensor: Tensor) -> MemoryMappedTensor:
    return MemoryMappedTensor.from_tensor(tensor)


def _rebuild_from_fd(dup, nbytes, dtype, shape, stride, offset):
    handle = _AnonymousFile.adopt(dup.detach(), nbytes)
    flat = _map_bytes(handle.path, nbytes, shared=True)
    return _wrap(_view(flat, dtype, shape, stride, offset), None, handle)


def _reduce_for_process(t: MemoryMappedTensor):
    """multiprocessing's pickler: anonymous memory travels as a file descriptor."""
    handle = t._handle
    if t._filename is None and handle is not None and handle.path is not None:
        handle.recyclable = None  # another process may map it from now on
        return _rebuild_from_fd, (_mp_reduction.DupFd(handle.fd),) + _layout(t)
    return t.__reduce_ex__(2)


_mp_reduction.ForkingPickler.register(MemoryMappedTensor, _reduce_for_process)


def is_memory_mapped(tensor: Any) -> bool:
    """True for a MemoryMappedTensor."""
    return isinstance(tensor, MemoryMappedTensor)


def mapped_file(tensor: Tensor) -> str | None:
    """The file a MemoryMappedTensor maps (None for anonymous memory or a plain
    tensor)."""
    return tensor._filename if isinstance(tensor, MemoryMappedTensor) else None


def maps_whole_file(tensor: Tensor, filename: str) -> bool:
    """True when ``tensor`` is a MemoryMappedTensor showing every byte of
    ``filename``, in order: the file can then stand for the tensor."""
    if not isinstance(tensor, MemoryMappedTensor) or tensor._filename is None:
        return False
    if os.path.abspath(filename) != tensor._filename:
        return False
    try:
        size = os.stat(filename).st_size
    except OSError:
        return False
    return (
        tensor.storage_offset() == 0
        and tensor.is_contiguous()
        and tensor.untyped_storage().nbytes() == size
        and tensor.numel() * tensor.dtype.itemsize == size
    )
