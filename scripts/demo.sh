#!/usr/bin/env bash
# Set up and run the quick-start demo: the seed documents' examples, with their output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python demo/quickstart.py
