"""What the templates get from Python besides the ops: docstrings and the entry's
expressions rewritten for one use (a keyword dropped, names replaced, the foreach call
split into its function and aligned arguments). ``codegen/templating.py`` makes each
public function here a global of every template; the code itself is in
``codegen/templates/``.
"""

from __future__ import annotations

import ast
from types import SimpleNamespace

from codegen.model import Op
from codegen.parse import OPERATORS


def indent(text: str, spaces: int = 4) -> str:
    """Every non-blank line of ``text`` indented (blank lines left empty)."""
    prefix = " " * spaces
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


# ---- docstrings ------------------------------------------------------------------------


def docstring(summary: str, *sections: str, example: str | None = None) -> str:
    """A docstring literal (its lines indented as the body that holds it)."""
    parts = [summary.strip()]
    parts += [s.strip() for s in sections if s and s.strip()]
    if example:
        parts.append("Example:\n" + indent(example.rstrip()))
    body = "\n\n".join(parts)
    prefix = 'r"""' if "\\" in body else '"""'
    return prefix + body + ("\n" if "\n" in body else "") + '"""'


def op_docstring(op: Op) -> str:
    notes = []
    if op.inplace is not None:
        notes.append(f"In place: :meth:`{op.inplace.name}`.")
    if op.aliases():
        spelled = ", ".join(f"``{OPERATORS[a.name]}``" for a in op.aliases())
        notes.append(f"Operators: {spelled}.")
    return docstring(op.summary, op.details, " ".join(notes), example=op.example)


def inplace_docstring(op: Op) -> str:
    return docstring(
        f"In-place :meth:`{op.name}`, returning ``self``.",
        f"{op.summary} Writes into the stored tensors.",
    )


# ---- per-leaf expressions --------------------------------------------------------------


class _DropKeyword(ast.NodeTransformer):
    def __init__(self, name: str):
        self.name = name

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        node.keywords = [kw for kw in node.keywords if kw.arg != self.name]
        return node


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(id=self.mapping.get(node.id, node.id), ctx=node.ctx), node)


def _expr(text: str, drop: str | None = None) -> ast.expr:
    tree = ast.parse(text, mode="eval").body
    if drop:
        tree = _DropKeyword(drop).visit(tree)
    return tree


def leaf_expr(text: str, drop: str | None = None) -> str:
    """The per-leaf expression, with keyword ``drop`` left out of its calls."""
    return ast.unparse(_expr(text, drop))


def substitute(text: str, mapping: dict[str, str]) -> str:
    """The expression ``text`` with the names in ``mapping`` replaced by the given
    expressions: ``torch.sum(x, dim, keepdim=keepdim)`` with ``{"dim": "-1",
    "keepdim": "False"}`` is ``torch.sum(x, -1, keepdim=False)``."""
    parsed = {k: ast.parse(v, mode="eval").body for k, v in mapping.items()}

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return parsed.get(node.id, node)

    return ast.unparse(_Sub().visit(ast.parse(text, mode="eval")).body)


def negated(text: str) -> str:
    """``not (text)``, parenthesised only where Python needs it."""
    return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=_expr(text)))


def foreach_call(
    text: str, operands: tuple[str, ...], drop: str | None, suffix: str
) -> SimpleNamespace:
    """``torch._foreach_add(leaves, other)`` as its ``function`` and its ``arguments``,
    each operand ``o`` renamed ``o + suffix`` (the template's name for its aligned
    list), for the template wrapping it in ``_ops.try_foreach``."""
    call = _expr(text, drop)
    assert isinstance(call, ast.Call)
    call = _Rename({o: o + suffix for o in operands}).visit(call)
    arguments = [ast.unparse(a) for a in call.args] + [ast.unparse(k) for k in call.keywords]
    return SimpleNamespace(function=ast.unparse(call.func), arguments=", ".join(arguments))
