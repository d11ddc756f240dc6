"""stacking: classmethods taking a sequence of tensordicts (``spec/stacking.yaml``).

The rule checks the inputs and the dim once and gives the new batch size; the leaves of
every input are matched key by key with the first's (a key one of them lacks is a
KeyError naming it); one torch call per leaf; one rebuild of the first input's
structure. Each op is also a function of the package (``tensordict.stack``). Under
``set_lazy_legacy(True)``, ``lazy: true`` entries build a lazy stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Form, Op
from codegen.rules import BATCH_RULES, RuleCall, parse_rule_call

STACKING_RULES = {name: BATCH_RULES[name] for name in ("stack", "cat")}


@register
@dataclass(frozen=True, kw_only=True)
class StackingOp(Op):
    family: ClassVar[str] = "stacking"
    KEYS: ClassVar[frozenset] = frozenset({"leaf", "batch_size", "lazy"})
    lazy_way: ClassVar[str] = "stacking"

    leaf: str  # one new leaf from ``x``, the tuple of matching leaves: "torch.stack(x, dim)"
    batch_rule: RuleCall  # stack(input, dim) or cat(input, dim)
    lazy_legacy: bool  # under set_lazy_legacy(True): a lazy stack instead

    @classmethod
    def parse(cls, entry: Entry) -> StackingOp | None:
        parse.require(entry, "leaf", "batch_size")
        shared = parse.common(entry, receiver="cls", form=Form.CLASSMETHOD)
        sig = shared["signature"] if shared else None
        rule = None
        if entry.has("batch_size"):
            rule = parse_rule_call(entry, "batch_size", STACKING_RULES, sig, names=("torch", "_ops", "None"))
        leaf = parse.leaf(entry, sig, ("cls", "_ops", *(rule.rule.defines if rule else ())))
        legacy = entry.flag("lazy")
        if shared is None or leaf is None or rule is None:
            return None
        return cls(**shared, leaf=leaf, batch_rule=rule, lazy_legacy=legacy)

    @property
    def batch_size_doc(self) -> str:
        return self.batch_rule.rule.doc

