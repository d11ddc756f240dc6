"""Emitters every family shares: plain functions from typed spec objects to Python
source (black formats it afterwards). A family's op type composes them into its
methods (``Op.tensordict_code``).
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

from codegen.model import Alias, Form, Op, Role, Signature
from codegen.parse import OPERATORS


TEMPLATES = Path(__file__).parent / "templates"


def fill(template: str, **values: str) -> str:
    """The skeleton ``codegen/templates/<template>`` with its ``$names`` filled in."""
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    return string.Template(text).substitute(values)


def indent(text: str, spaces: int = 4) -> str:
    """Every non-blank line of ``text`` indented (blank lines left empty)."""
    prefix = " " * spaces
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


def lines(*parts: str | None) -> str:
    """The non-empty parts, one after the other."""
    return "\n".join(p for p in parts if p)


def function(
    name: str, signature: str, doc: str, body: str, decorators: tuple[str, ...] = ()
) -> str:
    """``def name(signature):`` with its docstring and body."""
    head = [f"@{d}" for d in decorators] + [f"def {name}{signature}:"]
    return "\n".join(head) + "\n" + indent(doc + "\n" + body)


def result(op: Op, expr: str, may_return_out: bool = False) -> str:
    """``return expr`` for a result the op builds from ``self``: an op whose entry says
    ``keeps_lock: true`` returns it locked when ``self`` is locked. ``may_return_out``:
    ``expr`` returns the caller's ``out`` when one is given, which stays as it was."""
    if not op.keeps_lock:
        return f"return {expr}"
    out = op.signature.role(Role.OUT)
    if may_return_out and out is not None:
        return (f"result = {expr}\n"
                f"return result if {out.name} is not None else _ops.keep_lock(self, result)")
    return f"return _ops.keep_lock(self, {expr})"


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


def _targets(operands: tuple[str, ...]) -> tuple[str, str]:
    targets = ", ".join(("x",) + operands)
    lists = ", ".join(("leaves",) + tuple(f"{o}_leaves" for o in operands))
    return targets, lists


def comprehension(text: str, operands: tuple[str, ...] = (), drop: str | None = None) -> str:
    """``[torch.add(x, other) for x, other in zip(leaves, other_leaves)]``."""
    expr = leaf_expr(text, drop)
    if not operands:
        return f"[{expr} for x in leaves]"
    targets, lists = _targets(operands)
    return f"[{expr} for {targets} in zip({lists})]"


def mapped(text: str, drop: str | None = None) -> str:
    """``self._map_leaves(lambda x: torch.abs(x))``: the comprehension and the rebuild
    of a one-operand op without foreach, in one walk."""
    return f"self._map_leaves(lambda x: {leaf_expr(text, drop)})"


def loop(text: str, operands: tuple[str, ...] = (), drop: str | None = None) -> str:
    """``for x, other in zip(leaves, other_leaves):`` + the per-leaf statement."""
    expr = leaf_expr(text, drop)
    if not operands:
        return f"for x in leaves:\n    {expr}"
    targets, lists = _targets(operands)
    return f"for {targets} in zip({lists}):\n    {expr}"


def loop_until(text: str, stop: bool) -> str:
    """``for x in self._leaves(): if not x.is_contiguous(): return False``: the walk
    returns ``stop`` at the first leaf whose value is ``stop`` (``all``, ``any``)."""
    test = _expr(text) if stop else ast.UnaryOp(op=ast.Not(), operand=_expr(text))
    return f"for x in self._leaves():\n    if {ast.unparse(test)}:\n        return {stop}"


def foreach_call(text: str, operands: tuple[str, ...] = (), drop: str | None = None, *, inplace: bool) -> str:
    """``torch._foreach_add(leaves, other)`` -> ``_ops.try_foreach(torch._foreach_add,
    leaves, other_leaves)``: operands become their aligned lists."""
    call = _expr(text, drop)
    assert isinstance(call, ast.Call)
    call = _Rename({o: f"{o}_leaves" for o in operands}).visit(call)
    wrapped = ast.Call(
        func=ast.Attribute(value=ast.Name("_ops", ast.Load()), attr="try_foreach_" if inplace else "try_foreach"),
        args=[call.func, *call.args],
        keywords=call.keywords,
    )
    return ast.unparse(wrapped)


def foreach_or_loop(foreach: str | None, leaf: str, operands: tuple = (), drop: str | None = None) -> str:
    """An in-place statement on every leaf: one foreach call, the loop where foreach
    refuses the leaves (or where there is none)."""
    if foreach:
        return f"if not {foreach_call(foreach, operands, drop, inplace=True)}:\n" + indent(loop(leaf, operands, drop))
    return loop(leaf, operands, drop)


# ---- shared pieces of methods ----------------------------------------------------------


def alias_code(alias: Alias) -> str:
    """A dunder calling the method it stands for (foreign operands: NotImplemented)."""
    doc = f'"""``{OPERATORS[alias.name]}``: same as :meth:`{alias.target}`."""'
    body = []
    if alias.binary:
        body.append(f"if not _ops.is_operand({alias.signature.params[0].name}):\n    return NotImplemented")
    args = ", ".join(p.name for p in alias.signature.params)
    body.append(f"return self.{alias.target}({args})")
    return function(alias.name, alias.signature.text, doc, "\n".join(body))


def aliases_code(op: Op) -> list[str]:
    return [alias_code(a) for a in op.aliases()]


def dense_stacks(op: Op) -> str:
    """For an op that reads batch dims or pairs leaves with keys: a lazy stack's leaves
    lack its stack dim and come one per stacked tensordict, so where the tensordict
    holds lazy stacks the op runs on a copy of it in which they are dense
    (docs/architecture.md, "Lazy stacks inside a TensorDict"); ``inplace=True`` still
    gives self the result."""
    head = f'dense = self._with_dense_stacks("{op.name}")\n'
    head += "if dense is not self:  # lazy stacks inside: the op runs on their dense stacks\n"
    inplace = op.signature.role(Role.INPLACE)
    if inplace is not None:
        call = op.signature.forward_args(**{inplace.name: "False"})
        return head + indent(
            f"result = dense.{op.name}({call})\n"
            f"return _ops.assign_inplace(self, result) if {inplace.name} else result"
        )
    if op.form is Form.FUNCTION:  # no method: the function itself, given the copy
        return head + indent(result(op, f"{op.name}(dense, {op.signature.forward_args()})"))
    return head + indent(result(op, f"dense.{op.name}({op.signature.forward_args()})"))


def dense_stacks_inplace(op: Op, name: str, signature: Signature) -> str:
    """The in-place form of such an op: where lazy stacks had to be made dense, the op
    runs out of place and its values are written back into self's leaves."""
    return (
        f'dense = self._with_dense_stacks("{name}")\n'
        "if dense is not self:\n"
        "    # lazy stacks inside: out of place on their dense stacks, then written back\n"
        f"    return self.update_(dense.{op.name}({signature.forward_args()}))"
    )
