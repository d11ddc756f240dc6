#!/usr/bin/env bash
# On a machine with a CUDA GPU: the whole test suite (tests/test_cuda.py and every other
# GPU case included) and the GPU benchmark against 0.15.3 (benchmarks/gpu/). About 4
# minutes on one H100 with 16 cores; CI (no GPU) never runs it.
#
#   bash scripts/gpu_check.sh [OUTDIR]
#   TESTS="tests/test_cuda.py" bash scripts/gpu_check.sh   # some test files only
#
# Uses the `python3` that holds a CUDA build of torch. What it lacks comes from wheels in
# .whl/ (pip download them elsewhere when the machine has no network): black and its
# needs for the codegen tests, and tensordict==0.15.3 with pyvers for the benchmark's
# reference side. Without a 0.15.3 wheel the benchmark is skipped.
# Writes OUTDIR/tests.log, OUTDIR/bench.md and OUTDIR/versions.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-results}"
mkdir -p "$out"
py="${PYTHON:-python3}"
site=/tmp/td-gpu-site
ref=/tmp/td-gpu-reference
rm -rf "$site" "$ref"
if ls .whl/*.whl >/dev/null 2>&1; then
  tools=$(ls .whl/*.whl | grep -v -e tensordict- -e pyvers-)
  [ -n "$tools" ] && "$py" -m pip install -q --no-index --no-deps --no-compile --target "$site" $tools
  refs=$(ls .whl/*.whl | grep -e tensordict- -e pyvers-)
  [ -n "$refs" ] && "$py" -m pip install -q --no-index --no-deps --no-compile --target "$ref" $refs
fi
export PYTHONPATH="$PWD:$site"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$py" -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"
} > "$out/versions.txt" 2>&1
cat "$out/versions.txt"
# the optional C reads, built in place (tensordict/_hotreads.py says when they are used)
"$py" setup.py -q build_ext --inplace > "$out/build.log" 2>&1 || echo "C extension not built (see build.log)"
xdist=""
"$py" -c "import xdist" 2>/dev/null && xdist="-n 8"
echo "== tests"
timeout 420 "$py" -m pytest ${TESTS:-tests} -q -p no:cacheprovider $xdist -rfE > "$out/tests.log" 2>&1
echo "tests exit $?"; tail -25 "$out/tests.log"
if [ -d "$ref/tensordict" ]; then
  echo "== benchmark"
  timeout 240 "$py" benchmarks/gpu/compare_gpu.py --reference-path "$ref" --rounds 7 | tee "$out/bench.md"
fi
