"""The reference pages under ``docs/reference/``: one per family, an index of every
method, and how each op runs on a lazy stack (Markdown, from the same entries as the
code)."""

from __future__ import annotations

import re

from codegen import lazy
from codegen.emit import fill
from codegen.model import FamilySpec, Form, Op, Spec
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


def entry(op: Op) -> str:
    out = [f"\n## `{op.name}`", "", "```python", display_signature(op), "```", "",
           markdown(op.summary), "", markdown(op.details)]
    if op.inplace is not None:
        out += ["", "In place:", "", "```python",
                f"TensorDict.{op.inplace.name}{op.inplace.signature.text}", "```"]
    if op.aliases():
        out += ["", f"Operators: {operators_md(op)}."]
    out += ["", f"Batch size: {op.batch_size_doc}."]
    for fact in op.doc_facts():
        out += ["", fact]
    if op.torch_functions:
        out += ["", "Dispatched from: " + ", ".join(f"`{f}`" for f in op.torch_functions) + "."]
    out += ["", "Example:", "", "```python", op.example.rstrip(), "```"]
    return "\n".join(out)


def family_page(family: FamilySpec) -> str:
    table = "\n".join(
        f"| [`{op.name}`](#{anchor(op.name)}) | "
        f"{('`' + op.inplace.name + '`') if op.inplace else ''} | "
        f"{cell(operators_md(op))} | {cell(op.summary)} |"
        for op in family.ops
    )
    entries = "\n".join(entry(op) for op in family.ops)
    return fill("reference_family.md.tmpl", path=family.path, title=family.title,
                doc=markdown(family.doc), table=table, entries=entries)


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


def render_docs(spec: Spec, sources: str) -> dict[str, str]:
    out = {}
    families = "\n".join(
        f"| [{f.title}]({f.name}.md) | {len(f.ops)} | `{f.path}` |" for f in spec.families
    )
    methods = "\n".join(
        f"| `{i['name']}` | [{i['family']}]({i['family']}.md#{i['anchor']}) | {cell(i['summary'])} |"
        for i in method_index(spec)
    )
    out["docs/reference/index.md"] = fill("reference_index.md.tmpl", sources=sources,
                                          families=families, methods=methods)
    ways = "\n".join(f"| {lazy.WAYS[w]} | {lazy.note_line(w)} |" for w in lazy.WAYS)
    ops = "\n".join(
        f"| `{op.name}` | [{op.family}]({op.family}.md#{anchor(op.name)}) | {lazy.WAYS[op.lazy_way]} |"
        for op in spec.ops()
    )
    out["docs/reference/lazy.md"] = fill("reference_lazy.md.tmpl", sources=sources, ways=ways, ops=ops)
    for family in spec.families:
        out[f"docs/reference/{family.name}.md"] = family_page(family)
    return out
