"""Type checkers see the API (docs/ecosystem.md, "Typing"): `mypy --strict` on a user's
script (tests/typing/user_script.py: ops on a TensorDict, a lazy stack and both
tensorclass forms) reports nothing, the generated stubs included; on mistakes
(tests/typing/type_errors.py) it reports each one."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"


def _mypy_cache() -> Path:
    """mypy's incremental cache, kept between test sessions (mypy re-checks whatever
    changed since, the stubs included): one per checkout and interpreter, in the
    system's temporary folder."""
    key = hashlib.sha1(f"{ROOT}|{sys.executable}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "tensordict-mypy-cache" / key


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy absent")
def test_mypy_strict_on_user_scripts():
    # one mypy run for both samples: user_script.py must pass, and type_errors.py must
    # fail on exactly its lines marked "# E" (the types mypy sees are real ones)
    samples = [TYPING / "user_script.py", TYPING / "type_errors.py"]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(TYPING / "mypy.ini"),
            "--cache-dir",
            str(_mypy_cache()),
            *map(str, samples),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    report = result.stdout + result.stderr
    errors: dict[str, set[int]] = {}
    for match in re.finditer(r"^(\S+\.pyi?):(\d+): error:", report, re.MULTILINE):
        errors.setdefault(Path(match[1]).name, set()).add(int(match[2]))
    marked = {
        number
        for number, line in enumerate(samples[1].read_text().splitlines(), 1)
        if line.rstrip().endswith("# E")
    }
    assert set(errors) <= {"type_errors.py"}, report
    assert errors.get("type_errors.py", set()) == marked, report
    assert f"Found {len(marked)} errors in 1 file (checked 2 source files)" in report, (
        report
    )


def test_user_script_runs():
    # the script type-checks and also does what its annotations say (run here, in
    # this interpreter: a new one would spend seconds importing torch again)
    runpy.run_path(str(TYPING / "user_script.py"), run_name="__main__")
