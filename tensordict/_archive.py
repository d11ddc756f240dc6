"""Single-file archives of saved tensordicts: a zip whose members are the files of the
folder form (:mod:`tensordict._disk`), so that ``unzip`` gives the folder back.

Layout. Every member is stored at an offset that is a multiple of 64 bytes: the
padding goes into an extra field (header id ``0x6474``, ``"td"``) of the member's local
header, which zip readers skip. Tensor payloads (``*.memmap`` members) are stored
uncompressed unless the caller asks for compression, so :class:`_ArchiveReader` maps
the archive file once and makes each leaf a tensor over that mapping at the member's
offset: no copy. Compressed members are decompressed in memory.

Checksums. The zip format stores a CRC-32 per member; loading checks the metadata
members against it, and the tensor payloads too with ``load_memmap(..., verify=True)``
(which reads every page; a plain load maps them unread), and ``unpack_memmap`` checks
every member; a mismatch raises :class:`~tensordict._disk.SavedDataError` naming the
member. A tensordict loaded with ``mode="r+"`` (or made by
``memmap_like``) writes into the archive without updating the CRCs: loading marks the
archive first, in its zip comment (``checksums: stale``), and later loads skip the
payload checks of a marked archive (metadata is still checked);
:func:`refresh_archive_checksums` recomputes the CRCs in place and clears the mark.

Crash safety. An archive is written to a new file beside its target, then renamed over
it: a crash leaves the old archive or the new one, never a partial one.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import struct
import uuid
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from tensordict import _disk
from tensordict._disk import META, SavedDataError
from tensordict.memmap import _on_storage

__all__ = [
    "SUFFIX",
    "_ArchiveReader",
    "is_memmap_archive",
    "pack_memmap",
    "refresh_archive_checksums",
    "unpack_memmap",
    "wants_archive",
    "write_plan",
]

SUFFIX = ".tdz"
ALIGN = 64
_PAD_ID = 0x6474  # "td": the extra field that pads a local header to ALIGN
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a zip local file header (30 bytes)
_CHUNK = 16 << 20
COMMENT_VALID = b"tensordict archive; checksums: valid"
COMMENT_STALE = b"tensordict archive; checksums: stale"

_COMPRESSIONS = {
    "stored": zipfile.ZIP_STORED,
    "deflate": zipfile.ZIP_DEFLATED,
    "deflated": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
}


def wants_archive(prefix, archive: bool | None) -> bool:
    """Whether a save to ``prefix`` writes an archive: ``archive=True``, or
    ``archive=None`` and a path ending in ``.tdz``."""
    if archive is not None:
        return bool(archive)
    return prefix is not None and os.fspath(prefix).endswith(SUFFIX)


def compression_type(compression) -> int:
    if compression is None:
        return zipfile.ZIP_STORED
    if isinstance(compression, str) and compression.lower() in _COMPRESSIONS:
        return _COMPRESSIONS[compression.lower()]
    if type(compression) is int and compression in _COMPRESSIONS.values():
        return compression
    raise ValueError(
        f"compression={compression!r} is not a zip compression: pass 'stored', "
        f"'deflate', 'bzip2', 'lzma' or one of zipfile's ZIP_* constants"
    )


def is_memmap_archive(path) -> bool:
    """True when ``path`` is a zip file with a top-level ``meta.json`` (a saved
    tensordict archive); a folder, a missing path or any other file gives False.

    >>> _ = TensorDict(a=torch.zeros(3)).save("td.tdz")
    >>> _ = TensorDict(a=torch.zeros(3)).save("td_folder")
    >>> is_memmap_archive("td.tdz"), is_memmap_archive("td_folder")
    (True, False)
    """
    path = Path(os.fspath(path))
    if not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            zf.getinfo(META)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError):
        return False
    return True


# ----------------------------------------------------------------------------- writing


class _Writer:
    """A zip file being written, each member aligned to ALIGN bytes."""

    def __init__(self, fileobj, compression: int, compresslevel):
        self.file = fileobj
        self.zip = zipfile.ZipFile(fileobj, "w", allowZip64=True)
        self.zip.comment = COMMENT_VALID
        self.compression = compression
        self.compresslevel = compresslevel

    def add(self, name: str, nbytes: int, chunks, payload: bool) -> None:
        """The member ``name`` of ``nbytes`` bytes, written from the iterable of
        buffers ``chunks``; payloads take the archive's compression."""
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = self.compression if payload else zipfile.ZIP_STORED
        if payload and self.compresslevel is not None:
            info._compresslevel = self.compresslevel  # what ZipFile.open(w) reads
        info.external_attr = 0o644 << 16
        info.file_size = nbytes
        zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # as ZipFile decides
        offset = self.file.tell()
        fixed = (
            offset + _LOCAL.size + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
        )
        info.extra = struct.pack("<HH", _PAD_ID, -fixed % ALIGN) + bytes(-fixed % ALIGN)
        with self.zip.open(info, "w", force_zip64=zip64) as out:
            if self.file.tell() % ALIGN:  # the local header ZipFile wrote changed
                raise RuntimeError(
                    f"archive member {name} would not start at a multiple of {ALIGN} "
                    f"bytes (zipfile wrote a local header of an unexpected size)"
                )
            for chunk in chunks:
                out.write(chunk)

    def close(self) -> None:
        self.zip.close()


def tensor_chunks(tensor: Tensor | None, nbytes: int):
    """The bytes of ``tensor`` (zeros if None), in chunks of at most _CHUNK."""
    if tensor is None:
        zeros = bytes(min(nbytes, _CHUNK))
        left = nbytes
        while left:
            yield zeros[: min(left, _CHUNK)]
            left -= min(left, _CHUNK)
        return
    flat = tensor.detach().as_subclass(Tensor)
    if flat.device.type != "cpu":
        flat = flat.cpu()
    flat = flat.resolve_conj().resolve_neg().contiguous().reshape(-1)
    if flat.numel() == 0:
        return
    view = memoryview(flat.view(torch.uint8).numpy())
    for start in range(0, len(view), _CHUNK):
        yield view[start : start + _CHUNK]


def _target(dst: Path, existsok: bool) -> None:
    """Refuse to replace what is not an archive (or anything, with existsok=False)."""
    if not os.path.lexists(dst):
        return
    if dst.is_dir():
        raise IsADirectoryError(
            f"cannot write the archive {dst}: it is a folder; pass another path or "
            f"archive=False to save to the folder"
        )
    if not existsok:
        raise RuntimeError(
            f"cannot write the archive {dst}: the file already exists (pass "
            f"existsok=True to replace it)"
        )
    if not is_memmap_archive(dst):
        raise RuntimeError(
            f"refusing to replace {dst}: it is not a tensordict archive; choose a "
            f"new path"
        )


def _atomic_write(dst: Path, write) -> None:
    """Run ``write(fileobj)`` on a new file beside ``dst``, then rename it over
    ``dst``; nothing is left behind on failure."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.parent / f".{dst.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        with open(tmp, "xb") as fileobj:
            write(fileobj)
        os.replace(tmp, os.path.realpath(dst))  # a symlink's target is replaced
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_plan(
    dst, plan, *, compression=None, compresslevel=None, existsok=True
) -> Path:
    """Write the folder plan ``plan`` (:func:`tensordict._disk.plan_tree`) as the
    archive ``dst``: each folder's ``meta.json`` and pickle files, then the leaves."""
    dst = Path(os.path.abspath(os.fspath(dst)))
    kind = compression_type(compression)
    _target(dst, existsok)

    def write(fileobj):
        writer = _Writer(fileobj, kind, compresslevel)
        try:
            for folder in plan.folders:
                base = f"{folder.path}/" if folder.path else ""
                data = json.dumps(folder.meta).encode()
                writer.add(base + META, len(data), (data,), payload=False)
                for file, blob in folder.pickles.items():
                    writer.add(base + file, len(blob), (blob,), payload=False)
            for job in plan.leaves:
                nbytes = job.shape.numel() * job.dtype.itemsize
                writer.add(
                    job.path, nbytes, tensor_chunks(job.source, nbytes), payload=True
                )
        finally:
            writer.close()  # on failure too: the partial file is then removed

    _atomic_write(dst, write)
    if plan.pickled_keys:
        keys = ", ".join(key for key, _ in plan.pickled_keys)
        _disk._warn_at_caller(
            f"saved with pickle, as JSON cannot hold them: the non-tensor values of "
            f"{keys} (members: {', '.join(f for _, f in plan.pickled_keys)} of "
            f"{dst}); loading them needs allow_pickle=True",
            _disk.PickledValueWarning,
        )
    return dst


def pack_memmap(prefix, archive_path, *, compression=None, compresslevel=None) -> Path:
    """The folder ``prefix`` of a saved tensordict, written as the archive
    ``archive_path`` (see the module docstring); returns its path. ``compression``
    (``"stored"``, ``"deflate"``, ``"bzip2"``, ``"lzma"`` or a zipfile constant) and
    ``compresslevel`` apply to the tensor payloads. ``ValueError`` if ``prefix`` is
    not a saved folder or the archive would be inside it.

    >>> _ = TensorDict(a=torch.arange(3)).memmap("folder")
    >>> path = pack_memmap("folder", "packed.tdz")
    >>> TensorDict.load_memmap(path)["a"].tolist()
    [0, 1, 2]
    """
    src = Path(os.path.abspath(os.fspath(prefix)))
    dst = Path(os.path.abspath(os.fspath(archive_path)))
    if not src.is_dir():
        raise ValueError(
            f"pack_memmap: {src} is not a folder; pass the folder of a tensordict "
            f"saved with memmap or save"
        )
    _disk.read_meta(src)  # a saved tensordict (raises SavedDataError otherwise)
    if dst == src or src in dst.parents:
        raise ValueError(f"pack_memmap: the archive {dst} must be outside {src}")
    kind = compression_type(compression)
    if dst.is_dir():
        raise IsADirectoryError(f"pack_memmap: the archive path {dst} is a folder")
    files = []
    for folder, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        rel = here.relative_to(src).as_posix()
        base = "" if rel == "." else rel + "/"
        # meta.json first in each folder: readers find the metadata early
        for name in sorted(names, key=lambda n: (n != META, n)):
            if name.startswith("."):
                continue  # partial files of an interrupted write
            if (here / name).is_symlink():
                raise ValueError(f"pack_memmap: {here / name} is a symbolic link")
            files.append((base + name, here / name))

    def write(fileobj):
        writer = _Writer(fileobj, kind, compresslevel)
        try:
            for name, path in files:
                with open(path, "rb") as handle:
                    size = os.fstat(handle.fileno()).st_size
                    chunks = iter(lambda: handle.read(_CHUNK), b"")
                    writer.add(name, size, chunks, payload=name.endswith(".memmap"))
        finally:
            writer.close()

    _atomic_write(dst, write)
    return dst


def _check_archive(path, caller: str) -> Path:
    path = Path(os.fspath(path))
    if not is_memmap_archive(path):
        raise ValueError(
            f"{caller}: {path} is not a tensordict archive (a zip file with a "
            f"top-level {META}); see is_memmap_archive"
        )
    return path


def _member_path(name: str, archive: Path) -> Path:
    parts = name.split("/")
    if (
        name.startswith("/")
        or "\\" in name
        or "\x00" in name
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise SavedDataError(
            f"{archive}: the member {name!r} is not a plain relative path; the archive "
            f"is damaged or crafted"
        )
    return Path(*parts)


def unpack_memmap(archive_path, prefix) -> Path:
    """Extract the archive ``archive_path`` into the folder ``prefix`` (checking every
    member's CRC-32), which it replaces atomically; returns the folder's path.
    ``ValueError`` if ``archive_path`` is not an archive, ``SavedDataError`` if a
    member is damaged.

    >>> _ = TensorDict(a=torch.zeros(3)).save("td.tdz")
    >>> sorted(p.name for p in unpack_memmap("td.tdz", "td").iterdir())
    ['a.memmap', 'meta.json']
    """
    archive = _check_archive(archive_path, "unpack_memmap")
    dst = Path(os.path.abspath(os.fspath(prefix)))
    _disk.check_target(dst, True)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.parent / f".{dst.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                target = tmp / _member_path(info.filename, archive)
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    with zf.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out, _CHUNK)
                except zipfile.BadZipFile as err:
                    raise SavedDataError(
                        f"the archive {archive} is damaged: its member "
                        f"{info.filename!r} fails its check ({err})"
                    ) from None
        _disk._commit(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dst


def _set_comment(path: Path, old: bytes, new: bytes) -> None:
    """Replace the zip comment ``old`` by ``new`` (same length) in place."""
    with open(path, "r+b") as handle:
        handle.seek(-len(old), os.SEEK_END)
        if handle.read(len(old)) == old:
            handle.seek(-len(old), os.SEEK_END)
            handle.write(new)


def mark_stale(path) -> None:
    """Record in the archive that its payloads may be written in place."""
    _set_comment(Path(os.fspath(path)), COMMENT_VALID, COMMENT_STALE)


def refresh_archive_checksums(archive_path) -> Path:
    """Recompute, in place, the CRC-32 of every uncompressed member of the archive
    whose bytes changed (writes through ``load_memmap(..., mode="r+")``); returns
    the archive's path. ``ValueError`` if ``archive_path`` is not an archive.

    >>> import zipfile
    >>> _ = TensorDict(a=torch.zeros(3)).save("td.tdz")
    >>> _ = TensorDict.load_memmap("td.tdz", mode="r+")["a"].add_(1)
    >>> zipfile.ZipFile("td.tdz").testzip()
    'a.memmap'
    >>> _ = refresh_archive_checksums("td.tdz")
    >>> print(zipfile.ZipFile("td.tdz").testzip())
    None
    """
    path = _check_archive(archive_path, "refresh_archive_checksums")
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        central = zf.start_dir  # where the central directory starts
    with open(path, "r+b") as handle:
        # the central directory lists the members in the order of infolist()
        handle.seek(central)
        records = []
        position = central
        for _ in infos:
            head = handle.read(46)
            if head[:4] != b"PK\x01\x02":
                raise SavedDataError(f"{path}: the central directory is damaged")
            n, e, c = struct.unpack("<3H", head[28:34])
            records.append(position)
            position += 46 + n + e + c
            handle.seek(position)
        for info, record in zip(infos, records):
            if info.compress_type != zipfile.ZIP_STORED:
                continue  # never written in place
            start = _data_offset(handle, info, path)
            handle.seek(start)
            crc = 0
            left = info.file_size
            while left:
                chunk = handle.read(min(left, _CHUNK))
                if not chunk:
                    raise SavedDataError(
                        f"{path}: the member {info.filename!r} is truncated"
                    )
                crc = zlib.crc32(chunk, crc)
                left -= len(chunk)
            if crc != info.CRC:
                packed = struct.pack("<L", crc)
                handle.seek(info.header_offset + 14)
                handle.write(packed)
                handle.seek(record + 16)
                handle.write(packed)
    _set_comment(path, COMMENT_STALE, COMMENT_VALID)
    return path


def _data_offset(handle, info, path) -> int:
    handle.seek(info.header_offset)
    head = handle.read(_LOCAL.size)
    if len(head) != _LOCAL.size or head[:4] != b"PK\x03\x04":
        raise SavedDataError(
            f"{path}: the local header of {info.filename!r} is damaged"
        )
    n, e = struct.unpack("<2H", head[26:30])
    return info.header_offset + _LOCAL.size + n + e


# ----------------------------------------------------------------------------- reading


class _ArchiveReader:
    """The members of one archive, read for :func:`tensordict._persistence._read`:
    folders are ``Path(archive) / member folder``; the archive is mapped once
    (shared with ``mode="r+"``, copy-on-write otherwise) and leaves are tensors over
    that mapping."""

    def __init__(self, path, mode: str | None, known: dict | None = None):
        self.path = Path(os.path.abspath(os.fspath(path)))
        # member name -> value: the pickled values of an archive this process just
        # wrote, given back as they were instead of unpickled
        self.known = known or {}
        self.meta_only = False  # device="meta": shapes and dtypes, no data read
        # check the payloads' CRC-32 as they are mapped (load_memmap(verify=True));
        # off by default: it reads every page of the archive, which a load otherwise
        # leaves on disk until a leaf is read (55.8 ms against 10.1 for 0.15.3, which
        # checks none, to load nn.Transformer's 176 MB)
        self.verify = False
        self._inflated: dict = {}  # member name -> bytes (prefetch_compressed)
        _disk.shared_for(mode)  # checks the mode
        try:
            with zipfile.ZipFile(self.path) as zf:
                self.infos = {info.filename: info for info in zf.infolist()}
                self.stale = zf.comment == COMMENT_STALE
        except zipfile.BadZipFile as err:
            raise SavedDataError(
                f"{self.path} is not a memory-mapped tensordict: it is a file but not "
                f"a readable archive ({err}); it is truncated or damaged, or not an "
                f"archive (saved tensordicts are folders or zip archives)"
            ) from None
        size = os.stat(self.path).st_size
        self.flat = torch.from_file(
            str(self.path), shared=mode == "r+", size=size, dtype=torch.uint8
        )
        self._bytes = self.flat.numpy()
        self._offsets: dict = {}
        if mode == "r+":
            self._check_writable()
            mark_stale(self.path)
            self.stale = True

    def _check_writable(self) -> None:
        """``mode="r+"`` maps the payloads shared: each must be stored and aligned."""
        for name, info in self.infos.items():
            if not name.endswith(".memmap") or not info.file_size:
                continue
            if info.compress_type != zipfile.ZIP_STORED:
                raise RuntimeError(
                    f"cannot load {self.path} with mode='r+': its member {name!r} is "
                    f"compressed, so writes cannot go through to the file; load it "
                    f"without mode='r+' (the leaves are then read into memory)"
                )
            if self._offset(info) % ALIGN:
                raise RuntimeError(
                    f"cannot load {self.path} with mode='r+': its member {name!r} is "
                    f"not aligned to {ALIGN} bytes (an archive made by another zip "
                    f"tool); repack it with tensordict.pack_memmap"
                )

    def prefetch_compressed(self, num_threads: int) -> None:
        """Decompress every compressed payload with ``num_threads`` threads, ahead of
        the leaves that read them (``load_memmap(..., num_threads=n)``)."""
        names = [
            name
            for name, info in self.infos.items()
            if name.endswith(".memmap") and info.compress_type != zipfile.ZIP_STORED
        ]
        if not names:
            return
        with ThreadPoolExecutor(max(1, num_threads)) as pool:  # zlib frees the GIL
            for name, data in zip(
                names, pool.map(lambda n: self._inflate(self.infos[n]), names)
            ):
                self._inflated[name] = data

    # the folder argument of the methods: Path(archive) / "nested/folder"
    def _name(self, folder: Path, file: str) -> str:
        rel = folder.relative_to(self.path).as_posix()
        return file if rel == "." else f"{rel}/{file}"

    def _info(self, name: str, what: str):
        info = self.infos.get(name)
        if info is None:
            raise SavedDataError(
                f"the archive {self.path} has no member {name!r} ({what})"
            )
        return info

    def _offset(self, info) -> int:
        offset = self._offsets.get(info.filename)
        if offset is None:
            head = self._bytes[info.header_offset : info.header_offset + _LOCAL.size]
            if len(head) != _LOCAL.size or bytes(head[:4]) != b"PK\x03\x04":
                raise SavedDataError(
                    f"the archive {self.path} is damaged: the local header of "
                    f"{info.filename!r} is missing"
                )
            n, e = struct.unpack("<2H", bytes(head[26:30]))
            offset = info.header_offset + _LOCAL.size + n + e
            if offset + info.compress_size > len(self._bytes):
                raise SavedDataError(
                    f"the archive {self.path} is truncated: the member "
                    f"{info.filename!r} ends past the end of the file"
                )
            self._offsets[info.filename] = offset
        return offset

    def _check_crc(self, info, offset: int) -> None:
        data = self._bytes[offset : offset + info.file_size]
        crc = zlib.crc32(data)
        if crc != info.CRC:
            raise SavedDataError(
                f"the archive {self.path} is damaged: the member {info.filename!r} "
                f"fails its CRC-32 check (stored {info.CRC:#010x}, computed "
                f"{crc:#010x}); if it was written in place on purpose, call "
                f"refresh_archive_checksums first"
            )

    def read_bytes(self, name: str, what: str) -> bytes:
        info = self._info(name, what)
        if info.compress_type != zipfile.ZIP_STORED:
            return self._inflate(info)
        offset = self._offset(info)
        self._check_crc(info, offset)
        return bytes(self._bytes[offset : offset + info.file_size])

    def _inflate(self, info) -> bytes:
        try:
            with zipfile.ZipFile(self.path) as zf:
                return zf.read(info)  # checks the CRC
        except zipfile.BadZipFile as err:
            raise SavedDataError(
                f"the archive {self.path} is damaged: its member {info.filename!r} "
                f"fails its check ({err})"
            ) from None

    # -- what _persistence._read calls
    def read_meta(self, folder: Path) -> dict:
        name = self._name(folder, META)
        if name not in self.infos:
            raise SavedDataError(
                f"{folder} does not hold a saved tensordict: the archive {self.path} "
                f"has no member {name!r}"
            )
        return _disk.parse_meta(
            self.read_bytes(name, "metadata"), f"{self.path}::{name}"
        )

    def map_leaf(self, folder: Path, entry: dict, shared) -> Tensor:
        key = entry.get("key")
        file = _disk.check_name(entry.get("file"), folder, key)
        dtype = _disk._DTYPES.get(entry.get("dtype"))
        if dtype is None:
            raise SavedDataError(
                f"{folder / META}: the entry {key!r} has dtype {entry.get('dtype')!r}, "
                f"which is not a torch dtype"
            )
        shape = _disk.check_shape(entry.get("shape"), folder, key)
        name = self._name(folder, file)
        info = self._info(name, f"the data of the entry {key!r}")
        nbytes = shape.numel() * dtype.itemsize
        if info.file_size != nbytes:
            raise SavedDataError(
                f"the member {name!r} of {self.path} (entry {key!r}) holds "
                f"{info.file_size} bytes, but dtype {dtype} and shape {tuple(shape)} "
                f"need {nbytes}: it does not belong to this metadata"
            )
        if self.meta_only:
            return torch.empty(shape, dtype=dtype, device="meta")
        if nbytes == 0:
            return torch.empty(shape, dtype=dtype)
        if info.compress_type != zipfile.ZIP_STORED:
            data = self._inflated.pop(name, None)
            data = bytearray(data if data is not None else self._inflate(info))
            return torch.frombuffer(data, dtype=dtype).reshape(shape)
        offset = self._offset(info)
        if self.verify and not self.stale:
            self._check_crc(info, offset)
        if offset % dtype.itemsize:  # an archive made by another zip tool
            data = bytearray(self._bytes[offset : offset + nbytes])
            return torch.frombuffer(data, dtype=dtype).reshape(shape)
        return _on_storage(self.flat, dtype, shape, offset=offset // dtype.itemsize)

    def read_value(self, folder: Path, entry: dict, allow_pickle: bool, key) -> Any:
        inline = _disk.inline_value(entry)
        if inline is not _disk._NO_INLINE:
            return inline
        if "pickle" not in entry:
            raise SavedDataError(f"{folder / META}: the entry {key!r} has no value")
        file = _disk.check_name(entry["pickle"], folder, key)
        name = self._name(folder, file)
        if name in self.known:
            return self.known[name]
        if not allow_pickle:
            raise SavedDataError(
                f"the entry {key!r} is a non-tensor value saved with pickle in the "
                f"member {name!r} of {self.path}; loading it runs code from the file, "
                f"so it needs allow_pickle=True (pass it only for data you trust)"
            )
        data = self.read_bytes(name, f"the value of the entry {key!r}")
        try:
            return pickle.loads(data)
        except Exception as err:
            raise SavedDataError(
                f"the member {name!r} of {self.path} (entry {key!r}) cannot be "
                f"unpickled: {err}"
            ) from err


class FolderSource:
    """The files of a saved folder (the default source of ``_read``)."""

    @staticmethod
    def read_meta(folder: Path) -> dict:
        return _disk.read_meta(folder)

    # (folder as a str, entry, shared): called once per leaf, so no wrapper
    map_leaf = staticmethod(_disk.map_leaf)

    @staticmethod
    def read_value(folder: Path, entry: dict, allow_pickle: bool, key) -> Any:
        return _disk.read_value(folder, entry, allow_pickle, key)


FOLDERS = FolderSource()


# ----------------------------------------------------------------------------- appending


def append_memmap(
    prefix, rows, *, allow_pickle: bool | None = None, kinds=None
) -> None:
    """Append ``rows`` along the first batch dim of the tensordict saved in the folder
    ``prefix``: every check runs before the first byte is written; the leaf files
    grow, then the ``meta.json`` files are replaced (all written beside their
    targets first, the top one replaced first). A failed write truncates the files
    back. ``kinds`` tells containers apart (see :class:`tensordict._disk.Kinds`)."""
    folder = Path(os.fspath(prefix))
    if not folder.is_dir() or not (folder / META).is_file():
        raise ValueError(
            f"append_memmap appends to a directory written by save or memmap, and "
            f"{prefix} is not one. An archive cannot grow: unpack it with "
            f"unpack_memmap first."
        )
    leaves: list = []  # (file, tensor)
    metas: list = []  # (folder, new metadata), top first
    _plan_append(folder, rows, kinds, bool(allow_pickle), leaves, metas, None)
    grown: list = []
    try:
        for path, tensor in leaves:
            size = os.stat(path).st_size
            with open(path, "ab") as handle:
                grown.append((path, size))
                for chunk in tensor_chunks(tensor, 0):
                    handle.write(chunk)
    except BaseException:
        for path, size in grown:
            os.truncate(path, size)
        raise
    partials = []
    for where, meta in metas:
        partial = where / f".{META}.append.tmp"
        partial.write_text(json.dumps(meta))
        partials.append((partial, where / META))
    for partial, target in partials:
        os.replace(partial, target)


def _plan_append(folder, rows, kinds, allow_pickle, leaves, metas, count) -> None:
    meta = _disk.read_meta(folder)
    cls = meta.get("class")
    if cls != "TensorDict":
        raise ValueError(
            f"append_memmap: {folder} holds a {cls}, which cannot grow (only "
            f"tensordicts and tensorclasses can: a NonTensorStack or a lazy stack "
            f"cannot)"
        )
    if kinds.is_tensorclass(rows):
        rows = rows._tensordict
    if not kinds.is_container(rows):
        raise ValueError(
            f"append_memmap: rows must be a tensordict or a tensorclass, got "
            f"{type(rows).__name__} for {folder}"
        )
    saved = _disk.check_shape(meta.get("batch_size"), folder, "<batch_size>")
    new = rows.batch_size
    if not saved or len(new) != len(saved) or new[1:] != saved[1:]:
        raise ValueError(
            f"Cannot append rows of batch size {tuple(new)} to the tensordict saved in "
            f"{folder}, of batch size {tuple(saved)}: the batch sizes may differ in "
            f"their first dimension only"
        )
    if count is not None and new[0] != count:
        raise ValueError(
            f"append_memmap: the nested rows at {folder} have {new[0]} rows, not {count}"
        )
    count = new[0]
    entries = _disk.field_of(meta, "entries", list, folder)
    saved_keys = sorted(e.get("key") for e in entries)
    row_keys = sorted(rows._own_keys())
    if saved_keys != row_keys:
        raise ValueError(
            f"Cannot append rows with the keys {row_keys} to the saved tensordict, "
            f"which has the keys {saved_keys} ({folder})."
        )
    metas.append((folder, meta))
    meta["batch_size"] = [saved[0] + count, *saved[1:]]
    for entry in entries:
        key = entry["key"]
        value = rows._get_str(key, None)
        kind = entry.get("kind")
        if kind == "tensor":
            shape = _disk.check_shape(entry.get("shape"), folder, key)
            dtype = _disk._DTYPES.get(entry.get("dtype"))
            if (
                not isinstance(value, Tensor)
                or value.dtype != dtype
                or value.shape[1:] != shape[1:]
            ):
                described = (
                    f"of dtype {value.dtype} and shape {tuple(value.shape)}"
                    if isinstance(value, Tensor)
                    else f"of type {type(value).__name__}"
                )
                raise ValueError(
                    f"Cannot append rows {described} to the entry {key!r}, of dtype "
                    f"{dtype} and shape {tuple(shape)} ({folder})."
                )
            file = folder / _disk.check_name(entry.get("file"), folder, key)
            leaves.append((file, value))
            entry["shape"] = [shape[0] + count, *shape[1:]]
        elif kind == "nested":
            sub = folder / _disk.check_name(entry.get("dir"), folder, key)
            _plan_append(sub, value, kinds, allow_pickle, leaves, metas, count)
        elif kind == "value":
            stored = _disk.read_value(folder, entry, allow_pickle, key)
            given = _non_tensor_values(value, kinds)
            if given is None or any(item != stored for item in given):
                raise ValueError(
                    f"Cannot append rows whose non-tensor entry {key!r} differs from "
                    f"the saved value {stored!r} ({folder}): a non-tensor entry stays "
                    f"as saved"
                )
        else:
            raise ValueError(
                f"append_memmap: the entry {key!r} of {folder} ({kind}) cannot grow "
                f"(a NonTensorStack or a lazy stack cannot)"
            )


def _non_tensor_values(value, kinds):
    """The values of a non-tensor entry of the rows (one, or a stack's), or None."""
    if isinstance(value, Tensor):
        return None
    if kinds.is_non_tensor_stack(value):
        out, stack = [], [value.tolist()]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            else:
                out.append(item)
        return out
    if getattr(value, "_is_non_tensor", False):
        return [value.data]
    return [value]


def pickled_values(plan) -> dict:
    """Member name -> value, for the values ``plan`` pickles (its containers hold
    them): what loading an archive just written from ``plan`` gives back."""
    out = {}
    for folder in plan.folders:
        base = f"{folder.path}/" if folder.path else ""
        values = folder.meta.get("values")
        if isinstance(values, dict) and "pickle" in values:
            out[base + values["pickle"]] = folder.container.tolist()
        for entry in folder.meta.get("entries") or ():
            if "pickle" not in entry:
                continue
            value = folder.container._get_str(entry["key"], None)
            if entry["kind"] == "value_stack":
                value = value.tolist()
            elif getattr(value, "_is_non_tensor", False):
                value = value.data
            out[base + entry["pickle"]] = value
    return out
