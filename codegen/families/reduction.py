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

from codegen import emit, lazy, parse
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

    def _has(self, role: Role) -> bool:
        return self.signature.role(role) is not None

    @property
    def dim_rule(self) -> str:
        """The ``_ops`` rule normalising ``dim`` (no flags: one function per form)."""
        return "reduce_batch_rule" if self.no_dim == "batch" else DIM_RULES[self.dims]

    # ---- TensorDict -------------------------------------------------------------------
    def _tail(self, build: str) -> str:
        out = []
        if self._has(Role.OUT):
            out.append(f'if out is not None:\n    return _ops.write_into(self, out, new, "{self.name}")')
        out.append(f"result = {build}")
        if self._has(Role.KEY_TRANSFORM):
            out.append("if key_transform is not None:\n    result = _ops.transform_keys(result, key_transform)")
        out.append("return result")
        return "\n".join(out)

    def _pairs(self, size: str) -> str:
        return (
            "values, indices = _ops.unzip(new)\n"
            f"result = rebuild(values{size})\n"
            "if return_indices:\n"
            f"    return torch.return_types.{self.name}((result, rebuild(indices{size})))\n"
            "return result"
        )

    def _reduce_true(self, dim: str, body: str) -> str:
        return (f"if reduce:  # the leaves as one tensor{body[0]}\n"
                f'    x = _ops.leaves_as_one(leaves, self._batch_size, {dim}, "{self.name}")\n'
                + emit.indent(body[1]))

    def _one_tensor(self, expr: str) -> str:
        if self._has(Role.RETURN_INDICES):
            return f"out = {expr}\nreturn out if return_indices else out[0]"
        return f"return {expr}"

    def _reduction_body(self) -> str:
        keepdim = "keepdim" if self._has(Role.KEEPDIM) else "_"
        prefix = ", prefix" if self.batch_prefix else ""
        body = [f"prefix = {self.batch_prefix}"] if self.batch_prefix else []
        if not self._has(Role.DIM):
            body.append("leaves = self._batched_leaves_and_rebuild()[0]")
        else:
            args = ["self._batch_size", "dim", "keepdim" if keepdim == "keepdim" else "False", f'"{self.name}"']
            if self.batch_prefix:
                args.append("prefix=prefix")
            body.append(f"dim, {keepdim}, new_batch_size = _ops.{self.dim_rule}({', '.join(args)})")
            body.append("leaves, rebuild = self._batched_leaves_and_rebuild()")
        if self._has(Role.REDUCE):
            at_last = emit.substitute(self.leaf, {"dim": "-1", "keepdim": "False"})
            body.append(self._reduce_true("dim", (
                "",
                f"if dim is None:\n    return {self.leaf_all}\n"
                f"if dim == \"feature\":  # reduced over its last dim\n"
                + emit.indent(self._one_tensor(at_last))
                + "\n# batch dims: the leaves concatenated along them, reduced as one leaf\n"
                + self._one_tensor(self.leaf),
            )))
        if not self._has(Role.DIM):
            body.append(f"new = [{self.leaf_all} for x in leaves]")
            body.append(self._tail(f"_ops.rebuild_reduced(self, leaves, new, False{prefix})"))
            return "\n".join(body)
        if self.no_dim == "each_leaf":
            kd = "keepdim" if keepdim == "keepdim" else "False"
            body.append("if dim is None:  # every dim of every leaf: no batch dims left at any level\n"
                        + emit.indent(f"new = [{self.leaf_all} for x in leaves]\n"
                                      + self._tail(f"_ops.rebuild_reduced(self, leaves, new, {kd}{prefix})")))
        flatten = ("leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False"
                   if keepdim == "keepdim" else "leaves, dim = _ops.flatten_features(self, leaves), -1")
        body.append("if dim == \"feature\":  # each leaf's feature dims, flattened into its last dim\n"
                    + emit.indent(flatten))
        if self._has(Role.RETURN_INDICES) or self.batch_prefix:
            body.append(f"new = {emit.comprehension(self.leaf)}")
        else:  # the result of each leaf has its shape, less the dims reduced
            body.append(f"new = _ops.reduce_leaves(lambda x, dim: {emit.leaf_expr(self.leaf)}, leaves, dim)")
        # the names of the dims kept stay with them
        options = ", batch_size=new_batch_size, names=self._names and _ops.reduced_names(self._names, dim, new_batch_size)"
        if self._has(Role.RETURN_INDICES):
            body.append(self._pairs(options))
        else:
            body.append(self._tail(f"rebuild(new{options})"))
        return "\n".join(body)

    def _scan_body(self) -> str:
        body = [f'dim = _ops.batch_dim(dim, self._batch_size, "{self.name}")',
                "leaves, rebuild = self._batched_leaves_and_rebuild()"]
        if self._has(Role.REDUCE):
            body.append(self._reduce_true('"feature"', (": batch dims, then all features", self._one_tensor(self.leaf))))
        body.append(f"new = {emit.comprehension(self.leaf)}")
        body.append(self._pairs("") if self._has(Role.RETURN_INDICES) else "return rebuild(new)")
        return "\n".join(body)

    def tensordict_code(self) -> str:
        body = emit.dense_stacks(self) + "\n" + (self._scan_body() if self.scan else self._reduction_body())
        if self.no_dim in ("all", "any"):  # over every value: no batch dim read, so a
            # lazy stack inside answers with its tensordicts' leaves, whatever their shapes
            # (the walk stops at the first leaf that decides the answer)
            negate = "" if self.no_dim == "any" else "not "
            decided, otherwise = ("True", "False") if self.no_dim == "any" else ("False", "True")
            # a one-element leaf is its own answer: bool() reads it without the
            # reduction kernel (0.2 us against 2.4 for x.any() then bool())
            test = f"{negate}(bool(x) if x.numel() == 1 else {self.leaf_all})"
            nested = f"isinstance(x, TensorDictBase) and {negate}x.{self.name}()"
            body = (f"if dim is None:  # one bool for every value of every leaf\n"
                    f"    # a loop over the entries (a nested container answers for itself,\n"
                    f"    # non-tensor data is skipped): a generator left at the deciding\n"
                    f"    # leaf costs ~0.2 us; a one-element leaf is read by bool(), with\n"
                    f"    # no reduction kernel\n"
                    f"    for x in self._scan_entries():\n"
                    f"        if isinstance(x, torch.Tensor):\n"
                    f"            if {test}:\n"
                    f"                return {decided}\n"
                    f"        elif {nested}:\n"
                    f"            return {decided}\n"
                    f"    return {otherwise}\n" + body)
        return emit.function(self.name, self.signature.text, emit.op_docstring(self), body)

    # ---- LazyStackedTensorDict ----------------------------------------------------------
    def lazy_code(self) -> str | None:
        if self.lazy_way == "dense":
            return lazy.dense(self)
        sig = self.signature
        call = f"{self.name}({sig.forward_args()})"
        body = []
        if self._has(Role.OUT):
            body.append(f"if out is not None:  # written into out: on the dense stack\n"
                        f'    return self._dense_op("{self.name}").{call}')
        if self._has(Role.REDUCE):
            body.append("if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves\n"
                        f"    return super().{call}")
        if self.no_dim in ("all", "any") and not self.scan:
            body.append("if _lazy_rules.no_dim(dim):  # one bool: each stacked tensordict's\n"
                        f"    return {self.no_dim}(td.{call} for td in self.tensordicts)")
        keepdim = "keepdim" if self._has(Role.KEEPDIM) else "False"
        if self.scan:
            where = f'_lazy_rules.scanned_dim(self, dim, "{self.name}")'
            dense = "along the stack dim"
        else:
            rule = {"reduce_rule": "reduced_dims", "reduce_one_rule": "reduced_dim",
                    "reduce_batch_rule": "batch_reduced_dims"}[self.dim_rule]
            prefix = f", {self.batch_prefix}" if self.batch_prefix else ""
            where = f'_lazy_rules.{rule}(self, dim, {keepdim}, "{self.name}"{prefix})'
            dense = "no dim, or over the stack dim"
        member_call = f"{self.name}({sig.forward_args(dim='member_dim')})"
        body.append(f"where = {where}")
        body.append(f"if where is None:  # {dense}: on the dense stack\n"
                    f'    return self._dense_op("{self.name}").{call}')
        body.append("member_dim, stack_dim = where")
        body.append(f"return _lazy_rules.restack(\n"
                    f"    self, [td.{member_call} for td in self.tensordicts], stack_dim\n)")
        return lazy.method(self, "\n".join(body))
