#!/usr/bin/env bash
# Create .venv (if missing) and install the project with everything its tests need and
# the docs extra (the site is built in CI: scripts/docs.sh).
# torch is installed first, the CPU build from PyTorch's CPU wheel index: on Linux the
# plain `pip install torch==2.13.0` resolves to the multi-gigabyte CUDA build. Set
# TORCH_INDEX_URL to use another index (a CUDA one, a mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0 \
  --index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,docs]"
# the bytecode a pip install writes (an editable install writes none, and with
# PYTHONDONTWRITEBYTECODE set no import does): see benchmarks/_bytecode.py
.venv/bin/python -m compileall -q tensordict
