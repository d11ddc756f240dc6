"""The contributor path, measured: adding an op to an existing family is one YAML edit.

A copy of the checkout (package, generator, spec, tests) gets one new entry in
``spec/pointwise.yaml``, with its oracle (``tests: oracle``; ``softsign`` is no torch
function, so the tests cannot find torch's answer by the op's name). ``python -m
codegen`` renders it; the spec-driven tests of the copy, run as a contributor runs
them (``pytest -k softsign``), pick the op up and pass, with no test file changed. The
same entry with a wrong ``leaf`` renders too, and its tests fail: the oracle is not the
entry's own expression.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.__main__ import main  # noqa: E402

COPIED = ("tensordict", "codegen", "spec", "tests", "pyproject.toml")

SOFTSIGN = """
  - name: softsign
    leaf: "{leaf}"
    foreach: null
    tests:
      oracle: "x / (x.abs() + 1)"
    summary: Softsign of every leaf, ``x / (1 + |x|)``.
    details: |
      As ``torch.nn.functional.softsign``.
    example: |
      >>> TensorDict(a=torch.tensor([-1.0, 0.0, 3.0]), batch_size=[3]).softsign()["a"]
      tensor([-0.5000,  0.0000,  0.7500])
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    return tmp_path


def add_entry(root: Path, leaf: str, capsys) -> None:
    spec = root / "spec" / "pointwise.yaml"
    spec.write_text(spec.read_text().rstrip("\n") + "\n" + SOFTSIGN.format(leaf=leaf))
    assert main(["--root", str(root)]) == 0, capsys.readouterr().err
    capsys.readouterr()


def run_tests(root: Path, *files: str) -> subprocess.CompletedProcess:
    """``pytest -k softsign`` in the copy, importing the copy's package."""
    # the copy first; what the path held (tools installed beside the package) after
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run(
        [sys.executable, "-m", "pytest", *files, "-q", "-rA", "-k", "softsign"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_new_op_is_one_yaml_entry(checkout: Path, capsys) -> None:
    add_entry(checkout, "torch.nn.functional.softsign(x)", capsys)
    spec_driven = sorted(f"tests/{p.name}" for p in (checkout / "tests").glob("test_spec_*.py"))
    done = run_tests(
        checkout, *spec_driven, "tests/test_torch_function.py", "tests/test_persistence_spec_ops.py"
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    passed = set(re.findall(r"^PASSED (\S+)", out, re.M))
    for test in (
        "tests/test_spec_ops.py::test_spec_entry[pointwise.softsign]",
        "tests/test_spec_examples.py::test_example_runs[pointwise.softsign]",
        "tests/test_spec_lazy.py::test_lazy_matches_dense[softsign-dim0]",
        "tests/test_spec_tensorclass.py::test_spec_method_on_a_tensorclass[pointwise.softsign]",
        "tests/test_persistence_spec_ops.py::test_spec_op_on_persistent_containers[memmap-pointwise.softsign]",
    ):
        assert test in passed, out
    # no test file was touched: the tests are the repository's own
    compared = filecmp.dircmp(ROOT / "tests", checkout / "tests", ignore=["__pycache__"])
    assert not compared.diff_files and not compared.left_only and not compared.right_only


def test_a_wrong_leaf_fails_the_new_ops_tests(checkout: Path, capsys) -> None:
    add_entry(checkout, "torch.nn.functional.softsign(x) * 2", capsys)
    done = run_tests(checkout, "tests/test_spec_ops.py")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "FAILED tests/test_spec_ops.py::test_spec_entry[pointwise.softsign]" in out


def test_a_yaml_edit_without_codegen_says_the_code_is_stale(checkout: Path) -> None:
    """Editing the YAML and running the tests without ``python -m codegen``: the
    spec-driven tests say first that the generated code is stale."""
    spec = checkout / "spec" / "pointwise.yaml"
    spec.write_text(
        spec.read_text().rstrip("\n") + "\n" + SOFTSIGN.format(leaf="torch.nn.functional.softsign(x)")
    )
    done = run_tests(checkout, "tests/test_spec_ops.py")
    assert done.returncode != 0
    out = done.stdout
    assert "the generated code is stale" in out and "run `python -m codegen`" in out, out[-3000:]
    assert "drifted: tensordict/_generated/tensordict_ops.py" in out, out[-3000:]
    assert "accepted no" not in out, out[-3000:]

