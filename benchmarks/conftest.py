"""Shared plumbing for the benchmark suites (benchmarks/test_bench_*.py).

* ``impl`` fixture: a benchmark that requests it runs twice, once as ``[td]`` (the
  tensordict under test) and once as ``[floor]`` (the same work written by hand on plain
  dicts of tensors). Floor variants carry the ``floor`` marker, so ``-m "not floor"``
  skips them.
* Every benchmark gets ``extra_info["case"]`` (its id without the impl part) and
  ``extra_info["impl"]``; ``compare.py`` pairs rows with them.
* The JSON written by ``--benchmark-json`` records which ``tensordict`` was imported and
  which benchmarks failed their correctness checks; the report header prints the path too.
* ``TENSORDICT_BENCH_FORBID_PREFIX``: if set, the session aborts when ``tensordict`` was
  imported from under that path (compare.py uses it so the reference run can never pick
  up the repository's own package).
"""

import os

import pytest
import tensordict
import torch


def _where(module):
    path = getattr(module, "__file__", None)
    if path:
        return os.path.realpath(path)
    # namespace package (no __init__.py): report its directory instead
    return " ".join(os.path.realpath(p) for p in getattr(module, "__path__", [])) or "?"


# One intra-op thread unless TENSORDICT_BENCH_THREADS says otherwise: on a machine whose
# cores other jobs share, torch's worker threads wait on each other and a 0.5 ms call
# sometimes takes 40 ms, which drowns the library's own cost that these suites measure.
torch.set_num_threads(int(os.environ.get("TENSORDICT_BENCH_THREADS", "1")))

TENSORDICT_PATH = _where(tensordict)
TENSORDICT_VERSION = getattr(tensordict, "__version__", "?")


def pytest_report_header(config):
    return (
        f"tensordict under test: {TENSORDICT_PATH} (version {TENSORDICT_VERSION}); "
        f"torch {torch.__version__}; {torch.get_num_threads()} intra-op thread(s)"
    )


def pytest_sessionstart(session):
    forbidden = os.environ.get("TENSORDICT_BENCH_FORBID_PREFIX")
    if forbidden:
        forbidden = os.path.realpath(forbidden)
        for path in TENSORDICT_PATH.split(" "):
            if path == forbidden or path.startswith(forbidden + os.sep):
                raise pytest.UsageError(
                    f"tensordict was imported from {path}, inside {forbidden}; "
                    "this run must use another installation"
                )


@pytest.fixture(
    params=[
        pytest.param("td", id="td"),
        pytest.param("floor", id="floor", marks=pytest.mark.floor),
    ]
)
def impl(request):
    return request.param


@pytest.fixture(autouse=True)
def _label_benchmark(request):
    if "benchmark" not in request.fixturenames:
        return
    bench = request.getfixturevalue("benchmark")
    node = request.node
    callspec = getattr(node, "callspec", None)
    which = "td"
    ids = []
    if callspec is not None:
        ids = callspec.id.split("-")
        if "impl" in callspec.params:
            which = callspec.params["impl"]
            if which in ids:
                ids.remove(which)
    case = f"{node.path.name}::{node.originalname}"
    if ids:
        case += "[" + "-".join(ids) + "]"
    bench.extra_info["case"] = case
    bench.extra_info["impl"] = which
    _EXTRA_INFO[node.nodeid] = bench.extra_info
    if bench.group is None:
        bench.group = case


_EXTRA_INFO = {}
_FAILED = []


def pytest_runtest_logreport(report):
    # A benchmark whose timed call worked but whose correctness check failed still has
    # timings in the JSON; mark it so a fast wrong answer cannot pass unnoticed.
    if report.failed:
        _FAILED.append(report.nodeid)
        if report.nodeid in _EXTRA_INFO:
            _EXTRA_INFO[report.nodeid]["failed"] = True


def pytest_benchmark_update_json(config, benchmarks, output_json):
    output_json["tensordict"] = {
        "path": TENSORDICT_PATH,
        "version": str(TENSORDICT_VERSION),
        "torch": torch.__version__,
    }
    output_json["failed"] = sorted(set(_FAILED))
