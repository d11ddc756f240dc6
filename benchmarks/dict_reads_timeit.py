#!/usr/bin/env python
"""Issue 15's dict-like reads as raw calls (no lambda around them), a flat tensordict
of 100 keys (batch [3, 4]) beside a plain dict of the same tensors, in one process
(and a nested read through two levels, beside the same on nested dicts).

    .venv/bin/python benchmarks/dict_reads_timeit.py [--rounds 3] [--blocks 15]
    TENSORDICT_NO_C=1 .venv/bin/python benchmarks/dict_reads_timeit.py   # pure Python

``test_bench_dict_reads.py`` times each read inside a lambda, whose own call (~35 ns)
is on both sides and shrinks the ratio; here the statement itself is timed with
``timeit`` (thread CPU time). In each round every statement and its dict twin run in
alternating blocks of 100,000 calls; the round's figure for each is its best block,
and its ratio td / dict is printed for every round.
"""

import argparse
import time
import timeit

import torch

from tensordict import TensorDict, _hotreads

PAIRS = [
    ('td.get("k50")', 'd.get("k50")'),
    ('td["k50"]', 'd["k50"]'),
    ("td.keys()", "d.keys()"),
    ("len(td.keys())", "len(d.keys())"),
    ('"k50" in td.keys()', '"k50" in d.keys()'),
    ("list(td.values())", "list(d.values())"),
    # nested keys, through two levels of a nested tensordict (issue 15's floor case)
    ('nested["n", "m", "k9"]', 'nd["n"]["m"]["k9"]'),
    ('nested.get(("n", "m", "k9"))', 'nd["n"]["m"].get("k9")'),
]
CALLS = 100_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    d = {f"k{i}": torch.zeros(3, 4) for i in range(100)}
    td = TensorDict(d, batch_size=[3, 4])
    nd = {"n": {"m": {f"k{i}": torch.zeros(3, 4) for i in range(10)}}}
    names = {"td": td, "d": d, "nested": TensorDict(nd, batch_size=[3, 4]), "nd": nd}
    print(
        f"reads in {'C' if _hotreads.C_READS else 'pure Python'}; ns per call, "
        f"best of {args.blocks} blocks of {CALLS:,}"
    )
    for round_ in range(1, args.rounds + 1):
        print(f"round {round_}")
        for ours, floor in PAIRS:
            timers = [
                timeit.Timer(s, globals=names, timer=time.thread_time)
                for s in (ours, floor)
            ]
            best = [float("inf"), float("inf")]
            for _ in range(args.blocks):
                for side, timer in enumerate(timers):
                    best[side] = min(best[side], timer.timeit(CALLS) / CALLS * 1e9)
            print(
                f"  {ours:28s} {best[0]:6.1f}   {floor:22s} {best[1]:6.1f}   "
                f"ratio {best[0] / best[1]:.2f}"
            )


if __name__ == "__main__":
    main()
