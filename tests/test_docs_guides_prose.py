"""The guides (``docs/*.md``) speak to users: no lab-notebook history in them.

A guide says what a user can do and gives the current figures with the command that
reproduces them. Who measured what, when, in which run, for which issue or at which
commit is history: it goes to ``benchmarks/HISTORY.md`` (or the commit messages), never
to a guide. This test fails on the phrasings that history takes, so that it does not
come back.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"

#: Guides not checked yet (being rewritten); remove a name once its guide passes.
NOT_YET: set = set()

GUIDES = sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_YET)

#: (what it is, the pattern). Each is narrow on purpose: "runs 2 threads" or "the
#: runtime helpers" are fine, "run 15", "runs 16-17" or "helper `dropc`" are not.
LAB_NOTEBOOK = [
    ("a run number", r"\b(?:in|of|from|since|after|before|at|see) runs? \d+\b"),
    ("a range of runs", r"\bruns \d+\s*(?:-|–|to|\.\.)\s*\d+\b"),
    ("an issue number", r"\bissue \d+\b"),
    ("a row number", r"\brow ?\d+\b"),
    ("a work session", r"\bsessions?\b"),
    ("a named helper or branch", r"\b(?:helper|branch) `"),
    ("a commit as history", r"\b(?:at|since|commit) `?[0-9a-f]{7,40}\b"),
    ("a date", r"\b20\d\d-\d\d-\d\d\b"),
    ("a time of day", r"\b\d\d:\d\d(?:[–-]\d\d:\d\d)? UTC\b"),
    ("a stop number", r"\bstop \d+\b"),
    ("a path of the development machine", r"/work/"),
]


def findings(text: str) -> list[str]:
    """``"line N: what (matched text)"`` for every lab-notebook phrase of ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in LAB_NOTEBOOK:
            for match in re.finditer(pattern, line, re.I):
                found.append(f"line {number}: {what} ({match.group(0)!r})")
    return found


def test_the_patterns_catch_the_history_they_are_for():
    history = (
        "As measured in run 15 (runs 16-17), for issue 14 row 8, by helper `dropc` on\n"
        "2026-11-27 19:45 UTC at `9304f3f`, this session saw stop 3."
    )
    kinds = {f.split(": ", 1)[1].split(" (")[0] for f in findings(history)}
    assert kinds == {what for what, _ in LAB_NOTEBOOK} - {
        "a path of the development machine"
    }
    user_prose = (
        "On 2 CPUs a save with `num_threads=32` runs 2 threads; the runtime helpers of\n"
        "`_ops`; `--runs 3`; CI runs 200 examples; a row of the table; `0x6474`."
    )
    assert findings(user_prose) == []


@pytest.mark.parametrize("path", GUIDES, ids=[p.name for p in GUIDES])
def test_guides_hold_no_lab_notebook_history(path):
    found = findings(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{path.name} reads as a lab notebook (say what a user can do, with the "
        f"current figures and their command; move the history to "
        f"benchmarks/HISTORY.md): " + "; ".join(found)
    )
