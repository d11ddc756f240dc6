"""What the indexing and device families share (``spec/indexing.yaml``,
``spec/device.yaml``): leaf-wise ops whose result is not one tensordict shaped like
the input. One method does its Python work once per call: the entry's rules run once
(``batch_size: rule(args)``, ``device: rule(args)``), one walk collects the leaves, one
comprehension (or foreach call) computes the new ones, and one rebuild (or a collector)
makes the result, as ``result`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from codegen import emit, lazy, parse
from codegen.entry import Entry
from codegen.model import KEEP_DOC, Form, Op, Role, Signature
from codegen.rules import BATCH_RULES, RuleCall, Rule, parse_rule_call

# ``result``: what the new leaves become. In ``in_place`` the ``leaf`` is a statement.
RESULTS: dict[str, str] = {
    "tensordict": "a tensordict with the new leaves",
    "tensordicts": "a tuple of tensordicts; the leaf gives one tensor per result",
    "in_place": "the leaves are changed in place; returns the tensordict itself",
    "replace": "the new leaves replace the stored ones; returns the tensordict itself",
}
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
            return "dense"
        if self.batch_rule is None:
            return "inherit"
        if self.batch_rule.rule.elementwise:
            return "members"
        return "rule" if self.batch_rule.rule.lazy else "dense"

    # ---- rendering (device overrides the hooks) ----------------------------------------
    def rules_code(self, name: str) -> str:
        """The entry's rules, run once, named after the method calling them."""
        return self.batch_rule.code("self._batch_size", "_rule", name) if self.batch_rule else ""

    def rebuild_options(self) -> str:
        rule = self.batch_rule
        if not (rule and rule.rule.changes_batch_size):
            return ""
        return ", batch_size=new_batch_size" + rule.rule.names_option("self._names", "self._batch_size")

    def leaves_in_place(self) -> str:
        return "leaves = self._leaves()"

    def finish_in_place(self) -> str:
        return "return self"

    def operand_lines(self, name: str) -> str:
        pad = self.signature.role(Role.PAD)
        extra = f", {pad.name}" if pad else ""
        return "\n".join(
            f'{o}_leaves = _ops.operand_leaves(self, leaves, {o}, "{name}"{extra})' for o in self.operands
        )

    def body(self) -> str:
        """The statements of the method, after its docstring."""
        prologue = ""
        if self.needs_dense_stacks:
            prologue = (emit.dense_stacks_inplace(self, self.name, self.signature)
                        if self.result == "in_place" else emit.dense_stacks(self))
        head = emit.lines(prologue, self.rules_code(self.name))
        if self.result == "in_place":
            return emit.lines(
                head, self.leaves_in_place(), self.operand_lines(self.name),
                emit.foreach_or_loop(self.foreach, self.leaf, self.operands), self.finish_in_place(),
            )
        out = self.signature.role(Role.OUT)
        options = self.rebuild_options()
        tail = [f"new = {emit.comprehension(self.leaf, self.operands)}"]
        if out is not None:
            tail.append(f"if {out.name} is not None:  # the results are written into out\n"
                        f'    return _ops.write_into(self, {out.name}, new, "{self.name}")')
        inplace = self.inplace_name
        if self.result == "tensordicts":
            dim = ", dim" if "dim" in self.batch_rule.rule.defines else ""
            tail.append(emit.result(self, f"_ops.rebuild_each(self, rebuild, new, batch_sizes{dim})"))
        elif self.result == "replace":
            tail.append(f"return _ops.assign_inplace(self, rebuild(new{options}))")
        elif self.result == "tensordict" and inplace is not None:
            tail.append(f"result = rebuild(new{options})\n"
                        f"if {inplace}:  # self takes the result's entries and batch size\n"
                        "    return _ops.assign_inplace(self, result)\n"
                        + emit.result(self, "result"))
        elif self.result == "tensordict":
            tail.append(emit.result(self, f"rebuild(new{options})"))
        else:
            args = "".join(f", {a}" for a in self.result_args)
            tail.append(f"return _ops.{self.result}_result(self, new{args})")
        pad = self.signature.role(Role.PAD)
        if pad is not None and len(self.operands) == 1:  # keys one side lacks: filled with pad
            head = emit.lines(head, f"if {pad.name} is not None:\n"
                              f"    self, {self.operands[0]}, {pad.name} = _ops.fill_defaults(self, "
                              f"{self.operands[0]}, {pad.name})")
        # an op on the batch dims leaves UnbatchedTensor leaves as they are
        collect = "_batched_leaves_and_rebuild" if self.batch_rule is not None else "_leaves_and_rebuild"
        return emit.lines(head, f"leaves, rebuild = self.{collect}()", self.operand_lines(self.name), *tail)

    def inplace_code(self) -> str:
        ip = self.inplace
        prologue = emit.dense_stacks_inplace(self, ip.name, ip.signature) if self.needs_dense_stacks else ""
        body = emit.lines(prologue, self.rules_code(ip.name), "leaves = self._leaves()",
                          self.operand_lines(ip.name),
                          emit.foreach_or_loop(ip.foreach, ip.leaf, self.operands), "return self")
        return emit.function(ip.name, ip.signature.text, emit.inplace_docstring(self), body)

    def tensordict_code(self) -> str:
        code = emit.function(self.name, self.signature.text, emit.op_docstring(self), self.body())
        if self.form is Form.FUNCTION:
            return code
        methods = [code] + ([self.inplace_code()] if self.inplace else []) + emit.aliases_code(self)
        return "\n\n".join(methods)

    def lazy_code(self) -> str | None:
        if self.lazy_way != "rule":
            return lazy.code_for(self)
        rule = self.batch_rule
        inplace = self.signature.role(Role.INPLACE)
        extra = f", inplace={inplace.name}" if inplace else ""
        args = ", ".join(rule.args)
        return lazy.method(self, emit.result(self, f'_lazy_rules.{rule.name}(self, {args}, "{self.name}"{extra})'))


@dataclass(frozen=True, kw_only=True)
class FunctionOnlyOp(LeafwiseOp):
    """A leaf-wise op with no method: only its ``torch_function`` reaches it (0.15.3
    has no such methods). The loss and autograd families are this, under their names."""

    @classmethod
    def parse(cls, entry: Entry) -> "FunctionOnlyOp | None":
        fields = cls.parse_leafwise(entry, form=Form.FUNCTION)
        return None if fields is None else cls(**fields)
