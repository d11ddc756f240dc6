#!/usr/bin/env python
"""Whole-dataset HDF5 reads: ``PersistentTensorDict`` against h5py by hand, paired.

    .venv/bin/python benchmarks/h5_read_paired.py [--rows 100000] [--rounds 7] [--wall]

Issue 15's target: reading from a ``PersistentTensorDict`` no slower than h5py by hand.
Two cases on one file (``obs`` [rows, 16] float32, ``action`` [rows] int64,
``next/obs`` [rows, 16] float32): one dataset (``h5["next", "obs"]`` against
``torch.from_numpy(f["next"]["obs"][()])``) and every dataset (``h5.to_tensordict()``
against the same three reads into a dict). Both sides run in this one process,
alternately (each goes first in every other round), so that the machine's load hits
them alike; each round times a batch of calls with the thread's CPU time (``--wall``
for wall time) and every round's ratio is printed (h5py time / ours: > 1, ours faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import h5py
import torch

from tensordict import TensorDict
from tensordict.persistent import PersistentTensorDict


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    args = p.parse_args()
    torch.set_num_threads(1)
    clock = time.perf_counter if args.wall else time.thread_time
    rows = args.rows
    gen = torch.Generator().manual_seed(0)
    ram = TensorDict(
        {
            "obs": torch.randn(rows, 16, generator=gen),
            "action": torch.randint(5, (rows,), generator=gen),
            "next": {"obs": torch.randn(rows, 16, generator=gen)},
        },
        [rows],
    )
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "data.h5")
        PersistentTensorDict.from_dict(ram, filename=path).close()
        file = h5py.File(path, "r")
        h5 = PersistentTensorDict.from_h5(path)

        def by_hand_all():
            return {
                "obs": torch.from_numpy(file["obs"][()]),
                "action": torch.from_numpy(file["action"][()]),
                "next": {"obs": torch.from_numpy(file["next"]["obs"][()])},
            }

        cases = {
            "one dataset": (
                lambda: h5["next", "obs"],
                lambda: torch.from_numpy(file["next"]["obs"][()]),
            ),
            "to_tensordict": (h5.to_tensordict, by_hand_all),
        }
        assert torch.equal(h5["next", "obs"], ram["next", "obs"])
        assert (h5.to_tensordict() == ram).all()
        calls = max(20, int(3e8 // (rows * 64 + 20_000)))  # about 0.1-0.3 s a batch

        def per_call(fn) -> float:
            start = clock()
            for _ in range(calls):
                fn()
            return (clock() - start) / calls * 1e6

        print(
            f"{rows} rows, {args.rounds} rounds of {calls} calls a side, {'wall' if args.wall else 'CPU'} time"
        )
        for name, (ours, by_hand) in cases.items():
            ours(), by_hand()
            pairs = []
            for round_ in range(args.rounds):
                if round_ % 2:
                    a = per_call(ours)
                    b = per_call(by_hand)
                else:
                    b = per_call(by_hand)
                    a = per_call(ours)
                pairs.append((a, b))
            ratios = [b / a for a, b in pairs]
            print(
                f"  {name}: ours / h5py µs per round {', '.join(f'{a:.0f}/{b:.0f}' for a, b in pairs)}; "
                f"h5py / ours {', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})"
            )
        h5.close()
        file.close()


if __name__ == "__main__":
    main()
