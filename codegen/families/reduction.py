"""reduction: one torch reduction (or scan) over batch dims of every leaf
(``spec/reduction.yaml``).

``dim`` counts batch dims (normalised once by ``_ops.reduce_rule`` & co.). A reduction
(``batch_size: reduce``) has up to four forms, chosen at run time: no dim (``leaf_all``
on each leaf, every level left with no batch dims; with ``no_dim: batch``, every batch
dim; with ``no_dim: all/any``, one Python bool), ``dim="feature"`` (each leaf's feature
dims flattened into its last dim, reduced there; the batch size stays), batch dims
(``leaf`` with the normalised dim), and ``reduce=True`` (the leaves as one tensor).
A scan (``batch_size: keep``: cummax, softmax) applies ``leaf`` along one batch dim.
With ``return_indices``, the result is ``torch.return_types.<name>(values, indices)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import parse
from codegen.checks import check_expr
from codegen.entry import Entry
from codegen.families import register
from codegen.model import KEEP_DOC, Op, Role

ROLES = {
    "dim": Role.DIM,
    "keepdim": Role.KEEPDIM,
    "reduce": Role.REDUCE,
    "return_indices": Role.RETURN_INDICES,
    "key_transform": Role.KEY_TRANSFORM,
}
REDUCE_DOC = (
    "without the reduced batch dims (kept as size one with `keepdim=True`); with "
    "`dim='feature'`, the batch size of the input; with no dim, no batch dims "
    "(`reduce=True`: one tensor for all the leaves)"
)
# ``dims``: how many batch dims one call reduces -> the rule normalising ``dim``
DIM_RULES = {"many": "reduce_rule", "one": "reduce_one_rule"}
NO_DIM = ("each_leaf", "batch", "all", "any")


@register
@dataclass(frozen=True, kw_only=True)
class ReductionOp(Op):
    family: ClassVar[str] = "reduction"
    KEYS: ClassVar[frozenset] = frozenset(
        {"leaf", "leaf_all", "dims", "no_dim", "batch_prefix", "batch_size"}
    )

    leaf: str  # one leaf reduced over ``dim`` (normalised batch dims)
    leaf_all: str | None  # one leaf reduced over every dim (the no-dim form)
    scan: bool  # ``batch_size: keep``: cummax, softmax...
    dims: str  # "many" (dim may be a tuple, as torch takes) or "one"
    no_dim: str  # what no dim does (NO_DIM)
    batch_prefix: str | None  # leading dims the leaf result gains: "_ops.quantile_shape(q)"

    @classmethod
    def parse(cls, entry: Entry) -> ReductionOp | None:
        parse.require(entry, "leaf")
        shared = parse.common(entry)
        sig = shared["signature"] if shared else None
        names = ("_ops",)
        leaf = parse.leaf(entry, sig, names)
        leaf_all = parse.leaf(entry, sig, names, key="leaf_all")
        kind = entry.choice("batch_size", ("reduce", "keep"), "reduce")
        dims = entry.choice("dims", tuple(DIM_RULES), "many")
        no_dim = entry.choice("no_dim", NO_DIM, "each_leaf")
        prefix = entry.text("batch_prefix", optional=True)
        if prefix is not None:
            check_expr(prefix, "batch_prefix", entry.line_of("batch_prefix"),
                       ("_ops", *(sig.names if sig else ())) if sig else None, entry.err, local=None)
        if no_dim == "batch" and dims != "many":
            entry.err(entry.line_of("no_dim"), "'no_dim: batch' reduces every batch dim at once: 'dims' is many")
        if sig is not None:
            if kind == "reduce" and no_dim != "batch" and leaf_all is None:
                entry.err(entry.line, "a reduction whose no-dim form reduces every dim of each leaf needs 'leaf_all'")
            if kind == "keep" and not sig.has("dim"):
                entry.err(entry.line_of("signature"), "a 'keep' reduction takes a 'dim'")
            if sig.has("return_indices"):
                import torch

                if not hasattr(torch.return_types, entry.name):
                    entry.err(entry.line_of("signature"), f"return_indices: torch.return_types has no "
                                                          f"{entry.name!r} to hold values and indices")
        if shared is None or leaf is None or entry.failed:
            return None
        shared["signature"] = sig.with_roles({n: r for n, r in ROLES.items() if sig.has(n)})
        return cls(**shared, leaf=leaf, leaf_all=leaf_all, scan=kind == "keep", dims=dims,
                   no_dim=no_dim, batch_prefix=prefix)

    # ---- facts --------------------------------------------------------------------------
    @property
    def needs_dense_stacks(self) -> bool:
        return True  # the leaves are reduced over batch dims

    @property
    def batch_size_doc(self) -> str:
        return KEEP_DOC if self.scan else REDUCE_DOC

    @property
    def lazy_way(self) -> str:
        return "reduce" if self.signature.role(Role.DIM) else "dense"

    def has(self, role: Role) -> bool:
        """Whether the signature has the parameter of ``role``."""
        return self.signature.role(role) is not None

    @property
    def dim_rule(self) -> str:
        """The ``_ops`` rule normalising ``dim`` (no flags: one function per form)."""
        return "reduce_batch_rule" if self.no_dim == "batch" else DIM_RULES[self.dims]

