"""Compare TorchRL's own test results on tensordict 0.15.3 and on this project.

`scripts/torchrl_compare.sh` runs the same TorchRL test files in two venvs and leaves one
JUnit XML per test file and side (`<results>/<side>/<file>.xml`, the file's path with
`/` written `__`). This module reads them back:

    python scripts/torchrl_compare.py report RESULTS [--ref ref] [--here here]

prints a table per test file (cases passed on 0.15.3, passed here, the rate here
relative to 0.15.3) and the overall figure against the 99% target, and writes beside
the XMLs `outcomes-<side>.json` (node id -> outcome and message) and `regressions.txt`:
the cases that pass on 0.15.3 and not here, grouped by error message, most frequent
first. That list is the to-do list for making TorchRL work on this project.

It needs only the standard library, so that it runs in any venv (and in the project's
own tests, on a fixed XML input).
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

TARGET = 0.99
PASSED = "passed"
# A test file whose XML is missing (the run crashed or was killed): its cases did not run.
NOT_RUN = "not run"


def xml_name(test_file: str) -> str:
    """The XML file name the shell script gives a test file's results."""
    return test_file.replace("/", "__") + ".xml"


def test_file_of(xml_path: pathlib.Path) -> str:
    return xml_path.name[: -len(".xml")].replace("__", "/")


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _collection_error(text: str) -> str:
    """The exception line of a collection-error traceback (pytest prefixes it 'E   ')."""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    if lines:
        return lines[-1]
    exc = [
        ln.strip()
        for ln in text.splitlines()
        if re.match(r"^\w+(Error|Exception)\b", ln)
    ]
    return exc[-1] if exc else _first_line(text)


def normalise_message(message: str) -> str:
    """One line, addresses and long numbers masked, so equal causes group together."""
    message = _first_line(message)
    message = re.sub(r"0x[0-9a-fA-F]+", "0x…", message)
    message = re.sub(r"/\S*/site-packages/", "site-packages/", message)
    message = re.sub(r"\b\d{4,}\b", "N", message)
    return message[:200]


def read_junit(xml_path: pathlib.Path) -> dict[str, dict[str, str]]:
    """Node id -> {"outcome", "message"} for every case of one JUnit XML file.

    Outcomes: passed, failed, error, skipped, xfailed. A collection error of the whole
    file appears as one case named after the file, with outcome "error".
    """
    test_file = test_file_of(xml_path)
    results: dict[str, dict[str, str]] = {}
    root = ET.parse(xml_path).getroot()
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        # pytest writes classname as the dotted module path, then the classes, if any.
        module = test_file[: -len(".py")].replace("/", ".")
        _, found, classes = classname.partition(module)
        cls = [c for c in classes.split(".") if c] if found else []
        nodeid = "::".join([test_file, *cls, name]) if classname else test_file
        outcome, message = PASSED, ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                message = child.get("message") or ""
                text = child.text or ""
                if message in ("collection failure", "") or message.startswith(
                    "failed on setup"
                ):
                    message = _collection_error(text) or message
                break
            if child.tag == "skipped":
                outcome = (
                    "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                )
                message = child.get("message") or ""
                break
        results[nodeid] = {"outcome": outcome, "message": normalise_message(message)}
    return results


def read_side(side_dir: pathlib.Path) -> dict[str, dict[str, dict[str, str]]]:
    """Test file -> its cases' outcomes, for every XML of one side."""
    return {test_file_of(p): read_junit(p) for p in sorted(side_dir.glob("*.xml"))}


def _file_note(side_dir: pathlib.Path, test_file: str) -> str:
    """Why a test file has no XML: the last line of its log, if there is one."""
    log = side_dir / (xml_name(test_file)[: -len(".xml")] + ".log")
    if log.is_file():
        tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
        if tail:
            return normalise_message(tail[-1])
    return "no results (the run of this file crashed or was killed)"


def compare(ref: dict, here: dict, here_dir: pathlib.Path | None = None) -> dict:
    """Per-file counts and the regressions (passed on ref, not here) with their messages."""
    rows, regressions = [], []
    for test_file in sorted(set(ref) | set(here)):
        ref_cases = ref.get(test_file, {})
        here_cases = here.get(test_file)
        ref_passed = {n for n, r in ref_cases.items() if r["outcome"] == PASSED}
        if here_cases is None:
            note = _file_note(here_dir, test_file) if here_dir else NOT_RUN
            here_cases = {}
        else:
            note = ""
        here_passed = {n for n, r in here_cases.items() if r["outcome"] == PASSED}
        # A file that failed to collect here has one "case" named after the file.
        file_error = here_cases.get(test_file)
        for nodeid in sorted(ref_passed - here_passed):
            if nodeid in here_cases:
                result = here_cases[nodeid]
                message = result["message"] or result["outcome"]
                outcome = result["outcome"]
            elif file_error is not None:
                message, outcome = "collection: " + file_error["message"], "error"
            else:
                message, outcome = note or "not collected here", NOT_RUN
            regressions.append(
                {"nodeid": nodeid, "outcome": outcome, "message": message}
            )
        rows.append(
            {
                "file": test_file,
                "cases": len(ref_cases),
                "ref_passed": len(ref_passed),
                "here_passed": len(here_passed),
                "both_passed": len(ref_passed & here_passed),
            }
        )
    return {"rows": rows, "regressions": regressions}


def _rate(num: int, den: int) -> str:
    return f"{100.0 * num / den:6.1f}%" if den else "     - "


def format_table(rows: list[dict]) -> str:
    width = max([len(r["file"]) for r in rows] + [len("TOTAL")])
    head = f"{'test file':<{width}}  {'cases':>6}  {'0.15.3':>6}  {'here':>6}  {'here/0.15.3':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['file']:<{width}}  {r['cases']:>6}  {r['ref_passed']:>6}  "
            f"{r['here_passed']:>6}  {_rate(r['here_passed'], r['ref_passed']):>11}"
        )
    total = {
        k: sum(r[k] for r in rows)
        for k in ("cases", "ref_passed", "here_passed", "both_passed")
    }
    lines.append("-" * len(head))
    lines.append(
        f"{'TOTAL':<{width}}  {total['cases']:>6}  {total['ref_passed']:>6}  "
        f"{total['here_passed']:>6}  {_rate(total['here_passed'], total['ref_passed']):>11}"
    )
    ratio = total["here_passed"] / total["ref_passed"] if total["ref_passed"] else 0.0
    verdict = "met" if ratio >= TARGET else "not met"
    lines.append(
        f"\nhere passes {100 * ratio:.1f}% of the cases 0.15.3 passes "
        f"(target >= {100 * TARGET:.0f}%: {verdict}); "
        f"{total['both_passed']} of the {total['ref_passed']} cases that pass on 0.15.3 "
        f"({_rate(total['both_passed'], total['ref_passed']).strip()}) pass here too."
    )
    return "\n".join(lines)


def group_regressions(regressions: list[dict], top: int = 30) -> str:
    counts = collections.Counter(r["message"] for r in regressions)
    example = {}
    for r in regressions:
        example.setdefault(r["message"], r["nodeid"])
    lines = [
        f"{len(regressions)} cases pass on 0.15.3 and not here; "
        f"top {min(top, len(counts))} of {len(counts)} error messages:"
    ]
    for message, count in counts.most_common(top):
        lines.append(f"{count:6d}  {message}\n        e.g. {example[message]}")
    return "\n".join(lines)


def report(
    results: pathlib.Path,
    ref_side: str = "ref",
    here_side: str = "here",
    files: list[str] | None = None,
) -> str:
    """Compare the two sides' XMLs under `results`, for `files` (default: every file)."""
    ref_dir, here_dir = results / ref_side, results / here_side
    ref, here = read_side(ref_dir), read_side(here_dir)
    if files is not None:
        ref = {f: ref[f] for f in files if f in ref}
        here = {f: here[f] for f in files if f in here}
    for name, side in ((ref_side, ref), (here_side, here)):
        flat = {n: r for cases in side.values() for n, r in cases.items()}
        (results / f"outcomes-{name}.json").write_text(
            json.dumps(flat, indent=1, sort_keys=True)
        )
    result = compare(ref, here, here_dir)
    table = format_table(result["rows"])
    grouped = group_regressions(result["regressions"])
    listing = "\n".join(
        f"{r['nodeid']}\t{r['outcome']}\t{r['message']}" for r in result["regressions"]
    )
    (results / "regressions.txt").write_text(grouped + "\n\n" + listing + "\n")
    text = table + "\n\n" + grouped
    (results / "summary.txt").write_text(text + "\n")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="table and regressions from the JUnit XMLs")
    rep.add_argument("results", type=pathlib.Path)
    rep.add_argument("--ref", default="ref")
    rep.add_argument("--here", default="here")
    rep.add_argument("--files", nargs="*", help="only these test files")
    args = parser.parse_args(argv)
    print(report(args.results, args.ref, args.here, args.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
