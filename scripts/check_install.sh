#!/usr/bin/env bash
# Install the package as users do (a regular, non-editable `pip install .` into a scratch
# folder) and import it from outside the checkout: every tracked file of the package
# (the generated modules and stubs included) must be installed, and the installed copy
# must work on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
  --target "$scratch/site" .
git ls-files tensordict | grep -v '/tests/' > "$scratch/tracked.txt"
cd "$scratch"
PYTHONPATH="$scratch/site" "$repo/.venv/bin/python" - "$scratch/site" "$scratch/tracked.txt" <<'PY'
import pathlib
import sys

site, tracked = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
import torch

import tensordict
from tensordict import TensorDict

where = pathlib.Path(tensordict.__file__).resolve()
assert where.is_relative_to(site.resolve()), f"imported from {where}, not the install"
missing = [p for p in tracked.read_text().split() if not (site / p).is_file()]
assert not missing, f"not installed: {missing}"
td = TensorDict(a=torch.ones(3, 2), batch_size=[3])
assert (td + 1)["a"].sum().item() == 12.0 and td.sum(0).batch_size == torch.Size([])
print(f"installed copy OK: {len(tracked.read_text().split())} package files at {site}")
PY
