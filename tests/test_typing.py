"""Type checkers see the API (docs/ecosystem.md, "Typing"): `mypy --strict` on a user's
script (tests/typing/user_script.py: ops on a TensorDict, a lazy stack and both
tensorclass forms) reports nothing, the generated stubs included."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy absent")
def test_mypy_strict_on_a_user_script(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(TYPING / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(TYPING / "user_script.py"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_user_script_runs():
    # the script type-checks and also does what its annotations say
    subprocess.run(
        [sys.executable, str(TYPING / "user_script.py")], check=True, cwd=ROOT
    )
