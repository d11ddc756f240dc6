#!/usr/bin/env bash
# Make (once) the reference virtual environment: the existing tensordict package
# (0.15.3), against which benchmarks/compare.py measures this project and whose
# behaviour this project reproduces. It lives outside the repository (default:
# ../reference-venv beside the checkout) and is never the environment the project's own
# tests run in: the project's .venv must not hold tensordict 0.15.3.
#
#   bash scripts/reference-venv.sh [DIR]
#   .venv/bin/python benchmarks/compare.py --reference-venv DIR
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$(dirname "$repo")/reference-venv}"
case "$(cd "$(dirname "$dir")" 2>/dev/null && pwd)/" in
  "$repo"/*) echo "reference-venv.sh: $dir is inside the repository; pick a folder outside it" >&2; exit 2 ;;
esac
PYTHON="${PYTHON:-python3}"
if [ ! -x "$dir/bin/python" ]; then
  "$PYTHON" -m venv "$dir"
  # the CPU build of torch first, so that tensordict's requirement pulls no CUDA build
  "$dir/bin/python" -m pip install -q --disable-pip-version-check torch==2.13.0 \
    --index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check \
    tensordict==0.15.3 pytest pytest-benchmark h5py numpy pyyaml
fi
# pyyaml: benchmarks/test_bench_op_overhead.py reads the op list from spec/ (added later)
"$dir/bin/python" -c "import yaml" 2>/dev/null ||
  "$dir/bin/python" -m pip install -q --disable-pip-version-check pyyaml
"$dir/bin/python" -c "import tensordict, torch; print('reference tensordict', tensordict.__version__, 'torch', torch.__version__, 'at $dir')"
