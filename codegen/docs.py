"""What the reference pages under ``docs/reference/`` get from Python (their text is in
``codegen/templates/reference_*.md.jinja`` and each family's ``reference`` macro):
Markdown filters, how users spell an op, the index of every method."""

from __future__ import annotations

import re

from codegen.model import Form, Op, Spec
from codegen.parse import OPERATORS

_ROLE = re.compile(r":(?:meth|func|class|attr):`~?([^`]+)`")


def markdown(text: str) -> str:
    """Docs text (RST-ish roles) as Markdown."""
    return _ROLE.sub(lambda m: f"`{m.group(1)}`", text)


def cell(text: str) -> str:
    """Text for a Markdown table cell (``|`` escaped)."""
    return markdown(text).replace("|", "\\|")


def anchor(name: str) -> str:
    """The anchor GitHub-style Markdown gives a ``## name`` heading."""
    return re.sub(r"[^a-z0-9_-]", "", name.lower().replace(" ", "-"))


def operators_md(op: Op) -> str:
    names = ([op.name] if op.is_dunder else []) + [a.name for a in op.aliases()]
    return ", ".join(f"`{OPERATORS[n]}`" for n in names)


def display_signature(op: Op) -> str:
    """How users spell the op."""
    if op.form is Form.FUNCTION:
        return (op.torch_functions[0] if op.torch_functions else op.name) + op.signature.text
    if op.form is Form.CLASSMETHOD:
        text = op.signature.function_text
        return f"TensorDict.{op.name}{text}\ntensordict.{op.name}{text}"
    return f"TensorDict.{op.name}{op.signature.text}"


def method_index(spec: Spec) -> list[dict[str, str]]:
    """Every generated method, sorted by name, with the op it belongs to."""
    items = []
    for op in spec.ops():
        if op.form is Form.FUNCTION:
            continue
        mine = [{"name": op.name, "summary": op.summary}]
        if op.inplace is not None:
            mine.append({"name": op.inplace.name, "summary": f"In-place `{op.name}`."})
        for a in op.aliases():
            mine.append({"name": a.name, "summary": f"`{OPERATORS[a.name]}`: same as `{a.target}`."})
        for item in mine:
            item.update(family=op.family, anchor=anchor(op.name))
        items += mine
    return sorted(items, key=lambda item: item["name"])
