#!/usr/bin/env python
"""Ours against the reference in short alternating blocks, for cases whose ratio the
load of a shared machine swamps in ``compare.py``.

    .venv/bin/python benchmarks/paired.py [--rounds 5] [CASE ...]

``compare.py`` runs one whole suite, then the other: when other jobs start or stop in
between, one side is timed on a slower machine than the other (per-round ratios of
0.8 to 2.4 for the same case in one run). Here one worker process per library (ours:
this interpreter; the reference: ``--reference-venv``, both started like
``compare.py`` starts them: scratch working directory, ``PYTHONPATH`` cleared, one
intra-op thread) builds every case once, then the two are timed in alternating
blocks of ``--block`` calls (which side goes first flips every block), so that both
sides of a pair run within a few milliseconds of each other. Each block counts the
CPU time of the worker's thread per call. A round is ``--blocks`` pairs; its ratio is
the reference's median block over ours. Every round's ratio is printed.

The cases are the issue targets that ``compare.py`` measured noisily (issue 11's vmap
ensemble and its pure-torch floor, issue 13's compiled ops, and the three cases of 0.15.3's
``functional_benchmarks_test.py`` that time only torch, and a field read of its
``test_tensorclass_speed.py``), written with the API both
libraries share; each worker checks its result against plain torch before timing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)


# ----------------------------------------------------------------------------- cases
# Each builder returns a zero-argument callable (the timed call) after checking it.


def _ensemble(tdmodule):
    import copy

    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn

    torch.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64)
    )
    x = torch.randn(32, 64)
    copies = [copy.deepcopy(mlp) for _ in range(10)]
    wrap = (
        (lambda m: TensorDictModule(m, in_keys=["x"], out_keys=["y"]))
        if tdmodule
        else (lambda m: m)
    )
    module = wrap(mlp)
    params = TensorDict.from_modules(*[wrap(c) for c in copies]).lock_()
    data = TensorDict({"x": x}, [32]) if tdmodule else x

    def func(data, params):
        with params.to_module(module):
            return module(data)

    mapped = torch.vmap(func, (None, 0))
    with torch.no_grad():
        out = mapped(data, params)
        out = out["y"] if tdmodule else out
        torch.testing.assert_close(out[0], mlp(x))

    def call():
        with torch.no_grad():
            mapped(data, params)

    return call


def _ensemble_torch_floor():
    """The ensemble's math in torch alone: ``torch.vmap`` of three ``F.linear`` (two
    ReLUs) over the stacked weights passed as seven tensors, no module and no
    tensordict; the same code on both sides (a ratio near 1). Its time beside the
    reference's ensemble shows what torch alone would gain over 0.15.3 (issue 11's
    vmap target); it is no lower bound: torch.vmap handles seven separate tensors
    more slowly than ours handles one tensordict of six."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    layers = [nn.Linear(64, 64) for _ in range(3)]
    x = torch.randn(32, 64)
    weights = [torch.stack([lin.weight.detach()] * 10) for lin in layers]
    biases = [torch.stack([lin.bias.detach()] * 10) for lin in layers]

    def func(x, w0, b0, w1, b1, w2, b2):
        h = F.relu(F.linear(x, w0, b0))
        h = F.relu(F.linear(h, w1, b1))
        return F.linear(h, w2, b2)

    args = [t for pair in zip(weights, biases) for t in pair]
    mapped = torch.vmap(func, (None, 0, 0, 0, 0, 0, 0))
    with torch.no_grad():
        out = mapped(x, *args)
        expected = layers[2](torch.relu(layers[1](torch.relu(layers[0](x)))))
        torch.testing.assert_close(out[3], expected)

    def call():
        with torch.no_grad():
            mapped(x, *args)

    return call


def _compiled(op):
    import torch
    from tensordict import TensorDict

    gen = torch.Generator().manual_seed(0)
    data = {f"k{i}": torch.randn(32, 2, generator=gen) for i in range(50)}
    td = TensorDict(data, batch_size=[32])
    fns = {
        "add_self": (lambda td: td + td, lambda d: {k: v + v for k, v in d.items()}),
        "sum0": (lambda td: td.sum(0), lambda d: {k: v.sum(0) for k, v in d.items()}),
        "index": (
            lambda td: td[0:32:2],
            lambda d: {k: v[0:32:2] for k, v in d.items()},
        ),
    }
    fn, expected = fns[op]
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    compiled(td)
    out = compiled(td)
    for key, value in expected(data).items():
        torch.testing.assert_close(out[key], value)
    return lambda: compiled(td)


def _torch_only(case):
    """0.15.3's ``functional_benchmarks_test.py`` cases that time only torch and
    functorch (``tensordict`` imported, as in that file): they show the noise floor
    of the method, and whether importing ours costs torch's own calls anything."""
    import warnings
    from copy import deepcopy

    import tensordict  # noqa: F401  (imported, as in the file)
    import torch
    from torch import nn

    warnings.simplefilter("ignore", FutureWarning)
    from functorch import make_functional_with_buffers

    net = nn.Sequential(
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)),
    )
    x = torch.randn(2, 2)
    if case == "instantiation":
        return lambda: make_functional_with_buffers(deepcopy(net))
    if case == "functional_call":
        sd = net.state_dict()
        torch.testing.assert_close(torch.func.functional_call(net, sd, x), net(x))
        return lambda: torch.func.functional_call(net, sd, x)
    fmodule, params, buffers = make_functional_with_buffers(net)
    torch.testing.assert_close(fmodule(params, buffers, x), net(x))
    return lambda: fmodule(params, buffers, x)


def _tc_field_read(kind):
    """0.15.3's ``tc_first_layer_tensor_only`` / ``tc_first_layer_tensor``
    (``test_tensorclass_speed.py``): ``data.a`` on a tensorclass; pytest-benchmark
    times a call of ~0.15 µs with 1 or ~30 iterations a round depending on how long
    the first call happened to take, which swings that file's ratio by 1.5x."""
    import torch
    from tensordict import TensorClass, tensorclass

    if kind == "tensor_only":

        class Data(TensorClass["tensor_only"]):
            a: torch.Tensor
            b: torch.Tensor
            c: torch.Tensor | None

        data = Data(a=torch.zeros(()), b=torch.ones(()), c=None)
    else:

        @tensorclass
        class Data:
            a: torch.Tensor
            b: torch.Tensor
            c: str
            d: "Data" = None

        data = Data(a=0, b=1, c="a string", d=Data(None, None, None))
    assert torch.equal(data.a, torch.zeros(()))
    return lambda: data.a


def _op_overhead(family, name):
    """``op_overhead[NAME]``: the call ``test_bench_op_overhead.py`` times for op NAME
    (one-element leaves: the library's per-call bookkeeping)."""
    sys.path.insert(0, BENCH_DIR)
    from _op_calls import call_for, make_td

    call, td, other = call_for(family, name), make_td(), make_td()
    call(td, other)
    return lambda: call(td, other)


def _op_of(case):
    """``"softmax"`` for the case ``op_overhead[softmax]``, else ``None``."""
    prefix = "op_overhead["
    return case[len(prefix) : -1] if case.startswith(prefix) else None


def op_families(names):
    """``{op: family}`` for the ``op_overhead[op]`` cases among ``names`` (the spec is
    read here, in the parent: 0.15.3's venv need not have pyyaml)."""
    ops = {_op_of(n) for n in names} - {None}
    if not ops:
        return {}
    sys.path.insert(0, BENCH_DIR)
    from test_bench_op_overhead import spec_ops

    families = {name: family for family, name in spec_ops() if name in ops}
    missing = sorted(ops - set(families))
    if missing:
        sys.exit(f"no op {missing} in spec/")
    return families


CASES = {
    "vmap_ensemble[False]": lambda: _ensemble(False),
    "vmap_ensemble[True]": lambda: _ensemble(True),
    "vmap_ensemble_torch_floor": _ensemble_torch_floor,
    "compiled[add_self]": lambda: _compiled("add_self"),
    "compiled[sum0]": lambda: _compiled("sum0"),
    "compiled[index]": lambda: _compiled("index"),
    "instantiation_functorch": lambda: _torch_only("instantiation"),
    "exec_functorch": lambda: _torch_only("functional_call"),
    "exec_functional_call": lambda: _torch_only("functorch_call"),
    "tc_field_read[tensor_only]": lambda: _tc_field_read("tensor_only"),
    "tc_field_read[tensorclass]": lambda: _tc_field_read("tensorclass"),
}


# ---------------------------------------------------------------------------- worker


def worker(names, families):
    import tensordict
    import torch

    torch.set_num_threads(1)
    calls = {}
    for name in names:
        op = _op_of(name)
        calls[name] = _op_overhead(families[op], op) if op else CASES[name]()
    print(os.path.realpath(tensordict.__file__), flush=True)
    for line in sys.stdin:
        name, count = line.split()
        call = calls[name]
        count = int(count)
        start = time.thread_time()
        for _ in range(count):
            call()
        print((time.thread_time() - start) / count, flush=True)


# ---------------------------------------------------------------------------- parent


class Side:
    def __init__(self, label, python, names, families, env):
        self.label = label
        self.scratch = tempfile.TemporaryDirectory(prefix=f"tdpaired-{label}-")
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--worker", *names]
            + ["--op-families", json.dumps(families)],
            cwd=self.scratch.name,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.path = self.proc.stdout.readline().strip()
        if not self.path:
            sys.exit(f"[{label}] the worker did not start (see its stderr above)")

    def time(self, name, count):
        self.proc.stdin.write(f"{name} {count}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.scratch.cleanup()


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "cases", nargs="*", help=f"cases to run (default: all of {list(CASES)})"
    )
    p.add_argument(
        "--reference-venv",
        default=os.path.join(os.path.dirname(REPO_ROOT), "reference-venv"),
    )
    p.add_argument("--ours-python", default=sys.executable)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--blocks", type=int, default=15, help="pairs of blocks a round")
    p.add_argument("--block", type=int, default=50, help="calls a block")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--op-families", default="{}", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    names = args.cases or list(CASES)
    if args.worker:
        return worker(names, json.loads(args.op_families))
    unknown = [n for n in names if n not in CASES and not _op_of(n)]
    if unknown:
        sys.exit(
            f"unknown cases {unknown}; known: {list(CASES)} and op_overhead[OP] for "
            f"any op of spec/"
        )
    families = op_families(names)

    env = dict(os.environ)
    for var in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(var, None)
    env["PYTHONSAFEPATH"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    ref_python = os.path.join(os.path.abspath(args.reference_venv), "bin", "python")
    ours = Side("ours", args.ours_python, names, families, env)
    ref = Side("reference", ref_python, names, families, env)
    print(f"ours:      {ours.path}\nreference: {ref.path}")
    if ref.path.startswith(REPO_ROOT + os.sep):
        sys.exit("the reference worker imported tensordict from inside the repo")
    try:
        for name in names:
            for side in (ours, ref):
                side.time(name, args.block)  # warm up
            ratios, ours_us, ref_us = [], [], []
            for _ in range(args.rounds):
                o_blocks, r_blocks = [], []
                for b in range(args.blocks):
                    order = (ours, ref) if b % 2 == 0 else (ref, ours)
                    for side in order:
                        t = side.time(name, args.block)
                        (o_blocks if side is ours else r_blocks).append(t)
                o, r = statistics.median(o_blocks), statistics.median(r_blocks)
                ours_us.append(o * 1e6)
                ref_us.append(r * 1e6)
                ratios.append(r / o)
            print(
                f"{name}: ratio (reference/ours) per round "
                + " ".join(f"{x:.2f}" for x in ratios)
                + f" | ours µs {' '.join(f'{x:.3g}' for x in ours_us)}"
                + f" | reference µs {' '.join(f'{x:.3g}' for x in ref_us)}",
                flush=True,
            )
    finally:
        ours.close()
        ref.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
