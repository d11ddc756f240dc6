#!/usr/bin/env python
"""``TensorDictModule`` call overhead over calling the wrapped module by hand.

    .venv/bin/python benchmarks/tdmodule_overhead.py [--rounds 5] [--seconds 2]

Issue 11's target: ``TensorDictModule(nn.Linear(64, 64), ["x"], ["y"])(td)`` on a batch
of 32 at most 1.3x the time of ``data["y"] = linear(data["x"])`` (the floor of
``benchmarks/test_bench_nn.py::test_tdmodule_linear``), in every round.

``compare.py -k tdmodule_linear`` measures the two sides one after the other, a second
each; on a shared machine the load can change between them, and a round's ratio then
says more about the load than about the call. Here both sides run in this one process
in alternating blocks of calls (floor, module, module, floor, ...), so that a change of
load hits both alike. Each block's time per call is the CPU time of this thread
(``time.thread_time``: while other processes hold the cores this one waits, and that
wait is not counted, as it is in no library's call). A round's figure per side is
the median of its blocks, its ratio module/floor and its overhead module - floor (µs)
come from those two medians (the minimum over blocks is printed too; with few
blocks per round it moves more than the median).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from torch import nn

from tensordict import TensorDict
from tensordict.nn import TensorDictModule


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0, help="per round")
    p.add_argument("--block", type=int, default=200, help="calls per timed block")
    args = p.parse_args()
    torch.set_num_threads(int(os.environ.get("TENSORDICT_BENCH_THREADS", "1")))

    torch.manual_seed(0)
    linear = nn.Linear(64, 64)
    x = torch.randn(32, 64)
    module = TensorDictModule(linear, in_keys=["x"], out_keys=["y"])
    td = TensorDict(x=x, batch_size=[32])
    data = {"x": x}

    def floor():
        data["y"] = linear(data["x"])

    def with_module():
        module(td)

    with_module()
    torch.testing.assert_close(td["y"], linear(x))

    def block(func) -> float:
        start = time.thread_time_ns()
        for _ in range(args.block):
            func()
        return (time.thread_time_ns() - start) / args.block / 1e3

    print(
        f"TensorDictModule(nn.Linear(64, 64)) on a batch of 32 vs the Linear by hand; "
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    ratios, overheads = [], []
    for round_ in range(1, args.rounds + 1):
        times = {"floor": [], "module": []}
        deadline = time.monotonic() + args.seconds
        order = ("floor", "module")
        while time.monotonic() < deadline:
            for name in order:
                times[name].append(block(floor if name == "floor" else with_module))
            order = order[::-1]
        floor_us = statistics.median(times["floor"])
        module_us = statistics.median(times["module"])
        ratios.append(module_us / floor_us)
        overheads.append(module_us - floor_us)
        print(
            f"round {round_}: floor {floor_us:.2f} µs, module {module_us:.2f} µs, "
            f"ratio {ratios[-1]:.3f}, overhead {overheads[-1]:.2f} µs "
            f"(minimum: floor {min(times['floor']):.2f}, module "
            f"{min(times['module']):.2f}, ratio "
            f"{min(times['module']) / min(times['floor']):.3f}; "
            f"{len(times['floor'])} blocks each)"
        )
    print(
        f"ratio module/floor: median {statistics.median(ratios):.3f}, rounds "
        + ", ".join(f"{r:.3f}" for r in ratios)
        + f", worst {max(ratios):.3f} (target ≤ 1.3 in every round); overhead median "
        f"{statistics.median(overheads):.2f} µs"
    )


if __name__ == "__main__":
    main()
