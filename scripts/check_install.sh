#!/usr/bin/env bash
# Install the package as users do (a regular, non-editable `pip install .` into a scratch
# folder) and import it from outside the checkout: every tracked file of the package
# (the generated modules and stubs included) must be installed, and the installed copy
# must work on its own. The C extension (tensordict/_fastreads.c) is built into it: its
# source is the one tracked file not installed as is, and with TENSORDICT_REQUIRE_C=1
# (scripts/test.sh) the installed copy must run its C reads.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
  --target "$scratch/site" .
git ls-files tensordict | grep -v '/tests/' | grep -v '\.c$' > "$scratch/tracked.txt"
cd "$scratch"
PYTHONPATH="$scratch/site" "$repo/.venv/bin/python" - "$scratch/site" "$scratch/tracked.txt" <<'PY'
import os
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
from tensordict import _hotreads

if os.environ.get("TENSORDICT_REQUIRE_C", "") not in ("", "0"):
    assert _hotreads.C_READS, "the installed copy has no C extension (tensordict._fastreads)"
    # (the checkout's editable install would supply one the copy lacks: not that one)
    ext = pathlib.Path(sys.modules["tensordict._fastreads"].__file__).resolve()
    assert ext.is_relative_to(site.resolve()), f"C extension loaded from {ext}"
assert td.get("a") is td._tensordict["a"] and td["a"] is td._tensordict["a"]
print(
    f"installed copy OK: {len(tracked.read_text().split())} package files at {site}, "
    f"C reads: {_hotreads.C_READS}"
)
PY
