"""The op spec as frozen dataclasses (:class:`Spec` of :class:`Family` of :class:`Op`),
which :func:`codegen.loader.load_spec` builds from ``spec/*.yaml`` and the templates
render. :class:`SpecError` carries every problem a load found, one ``file:line`` each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from codegen.schema import COLLECTORS, DUNDER_RE


@dataclass(frozen=True)
class Location:
    path: str  # as displayed, e.g. "spec/binary.yaml"
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # positional_only | positional | var_positional | keyword_only | var_keyword
    annotation: str | None  # source text, e.g. "float | None"
    default: str | None  # source text of a literal, e.g. "None", "1"

    @property
    def positional(self) -> bool:
        return self.kind in ("positional_only", "positional")


@dataclass(frozen=True)
class Signature:
    """A parsed signature string, ``self`` first."""

    text: (
        str  # normalised: "(self, other: float, *, alpha: float | None = None) -> Self"
    )
    params: tuple[Param, ...]  # without self
    returns: str | None
    receiver: str = "self"  # "cls" for a classmethod

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def has(self, name: str) -> bool:
        return any(p.name == name for p in self.params)

    def get(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def positional(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.positional)


@dataclass(frozen=True)
class Alias:
    """A dunder that delegates to a method (``__add__`` -> ``add``)."""

    name: str
    signature: Signature
    target: str
    binary: bool  # a binary operator: returns NotImplemented for foreign operands
    location: Location


@dataclass(frozen=True)
class InPlace:
    name: str
    signature: Signature
    leaf: str  # statement run on each leaf ``x``: "x.add_(other, alpha=alpha)"
    foreach: str | None  # "torch._foreach_add_(leaves, other, alpha=alpha)"
    drop_if_none: tuple[str, ...]  # keyword arguments left out of the calls when None
    dunders: tuple[Alias, ...]
    location: Location


@dataclass(frozen=True)
class Op:
    name: str
    family: str
    signature: Signature
    summary: str
    details: str
    example: str
    leaf: str  # expression computing one new leaf from the leaf ``x``
    foreach: str | None  # one torch._foreach_* call over ``leaves``, or None
    operands: tuple[str, ...]  # params aligned leaf by leaf (binary family)
    drop_if_none: tuple[str, ...]  # keyword arguments left out of the calls when None
    batch_size: str
    inplace: InPlace | None
    dunders: tuple[Alias, ...]
    location: Location
    # torch functions that dispatch to this method (``torch.abs(td)`` -> ``td.abs()``)
    torch_functions: tuple[str, ...] = ()
    # batch_shape and reduction families (BatchRule, spec/README.md)
    batch_args: tuple[str, ...] = ()  # what ``batch_size: rule(...)`` passes the rule
    leaf_all: str | None = None  # reduction: one leaf reduced over every dim
    dims: str = "many"  # reduction: "many" (dim may be a tuple) or "one"
    no_dim: str = "each_leaf"  # reduction: what no dim reduces (REDUCTION_NO_DIM)
    batch_prefix: str | None = None  # reduction: leading dims the leaf result gains
    storage: str | None = None  # batch_shape: view, view_where_possible or copy
    # indexing, device and stacking families (spec/README.md)
    result: str = "tensordict"  # RESULTS, or a COLLECTORS name
    result_args: tuple[str, ...] = ()  # a collector's arguments
    operand_default: str | None = None  # parameter filling in for keys an operand lacks
    device_rule: str | None = None  # DEVICE_RULES name (``device: rule(args)``)
    device_args: tuple[str, ...] = ()
    target: str | None = None  # parameter naming the nested key whose leaves it uses
    then: str | None = None  # a method of self called last; its result is returned
    method: bool = True  # False: no TensorDict method, only torch.X(td) dispatch
    # under set_lazy_legacy(True): stacking builds a lazy stack, a batch_shape op a
    # lazy view writing through to its source
    lazy: bool = False
    # attributes family: what the per-leaf values become; a read-only property
    combine: str | None = None
    is_property: bool = False

    @property
    def is_dunder(self) -> bool:
        return bool(DUNDER_RE.match(self.name))

    @property
    def needs_dense_stacks(self) -> bool:
        """Whether the op needs every leaf as the tensordict's key holds it: with all
        of its batch dims (the per-leaf expression addresses batch dims: a batch-size
        rule, a reduction or a scan), or one leaf per key (a collector keying plain
        data like the tensordict, ``_ops.join_leaves`` joining the leaves along a
        batch dim). A lazy stack's leaves are its members' (no stack dim, one per
        member), so the generated method makes lazy stacks inside dense first."""
        return (
            self.batch_size != "keep"
            or self.family == "reduction"
            or self.result in COLLECTORS
            or "_ops.join_leaves(" in (self.combine or "")
        )

    def method_names(self) -> tuple[str, ...]:
        if not self.method:  # a torch function only (``method: false``)
            return ()
        names = [self.name] + [d.name for d in self.dunders]
        if self.inplace is not None:
            names += [self.inplace.name] + [d.name for d in self.inplace.dunders]
        return tuple(names)


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    doc: str
    path: str  # "spec/pointwise.yaml"
    ops: tuple[Op, ...]


@dataclass(frozen=True)
class Spec:
    families: tuple[Family, ...]  # sorted by name

    def ops(self) -> Iterator[Op]:
        for family in self.families:
            yield from family.ops

    def method_names(self) -> list[str]:
        return sorted(n for op in self.ops() for n in op.method_names())

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.families)


class SpecError(Exception):
    """Every problem found in the spec, one ``file:line: entry 'name': ...`` per line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))
