#!/usr/bin/env python
"""Where the time of one send/recv goes: timestamps on both ranks of a gloo pair.

    .venv/bin/python benchmarks/trace_distributed.py [--transfers 200] [--case small]

Two processes on this machine; rank 0 sends, rank 1 receives. Per transfer, after a
barrier, each rank records when it enters ``send``/``recv``, when each
``torch.distributed.isend``/``irecv`` is entered and returns, when each ``wait()`` is
entered and returns (first and last of each, for transfers of several messages), and
when the call returns; ``hand`` (the same bytes as one tensor with
``torch.distributed.send``/``recv``) alternates with ours transfer by transfer. Both
ranks read the same monotonic clock, so one transfer's events line up; the table gives
each event's median, 10th and 90th percentile (µs after the first rank entered), in
order of the medians. Cases: ``small`` (consolidated, 100 leaves of 64x16 float32, 400
KB) and ``large`` (a plain nested tensordict, 100 leaves of 256x256, 26 MB).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from _two_ranks import run_two_ranks

CASES = {"small": ((64, 16), True), "large": ((256, 256), False)}


def _worker(rank, port, case, transfers, queue):
    import torch
    import torch.distributed as dist

    import tensordict._distributed as transport
    from tensordict import TensorDict

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2
    )
    ns = time.perf_counter_ns
    log: list = []

    class Work:  # a Work that records when wait() is entered and returns
        def __init__(self, work):
            self.work = work

        def wait(self, *args):
            log.append(("wait enter", ns()))
            done = self.work.wait(*args)
            log.append(("wait return", ns()))
            return done

    # each message the transport posts, with when its post is entered and returns
    post_send, post_recv = transport._pg_send, transport._pg_recv

    def isend(*args):
        log.append(("isend enter", ns()))
        work = post_send(*args)
        log.append(("isend return", ns()))
        return Work(work)

    def irecv(*args):
        log.append(("irecv enter", ns()))
        work = post_recv(*args)
        log.append(("irecv return", ns()))
        return Work(work)

    transport._pg_send, transport._pg_recv = isend, irecv
    shape, consolidated = CASES[case]
    start = 1.0 if rank == 0 else 0.0
    td = TensorDict(
        {
            f"g{g}": {f"l{i}": torch.full(shape, start + i) for i in range(10)}
            for g in range(10)
        },
        batch_size=[],
    )
    if consolidated:
        td = td.consolidate()
    flat = torch.zeros(
        sum(v.numel() * v.element_size() for v in td.values(True, True)),
        dtype=torch.uint8,
    )
    records = {"ours": [], "hand": []}
    for i in range(transfers + 4):  # the first 4 are a warm-up
        for name in ("ours", "hand") if i % 2 else ("hand", "ours"):
            dist.barrier()
            log.clear()
            t0 = ns()
            if name == "ours":
                td.send(1) if rank == 0 else td.recv(0)
            else:
                dist.send(flat, 1) if rank == 0 else dist.recv(flat, 0)
            t1 = ns()
            if i >= 4:
                records[name].append((t0, t1, list(log)))
    queue.put((rank, records))
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transfers", type=int, default=200)
    parser.add_argument("--case", choices=sorted(CASES), default="small")
    args = parser.parse_args()
    by_rank = run_two_ranks(_worker, args.case, args.transfers)
    print(f"load average: {os.getloadavg()}")
    for name in ("hand", "ours"):
        rows = []
        for (s0, s1, log0), (r0, r1, log1) in zip(by_rank[0][name], by_rank[1][name]):
            base = min(s0, r0)
            row = {"send enter": s0 - base, "send return": s1 - base}
            row.update({"recv enter": r0 - base, "recv return": r1 - base})
            for side, log in (("send", log0), ("recv", log1)):
                for event, t in log:
                    row.setdefault(f"{side}: first {event}", t - base)
                    row[f"{side}: last {event}"] = t - base
            rows.append(row)
        keys = sorted(rows[0], key=lambda k: statistics.median(r[k] for r in rows))
        print(
            f"\n{name} ({args.case}, {len(rows)} transfers): µs after the first entry"
        )
        print("| event | median | p10 | p90 |\n|---|---:|---:|---:|")
        for key in keys:
            values = sorted(r[key] / 1e3 for r in rows)
            n = len(values)
            print(
                f"| {key} | {statistics.median(values):,.0f} | "
                f"{values[n // 10]:,.0f} | {values[9 * n // 10]:,.0f} |"
            )
    ours = [b[1] - a[0] for a, b in zip(by_rank[0]["ours"], by_rank[1]["ours"])]
    hand = [b[1] - a[0] for a, b in zip(by_rank[0]["hand"], by_rank[1]["hand"])]
    ratios = [o / h for o, h in zip(ours, hand)]
    print(
        f"\nsend entered to recv returned, median: ours {statistics.median(ours) / 1e3:,.0f}"
        f" µs, hand {statistics.median(hand) / 1e3:,.0f} µs; median of the per-pair "
        f"ratios ours/hand {statistics.median(ratios):.2f}",
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
