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

from codegen import emit, lazy, parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Form, Op, Role
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

    def tensordict_code(self) -> str:
        out = self.signature.role(Role.OUT)
        body = []
        if self.lazy_legacy:
            body.append("if _ops.lazy_legacy():  # set_lazy_legacy(True): a LazyStackedTensorDict instead\n"
                        "    return _ops.lazy_stack(input, dim, out=out)")
        body.append(self.batch_rule.code(None, "_rule", self.name))
        body.append("leaves, rebuild = input[0]._batched_leaves_and_rebuild()")
        body.append(f'new = [{emit.leaf_expr(self.leaf)} for x in _ops.stacked_leaves(input, leaves, "{self.name}")]')
        if out is not None:
            body.append(f"if {out.name} is not None:  # the results are written into out\n"
                        f'    return _ops.write_into(input[0], {out.name}, new, "{self.name}")')
        names = self.batch_rule.rule.names_option("input_names", "None")
        if names:  # the first input's names follow its dims
            body.append("input_names = _ops.first_names(input)")
        body.append(f"return _ops.stack_non_tensor(input, rebuild(new, batch_size=new_batch_size{names}), "
                    f'dim, "{self.name}")')
        return emit.function(self.name, self.signature.text, emit.op_docstring(self), "\n".join(body),
                             ("classmethod",))

    def lazy_code(self) -> str:
        args = self.signature.forward_args()
        return lazy.method(self, f'return _lazy_rules.{self.name}(cls, {args}, op="{self.name}")', ("classmethod",))
