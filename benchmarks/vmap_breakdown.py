#!/usr/bin/env python
"""Where the time of issue 11's vmap ensemble goes: torch's share and the library's.

    .venv/bin/python benchmarks/vmap_breakdown.py [--rounds 5]
    ../reference-venv/bin/python benchmarks/vmap_breakdown.py [--rounds 5]  # 0.15.3

Run it with each interpreter (same torch on both sides); it imports whichever
``tensordict`` that interpreter has. The case is ``paired.py``'s ``vmap_ensemble``:
``torch.vmap(func, (None, 0))`` with ``func`` doing ``with params.to_module(module):
return module(data)``, 10 copies of 3x ``Linear(64, 64)`` with ReLUs, a batch of 32,
under ``torch.no_grad()``, one intra-op thread. Each figure is the CPU time of the
thread per call (µs), the median over the rounds, taken with clocks read inside the
function (so the parts add up to the whole call):

- ``torch math``: time inside the MLP's ``nn.Sequential.forward`` (the batched
  ``F.linear``/ReLU calls of the three layers: torch's work, the same on both sides),
  and ``bare vmap``: ``torch.vmap`` of a no-op over one plain tensor, timed *before*
  ``tensordict`` is imported (torch's own cost of entering and leaving vmap).
- ``library``: everything else: vmap's input/output steps for the tensordict (the
  ones the library installs), ``to_module`` in and out, the ``TensorDictModule`` read
  and write (``[True]``). ``library = whole - torch math - bare vmap``.

``whole/torch`` printed by 0.15.3's run is the ratio it would have over a library
costing nothing: the best ``paired.py``'s reference/ours ratio can reach.
"""

import argparse
import copy
import statistics
import time

import torch

clock = time.thread_time_ns


def _bare_vmap_us(count: int) -> float:
    """``torch.vmap`` of a no-op over one plain tensor, before tensordict is imported."""
    x, w = torch.randn(32, 64), torch.randn(10, 4)
    mapped = torch.vmap(lambda x, w: x, (None, 0))
    with torch.no_grad():
        for _ in range(100):
            mapped(x, w)
        start = clock()
        for _ in range(count):
            mapped(x, w)
    return (clock() - start) / count / 1e3


def _ensemble(tdmodule: bool):
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn

    torch.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64)
    )
    x = torch.randn(32, 64)
    copies = [copy.deepcopy(mlp) for _ in range(10)]

    def wrap(m):
        return TensorDictModule(m, in_keys=["x"], out_keys=["y"]) if tdmodule else m

    module = wrap(mlp)
    params = TensorDict.from_modules(*[wrap(c) for c in copies]).lock_()
    data = TensorDict({"x": x}, [32]) if tdmodule else x
    spent = {"math": 0}
    forward = mlp.forward  # timed through an instance attribute: no hook, same calls

    def timed_forward(*args):
        start = clock()
        out = forward(*args)
        spent["math"] += clock() - start
        return out

    mlp.forward = timed_forward

    def func(data, params):
        with params.to_module(module):
            return module(data)

    mapped = torch.vmap(func, (None, 0))
    return (lambda: mapped(data, params)), spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300, help="calls per round")
    args = parser.parse_args()
    torch.set_num_threads(1)
    bare = statistics.median(_bare_vmap_us(args.calls) for _ in range(args.rounds))
    import tensordict

    print(f"tensordict {tensordict.__version__} ({tensordict.__file__})")
    print(f"bare vmap (torch, before importing tensordict): {bare:.0f} µs")
    for tdmodule in (False, True):
        call, spent = _ensemble(tdmodule)
        wholes, maths = [], []
        with torch.no_grad():
            for _ in range(100):
                call()
            for _ in range(args.rounds):
                spent["math"] = 0
                start = clock()
                for _ in range(args.calls):
                    call()
                wholes.append((clock() - start) / args.calls / 1e3)
                maths.append(spent["math"] / args.calls / 1e3)
        whole, math = statistics.median(wholes), statistics.median(maths)
        print(
            f"vmap_ensemble[{tdmodule}]: whole {whole:.0f} µs | torch math {math:.0f}"
            f" + bare vmap {bare:.0f} = torch {math + bare:.0f} | library "
            f"{whole - math - bare:.0f} | whole/torch {whole / (math + bare):.2f}"
            f"  (rounds: whole {' '.join(f'{w:.0f}' for w in wholes)};"
            f" math {' '.join(f'{m:.0f}' for m in maths)})"
        )


if __name__ == "__main__":
    main()
