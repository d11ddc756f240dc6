"""The README's quick start runs as printed."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_quick_start_runs():
    text = README.read_text()
    section = text[text.index("## Quick start") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md quick start", "exec"), {})
    printed = out.getvalue()
    # the printed repr is the verbose one the README shows
    assert printed.startswith("TensorDict(\n    fields={\n        action: Tensor(shape=")
    assert "batch_size=torch.Size([4])" in printed
