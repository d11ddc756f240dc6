"""Issue 15's floor table: the 15 cases of ``test_bench_floor15.py`` (tensordict
beside the same work by hand on plain dicts), timed in one process, round by round.

    .venv/bin/python benchmarks/floor_table.py --rounds 3

Each round times every case's ``[td]`` and ``[floor]`` call back to back (the best of
``--repeat`` runs of as many calls as fill about 20 ms each) and prints, per case, the
ratio td / floor of every round and their median, then each round's geometric mean.
Targets (issue 15): geometric mean <= 1.7, no case over 4x except construct_flat
(<= 10x); ``--check`` exits 1 when a round misses one.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import timeit

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_floor15 import CASES  # noqa: E402

LIMITS = {"construct_flat": 10.0}
DEFAULT_LIMIT = 4.0
GEOMEAN_TARGET = 1.7


def best_time(fn, repeat: int, timer) -> float:
    """Seconds per call: the best of ``repeat`` runs of about 20 ms."""
    t = timeit.Timer(fn, timer=timer)
    number = 1
    while t.timeit(number) < 0.02:
        number *= 2
    return min(t.repeat(repeat, number)) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the thread's CPU time (time.thread_time) instead of wall time: "
        "less disturbed by other processes on shared cores",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 on a missed target"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("TENSORDICT_BENCH_THREADS", "1")))
    timer = time.thread_time if args.cpu_time else time.perf_counter

    ratios = {name: [] for name in CASES}
    times = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, make in CASES.items():
            td_s = best_time(make("td"), args.repeat, timer)
            floor_s = best_time(make("floor"), args.repeat, timer)
            ratios[name].append(td_s / floor_s)
            times[name].append((td_s, floor_s))

    missed = []
    print(f"| case | td (µs) | floor (µs) | td / floor, per round | median | limit |")
    print("|---|---:|---:|---|---:|---:|")
    for name in CASES:
        limit = LIMITS.get(name, DEFAULT_LIMIT)
        td_us = statistics.median(t for t, _ in times[name]) * 1e6
        floor_us = statistics.median(f for _, f in times[name]) * 1e6
        per_round = ", ".join(f"{r:.2f}" for r in ratios[name])
        median = statistics.median(ratios[name])
        if max(ratios[name]) > limit:
            missed.append(f"{name}: {max(ratios[name]):.2f} > {limit}")
        print(
            f"| {name} | {td_us:.2f} | {floor_us:.2f} | {per_round} | {median:.2f} | "
            f"{limit:g} |"
        )
    geomeans = [
        math.exp(statistics.fmean(math.log(ratios[name][i]) for name in CASES))
        for i in range(args.rounds)
    ]
    print()
    print(
        "geometric mean td / floor, per round: "
        + ", ".join(f"{g:.2f}" for g in geomeans)
        + f" (target <= {GEOMEAN_TARGET})"
    )
    missed += [
        f"geomean round {i + 1}: {g:.2f}"
        for i, g in enumerate(geomeans)
        if g > GEOMEAN_TARGET
    ]
    if missed:
        print("missed: " + "; ".join(missed))
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
