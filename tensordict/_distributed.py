"""Moving tensordicts between processes with ``torch.distributed`` (gloo, NCCL, ...).

Every call moves the leaves as one packed block (``tensordict._structure.Layout``:
leaves in key order, grouped by dtype) rather than one message per leaf; a consolidated
tensordict (``tensordict/_consolidate.py``) *is* such a block, so it moves without
being copied first.

Point to point (``send``/``recv``/``isend``/``irecv``), the sender sends one stream:

    header (64 bytes) | signature (JSON: path, dtype, shape of every leaf) | block

in at most two messages: the first carries the first ``FIRST_MESSAGE_BYTES`` of the
stream (all of it for tensordicts up to about 1 MiB), the second the rest. The
receiver posts a 1 MiB buffer for the first message (a message shorter than the buffer
is fine for every backend; a longer one would abort the process), reads the header,
and compares the sender's fingerprint with its own before anything lands in its
leaves. On a mismatch it still receives the rest (so the sender is never left
blocked), then raises an error naming the first key that differs. The check costs the
signature's bytes on the wire (about 40 bytes per leaf) and a hash on each side.

Collectives that need the same structure on every rank (``all_reduce``, ``reduce``,
``gather_and_stack``) first all-gather each rank's fingerprint (one small collective)
and raise, naming the key, on every rank when they differ. Collectives that build new
tensordicts (``broadcast``, ``all_gather``, ``scatter``, ``init_remote`` /
``from_remote_init``) send the structure as JSON beside the block: nothing is pickled.
"""

from __future__ import annotations

import asyncio
import json
import random

import torch
import torch.distributed as dist
from torch import Tensor

from tensordict._consolidate import _from_block, consolidated_parts, description
from tensordict._registry import container_class
from tensordict._structure import (
    Layout,
    canonical_order,
    first_difference,
    fingerprint,
    leaf_items,
    signature,
)

__all__ = ["DistributedMixin", "FIRST_MESSAGE_BYTES"]

#: The most bytes the first message of a point-to-point transfer carries.
FIRST_MESSAGE_BYTES = 1 << 20
_HEADER_BYTES = 64
_MAGIC = 0x54444431  # "TDD1": this stream format
_STREAM_TAGS = 2  # tags one point-to-point transfer uses


# ----------------------------------------------------------------------------- plan
class _Plan:
    """What one side knows of its tensordict before moving it: the leaves in block
    order, their layout and signature, and the consolidated block if there is one
    with this layout."""

    __slots__ = ("leaves", "layout", "sig", "fp", "block")

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
            layout = Layout.of(leaves)
            block = None
        self.leaves = leaves
        self.layout = layout
        self.sig = signature(paths, leaves)
        self.fp = fingerprint(self.sig)
        self.block = block

    def packed(self, device=None) -> Tensor:
        """The block: the consolidated storage, or the leaves packed into a new one."""
        if self.block is not None and (device is None or self.block.device == device):
            return self.block[: self.layout.nbytes]
        block = torch.empty(self.layout.nbytes, dtype=torch.uint8, device=device)
        self.layout.pack(self.leaves, block)
        return block

    def receive_into(self) -> Tensor | None:
        """Where received bytes can land directly (a consolidated storage)."""
        return None if self.block is None else self.block[: self.layout.nbytes]


def _sig_room(n: int) -> int:
    return -(-n // 16) * 16


def _write_header(stream: Tensor, fp: int, sig: bytes, nbytes: int) -> None:
    stream[:_HEADER_BYTES].view(torch.int64).copy_(
        torch.tensor([_MAGIC, fp, len(sig), nbytes, 0, 0, 0, 0], dtype=torch.int64)
    )
    if sig:
        stream[_HEADER_BYTES : _HEADER_BYTES + len(sig)].copy_(
            torch.frombuffer(bytearray(sig), dtype=torch.uint8)
        )


def _tags(init_tag: int, pseudo_rand: bool, count: int) -> list[int]:
    if pseudo_rand:
        rng = random.Random(init_tag)
        return [rng.randrange(1, 1 << 24) for _ in range(count)]
    return [init_tag + i for i in range(count)]


def _peer(name: str, rank, group_rank, group) -> dict:
    """The peer arguments of ``dist.isend``/``irecv`` (a global rank, or a rank in
    ``group``)."""
    if (rank is None) == (group_rank is None):
        raise ValueError(
            f"pass exactly one of {name} and group_{name} (got {name}={rank!r}, "
            f"group_{name}={group_rank!r})"
        )
    if group_rank is not None:
        if group is None:
            raise ValueError(f"group_{name} needs the group it is a rank of")
        return {f"group_{'dst' if name == 'dst' else 'src'}": group_rank}
    return {name: rank}


def _comm_device(group) -> torch.device:
    """The device small control tensors travel on: CUDA for NCCL, else the CPU."""
    try:
        backend = dist.get_backend(group)
    except (RuntimeError, ValueError):
        backend = None
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


# ----------------------------------------------------------------------------- p2p
def _post_send(td, peer: dict, group, tags: list) -> list:
    plan = _Plan(td)
    device = _comm_device(group)
    nbytes = plan.layout.nbytes
    head = _HEADER_BYTES + _sig_room(len(plan.sig))
    total = head + nbytes
    first_len = min(total, FIRST_MESSAGE_BYTES)
    if plan.block is None or head >= FIRST_MESSAGE_BYTES:
        # no block to send as it is: pack header, signature and leaves in one stream
        stream = torch.empty(total, dtype=torch.uint8, device=device)
        _write_header(stream, plan.fp, plan.sig, nbytes)
        if nbytes:
            if plan.block is not None:
                stream[head:].copy_(plan.block[:nbytes])
            else:
                plan.layout.pack(plan.leaves, stream[head:])
        first, rest = stream[:first_len], stream[first_len:]
    else:
        # a consolidated block: copy only what rides in the first message
        first = torch.empty(first_len, dtype=torch.uint8, device=device)
        _write_header(first, plan.fp, plan.sig, nbytes)
        block = plan.block[:nbytes]
        k = first_len - head
        if k:
            first[head:].copy_(block[:k])
        rest = block[k:]
    works = [dist.isend(first, group=group, tag=tags[0], **peer)]
    if rest.numel():
        works.append(dist.isend(rest, group=group, tag=tags[1], **peer))
    return works


class _PendingRecv:
    """A receive in flight: ``wait()`` checks the header, receives the rest and writes
    the leaves. What ``irecv(return_premature=True)`` returns (in a list)."""

    def __init__(self, td, peer: dict, group, tags: list) -> None:
        self._plan = _Plan(td)
        self._peer = peer
        self._group = group
        self._tags = tags
        device = _comm_device(group)
        self._first = torch.empty(FIRST_MESSAGE_BYTES, dtype=torch.uint8, device=device)
        self._work = dist.irecv(self._first, group=group, tag=tags[0], **peer)
        self._done = False

    def is_completed(self) -> bool:
        return self._done

    def wait(self, timeout=None) -> bool:
        if self._done:
            return True
        self._work.wait()
        self._done = True
        first = self._first
        magic, fp, sig_len, nbytes = first[:32].view(torch.int64).tolist()
        if magic != _MAGIC:
            raise RuntimeError(
                f"recv: the first message from the sender is not a tensordict stream "
                f"(magic {magic:#x}, expected {_MAGIC:#x}); was it sent by "
                f"TensorDict.send/isend with the same tags?"
            )
        head = _HEADER_BYTES + _sig_room(sig_len)
        total = head + nbytes
        plan = self._plan
        matches = fp == plan.fp and nbytes == plan.layout.nbytes
        if total > FIRST_MESSAGE_BYTES:
            target = plan.receive_into() if matches else None
            skip = FIRST_MESSAGE_BYTES - head
            if target is not None and skip >= 0:
                target[:skip].copy_(first[head:])
                rest = target[skip:]
                payload = None
            else:
                stream = torch.empty(total, dtype=torch.uint8, device=first.device)
                stream[:FIRST_MESSAGE_BYTES].copy_(first)
                rest = stream[FIRST_MESSAGE_BYTES:]
                payload = stream[head:]
            dist.recv(rest, group=self._group, tag=self._tags[1], **self._peer)
        else:
            stream = first
            payload = first[head:total]
            target = None
        if not matches:
            theirs = bytes(stream[_HEADER_BYTES : _HEADER_BYTES + sig_len].tolist())
            where = first_difference(plan.sig, theirs) or "the leaves differ"
            raise RuntimeError(
                f"recv: the tensordict sent does not match the receiving one: {where}. "
                f"Nothing was written; the receiving tensordict must have the sender's "
                f"keys, shapes and dtypes (or use TensorDict.from_remote_init to learn "
                f"the structure from the sender)"
            )
        if payload is not None:
            into = plan.receive_into()
            if into is not None:
                into.copy_(payload)
            else:
                plan.layout.unpack(payload, plan.leaves)
        return True


def _tensorclass_wrapped(td):
    return td._tensordict if getattr(td, "_is_tensorclass", False) else td


# ----------------------------------------------------------------------------- checks
def _check_same(sig: bytes, fp: int, group, what: str) -> None:
    """All ranks of ``group`` hold the same structure (one all_gather of fingerprints;
    on a mismatch, the signatures are gathered to name the key, on every rank)."""
    device = _comm_device(group)
    world = dist.get_world_size(group)
    mine = torch.tensor([fp, len(sig)], dtype=torch.int64, device=device)
    every = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(every, mine, group=group)
    fps = [int(t[0]) for t in every]
    if len(set(fps)) == 1:
        return
    longest = max(int(t[1]) for t in every)
    padded = torch.zeros(longest, dtype=torch.uint8, device=device)
    if sig:
        padded[: len(sig)].copy_(torch.frombuffer(bytearray(sig), dtype=torch.uint8))
    sigs = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(sigs, padded, group=group)
    me = dist.get_rank(group)
    for r, t in enumerate(every):
        if int(t[0]) != fp:
            theirs = bytes(sigs[r][: int(t[1])].tolist())
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
    block = plan.receive_into()
    packed = block is None
    if packed:
        block = plan.packed(_comm_device(group) if _on_cpu(plan) else None)
    works = [run(region) for region in plan.layout.regions(block)]

    def finish():
        if packed and write_back:
            plan.layout.unpack(block, plan.leaves)

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
    ):
        """Send the leaves to rank ``dst`` without blocking: one stream (header,
        signature, packed leaves) in one or two messages. Returns the last tag used,
        or with ``return_early=True`` the list of works to ``wait()`` on before
        changing the tensordict. ``consolidated=True`` consolidates first (a
        consolidated tensordict is sent from its storage without a copy either way).
        A transfer uses the tags ``init_tag`` and ``init_tag + 1``
        (``pseudo_rand=True``: two tags drawn from a generator seeded by
        ``init_tag``); the receiver passes the same values."""
        peer = _peer("dst", dst, group_dst, group)
        source = self
        if consolidated and consolidated_parts(self) is None:
            source = self.consolidate()
        tags = _tags(init_tag, pseudo_rand, _STREAM_TAGS)
        works = _post_send(source, peer, group, tags)
        if return_early:
            return works
        for work in works:
            work.wait()
        return tags[-1]

    def send(
        self,
        dst: int | None = None,
        *,
        group=None,
        group_dst: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ) -> None:
        """Send the leaves to rank ``dst`` and wait until they are sent (see
        :meth:`isend`); the receiver calls :meth:`recv` or :meth:`irecv` on a
        tensordict of the same keys, shapes and dtypes."""
        self.isend(
            dst,
            group=group,
            group_dst=group_dst,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            consolidated=consolidated,
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
        storage."""
        peer = _peer("src", src, group_src, group)
        tags = _tags(init_tag, pseudo_rand, _STREAM_TAGS)
        pending = _PendingRecv(self, peer, group, tags)
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
        the last tag used."""
        peer = _peer("src", src, group_src, group)
        tags = _tags(init_tag, pseudo_rand, _STREAM_TAGS)
        _PendingRecv(self, peer, group, tags).wait()
        return tags[-1]

    async def asend(self, dst) -> None:
        """``await td.asend(dst)``: :meth:`isend` to rank ``dst``, awaited without
        blocking the event loop (a pipe object with its own ``asend`` is awaited)."""
        if hasattr(dst, "asend"):
            await dst.asend(self)
            return
        works = self.isend(dst, return_early=True)
        await asyncio.to_thread(lambda: [w.wait() for w in works])

    async def arecv(self, src, *, device=None):
        """``td = await td.arecv(src)``: :meth:`irecv` from rank ``src``, awaited
        without blocking the event loop; returns the tensordict (a pipe object with
        its own ``arecv`` is awaited)."""
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
        one bucket per dtype)."""
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
        ``wait()`` also writes the result back on ``dst``."""
        op = dist.ReduceOp.SUM if op is None else op
        is_dst = dist.get_rank() == dst

        def run(region):
            return dist.reduce(region, dst, op=op, group=group, async_op=True)

        pending = _reduce_leaves(
            self, group, run, "reduce", is_dst, async_op and return_premature
        )
        return None if pending is None else [pending]

    def broadcast(self, src: int, *, group=None, device=None):
        """Rank ``src``'s tensordict on every rank of ``group`` (the others may call
        it on an empty tensordict): ``src`` consolidates it and sends the structure
        (JSON) and the storage; every rank returns a consolidated tensordict (on
        ``src``, the consolidated tensordict itself). Three collectives."""
        comm = _comm_device(group)
        is_src = dist.get_rank() == src
        if is_src:
            td, block, meta = _consolidated(self, device)
            sizes = torch.tensor([_MAGIC, len(meta), block.numel()], device=comm)
        else:
            sizes = torch.zeros(3, dtype=torch.int64, device=comm)
        dist.broadcast(sizes, src, group=group)
        _, meta_len, nbytes = sizes.tolist()
        meta_t = (
            _bytes_tensor(meta, comm)
            if is_src
            else torch.empty(meta_len, dtype=torch.uint8, device=comm)
        )
        dist.broadcast(meta_t, src, group=group)
        if is_src:
            dist.broadcast(block, src, group=group)
            return td
        where = device if device is not None else comm
        block = torch.empty(nbytes, dtype=torch.uint8, device=where)
        dist.broadcast(block, src, group=group)
        return _rebuilt(block, bytes(meta_t.tolist()), device)

    def all_gather(self, *, group=None) -> list:
        """Every rank's tensordict, on every rank (a list in rank order; the
        structures may differ): each rank consolidates its own, then the sizes, the
        structures (JSON) and the storages are all-gathered. Three collectives."""
        comm = _comm_device(group)
        world = dist.get_world_size(group)
        me = dist.get_rank(group)
        td, block, meta = _consolidated(self, comm)
        sizes = torch.tensor([len(meta), block.numel()], device=comm)
        every = [torch.empty_like(sizes) for _ in range(world)]
        dist.all_gather(every, sizes, group=group)
        every = [t.tolist() for t in every]
        meta_max = max(m for m, _ in every)
        nbytes_max = max(n for _, n in every)
        metas = _padded_gather(_bytes_tensor(meta, comm), meta_max, world, group)
        blocks = _padded_gather(block, nbytes_max, world, group)
        out = []
        for r, (m, n) in enumerate(every):
            if r == me:
                out.append(td)
            else:
                out.append(_rebuilt(blocks[r][:n], bytes(metas[r][:m].tolist())))
        return out

    def scatter(
        self, src: int, tensordicts: list | None = None, *, group=None, device=None
    ):
        """Rank ``src`` gives ``tensordicts[i]`` to rank ``i`` of ``group``; every rank
        returns the tensordict it received (consolidated). Three collectives."""
        comm = _comm_device(group)
        world = dist.get_world_size(group)
        is_src = dist.get_rank() == src
        sizes = torch.zeros(4, dtype=torch.int64, device=comm)
        if is_src:
            if tensordicts is None or len(tensordicts) != world:
                raise ValueError(
                    f"scatter: rank {src} must give one tensordict per rank of the "
                    f"group ({world}), got "
                    f"{None if tensordicts is None else len(tensordicts)}"
                )
            parts = [_consolidated(td, comm) for td in tensordicts]
            meta_max = max(len(m) for _, _, m in parts)
            nbytes_max = max(b.numel() for _, b, _ in parts)
            size_list = [
                torch.tensor([len(m), b.numel(), meta_max, nbytes_max], device=comm)
                for _, b, m in parts
            ]
            dist.scatter(sizes, size_list, src=src, group=group)
        else:
            dist.scatter(sizes, None, src=src, group=group)
        meta_len, nbytes, meta_max, nbytes_max = sizes.tolist()
        meta_t = torch.empty(meta_max, dtype=torch.uint8, device=comm)
        block = torch.empty(nbytes_max, dtype=torch.uint8, device=comm)
        if is_src:
            metas = [_padded(_bytes_tensor(m, comm), meta_max) for _, _, m in parts]
            blocks = [_padded(b, nbytes_max) for _, b, _ in parts]
            dist.scatter(meta_t, metas, src=src, group=group)
            dist.scatter(block, blocks, src=src, group=group)
        else:
            dist.scatter(meta_t, None, src=src, group=group)
            dist.scatter(block, None, src=src, group=group)
        block = block[:nbytes]
        if device is not None:
            block = block.to(device)
        return _rebuilt(block, bytes(meta_t[:meta_len].tolist()), device)

    def gather_and_stack(self, dst: int, group=None):
        """Rank ``dst``'s tensordict (first batch dim: one row per other rank) gets
        the other ranks' tensordicts written into its rows, in rank order; returns
        ``self`` on ``dst`` and None elsewhere. One structure check (the rows against
        the others) and one gather of packed leaves."""
        world = dist.get_world_size(group)
        me = dist.get_rank(group)
        dst_in_group = _group_rank_of(dst, group)
        is_dst = me == dst_in_group
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
        sig = plan.sig if plan is not None else b""
        fp = plan.fp if plan is not None else 0
        _check_same(sig, fp, group, "gather_and_stack")
        comm = _comm_device(group)
        if is_dst:
            nbytes = plan.layout.nbytes
            bufs = [
                torch.empty(nbytes, dtype=torch.uint8, device=comm)
                for _ in range(world)
            ]
            dist.gather(bufs[me], bufs, dst=dst, group=group)
            others = [r for r in range(world) if r != me]
            for row, r in zip(rows, others):
                leaves = _Plan(row).leaves
                plan.layout.unpack(bufs[r], leaves)
            return self
        dist.gather(plan.packed(comm), None, dst=dst, group=group)
        return None

    def init_remote(
        self,
        dst: int | None = None,
        group=None,
        device=None,
        use_broadcast: bool = False,
    ):
        """Send the tensordict with its structure to rank ``dst``, which calls
        :meth:`from_remote_init` and learns the structure from it (JSON; nothing is
        pickled). Send later values with ``send(dst)`` into the tensordict it
        returned. ``use_broadcast=True`` broadcasts to the whole group instead."""
        if use_broadcast:
            self.broadcast(dist.get_rank(), group=group, device=device)
            return None
        if dst is None:
            raise ValueError("init_remote: give the receiving rank dst")
        comm = _comm_device(group)
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
        the sender's class where this process can import it)."""
        if use_broadcast:
            empty = container_class("TensorDict")()
            return empty.broadcast(src, group=group, device=device)
        comm = _comm_device(group)
        sizes = torch.zeros(3, dtype=torch.int64, device=comm)
        dist.recv(sizes, src, group=group, tag=0)
        magic, meta_len, nbytes = sizes.tolist()
        if magic != _MAGIC:
            raise RuntimeError(
                f"from_remote_init: rank {src} did not send a tensordict with "
                f"init_remote (magic {magic:#x})"
            )
        meta_t = torch.empty(meta_len, dtype=torch.uint8, device=comm)
        dist.recv(meta_t, src, group=group, tag=1)
        block = torch.empty(
            nbytes, dtype=torch.uint8, device=device if device is not None else comm
        )
        if nbytes:
            dist.recv(block, src, group=group, tag=2)
        return _rebuilt(block, bytes(meta_t.tolist()), device)


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
