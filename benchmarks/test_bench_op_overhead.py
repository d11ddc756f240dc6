"""Per-call Python overhead of every generated op (issue 15).

Each op of the spec (``spec/*.yaml``, in-place forms included) runs on a tensordict whose
five leaves hold one element each (batch size ``[1, 1]``, two of the leaves nested), so
torch's kernels cost next to nothing and the time is the library's own bookkeeping.
``compare.py -k op_overhead`` runs it for ours and 0.15.3 side by side; the table is in
``README.md`` ("Per-op overhead").

The call for an op comes from ``_op_calls.py`` (its family's, or one of its own for ops
that need arguments). An op whose call fails on one side is reported as failed
there, so a missing op or a wrong call shows up in the table instead of vanishing.
"""

import glob
import os

import pytest
import torch
import yaml
from _op_calls import NEEDS_CUDA, call_for, make_td

SPEC_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec"
)


def spec_ops():
    """``(family, name)`` for every op of the spec, in-place forms included."""
    out = []
    for path in sorted(glob.glob(os.path.join(SPEC_DIR, "*.yaml"))):
        with open(path) as f:
            spec = yaml.safe_load(f)
        defaults = spec.get("defaults") or {}
        for op in spec["ops"]:
            out.append((spec["family"], op["name"]))
            inplace = op.get("inplace")
            if inplace:
                form = dict(defaults.get("inplace") or {})
                form.update(inplace if isinstance(inplace, dict) else {})
                out.append((spec["family"], form.get("name", "{name}_").format(**op)))
    return out


OPS = spec_ops()


@pytest.mark.parametrize("family,name", OPS, ids=[name for _, name in OPS])
def test_op_overhead(benchmark, family, name):
    if name in NEEDS_CUDA and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    call = call_for(family, name)
    td, other = make_td(), make_td()
    call(td, other)  # fails here, outside the timing, if the op or its call is wrong
    benchmark.pedantic(
        call, args=(td, other), rounds=30, iterations=20, warmup_rounds=2
    )
