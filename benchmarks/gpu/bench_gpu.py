"""The GPU cases of issue 26, timed for whichever ``tensordict`` this Python imports.

Prints one JSON object: the package and torch versions, the card, and for each case
the per-round medians (µs) of the tensordict call, of the same work written by hand
on a plain dict ("hand"), and of the floor where one is defined, timed in turns. ``compare_gpu.py``
runs it for this project and for 0.15.3 (one process per side, ``--serve``), the two
sides taking turns round by round, and checks the targets. Every timed call is followed, once per batch of calls, by a
``torch.cuda.synchronize()``, so a call's time includes its copies.

    python benchmarks/gpu/bench_gpu.py --rounds 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

import tensordict
from tensordict import TensorDict

N_LEAVES, SHAPE = 100, (256, 64)  # 100 leaves of 64 KB: 6.5 MB


def _round(fns: list, reps: int) -> list[float]:
    """One round: the median (µs per call) of each of ``fns``, timed in turns (one
    batch of ``reps`` calls of each, nine times), so that the machine's drift during
    the round reaches them alike."""
    samples = [[] for _ in fns]
    for _ in range(9):
        for fn, into in zip(fns, samples):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            torch.cuda.synchronize()
            into.append((time.perf_counter() - t0) / reps * 1e6)
    return [statistics.median(into) for into in samples]


def _warm(fns: list) -> None:
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()


def _leaves(device="cpu", pin=False) -> dict:
    gen = torch.Generator().manual_seed(0)
    d = {f"k{i}": torch.randn(*SHAPE, generator=gen) for i in range(N_LEAVES)}
    d = {k: v.to(device) for k, v in d.items()}
    return {k: v.pin_memory() for k, v in d.items()} if pin else d


def _hand_views(block: torch.Tensor, specs: list) -> dict:
    """A consolidated block's leaves, cut by hand: one slice and view per leaf."""
    return {
        key: block[start : start + nbytes].view(dtype).view(shape)
        for key, start, nbytes, dtype, shape in specs
    }


def cases(dev: torch.device) -> dict:
    """name -> (tensordict call, hand call, floor call or None)"""
    d = _leaves()
    td = TensorDict(d, batch_size=[SHAPE[0]])
    flat = torch.cat([v.reshape(-1) for v in d.values()]).pin_memory()
    dp = _leaves(pin=True)
    tdp = TensorDict(dp, batch_size=[SHAPE[0]])
    tdc = td.consolidate(pin_memory=True)
    block = tdc["k0"].untyped_storage()
    block = torch.empty(0, dtype=torch.uint8).set_(block).pin_memory()
    base = block.data_ptr()
    specs = []
    for key in tdc.keys():
        leaf = tdc[key]
        start = leaf.data_ptr() - base
        specs.append(
            (key, start, leaf.numel() * leaf.element_size(), leaf.dtype, leaf.shape)
        )
    g = _leaves(device=dev)
    tg = TensorDict(g, batch_size=[SHAPE[0]], device=dev)
    idx = torch.randint(0, SHAPE[0], (128,), device=dev)
    gen = torch.Generator().manual_seed(1)
    parts = [
        TensorDict(
            {f"k{i}": torch.randn(32, generator=gen).to(dev) for i in range(20)},
            batch_size=[32],
            device=dev,
        )
        for _ in range(64)
    ]
    pdicts = [dict(p.items()) for p in parts]
    from tensordict.nn import TensorDictModule

    lin = torch.nn.Linear(64, 64, device=dev)
    mod = TensorDictModule(lin, in_keys=["k0"], out_keys=["out"])
    return {
        "to_cuda_pageable": (
            lambda: td.to(dev),
            lambda: {k: v.to(dev) for k, v in d.items()},
            lambda: flat.to(dev, non_blocking=True),
        ),
        "to_cuda_pinned_non_blocking": (
            lambda: tdp.to(dev, non_blocking=True),
            lambda: {k: v.to(dev, non_blocking=True) for k, v in dp.items()},
            None,
        ),
        "consolidated_to_cuda": (
            lambda: tdc.to(dev, non_blocking=True),
            lambda: _hand_views(block.to(dev, non_blocking=True), specs),
            lambda: block.to(dev, non_blocking=True),
        ),
        "to_cpu": (
            lambda: tg.to("cpu"),
            lambda: {k: v.to("cpu") for k, v in g.items()},
            None,
        ),
        "index_cuda": (
            lambda: tg[idx],
            lambda: {k: v[idx] for k, v in g.items()},
            None,
        ),
        "stack_cuda": (
            lambda: torch.stack(parts, 0),
            lambda: {k: torch.stack([p[k] for p in pdicts], 0) for k in pdicts[0]},
            None,
        ),
        "mul_cuda": (lambda: tg * 2, lambda: {k: v * 2 for k, v in g.items()}, None),
        "module_cuda": (lambda: mod(tg), lambda: lin(g["k0"]), None),
    }


REPS = {"module_cuda": 200, "mul_cuda": 50, "index_cuda": 50}


def _selected(k: str) -> dict:
    """name -> (reps, the timed calls: tensordict, hand and, where defined, floor)"""
    out = {}
    for name, (ours, hand, floor) in cases(torch.device("cuda", 0)).items():
        if k in name:
            fns = [f for f in (ours, hand, floor) if f is not None]
            _warm(fns)
            out[name] = (REPS.get(name, 20), fns, floor is not None)
    return out


def _one_round(selected: dict) -> dict:
    rows = {}
    for name, (reps, fns, has_floor) in selected.items():
        timed = _round(fns, reps)
        rows[name] = {
            "td": timed[0],
            "hand": timed[1],
            "floor": timed[2] if has_floor else None,
        }
    return rows


def _header() -> dict:
    return {
        "tensordict": getattr(tensordict, "__version__", "?"),
        "path": tensordict.__file__,
        "torch": torch.__version__,
        "card": torch.cuda.get_device_name(0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="print a header line, then time one round per line read from stdin "
        "(compare_gpu.py alternates the two sides' rounds this way)",
    )
    args = parser.parse_args()
    selected = _selected(args.k)
    if args.serve:
        print(json.dumps(_header()), flush=True)
        for _ in sys.stdin:
            print(json.dumps(_one_round(selected)), flush=True)
        return
    rounds = [_one_round(selected) for _ in range(args.rounds)]
    cases_ = {
        name: {
            part: (
                None
                if rounds[0][name][part] is None
                else [r[name][part] for r in rounds]
            )
            for part in ("td", "hand", "floor")
        }
        for name in selected
    }
    print(json.dumps({**_header(), "cases": cases_}))


if __name__ == "__main__":
    main()
