#!/usr/bin/env python
"""Run 0.15.3's memmap benchmark file on both sides, as its authors run it, and print ratios.

    .venv/bin/python benchmarks/upstream_memmap_ratios.py PATH/TO/memmap_benchmarks_test.py \
        [--runs 3] [--reference-python ../reference-venv/bin/python] [-k EXPR]

Each run executes the whole file once per side, one pytest process per side (ours, then
the reference), with pytest-benchmark's settings ``--benchmark-max-time=0.25
--benchmark-min-rounds=5`` and no warm-up (its default), in the file's own order. The file
is copied to a scratch folder outside this repository, so each side imports only its own
package (ours through PYTHONPATH=<this repo>). The table gives, per case, each run's
ratio ours/reference of the medians and the median of those ratios (< 1: ours faster);
the last column is the ratio of the medians of the runs' medians.

The benchmark file itself is not part of this repository: pass its path.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _default_reference():
    here = REPO_ROOT
    while True:
        candidate = os.path.join(here, "reference-venv", "bin", "python")
        if os.path.exists(candidate) or os.path.dirname(here) == here:
            return candidate
        here = os.path.dirname(here)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("suite", help="path of 0.15.3's memmap_benchmarks_test.py")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--reference-python",
        default=_default_reference(),
        help="python of the venv holding 0.15.3 (default: the nearest "
        "reference-venv above this repo: %(default)s)",
    )
    p.add_argument("--ours-python", default=sys.executable)
    p.add_argument("-k", default=None, help="pytest -k expression (default: every case)")
    p.add_argument("--json", default=None, help="write the raw medians here")
    return p.parse_args(argv)


def run_side(python, suite_copy, workdir, ours, kexpr):
    out = os.path.join(workdir, "result.json")
    basetemp = os.path.join(workdir, "bt")
    cmd = [
        python, "-m", "pytest", suite_copy, "-q", "-p", "no:cacheprovider",
        "--benchmark-max-time=0.25", "--benchmark-min-rounds=5",
        f"--benchmark-json={out}", f"--basetemp={basetemp}",
    ]
    if kexpr:
        cmd += ["-k", kexpr]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if ours:
        env["PYTHONPATH"] = REPO_ROOT
    check = subprocess.run(
        [python, "-c", "import tensordict; print(tensordict.__file__)"],
        cwd=workdir, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    inside = check.startswith(REPO_ROOT + os.sep)
    if inside != ours:
        raise SystemExit(f"wrong tensordict for {'ours' if ours else 'reference'}: {check}")
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    try:
        with open(out) as f:
            data = json.load(f)
    except FileNotFoundError:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"no results from {python}")
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    medians = {b["name"]: b["stats"]["median"] for b in data["benchmarks"]}
    rounds = {b["name"]: b["stats"]["rounds"] for b in data["benchmarks"]}
    return medians, rounds, wall


def main(argv=None):
    args = parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="td-upstream-memmap-") as workdir:
        suite_copy = os.path.join(workdir, "test_upstream_memmap.py")
        shutil.copy(args.suite, suite_copy)
        for r in range(args.runs):
            run = {}
            for side, python, ours in (
                ("ours", args.ours_python, True),
                ("reference", args.reference_python, False),
            ):
                med, rounds, wall = run_side(python, suite_copy, workdir, ours, args.k)
                run[side] = med
                run[side + "_rounds"] = rounds
                print(f"run {r + 1} {side}: {wall:.0f} s", file=sys.stderr, flush=True)
            results.append(run)
            if args.json:  # what has run so far, in case a later run fails
                with open(args.json, "w") as f:
                    json.dump(results, f, indent=1)
    names = [n for n in results[0]["ours"] if n in results[0]["reference"]]
    print(f"| case | ours / 0.15.3, runs 1..{args.runs} | median | ms ours / 0.15.3 (median of runs) |")
    print("|---|---|---:|---|")
    for n in names:
        ratios = [r["ours"][n] / r["reference"][n] for r in results if n in r["ours"]]
        mo = statistics.median(r["ours"][n] for r in results) * 1e3
        mr = statistics.median(r["reference"][n] for r in results) * 1e3
        print(
            f"| `{n}` | {', '.join(f'{x:.2f}' for x in ratios)} | "
            f"{statistics.median(ratios):.2f} | {mo:.3g} / {mr:.3g} |"
        )
    for side, other in (("ours", "reference"), ("reference", "ours")):
        only = [n for n in results[0][side] if n not in results[0][other]]
        if only:  # skipped or failed on the other side (e.g. an optional dependency)
            print(f"\nonly timed on {side}'s side: {', '.join(only)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
