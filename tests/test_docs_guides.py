"""Every ``python`` code block of the guides (``docs/*.md``) runs (issue 28).

A guide's blocks run in order in one namespace, as a reader would type them, in a
scratch folder, with ``import torch`` and ``from tensordict import *`` done; a block written as a ``>>>`` session is checked as a doctest (its printed
output included), any other block is executed. A block that cannot run here (it needs
several processes, a GPU or a server) says so on the line before it, as
``<!-- not run: why -->``, and is skipped. ``docs/nn.md`` runs in ``test_nn_docs.py``.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
import torch

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(
    r"(?P<mark><!-- not run: [^>]*-->\n)?^```python[^\n]*\n(?P<code>.*?)^```", re.S | re.M
)
OWN_TEST = {"nn.md"}  # tests/test_nn_docs.py
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
GUIDES = sorted(p for p in DOCS.glob("*.md") if p.name not in OWN_TEST)


def blocks(path: Path) -> list[tuple[int, str, bool]]:
    """(line, code, runs) of every python block of ``path``."""
    text = path.read_text()
    return [
        (text.count("\n", 0, m.start("code")) + 1, m.group("code"), not m.group("mark"))
        for m in BLOCK.finditer(text)
    ]


def test_the_guides_have_code():
    assert sum(len(blocks(p)) for p in GUIDES) > 20


@pytest.mark.parametrize("path", GUIDES, ids=[p.name for p in GUIDES])
def test_guide_code_blocks_run(path, tmp_path, monkeypatch, restore_modes):
    from conftest import missing_optional

    monkeypatch.chdir(tmp_path)
    torch.manual_seed(0)
    # as the reference examples: `import torch` and `from tensordict import *` done
    namespace: dict = {"__name__": f"docs.{path.stem}", "torch": torch}
    exec("from tensordict import *", namespace)
    for line, code, runs in blocks(path):
        if not runs or missing_optional(code):  # (CI has every optional package)
            continue
        where = f"{path.name}:{line}"
        if code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(code, namespace, where, where, line)
            report: list[str] = []
            result = doctest.DocTestRunner(optionflags=FLAGS).run(test, out=report.append)
            assert result.failed == 0, "".join(report)
            namespace.update(test.globs)
        else:
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"the block at {where} fails: {exc!r}") from exc
