"""benchmarks/compare.py: how the report combines runs (the figures quoted in closing
notes come from it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "compare.py"
_spec = importlib.util.spec_from_file_location("bench_compare", _PATH)
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _run(medians: dict, failed=()):
    """pytest-benchmark JSON with one benchmark per (case, impl)."""
    benchmarks = []
    for (case, impl), median in medians.items():
        info = {"case": case, "impl": impl}
        if (case, impl) in failed:
            info["failed"] = True
        benchmarks.append(
            {"fullname": case, "extra_info": info, "stats": {"median": median}}
        )
    return {"benchmarks": benchmarks}


def test_rounds_combine_as_the_median_of_each_rounds_median():
    runs = [
        _run({("a", "td"): 1.0, ("a", "floor"): 0.5, ("b", "td"): 9.0}),
        _run({("a", "td"): 3.0, ("a", "floor"): 0.7, ("b", "td"): 7.0}),
        _run({("a", "td"): 2.0, ("a", "floor"): 0.6}, failed={("a", "td")}),
    ]
    rows, order, failed = compare.rows_of_rounds(runs)
    assert order == ["a", "b"]
    assert rows["a"] == {"td": 2.0, "floor": 0.6}
    assert rows["b"] == {"td": 8.0}  # missing in one round: the others' median
    assert failed == {("a", "td")}  # failed in any round


def test_one_round_is_that_run():
    run = _run({("a", "td"): 1.5})
    assert compare.rows_of_rounds([run]) == compare.rows_of(run)


def test_floor_targets_report_every_rounds_ratio_and_flag_any_round_above():
    case = "test_bench_nn.py::test_tdmodule_linear"
    runs = [
        _run({(case, "td"): 12e-6, (case, "floor"): 10e-6}),
        _run({(case, "td"): 14e-6, (case, "floor"): 10e-6}),
    ]
    misses = []
    (line,) = compare.floor_target_lines([case, "other"], runs, misses)
    assert "rounds 1.20, 1.40" in line and "overhead median 3.00 µs" in line
    assert misses == ["nn::tdmodule_linear over its floor: rounds 1.40 > 1.3"]
