"""The tables of the op spec: the families codegen knows and the keys each entry of a
family may have, the named rules an entry refers to (batch-size, device), the results
and collectors of leaf-wise ops, the names signatures may use and the operator dunders.
``spec/README.md`` documents them for spec authors; :mod:`codegen.loader` checks entries
against them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class FamilyRule:
    """What an entry of one family may say, and how codegen treats it."""

    name: str
    keys: frozenset[str]  # entry keys allowed on top of COMMON_KEYS
    required: frozenset[str]  # entry keys that must be present (after defaults)
    dunder_signature: str  # signature of a dunder alias that does not give one
    required_params: tuple[str, ...] = ()  # keyword-only params every signature has
    file: str = ""  # the spec file's stem, when it is not the family's name
    receiver: str = "self"  # a signature's first parameter; "cls" renders classmethods


COMMON_KEYS = frozenset(
    {
        "name",
        "signature",
        "summary",
        "details",
        "example",
        "leaf",
        "dunders",
        "batch_size",
        "torch_function",
    }
)
COMMON_REQUIRED = frozenset(
    {"name", "signature", "summary", "details", "example", "leaf"}
)
INPLACE_KEYS = frozenset(
    {"name", "signature", "leaf", "foreach", "drop_if_none", "dunders"}
)
INPLACE_REQUIRED = frozenset({"name", "signature", "leaf"})
FILE_KEYS = frozenset({"family", "title", "doc", "defaults", "ops"})
FILE_REQUIRED = frozenset({"family", "title", "doc", "ops"})

FAMILIES: dict[str, FamilyRule] = {
    rule.name: rule
    for rule in (
        FamilyRule(
            name="pointwise",
            keys=frozenset({"foreach", "inplace"}),
            required=frozenset(),
            dunder_signature="(self) -> Self",
        ),
        FamilyRule(
            name="binary",
            keys=frozenset({"foreach", "inplace", "operands", "drop_if_none"}),
            required=frozenset({"operands"}),
            dunder_signature="(self, other: TensorCollection | torch.Tensor | float) -> Self",
        ),
        FamilyRule(
            name="cast",
            keys=frozenset(),
            required=frozenset(),
            dunder_signature="(self) -> Self",
            required_params=("cast_filter",),
        ),
    )
}

# How the batch size of the result relates to the input's (``batch_size:`` key).
BATCH_SIZE_RULES: dict[str, str] = {
    "keep": "the result has the batch size, keys and nesting of the input",
}
DEFAULT_BATCH_SIZE_RULE = "keep"

# ---- batch_shape and reduction families (spec/shape.yaml, spec/reduction.yaml) --------


@dataclass(frozen=True)
class BatchRule:
    """A batch-size rule with code. ``batch_size: rule(arg, ...)`` in an entry renders

        <defines> = _ops.<rule>_rule(self._batch_size, arg, ..., "<op name>")

    run once per call before the leaves are touched: it checks the arguments against
    the batch size (an error names the op, the argument and the batch size) and returns
    the names ``defines`` lists, which the entry's ``leaf`` may use. A rule defining
    ``new_batch_size`` changes the batch size (``rebuild(new, batch_size=...)``, every
    nested level getting it followed by its own extra dims); the others keep it."""

    doc: str  # the docs' "Batch size:" line
    args: tuple[str, ...]  # what an entry passes, in order (docs and arity)
    defines: tuple[str, ...]


BATCH_RULES: dict[str, BatchRule] = {
    "view": BatchRule(
        "`shape` (one size may be -1) holding as many elements as the batch; "
        "a dtype view keeps it",
        ("shape", "size", "batch_size", "td"),
        ("new_batch_size", "dtype", "batch_dims"),
    ),
    "reshape": BatchRule(
        "`shape` (one size may be -1) holding as many elements as the batch",
        ("args", "kwargs"),
        ("new_batch_size", "batch_dims"),
    ),
    "permute": BatchRule(
        "the batch dims in the order given",
        ("args", "kwargs"),
        ("dims", "positions", "new_batch_size"),
    ),
    "transpose": BatchRule(
        "the two batch dims swapped",
        ("dim0", "dim1"),
        ("dim0", "dim1", "new_batch_size"),
    ),
    "movedim": BatchRule(
        "the batch dims in `source` moved to `destination`, the others in order",
        ("source", "destination"),
        ("source", "destination", "new_batch_size"),
    ),
    "squeeze": BatchRule(
        "without the size-one batch dims named (all of them when none is)",
        ("args", "kwargs"),
        ("dims", "new_batch_size"),
    ),
    "unsqueeze": BatchRule(
        "a batch dim of size one inserted at `dim`",
        ("args", "kwargs"),
        ("dim", "new_batch_size"),
    ),
    "flatten": BatchRule(
        "the batch dims `start_dim` to `end_dim` merged into one",
        ("start_dim", "end_dim"),
        ("start_dim", "end_dim", "new_batch_size"),
    ),
    "unflatten": BatchRule(
        "batch dim `dim` split into `sizes`",
        ("dim", "sizes"),
        ("dim", "sizes", "new_batch_size"),
    ),
    "expand": BatchRule(
        "`shape`: size-one batch dims grown, new leading dims added, -1 keeps a size",
        ("shape", "kwargs"),
        ("new_batch_size", "batch_dims"),
    ),
    "repeat": BatchRule(
        "each batch dim times its repeat count (extra counts add leading dims)",
        ("repeats",),
        ("repeats", "new_batch_size", "batch_dims"),
    ),
    "tile": BatchRule(
        "as `repeat`, the counts padded with ones in front when fewer than the batch dims",
        ("repeats",),
        ("repeats", "new_batch_size", "batch_dims"),
    ),
    "repeat_interleave": BatchRule(
        "batch dim `dim` (the flattened batch when None) with each element repeated",
        ("repeats", "dim", "output_size"),
        ("dim", "flat", "new_batch_size", "batch_dims"),
    ),
    "flip": BatchRule(
        "the batch size of the input (`dims` count batch dims)",
        ("dims",),
        ("dims",),
    ),
    "roll": BatchRule(
        "the batch size of the input (`dims` count batch dims; none: the flattened batch)",
        ("shifts", "dims"),
        ("shifts", "dims", "batch_dims"),
    ),
    "rot90": BatchRule(
        "the two batch dims in `dims` swapped when `k` is odd",
        ("k", "dims"),
        ("k", "dims", "new_batch_size"),
    ),
    "atleast": BatchRule(
        "size-one batch dims added in front up to `ndim` batch dims",
        ("ndim",),
        ("new_batch_size", "batch_dims"),
    ),
    "narrow": BatchRule(
        "batch dim `dim` cut to `length`",
        ("dim", "start", "length"),
        ("dim", "start", "new_batch_size"),
    ),
}
BATCH_SIZE_RULES.update({name: rule.doc for name, rule in BATCH_RULES.items()})
BATCH_SIZE_RULES["reduce"] = (
    "without the reduced batch dims (kept as size one with `keepdim=True`); with "
    "`dim='feature'`, the batch size of the input; with no dim, no batch dims "
    "(`reduce=True`: one tensor for all the leaves)"
)

FAMILIES.update(
    {
        "reduction": FamilyRule(
            name="reduction",
            keys=frozenset({"leaf_all", "dims", "no_dim", "batch_prefix"}),
            required=frozenset(),
            dunder_signature="(self) -> Self",
        ),
        "batch_shape": FamilyRule(
            name="batch_shape",
            keys=frozenset({"storage", "lazy"}),
            required=frozenset({"storage"}),
            dunder_signature="(self) -> Self",
            file="shape",
        ),
    }
)
# batch_shape entries: whether the result shares storage with the input (`storage`)
STORAGE: dict[str, str] = {
    "view": "a view: it shares storage with the input, as the torch function's result",
    "view_where_possible": "a view where the leaves' strides allow one, a copy "
    "otherwise, as the torch function",
    "copy": "a copy: new storage, as the torch function's result",
}
# reduction entries: `dims` says whether `dim` may be a tuple; `no_dim`, what no dim does
REDUCTION_DIMS = ("many", "one")
REDUCTION_NO_DIM = ("each_leaf", "batch", "all", "any")

# ---- indexing, device and stacking families (spec/indexing.yaml, spec/device.yaml,
# spec/stacking.yaml) ------------------------------------------------------------------
# Leaf-wise ops whose result is not one tensordict shaped like the input: the batch size
# changes (``batch_size: rule(args)``, the BatchRule mechanism above), the device changes
# (``device: rule(args)``, DEVICE_RULES), there are several results, the leaves are
# written in place or gathered into plain Python data (``result``), or the op takes a
# sequence of tensordicts (stacking: classmethods). spec/README.md documents the keys.
LEAFWISE_FAMILIES = ("indexing", "device", "stacking")
_LEAFWISE_KEYS = frozenset(
    {"result", "operands", "operand_default", "inplace", "foreach"}
)
FAMILIES.update(
    {
        "indexing": FamilyRule(
            name="indexing",
            keys=_LEAFWISE_KEYS,
            required=frozenset(),
            dunder_signature="(self) -> Self",
        ),
        "device": FamilyRule(
            name="device",
            keys=_LEAFWISE_KEYS | {"device", "target", "then", "method"},
            required=frozenset(),
            dunder_signature="(self) -> Self",
        ),
        "stacking": FamilyRule(
            name="stacking",
            keys=frozenset({"lazy"}),
            required=frozenset({"batch_size"}),
            dunder_signature="(self) -> Self",
            receiver="cls",
        ),
    }
)
# ---- attributes family (spec/attributes.yaml) -----------------------------------------
# Read-only facts about the leaves and aggregates over them: ``leaf`` is computed for
# every leaf (``new``), then ``combine`` (an expression over ``new``, ``leaves``,
# ``rebuild``, ``self``, the parameters, ``torch`` and ``_ops``) is returned;
# ``property: true`` renders a read-only ``@property``.
FAMILIES["attributes"] = FamilyRule(
    name="attributes",
    keys=frozenset({"combine", "property"}),
    required=frozenset({"combine"}),
    dunder_signature="(self) -> Self",
)
ATTRIBUTE_NAMES = frozenset({"new", "leaves", "rebuild", "self", "torch", "_ops"})

# Batch rules of these families (``_ops.<rule>_rule(self._batch_size, args..., op)``;
# the stacking rules have no ``self`` and get the inputs instead). A rule defining
# ``batch_sizes`` gives one batch size per result of a ``result: tensordicts`` op.
_LEAFWISE_BATCH_RULES = {
    "split": BatchRule(
        "one tensordict per piece of batch dim `dim`, cut into pieces of `split_size` "
        "(an int, or a list of sizes summing to the dim)",
        ("split_size", "dim"),
        ("split_size", "dim", "batch_sizes"),
    ),
    "chunk": BatchRule(
        "one tensordict per chunk of batch dim `dim` (as `torch.chunk` cuts a tensor)",
        ("chunks", "dim"),
        ("chunks", "dim", "batch_sizes"),
    ),
    "tensor_split": BatchRule(
        "one tensordict per section of batch dim `dim` (as `torch.tensor_split` cuts "
        "a tensor)",
        ("indices_or_sections", "dim"),
        ("indices_or_sections", "dim", "batch_sizes"),
    ),
    "unbind": BatchRule(
        "one tensordict per index of batch dim `dim`, without that dim",
        ("dim",),
        ("dim", "batch_sizes"),
    ),
    "gather": BatchRule(
        "the shape of `index` (one dim per batch dim)",
        ("dim", "index"),
        ("dim", "index", "new_batch_size"),
    ),
    "mask": BatchRule(
        "the batch size of the input; `mask` is a boolean tensor shaped like the "
        "leading batch dims",
        ("mask",),
        ("mask",),
    ),
    "where": BatchRule(
        "the batch size of the input; `condition` is a boolean tensor shaped like the "
        "leading batch dims",
        ("condition",),
        ("condition",),
    ),
    "masked_select": BatchRule(
        "the number of true elements of `mask`, followed by the batch dims `mask` "
        "does not cover",
        ("mask",),
        ("mask", "new_batch_size"),
    ),
    "new": BatchRule(
        "`size`; every leaf keeps its feature dims and every nested tensordict its "
        "extra batch dims",
        ("size",),
        ("new_batch_size", "batch_dims"),
    ),
    "new_tensor": BatchRule("the batch size of `data`", ("data",), ("new_batch_size",)),
    "stack": BatchRule(
        "the inputs' batch size with a new dim of size `len(input)` at `dim`",
        ("input", "dim"),
        ("input", "dim", "new_batch_size"),
    ),
    "cat": BatchRule(
        "the inputs' batch size, with batch dim `dim` the sum of theirs",
        ("input", "dim"),
        ("input", "dim", "new_batch_size"),
    ),
}
BATCH_RULES.update(_LEAFWISE_BATCH_RULES)
BATCH_SIZE_RULES.update(
    {name: rule.doc for name, rule in _LEAFWISE_BATCH_RULES.items()}
)
# ``device: rule(args)``: ``<defines> = _ops.<rule>_device_rule(self._device, args...,
# op)``. ``new_device`` is the result's device (NO_DEFAULT: the input's); a rule defining
# ``unchanged`` makes the op return ``self`` when it is true.
DEVICE_RULES: dict[str, BatchRule] = {
    "to": BatchRule(
        "the device the arguments name (a device, or the device of a tensor or "
        "tensordict); the input's when they name none",
        ("args", "kwargs"),
        ("device", "dtype", "non_blocking", "new_device", "unchanged"),
    ),
    "cuda": BatchRule(
        "the CUDA device `device` (the current one when None)",
        ("device", "kwargs"),
        ("device", "dtype", "non_blocking", "new_device", "unchanged"),
    ),
    "new": BatchRule(
        "`device` when given, else the input's",
        ("device",),
        ("device", "new_device"),
    ),
}
# ``result``: what the new leaves become. In ``in_place`` the ``leaf`` is a statement.
RESULTS: dict[str, str] = {
    "tensordict": "a tensordict with the new leaves",
    "tensordicts": "a tuple of tensordicts; the leaf gives one tensor per result",
    "in_place": "the leaves are changed in place; returns the tensordict itself",
    "replace": "the new leaves replace the stored ones; returns the tensordict itself",
}
# ``result: collector(args)``: ``return _ops.<collector>_result(self, new, args...)``.
COLLECTORS: dict[str, tuple[str, ...]] = {
    "nested_dict": (),
    "nested_lists": ("convert_nodes", "tolist_first", "as_linked_list"),
}

# Names a signature's annotations may use; the stub and the generated module define them.
TYPE_NAMES = frozenset(
    {
        "Any",
        "Callable",
        "CompatibleType",
        "Self",
        "TensorCollection",
        "TensorDictBase",
        "bool",
        "complex",
        "float",
        "int",
        "str",
        "torch",
        # the signatures users call (api_surface.md) also say:
        "Literal",
        "NO_DEFAULT",
        "NestedKey",
        "Tuple",
        "list",
        "tuple",
        # indexing, device and stacking signatures (api_surface.md):
        "DeviceType",
        "List",
        "Sequence",
        "T",
        "Tensor",
        "dict",
        "np",
    }
)

# Names the generated code uses for its own locals; no parameter may take them.
RESERVED_NAMES = frozenset({"leaves", "new", "rebuild", "torch", "x", "_ops"})

DUNDER_RE = re.compile(r"^__[a-z][a-z0-9_]*__$")

# The operators a dunder may implement, and how users spell them (for the docs).
OPERATORS: dict[str, str] = {
    "__abs__": "abs(td)",
    "__neg__": "-td",
    "__invert__": "~td",
    "__add__": "td + other",
    "__radd__": "other + td",
    "__iadd__": "td += other",
    "__sub__": "td - other",
    "__rsub__": "other - td",
    "__isub__": "td -= other",
    "__mul__": "td * other",
    "__rmul__": "other * td",
    "__imul__": "td *= other",
    "__truediv__": "td / other",
    "__rtruediv__": "other / td",
    "__itruediv__": "td /= other",
    "__pow__": "td ** other",
    "__rpow__": "other ** td",
    "__ipow__": "td **= other",
    "__mod__": "td % other",
    "__rmod__": "other % td",
    "__imod__": "td %= other",
    "__and__": "td & other",
    "__rand__": "other & td",
    "__iand__": "td &= other",
    "__or__": "td | other",
    "__ror__": "other | td",
    "__ior__": "td |= other",
    "__xor__": "td ^ other",
    "__rxor__": "other ^ td",
    "__ixor__": "td ^= other",
    "__eq__": "td == other",
    "__ne__": "td != other",
    "__lt__": "td < other",
    "__le__": "td <= other",
    "__gt__": "td > other",
    "__ge__": "td >= other",
}
