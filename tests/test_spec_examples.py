"""Every spec entry's ``example`` runs as a doctest, whatever its family: the examples
the reference pages and the generated docstrings show are true."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.loader import load_spec  # noqa: E402
from codegen.model import Op  # noqa: E402

import tensordict  # noqa: E402
from tensordict import TensorDict  # noqa: E402

OPS = list(load_spec(ROOT / "spec").ops())


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("op", OPS, ids=[f"{op.family}.{op.name}" for op in OPS])
def test_example_runs(op: Op) -> None:
    test = doctest.DocTestParser().get_doctest(
        op.example,
        globs={"torch": torch, "TensorDict": TensorDict, "tensordict": tensordict},
        name=f"{op.family}.{op.name}",
        filename=op.location.path,
        lineno=op.location.line,
    )
    report: list[str] = []
    result = doctest.DocTestRunner(verbose=False).run(test, out=report.append)
    assert result.failed == 0, "".join(report)
    assert result.attempted > 0, f"the example of {op.name} runs nothing"
