#!/usr/bin/env python
"""Count the torch.distributed calls and bytes of each tensordict primitive (2 ranks).

    .venv/bin/python benchmarks/count_messages.py

Spawns a two-rank gloo group; in each rank, the ``torch.distributed`` functions that
``tensordict._distributed`` calls are wrapped to count calls and the bytes of the
tensors they are given (what this rank sends or receives). Prints, for 10 and 100
leaves of 4 KB, one row per primitive and rank role: the figures of the table in
``docs/distributed.md`` (also for a tensordict memory-mapped in a folder of a shared
filesystem, which travels as its path: here a temporary folder both ranks read).
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from _two_ranks import free_port

COUNTED = [
    "isend",
    "irecv",
    "broadcast",
    "all_reduce",
    "reduce",
    "all_gather",
    "gather",
    "scatter",
]


def _nbytes(obj) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    return 0


def _make(n: int, value: float):
    from tensordict import TensorDict

    groups = max(1, n // 10)
    return TensorDict(
        {
            f"g{g}": {f"l{i}": torch.full((32, 32), value) for i in range(n // groups)}
            for g in range(groups)
        },
        batch_size=[],
    )


def _worker(rank, port, folder):
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2
    )
    import tensordict._distributed as td_dist
    from tensordict import TensorDict

    counts = collections.Counter()
    sizes = collections.Counter()
    originals = {name: getattr(td_dist.dist, name) for name in COUNTED}

    class Counting:
        def __getattr__(self, name):
            target = getattr(dist, name)
            if name not in COUNTED:
                return target

            def call(*args, **kwargs):
                counts[name] += 1
                sizes[name] += _nbytes(args[0]) + (
                    _nbytes(args[1])
                    if name in ("all_gather", "gather", "scatter")
                    and len(args) > 1
                    and args[1] is not None
                    and rank == 0
                    else 0
                )
                return target(*args, **kwargs)

            return call

    td_dist.dist = Counting()

    def measure(label, fn):
        counts.clear()
        sizes.clear()
        fn()
        dist.barrier()
        calls = sum(counts.values())
        nbytes = sum(sizes.values())
        detail = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
        print(
            f"| {label} | rank {rank} | {calls} | {nbytes:,} | {detail} |", flush=True
        )

    for n in (10, 100):
        td = _make(n, float(rank))
        print(f"\n### {n} leaves of 4 KB (rank {rank})", flush=True)
        measure(f"send/recv ({n})", lambda: td.send(1) if rank == 0 else td.recv(0))
        c = td.consolidate()
        measure(
            f"consolidated send/recv ({n})",
            lambda: c.send(1) if rank == 0 else c.recv(0),
        )
        measure(f"broadcast ({n})", lambda: td.broadcast(0))
        measure(f"all_reduce ({n})", lambda: td.all_reduce())
        measure(f"reduce ({n})", lambda: td.reduce(0))
        measure(f"all_gather ({n})", lambda: td.all_gather())
        parts = [_make(n, 1.0), _make(n, 2.0)] if rank == 0 else None
        measure(f"scatter ({n})", lambda: TensorDict().scatter(0, parts))
        if rank == 0:
            rows = _make(n, 0.0).unsqueeze(0)
            measure(f"gather_and_stack ({n})", lambda: rows.gather_and_stack(0))
        else:
            measure(f"gather_and_stack ({n})", lambda: td.gather_and_stack(0))
        measure(
            f"init_remote ({n})",
            lambda: td.init_remote(1) if rank == 0 else TensorDict.from_remote_init(0),
        )
        # memory-mapped in a folder both ranks read: the path travels, not the data
        if rank == 0:
            mm = _make(n, 5.0).memmap_(os.path.join(folder, f"mm{n}"))
        dist.barrier()
        measure(
            f"memmap send/recv ({n})", lambda: mm.send(1) if rank == 0 else td.recv(0)
        )
        if rank == 1:
            assert (td["g0", "l0"] == 5.0).all()
        measure(
            f"memmap init_remote ({n})",
            lambda: mm.init_remote(1) if rank == 0 else TensorDict.from_remote_init(0),
        )
        measure(
            f"memmap broadcast ({n})", lambda: (mm if rank == 0 else td).broadcast(0)
        )
        mine = _make(n, float(rank)).memmap_(os.path.join(folder, f"mine{n}-{rank}"))
        measure(f"memmap all_gather ({n})", lambda: mine.all_gather())
        parts = (
            [
                _make(n, float(r)).memmap_(os.path.join(folder, f"part{n}-{r}"))
                for r in range(2)
            ]
            if rank == 0
            else None
        )
        measure(f"memmap scatter ({n})", lambda: TensorDict().scatter(0, parts))
        if rank == 0:
            rows = _make(n, 0.0).unsqueeze(0)
            measure(f"memmap gather_and_stack ({n})", lambda: rows.gather_and_stack(0))
        else:
            measure(f"memmap gather_and_stack ({n})", lambda: mine.gather_and_stack(0))
    td_dist.dist = dist
    dist.destroy_process_group()


def main():
    port = free_port()
    print("| call | rank | torch.distributed calls | bytes given to them | calls |")
    print("|---|---|---:|---:|---|")
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(_worker, args=(port, folder), nprocs=2, join=True)


if __name__ == "__main__":
    main()
