"""batch_shape: one op on the batch dims of every leaf (``spec/shape.yaml``); each
leaf's feature dims stay as they are.

The entry's batch rule (``codegen/rules.py``) runs once: it checks the arguments against
the batch size and computes the new one; then one per-leaf expression and one rebuild,
every nested level getting the new batch size followed by its own extra dims.
``storage`` says whether the result shares storage with the input, as torch's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import KEEP_DOC, Op
from codegen.rules import BATCH_RULES, RuleCall, parse_rule_call

# ``storage``: whether the result shares storage with the input
STORAGE: dict[str, str] = {
    "view": "a view: it shares storage with the input, as the torch function's result",
    "view_where_possible": "a view where the leaves' strides allow one, a copy "
    "otherwise, as the torch function",
    "copy": "a copy: new storage, as the torch function's result",
}
SHAPE_RULES = {
    name: rule for name, rule in BATCH_RULES.items()
    if name in ("view", "reshape", "permute", "transpose", "movedim", "squeeze", "unsqueeze",
                "flatten", "unflatten", "expand", "repeat", "tile", "repeat_interleave",
                "flip", "roll", "rot90", "atleast", "narrow")
}


@register
@dataclass(frozen=True, kw_only=True)
class BatchShapeOp(Op):
    family: ClassVar[str] = "batch_shape"
    spec_file: ClassVar[str] = "shape"
    KEYS: ClassVar[frozenset] = frozenset({"leaf", "batch_size", "storage", "lazy", "non_tensor"})

    leaf: str  # the new leaf from ``x``, with the names the rule defines
    batch_rule: RuleCall | None  # None: the batch size stays (contiguous)
    storage: str  # STORAGE
    lazy_legacy: bool  # under set_lazy_legacy(True): a lazy view writing through to self
    # where the batch size changes, a non-tensor value becomes a NonTensorStack of it
    stacks_non_tensor: bool = False

    @classmethod
    def parse(cls, entry: Entry) -> BatchShapeOp | None:
        parse.require(entry, "leaf", "storage")
        shared = parse.common(entry)
        sig = shared["signature"] if shared else None
        rule = parse_rule_call(entry, "batch_size", SHAPE_RULES, sig) if entry.has("batch_size") else None
        leaf = parse.leaf(entry, sig, ("_ops", *(rule.rule.defines if rule else ())))
        storage = entry.choice("storage", tuple(STORAGE), "copy")
        legacy = entry.flag("lazy")
        stacks = entry.choice("non_tensor", ("keep", "stack"), "keep") == "stack"
        if shared is None or leaf is None or entry.failed:
            return None
        return cls(**shared, leaf=leaf, batch_rule=rule, storage=storage, lazy_legacy=legacy,
                   stacks_non_tensor=stacks)

    @property
    def needs_dense_stacks(self) -> bool:
        return self.batch_rule is not None  # the leaf expression addresses batch dims

    @property
    def rule_names(self) -> tuple[str, ...]:
        return self.batch_rule.rule.defines if self.batch_rule else ()

    @property
    def batch_size_doc(self) -> str:
        return self.batch_rule.rule.doc if self.batch_rule else KEEP_DOC

    def doc_facts(self) -> list[str]:
        return [f"Storage: {STORAGE[self.storage]}."]

    @property
    def lazy_way(self) -> str:
        if self.batch_rule is None:
            return "inherit"
        return "rule" if self.batch_rule.rule.lazy else "dense"

