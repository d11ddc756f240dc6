"""``python -m codegen [--check] [--root DIR]``.

Renders ``spec/`` into ``tensordict/_generated/`` and ``docs/reference/`` and writes the
files whose content changed, deleting generated files that no spec family produces any
more. ``--check`` writes nothing and exits 1 listing every drifted, missing or extra
generated file. ``--root`` points at another checkout (spec and outputs live under it;
the templates are always this package's). Exit status 2: the spec is invalid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codegen.model import SpecError
from codegen.render import existing_outputs, render_all

REPO_ROOT = Path(__file__).resolve().parent.parent


def plan(root: Path) -> tuple[dict[str, str], list[str], list[str], list[str]]:
    """(rendered files, changed, missing, extra) relative to ``root``."""
    rendered = render_all(root)
    on_disk = existing_outputs(root)
    changed, missing = [], []
    for rel, text in rendered.items():
        path = root / rel
        if rel not in on_disk:
            missing.append(rel)
        elif path.read_text(encoding="utf-8") != text:
            changed.append(rel)
    extra = sorted(rel for rel in on_disk if rel not in rendered)
    return rendered, changed, missing, extra


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if any generated file differs from the spec",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=REPO_ROOT,
        help="repository root holding spec/ and the outputs (default: this checkout)",
    )
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()

    try:
        rendered, changed, missing, extra = plan(root)
    except SpecError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"codegen: {len(exc.problems)} problem(s) in the spec", file=sys.stderr)
        return 2

    if args.check:
        for rel in changed:
            print(f"drifted: {rel}")
        for rel in missing:
            print(f"missing: {rel}")
        for rel in extra:
            print(f"extra: {rel}")
        if changed or missing or extra:
            print(
                "codegen --check: generated files are out of date; "
                "run `python -m codegen`",
                file=sys.stderr,
            )
            return 1
        print(f"codegen --check: {len(rendered)} generated files up to date")
        return 0

    for rel in sorted(changed + missing):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered[rel], encoding="utf-8", newline="\n")
        print(f"wrote {rel}")
    for rel in extra:
        (root / rel).unlink()
        print(f"deleted {rel}")
    if not (changed or missing or extra):
        print(f"codegen: {len(rendered)} generated files up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
