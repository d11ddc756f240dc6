"""What the indexing and device families share (``spec/indexing.yaml``,
``spec/device.yaml``): leaf-wise ops whose result is not one tensordict shaped like
the input. One method does its Python work once per call: the entry's rules run once
(``batch_size: rule(args)``, ``device: rule(args)``), one walk collects the leaves, one
comprehension (or foreach call) computes the new ones, and one rebuild (or a collector)
makes the result, as ``result`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from codegen import parse
from codegen.entry import Entry
from codegen.model import KEEP_DOC, Form, Op, Role, Signature
from codegen.rules import BATCH_RULES, RuleCall, Rule, parse_rule_call

# ``result``: what the new leaves become. In ``in_place`` the ``leaf`` is a statement.
RESULTS = (
    "tensordict",  # a tensordict with the new leaves
    "tensordicts",  # a tuple of tensordicts; the leaf gives one tensor per result
    "in_place",  # the leaf changes each leaf in place; returns the tensordict itself
    "replace",  # the new leaves replace the stored ones; returns the tensordict itself
)
# ``result: collector(args)``: ``return _ops.<collector>_result(self, new, args...)``.
COLLECTORS: dict[str, Rule] = {
    "nested_dict": Rule("numpy arrays in nested dicts", (), ()),
    "nested_lists": Rule(
        "nested lists along the batch dims", ("convert_nodes", "tolist_first", "as_linked_list"), ()
    ),
    "grad": Rule(
        "the gradients of the outputs (the leaves) with respect to the leaves of `inputs`, "
        "shaped like `inputs`",
        ("inputs", "retain_graph", "create_graph", "allow_unused", "is_grads_batched", "materialize_grads"),
        (),
    ),
    "loss": Rule(
        "the leaves' losses: shaped like the input for reduction 'none', else one scalar "
        "per leaf (every level with batch size [])",
        ("size_average", "reduce", "reduction"),
        (),
    ),
}
KEYS = frozenset({"leaf", "foreach", "inplace", "batch_size", "result", "operands", "operand_default"})


@dataclass(frozen=True, kw_only=True)
class LeafwiseOp(Op):
    """An op of the indexing or device family (each subclasses it)."""

    leaf: str  # the new leaf from ``x``; with ``result: in_place``, a statement
    foreach: str | None  # one in-place foreach call (``result: in_place``)
    batch_rule: RuleCall | None  # ``batch_size: rule(args)``; None: the batch size stays
    result: str  # a RESULTS name, or a COLLECTORS one
    result_args: tuple[str, ...]  # a collector's arguments
    operands: tuple[str, ...]  # parameters matched key by key with the leaves

    # ---- parsing ------------------------------------------------------------------------
    @classmethod
    def parse_leafwise(cls, entry: Entry, extra_names: tuple[str, ...] = (), **shared) -> dict | None:
        """The keys both families have; ``extra_names``: what other rules define."""
        parse.require(entry, "leaf")
        base = parse.common(entry, **shared)
        sig = base["signature"] if base else None
        rule = parse_rule_call(entry, "batch_size", BATCH_RULES, sig) if entry.has("batch_size") else None
        result, result_args = cls._result(entry, sig)
        if result == "tensordicts" and (rule is None or "batch_sizes" not in rule.rule.defines):
            entry.err(entry.line_of("result"), "'result: tensordicts' needs a batch_size rule defining "
                      "batch_sizes (split, chunk, tensor_split, unbind)")
        operands = entry.parameters("operands", sig)
        pad = entry.parameter("operand_default", sig)
        if pad and not operands:
            entry.err(entry.line_of("operand_default"), "'operand_default' needs 'operands'")
        names = ("self", "_ops", *(rule.rule.defines if rule else ()), *extra_names)
        leaf = parse.leaf(entry, sig, names)
        foreach = parse.foreach(entry, sig)
        inplace = parse.inplace(entry, operands=operands, leaf_names=names)
        if base is None or leaf is None:
            return None
        roles = {o: Role.OPERAND for o in operands}
        if pad:
            roles[pad] = Role.PAD
        base["signature"] = sig.with_roles(roles)
        return dict(base, leaf=leaf, foreach=foreach, batch_rule=rule, result=result,
                    result_args=result_args, operands=operands, inplace=inplace)

    @staticmethod
    def _result(entry: Entry, sig: Signature | None) -> tuple[str, tuple[str, ...]]:
        value = entry.value("result", "tensordict")
        if not isinstance(value, str):
            entry.err(entry.line_of("result"), f"'result' must be a name, got {value!r}")
            return "tensordict", ()
        if value in RESULTS:
            return value, ()
        call = parse_rule_call(entry, "result", COLLECTORS, sig)
        return (call.name, call.args) if call else ("tensordict", ())

    # ---- facts --------------------------------------------------------------------------
    @property
    def is_collector(self) -> bool:
        return self.result in COLLECTORS

    @property
    def needs_dense_stacks(self) -> bool:
        # a batch rule addresses batch dims; a collector keys plain data like self
        return self.batch_rule is not None or self.is_collector

    @property
    def batch_size_doc(self) -> str:
        return self.batch_rule.rule.doc if self.batch_rule else KEEP_DOC

    @property
    def rule_names(self) -> tuple[str, ...]:
        return self.batch_rule.rule.defines if self.batch_rule else ()

    @property
    def lazy_way(self) -> str:
        if self.is_collector:
            # nested lists along the batch dims: each member gives its own lists
            return "lists" if self.result == "nested_lists" else "dense"
        if self.batch_rule is None:
            return "inherit"
        if self.batch_rule.rule.elementwise:
            return "members"
        return "rule" if self.batch_rule.rule.lazy else "dense"

@dataclass(frozen=True, kw_only=True)
class FunctionOnlyOp(LeafwiseOp):
    """A leaf-wise op with no method: only its ``torch_function`` reaches it (0.15.3
    has no such methods). The loss and autograd families are this, under their names."""

    @classmethod
    def parse(cls, entry: Entry) -> "FunctionOnlyOp | None":
        fields = cls.parse_leafwise(entry, form=Form.FUNCTION)
        return None if fields is None else cls(**fields)
