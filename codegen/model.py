"""What every op of the spec is made of, as frozen dataclasses.

A loaded spec is a :class:`Spec` of :class:`FamilySpec` (one per YAML file) of ops. Each
family's op type (``codegen/families/<family>.py``) subclasses :class:`Op`, which holds
only what every family has: the name, the typed :class:`Signature`, the docs, the
operator aliases and the in-place variant the generic renderers (stubs, tensorclass
forwarders, reference pages) list, the torch functions that dispatch to it and the
test cases. :class:`SpecError` carries every problem a load found, one ``file:line``
each.
"""

from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterator

# What an op that does not change the batch size says about it (docs).
KEEP_DOC = "the result has the batch size, keys and nesting of the input"

DUNDER_RE = re.compile(r"^__[a-z][a-z0-9_]*__$")


@dataclass(frozen=True)
class Location:
    path: str  # as displayed, e.g. "spec/binary.yaml"
    line: int  # 1-based

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class Role(enum.Enum):
    """What a parameter means to the code rendered for it. A family's ``parse`` gives
    roles once (``Signature.with_roles``); templates ask ``signature.role(Role.OUT)``
    instead of matching parameter names."""

    DIM = "dim"  # the batch dim(s) an op works along
    KEEPDIM = "keepdim"
    OUT = "out"  # results are written into it and it is returned
    INPLACE = "inplace"  # a bool: self takes the result's entries and batch size
    REDUCE = "reduce"  # reduce every leaf together, as one tensor
    RETURN_INDICES = "return_indices"  # (values, indices) of min, max, cummax...
    KEY_TRANSFORM = "key_transform"  # renames every key of the result
    DEFAULT = "default"  # fills in for keys a tensor-collection operand lacks
    CAST_FILTER = "cast_filter"  # picks the leaves a cast converts
    OPERAND = "operand"  # matched key by key with the leaves
    PAD = "pad"  # fills in for keys an operand lacks (indexing, device)
    TARGET = "target"  # names the nested key whose leaves the op works on


# Annotation names that may stand for a tensor collection (or a sequence of them):
# a tensorclass passes its wrapped tensordict for such an argument.
COLLECTION_NAMES = frozenset(
    {"TensorCollection", "TensorDictBase", "Self", "T", "Any", "CompatibleType"}
)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # positional_only | positional | var_positional | keyword_only | var_keyword
    annotation: str | None  # source text, e.g. "float | None"
    default: str | None  # source text of a literal, e.g. "None", "1"
    role: Role | None = None

    @property
    def positional(self) -> bool:
        return self.kind in ("positional_only", "positional")

    @property
    def may_hold_collection(self) -> bool:
        """Whether the annotation admits a tensor collection (no annotation: any)."""
        if self.annotation is None:
            return True
        tree = ast.parse(self.annotation, mode="eval")
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        return bool(names & COLLECTION_NAMES)


def signature_text(
    params: tuple[Param, ...] | list[Param], returns: str | None, receiver: str
) -> str:
    """``(self, a: int, /, b=1, *, c: float | None = None) -> Self``, as PEP 8 spells it."""
    parts = [receiver] if receiver else []
    star_done = False
    for i, p in enumerate(params):
        if p.kind == "var_positional":
            parts.append(f"*{p.name}" + (f": {p.annotation}" if p.annotation else ""))
            star_done = True
            continue
        if p.kind == "var_keyword":
            parts.append(f"**{p.name}" + (f": {p.annotation}" if p.annotation else ""))
            continue
        if p.kind == "keyword_only" and not star_done:
            parts.append("*")
            star_done = True
        text = p.name
        if p.annotation:
            text += f": {p.annotation}"
            if p.default is not None:
                text += f" = {p.default}"
        elif p.default is not None:
            text += f"={p.default}"
        parts.append(text)
        if p.kind == "positional_only" and (
            i + 1 == len(params) or params[i + 1].kind != "positional_only"
        ):
            parts.append("/")
    return "(" + ", ".join(parts) + ")" + (f" -> {returns}" if returns else "")


@dataclass(frozen=True)
class Signature:
    """A parsed signature, the receiver (``self`` or ``cls``) first."""

    params: tuple[Param, ...]  # without the receiver
    returns: str | None
    receiver: str = "self"  # "cls" for a classmethod

    @property
    def text(self) -> str:
        return signature_text(self.params, self.returns, self.receiver)

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

    def role(self, role: Role) -> Param | None:
        """The (first) parameter with ``role``, or None."""
        return next((p for p in self.params if p.role is role), None)

    def with_roles(self, roles: dict[str, Role]) -> Signature:
        """The same signature, the parameters named in ``roles`` given their role."""
        params = tuple(
            replace(p, role=roles[p.name]) if p.name in roles else p
            for p in self.params
        )
        return replace(self, params=params)

    def forward_args(self, **override: str) -> str:
        """The parameters passed on as they came: ``input, dim, out=out`` (a name in
        ``override`` passes that expression instead: ``inplace="False"``)."""
        parts = []
        for p in self.params:
            value = override.get(p.name, p.name)
            if p.kind == "var_positional":
                parts.append(f"*{value}")
            elif p.kind == "var_keyword":
                parts.append(f"**{value}")
            elif p.kind == "keyword_only":
                parts.append(f"{p.name}={value}")
            else:
                parts.append(value)
        return ", ".join(parts)

    @property
    def function_text(self) -> str:
        """The signature without its receiver (a package-level function)."""
        return signature_text(self.params, self.returns, "")


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
    """The in-place variant of an op (``add_``): a statement run on each stored leaf."""

    name: str
    signature: Signature
    leaf: str  # statement run on each leaf ``x``: "x.add_(other, alpha=alpha)"
    foreach: str | None  # "torch._foreach_add_(leaves, other, alpha=alpha)"
    drop_if_none: tuple[str, ...]  # keyword arguments left out of the calls when None
    dunders: tuple[Alias, ...]
    location: Location
    torch_functions: tuple[str, ...] = ()  # ``torch.abs_``: dispatch to the in-place form


class Form(enum.Enum):
    """How an op is rendered on ``TensorDict``."""

    METHOD = "method"
    PROPERTY = "property"  # read-only, ``td.dtype``
    CLASSMETHOD = "classmethod"  # ``TensorDict.stack(tds)``, also ``tensordict.stack``
    FUNCTION = "function"  # no method: only ``torch.X(td)`` reaches it


@dataclass(frozen=True)
class Call:
    """One call of an op in its tests: Python call arguments (``"2, dim=0"``)."""

    args: str
    line: int


@dataclass(frozen=True)
class ErrorCase:
    """A call that must raise ``raises`` with every text of ``match`` in its message."""

    call: Call
    raises: str  # a builtin exception name
    match: tuple[str, ...]


@dataclass(frozen=True)
class Tests:
    """The test cases an entry declares (``tests:``): what the spec-driven tests call
    the op with and, for an op whose name is no torch function, what torch does
    instead (``oracle``). The entry's own expressions are never the oracle
    (spec/README.md)."""

    batch_size: tuple[int, ...] | None = None  # the batch size of the test inputs
    calls: tuple[Call, ...] = ()
    errors: tuple[ErrorCase, ...] = ()
    oracle: str | None = None  # a Python expression over one tensor ``x`` and the params
    floating: bool = False  # torch takes floating-point leaves only
    values: str = "defined"  # "random" / "uninitialized": compare shapes and dtypes only


@dataclass(frozen=True, kw_only=True)
class Op:
    """What every op has. A family's op type adds its own fields and says how it is
    rendered (``codegen/families/__init__.py`` lists what a family defines)."""

    family: ClassVar[str]  # the family's name, set by each op type
    name: str
    signature: Signature
    form: Form = Form.METHOD
    summary: str
    details: str
    example: str
    location: Location
    dunders: tuple[Alias, ...] = ()
    inplace: InPlace | None = None
    torch_functions: tuple[str, ...] = ()
    tests: Tests = field(default_factory=Tests)
    # a locked input gives a locked result (0.15.3's behaviour for this op)
    keeps_lock: bool = False

    @property
    def is_dunder(self) -> bool:
        return bool(DUNDER_RE.match(self.name))

    def aliases(self) -> tuple[Alias, ...]:
        """The dunders of the op and of its in-place variant."""
        return self.dunders + (self.inplace.dunders if self.inplace else ())

    def method_names(self) -> tuple[str, ...]:
        if self.form is Form.FUNCTION:
            return ()
        names = [self.name] + [d.name for d in self.dunders]
        if self.inplace is not None:
            names += [self.inplace.name] + [d.name for d in self.inplace.dunders]
        return tuple(names)

    # ---- how the op is rendered (each family overrides what it renders) -------------
    @property
    def needs_dense_stacks(self) -> bool:
        """Whether the op needs every leaf as the tensordict's key holds it (with all
        of its batch dims, one per key): a lazy stack held inside hands out its
        members' leaves, so the method makes such stacks dense first."""
        return False

    @property
    def batch_size_doc(self) -> str:
        """The reference page's "Batch size:" line."""
        return KEEP_DOC

    lazy_way: ClassVar[str] = "inherit"  # how it runs on a lazy stack (codegen/lazy.py)

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The names the op's rules define (a family with rules says which)."""
        return ()

    @property
    def inplace_name(self) -> str | None:
        """The name holding ``inplace=``: the ``inplace`` parameter, or ``inplace``
        where a rule reads it from ``**kwargs`` (``reshape``, ``to``: their signatures
        stay 0.15.3's ``(self, *args, **kwargs)``)."""
        param = self.signature.role(Role.INPLACE)
        if param is not None:
            return param.name
        return "inplace" if "inplace" in self.rule_names else None

    def tensordict_code(self) -> str:
        """The ``TensorDict`` method(s) (``Form.FUNCTION``: a module-level function),
        rendered by the family's template (``codegen/templates/families/``)."""
        from codegen.render import tensordict_methods

        return tensordict_methods(self)

    def lazy_code(self) -> str | None:
        """The ``LazyStackedTensorDict`` form; None: the ``TensorDict`` one is inherited."""
        from codegen.templating import form

        return None if self.lazy_way == "inherit" else form(self, "lazy")

    def doc_facts(self) -> list[str]:
        """Extra paragraphs of the op's reference entry (batch size, storage...)."""
        return []


@dataclass(frozen=True)
class FamilySpec:
    """One spec file: a family's title, introduction and ops."""

    name: str
    title: str
    doc: str
    path: str  # "spec/pointwise.yaml"
    ops: tuple[Any, ...]  # the family's op type


@dataclass(frozen=True)
class Spec:
    families: tuple[FamilySpec, ...]  # sorted by name

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
