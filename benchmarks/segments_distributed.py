#!/usr/bin/env python
"""Where ours' consolidated 400 KB transfer spends its time, beside its by-hand floor.

    .venv/bin/python benchmarks/segments_distributed.py [--transfers 1200]

Two gloo processes on this machine alternate two cases, transfer by transfer (the
ranks swap roles every 50 transfers): ours (a consolidated tensordict of 100 leaves of
64x16 float32, ``send``/``recv``) and ``staged`` (by hand, what a checked one-message
transfer does at least: the header's room and the data as one message, received into
a 1 MiB buffer, then one ``memmove`` of the data into its destination; the
``hand_staged`` case of ``bench_distributed.py``). Per side, the medians (µs, on rank
1) of: the steps before the message is posted (``pre``), the post itself (``post``),
the wait for the message (``wait``), the steps after it (``after``: for the receiver,
the copy and, for ours, the check), and the whole call. Unlike ``bench_distributed.py``
no other case runs between them, so that what differs is each call's own steps.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time

from _two_ranks import run_two_ranks

SEGMENTS = ("pre", "post", "wait", "after", "total")
ROOM = 3328  # ours' header and signature at 100 leaves, aligned


def _worker(rank, port, transfers, queue):
    import torch
    import torch.distributed as dist

    import tensordict._distributed as transport
    from tensordict import TensorDict

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2
    )
    ns = time.perf_counter_ns
    marks = {}

    class Work:  # records when the wait for a message returns
        def __init__(self, work):
            self.work = work

        def wait(self, *args):
            done = self.work.wait(*args)
            marks["waited"] = ns()
            return done

    post_send, post_recv = transport._pg_send, transport._pg_recv

    def timed(post):
        def posting(*args):
            marks["post"] = ns()
            work = post(*args)
            marks["posted"] = ns()
            return Work(work)

        return posting

    transport._pg_send = timed(post_send)
    transport._pg_recv = timed(post_recv)
    other = 1 - rank
    td = TensorDict(
        {
            f"g{g}": {f"l{i}": torch.full((64, 16), float(rank + i)) for i in range(10)}
            for g in range(10)
        },
        batch_size=[],
    ).consolidate()
    first = torch.empty(1 << 20, dtype=torch.uint8)
    into = torch.zeros(409600, dtype=torch.uint8)
    staged = torch.zeros(ROOM + into.numel(), dtype=torch.uint8)

    def timed(post):
        marks["post"] = ns()
        work = post()
        marks["posted"] = ns()
        work.wait()
        marks["waited"] = ns()

    def staged_send():
        timed(lambda: dist.isend(staged, other))

    def staged_recv():
        timed(lambda: dist.irecv(first, other))
        ctypes.memmove(into.data_ptr(), first.data_ptr() + ROOM, into.numel())

    cases = {
        "ours": (lambda: td.send(other), lambda: td.recv(other)),
        "staged": (staged_send, staged_recv),
    }
    times = {(name, side): {k: [] for k in SEGMENTS} for name in cases for side in "SR"}
    for i in range(transfers):
        if i % 50 == 0:
            dist.barrier()
        sender = (i // 50) % 2
        for name in ("ours", "staged") if i % 2 else ("staged", "ours"):
            send, recv = cases[name]
            t0 = ns()
            send() if rank == sender else recv()
            t1 = ns()
            row = times[(name, "S" if rank == sender else "R")]
            row["pre"].append(marks["post"] - t0)
            row["post"].append(marks["posted"] - marks["post"])
            row["wait"].append(marks["waited"] - marks["posted"])
            row["after"].append(t1 - marks["waited"])
            row["total"].append(t1 - t0)
    medians = {
        key: {k: statistics.median(v) / 1e3 for k, v in row.items()}
        for key, row in times.items()
    }
    queue.put((rank, medians))
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transfers", type=int, default=1200)
    args = parser.parse_args()
    by_rank = run_two_ranks(_worker, args.transfers)
    medians = by_rank[1]
    print(f"load average: {os.getloadavg()}")
    print("| side | segment | ours (µs) | staged (µs) |\n|---|---|---:|---:|")
    for side, name in (("S", "sender"), ("R", "receiver")):
        for k in SEGMENTS:
            ours, staged = medians[("ours", side)][k], medians[("staged", side)][k]
            print(f"| {name} | {k} | {ours:,.1f} | {staged:,.1f} |")
    for side, name in (("S", "sender"), ("R", "receiver")):
        ratio = medians[("ours", side)]["total"] / medians[("staged", side)]["total"]
        print(f"{name}: ours / staged, whole call: {ratio:.2f}")


if __name__ == "__main__":
    main()
