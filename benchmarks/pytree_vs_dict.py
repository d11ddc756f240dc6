#!/usr/bin/env python
"""``tree_flatten`` / ``tree_map`` of a 100-leaf tensordict against the same call on the
plain dict of the same tensors, in one process.

    .venv/bin/python benchmarks/pytree_vs_dict.py [--rounds 3] [--repeats 300]

Issue 13's target: within 1.3x of the plain dict, for a flat tensordict (100 leaves)
and a nested one (10 x 10). ``test_bench_func.py`` measures the same calls with
pytest-benchmark, where the tensordict case and its floor run seconds apart, so on a
machine whose other jobs come and go one of them may catch a quiet moment and the other
not. Here the two alternate in short bursts (``--number`` calls each, tensordict first
in even bursts, dict first in odd ones) and each side's figure is its fastest burst, on
the CPU time of this thread (``time.thread_time``: time spent waiting for a core while
other jobs run is not counted). A round is ``--repeats`` bursts a side; each round prints
its own ratio, tensordict / dict (< 1.3 meets the target).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
import torch.utils._pytree as pytree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_func import flat_dict, nested_dict  # noqa: E402

from tensordict import TensorDict  # noqa: E402


def fastest_bursts(first, second, number: int, repeats: int) -> tuple[float, float]:
    """The fastest burst of ``number`` calls of each function, µs per call."""
    clock = time.thread_time
    best = [float("inf"), float("inf")]
    for i in range(repeats):
        order = ((0, first), (1, second)) if i % 2 == 0 else ((1, second), (0, first))
        for side, fn in order:
            start = clock()
            for _ in range(number):
                fn()
            best[side] = min(best[side], clock() - start)
    return best[0] / number * 1e6, best[1] / number * 1e6


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeats", type=int, default=300, help="bursts a side per round")
    p.add_argument("--number", type=int, default=20, help="calls per burst")
    args = p.parse_args()
    torch.set_num_threads(1)  # as the pytest-benchmark suites (benchmarks/conftest.py)
    print(
        f"torch {torch.__version__}; {args.rounds} rounds of {args.repeats} bursts "
        f"of {args.number} calls a side; ratio = tensordict / plain dict"
    )
    print("| call | shape | tensordict (µs) | dict (µs) | per-round ratios |")
    print("|---|---|---:|---:|---|")
    for shape, make in (("flat100", flat_dict), ("nested10x10", nested_dict)):
        data = make()
        td = TensorDict(data, batch_size=[3])
        calls = {
            "tree_flatten": (
                lambda: pytree.tree_flatten(td),
                lambda: pytree.tree_flatten(data),
            ),
            "tree_map(neg)": (
                lambda: pytree.tree_map(torch.neg, td),
                lambda: pytree.tree_map(torch.neg, data),
            ),
        }
        for name, (on_td, on_dict) in calls.items():
            ratios, td_us, dict_us = [], [], []
            for _ in range(args.rounds):
                a, b = fastest_bursts(on_td, on_dict, args.number, args.repeats)
                td_us.append(a)
                dict_us.append(b)
                ratios.append(a / b)
            print(
                f"| {name} | {shape} | {min(td_us):.1f} | {min(dict_us):.1f} | "
                + " ".join(f"{r:.2f}" for r in ratios)
                + " |",
                flush=True,
            )


if __name__ == "__main__":
    main()
