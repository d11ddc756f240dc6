"""scripts/torchrl_compare.py: how the TorchRL comparison reads pytest's JUnit XML and
computes the figures of issue 16 (runs without TorchRL, on fixed XML input)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "scripts" / "torchrl_compare.py"
_spec = importlib.util.spec_from_file_location("torchrl_compare", _PATH)
trc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trc)

# As pytest writes them: classname is the dotted path from the rootdir, then the class.
REF_SPECS = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="test.test_specs.TestBounded" name="test_a[0]" time="0.1"/>
<testcase classname="test.test_specs.TestBounded" name="test_a[1]" time="0.1"/>
<testcase classname="test.test_specs" name="test_free" time="0.1"/>
<testcase classname="test.test_specs" name="test_gpu" time="0.0">
  <skipped type="pytest.skip" message="no cuda device">skip</skipped></testcase>
</testsuite></testsuites>"""
HERE_SPECS = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="test.test_specs.TestBounded" name="test_a[0]" time="0.1"/>
<testcase classname="test.test_specs.TestBounded" name="test_a[1]" time="0.1">
  <failure message="AttributeError: 'X' object at 0x7f00ab has no attribute 'set'">tb</failure>
</testcase>
<testcase classname="test.test_specs" name="test_free" time="0.1">
  <failure message="AttributeError: 'X' object at 0x7f11cd has no attribute 'set'">tb</failure>
</testcase>
<testcase classname="test.test_specs" name="test_gpu" time="0.0">
  <skipped type="pytest.skip" message="no cuda device">skip</skipped></testcase>
</testsuite></testsuites>"""
REF_STEP = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="test.envs.test_step_mdp.TestStepMdp" name="test_x" time="0.1"/>
<testcase classname="test.envs.test_step_mdp.TestStepMdp" name="test_y" time="0.1">
  <skipped type="pytest.xfail" message="known">x</skipped></testcase>
</testsuite></testsuites>"""
# A module that fails to import: pytest writes one error case named after the file.
HERE_STEP = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="" name="test.envs.test_step_mdp" time="0.000">
<error message="collection failure">ImportError while importing test module.
Traceback:
test/envs/test_step_mdp.py:12: in &lt;module&gt;
    from tensordict import assert_allclose_td
E   ImportError: cannot import name 'assert_allclose_td' from 'tensordict' (/v/lib/python3.11/site-packages/tensordict/__init__.py)</error>
</testcase></testsuite></testsuites>"""


@pytest.fixture
def results(tmp_path):
    for side, xmls in (
        ("ref", {"test_specs.py": REF_SPECS, "envs/test_step_mdp.py": REF_STEP}),
        ("here", {"test_specs.py": HERE_SPECS, "envs/test_step_mdp.py": HERE_STEP}),
    ):
        (tmp_path / side).mkdir()
        for test_file, text in xmls.items():
            (tmp_path / side / trc.xml_name(test_file)).write_text(text)
    return tmp_path


def test_junit_cases_get_pytest_node_ids_and_outcomes(results):
    cases = trc.read_junit(results / "ref" / "envs__test_step_mdp.py.xml")
    assert cases == {
        "envs/test_step_mdp.py::TestStepMdp::test_x": {
            "outcome": "passed",
            "message": "",
        },
        "envs/test_step_mdp.py::TestStepMdp::test_y": {
            "outcome": "xfailed",
            "message": "known",
        },
    }
    specs = trc.read_junit(results / "ref" / "test_specs.py.xml")
    assert specs["test_specs.py::test_free"]["outcome"] == "passed"
    assert specs["test_specs.py::test_gpu"]["outcome"] == "skipped"


def test_table_counts_passes_per_file_and_the_rate_relative_to_the_reference(results):
    text = trc.report(results)
    rows = {
        ln.split()[0]: ln.split()[1:] for ln in text.splitlines() if ln[:1].isalpha()
    }
    # cases, passed on 0.15.3, passed here, here / 0.15.3
    assert rows["test_specs.py"] == ["4", "3", "1", "33.3%"]
    assert rows["envs/test_step_mdp.py"] == ["2", "1", "0", "0.0%"]
    assert rows["TOTAL"] == ["6", "4", "1", "25.0%"]
    assert "passes 25.0% of the cases 0.15.3 passes (target >= 99%: not met)" in text


def test_regressions_are_grouped_by_normalised_message_most_frequent_first(results):
    text = trc.report(results)
    grouped = text.split("error messages:")[1].splitlines()
    counts = [ln.split(None, 1) for ln in grouped if ln[:6].strip().isdigit()]
    assert counts == [
        ["2", "AttributeError: 'X' object at 0x… has no attribute 'set'"],
        [
            "1",
            "collection: ImportError: cannot import name 'assert_allclose_td' from "
            "'tensordict' (site-packages/tensordict/__init__.py)",
        ],
    ]
    listing = (results / "regressions.txt").read_text()
    assert "test_specs.py::TestBounded::test_a[1]\tfailed\t" in listing
    assert "envs/test_step_mdp.py::TestStepMdp::test_x\terror\tcollection: " in listing


def test_outcomes_are_written_per_side_and_a_missing_file_counts_as_not_run(results):
    (results / "here" / "envs__test_step_mdp.py.xml").unlink()
    (results / "here" / "envs__test_step_mdp.py.log").write_text("Segmentation fault\n")
    text = trc.report(results)
    assert "Segmentation fault" in text
    here = json.loads((results / "outcomes-here.json").read_text())
    assert here["test_specs.py::TestBounded::test_a[0]"]["outcome"] == "passed"
    assert not any(k.startswith("envs/") for k in here)


def test_the_report_can_be_limited_to_a_selection_of_files(results):
    text = trc.report(results, files=["test_specs.py"])
    rows = {
        ln.split()[0]: ln.split()[1:] for ln in text.splitlines() if ln[:1].isalpha()
    }
    assert "envs/test_step_mdp.py" not in rows
    assert rows["TOTAL"] == ["4", "3", "1", "33.3%"]
