"""Moving many leaves between the host and a GPU in a few copies.

A copy between host and GPU costs a fixed few microseconds to launch plus the bytes;
for a tensordict of many small leaves the launches dominate (100 leaves of 64 KB: one
copy each takes about 25x the time of one copy of the same 6.5 MB). So ``to``
gathers the small leaves into one block and moves the block:

- host -> GPU: the small leaves are packed into one pinned block (a memory copy on
  the CPU), the block goes to the GPU in one asynchronous copy, and the new leaves
  are views of the GPU block. Leaves already in pinned memory are not packed: each
  is copied asynchronously (what a copy from pinned memory costs is its launch).
- GPU -> host: the small leaves are packed on the GPU (one ``stack`` per run of
  same-shaped leaves), the block comes back in one copy into pinned memory, and the
  new leaves are views of it. As torch's ``Tensor.to("cpu", non_blocking=True)``
  does, the host memory is pinned.

Leaves of :data:`STAGE_LEAF_BYTES` and more are copied as they are (one copy of a
large leaf is already near the bus's speed), as are all leaves past
:data:`STAGE_MAX_BYTES` of staged bytes: a move never takes more than that much
extra memory on either side. Every copy is issued asynchronously and the call
synchronises once at the end, unless ``non_blocking=True`` (then, as for a tensor,
the caller synchronises before reading on another stream or on the host).

The leaves of the result share one storage per block: writing into one leaf never
touches another, but a leaf keeps the whole block alive.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tensordict._disk import _pool, _usable_cpus
from tensordict._structure import Layout
from tensordict.memmap import MemoryMappedTensor

__all__ = ["STAGE_LEAF_BYTES", "STAGE_MAX_BYTES", "staged_leaves"]

#: Leaves smaller than this are gathered into a block; larger ones move as they are.
STAGE_LEAF_BYTES = 1 << 20
#: At most this many bytes are gathered per call (the extra memory a move may take).
STAGE_MAX_BYTES = 256 << 20
#: From this many bytes on, the host packs a block with several threads (one thread
#: copies 5-10 GB/s; the launch of a thread's share costs tens of microseconds).
PACK_THREADS_BYTES = 2 << 20
PACK_THREADS_MAX = 4


def staged_leaves(
    leaves: list[Tensor], device: torch.device, non_blocking: bool
) -> list[Tensor] | None:
    """``leaves`` moved to ``device``, the small ones through one block; None when the
    move is not between the host and one GPU, when fewer than two leaves are small,
    or when a leaf must keep its own autograd history or memory (leaves that require
    grad, sparse or nested leaves, tensor subclasses): ``to`` then goes leaf by leaf."""
    if not _stageable(leaves, device):
        return None
    source = leaves[0].device
    gpu = device if device.type != "cpu" else source
    if source.type == "cpu" and leaves[0].is_pinned():
        # pinned leaves (asked once, of the first: each ask costs microseconds) are
        # not packed, which would copy their bytes once more on the CPU (585 µs for
        # 6.5 MB on an H200's host): one block is allocated on the GPU and every leaf
        # copied into its view, the copies queued from C++ in one call
        layout = Layout.of(leaves)
        block = torch.empty(layout.nbytes, dtype=torch.uint8, device=device)
        moved = layout.views(block)
        with torch.no_grad():
            torch._foreach_copy_(moved, leaves, non_blocking=True)
        if not non_blocking:
            torch.cuda.current_stream(gpu).synchronize()
        return moved
    small, budget = [], STAGE_MAX_BYTES
    for pos, leaf in enumerate(leaves):
        nbytes = leaf.numel() * leaf.element_size()
        if nbytes < STAGE_LEAF_BYTES and nbytes <= budget:
            small.append(pos)
            budget -= nbytes
    if len(small) < 2:
        return None
    staged = [leaves[pos] for pos in small]
    layout = Layout.of(staged)
    with torch.no_grad():
        if device.type == "cpu":  # pack on the GPU, one copy back into pinned memory
            packed = torch.empty(layout.nbytes, dtype=torch.uint8, device=source)
            layout.pack(staged, packed)
            block = torch.empty(layout.nbytes, dtype=torch.uint8, pin_memory=True)
            block.copy_(packed, non_blocking=True)
        else:  # pack in pinned memory, one copy to the GPU
            packed = torch.empty(layout.nbytes, dtype=torch.uint8, pin_memory=True)
            pool, pieces = _pack_threads(layout.nbytes)
            layout.pack(staged, packed, pool, pieces)
            block = packed.to(device, non_blocking=True)
        moved = list(leaves)
        for pos, view in zip(small, layout.views(block)):
            moved[pos] = view
        staged_positions = set(small)
        for pos, leaf in enumerate(leaves):
            if pos not in staged_positions:
                moved[pos] = leaf.to(device, non_blocking=True)
    if not non_blocking:
        torch.cuda.current_stream(gpu).synchronize()
    return moved


def _pack_threads(nbytes: int) -> tuple:
    """``(pool, pieces)`` for packing ``nbytes`` on the host: the memory copy is what
    a pageable move to the GPU spends its time on (6.5 MB: about 1 ms on one thread
    against 0.12 ms for the copy over the bus), so a large block is split over a few
    threads kept for the life of the process."""
    threads = min(PACK_THREADS_MAX, _usable_cpus() // 2)
    if nbytes < PACK_THREADS_BYTES or threads < 2:
        return None, 1
    return _pool("stage", threads), threads


def _stageable(leaves: list[Tensor], device: torch.device) -> bool:
    """Whether every leaf is a plain strided tensor on the host going to one GPU, or
    on one GPU coming to the host, with no autograd history to keep. (Each check is an
    attribute read: a few hundred nanoseconds a leaf in all. A leaf with a lazy
    conjugate or negative bit is copied as its values, as ``Tensor.to`` does.)"""
    if len(leaves) < 2 or device.type not in ("cpu", "cuda"):
        return False
    source = leaves[0].device
    to_host = device.type == "cpu"
    if to_host == (source.type == "cpu") or source.type not in ("cpu", "cuda"):
        return False
    grad = torch.is_grad_enabled()
    on_host = not to_host
    for leaf in leaves:
        kind = type(leaf)
        if (
            (kind is not Tensor and kind is not MemoryMappedTensor)
            or leaf.is_cpu is not on_host
            or leaf.is_nested
            or leaf.layout is not torch.strided
            or (grad and leaf.requires_grad)
        ):
            return False
    if not on_host and len({leaf.device for leaf in leaves}) > 1:
        return False  # leaves on several GPUs
    return True
