"""pointwise: one torch function applied to every leaf (``spec/pointwise.yaml``).

``leaves, rebuild = self._leaves_and_rebuild()``, one ``torch._foreach_*`` call (the
leaves one by one where foreach rejects them) or a list comprehension, ``rebuild(new)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Op


@register
@dataclass(frozen=True, kw_only=True)
class PointwiseOp(Op):
    family: ClassVar[str] = "pointwise"
    KEYS: ClassVar[frozenset] = frozenset({"leaf", "foreach", "inplace"})

    leaf: str  # one new leaf from the leaf ``x``: "torch.abs(x)"
    foreach: str | None  # one call for every leaf: "torch._foreach_abs(leaves)"

    @classmethod
    def parse(cls, entry: Entry) -> PointwiseOp | None:
        parse.require(entry, "leaf")
        shared = parse.common(entry)
        sig = shared["signature"] if shared else None
        leaf = parse.leaf(entry, sig)
        foreach = parse.foreach(entry, sig)
        inplace = parse.inplace(entry)
        if shared is None or leaf is None:
            return None
        return cls(**shared, leaf=leaf, foreach=foreach, inplace=inplace)

