#!/usr/bin/env python
"""Does importing a tensordict package slow code that never calls it?

Four cases of 0.15.3's own benchmark files time torch alone (``split_pytree``:
``torch.utils._pytree.tree_map`` over a nested dict; ``instantiation_functorch``:
``make_functional_with_buffers(deepcopy(net))``; ``exec_functorch``:
``torch.func.functional_call`` with a plain state dict; ``serialize_weights_pickle``:
``torch.save`` of a state dict, here of a small net to a file in memory). Their
ratio between two libraries can only come from the import itself (patched torch
functions, import hooks, a heavier heap for the garbage collector) or from the two
processes. This script tells the two apart: each round starts one fresh process per
configuration (each venv, without and with ``import tensordict``), in rotation, and
prints each configuration's median CPU time per call.

    .venv/bin/python benchmarks/import_effect.py [--rounds 3] [--from-source] [--reference-venv DIR]

If ours-with-import sits within the spread of the three others, the case's ratio in
``compare.py`` is process noise, not this package. ``--from-source`` adds ours imported
from sources without bytecode (see ``_bytecode.py``: that import left heap holes that
made ``torch.save`` 6-20 % slower).
"""

import argparse
import os
import subprocess
import sys
import shutil
import tempfile

from _bytecode import compile_package

CASES = ("split_pytree", "instantiation_functorch", "exec_functorch", "save_state_dict")

_WORKER = r"""
import io, sys, time, warnings
warnings.simplefilter("ignore")
import torch
torch.set_num_threads(1)
if sys.argv[1] == "1":
    import tensordict, tensordict.nn  # noqa: F401
from copy import deepcopy
from torch import nn
from torch.utils._pytree import tree_map
from functorch import make_functional_with_buffers

net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2),
                    nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)))
x, sd = torch.randn(2, 2), net.state_dict()
nested = {"a": {str(i): torch.zeros(3, 2) for i in range(10)},
          "b": {str(i): {"c": torch.zeros(3)} for i in range(10)}}
weights = nn.Sequential(*[nn.Linear(64, 64) for _ in range(8)]).state_dict()
calls = {
    "split_pytree": (lambda: tree_map(lambda t: t.split([1, 2], 0), nested), 500),
    "instantiation_functorch": (lambda: make_functional_with_buffers(deepcopy(net)), 200),
    "exec_functorch": (lambda: torch.func.functional_call(net, sd, x), 2000),
    "save_state_dict": (lambda: torch.save(weights, io.BytesIO()), 200),
}
for name in sys.argv[2:]:
    call, n = calls[name]
    for _ in range(n // 5):
        call()
    blocks = []
    for _ in range(15):
        t0 = time.thread_time()
        for _ in range(n):
            call()
        blocks.append((time.thread_time() - t0) / n * 1e6)
    blocks.sort()
    print(name, blocks[len(blocks) // 2])
"""


_HOW = {"0": "without import", "1": "with import", "source": "from source"}


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--reference-venv",
        default=os.path.join(os.path.dirname(os.path.dirname(here)), "reference-venv"),
    )
    p.add_argument(
        "--from-source",
        action="store_true",
        help="add a configuration: ours imported from a copy of its sources without "
        "bytecode, compiled by the import (what _bytecode.py avoids)",
    )
    p.add_argument("cases", nargs="*", default=list(CASES))
    args = p.parse_args(argv)
    pythons = {
        "ours": sys.executable,
        "0.15.3": os.path.join(args.reference_venv, "bin", "python"),
    }
    configs = [(lib, imp) for lib in pythons for imp in ("0", "1")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory() as scratch:  # outside the checkout: the
        # reference venv must not import this repo's package
        for python in pythons.values():  # both from bytecode (see _bytecode.py)
            compile_package(python, env, scratch)
        envs = {imp: env for imp in ("0", "1")}
        if args.from_source:
            source = os.path.join(scratch, "source")
            shutil.copytree(
                os.path.join(os.path.dirname(here), "tensordict"),
                os.path.join(source, "tensordict"),
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            configs.append(("ours", "source"))
            envs["source"] = {**env, "PYTHONPATH": source}
        for r in range(args.rounds):
            results = {}
            k = r % len(configs)
            for lib, imp in configs[k:] + configs[:k]:  # rotating order
                out = subprocess.run(
                    [
                        pythons[lib],
                        "-c",
                        _WORKER,
                        "0" if imp == "0" else "1",
                        *args.cases,
                    ],
                    cwd=scratch,
                    env=envs[imp],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                for line in out.splitlines():
                    name, us = line.split()
                    results[(name, lib, imp)] = float(us)
            for name in args.cases:
                row = "  ".join(
                    f"{lib} {_HOW[imp]} " f"{results[(name, lib, imp)]:8.1f}"
                    for lib, imp in configs
                )
                print(f"round {r + 1} {name:24s} µs/call: {row}")


if __name__ == "__main__":
    main()
