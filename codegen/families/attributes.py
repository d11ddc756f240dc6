"""attributes: read-only facts about the leaves and aggregates over them
(``spec/attributes.yaml``): ``dtype``, ``requires_grad``, ``is_contiguous``, ``bytes``,
``stack_from_tensordict``...

An entry computes ``leaf`` for every leaf and hands the values to a named combiner
(``combine: all``, ``combine: total(count_duplicates)``), which says what it reads (the
values, the leaves too, the structure to rebuild, or only the tensordict's device) and
whether it needs each leaf with all its batch dims. ``property: true`` renders a
read-only ``@property``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Form, Op
from codegen.rules import Rule, RuleCall, parse_rule_call


@dataclass(frozen=True)
class Combiner:
    """How the per-leaf values become the result (its expression: the ``combined``
    macro of ``codegen/templates/families/attributes.jinja``)."""

    reads: str  # "values" (new), "leaves" (leaves and new), "rebuild" (_map_leaves),
    # "device" (no walk), "until" (leaf by leaf, up to the first whose value is ``stop``)
    args: tuple[str, ...] = ()  # what an entry passes
    dense_stacks: bool = False  # pairs each leaf with its key (joins along a batch dim)
    stop: bool | None = None  # reads "until": the truth value that decides the result


COMBINERS: dict[str, Combiner] = {
    # a loop that returns at the first deciding leaf: no list of values, no comprehension
    # frame and no all()/any() call (is_contiguous of five leaves: ~900 -> ~700 ns)
    "all": Combiner("until", stop=False),
    "any": Combiner("until", stop=True),
    "common_dtype": Combiner("values"),
    "present": Combiner("values"),
    "scalars": Combiner("values"),
    "tensordict": Combiner("rebuild"),
    "total": Combiner("leaves", ("count",)),
    "join": Combiner("values", ("fn", "dim", "sorted", "out"), dense_stacks=True),
    "device_type": Combiner("device", ("type",)),
}
_AS_RULES = {name: Rule("", c.args, ()) for name, c in COMBINERS.items()}


@register
@dataclass(frozen=True, kw_only=True)
class AttributeOp(Op):
    family: ClassVar[str] = "attributes"
    KEYS: ClassVar[frozenset] = frozenset({"leaf", "combine", "property"})

    leaf: str | None  # one value per leaf: "x.dtype" (None: the combiner reads no leaf)
    combine: RuleCall  # the combiner and its arguments

    @classmethod
    def parse(cls, entry: Entry) -> AttributeOp | None:
        parse.require(entry, "combine")
        prop = entry.flag("property")
        shared = parse.common(entry, form=Form.PROPERTY if prop else Form.METHOD)
        sig = shared["signature"] if shared else None
        if prop and sig is not None and sig.params:
            entry.err(entry.line_of("property"), "a property's signature is '(self) -> ...'")
        combine = parse_rule_call(entry, "combine", _AS_RULES, sig) if entry.has("combine") else None
        leaf = parse.leaf(entry, sig, ("_ops",))
        if combine is not None:
            reads = COMBINERS[combine.name].reads
            if reads == "device" and entry.has("leaf"):
                entry.err(entry.line_of("leaf"), f"'combine: {combine.name}' reads no leaf: leave 'leaf' out")
            elif reads != "device" and not entry.has("leaf"):
                entry.err(entry.line, f"'combine: {combine.name}' needs a 'leaf'")
        if shared is None or combine is None or entry.failed:
            return None
        return cls(**shared, leaf=leaf, combine=combine)

    @property
    def combiner(self) -> Combiner:
        return COMBINERS[self.combine.name]

    @property
    def needs_dense_stacks(self) -> bool:
        return self.combiner.dense_stacks

    @property
    def lazy_way(self) -> str:
        return "dense" if self.needs_dense_stacks else "inherit"

    @property
    def combine_args(self) -> dict[str, str]:
        """The combiner's arguments by name: ``{"count": "count_duplicates"}``."""
        return dict(zip(self.combiner.args, self.combine.args))
