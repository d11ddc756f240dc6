"""binary: every leaf combined with operands aligned leaf by leaf (``spec/binary.yaml``).

An operand is a tensor collection (its leaves matched key by key), a tensor or a number
(the same for every leaf): ``_ops.operand_leaves`` aligns it with the leaves once, then
one ``torch._foreach_*`` call or a comprehension computes the new leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import DUNDER_RE, Op, Role, Signature

DUNDER_SIGNATURE = "(self, other: TensorCollection | torch.Tensor | float) -> Self"


@register
@dataclass(frozen=True, kw_only=True)
class BinaryOp(Op):
    family: ClassVar[str] = "binary"
    KEYS: ClassVar[frozenset] = frozenset(
        {"leaf", "foreach", "inplace", "operands", "drop_if_none", "compares_non_tensor"}
    )

    leaf: str  # "torch.add(x, other, alpha=alpha)": each operand is its per-leaf value
    foreach: str | None  # "torch._foreach_add(leaves, other, alpha=alpha)"
    operands: tuple[str, ...]  # the parameters aligned leaf by leaf
    drop_if_none: tuple[str, ...]  # a keyword left out of the calls when it is None
    # the result's non-tensor entries compare those of a tensor-collection operand
    # (``_ops.compare_non_tensor``): ``==``, ``!=``, ``^``, ``|``
    compares_non_tensor: bool = False

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
        return cls(
            **shared,
            leaf=leaf,
            foreach=foreach,
            operands=operands,
            drop_if_none=drops,
            inplace=inplace,
            compares_non_tensor=entry.flag("compares_non_tensor"),
        )

def with_roles(signature: Signature, operands: tuple[str, ...]) -> Signature:
    roles = {o: Role.OPERAND for o in operands}
    for name, role in (("default", Role.DEFAULT), ("out", Role.OUT)):
        if signature.has(name):
            roles[name] = role
    return signature.with_roles(roles)
