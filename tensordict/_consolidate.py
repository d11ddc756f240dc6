"""Consolidation: every leaf of a tensordict packed into one contiguous storage.

``td.consolidate()`` copies the leaves into one ``uint8`` block (laid out by
:class:`tensordict._structure.Layout`) and returns a locked tensordict whose leaves are
views of it. Moving it is then one copy of the block: pickling (also through a
``torch.multiprocessing`` queue, which sends one shared-memory handle), the distributed
calls (``tensordict/_distributed.py``) and :meth:`ConsolidateMixin._moved_whole` move
the block and rebuild the views; the generated ``to``/``cpu``/``cuda`` try
``_moved_whole`` first (the ``shortcut`` of ``spec/device.yaml``), so moving a
consolidated tensordict to another device is one copy and its result is consolidated.

The block is kept on the consolidated container itself (the ``_consolidated`` slot of
``TensorDict`` and ``LazyStackedTensorDict``; a tensorclass keeps it on the tensordict
it wraps). :meth:`is_consolidated` checks that the leaves still are the block's views,
so a container whose entries were replaced since is not taken for consolidated.

``consolidate(filename=...)`` writes the block to a file, followed by the description
of the structure as JSON and its length; :func:`from_consolidated` maps the file back.
"""

from __future__ import annotations

import json
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
from torch import Tensor

from tensordict import _futures
from tensordict._disk import _pool
from tensordict._lock_graph import keep_lock
from tensordict._structure import (
    Layout,
    advise_huge_pages,
    build,
    canonical_order,
    describe,
    jagged_index,
    join_jagged,
    leaf_items,
    split_jagged,
)
from tensordict._transfer import staged_leaves
from tensordict.memmap import write_pieces

__all__ = [
    "ConsolidateMixin",
    "consolidated_memo",
    "consolidated_parts",
    "from_consolidated",
    "grow_storage",
    "headroom",
]

# Bytes a consolidated storage keeps free in front of its block (per leaf, plus a base,
# at most the cap): room for a transfer to write its header and the structure's
# signature there, so that sending the tensordict is one message straight from the
# storage, without copying the block (``tensordict/_distributed.py``). A few percent
# of the storage for leaves of a few KB; nothing travels or is saved from it but by
# such a transfer.
HEADROOM_BASE, HEADROOM_PER_LEAF, HEADROOM_MAX = 256, 48, 1 << 16

# Storages of this many bytes and more are asked for huge pages (advise_huge_pages):
# fewer page faults when the leaves are packed into them.
HUGE_PAGES_BYTES = 1 << 23

# The file written by consolidate(filename=...): the block, the JSON description, then
# this trailer: the description's length (little-endian uint64) and a magic string.
_MAGIC = b"TDCONS01"
_TRAILER = struct.Struct("<Q8s")


class _Storage:
    """What a consolidated container keeps (its ``_consolidated`` slot): the block,
    and, while the structure cannot have changed, what was derived from it.

    ``parts`` (the leaves in block order, their paths and layout) and ``memo`` (what
    higher layers derive from them: the distributed signature, ...) are kept only
    while the container stays locked: every structural change (a key set, deleted or
    replaced, anywhere in the tree) needs an unlock first, and every unlock of a
    ``TensorDict`` in this process bumps :data:`_UNLOCKS` (see
    :func:`note_unlock`), which drops every such cache at once. What
    the cache does not see is a leaf tensor changed behind the tensordict's back
    (``leaf.data = ...``, ``leaf.set_(...)``, resizing): the leaves are views of the
    block, which is what travels."""

    __slots__ = ("block", "parts", "memo", "epoch", "members", "retired")

    def __init__(self, block: Tensor) -> None:
        self.block = block
        self.parts = None
        self.memo = None
        self.epoch = -1
        # the memory the storage had before grow_storage moved it (see there)
        self.retired = None
        # the member lists of the lazy stacks in the tree, with their members when
        # cached: a list changed in place (``stack.tensordicts[0] = other``) needs no
        # unlock, so it is compared on every use
        self.members: tuple = ()

    def __getitem__(self, key: str) -> Tensor:
        # 0.15.3 kept a dict here; code reads td._consolidated["storage"] (the bytes
        # every leaf views: writing them writes the leaves)
        if key == "storage":
            return self.block
        raise KeyError(
            f"_consolidated[{key!r}]: a consolidated tensordict exposes only "
            f"'storage' (the uint8 block its leaves view)"
        )


# How many times a TensorDict was unlocked in this process: a cache made at another
# count may describe a structure that changed since.
_UNLOCKS = 0


def forget(td) -> None:
    """``td.unlock_()``: an unlocked tensordict is no longer consolidated (0.15.3):
    its structure may change, so it stops claiming one storage."""
    holder = _holder(td)
    if getattr(holder, "_consolidated", None) is not None:
        holder._consolidated = None


def note_unlock() -> None:
    """Called by ``TensorDictBase._set_lock`` on every unlock: drops every cache."""
    global _UNLOCKS
    _UNLOCKS += 1


def _holder(td):
    return td._tensordict if getattr(td, "_is_tensorclass", False) else td


def _cached(holder, storage: _Storage) -> bool:
    return (
        storage.epoch == _UNLOCKS
        and holder._is_locked
        and all(
            len(members) == len(saved) and all(a is b for a, b in zip(members, saved))
            for members, saved in storage.members
        )
    )


def _member_lists(td, out: list) -> list:
    """``(list, tuple of its members)`` for every lazy stack in ``td``'s tree."""
    members = getattr(td, "tensordicts", None)
    if isinstance(members, list):
        out.append((members, tuple(members)))
        children = members
    else:
        storage = getattr(td, "_tensordict", None)
        if type(storage) is dict:
            children = storage.values()
        elif storage is not None:  # a tensorclass: the tensordict it wraps
            children = (storage,)
        else:
            children = ()
    for child in children:
        if hasattr(child, "_is_non_tensor") and not child._is_non_tensor:
            _member_lists(child, out)
    return out


def consolidated_parts(td):
    """``(block, paths, leaves, layout)`` when ``td`` is consolidated (``leaves`` in
    block order); None otherwise. Cached while ``td`` stays locked (see
    :class:`_Storage`)."""
    holder = _holder(td)
    storage = getattr(holder, "_consolidated", None)
    if storage is None:
        return None
    if storage.parts is not None and _cached(holder, storage):
        return storage.parts
    block = storage.block
    items = leaf_items(td)
    paths = [p for p, _ in items]
    order = canonical_order(paths)
    leaves = [items[i][1] for i in order]
    if any(t.is_nested for t in leaves):
        # jagged nested tensors: their components are the block's views, they are
        # not (their shape has a ragged size): moved and pickled leaf by leaf
        return None
    layout = Layout.of(leaves)
    if not layout.holds(block, leaves):
        return None
    parts = block, [paths[i] for i in order], leaves, layout
    if holder._is_locked and leaves:
        storage.parts, storage.memo, storage.epoch = parts, {}, _UNLOCKS
        storage.members = tuple(_member_lists(td, []))
    return parts


def _jagged_consolidated_parts(td) -> tuple:
    """For a consolidated ``td`` holding jagged nested tensors (which
    :func:`consolidated_parts` leaves out): ``((block, paths, leaves, layout),
    spans)`` with ``layout`` that of their components (see ``split_jagged``), or
    ``(None, None)``. Pickling uses it: one block, as for any consolidated
    tensordict (the components of several dtypes view the same bytes, which torch
    cannot pickle one by one)."""
    storage = getattr(_holder(td), "_consolidated", None)
    if storage is None:
        return None, None
    items = leaf_items(td)
    paths = [p for p, _ in items]
    order = canonical_order(paths)
    leaves = [items[i][1] for i in order]
    flat, spans = split_jagged(leaves)
    if spans is None:
        return None, None
    layout = Layout.of(flat)
    if not layout.holds(storage.block, flat):
        return None, None
    return (storage.block, [paths[i] for i in order], leaves, layout), spans


def consolidated_memo(td) -> dict | None:
    """A dict for what callers derive from a consolidated ``td``'s structure, kept as
    long as :func:`consolidated_parts` is cached (None when it is not: ``td`` is not
    consolidated, or not locked)."""
    holder = _holder(td)
    storage = getattr(holder, "_consolidated", None)
    if storage is None:
        return None
    if storage.parts is None or not _cached(holder, storage):
        consolidated_parts(td)
        if storage.parts is None or not _cached(holder, storage):
            return None
    return storage.memo


def headroom(n_leaves: int) -> int:
    """The room a consolidated storage of ``n_leaves`` keeps in front of its block."""
    return min(HEADROOM_BASE + HEADROOM_PER_LEAF * n_leaves, HEADROOM_MAX)


def grow_storage(td, nbytes: int) -> bool:
    """Make the storage of a consolidated ``td`` at least ``nbytes`` long (the leaves,
    views of it, follow); whether it is. Only a CPU storage of this process's own
    memory can grow: one in shared memory, pinned, mapped from a file, or viewed by a
    NumPy array (torch then marks it not resizable) is left as it is (False). Growing
    moves the storage's memory once; a raw pointer into the old memory (a DLPack
    capsule of a leaf, a ``data_ptr()`` kept by C code) does not follow, so that
    memory stays allocated as long as ``td``'s block (never freed under such a
    pointer), but no longer holds the leaves' values. The distributed receive grows a
    storage once (``tensordict/_distributed.py``)."""
    holder_storage = getattr(_holder(td), "_consolidated", None)
    if holder_storage is None:
        return False
    storage = holder_storage.block.untyped_storage()
    if storage.nbytes() >= nbytes:
        return True
    if (
        storage.device.type != "cpu"
        or not storage.resizable()
        or storage.is_shared()
        or storage.is_pinned()
        # no public call moves a storage's memory while keeping the old memory
        # alive: ``resize_`` frees it (under a DLPack capsule), ``Tensor.set_`` moves
        # one view, not the others; without this one the storage is not grown
        or not hasattr(storage, "_swap_data_ptr_")
    ):
        return False
    # the old memory goes to ``retired`` (kept), the storage gets fresh memory of the
    # same size, takes the bytes, and grows (which frees only the fresh memory)
    retired = torch.UntypedStorage(storage.nbytes())
    storage._swap_data_ptr_(retired)
    storage.copy_(retired)
    storage.resize_(nbytes)
    if holder_storage.retired is None:
        holder_storage.retired = []
    holder_storage.retired.append(retired)
    return True


def _set_block(td, block: Tensor) -> None:
    _holder(td)._consolidated = _Storage(block)


def _rebuild_consolidated(block: Tensor, tree_json: str, locked: bool):
    """Unpickling a consolidated tensordict: the block and its description."""
    tree = json.loads(tree_json)
    return _from_block(block, tree["tree"], tree["leaves"], locked=locked)


def _dtype(name: str) -> torch.dtype:
    """The torch dtype called ``name`` (descriptions may come from untrusted files)."""
    dtype = getattr(torch, name, None) if isinstance(name, str) else None
    if not isinstance(dtype, torch.dtype):
        raise ValueError(
            f"a consolidated description names {name!r}, not a torch dtype"
        )
    return dtype


# Unpickling a consolidated tensordict builds it from a tensor and a JSON description,
# without running code from the file: safe for torch.load(weights_only=True).
torch.serialization.add_safe_globals([_rebuild_consolidated])


def _from_block(
    block: Tensor, tree: dict, leaf_specs: list, *, locked: bool, set_device=False
):
    """A consolidated container over ``block`` from its description (recorded devices
    become the block's; ``set_device``: every level's)."""
    dtypes = [_dtype(d) for d, _ in leaf_specs]
    shapes = [torch.Size(s) for _, s in leaf_specs]
    layout = Layout(dtypes, shapes)
    if block.numel() < layout.nbytes:
        raise ValueError(
            f"the consolidated block holds {block.numel()} bytes but its description "
            f"needs {layout.nbytes}"
        )
    leaves = layout.views(block)
    td = build(tree, leaves, block.device, set_device=set_device)
    _set_block(td, block)
    if locked:
        td.lock_()
    return td


def description(td, paths: list, leaves: list, spans: list | None = None) -> dict:
    """What rebuilds ``td`` around its block: the container tree and the dtypes and
    shapes of what the block holds, in block order (JSON-able); ``spans`` from
    :func:`split_jagged` when ``leaves`` has jagged nested tensors."""
    flat = leaves if spans is None else split_jagged(leaves)[0]
    return {
        "tree": describe(td, jagged_index(leaves, spans)),
        "leaves": [[str(t.dtype)[6:], list(t.shape)] for t in flat],
    }


class ConsolidateMixin:
    """``consolidate``, ``is_consolidated``, ``from_consolidated``, and the one-block
    pickling and moving (:meth:`_moved_whole`) of a consolidated container."""

    __slots__ = ()

    def consolidate(
        self,
        filename: str | Path | None = None,
        *,
        num_threads: int = 0,
        device=None,
        non_blocking: bool = False,
        inplace: bool = False,
        return_early: bool = False,
        use_buffer: bool = False,
        share_memory: bool = False,
        pin_memory: bool = False,
        metadata: bool = False,
    ):
        """Copy every leaf into one contiguous storage; return a locked tensordict of
        views of it (``self`` with ``inplace=True``; a ``Future`` of it with
        ``return_early=True`` and ``num_threads > 1``).

        Moving the result to a device, to another process or to another machine is
        one copy of the storage. ``filename`` backs the storage with that file (the
        structure is written after the data, for :func:`from_consolidated`);
        ``share_memory`` and ``pin_memory`` place it in shared or pinned memory;
        ``device`` chooses its device (the tensordict's, or the CPU, by default). An
        already consolidated tensordict is returned as it is unless ``filename``,
        ``device``, ``share_memory`` or ``pin_memory`` ask for another storage.
        ``num_threads > 1`` spreads the copies over that many threads (kept for the
        next call). ``metadata`` is accepted for compatibility: the structure is always
        known.

        >>> td = TensorDict(a=torch.zeros(3), b={"c": torch.ones(3)}, batch_size=[3])
        >>> c = td.consolidate()
        >>> c.is_consolidated(), c.is_locked, td.is_consolidated()
        (True, True, False)
        >>> c["b", "c"].untyped_storage().data_ptr() == c["a"].untyped_storage().data_ptr()
        True
        """
        if return_early and num_threads > 1:
            for name, value in (("use_buffer", use_buffer), ("non_blocking", non_blocking)):
                if value:
                    raise NotImplementedError(
                        f"consolidate(return_early=True) does not take {name}=True "
                        f"(as in 0.15.3): the background copy is synchronous; pass "
                        f"one or the other"
                    )
            pool = ThreadPoolExecutor(max_workers=1)
            future = _futures.submit(
                pool,
                lambda: self.consolidate(
                    filename,
                    num_threads=num_threads,
                    device=device,
                    inplace=inplace,
                    share_memory=share_memory,
                    pin_memory=pin_memory,
                ),
            )
            pool.shutdown(wait=False)
            return future
        parts = consolidated_parts(self)
        if parts is not None and filename is None:
            block = parts[0]
            same_device = device is None or torch.device(device) == block.device
            if (
                same_device
                and (not share_memory or block.is_shared())
                and (not pin_memory or block.is_pinned())
            ):
                return self
        items = leaf_items(self)
        paths = [p for p, _ in items]
        order = canonical_order(paths)
        leaves = [items[i][1] for i in order]
        # jagged nested tensors: the block holds their components (values, offsets)
        flat, spans = split_jagged(leaves)
        layout = Layout.of(flat)
        if device is None:
            device = self.device if self.device is not None else _common_device(leaves)
        device = torch.device(device)
        if filename is not None:
            if device.type != "cpu":
                # the file holds the bytes (on the host); the result is their copy on
                # ``device``, moved in one copy, as 0.15.3 gives
                if inplace:
                    raise ValueError(
                        f"consolidate(filename={str(filename)!r}, device={device}, "
                        "inplace=True): a file-backed storage lives on the CPU; "
                        "consolidate in place on the CPU, then move the result"
                    )
                on_host = self.consolidate(
                    filename, num_threads=num_threads, device="cpu"
                )
                return on_host.to(device, non_blocking=non_blocking)
            desc = description(self, [paths[i] for i in order], leaves, spans)
            block = _write_file(
                Path(filename), layout, flat, desc, *_copy_threads(num_threads)
            )
        else:
            room = headroom(len(leaves))
            storage = torch.empty(
                room + layout.nbytes, dtype=torch.uint8, device=device
            )
            if share_memory:
                storage.share_memory_()
            if pin_memory:
                storage = storage.pin_memory()
            if layout.nbytes >= HUGE_PAGES_BYTES and not (share_memory or pin_memory):
                advise_huge_pages(storage)
            block = storage[room:]
            layout.pack(flat, block, *_copy_threads(num_threads))
            layout.zero_padding(block)
        views = join_jagged(layout.views(block), spans)
        in_order = [None] * len(views)
        for pos, i in enumerate(order):
            in_order[i] = views[pos]
        own_leaves, rebuild = self._leaves_and_rebuild()
        if len(own_leaves) != len(in_order):  # a walk disagreement: never silent
            raise RuntimeError(
                f"consolidate: found {len(in_order)} leaves by key but "
                f"{len(own_leaves)} by walk"
            )
        if (self.device is not None or filename is not None) and self.device != device:
            # a file-backed storage is on the CPU, so the result is (as in 0.15.3)
            result = rebuild(in_order, device=device)
        else:
            result = rebuild(in_order)
        _set_block(result, block)
        if inplace:
            was_locked = self.is_locked
            if was_locked:
                self.unlock_()
            target = (
                self._tensordict if getattr(self, "_is_tensorclass", False) else self
            )
            source = (
                result._tensordict
                if getattr(result, "_is_tensorclass", False)
                else result
            )
            target._replace_contents(source)
            _set_block(self, block)
            return self.lock_()
        return result.lock_()

    def is_consolidated(self) -> bool:
        """Whether every leaf is a view of one storage made by :meth:`consolidate`
        (in-place writes keep it so; replacing an entry does not).

        >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(3))
        >>> td.is_consolidated(), td.consolidate().is_consolidated()
        (False, True)
        """
        if consolidated_parts(self) is not None:
            return True
        # jagged nested tensors: their components are the block's views
        return _jagged_consolidated_parts(self)[0] is not None

    @classmethod
    def from_consolidated(cls, filename):
        """The tensordict written by ``consolidate(filename=...)``; its leaves are
        views of a private (copy-on-write) map of the file.

        >>> c = TensorDict(a=torch.arange(3)).consolidate(filename="td.bin")
        >>> TensorDict.from_consolidated("td.bin")["a"].tolist()
        [0, 1, 2]
        """
        return from_consolidated(filename)

    def _moved_whole(self, device, dtype=None, non_blocking: bool = False):
        """The ``shortcut`` of the generated ``to``: this tensordict on ``device`` in
        few copies, or None when ``dtype`` casts or no shortcut applies (then ``to``
        goes leaf by leaf). A consolidated tensordict moves as one copy of its storage
        (and stays consolidated); between the host and a GPU, the small leaves of any
        other move as one block (``tensordict/_transfer.py``)."""
        if device is None or dtype is not None:
            return None
        device = torch.device(device)
        parts = consolidated_parts(self)
        if parts is None:
            if device.type != "cuda" and not torch.cuda.is_initialized():
                return None  # no leaf can be on a GPU: nothing to stage (no walk)
            leaves, rebuild = self._leaves_and_rebuild()
            moved = staged_leaves(leaves, device, non_blocking)
            if moved is None:
                return None
            return keep_lock(self, rebuild(moved, device=device))
        block, paths, leaves, layout = parts
        new_block = block.to(device, non_blocking=non_blocking)
        own_leaves, rebuild = self._leaves_and_rebuild()
        if len(own_leaves) == len(leaves):  # the same views, cut from the new block
            position = {id(leaf): i for i, leaf in enumerate(leaves)}
            views = layout.views(new_block)
            try:
                moved = [views[position[id(leaf)]] for leaf in own_leaves]
            except KeyError:  # a walk disagreement: rebuild from the description
                moved = None
            if moved is not None:
                result = rebuild(moved, device=device)
                _set_block(result, new_block)
                return result.lock_() if self.is_locked else result
        desc = description(self, paths, leaves)
        return _from_block(
            new_block,
            desc["tree"],
            desc["leaves"],
            locked=self.is_locked,
            set_device=True,
        )

    def __reduce_ex__(self, protocol):
        parts = consolidated_parts(self)
        spans = None
        if parts is None:
            parts, spans = _jagged_consolidated_parts(self)
        if parts is None:
            return super().__reduce_ex__(protocol)
        block, paths, leaves, layout = parts
        desc = description(self, paths, leaves, spans)
        if block.numel() != layout.nbytes:
            block = block[: layout.nbytes]
        return _rebuild_consolidated, (block, json.dumps(desc), bool(self.is_locked))


def _copy_threads(num_threads: int) -> tuple:
    """``(pool, n)``: the threads ``consolidate(num_threads=n)`` packs with (n > 1),
    kept for the life of the process; ``(None, 1)``: the caller's thread packs."""
    if num_threads and num_threads > 1:
        return _pool("consolidate", num_threads), num_threads
    return None, 1


def _common_device(leaves: list) -> torch.device:
    devices = {t.device for t in leaves}
    return devices.pop() if len(devices) == 1 else torch.device("cpu")


def _write_file(
    path: Path, layout: "Layout", leaves: list, desc: dict, pool=None, pieces: int = 1
) -> Tensor:
    """Write the packed leaves + description + trailer to ``path`` and return the block
    mapped from the file (shared: in-place writes into the leaves reach the file).

    The bytes go to a temporary file that is then renamed into place, so a writer
    killed midway leaves ``path`` as it was. CPU leaves are written with ``write``
    straight from their memory, in block order, in pieces (``write_pieces``, whose size
    adapts to the memory the kernel has at hand: the kernel copies them into the page
    cache once, into folios of the piece's size); packing them
    into a fresh map of the file costs a page fault per 4 KiB page, about twice the CPU
    time (see ``docs/distributed.md``). Other leaves are packed into the map (with
    ``pool``'s threads when given). As for ``memmap_`` (docs/persistence.md), nothing
    is synced to the disk.
    """
    meta = json.dumps(desc).encode()
    tmp = path.with_name(path.name + ".tmp")
    written = all(t.device.type == "cpu" for t in leaves)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if written:
            _write_packed(fd, layout, leaves)
        else:
            os.ftruncate(fd, layout.nbytes)
            os.lseek(fd, layout.nbytes, os.SEEK_SET)
        tail = meta + _TRAILER.pack(len(meta), _MAGIC)
        write_pieces(fd, memoryview(tail), layout.nbytes)
    finally:
        os.close(fd)
    if layout.nbytes:
        block = torch.from_file(
            str(tmp), shared=True, size=layout.nbytes, dtype=torch.uint8
        )
        if not written:
            layout.pack(leaves, block, pool, pieces)
    else:
        block = torch.empty(0, dtype=torch.uint8)
    os.replace(tmp, path)
    return block


def _write_packed(fd: int, layout: "Layout", leaves: list) -> None:
    """Write the CPU ``leaves`` (canonical order) to ``fd`` at their ``layout``
    offsets, zeros between dtype groups: the block's bytes without building the
    block."""
    position = 0
    for offset, pos in sorted(zip(layout.offsets, range(len(leaves)))):
        if offset > position:
            write_pieces(fd, memoryview(bytes(offset - position)), position)
        data = _leaf_bytes(leaves[pos])
        write_pieces(fd, data, offset)
        position = offset + data.nbytes
    if layout.nbytes > position:
        write_pieces(fd, memoryview(bytes(layout.nbytes - position)), position)


def _leaf_bytes(leaf: Tensor) -> memoryview:
    """A CPU leaf's bytes in row-major order (copied only when it is not contiguous
    or carries a lazy conjugate or negative bit)."""
    flat = leaf.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
    if flat.numel() == 1 and flat.stride(0) != 1:
        # one element counts as contiguous whatever its stride (a row unbound from
        # a wider tensor), but a dtype view needs stride 1
        flat = flat.as_strided((1,), (1,))
    return memoryview(flat.view(torch.uint8).numpy())


def from_consolidated(filename):
    """Read a file written by ``consolidate(filename=...)``: a consolidated, unlocked
    tensordict whose leaves are views of a private map of the file (writes into them
    do not reach the file).

    >>> import tempfile, os
    >>> td = TensorDict(a=torch.zeros(3), b={"c": torch.ones(3)}, batch_size=[3])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = td.consolidate(filename=os.path.join(d, "td.bin"))
    ...     loaded = from_consolidated(os.path.join(d, "td.bin"))
    ...     print(loaded["b", "c"], loaded.is_consolidated())
    tensor([1., 1., 1.]) True
    """
    path = str(filename)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size < _TRAILER.size:
            raise ValueError(
                f"{path!r} is not a consolidated tensordict file (too short)"
            )
        f.seek(size - _TRAILER.size)
        meta_len, magic = _TRAILER.unpack(f.read(_TRAILER.size))
        if magic != _MAGIC or meta_len > size - _TRAILER.size:
            raise ValueError(
                f"{path!r} is not a consolidated tensordict file: it does not end with "
                f"the trailer consolidate(filename=...) writes"
            )
        data_len = size - _TRAILER.size - meta_len
        f.seek(data_len)
        desc = json.loads(f.read(meta_len))
    if data_len:
        block = torch.from_file(path, shared=False, size=data_len, dtype=torch.uint8)
    else:
        block = torch.empty(0, dtype=torch.uint8)
    return _from_block(block, desc["tree"], desc["leaves"], locked=False)
