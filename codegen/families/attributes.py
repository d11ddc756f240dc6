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

from codegen import emit, lazy, parse
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Form, Op
from codegen.rules import Rule, RuleCall, parse_rule_call


@dataclass(frozen=True)
class Combiner:
    """How the per-leaf values become the result."""

    reads: str  # "values" (new), "leaves" (leaves and new), "rebuild" (_map_leaves),
    # "device" (no walk), "until" (leaf by leaf, up to the first whose value is ``stop``)
    code: str  # the result; {args} and {op} are filled in
    args: tuple[str, ...] = ()  # what an entry passes
    dense_stacks: bool = False  # pairs each leaf with its key (joins along a batch dim)
    stop: bool | None = None  # reads "until": the truth value that decides the result


COMBINERS: dict[str, Combiner] = {
    # a loop that returns at the first deciding leaf: no list of values, no comprehension
    # frame and no all()/any() call (is_contiguous of five leaves: ~900 -> ~700 ns)
    "all": Combiner("until", "True", stop=False),
    "any": Combiner("until", "False", stop=True),
    "common_dtype": Combiner("values", "_ops.common_dtype(new)"),
    "present": Combiner("values", "_ops.present_result(self, new)"),
    "scalars": Combiner("values", "_ops.scalar_result(self, new)"),
    "tensordict": Combiner("rebuild", "self._map_leaves(...)"),  # see tensordict_code
    "total": Combiner("leaves", "_ops.total(leaves, new, {count})", ("count",)),
    "join": Combiner(
        "values", '_ops.join_leaves(self, new, {fn}, {dim}, {sorted}, {out}, "{op}")',
        ("fn", "dim", "sorted", "out"), dense_stacks=True,
    ),
    "device_type": Combiner("device", "self._device is not None and self._device.type == {type}", ("type",)),
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

    def tensordict_code(self) -> str:
        combiner = self.combiner
        result = combiner.code.format(op=self.name, **dict(zip(combiner.args, self.combine.args)))
        body = [emit.dense_stacks(self)] if self.needs_dense_stacks else []
        if combiner.reads == "rebuild":  # the structure kept: the leaf expression in one walk
            body.append(emit.result(self, emit.mapped(self.leaf)))
        elif combiner.reads == "until":
            body.append(emit.loop_until(self.leaf, combiner.stop))
            body.append(f"return {result}")
        else:
            if combiner.reads in ("values", "leaves"):
                body.append("leaves = self._leaves()")
            if combiner.reads != "device":
                body.append(f"new = {emit.comprehension(self.leaf)}")
            body.append(f"return {result}")
        decorators = ("property",) if self.form is Form.PROPERTY else ()
        return emit.function(self.name, self.signature.text, emit.op_docstring(self), "\n".join(body), decorators)

    def lazy_code(self) -> str | None:
        return lazy.code_for(self)
