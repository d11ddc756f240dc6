#!/usr/bin/env python
"""send/recv between two gloo processes: ours, the reference (0.15.3) and by hand.

    .venv/bin/python benchmarks/bench_distributed.py [--rounds 3] [--out FILE]

pytest-benchmark times one process; these need two, so this script spawns a two-rank
gloo group per implementation and round (ours and the reference alternate, each from a
scratch directory with PYTHONPATH cleared so that each imports its own package). In a
group, after a warm-up of each case in both directions, one rank sends and the other
receives, ``SAMPLES`` times (the ranks swap roles every sample) after a barrier,
``REPEAT`` sweeps of one transfer of each case in turn (``A B C D A B ...``, the order
rotated every sweep): every transfer has a ``hand`` transfer of the same sweep beside
it in time, so that a busy machine slows the two alike (on the shared 2-core machine a
wake-up that waits for a core costs a scheduler tick, 4 ms, whatever sent the message;
sampled case by case, 20 transfers at a time, one case's ratio to ``hand`` could come
out 1.5x in one round from that alone). Each transfer is timed on each rank and rank
1's times are kept; each case reports the median time of one transfer, the median over
the sweeps of its ratio to that sweep's ``hand`` transfer, and the ratio of the process
CPU time of its transfers to ``hand``'s (time spent waiting for a core is not CPU
time). The table gives the median over rounds and every round's ratio. Ours and the reference run in different groups,
at different moments of a shared machine's load, so their absolute times also carry
the load's swings; the last column divides them out: per round, the reference's
time/hand over ours' time/hand, each measured against the ``hand`` transfer sampled
beside it in its own group. A second table splits ours' ratio to ``hand`` by the role
of rank 1 (sending or receiving): a transfer's time on one rank includes waiting for
the other rank to finish the case before it, so a case that follows one with a long
receiving tail (``send_recv``: the receiver unpacks 100 leaves) shows it when rank 1
sends.

Cases (100 leaves: 10 nested tensordicts of 10 float32 leaves each):
- ``send_recv`` — a plain tensordict, ``send``/``recv``;
- ``consolidated`` — consolidated on both sides, ``send(consolidated=True)`` /
  ``recv(consolidated=True)``;
- ``hand`` — the same bytes as one uint8 tensor with ``torch.distributed.send``/``recv``
  (the floor a consolidated transfer is compared with);
- ``hand_two_messages`` — by hand, what a checked transfer needs at least: a header
  message (the size of ours), then the data, whose receive is posted once the header
  has arrived (gloo moves a message only when both sides have posted it, so this costs
  a round trip more than ``hand``);
- ``hand_staged`` — by hand, what a checked transfer in one message needs at least:
  the header's room and the data as one message from one tensor, received into a
  1 MiB buffer (a receiver cannot post less: a longer message would abort it), then
  the data copied into the destination (the floor of ours' consolidated transfer);
- ``check`` (ours only) — what the structure check costs per transfer on one side:
  building the signature and its hash (µs; for a consolidated tensordict, the cached
  plan), and its bytes on the wire.
Each at two leaf sizes: ``small`` (64x16: 400 KB in all) and ``large`` (256x256: 26 MB).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _two_ranks import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SIZES = {"small": (64, 16), "large": (256, 256)}
REPEAT = {"small": 20, "large": 3}
SAMPLES = 12


def _make(torch, TensorDict, shape, value=1.0):
    return TensorDict(
        {
            f"g{g}": {f"l{i}": torch.full(shape, value + i) for i in range(10)}
            for g in range(10)
        },
        batch_size=[],
    )


def _worker(rank, port, out_path):
    import torch
    import torch.distributed as dist
    from tensordict import TensorDict

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2
    )
    results = {}

    def timed(cases: dict, repeat: int) -> None:
        """Time the cases transfer by transfer, in turn (``A B C D A B C D ...``, the
        order rotated every sweep), so that each transfer of a case has a ``hand``
        transfer next to it in time: a busy machine slows neighbours alike. Per case:
        the median time of one transfer, the median over the sweeps of its ratio to
        the ``hand`` transfer of the same sweep, and the ratio of the process CPU time
        of all its transfers to ``hand``'s (not counting time spent waiting for a
        core that another job holds)."""
        walls = {name: [] for name in cases}
        cpus = {name: 0.0 for name in cases}
        sending = []  # per sweep: whether rank 1 was the sender
        names = list(cases)
        other = 1 - rank
        clock, cpu_clock = time.perf_counter, time.process_time
        for name in names:  # warm-up, both directions
            for sender in (0, 1, 0, 1):
                send, recv = cases[name]
                send(other) if rank == sender else recv(other)
        sweep = 0
        for i in range(SAMPLES):
            sender = i % 2  # the ranks swap roles every sample
            dist.barrier()
            for _ in range(repeat):
                k = sweep % len(names)
                sweep += 1
                sending.append(rank == sender)
                for name in names[k:] + names[:k]:
                    send, recv = cases[name]
                    c0, t0 = cpu_clock(), clock()
                    send(other) if rank == sender else recv(other)
                    t1, c1 = clock(), cpu_clock()
                    walls[name].append((t1 - t0) * 1e6)
                    cpus[name] += c1 - c0
        hand = next(name for name in names if name.startswith("hand["))
        for name, values in walls.items():
            results[name] = statistics.median(values)
            results[f"{name}/hand"] = statistics.median(
                a / b for a, b in zip(values, walls[hand])
            )
            results[f"{name}/hand cpu"] = cpus[name] / cpus[hand]
            # the same ratio over the sweeps where this rank sent, and received: a
            # transfer's time on one rank includes waiting for the other rank to
            # finish the case before it (the rotation puts ``send_recv``, whose
            # receiver unpacks 100 leaves, before ``consolidated`` in most sweeps)
            for role, flag in (("sending", True), ("receiving", False)):
                results[f"{name}/hand {role}"] = statistics.median(
                    a / b for a, b, s in zip(values, walls[hand], sending) if s == flag
                )

    header = torch.zeros(3265, dtype=torch.uint8)  # our header + signature, 100 leaves

    def two_messages_send(flat, peer):
        works = [dist.isend(header, peer, tag=1), dist.isend(flat, peer, tag=2)]
        for work in works:
            work.wait()

    def two_messages_recv(flat, peer):
        # as a receiver that checks a header before it posts the data's receive
        dist.irecv(header, peer, tag=1).wait()
        dist.irecv(flat, peer, tag=2).wait()

    first = torch.empty(1 << 20, dtype=torch.uint8)  # as ours' first-message buffer
    room = 3328  # our header and signature at 100 leaves, aligned

    def staged_recv(into, peer):
        dist.recv(first, peer)  # the message is shorter: it arrives whole
        # one memmove, as ours copies (torch's copy_ would split it over threads)
        ctypes.memmove(into.data_ptr(), first.data_ptr() + room, into.numel())

    for size, shape in SIZES.items():
        repeat = REPEAT[size]
        # rank 1 starts from other values: the first transfer (0 -> 1) sets them
        start = 1.0 if rank == 0 else 0.0
        td = _make(torch, TensorDict, shape, start)
        try:
            c = _make(torch, TensorDict, shape, start).consolidate(metadata=True)
        except TypeError:
            c = td.consolidate()
        nbytes = sum(v.numel() * v.element_size() for v in td.values(True, True))
        flat = torch.zeros(nbytes, dtype=torch.uint8)
        staged = torch.zeros(room + nbytes, dtype=torch.uint8)
        cases = {}
        if room + nbytes <= first.numel():  # one message (the small case)
            cases[f"hand_staged[{size}]"] = (
                lambda p: dist.send(staged, p),
                lambda p: staged_recv(flat, p),
            )
        timed(
            {
                f"send_recv[{size}]": (lambda p: td.send(p), lambda p: td.recv(p)),
                f"consolidated[{size}]": (
                    lambda p: c.send(p, consolidated=True),
                    lambda p: c.recv(p, consolidated=True),
                ),
                f"hand[{size}]": (
                    lambda p: dist.send(flat, p),
                    lambda p: dist.recv(flat, p),
                ),
                f"hand_two_messages[{size}]": (
                    lambda p: two_messages_send(flat, p),
                    lambda p: two_messages_recv(flat, p),
                ),
                **cases,
            },
            repeat,
        )
        assert (td["g3", "l2"] == 3.0).all()
        assert (c["g3", "l2"] == 3.0).all()
        try:
            from tensordict._distributed import _Plan
        except ImportError:
            continue
        t0 = time.perf_counter()
        for _ in range(50):
            plan = _Plan(td)
        results[f"check_us[{size}]"] = (time.perf_counter() - t0) / 50 * 1e6
        results[f"check_bytes[{size}]"] = 64 + len(plan.sig)
        t0 = time.perf_counter()
        for _ in range(50):
            _Plan.of(c)
        results[f"check_cached_us[{size}]"] = (time.perf_counter() - t0) / 50 * 1e6
    if rank == 1:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


def _run_group(python: str, scratch: str) -> dict:
    out_path = os.path.join(scratch, "result.json")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [python, os.path.join(HERE, "bench_distributed.py"), "--group", out_path],
        cwd=scratch,
        env=env,
        check=True,
        timeout=900,
    )
    with open(out_path) as f:
        return json.load(f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ours-python", default=sys.executable)
    parser.add_argument(
        "--reference-venv",
        default=os.path.join(os.path.dirname(REPO), "reference-venv"),
    )
    parser.add_argument("--out", default=os.path.join(HERE, "results_distributed.md"))
    parser.add_argument("--group", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.group:
        import torch.multiprocessing as mp

        mp.spawn(_worker, args=(free_port(), args.group), nprocs=2, join=True)
        return
    ref_python = os.path.join(args.reference_venv, "bin", "python")
    rounds = {"ours": [], "reference": []}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.rounds):
            for name, python in (("ours", args.ours_python), ("reference", ref_python)):
                print(f"[round {r + 1}] {name}: {python}", file=sys.stderr)
                rounds[name].append(_run_group(python, scratch))
    lines = [
        "| case | ours (µs) | reference 0.15.3 (µs) | ratio ref/ours (>1: ours faster) "
        "| per-round ratios ref/ours | ours / hand (per round) "
        "| ours / hand, CPU time (per round) "
        "| per-round ratios ref/ours, each against its group's hand |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case in rounds["ours"][0]:
        if case.startswith("check") or "/" in case:
            continue
        ours = statistics.median(r[case] for r in rounds["ours"])
        ref = statistics.median(r[case] for r in rounds["reference"])
        ratios = [
            b[case] / a[case] for a, b in zip(rounds["ours"], rounds["reference"])
        ]
        to_hand = [r[f"{case}/hand"] for r in rounds["ours"]]
        to_hand_cpu = [r[f"{case}/hand cpu"] for r in rounds["ours"]]
        against_hand = [
            b[f"{case}/hand"] / a[f"{case}/hand"]
            for a, b in zip(rounds["ours"], rounds["reference"])
        ]
        lines.append(
            f"| {case} | {ours:,.0f} | {ref:,.0f} | {ref / ours:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in ratios)} | "
            f"{', '.join(f'{x:.2f}' for x in to_hand)} | "
            f"{', '.join(f'{x:.2f}' for x in to_hand_cpu)} | "
            f"{', '.join(f'{x:.2f}' for x in against_hand)} |"
        )
    lines.append(
        "\nOurs / hand by the role of the rank timed (rank 1), per round:\n\n"
        "| case | rank 1 sending | rank 1 receiving |\n|---|---:|---:|"
    )
    for case in rounds["ours"][0]:
        if case.startswith("check") or "/" in case or case.startswith("hand["):
            continue
        by_role = [
            ", ".join(f"{r[f'{case}/hand {role}']:.2f}" for r in rounds["ours"])
            for role in ("sending", "receiving")
        ]
        lines.append(f"| {case} | {by_role[0]} | {by_role[1]} |")
    for size in SIZES:
        us = statistics.median(r[f"check_us[{size}]"] for r in rounds["ours"])
        cached = statistics.median(
            r[f"check_cached_us[{size}]"] for r in rounds["ours"]
        )
        nbytes = rounds["ours"][0][f"check_bytes[{size}]"]
        lines.append(
            f"\nStructure check ({size}): {us:.0f} µs per side per transfer (signature "
            f"+ hash of a plain tensordict), {cached:.1f} µs for a consolidated one "
            f"(cached), {nbytes} bytes on the wire."
        )
    table = "\n".join(lines)
    print(table)
    with open(args.out, "w") as f:
        f.write(
            f"# send/recv between two gloo processes ({args.rounds} rounds)\n\n{table}\n"
        )
    print(f"written: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
