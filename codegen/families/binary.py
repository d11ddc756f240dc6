"""binary: every leaf combined with operands aligned leaf by leaf (``spec/binary.yaml``).

An operand is a tensor collection (its leaves matched key by key), a tensor or a number
(the same for every leaf): ``_ops.operand_leaves`` aligns it with the leaves once, then
one ``torch._foreach_*`` call or a comprehension computes the new leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from codegen import emit, parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import DUNDER_RE, Op, Role, Signature

DUNDER_SIGNATURE = "(self, other: TensorCollection | torch.Tensor | float) -> Self"


@register
@dataclass(frozen=True, kw_only=True)
class BinaryOp(Op):
    family: ClassVar[str] = "binary"
    KEYS: ClassVar[frozenset] = frozenset({"leaf", "foreach", "inplace", "operands", "drop_if_none"})

    leaf: str  # "torch.add(x, other, alpha=alpha)": each operand is its per-leaf value
    foreach: str | None  # "torch._foreach_add(leaves, other, alpha=alpha)"
    operands: tuple[str, ...]  # the parameters aligned leaf by leaf
    drop_if_none: tuple[str, ...]  # a keyword left out of the calls when it is None

    @classmethod
    def parse(cls, entry: Entry) -> BinaryOp | None:
        parse.require(entry, "leaf", "operands")
        shared = parse.common(entry, dunder_signature=DUNDER_SIGNATURE)
        sig = shared["signature"] if shared else None
        operands = entry.parameters("operands", sig)
        if entry.has("operands") and not operands:
            entry.err(entry.line_of("operands"), "'operands' must be a list of parameter names")
        if entry.has("operands") and DUNDER_RE.match(entry.name) and len(operands) != 1:
            entry.err(entry.line_of("operands"), "an operator takes exactly one operand")
        drops = parse.drop_if_none(entry, entry.fields.get("drop_if_none"), sig)
        leaf = parse.leaf(entry, sig)
        foreach = parse.foreach(entry, sig)
        if drops:
            parse.check_drops(entry, drops, entry.line_of("drop_if_none"), {"leaf": leaf, "foreach": foreach})
        inplace = parse.inplace(entry, operands=operands, dunder_signature=DUNDER_SIGNATURE)
        if shared is None or leaf is None:
            return None
        shared["signature"] = with_roles(sig, operands)
        if inplace is not None:
            inplace = replace(inplace, signature=with_roles(inplace.signature, operands))
        return cls(**shared, leaf=leaf, foreach=foreach, operands=operands, drop_if_none=drops, inplace=inplace)

    def _operand_lines(self, name: str, signature: Signature) -> list[str]:
        default = ", default" if signature.role(Role.DEFAULT) else ""
        return [
            f'{o}_leaves = _ops.operand_leaves(self, leaves, {o}, "{name}"{default})'
            for o in self.operands
        ]

    def _compute(self, drop: str | None) -> str:
        new = emit.comprehension(self.leaf, self.operands, drop)
        if not self.foreach:
            return f"new = {new}"
        return (
            f"new = {emit.foreach_call(self.foreach, self.operands, drop, inplace=False)}\n"
            "if new is None:  # foreach rejected the leaves: go leaf by leaf\n"
            f"    new = {new}"
        )

    def tensordict_code(self) -> str:
        body = []
        if self.is_dunder:
            body.append(f"if not _ops.is_operand({self.operands[0]}):\n    return NotImplemented")
        if self.signature.role(Role.DEFAULT):
            body.append(_DEFAULT_KEYS)
        body.append("leaves, rebuild = self._leaves_and_rebuild()")
        out = self.signature.role(Role.OUT)
        if self.foreach and len(self.operands) == 1 and out is None:
            drop = self.drop_if_none[0] if self.drop_if_none else None
            body.append(
                f"if type({self.operands[0]}) in _ops.PLAIN_NUMBERS{f' and {drop} is None' if drop else ''}:\n"
                "    # the common case, one number for every leaf: torch's scalar overload, given\n"
                "    # the number itself (the general path below gives the same call)\n"
                f"    new = {emit.foreach_call(self.foreach, (), drop, inplace=False)}\n"
                "    if new is not None:\n"
                f"        {emit.result(self, 'rebuild(new)')}"
            )
        body += self._operand_lines(self.name, self.signature)
        body.append(_maybe_dropped(self.drop_if_none, self._compute))
        if out is not None:
            body.append(f'if {out.name} is not None:\n    return _ops.write_into(self, {out.name}, new, "{self.name}")')
        body.append(emit.result(self, "rebuild(new)"))
        methods = [emit.function(self.name, self.signature.text, emit.op_docstring(self), "\n".join(body))]
        if self.inplace is not None:
            ip = self.inplace
            lines = ["leaves = self._leaves()", *self._operand_lines(ip.name, ip.signature)]
            lines.append(_maybe_dropped(
                ip.drop_if_none, lambda d: emit.foreach_or_loop(ip.foreach, ip.leaf, self.operands, d)
            ))
            lines.append("return self")
            methods.append(emit.function(ip.name, ip.signature.text, emit.inplace_docstring(self), "\n".join(lines)))
        return "\n\n".join(methods + emit.aliases_code(self))


# With ``default=``, keys only the operand has join the result (0.15.3 fills either side).
_DEFAULT_KEYS = (
    "if default is not None:  # keys one side lacks: filled with default (or dropped)\n"
    "    self, other, default = _ops.fill_defaults(self, other, default)"
)


def _maybe_dropped(drops: tuple[str, ...], compute) -> str:
    """``compute(None)``, or with a ``drop_if_none`` keyword both forms behind an if."""
    if not drops:
        return compute(None)
    return f"if {drops[0]} is None:\n{emit.indent(compute(drops[0]))}\nelse:\n{emit.indent(compute(None))}"


def with_roles(signature: Signature, operands: tuple[str, ...]) -> Signature:
    roles = {o: Role.OPERAND for o in operands}
    for name, role in (("default", Role.DEFAULT), ("out", Role.OUT)):
        if signature.has(name):
            roles[name] = role
    return signature.with_roles(roles)
