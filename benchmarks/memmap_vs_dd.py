#!/usr/bin/env python
"""``memmap_`` of 1 GiB in 100 leaves against a dd-style write of the same bytes.

    .venv/bin/python benchmarks/memmap_vs_dd.py [--rounds 5] [--fsync] [--size-mib 1024]

Issue 10's target: ``td.memmap_(folder)`` within 1.2x of the disk's sequential write
speed on the same machine. Both sides run in this one process, alternately (dd, memmap_,
memmap_, dd, dd, ...: each goes first in every other round), on the same tensors already in RAM, into fresh folders of the same
file system (``--dir``, default the temporary folder); each side's figure is its best
round, and the ratio is best over best (the per-round ratios are printed too, to show
the noise). The dd side writes each leaf's bytes to its own file with ``os.write`` in
one pass, what ``dd if=... of=... bs=<leaf size>`` does. Neither side syncs by default
(``memmap_`` does not: the bytes reach the page cache and the kernel writes them
back); ``--fsync`` makes both sides fsync every file they wrote before the clock stops.
Between rounds, outside the timed part, the folder is removed and ``os.sync()`` runs,
so that neither side pays for the writeback of the other's bytes.

Each write is timed twice: wall time, and the process's CPU time (user + system, all
threads). On the shared development machine single rounds of either side took 2-9x
their usual time, with the CPU time rising as much as the wall time (so the writer was
not sleeping on writeback), with 17 GiB of memory free (so it was not reclaiming pages)
and no dirty pages left (``os.sync()``): the host's contention, which no ordering here
removes. So every round's ratio is printed, and the median of the per-round ratios is
given beside the best over best; a side's slow round moves the median by one place.
"""

from __future__ import annotations

import argparse
import os
import statistics
import shutil
import tempfile
import time
import uuid

import torch

from tensordict import TensorDict


def dd_style(leaves: dict, folder: str, fsync: bool) -> None:
    os.makedirs(folder)
    for key, value in leaves.items():
        fd = os.open(os.path.join(folder, key), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            view = memoryview(value.numpy()).cast("B")
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)


def with_memmap(leaves: dict, folder: str, fsync: bool) -> None:
    TensorDict(dict(leaves), batch_size=[]).memmap_(folder)
    if fsync:
        for root, _, files in os.walk(folder):
            for name in files:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--size-mib", type=int, default=1024)
    p.add_argument("--leaves", type=int, default=100)
    p.add_argument(
        "--fsync", action="store_true", help="fsync every file on both sides"
    )
    p.add_argument("--dir", default=None, help="where the folders go (default: TMPDIR)")
    args = p.parse_args()

    leaf_bytes = (args.size_mib << 20) // args.leaves
    leaves = {
        f"k{i}": torch.randn(leaf_bytes // 4 // 256, 256) for i in range(args.leaves)
    }
    total = sum(v.numel() * v.element_size() for v in leaves.values())
    scratch = tempfile.mkdtemp(prefix="memmap-vs-dd-", dir=args.dir)
    sides = {"dd-style": dd_style, "memmap_": with_memmap}
    times: dict = {name: [] for name in sides}
    cpu: dict = {name: [] for name in sides}
    try:
        for round_ in range(args.rounds):
            order = list(sides.items())
            for name, write in order if round_ % 2 == 0 else order[::-1]:
                folder = os.path.join(scratch, uuid.uuid4().hex)
                os.sync()  # neither side pays for the writeback of the one before
                start, start_cpu = time.perf_counter(), time.process_time()
                write(leaves, folder, args.fsync)
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
                shutil.rmtree(folder)
        back = TensorDict.load_memmap  # a last check that memmap_ wrote the bytes
        folder = os.path.join(scratch, "check")
        with_memmap(leaves, folder, False)
        assert torch.equal(back(folder)["k7"], leaves["k7"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(
        f"{total / 2**20:.0f} MiB in {args.leaves} leaves, {args.rounds} rounds alternating, "
        f"fsync={'on both sides' if args.fsync else 'off on both sides'}, dir={scratch}"
    )
    for clock, table in (("wall", times), ("cpu", cpu)):
        best = {name: min(ts) for name, ts in table.items()}
        for name, ts in table.items():
            print(
                f"  {clock:4s} {name:9s} best {best[name]:.3f} s ({total / best[name] / 2**20:,.0f} MiB/s), "
                f"median {statistics.median(ts):.3f} s; rounds: {', '.join(f'{t:.3f}' for t in ts)}"
            )
        per_round = [m / d for m, d in zip(table["memmap_"], table["dd-style"])]
        print(
            f"  {clock:4s} memmap_ / dd-style: {best['memmap_'] / best['dd-style']:.2f}x best over "
            f"best, {statistics.median(per_round):.2f}x median of the rounds; per round: "
            f"{', '.join(f'{r:.2f}' for r in per_round)}"
        )


if __name__ == "__main__":
    main()
