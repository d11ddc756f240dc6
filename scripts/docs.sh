#!/usr/bin/env bash
# Build the documentation site: static HTML from docs/ into docs/_build/html (open
# docs/_build/html/index.html in a browser). Warnings are errors (-W), and the built
# pages' internal links are checked (docs/_ext/internal_links.py; no network).
# Needs the docs extra: .venv/bin/pip install -e ".[docs]" (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
rm -rf docs/_build/html docs/_build/doctrees
"$PYTHON" -m sphinx -b html -W --keep-going -q -d docs/_build/doctrees "$@" docs docs/_build/html
echo "built docs/_build/html/index.html"
