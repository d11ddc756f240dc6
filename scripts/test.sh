#!/usr/bin/env bash
# Set up and run every test and check: generated code in sync with spec/, the package
# installed as users install it (scripts/check_install.sh), the demo,
# the benchmark suite as a smoke test (each benchmark once, untimed), then the tests
# (the spec-driven op tests and every spec example as a doctest included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== python -m codegen --check"
.venv/bin/python -m codegen --check
echo "== pip install . (not editable), imported from outside the checkout"
bash scripts/check_install.sh
echo "== quick-start demo"
.venv/bin/python demo/quickstart.py > /dev/null
echo "== benchmarks (smoke run, untimed)"
.venv/bin/python -m pytest benchmarks -q --benchmark-disable -p no:cacheprovider
echo "== tests"
.venv/bin/python -m pytest tests -q
