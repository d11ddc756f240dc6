"""The named rules an entry refers to: how an op changes the batch size
(``batch_size: transpose(dim0, dim1)``) or the device (``device: to(args, kwargs)``).

A rule is a function of ``tensordict/_ops`` (``_ops.<rule>_rule`` /
``_ops.<rule>_device_rule``) that runs once per call, before the leaves are touched: it
checks the arguments against the batch size (an error names the op, the argument and
the batch size) and returns the names ``defines`` lists, which the entry's ``leaf`` may
use. Adding a rule is a :class:`Rule` here and its function in ``tensordict/_ops``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from codegen.entry import Entry
from codegen.model import Signature


@dataclass(frozen=True)
class Rule:
    doc: str  # the docs' "Batch size:" (or "Device:") line
    args: tuple[str, ...]  # what an entry passes, in order (docs and arity)
    defines: tuple[str, ...]
    lazy: bool = False  # tensordict/_lazy_rules.py has a counterpart of this name
    # each batch element on its own (where, masked_fill): on a lazy stack the op runs
    # on every stacked tensordict, its batch-shaped arguments cut along the stack dim
    elementwise: bool = False
    # the result's batch-dim names: an expression over ``defines``, ``{names}`` (the
    # input's names, never None) and ``{batch_size}`` (the input's batch size), calling
    # ``tensordict/_ops/names.py`` (common.jinja's ``names_option`` renders it); None: a
    # result of another batch size has no names
    names: str | None = None

    @property
    def changes_batch_size(self) -> bool:
        return "new_batch_size" in self.defines


def _rule(doc: str, args: tuple, defines: tuple, lazy: bool = False, elementwise: bool = False,
          names: str | None = None) -> Rule:
    return Rule(doc, args, defines, lazy, elementwise, names)


BATCH_RULES: dict[str, Rule] = {
    # ---- batch_shape (spec/shape.yaml)
    "view": _rule(
        "`shape` (one size may be -1) holding as many elements as the batch; a dtype view keeps "
        "it; the tensordict itself when the shape is the batch size",
        ("shape", "size", "batch_size", "td"),
        ("new_batch_size", "dtype", "batch_dims", "unchanged"),
        lazy=True,
        names="_ops.same_size_names({names}, {batch_size}, new_batch_size)",
    ),
    "reshape": _rule(
        "`shape` (one size may be -1) holding as many elements as the batch (the tensordict "
        "itself when it is the batch size)",
        ("args", "kwargs"),
        ("new_batch_size", "batch_dims", "inplace", "unchanged"),
        lazy=True,
        names="_ops.same_size_names({names}, {batch_size}, new_batch_size)",
    ),
    "permute": _rule(
        "the batch dims in the order given (the tensordict itself for their own order)",
        ("args", "kwargs"),
        ("dims", "positions", "new_batch_size", "unchanged"),
        lazy=True,
        names="_ops.moved_names({names}, dims, positions)",
    ),
    "transpose": _rule(
        "the two batch dims swapped (the tensordict itself when they are one)", ("dim0", "dim1"), ("dim0", "dim1", "new_batch_size", "unchanged"), lazy=True,
        names="_ops.swapped_names({names}, dim0, dim1)",
    ),
    "movedim": _rule(
        "the batch dims in `source` moved to `destination`, the others in order (the "
        "tensordict itself when every dim stays where it is)",
        ("source", "destination"),
        ("source", "destination", "new_batch_size", "unchanged"),
        lazy=True,
        names="_ops.moved_names({names}, source, destination)",
    ),
    "squeeze": _rule(
        "without the size-one batch dims named (all of them when none is); the tensordict "
        "itself when there is none",
        ("args", "kwargs"),
        ("dims", "new_batch_size", "unchanged"),
        lazy=True,
        names="_ops.dropped_names({names}, dims)",
    ),
    "unsqueeze": _rule(
        "a batch dim of size one inserted at `dim`", ("args", "kwargs"), ("dim", "new_batch_size"), lazy=True,
        names="_ops.inserted_names({names}, dim)",
    ),
    "flatten": _rule(
        "the batch dims `start_dim` to `end_dim` merged into one (`[1]` without batch dims)",
        ("start_dim", "end_dim"),
        ("start_dim", "end_dim", "new_batch_size"),
        lazy=True,
        names="_ops.flattened_names({names}, start_dim, end_dim)",
    ),
    "unflatten": _rule(
        "batch dim `dim` split into `sizes`", ("dim", "sizes"), ("dim", "sizes", "new_batch_size"), lazy=True,
        names="_ops.unflattened_names({names}, dim, sizes)",
    ),
    "expand": _rule(
        "`shape`: size-one batch dims grown, new leading dims added, -1 keeps a size",
        ("shape", "kwargs"),
        ("new_batch_size", "batch_dims"),
        lazy=True,
        names="_ops.leading_names({names}, new_batch_size)",
    ),
    "repeat": _rule(
        "each batch dim times its repeat count (extra counts add leading dims)",
        ("repeats",),
        ("repeats", "new_batch_size", "batch_dims"),
        lazy=True,
        names="_ops.leading_names({names}, new_batch_size)",
    ),
    "tile": _rule(
        "as `repeat`, the counts padded with ones in front when fewer than the batch dims",
        ("repeats",),
        ("repeats", "new_batch_size", "batch_dims"),
    ),
    "repeat_interleave": _rule(
        "batch dim `dim` (the flattened batch when None) with each element repeated",
        ("repeats", "dim", "output_size"),
        ("dim", "flat", "new_batch_size", "batch_dims"),
        names="None if flat else {names}",
    ),
    "flip": _rule("the batch size of the input (`dims` count batch dims)", ("dims",), ("dims",), lazy=True),
    "roll": _rule(
        "the batch size of the input (`dims` count batch dims; none: the flattened batch)",
        ("shifts", "dims"),
        ("shifts", "dims", "batch_dims"),
        lazy=True,
    ),
    "rot90": _rule(
        "the two batch dims in `dims` swapped when `k` is odd",
        ("k", "dims"),
        ("k", "dims", "new_batch_size"),
        lazy=True,
        names="_ops.rot90_names({names}, k, dims)",
    ),
    "atleast": _rule(
        "size-one batch dims added in front up to `ndim` batch dims (the tensordict itself "
        "when it has them)",
        ("ndim",),
        ("new_batch_size", "batch_dims", "unchanged"),
        names="_ops.leading_names({names}, new_batch_size)",
    ),
    "narrow": _rule(
        "batch dim `dim` cut to `length`", ("dim", "start", "length"), ("dim", "start", "new_batch_size"), lazy=True,
        names="{names}",
    ),
    # ---- indexing (spec/indexing.yaml): ``batch_sizes`` gives one per result
    "split": _rule(
        "one tensordict per piece of batch dim `dim`, cut into pieces of `split_size` "
        "(an int, or a list of sizes summing to the dim)",
        ("split_size", "dim"),
        ("split_size", "dim", "batch_sizes"),
        lazy=True,
    ),
    "chunk": _rule(
        "one tensordict per chunk of batch dim `dim` (as `torch.chunk` cuts a tensor)",
        ("chunks", "dim"),
        ("chunks", "dim", "batch_sizes"),
        lazy=True,
    ),
    "tensor_split": _rule(
        "one tensordict per section of batch dim `dim` (as `torch.tensor_split` cuts a tensor)",
        ("indices_or_sections", "dim"),
        ("indices_or_sections", "dim", "batch_sizes"),
        lazy=True,
    ),
    "unbind": _rule(
        "one tensordict per index of batch dim `dim`, without that dim", ("dim",), ("dim", "batch_sizes"), lazy=True
    ),
    "gather": _rule(
        "the shape of `index` (one dim per batch dim)", ("dim", "index", "out", "inplace"),
        ("dim", "index", "new_batch_size"),
        names="{names}",
    ),
    "mask": _rule(
        "the batch size of the input; `mask` is a boolean tensor shaped like the leading batch dims",
        ("mask",),
        ("mask",),
        elementwise=True,
    ),
    "where": _rule(
        "the batch size of the input; `condition` is a boolean tensor shaped like the leading batch dims",
        ("condition",),
        ("condition",),
        elementwise=True,
    ),
    "masked_select": _rule(
        "the number of true elements of `mask`, followed by the batch dims `mask` does not cover",
        ("mask",),
        ("mask", "new_batch_size"),
    ),
    # ---- device (spec/device.yaml)
    "new": _rule(
        "`size`; every leaf keeps its feature dims and every nested tensordict its extra batch dims",
        ("size",),
        ("new_batch_size", "batch_dims"),
    ),
    "new_tensor": _rule(
        "the batch size of `data` (a tensor's leading dims, as many as the batch has)",
        ("data",),
        ("data", "new_batch_size"),
    ),
    # ---- stacking (spec/stacking.yaml): called with the inputs, not ``self``
    "stack": _rule(
        "the inputs' batch size with a new dim of size `len(input)` at `dim`",
        ("input", "dim"),
        ("input", "dim", "new_batch_size"),
        names="_ops.inserted_names({names}, dim)",
    ),
    "cat": _rule(
        "the inputs' batch size, with batch dim `dim` the sum of theirs",
        ("input", "dim"),
        ("input", "dim", "new_batch_size"),
        names="{names}",
    ),
}

# ``device: rule(args)``: ``new_device`` is the result's device (NO_DEFAULT: the
# input's); a rule defining ``unchanged`` makes the op return ``self`` when it is true.
DEVICE_RULES: dict[str, Rule] = {
    "to": _rule(
        "the device the arguments name (a device, or the device of a tensor or "
        "tensordict); the input's when they name none",
        ("args", "kwargs"),
        ("device", "dtype", "non_blocking", "new_device", "unchanged", "inplace", "new_batch_size"),
    ),
    "cuda": _rule(
        "the CUDA device `device` (the current one when None)",
        ("device", "kwargs"),
        ("device", "dtype", "non_blocking", "new_device", "unchanged", "inplace", "new_batch_size"),
    ),
    "new": _rule("`device` when given, else the input's", ("device",), ("device", "new_device")),
    # ``torch.zeros_like(x, **like)``: only the keywords given (torch's own defaults
    # cost a per-leaf parse when passed)
    "like": _rule(
        "`device` when given, else the input's",
        ("dtype", "layout", "device", "requires_grad", "memory_format"),
        ("like", "new_device"),
    ),
}


@dataclass(frozen=True)
class RuleCall:
    """``transpose(axis0, axis1)`` in an entry: the rule and the argument expressions."""

    name: str
    rule: Rule
    args: tuple[str, ...]


def parse_rule_call(
    entry: Entry,
    key: str,
    table: dict[str, Rule],
    signature: Signature | None,
    *,
    names: tuple[str, ...] = ("self", "torch", "_ops", "None"),
) -> RuleCall | None:
    """``key: rule(arg, ...)``: a rule of ``table`` and its arguments, Python
    expressions over the parameters and ``names``."""
    field = entry.fields[key]
    text, line = field.value, field.line
    try:
        call = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError as exc:
        entry.err(line, f"{key!r} is not a rule call: {exc.msg}: {text!r}")
        return None
    if isinstance(call, ast.Name):  # a rule without arguments
        call = ast.Call(func=call, args=[], keywords=[])
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        entry.err(line, f"{key!r} must be rule(args), got {text!r}")
        return None
    name = call.func.id
    if name not in table:
        entry.err(line, f"unknown {key} rule {name!r} (known: {', '.join(sorted(table))})")
        return None
    rule = table[name]
    if call.keywords or len(call.args) != len(rule.args):
        entry.err(line, f"{key} rule {name!r} takes {len(rule.args)} positional "
                        f"argument(s): {name}({', '.join(rule.args)})")
        return None
    allowed = set(names) | set(signature.names if signature else ())
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node is not call.func:
            if signature is not None and node.id not in allowed:
                entry.err(line, f"{key} rule {name!r}: unknown name {node.id!r} (it may use "
                                f"{', '.join(sorted(allowed - {'None'}))})")
    return RuleCall(name, rule, tuple(ast.unparse(a) for a in call.args))
