"""Moving tensordicts between processes with ``torch.distributed`` (gloo, NCCL, ...).

A transfer moves the leaves as few messages as it can: small leaves packed into one
block (``tensordict._structure.Layout``: leaves in key order, grouped by dtype), large
ones (``LARGE_LEAF_BYTES`` and more) each straight from and into their own memory, so
that nothing big is copied. A consolidated tensordict (``tensordict/_consolidate.py``)
*is* such a block and moves as one message: its header and signature are written in the
room ``consolidate`` leaves in front of the block, so the sender does not copy it.

Point to point (``send``/``recv``/``isend``/``irecv``), the sender first sends a header
(64 bytes: a format mark, a fingerprint of the structure, sizes) followed by the
signature (JSON: path, dtype and shape of every leaf, about 35 bytes per leaf) in one
message, then the data. The receiver posts a ``FIRST_MESSAGE_BYTES`` buffer for that
first message (a shorter message is fine for every backend; a longer one would abort
the process), compares the fingerprint with its own, and only then posts the receives
of the data, sized from its own leaves. On a mismatch it receives the data into scratch
buffers sized from the sender's signature (so the sender is never left blocked), then
raises an error naming the first key that differs; nothing is written. The check costs
one small message and a signature + hash on each side (see ``docs/distributed.md``).

Collectives that need the same structure on every rank (``all_reduce``, ``reduce``,
``gather_and_stack``) first all-gather each rank's fingerprint (one small collective)
and raise, naming the key, on every rank when they differ. Collectives that build new
tensordicts (``broadcast``, ``all_gather``, ``scatter``, ``init_remote`` /
``from_remote_init``) send the structure as JSON beside the block: nothing is pickled.
A tensordict memory-mapped in a folder goes with ``send``/``isend``, ``init_remote``,
``broadcast``, ``all_gather``, ``scatter`` and ``gather_and_stack`` as its folder's
path (plus the signature and a stamp of the folder's ``meta.json`` that tells it from a
same-named folder elsewhere) instead of its data: a shared filesystem is assumed;
``as_path=False`` sends the data. ``all_reduce``/``reduce`` combine the values, so
their data always moves.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import random
import weakref

import torch
import torch.distributed as dist
from torch import Tensor

from tensordict._consolidate import (
    _from_block,
    consolidated_memo,
    consolidated_parts,
    description,
    grow_storage,
    headroom,
)
from tensordict._disk import META
from tensordict._registry import container_class
from tensordict._structure import (
    _ALIGN,
    Layout,
    aligned,
    canonical_order,
    copy_bytes,
    first_difference,
    fingerprint,
    leaf_items,
    signature,
)

__all__ = ["DistributedMixin", "FIRST_MESSAGE_BYTES", "LARGE_LEAF_BYTES"]

#: The buffer a receiver posts for the first message: the header, the signature and,
#: when they fit with them, the data (a longer stream: a second message).
FIRST_MESSAGE_BYTES = 1 << 20
#: Leaves of this many bytes and more travel as messages of their own, not packed.
LARGE_LEAF_BYTES = 1 << 17
_HEADER_BYTES = 64
_MAGIC = 0x54444431  # "TDD1": this stream format
_MAGIC_PATH = 0x54445031  # "TDP1": a memory-mapped tensordict sent as its folder
# how the data travels: one consolidated block / packed small leaves + large leaves /
# not at all (a memory-mapped tensordict sent as its folder: the receiver reads the files)
_WHOLE, _SPLIT, _PATH = 1, 2, 3


# ----------------------------------------------------------------------------- plan
class _Plan:
    """What one side knows of its tensordict before moving it: the leaves in key
    order, their signature, the consolidated block (if the leaves are its views), and
    which leaves are packed (``small``) or travel on their own (``large``).

    :meth:`of` keeps the plan of a consolidated tensordict beside its block (as long
    as its structure cannot have changed, see ``tensordict/_consolidate.py``), so a
    repeated transfer of it costs no walk, signature or hash."""

    __slots__ = (
        "leaves",
        "layout",
        "sig",
        "fp",
        "block",
        "small",
        "large",
        "_small_layout",
        "_whole_stream",
        "_spare_inline",
        "_in_headroom",
        "_whole_header",
        "_landing",
        "_landing_busy",
    )

    @classmethod
    def of(cls, td) -> "_Plan":
        plan = cls.kept(td)
        return cls(td) if plan is None else plan

    @classmethod
    def kept(cls, td) -> "_Plan | None":
        """The plan kept beside a consolidated ``td``'s block (made on first use);
        None when ``td`` cannot keep one (not consolidated, or not locked)."""
        memo = consolidated_memo(td)
        if memo is None:
            return None
        plan = memo.get("plan")
        if plan is None:
            plan = memo["plan"] = cls(td)
        return plan

    def __init__(self, td) -> None:
        parts = consolidated_parts(td)
        if parts is not None:
            block, paths, leaves, layout = parts
        else:
            items = leaf_items(td)
            paths = [p for p, _ in items]
            order = canonical_order(paths)
            paths = [paths[i] for i in order]
            leaves = [items[i][1] for i in order]
            layout = None
            block = None
        self.leaves = leaves
        self.layout = layout
        self.sig = signature(paths, leaves)
        self.fp = fingerprint(self.sig)
        self.block = block
        self.small, self.large = _split_by_size(
            [(t.dtype.itemsize, t.numel()) for t in leaves]
        )
        self._small_layout = None
        self._whole_stream = None
        self._spare_inline = None  # a first message with the block inline, to reuse
        self._in_headroom = None  # the block with the header in front (see below)
        self._whole_header = None  # what a consolidated sender's header says
        self._landing = None  # where a first message lands in the storage (below)
        self._landing_busy = False  # a receive in flight uses it

    @property
    def data_offset(self) -> int:
        """Where data sent inline starts in a first message: after the header and
        the signature, aligned."""
        return aligned(_HEADER_BYTES + len(self.sig))

    def whole_header(self) -> list:
        """The eight integers a consolidated sender of this structure writes when its
        block rides in the first message (made once per plan)."""
        if self._whole_header is None:
            self._whole_header = [
                _MAGIC,
                self.fp,
                len(self.sig),
                _WHOLE,
                self.full_layout.nbytes,
                0,
                0,
                self.data_offset,
            ]
        return self._whole_header

    def in_headroom(self, device) -> Tensor | None:
        """The consolidated block with the header and signature written in the room
        ``consolidate`` leaves in front of it: the whole transfer as one message, sent
        straight from the storage without a copy. None when the room is too small (a
        long signature; a block mapped from a file has none) or the whole would not
        fit the receiver's first message. Written once per plan (the header depends
        only on the structure)."""
        if self._in_headroom is None:
            self._in_headroom = False
            block, nbytes = self.block, self.full_layout.nbytes
            head, offset = _HEADER_BYTES + len(self.sig), self.data_offset
            start = block.storage_offset() - offset
            if start >= 0 and offset + nbytes <= FIRST_MESSAGE_BYTES:
                message = block.new_empty(0).set_(
                    block.untyped_storage(), start, (offset + nbytes,)
                )
                message[:head].copy_(_header(self, _WHOLE, nbytes, 0, b"", offset))
                self._in_headroom = message
        message = self._in_headroom
        if message is False or message.device != device:
            return None
        return message

    def landing(self, td) -> tuple | None:
        """For a receiver whose leaves are a consolidated CPU block that fits the first
        message with its header: ``(region, header, expected)``, the
        ``FIRST_MESSAGE_BYTES`` of its own storage that start where a consolidated
        sender of this structure puts its header (so that its block lands exactly on
        ours: nothing to copy), a view of the eight integers of the header there, and
        what they are for such a sender. The storage grows once to hold the region
        (``grow_storage``: not for shared, pinned or file-mapped storages, nor one a
        NumPy array views); None when it cannot, or while another receive uses it."""
        if self._landing is None:
            self._landing = False
            block = self.block
            if block is not None and block.device.type == "cpu":
                nbytes, offset = self.full_layout.nbytes, self.data_offset
                start = block.storage_offset() - offset
                if (
                    start >= 0
                    and offset + nbytes <= FIRST_MESSAGE_BYTES
                    and grow_storage(td, start + FIRST_MESSAGE_BYTES)
                ):
                    region = block.new_empty(0).set_(
                        block.untyped_storage(), start, (FIRST_MESSAGE_BYTES,)
                    )
                    self._landing = (
                        region,
                        region[:_HEADER_BYTES].view(torch.int64),
                        self.whole_header(),
                    )
        if self._landing is False or self._landing_busy:
            return None
        return self._landing

    def whole_inline(self, first: Tensor) -> tuple | None:
        """For a receiver whose leaves are a consolidated block on ``first``'s device
        (the CPU): ``(header, start, nbytes)``, the header a consolidated sender of
        this structure writes when its block rides in the first message, and where
        the block then is in ``first`` (``nbytes`` from address ``start``: ``first`` is
        the receiver's own buffer). None otherwise. Worked out while the first message
        travels, so that once it is in, the check is one comparison of eight integers
        and the rest is one copy into the block."""
        block = self.block
        if block is None or block.device.type != "cpu" or first.device.type != "cpu":
            return None
        header = self.whole_header()
        offset, nbytes = header[7], header[4]
        if offset + nbytes > first.numel():
            return None
        return header, first.data_ptr() + offset, nbytes

    def split_inline(self, first: Tensor) -> tuple | None:
        """For a receiver whose leaves are not a consolidated block, when a sender of
        its structure sends them packed in the first message: ``(header, leaves,
        views)``, the header such a sender writes, the packed leaves and their views
        in ``first`` (the receiver's own buffer). None otherwise (a consolidated
        receiver, leaves of ``LARGE_LEAF_BYTES`` or more, or too many bytes)."""
        if self.block is not None or self.large:
            return None
        nbytes = self.small_layout.nbytes
        if not _fits_inline(self, nbytes) or not nbytes:
            return None
        offset = self.data_offset
        header = [_MAGIC, self.fp, len(self.sig), _SPLIT, nbytes, 0, 0, offset]
        views = self.small_layout.views(first[offset : offset + nbytes])
        return header, [self.leaves[i] for i in self.small], views

    def whole_stream(self) -> Tensor:
        """The header and signature that precede a consolidated block (CPU; made
        once per plan)."""
        if self._whole_stream is None:
            nbytes = self.full_layout.nbytes
            self._whole_stream = _stream(self, _WHOLE, nbytes, 0, b"")
        return self._whole_stream

    @property
    def full_layout(self) -> Layout:
        if self.layout is None:
            self.layout = Layout.of(self.leaves)
        return self.layout

    @property
    def small_layout(self) -> Layout:
        if self._small_layout is None:
            self._small_layout = Layout.of([self.leaves[i] for i in self.small])
        return self._small_layout

    def packed(self, device=None) -> Tensor:
        """Every leaf in one block: the consolidated storage, or a new packed one."""
        layout = self.full_layout
        if self.block is not None and (device is None or self.block.device == device):
            return self.block[: layout.nbytes]
        block = torch.empty(layout.nbytes, dtype=torch.uint8, device=device)
        layout.pack(self.leaves, block)
        return block


def _split_by_size(sizes: list) -> tuple[list, list]:
    """Positions of the leaves packed together and of those sent on their own."""
    small, large = [], []
    for pos, (itemsize, numel) in enumerate(sizes):
        (large if itemsize * numel >= LARGE_LEAF_BYTES else small).append(pos)
    return small, large


def _sizes_from_signature(sig: bytes) -> list:
    return [
        (getattr(torch, dtype).itemsize, torch.Size(shape).numel())
        for _, dtype, shape in json.loads(sig)
    ]


def _tags(init_tag: int, pseudo_rand: bool, count: int) -> list[int]:
    """The tags of one transfer: ``init_tag, init_tag + 1, ...`` or, with
    ``pseudo_rand``, numbers drawn from a generator seeded by ``init_tag``."""
    if pseudo_rand:
        rng = random.Random(init_tag)
        return [rng.randrange(1, 1 << 24) for _ in range(count)]
    return range(init_tag, init_tag + count)


class _Peer:
    """The other side of a point-to-point transfer: its process group, its rank in
    that group and the device messages travel on, resolved once per call. Each message
    is then posted with one call into the process group (what ``dist.isend``/``irecv``
    do after resolving the group and the rank again for every message: a few µs per
    message in a loop, several times that between two busy ranks)."""

    __slots__ = ("pg", "rank", "device", "_given")

    def __init__(self, name: str, rank, group_rank, group) -> None:
        self._given = rank, group_rank
        if group is None and group_rank is None and rank is not None:
            # the common case in as few steps as it takes: the default group, known
            # to travel on the CPU
            pg = dist.group.WORLD
            if pg is not None and _cpu_world() is pg:
                self.pg, self.rank, self.device = pg, rank, _CPU
                return
        if (rank is None) == (group_rank is None):
            raise ValueError(
                f"pass exactly one of {name} and group_{name} (got {name}={rank!r}, "
                f"group_{name}={group_rank!r})"
            )
        if group_rank is not None and group is None:
            raise ValueError(f"group_{name} needs the group it is a rank of")
        if group is None:
            group = dist.group.WORLD
            if group is None:
                raise RuntimeError(
                    "the default process group is not initialized: call "
                    "torch.distributed.init_process_group first"
                )
        elif group is dist.GroupMember.NON_GROUP_MEMBER:
            raise ValueError(
                f"this process is not a member of the group it would {name!r} with"
            )
        elif group_rank is None:
            group_rank = dist.get_group_rank(group, rank)
        self.pg = group
        self.rank = rank if group_rank is None else group_rank
        self.device = _comm_device(group)

    @property
    def label(self) -> str:
        """The peer as an error message names it."""
        rank, group_rank = self._given
        return f"rank {rank}" if rank is not None else f"rank {group_rank} of the group"

    def isend(self, tensor: Tensor, tag: int):
        if tensor.is_complex():
            tensor = torch.view_as_real(tensor)
        return _pg_send(self.pg, tensor, self.rank, tag)

    def irecv(self, tensor: Tensor, tag: int):
        if tensor.is_complex():
            tensor = torch.view_as_real(tensor)
        return _pg_recv(self.pg, tensor, self.rank, tag)


def _pg_send(pg, tensor: Tensor, rank: int, tag: int):
    """Post one message on a process group: every point-to-point message of this
    module goes through here or :func:`_pg_recv` (which the benchmark scripts time)."""
    return pg.send([tensor], rank, tag)


def _pg_recv(pg, tensor: Tensor, rank: int, tag: int):
    """Post one receive on a process group (see :func:`_pg_send`)."""
    return pg.recv([tensor], rank, tag)


def _comm_device(group) -> torch.device:
    """The device small control tensors travel on: CUDA for NCCL, else the CPU
    (remembered per process group when it is the CPU: every transfer asks)."""
    pg = dist.group.WORLD if group is None else group
    if pg is not None and pg in _CPU_GROUPS:
        return _CPU
    try:
        backend = dist.get_backend(group)
    except (RuntimeError, ValueError):
        backend = None
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    if backend is not None and pg is not None:
        _CPU_GROUPS.add(pg)
        if pg is dist.group.WORLD:
            global _CPU_WORLD
            _CPU_WORLD = weakref.ref(pg)
    return _CPU


def _cpu_world():
    """The default process group when it is known to travel on the CPU, else None."""
    return None if _CPU_WORLD is None else _CPU_WORLD()


_CPU = torch.device("cpu")
# process groups whose messages travel on the CPU (gloo, mpi, ...); weak references:
# a group kept alive here past destroy_process_group would abort the process at exit
# (its threads never joined)
_CPU_GROUPS: weakref.WeakSet = weakref.WeakSet()
# the default group among them (weakly), for the common case's one identity check
_CPU_WORLD: weakref.ref | None = None


# ----------------------------------------------------------------------------- p2p
def _stream(
    plan: _Plan,
    mode: int,
    nbytes: int,
    n_large: int,
    extra: bytes,
    *,
    inline: bool = False,
    device=None,
) -> Tensor:
    """The first bytes of a transfer: the header, the signature, then ``extra`` (a
    folder's description); with ``inline``, room for the ``nbytes`` of data after
    them (at an aligned offset, which the header gives), for the caller to fill."""
    head = _HEADER_BYTES + len(plan.sig) + len(extra)
    offset = aligned(head) if inline else 0
    stream = torch.empty(offset + nbytes if inline else head, dtype=torch.uint8)
    stream[:head] = _header(plan, mode, nbytes, n_large, extra, offset)
    return stream if device is None else stream.to(device)


def _header(plan: _Plan, mode: int, nbytes: int, n_large: int, extra: bytes, offset):
    """The header (eight int64: format mark, fingerprint, signature length, mode,
    data bytes, large leaves, ``extra`` length, offset of inline data or 0), the
    signature and ``extra``, as bytes (CPU)."""
    sig = plan.sig
    header = torch.tensor(
        [_MAGIC, plan.fp, len(sig), mode, nbytes, n_large, len(extra), offset],
        dtype=torch.int64,
    )
    return torch.cat(
        [
            header.view(torch.uint8),
            torch.frombuffer(bytearray(sig + extra), dtype=torch.uint8),
        ]
    )


def _fits_inline(plan: _Plan, nbytes: int) -> bool:
    """Whether the data can ride in the first message, after header and signature."""
    return _HEADER_BYTES + len(plan.sig) + _ALIGN + nbytes <= FIRST_MESSAGE_BYTES


def _post_send(td, peer: _Peer, init_tag: int, pseudo_rand: bool, folder, plan=None):
    """Post every message of one transfer; ``(works, last tag used, release)``:
    ``release()`` may be called once the works are done (buffers to reuse).
    ``folder``: the folder ``td`` travels as (:func:`_folder_of`), or None; ``plan``:
    ``td``'s plan when the caller has it."""
    if plan is None:
        plan = _Plan.of(td)
    device = peer.device
    if folder is None and plan.block is not None:
        # the common case first, with as few steps as it takes (each Python step
        # costs several times its time in a loop between two busy ranks): one
        # message straight from the storage, the header in front of the block
        message = plan.in_headroom(device)
        if message is not None:
            tags = _tags(init_tag, pseudo_rand, 3)
            return [peer.isend(message, tags[0])], tags[-1], _nothing
    large = []
    packed = None
    release = _nothing
    if folder is not None:  # the folder's path: no data on the wire
        stream = _stream(plan, _PATH, 0, 0, _folder_description(folder))
    elif plan.block is not None:
        nbytes = plan.full_layout.nbytes
        # one message straight from the storage (the header in front of the block)
        stream = plan.in_headroom(device)
        if stream is None and _fits_inline(plan, nbytes):
            # one message: header, signature, a copy of the block; a consolidated
            # plan keeps it (header and signature written once) for the next send
            stream, plan._spare_inline = plan._spare_inline, None
            if stream is None or stream.device != device:
                stream = _stream(
                    plan, _WHOLE, nbytes, 0, b"", inline=True, device=device
                )
            copy_bytes(stream[stream.numel() - nbytes :], plan.block[:nbytes])

            def release(stream=stream):
                plan._spare_inline = stream

        elif stream is None:
            packed = plan.block[:nbytes].to(device)
            stream = plan.whole_stream()
    else:
        small = [plan.leaves[i] for i in plan.small]
        nbytes = plan.small_layout.nbytes
        inline = not plan.large and _fits_inline(plan, nbytes)
        if inline:  # one message: header, signature, packed leaves
            stream = _stream(plan, _SPLIT, nbytes, 0, b"", inline=True, device=device)
            packed_into = stream[stream.numel() - nbytes :]
        else:
            large = [
                plan.leaves[i].detach().to(device).contiguous() for i in plan.large
            ]
            stream = _stream(plan, _SPLIT, nbytes, len(large), b"")
            packed = packed_into = torch.empty(nbytes, dtype=torch.uint8, device=device)
        if small:
            plan.small_layout.pack(small, packed_into)
    stream = stream.to(device)
    tags = _tags(init_tag, pseudo_rand, 3 + len(large))
    first = (
        stream
        if stream.numel() <= FIRST_MESSAGE_BYTES
        else stream[:FIRST_MESSAGE_BYTES]
    )
    works = [peer.isend(first, tags[0])]
    if stream.numel() > FIRST_MESSAGE_BYTES:
        works.append(peer.isend(stream[FIRST_MESSAGE_BYTES:], tags[1]))
    if packed is not None and packed.numel():
        works.append(peer.isend(packed, tags[2]))
    for leaf, tag in zip(large, tags[3:]):
        works.append(peer.isend(leaf, tag))
    return works, tags[-1], release


def _nothing() -> None:
    pass


# First-message buffers of finished receives (CPU), for the next receive to reuse: a
# fresh 1 MiB buffer costs page faults on every receive.
_SPARE_FIRST: list = []


def _first_buffer(device) -> tuple:
    """A first-message buffer on ``device`` and its header's eight integers: a spare
    one on the CPU when there is one."""
    if device.type == "cpu" and _SPARE_FIRST:
        return _SPARE_FIRST.pop()
    first = torch.empty(FIRST_MESSAGE_BYTES, dtype=torch.uint8, device=device)
    return first, first[:_HEADER_BYTES].view(torch.int64)


class _PendingRecv:
    """A receive in flight: ``wait()`` checks the header, receives the data and writes
    the leaves. What ``irecv(return_premature=True)`` returns (in a list)."""

    def __init__(
        self,
        td,
        peer: _Peer,
        init_tag: int,
        pseudo_rand: bool,
        waited: bool = False,
        landed: bool = False,
    ):
        self._peer = peer
        self._init_tag = init_tag
        self._pseudo_rand = pseudo_rand
        self._device = peer.device
        tag = _tags(init_tag, pseudo_rand, 1)[0] if pseudo_rand else init_tag
        self.last_tag = None
        self._overwritten = False  # a mismatched message landed in the storage
        # a consolidated receiver of a block that fits the first message: the message
        # lands in its own storage, the header in the room in front of the block, so
        # that a consolidated sender of the same structure leaves nothing to copy.
        # Only when the caller waits at once (``waited``): a receive left pending
        # (``irecv(return_premature=True)``) must not hold the storage, which the
        # caller may move meanwhile (``share_memory_``)
        plan = _Plan.kept(td) if waited else None
        self._landing = None
        if plan is not None and self._device.type == "cpu":
            self._landing = plan.landing(td)
        if self._landing is not None:
            self._plan = plan
            plan._landing_busy = True
            self._first = self._whole = self._split = None
            # (``landed``: that receive was already done, by :func:`_recv_in_place`)
            self._work = _Received if landed else peer.irecv(self._landing[0], tag)
            self._whole_last_tag = _tags(init_tag, pseudo_rand, 3)[-1]
            return
        if landed:
            raise RuntimeError("recv: the receiver's storage changed during a receive")
        self._first, self._header = _first_buffer(self._device)
        self._work = peer.irecv(self._first, tag)
        # what the check needs is worked out while the first message travels: posting
        # the receive first takes the plan (and, for a plain tensordict, the signature
        # and its hash) off the time between the sender's post and ours (gloo moves a
        # message once both sides posted it)
        self._plan = plan = _Plan.of(td) if plan is None else plan
        # and, for a consolidated receiver whose storage cannot take the message
        # (shared, pinned, mapped from a file), the one copy that ends the common case
        self._whole = plan.whole_inline(self._first)
        if self._whole is not None:
            self._whole_last_tag = _tags(init_tag, pseudo_rand, 3)[-1]
        # for a plain receiver, the views its leaves are copied from when a plain
        # sender of its structure sends them inline: cutting 100 views costs as much
        # as copying them, and is done while the message travels
        self._split = plan.split_inline(self._first)

    def is_completed(self) -> bool:
        return self.last_tag is not None

    def _recv(self, tensor: Tensor, tag: int):
        return self._peer.irecv(tensor, tag)

    def wait(self, timeout=None) -> bool:
        if self.last_tag is not None:
            return True
        self._work.wait()
        landing = self._landing
        if landing is not None:
            self._landing = None
            self._plan._landing_busy = False
            region, header, expected = landing
            if header.tolist() == expected:
                # a consolidated sender of our structure: its block is in place
                self.last_tag = self._whole_last_tag
                return True
            # another sender: its message is copied out of the storage, then read as
            # any first message (a mismatch overwrote the values: see the docs)
            self._plan._in_headroom = None  # the header room holds the sender's bytes
            self._overwritten = True
            self._staged(region, header.tolist())
        try:
            whole = self._whole
            if whole is not None and self._header.tolist() == whole[0]:
                # a consolidated sender of our structure, its block inline (the
                # block's address read now: the storage may have moved since the post)
                ctypes.memmove(self._plan.block.data_ptr(), whole[1], whole[2])
                self.last_tag = self._whole_last_tag
                return True
            split = self._split
            if split is not None and self._header.tolist() == split[0]:
                # a plain sender of our structure, its leaves packed inline
                with torch.no_grad():
                    torch._foreach_copy_(split[1], split[2])
                self.last_tag = _tags(self._init_tag, self._pseudo_rand, 3)[-1]
                return True
            return self._complete()
        finally:  # the first message has been read (or refused): its buffer is free
            if self._device.type == "cpu" and len(_SPARE_FIRST) < 4:
                _SPARE_FIRST.append((self._first, self._header))

    def _staged(self, region: Tensor, header: list) -> None:
        """Copy a first message that landed in the storage into a first-message
        buffer (as much of it as its header says it holds)."""
        magic, _, sig_len, _, nbytes, _, extra_len, inline = header
        length = _HEADER_BYTES
        if magic == _MAGIC:
            length = inline + nbytes if inline else _HEADER_BYTES + sig_len + extra_len
        length = max(_HEADER_BYTES, min(length, FIRST_MESSAGE_BYTES))
        self._first, self._header = _first_buffer(_CPU)
        copy_bytes(self._first[:length], region[:length])

    def _complete(self) -> bool:
        first = self._first
        magic, fp, sig_len, mode, nbytes, n_large, extra_len, inline = (
            self._header.tolist()
        )
        plan = self._plan
        if magic == _MAGIC and fp == plan.fp and inline:
            # the common case: the structures match and the data came inline
            self.last_tag = _tags(self._init_tag, self._pseudo_rand, 3 + n_large)[-1]
            self._unpack_inline(mode, first[inline : inline + nbytes])
            return True
        if magic != _MAGIC:
            raise RuntimeError(
                f"recv: the first message from the sender is not a tensordict stream "
                f"(mark {magic:#x}, expected {_MAGIC:#x}); was it sent by "
                f"TensorDict.send/isend with the same tags?"
            )
        tags = _tags(self._init_tag, self._pseudo_rand, 3 + n_large)
        self.last_tag = tags[-1]
        stream = self._stream(_HEADER_BYTES + sig_len + extra_len, tags[1])
        if fp != plan.fp:
            sig = stream(_HEADER_BYTES, _HEADER_BYTES + sig_len)
            self._refuse(sig, mode, 0 if inline else nbytes, tags)
        if mode == _PATH:
            end = _HEADER_BYTES + sig_len
            self._read_folder(stream(end, end + extra_len))
            return True
        if inline:  # the data came in the first message
            self._unpack_inline(mode, first[inline : inline + nbytes])
            return True
        empty = torch.empty
        works = []
        unpack = None
        if mode == _WHOLE:
            layout = plan.full_layout
            if plan.block is not None and plan.block.device == self._device:
                into = plan.block[: layout.nbytes]
            else:
                into = empty(nbytes, dtype=torch.uint8, device=self._device)
                unpack = (layout, into, plan.leaves)
            works.append(self._recv(into, tags[2]))
        else:
            if nbytes:
                into = empty(nbytes, dtype=torch.uint8, device=self._device)
                small = [plan.leaves[i] for i in plan.small]
                unpack = (plan.small_layout, into, small)
                works.append(self._recv(into, tags[2]))
            copies = []
            for pos, tag in zip(plan.large, tags[3:]):
                leaf = plan.leaves[pos].detach()
                if leaf.is_contiguous() and leaf.device == self._device:
                    works.append(self._recv(leaf, tag))
                else:
                    temp = empty(leaf.shape, dtype=leaf.dtype, device=self._device)
                    works.append(self._recv(temp, tag))
                    copies.append((leaf, temp))
        for work in works:
            work.wait()
        if unpack is not None:
            layout, block, leaves = unpack
            layout.unpack(block, leaves)
        if mode != _WHOLE:
            with torch.no_grad():
                for leaf, temp in copies:
                    leaf.copy_(temp)
        return True

    def _unpack_inline(self, mode: int, data: Tensor) -> None:
        plan = self._plan
        if mode == _WHOLE:
            if plan.block is not None and plan.block.device == data.device:
                copy_bytes(plan.block[: data.numel()], data)
            else:
                plan.full_layout.unpack(data, plan.leaves)
        elif data.numel():
            plan.small_layout.unpack(data, [plan.leaves[i] for i in plan.small])

    def _stream(self, length: int, tag: int):
        """Receive the rest of the first stream (header, signature, folder) when it
        did not fit the first message; return a function reading bytes
        ``[start, end)`` of the stream."""
        first = self._first
        rest = None
        if length > FIRST_MESSAGE_BYTES:
            rest = torch.empty(
                length - FIRST_MESSAGE_BYTES, dtype=torch.uint8, device=self._device
            )
            self._recv(rest, tag).wait()

        def read(start: int, end: int) -> bytes:
            if end <= FIRST_MESSAGE_BYTES:
                return first[start:end].cpu().numpy().tobytes()
            whole = torch.cat([first, rest]) if rest is not None else first
            return whole[start:end].cpu().numpy().tobytes()

        return read

    def _sender(self) -> str:
        return self._peer.label

    def _read_folder(self, meta: bytes) -> None:
        """The sender sent its folder: read the leaves from its files (same
        structure: the fingerprints matched) and copy them into ours."""
        desc = json.loads(meta)
        source = _open_folder(desc, self._plan.sig, self._sender(), "recv")
        with torch.no_grad():
            torch._foreach_copy_(
                [t.detach() for t in self._plan.leaves],
                [t.detach() for t in _Plan(source).leaves],
            )

    def _refuse(self, sig: bytes, mode, nbytes, tags):
        """The sender's structure differs: receive (and drop) what it sends, then
        raise naming the first key that differs."""
        works = []
        if nbytes:
            works.append(
                self._recv(
                    torch.empty(nbytes, dtype=torch.uint8, device=self._device), tags[2]
                )
            )
        if mode == _SPLIT:
            sizes = _sizes_from_signature(sig)
            _, large = _split_by_size(sizes)
            for pos, tag in zip(large, tags[3:]):
                itemsize, numel = sizes[pos]
                scratch = torch.empty(
                    itemsize * numel, dtype=torch.uint8, device=self._device
                )
                works.append(self._recv(scratch, tag))
        for work in works:
            work.wait()
        where = first_difference(self._plan.sig, sig) or "the leaves differ"
        written = (
            "Its values were overwritten (the message landed in its storage: a "
            "consolidated receiver takes it in place)"
            if self._overwritten
            else "Nothing was written"
        )
        raise RuntimeError(
            f"recv: the tensordict sent does not match the receiving one: {where}. "
            f"{written}; the receiving tensordict must have the sender's keys, shapes "
            f"and dtypes (or use TensorDict.from_remote_init to learn the structure "
            f"from the sender)"
        )


class _Received:
    """The work of a receive already waited for."""

    @staticmethod
    def wait(timeout=None) -> bool:
        return True


def _recv_in_place(td, src: int, init_tag: int) -> int | None:
    """``recv`` of the common case in as few steps as it takes (each costs several
    times its time in a loop between two busy ranks, and a receiver's steps before its
    post delay the transfer): a consolidated ``td`` whose first receive already landed
    in its storage (:meth:`_Plan.landing`), from ``src`` of the default CPU group with
    plain tags. Returns the last tag, or None when ``td`` is not that case (nothing
    posted). A message other than a consolidated sender's of the same structure is
    read by :class:`_PendingRecv`, as if it had posted the receive."""
    pg = dist.group.WORLD
    memo = consolidated_memo(td)
    plan = None if memo is None else memo.get("plan")
    if (
        plan is None
        or not plan._landing
        or plan._landing_busy
        or pg is None
        or _cpu_world() is not pg
    ):
        return None
    region, header, expected = plan._landing
    plan._landing_busy = True
    try:
        _pg_recv(pg, region, src, init_tag).wait()
    finally:
        plan._landing_busy = False
    if header.tolist() == expected:
        return init_tag + 2  # the transfer's three tags: init_tag, +1, +2
    peer = _Peer("src", src, None, None)
    pending = _PendingRecv(td, peer, init_tag, False, waited=True, landed=True)
    pending.wait()
    return pending.last_tag


# ----------------------------------------------------------------------------- checks
def _check_same(sig: bytes, fp: int, group, what: str, extra: int = 0) -> list:
    """All ranks of ``group`` hold the same structure (one all_gather of fingerprints;
    on a mismatch, the signatures are gathered to name the key, on every rank).
    ``extra``: one more integer each rank tells the others in the same collective;
    returns them, in rank order."""
    device = _comm_device(group)
    world = dist.get_world_size(group)
    mine = torch.tensor([fp, len(sig), extra], dtype=torch.int64, device=device)
    every = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(every, mine, group=group)
    every = [t.tolist() for t in every]
    fps = [t[0] for t in every]
    if len(set(fps)) == 1:
        return [t[2] for t in every]
    longest = max(t[1] for t in every)
    padded = torch.zeros(longest, dtype=torch.uint8, device=device)
    if sig:
        padded[: len(sig)].copy_(torch.frombuffer(bytearray(sig), dtype=torch.uint8))
    sigs = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(sigs, padded, group=group)
    me = dist.get_rank(group)
    for r, t in enumerate(every):
        if t[0] != fp:
            theirs = bytes(sigs[r][: t[1]].tolist())
            where = first_difference(sig, theirs) or "the leaves differ"
            raise RuntimeError(
                f"{what}: the tensordicts of the ranks differ (this is rank {me} of the "
                f"group; against rank {r}: {where}). Every rank must hold the same keys, "
                f"shapes and dtypes"
            )
    raise RuntimeError(
        f"{what}: the tensordicts of the ranks differ (another rank reported it); "
        f"every rank must hold the same keys, shapes and dtypes"
    )


class _Reduced:
    """Reductions in flight; ``wait()`` waits for them and writes the result back
    into the leaves (once)."""

    def __init__(self, works: list, finish) -> None:
        self._works = works
        self._finish = finish

    def is_completed(self) -> bool:
        return self._finish is None

    def wait(self, timeout=None) -> bool:
        for work in self._works:
            work.wait()
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        return True


def _reduce_leaves(td, group, run, what: str, write_back: bool, async_op: bool):
    """Run ``run(region) -> Work`` on each dtype region of the packed leaves (the
    consolidated storage itself where there is one), then write the result back."""
    plan = _Plan(td)
    _check_same(plan.sig, plan.fp, group, what)
    packed = plan.block is None
    block = plan.packed(_comm_device(group) if _on_cpu(plan) else None)
    works = [run(region) for region in plan.full_layout.regions(block)]

    def finish():
        if packed and write_back:
            plan.full_layout.unpack(block, plan.leaves)

    pending = _Reduced(works, finish)
    if async_op:
        return pending
    pending.wait()
    return None


def _on_cpu(plan: _Plan) -> bool:
    return all(leaf.device.type == "cpu" for leaf in plan.leaves)


def _bytes_tensor(data: bytes, device) -> Tensor:
    out = torch.empty(len(data), dtype=torch.uint8, device=device)
    if data:
        out.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    return out


def _consolidated(td, device=None):
    """``td`` consolidated (itself when it is already) and its block and description."""
    parts = consolidated_parts(td)
    if parts is None or (
        device is not None and parts[0].device != torch.device(device)
    ):
        td = td.consolidate(device=device)
        parts = consolidated_parts(td)
    block, paths, leaves, layout = parts
    meta = json.dumps(description(td, paths, leaves)).encode()
    return td, block[: layout.nbytes], meta


def _rebuilt(block: Tensor, meta: bytes, device=None):
    """The consolidated tensordict a receiver builds from a block and its structure
    (on ``device`` when given: every level then says so)."""
    desc = json.loads(meta)
    if device is not None:
        block = block.to(device)
    return _from_block(
        block, desc["tree"], desc["leaves"], locked=True, set_device=device is not None
    )


def _folder_of(td, as_path) -> str | None:
    """The folder ``td`` travels as: a memory-mapped tensordict's folder, unless
    ``as_path=False``; None when its data travels. ``as_path=True`` on another
    tensordict is an error."""
    folder = td.saved_path if td.is_memmap() else None
    if folder is None:
        if as_path:
            raise ValueError(
                "as_path=True needs a tensordict memory-mapped in a folder (memmap_, "
                "memmap or memmap_like with a prefix); this one is not"
            )
        return None
    if as_path is False:
        return None
    return str(folder)


def _folder_stamp(folder: str) -> list:
    """What tells one copy of a folder from another: inode, modification time and
    size of its ``meta.json`` (rewritten whenever the folder is written again)."""
    st = os.stat(os.path.join(folder, META))
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def _folder_description(folder: str, sig: bytes | None = None) -> bytes:
    """JSON of a folder sent instead of data: its path, its stamp and (for a receiver
    that does not know the structure) the signature of its leaves."""
    desc = {"path": folder, "stamp": _folder_stamp(folder)}
    if sig is not None:
        desc["signature"] = sig.decode()
    return json.dumps(desc).encode()


def _as_path(td, as_path) -> bytes | None:
    """The description of ``td`` as its folder when it travels as a path (see
    :func:`_folder_of`), with the signature of its leaves."""
    folder = _folder_of(td, as_path)
    if folder is None:
        return None
    return _folder_description(folder, _Plan(td).sig)


def _open_folder(desc: dict, expected: bytes, sender: str, what: str):
    """The folder a sender described, opened with ``load_memmap`` (its leaves map the
    same files), after checking that it is the sender's copy (same stamp) and that
    its leaves have the ``expected`` signature."""
    folder = desc["path"]
    try:
        td = container_class("TensorDict").load_memmap(folder)
        stamp = _folder_stamp(folder)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"{what}: {sender} sent a memory-mapped tensordict as its folder "
            f"{folder!r}, which this rank cannot read (no shared filesystem?); send it "
            f"with as_path=False to move the data instead"
        ) from error
    if stamp != desc["stamp"]:
        raise RuntimeError(
            f"{what}: {sender} sent a memory-mapped tensordict as its folder "
            f"{folder!r}, but the folder this rank reads under that path is another "
            f"one (its {META} differs: a local folder of the same name, not a shared "
            f"filesystem?); send it with as_path=False to move the data instead"
        )
    mine = _Plan(td).sig
    if fingerprint(mine) != fingerprint(expected):
        where = first_difference(mine, expected) or "the leaves differ"
        raise RuntimeError(
            f"{what}: the memory-mapped tensordict in {folder!r} does not match what "
            f"{sender} sent: {where}"
        )
    return td


def _loaded_from_path(meta: bytes, src: int, device=None):
    """The receiving side of :func:`_as_path`: the folder opened with ``load_memmap``
    (locked, memory-mapped), checked against the sender's signature."""
    desc = json.loads(meta)
    td = _open_folder(desc, desc["signature"].encode(), f"rank {src}", "receive")
    if device is not None:
        return td.to(device)
    return td.lock_()


def _group_rank_of(global_rank: int, group) -> int:
    if group is None:
        return global_rank
    return dist.get_group_rank(group, global_rank)


# ----------------------------------------------------------------------------- mixin
class DistributedMixin:
    """The ``torch.distributed`` calls of every container (see the module docstring:
    one packed block per call, the receiver checks the structure first)."""

    __slots__ = ()

    # -------------------------------------------------------------- point to point
    def isend(
        self,
        dst: int | None = None,
        *,
        group=None,
        group_dst: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        return_early: bool = False,
        consolidated: bool = False,
        as_path: bool | None = None,
    ):
        """Send the leaves to rank ``dst`` without blocking: one stream (header,
        signature) in one or two messages, then the data. Returns the last tag used,
        or with ``return_early=True`` the list of works to ``wait()`` on before
        changing the tensordict. ``consolidated=True`` consolidates first (a
        consolidated tensordict is sent from its storage without a copy either way).
        A transfer uses the tags ``init_tag``, ``init_tag + 1``, ... (``pseudo_rand=True``:
        tags drawn from a generator seeded by ``init_tag``); the receiver passes the
        same values.

        A tensordict memory-mapped in a folder sends the folder's path instead of its
        data (a shared filesystem): the receiver reads the leaves from the same files.
        ``as_path=False`` sends the data.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     td = TensorDict(a=torch.zeros(3))
        ...     td.recv(src=0)
        ...     got.put(td["a"].tolist())
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> td = TensorDict(a=torch.arange(3.0))
        >>> works = td.isend(dst=1, return_early=True)   # returns at once
        >>> for work in works:                           # wait before changing td
        ...     _ = work.wait()
        >>> got.get(timeout=30)
        [0.0, 1.0, 2.0]
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        peer = _Peer("dst", dst, group_dst, group)
        source = self
        folder = _folder_of(self, as_path)
        plan = _Plan.kept(self) if folder is None else None
        if consolidated and folder is None and plan is None:
            source = self.consolidate()
        works, last_tag, release = _post_send(
            source, peer, init_tag, pseudo_rand, folder, plan
        )
        if return_early:
            return works
        for work in works:
            work.wait()
        release()
        return last_tag

    def send(
        self,
        dst: int | None = None,
        *,
        group=None,
        group_dst: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
        as_path: bool | None = None,
    ) -> None:
        """Send the leaves to rank ``dst`` and wait until they are sent (see
        :meth:`isend`); the receiver calls :meth:`recv` or :meth:`irecv` on a
        tensordict of the same keys, shapes and dtypes.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     td = TensorDict(a=torch.zeros(3), b={"c": torch.zeros(2, dtype=torch.int64)})
        ...     td.recv(src=0)                   # same keys, shapes and dtypes
        ...     got.put((td["a"].tolist(), td["b", "c"].tolist()))
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> TensorDict(a=torch.arange(3.0), b={"c": torch.tensor([7, 8])}).send(dst=1)
        >>> got.get(timeout=30)
        ([0.0, 1.0, 2.0], [7, 8])
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        self.isend(
            dst,
            group=group,
            group_dst=group_dst,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            consolidated=consolidated,
            as_path=as_path,
        )

    def irecv(
        self,
        src: int | None = None,
        *,
        group=None,
        group_src: int | None = None,
        return_premature: bool = False,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ):
        """Receive what :meth:`send`/:meth:`isend` of rank ``src`` sent, into the
        leaves, in place. With ``return_premature=True`` returns at once a list of
        works: ``wait()`` on each checks the structure, receives and writes the
        leaves. A sender whose keys, shapes or dtypes differ gives a ``RuntimeError``
        naming the key, and nothing is written. ``consolidated`` is accepted for
        compatibility: a consolidated receiver always receives straight into its
        storage. A memory-mapped sender that sent its folder's path: the leaves are
        copied here from its files (read through the shared filesystem; nothing
        crossed the wire but the path).

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     TensorDict(a=torch.arange(3.0)).send(dst=0)
        ...     got.put("sent")
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> td = TensorDict(a=torch.zeros(3))
        >>> works = td.irecv(src=1, return_premature=True)  # returns at once
        >>> for work in works:                              # td is written once waited on
        ...     _ = work.wait()
        >>> td["a"].tolist(), got.get(timeout=30)
        ([0.0, 1.0, 2.0], 'sent')
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        peer = _Peer("src", src, group_src, group)
        pending = _PendingRecv(
            self, peer, init_tag, pseudo_rand, waited=not return_premature
        )
        if return_premature:
            return [pending]
        pending.wait()
        return None

    def recv(
        self,
        src: int | None = None,
        *,
        group=None,
        group_src: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ) -> int:
        """Receive what rank ``src`` sent into the leaves (see :meth:`irecv`); returns
        the last tag used.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     TensorDict(a=torch.full((2,), 5.0)).send(dst=0)
        ...     got.put("sent")
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> td = TensorDict(a=torch.zeros(2))
        >>> last_tag = td.recv(src=1)            # from rank 1, into td's leaves
        >>> td["a"].tolist(), got.get(timeout=30)
        ([5.0, 5.0], 'sent')
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        if group is None and group_src is None and src is not None and not pseudo_rand:
            last_tag = _recv_in_place(self, src, init_tag)
            if last_tag is not None:
                return last_tag
        peer = _Peer("src", src, group_src, group)
        pending = _PendingRecv(self, peer, init_tag, pseudo_rand, waited=True)
        pending.wait()
        return pending.last_tag

    async def asend(self, dst) -> None:
        """``await td.asend(dst)``: :meth:`isend` to rank ``dst``, awaited without
        blocking the event loop (a pipe object with its own ``asend`` is awaited).

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> import asyncio
        >>> def rank1(got):
        ...     join(1)
        ...     td = asyncio.run(TensorDict(a=torch.zeros(2)).arecv(0))
        ...     got.put(td["a"].tolist())
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> asyncio.run(TensorDict(a=torch.ones(2)).asend(1))
        >>> got.get(timeout=30)
        [1.0, 1.0]
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        if hasattr(dst, "asend"):
            await dst.asend(self)
            return
        works = self.isend(dst, return_early=True)
        await asyncio.to_thread(lambda: [w.wait() for w in works])

    async def arecv(self, src, *, device=None):
        """``td = await td.arecv(src)``: :meth:`irecv` from rank ``src``, awaited
        without blocking the event loop; returns the tensordict (a pipe object with
        its own ``arecv`` is awaited).

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> import asyncio
        >>> def rank1(got):
        ...     join(1)
        ...     asyncio.run(TensorDict(a=torch.ones(2)).asend(0))
        ...     got.put("sent")
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> async def receive():
        ...     return await TensorDict(a=torch.zeros(2)).arecv(1)
        >>> asyncio.run(receive())["a"].tolist(), got.get(timeout=30)
        ([1.0, 1.0], 'sent')
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        if hasattr(src, "arecv"):
            return await src.arecv(self, device=device)
        works = self.irecv(src, return_premature=True)
        await asyncio.to_thread(lambda: [w.wait() for w in works])
        return self

    # -------------------------------------------------------------- collectives
    def all_reduce(
        self, op=None, *, group=None, async_op: bool = False, bucket_bytes=None
    ):
        """Reduce every leaf over the ranks of ``group`` (``op``: a
        ``torch.distributed.ReduceOp``, ``SUM`` by default), in place on every rank:
        one collective per dtype on the packed leaves (the storage itself for a
        consolidated tensordict), after a one-collective structure check.
        ``async_op=True`` returns a list of works whose ``wait()`` also writes the
        result back. ``bucket_bytes`` is accepted for compatibility (everything is
        one bucket per dtype).

        Every rank calls it; here, in a group of one process:

        >>> import os, torch.distributed as dist
        >>> dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=0, world_size=1)
        >>> td = TensorDict(a=torch.ones(2))
        >>> td.all_reduce()                  # in place: the sum over the ranks
        >>> td["a"].tolist()
        [1.0, 1.0]
        >>> dist.destroy_process_group()
        """
        op = dist.ReduceOp.SUM if op is None else op

        def run(region):
            return dist.all_reduce(region, op=op, group=group, async_op=True)

        pending = _reduce_leaves(self, group, run, "all_reduce", True, async_op)
        return None if pending is None else [pending]

    def reduce(
        self,
        dst,
        op=None,
        async_op: bool = False,
        return_premature: bool = False,
        group=None,
        *,
        bucket_bytes=None,
    ):
        """Reduce every leaf over the ranks of ``group`` into rank ``dst``'s
        tensordict (the other ranks' leaves are left as they were). With
        ``async_op=True, return_premature=True`` returns a list of works whose
        ``wait()`` also writes the result back on ``dst``.

        Every rank calls it; here, in a group of one process:

        >>> import os, torch.distributed as dist
        >>> dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=0, world_size=1)
        >>> td = TensorDict(a=torch.ones(2))
        >>> _ = td.reduce(dst=0)
        >>> td["a"].tolist()
        [1.0, 1.0]
        >>> dist.destroy_process_group()
        """
        op = dist.ReduceOp.SUM if op is None else op
        is_dst = dist.get_rank() == dst

        def run(region):
            return dist.reduce(region, dst, op=op, group=group, async_op=True)

        pending = _reduce_leaves(
            self, group, run, "reduce", is_dst, async_op and return_premature
        )
        return None if pending is None else [pending]

    def broadcast(self, src: int, *, group=None, device=None, as_path=None):
        """Rank ``src``'s tensordict on every rank of ``group`` (the others may call
        it on an empty tensordict): ``src`` consolidates it and sends the structure
        (JSON) and the storage; every rank returns a consolidated tensordict (on
        ``src``, the consolidated tensordict itself). Three collectives.

        A tensordict memory-mapped in a folder goes as the folder's path and its
        leaves' signature (two small collectives, no data): the other ranks open it
        with ``load_memmap`` (a shared filesystem). ``as_path=False`` sends the data.

        Every rank calls it; here, in a group of one process:

        >>> import os, torch.distributed as dist
        >>> dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=0, world_size=1)
        >>> got = TensorDict(a=torch.arange(3)).broadcast(src=0)
        >>> got["a"].tolist()
        [0, 1, 2]
        >>> dist.destroy_process_group()
        """
        comm = _comm_device(group)
        is_src = dist.get_rank() == src
        path_meta = _as_path(self, as_path) if is_src else None
        if path_meta is not None:
            td, block, meta = self, None, path_meta
            sizes = torch.tensor([_MAGIC_PATH, len(meta), 0], device=comm)
        elif is_src:
            td, block, meta = _consolidated(self, device)
            sizes = torch.tensor([_MAGIC, len(meta), block.numel()], device=comm)
        else:
            sizes = torch.zeros(3, dtype=torch.int64, device=comm)
        dist.broadcast(sizes, src, group=group)
        magic, meta_len, nbytes = sizes.tolist()
        meta_t = (
            _bytes_tensor(meta, comm)
            if is_src
            else torch.empty(meta_len, dtype=torch.uint8, device=comm)
        )
        dist.broadcast(meta_t, src, group=group)
        if magic == _MAGIC_PATH:  # a shared folder: no data on the wire
            return (
                td if is_src else _loaded_from_path(bytes(meta_t.tolist()), src, device)
            )
        if is_src:
            dist.broadcast(block, src, group=group)
            return td
        where = device if device is not None else comm
        block = torch.empty(nbytes, dtype=torch.uint8, device=where)
        dist.broadcast(block, src, group=group)
        return _rebuilt(block, bytes(meta_t.tolist()), device)

    def all_gather(self, *, group=None, as_path=None) -> list:
        """Every rank's tensordict, on every rank (a list in rank order; the
        structures may differ): each rank consolidates its own, then the sizes, the
        structures (JSON) and the storages are all-gathered. Three collectives.

        A rank whose tensordict is memory-mapped in a folder gives its folder's path
        (and signature) instead of a storage; the others open the folder with
        ``load_memmap`` (a shared filesystem). When every rank does, no storage is
        gathered at all (two small collectives); otherwise the storages are gathered
        padded to the largest, so such a rank still sends padding. ``as_path=False``
        sends the data.

        Every rank calls it; here, in a group of one process:

        >>> import os, torch.distributed as dist
        >>> dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=0, world_size=1)
        >>> tds = TensorDict(a=torch.arange(2)).all_gather()
        >>> len(tds), tds[0]["a"].tolist()
        (1, [0, 1])
        >>> dist.destroy_process_group()
        """
        comm = _comm_device(group)
        world = dist.get_world_size(group)
        me = dist.get_rank(group)
        path_meta = _as_path(self, as_path)
        if path_meta is not None:
            td, block, meta = (
                self,
                torch.empty(0, dtype=torch.uint8, device=comm),
                path_meta,
            )
        else:
            td, block, meta = _consolidated(self, comm)
        sizes = torch.tensor(
            [path_meta is not None, len(meta), block.numel()], device=comm
        )
        every = [torch.empty_like(sizes) for _ in range(world)]
        dist.all_gather(every, sizes, group=group)
        every = [t.tolist() for t in every]
        meta_max = max(m for _, m, _ in every)
        nbytes_max = max(n for _, _, n in every)
        metas = _padded_gather(_bytes_tensor(meta, comm), meta_max, world, group)
        if nbytes_max:  # some rank sends data
            blocks = _padded_gather(block, nbytes_max, world, group)
        out = []
        for r, (is_path, m, n) in enumerate(every):
            if r == me:
                out.append(td)
            elif is_path:
                out.append(_loaded_from_path(bytes(metas[r][:m].tolist()), r))
            else:
                out.append(_rebuilt(blocks[r][:n], bytes(metas[r][:m].tolist())))
        return out

    def scatter(
        self,
        src: int,
        tensordicts: list | None = None,
        *,
        group=None,
        device=None,
        as_path=None,
    ):
        """Rank ``src`` gives ``tensordicts[i]`` to rank ``i`` of ``group``; every rank
        returns the tensordict it received (consolidated). Three collectives.

        A tensordict memory-mapped in a folder goes as its folder's path (and
        signature): its rank opens the folder with ``load_memmap`` (a shared
        filesystem). When all of them are, the storages' collective is skipped (two
        small collectives); otherwise the storages are scattered padded to the
        largest. ``as_path=False`` sends the data.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     mine = TensorDict().scatter(src=0)           # rank 1's part
        ...     got.put(mine["a"].tolist())
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> parts = [TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))]
        >>> mine = TensorDict().scatter(src=0, tensordicts=parts)   # parts[i] to rank i
        >>> mine["a"].tolist(), got.get(timeout=30)
        ([0.0, 0.0], [1.0, 1.0])
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        comm = _comm_device(group)
        world = dist.get_world_size(group)
        is_src = dist.get_rank() == src
        sizes = torch.zeros(5, dtype=torch.int64, device=comm)
        if is_src:
            if tensordicts is None or len(tensordicts) != world:
                raise ValueError(
                    f"scatter: rank {src} must give one tensordict per rank of the "
                    f"group ({world}), got "
                    f"{None if tensordicts is None else len(tensordicts)}"
                )
            parts = []
            for td in tensordicts:
                path_meta = _as_path(td, as_path)
                if path_meta is None:
                    parts.append((False,) + _consolidated(td, comm)[1:])
                else:
                    empty = torch.empty(0, dtype=torch.uint8, device=comm)
                    parts.append((True, empty, path_meta))
            meta_max = max(len(m) for _, _, m in parts)
            nbytes_max = max(b.numel() for _, b, _ in parts)
            size_list = [
                torch.tensor(
                    [is_path, len(m), b.numel(), meta_max, nbytes_max], device=comm
                )
                for is_path, b, m in parts
            ]
            dist.scatter(sizes, size_list, src=src, group=group)
        else:
            dist.scatter(sizes, None, src=src, group=group)
        is_path, meta_len, nbytes, meta_max, nbytes_max = sizes.tolist()
        meta_t = torch.empty(meta_max, dtype=torch.uint8, device=comm)
        block = torch.empty(nbytes_max, dtype=torch.uint8, device=comm)
        metas = blocks = None
        if is_src:
            metas = [_padded(_bytes_tensor(m, comm), meta_max) for _, _, m in parts]
            blocks = [_padded(b, nbytes_max) for _, b, _ in parts]
        dist.scatter(meta_t, metas, src=src, group=group)
        if nbytes_max:  # some rank gets data
            dist.scatter(block, blocks, src=src, group=group)
        meta = bytes(meta_t[:meta_len].tolist())
        if is_path:
            return _loaded_from_path(meta, src, device)
        block = block[:nbytes]
        if device is not None:
            block = block.to(device)
        return _rebuilt(block, meta, device)

    def gather_and_stack(self, dst: int, group=None, *, as_path=None):
        """Rank ``dst``'s tensordict (first batch dim: one row per other rank) gets
        the other ranks' tensordicts written into its rows, in rank order; returns
        ``self`` on ``dst`` and None elsewhere. One structure check (the rows against
        the others) and one gather of packed leaves.

        When every other rank's tensordict is memory-mapped in a folder, they gather
        their folders' paths instead (a shared filesystem): ``dst`` copies each row
        from the files; no leaf crosses the wire. ``as_path=False`` sends the data.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     got.put(TensorDict(a=torch.full((2,), 1.0)).gather_and_stack(dst=0))
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> rows = TensorDict(a=torch.zeros(1, 2), batch_size=[1])    # one row per other rank
        >>> rows.gather_and_stack(dst=0) is rows
        True
        >>> rows["a"].tolist(), got.get(timeout=30)                  # None on the other ranks
        ([[1.0, 1.0]], None)
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        world = dist.get_world_size(group)
        me = dist.get_rank(group)
        dst_in_group = _group_rank_of(dst, group)
        is_dst = me == dst_in_group
        folder = None
        if is_dst:
            if self.batch_size[:1] != torch.Size([world - 1]):
                raise RuntimeError(
                    f"gather_and_stack: rank {dst}'s tensordict must have one row per "
                    f"other rank (first batch dim {world - 1}), got batch_size "
                    f"{tuple(self.batch_size)}"
                )
            rows = [self[i] for i in range(world - 1)]
            plan = _Plan(rows[0]) if rows else None
        else:
            plan = _Plan(self)
            folder = _folder_of(self, as_path)
        sig = plan.sig if plan is not None else b""
        fp = plan.fp if plan is not None else 0
        desc = _folder_description(folder) if folder is not None else b""
        # every other rank tells its folder description's length (0: no folder)
        lengths = _check_same(sig, fp, group, "gather_and_stack", len(desc))
        others = [r for r in range(world) if r != dst_in_group]
        comm = _comm_device(group)
        if others and all(lengths[r] for r in others):  # folders: no leaf on the wire
            longest = max(lengths)
            if is_dst:
                descs = [
                    torch.empty(longest, dtype=torch.uint8, device=comm)
                    for _ in range(world)
                ]
                dist.gather(descs[me], descs, dst=dst, group=group)
                for row, r in zip(rows, others):
                    meta = json.loads(bytes(descs[r][: lengths[r]].tolist()))
                    source = _open_folder(
                        meta, sig, f"rank {r} of the group", "gather_and_stack"
                    )
                    with torch.no_grad():
                        torch._foreach_copy_(
                            [t.detach() for t in _Plan(row).leaves],
                            [t.detach() for t in _Plan(source).leaves],
                        )
                return self
            dist.gather(
                _padded(_bytes_tensor(desc, comm), longest), None, dst=dst, group=group
            )
            return None
        if is_dst:
            nbytes = plan.full_layout.nbytes
            bufs = [
                torch.empty(nbytes, dtype=torch.uint8, device=comm)
                for _ in range(world)
            ]
            dist.gather(bufs[me], bufs, dst=dst, group=group)
            for row, r in zip(rows, others):
                leaves = _Plan(row).leaves
                plan.full_layout.unpack(bufs[r], leaves)
            return self
        dist.gather(plan.packed(comm), None, dst=dst, group=group)
        return None

    def init_remote(
        self,
        dst: int | None = None,
        group=None,
        device=None,
        use_broadcast: bool = False,
        *,
        as_path=None,
    ):
        """Send the tensordict with its structure to rank ``dst``, which calls
        :meth:`from_remote_init` and learns the structure from it (JSON; nothing is
        pickled). Send later values with ``send(dst)`` into the tensordict it
        returned. ``use_broadcast=True`` broadcasts to the whole group instead.

        A tensordict memory-mapped in a folder goes as the folder's path and its
        leaves' signature (two small messages, no data); the receiver opens it with
        ``load_memmap`` (a shared filesystem). ``as_path=False`` sends the data.

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     td = TensorDict.from_remote_init(src=0)      # structure and values
        ...     got.put((list(td.keys(True, True)), td.batch_size, td["a"].tolist()))
        ...     td.recv(src=0)                               # later values, in place
        ...     got.put(td["a"].tolist())
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> td = TensorDict(a=torch.zeros(2), b={"c": torch.ones(2, 1)}, batch_size=[2])
        >>> td.init_remote(dst=1)
        >>> got.get(timeout=30)
        (['a', ('b', 'c')], torch.Size([2]), [0.0, 0.0])
        >>> td["a"] += 1
        >>> td.send(dst=1)
        >>> got.get(timeout=30)
        [1.0, 1.0]
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        if use_broadcast:
            self.broadcast(dist.get_rank(), group=group, device=device, as_path=as_path)
            return None
        if dst is None:
            raise ValueError("init_remote: give the receiving rank dst")
        comm = _comm_device(group)
        meta = _as_path(self, as_path)
        if meta is not None:  # a shared folder: its path, no data on the wire
            block = torch.empty(0, dtype=torch.uint8)
            sizes = torch.tensor([_MAGIC_PATH, len(meta), 0], device=comm)
        else:
            td, block, meta = _consolidated(self)
            sizes = torch.tensor([_MAGIC, len(meta), block.numel()], device=comm)
        works = [
            dist.isend(sizes, dst, group=group, tag=0),
            dist.isend(_bytes_tensor(meta, comm), dst, group=group, tag=1),
        ]
        if block.numel():
            works.append(dist.isend(block, dst, group=group, tag=2))
        for work in works:
            work.wait()
        return None

    @classmethod
    def from_remote_init(
        cls, src: int, group=None, device=None, use_broadcast: bool = False
    ):
        """The tensordict rank ``src`` sent with :meth:`init_remote` (consolidated, of
        the sender's class where this process can import it).

        >>> import datetime, multiprocessing, os, torch.distributed as dist
        >>> def join(rank):  # two processes of this machine in one group (a file store)
        ...     dist.init_process_group(
        ...         "gloo", init_method="file://" + os.path.abspath("store"), rank=rank,
        ...         world_size=2, timeout=datetime.timedelta(seconds=30))
        >>> def rank1(got):
        ...     join(1)
        ...     TensorDict(obs=torch.arange(4).view(2, 2), done=torch.zeros(2, dtype=torch.bool),
        ...                batch_size=[2]).init_remote(dst=0)
        ...     got.put("sent")
        ...     dist.destroy_process_group()
        >>> fork = multiprocessing.get_context("fork")
        >>> got = fork.Queue()                   # what rank 1 received
        >>> peer = fork.Process(target=rank1, args=(got,))
        >>> peer.start()
        >>> join(0)
        >>> td = TensorDict.from_remote_init(src=1)   # no template needed
        >>> td.batch_size, td["obs"].tolist(), td["done"].dtype, got.get(timeout=30)
        (torch.Size([2]), [[0, 1], [2, 3]], torch.bool, 'sent')
        >>> dist.destroy_process_group(); peer.join(timeout=30); peer.exitcode
        0
        """
        if use_broadcast:
            empty = container_class("TensorDict")()
            return empty.broadcast(src, group=group, device=device)
        comm = _comm_device(group)
        sizes = torch.zeros(3, dtype=torch.int64, device=comm)
        dist.recv(sizes, src, group=group, tag=0)
        magic, meta_len, nbytes = sizes.tolist()
        if magic not in (_MAGIC, _MAGIC_PATH):
            raise RuntimeError(
                f"from_remote_init: rank {src} did not send a tensordict with "
                f"init_remote (magic {magic:#x})"
            )
        meta_t = torch.empty(meta_len, dtype=torch.uint8, device=comm)
        dist.recv(meta_t, src, group=group, tag=1)
        meta = bytes(meta_t.tolist())
        if magic == _MAGIC_PATH:  # a shared folder: no data on the wire
            return _loaded_from_path(meta, src, device)
        room = 0
        if device is None and comm.type == "cpu":
            # the room ``consolidate`` keeps in front of the block, so that the
            # tensordict sends from its storage and receives in place, as one made by
            # ``consolidate`` (it is made to receive the later sends)
            room = headroom(len(json.loads(meta)["leaves"]))
        where = device if device is not None else comm
        block = torch.empty(room + nbytes, dtype=torch.uint8, device=where)[room:]
        if nbytes:
            dist.recv(block, src, group=group, tag=2)
        return _rebuilt(block, meta, device)


def _padded(t: Tensor, size: int) -> Tensor:
    if t.numel() == size:
        return t
    out = torch.zeros(size, dtype=t.dtype, device=t.device)
    out[: t.numel()].copy_(t)
    return out


def _padded_gather(t: Tensor, size: int, world: int, group) -> list:
    out = [torch.empty(size, dtype=t.dtype, device=t.device) for _ in range(world)]
    dist.all_gather(out, _padded(t, size), group=group)
    return out
