#!/usr/bin/env python
"""send/recv between two gloo processes: ours, the reference (0.15.3) and by hand.

    .venv/bin/python benchmarks/bench_distributed.py [--rounds 3] [--out FILE]

pytest-benchmark times one process; these need two, so this script spawns a two-rank
gloo group per implementation and round (ours and the reference alternate, each from a
scratch directory with PYTHONPATH cleared so that each imports its own package). In a
group, rank 0 sends and rank 1 receives ``REPEAT`` transfers back to back after a
barrier; the time per transfer is measured on the receiver, and each case reports the
median of ``SAMPLES`` such runs. The table gives the median over rounds and the range
of the per-round ratios (the noise of a shared machine).

Cases (100 leaves: 10 nested tensordicts of 10 float32 leaves each):
- ``send_recv`` — a plain tensordict, ``send``/``recv``;
- ``consolidated`` — consolidated on both sides, ``send(consolidated=True)`` /
  ``recv(consolidated=True)``;
- ``hand`` — the same bytes as one uint8 tensor with ``torch.distributed.send``/``recv``
  (the floor a consolidated transfer is compared with);
- ``check`` (ours only) — what the structure check costs per transfer on one side:
  building the signature and its hash (µs), and its bytes on the wire.
Each at two leaf sizes: ``small`` (64x16: 400 KB in all) and ``large`` (256x256: 26 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SIZES = {"small": (64, 16), "large": (256, 256)}
REPEAT = {"small": 20, "large": 3}
SAMPLES = 7


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

    def timed(name, send, recv, repeat):
        samples = []
        for _ in range(2):  # warm-up
            send() if rank == 0 else recv()
        for _ in range(SAMPLES):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(repeat):
                send() if rank == 0 else recv()
            elapsed = time.perf_counter() - t0
            samples.append(elapsed / repeat * 1e6)
        results[name] = statistics.median(samples)

    for size, shape in SIZES.items():
        repeat = REPEAT[size]
        td = _make(torch, TensorDict, shape, 1.0 if rank == 0 else 0.0)
        timed(f"send_recv[{size}]", lambda: td.send(1), lambda: td.recv(0), repeat)
        if rank == 1:
            assert (td["g3", "l2"] == 3.0).all()
        try:
            c = td.consolidate(metadata=True)
        except TypeError:
            c = td.consolidate()
        timed(
            f"consolidated[{size}]",
            lambda: c.send(1, consolidated=True),
            lambda: c.recv(0, consolidated=True),
            repeat,
        )
        if rank == 1:
            assert (c["g3", "l2"] == 3.0).all()
        nbytes = sum(v.numel() * v.element_size() for v in td.values(True, True))
        flat = torch.zeros(nbytes, dtype=torch.uint8)
        timed(
            f"hand[{size}]",
            lambda: dist.send(flat, 1),
            lambda: dist.recv(flat, 0),
            repeat,
        )
        try:
            from tensordict._distributed import _Plan
        except ImportError:
            continue
        t0 = time.perf_counter()
        for _ in range(50):
            plan = _Plan(td)
        results[f"check_us[{size}]"] = (time.perf_counter() - t0) / 50 * 1e6
        results[f"check_bytes[{size}]"] = 64 + len(plan.sig)
    if rank == 1:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        "--reference-venv", default=os.path.join(os.path.dirname(REPO), "reference-venv")
    )
    parser.add_argument("--out", default=os.path.join(HERE, "results_distributed.md"))
    parser.add_argument("--group", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.group:
        import torch.multiprocessing as mp

        mp.spawn(_worker, args=(_free_port(), args.group), nprocs=2, join=True)
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
        "| per-round ratios | ours / hand |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for case in rounds["ours"][0]:
        if case.startswith("check"):
            continue
        ours = statistics.median(r[case] for r in rounds["ours"])
        ref = statistics.median(r[case] for r in rounds["reference"])
        ratios = [b[case] / a[case] for a, b in zip(rounds["ours"], rounds["reference"])]
        size = case[case.index("[") :]
        hand = statistics.median(r[f"hand{size}"] for r in rounds["ours"])
        lines.append(
            f"| {case} | {ours:,.0f} | {ref:,.0f} | {ref / ours:.2f} | "
            f"{min(ratios):.2f}–{max(ratios):.2f} | {ours / hand:.2f} |"
        )
    for size in SIZES:
        us = statistics.median(r[f"check_us[{size}]"] for r in rounds["ours"])
        nbytes = rounds["ours"][0][f"check_bytes[{size}]"]
        lines.append(
            f"\nStructure check ({size}): {us:.0f} µs per side per transfer (signature "
            f"+ hash), {nbytes} bytes on the wire."
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
