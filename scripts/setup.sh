#!/usr/bin/env bash
# Create .venv (if missing) and install the project with everything its tests need.
# torch is installed first, pinned to the CPU build on the machine, so that nothing
# pulls the multi-gigabyte CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
# the bytecode a pip install writes (an editable install writes none, and with
# PYTHONDONTWRITEBYTECODE set no import does): see benchmarks/_bytecode.py
.venv/bin/python -m compileall -q tensordict
