#!/usr/bin/env python
"""Run the benchmark suites for our tensordict and the reference one, side by side.

    .venv/bin/python benchmarks/compare.py [-k EXPR] [--out FILE] [-- extra pytest args]

"Ours" runs in --ours-python (default: this interpreter); the reference runs in
--reference-venv (default: ../reference-venv next to the repo, which
scripts/reference-venv.sh makes). Both run the same
benchmarks/test_bench_*.py from a scratch working directory, so only the installed
package of each environment can be imported; the reference run also aborts if its
tensordict comes from inside this repo. Floor benchmarks ([floor]) run once, with ours.
Prints a markdown table of medians and writes it to --out (default benchmarks/results.md).

With --rounds N the two suites run alternately N times (ours, reference, ours, ...), so
that a drift of the machine's speed during the run hits both sides alike; each median in
the table is then the median of the N rounds' medians, and a column gives the range of
the per-round ratios.
"""

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)

# Targets (see README.md): every benchmark at least on par with the reference; these
# cases of this project's own files (benchmarks/test_bench_*.py) at least 1.5x (or 2x)
# faster. Matched against the test's full name, so a case of another suite (0.15.3's
# files, ``--suite``) that happens to share a function name keeps the on-par target.
TARGETS = [
    (re.compile(r"test_bench_\w+\.py::test_construct_"), 1.5),
    (re.compile(r"test_bench_\w+\.py::test_(get|set)_nested"), 1.5),
    (re.compile(r"test_bench_\w+\.py::test_(abs|add_scalar|add_td)\b"), 1.5),
    (re.compile(r"test_bench_\w+\.py::test_(stack|cat|unbind)\b"), 1.5),
    # data on disk (benchmarks/test_bench_persistence.py; issue 10)
    (re.compile(r"test_bench_\w+\.py::test_load_memmap_10000_leaves\b"), 2.0),
    (re.compile(r"test_bench_\w+\.py::test_index_64_random_rows_of_memmap\b"), 1.5),
    (
        re.compile(
            r"test_bench_\w+\.py::test_(tdsequential_3|module_roundtrip|vmap_ensemble)\b"
        ),
        1.5,
    ),
    (re.compile(r"test_bench_func\.py::test_vmap"), 1.5),
]

# Targets against the floor (the same work by hand, run in the same suite as ours):
# ours/floor at most this, in every round. Matched like TARGETS.
FLOOR_TARGETS = [
    # issue 11: TensorDictModule(nn.Linear(64, 64)) on a batch of 32, over the Linear
    # called by hand
    (re.compile(r"::test_tdmodule_linear\b"), 1.3),
]


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--reference-venv",
        default=os.path.join(os.path.dirname(REPO_ROOT), "reference-venv"),
        help="venv holding the existing tensordict (default: %(default)s)",
    )
    p.add_argument(
        "--ours-python",
        default=sys.executable,
        help="interpreter whose tensordict counts as ours (default: %(default)s)",
    )
    p.add_argument(
        "-k", dest="keyword", help="pytest -k expression, passed to both runs"
    )
    p.add_argument(
        "--suite",
        action="append",
        metavar="PATH",
        help="benchmark files or folders to run instead of benchmarks/ (repeatable), "
        "e.g. 0.15.3's own suite checked out outside the repo "
        "(see README.md, 'Its own benchmark suite')",
    )
    p.add_argument(
        "--out",
        default=os.path.join(BENCH_DIR, "results.md"),
        help="markdown report file (default: %(default)s)",
    )
    p.add_argument(
        "--json-dir",
        default=os.path.join(BENCH_DIR, ".runs"),
        help="where the pytest-benchmark JSON and logs go (default: %(default)s)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a target is missed or a benchmark failed",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="noise band: a ratio counts as missing its target only below "
        "target*(1-tolerance) (default: %(default)s)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run ours and the reference alternately this many times and report the "
        "median of the rounds (default: %(default)s)",
    )
    p.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the process's CPU time (pytest-benchmark's "
        "--benchmark-timer=time.process_time) instead of the wall clock, on both "
        "sides: time the process spends waiting for a core that other jobs hold is "
        "not counted (see README.md, 'On a shared machine')",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="stream pytest output")
    p.add_argument(
        "pytest_args",
        nargs="*",
        help="extra pytest arguments, after `--` (e.g. -- --benchmark-max-time=1)",
    )
    return p.parse_args(argv)


_COMPILED: set = set()  # the interpreters whose tensordict has been byte-compiled


def run_suite(label, python, args, json_path, extra_env=None, extra_pytest=()):
    log_path = os.path.splitext(json_path)[0] + ".log"
    for path in (json_path, log_path):
        if os.path.exists(path):
            os.remove(path)
    suite = [os.path.abspath(p) for p in args.suite] if args.suite else [BENCH_DIR]
    rootdir = os.path.commonpath(
        [p if os.path.isdir(p) else os.path.dirname(p) for p in suite]
    )
    cmd = [
        python,
        "-m",
        "pytest",
        *suite,
        "--rootdir",
        rootdir,
        "-p",
        "no:cacheprovider",
    ]
    cmd += ["--benchmark-json", json_path]
    if args.keyword:
        cmd += ["-k", args.keyword]
    if args.cpu_time:
        cmd.append("--benchmark-timer=time.process_time")
    if args.suite and not any(
        a.startswith("--benchmark-warmup") for a in args.pytest_args
    ):
        # Files from outside (0.15.3's suite) get the warm-up that pytest.ini gives
        # ours. Without it pytest-benchmark picks a case's iterations per round from
        # its first, cold call alone: a sub-µs case whose first call happened to take
        # over 2.5 µs ran 1 iteration a round (the timer's own ~70 ns in every sample)
        # on one side and 20-100 on the other, in no fixed order.
        cmd += ["--benchmark-warmup=on", "--benchmark-warmup-iterations=200"]
    cmd += list(extra_pytest) + list(args.pytest_args)
    env = dict(os.environ)
    # nothing but the interpreter's own environment decides what `import tensordict` finds
    for var in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(var, None)
    env["PYTHONSAFEPATH"] = "1"  # 3.11+: no script/cwd entry on sys.path
    # one intra-op thread (see conftest.py), also for --suite files that do not load our
    # conftest.py: there torch's two threads on two shared cores made some rounds of
    # 0.15.3's vmap cases 200x slower than others, on both sides
    env["OMP_NUM_THREADS"] = os.environ.get("TENSORDICT_BENCH_THREADS", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra_env or {})
    print(f"[{label}] {python} -m pytest ... (log: {log_path})", flush=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"tdbench-{label}-") as scratch:
        if python not in _COMPILED:  # both sides from bytecode (see _bytecode.py)
            from _bytecode import compile_package  # beside this script

            compile_package(python, env, scratch)
            _COMPILED.add(python)
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=scratch,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for line in proc.stdout:
                log.write(line)
                if args.verbose:
                    sys.stdout.write(line)
            rc = proc.wait()
    elapsed = time.monotonic() - start
    if not os.path.exists(json_path):
        with open(log_path) as f:
            tail = "".join(f.readlines()[-30:])
        sys.exit(f"[{label}] pytest exited {rc} without writing {json_path}:\n{tail}")
    with open(json_path) as f:
        data = json.load(f)
    if "tensordict" not in data:  # a suite without our conftest.py
        data["tensordict"] = imported_tensordict(python, env)
    n = len(data.get("benchmarks", []))
    status = "ok" if rc == 0 else f"pytest exit code {rc}, see log"
    print(f"[{label}] {n} benchmarks in {elapsed:.1f} s ({status})", flush=True)
    return data


def imported_tensordict(python, env):
    """Where ``python`` imports tensordict from, in the environment the suite ran in."""
    code = (
        "import json, os, tensordict, torch; print(json.dumps({'path': "
        "os.path.realpath(tensordict.__file__), 'version': "
        "getattr(tensordict, '__version__', '?'), 'torch': torch.__version__}))"
    )
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(
            [python, "-c", code], cwd=scratch, env=env, capture_output=True, text=True
        )
    return json.loads(out.stdout) if out.returncode == 0 else {}


def rows_of(data):
    """({case: {impl: median seconds}}, case order, {(case, impl) that failed})."""
    out, order, failed = {}, [], set()
    for bench in data.get("benchmarks", []):
        info = bench.get("extra_info") or {}
        case = info.get("case") or bench["fullname"]
        impl = info.get("impl", "td")
        if case not in out:
            out[case] = {}
            order.append(case)
        out[case][impl] = bench["stats"]["median"]
        if info.get("failed"):
            failed.add((case, impl))
    return out, order, failed


def rows_of_rounds(runs):
    """``rows_of`` over several runs of one suite: each median is the median of the
    runs' medians; a benchmark failed if it failed in any run."""
    per_run = [rows_of(data) for data in runs]
    order, failed, values = [], set(), {}
    for rows, run_order, run_failed in per_run:
        failed |= run_failed
        for case in run_order:
            if case not in values:
                values[case] = {}
                order.append(case)
            for impl, median in rows[case].items():
                values[case].setdefault(impl, []).append(median)
    out = {
        case: {impl: statistics.median(ms) for impl, ms in impls.items()}
        for case, impls in values.items()
    }
    return out, order, failed


def floor_target_lines(order, ours_runs, misses):
    """One summary line per case with a FLOOR_TARGETS entry: ours/floor and the
    overhead (ours - floor, µs) of every round, each round's two medians taken in the
    same suite run. Any round above the target is a miss (no noise band: the target
    says every round)."""
    lines = []
    per_round = [rows_of(data)[0] for data in ours_runs]
    for case in order:
        limit = min([t for pat, t in FLOOR_TARGETS if pat.search(case)], default=None)
        if limit is None:
            continue
        pairs = [
            (rows[case]["td"], rows[case]["floor"])
            for rows in per_round
            if rows.get(case, {}).get("td") and rows.get(case, {}).get("floor")
        ]
        if not pairs:
            continue
        ratios = [td / floor for td, floor in pairs]
        overheads = [(td - floor) * 1e6 for td, floor in pairs]
        lines.append(
            f"Over the floor, {short(case)} (ours/floor, target ≤{limit:g} in every "
            f"round): median {statistics.median(ratios):.2f}, rounds "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + f"; overhead median {statistics.median(overheads):.2f} µs, rounds "
            + ", ".join(f"{o:.2f}" for o in overheads)
            + " µs."
        )
        above = [r for r in ratios if r > limit]
        if above:
            misses.append(
                f"{short(case)} over its floor: rounds "
                + ", ".join(f"{r:.2f}" for r in above)
                + f" > {limit:g}"
            )
    return lines


def fmt_us(seconds):
    if seconds is None:
        return "—"
    us = seconds * 1e6
    if us < 10:
        return f"{us:.2f}"
    if us < 1000:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def short(case):
    file, _, test = case.partition("::")
    file = re.sub(r"^test_bench_|\.py$", "", file)
    test = re.sub(r"^test_", "", test)
    return f"{file}::{test}"


def under(path, root):
    root = os.path.realpath(root)
    return any(p == root or p.startswith(root + os.sep) for p in path.split(" "))


def main(argv=None):
    args = parse_args(argv)
    ref_python = os.path.join(os.path.abspath(args.reference_venv), "bin", "python")
    if not os.access(ref_python, os.X_OK):
        sys.exit(
            f"No reference venv at {args.reference_venv}.\n"
            "Create it with: bash scripts/reference-venv.sh  (it makes ../reference-venv), "
            "or pass --reference-venv DIR."
        )
    if args.rounds < 1:
        sys.exit("--rounds must be at least 1")
    os.makedirs(args.json_dir, exist_ok=True)
    ours_runs, ref_runs = [], []
    for i in range(args.rounds):
        suffix = "" if args.rounds == 1 else f"-{i + 1}"
        json_dir = os.path.abspath(args.json_dir)
        ours_runs.append(
            run_suite("ours", args.ours_python, args, f"{json_dir}/ours{suffix}.json")
        )
        ref_runs.append(
            run_suite(
                "reference",
                ref_python,
                args,
                f"{json_dir}/reference{suffix}.json",
                extra_env={"TENSORDICT_BENCH_FORBID_PREFIX": REPO_ROOT},
                extra_pytest=["-m", "not floor"],
            )
        )
    ours, ref = ours_runs[0], ref_runs[0]

    ours_td, ref_td = ours.get("tensordict", {}), ref.get("tensordict", {})
    ours_path, ref_path = ours_td.get("path", "?"), ref_td.get("path", "?")
    print(f"ours      tensordict: {ours_path} (version {ours_td.get('version')})")
    print(f"reference tensordict: {ref_path} (version {ref_td.get('version')})")
    notes = []
    if under(ref_path, REPO_ROOT):
        sys.exit("ERROR: the reference run imported tensordict from inside the repo")
    if ours_path == ref_path:
        notes.append(
            "**Plumbing test only:** ours and reference imported the same package "
            f"(`{ours_path}`); ratios measure noise, not our implementation."
        )
    elif not under(ours_path, REPO_ROOT):
        notes.append(
            f"**Warning:** ours was imported from `{ours_path}`, not from this repo "
            f"(`{REPO_ROOT}`)."
        )
    for note in notes:
        print(note.replace("**", ""))

    ours_rows, order, ours_failed = rows_of_rounds(ours_runs)
    ref_rows, ref_order, ref_failed = rows_of_rounds(ref_runs)
    order += [c for c in ref_order if c not in ours_rows]
    per_round = [(rows_of(o)[0], rows_of(r)[0]) for o, r in zip(ours_runs, ref_runs)]

    spread = args.rounds > 1
    lines = [
        "| benchmark | ours (median, µs) | reference (median, µs) "
        "| ratio (reference/ours, >1 = ours faster) "
        + ("| per-round ratios |" if spread else "|")
        + " floor (µs) |",
        "|---|---:|---:|---:|" + ("---:|" if spread else "") + "---:|",
    ]
    ratios, misses, slower = [], [], []
    failures = sorted({f"ours: {n}" for o in ours_runs for n in o.get("failed", [])})
    failures += sorted(
        {f"reference: {n}" for r in ref_runs for n in r.get("failed", [])}
    )
    for case in order:
        o = ours_rows.get(case, {}).get("td")
        r = ref_rows.get(case, {}).get("td")
        floor = ours_rows.get(case, {}).get("floor")
        o_cell, r_cell = fmt_us(o), fmt_us(r)
        if (case, "td") in ours_failed:
            o_cell += " (FAILED check)"
        if (case, "td") in ref_failed:
            r_cell += " (FAILED check)"
        ratio_cell = "—"
        if o and r:
            ratio = r / o
            ratios.append(ratio)
            ratio_cell = f"{ratio:.2f}"
            if ratio < 1:
                slower.append(f"{short(case)} {ratio:.2f}")
            need = max([t for pat, t in TARGETS if pat.search(case)], default=1.0)
            if ratio < need * (1 - args.tolerance):
                ratio_cell = f"**{ratio:.2f}** (target ≥{need:g})"
                misses.append(f"{short(case)}: {ratio:.2f} < {need:g}")
        range_cell = ""
        if spread:
            round_ratios = [
                r_rows[case]["td"] / o_rows[case]["td"]
                for o_rows, r_rows in per_round
                if o_rows.get(case, {}).get("td") and r_rows.get(case, {}).get("td")
            ]
            range_cell = (
                f" {min(round_ratios):.2f}–{max(round_ratios):.2f} |"
                if round_ratios
                else " — |"
            )
        lines.append(
            f"| {short(case)} | {o_cell} | {r_cell} | {ratio_cell} |{range_cell}"
            f" {fmt_us(floor)} |"
        )
    table = "\n".join(lines)
    floor_lines = floor_target_lines(order, ours_runs, misses)

    summary = []
    if ratios:
        gmean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        summary.append(
            f"Geometric mean ratio: {gmean:.2f} over {len(ratios)} benchmarks "
            f"(time ours/reference: {1 / gmean:.2f})."
        )
    summary.append(
        f"Slower than the reference (ratio < 1, noise not discounted): {len(slower)}"
        + (" — " + "; ".join(slower) if slower else "")
        + "."
    )
    summary.append(
        f"Targets missed (beyond the {args.tolerance:.0%} noise band): "
        + ("; ".join(misses) if misses else "none")
        + "."
    )
    summary += floor_lines
    if failures:
        summary.append(
            "FAILED tests (missing or flagged rows): " + "; ".join(failures) + "."
        )

    header = [
        "# tensordict benchmarks: ours vs reference",
        "",
        f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        f"- ours: `{ours_path}` (version {ours_td.get('version')}, "
        f"torch {ours_td.get('torch')}, python `{args.ours_python}`)",
        f"- reference: `{ref_path}` (version {ref_td.get('version')}, "
        f"torch {ref_td.get('torch')}, python `{ref_python}`)",
        f"- selection: `-k {args.keyword}`" if args.keyword else "- selection: all",
        (
            f"- rounds: {args.rounds} (ours and reference alternately; medians of the "
            "rounds' medians)"
            if spread
            else "- rounds: 1"
        ),
        "- medians in µs"
        + (" of process CPU time (--cpu-time)" if args.cpu_time else " (wall clock)")
        + "; floor = same work by hand on plain dicts of tensors",
    ]
    report = (
        "\n".join(
            header + [""] + notes + ([""] if notes else []) + [table, ""] + summary
        )
        + "\n"
    )
    print()
    print(table)
    print()
    print("\n".join(summary))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(report)
    print(f"\nwritten: {args.out}")
    if args.check and (misses or failures):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
