"""Render a loaded :class:`~codegen.model.Spec` into every generated file.

Each output is a skeleton under ``codegen/templates/`` (plain ``$name`` substitution)
filled with what the emitters return: the family op types render their own methods
(``Op.tensordict_code`` / ``lazy_code``); this module renders what every op gets alike
(stubs, tensorclass forwarders, the ``torch.X(td)`` table, the package functions) and
formats Python with black. :func:`render_all` depends on nothing but the spec and the
templates: no timestamps, no absolute paths, no ordering that is not the spec's own.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import black

from codegen import docs, emit
from codegen.emit import fill
from codegen.checks import split_torch_function
from codegen.loader import load_spec
from codegen.model import Form, Op, Role, Signature, Spec, signature_text
from codegen.parse import OPERATORS

# The folders codegen owns: every file with one of these suffixes in them is generated.
OUTPUT_DIRS: dict[str, tuple[str, ...]] = {
    "tensordict/_generated": (".py", ".pyi"),
    "docs/reference": (".md",),
}

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310},
    line_length=88,
    string_normalization=True,
)
BLACK_STUB_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310},
    line_length=88,
    string_normalization=True,
    is_pyi=True,
)

# Builtin names that a generated method shadows inside the class body of a stub.
_SHADOWABLE = ("bool", "complex", "float", "int", "str", "type")


def format_python(text: str, *, stub: bool = False) -> str:
    return black.format_str(text, mode=BLACK_STUB_MODE if stub else BLACK_MODE)


def section(family) -> str:
    return f"# ---- {family.title} ({family.path}) ----"


def class_body(spec: Spec, code) -> str:
    """The methods ``code(op)`` returns (None: none), family by family, for a class."""
    parts = []
    for family in spec.families:
        parts.append("\n" + emit.indent(section(family)))
        for op in family.ops:
            text = code(op)
            if text:
                parts.append("\n" + emit.indent(text))
    return "\n".join(parts)


# ---- stubs --------------------------------------------------------------------------------


_BARE_GENERICS = {
    "Callable": "Callable[..., Any]",
    "Sequence": "Sequence[Any]",
    "list": "list[Any]",
    "List": "List[Any]",
    "tuple": "tuple[Any, ...]",
    "Tuple": "Tuple[Any, ...]",
    "dict": "dict[Any, Any]",
}


class _StubAnnotation(ast.NodeTransformer):
    """An annotation as a stub spells it: builtins the class shadows as ``builtins.X``
    (inside the class body ``float`` names the method ``float``), bare generics with
    ``Any`` arguments, ``NO_DEFAULT`` (a value) as ``Any``."""

    def __init__(self, shadowed: frozenset[str]) -> None:
        self.shadowed = shadowed

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.slice = self.visit(node.slice)  # the generic itself keeps its name
        if isinstance(node.value, ast.Name) and node.value.id in self.shadowed:
            node.value = ast.Attribute(ast.Name("builtins"), node.value.id)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.shadowed:
            return ast.Attribute(ast.Name("builtins"), node.id)
        if node.id == "NO_DEFAULT":
            return ast.Name("Any")
        if node.id in _BARE_GENERICS:
            return ast.parse(_BARE_GENERICS[node.id], mode="eval").body
        return node


def stub_signature(signature: Signature, shadowed: frozenset[str]) -> str:
    """A signature for the stub, with builtins the class shadows spelled ``builtins.X``
    (inside the class body ``float`` names the method ``float``)."""

    def qualify(annotation: str | None) -> str:
        # `mypy --strict` on user code reads these stubs: every parameter and return
        # gets a type (Any where the spec gives none), bare generics get arguments,
        # and the NO_DEFAULT sentinel, a value, is no type
        if annotation is None:
            return "Any"
        tree = _StubAnnotation(shadowed).visit(ast.parse(annotation, mode="eval"))
        return ast.unparse(tree)

    # a sentinel default (NO_DEFAULT, or None for a type without None) is `...` in
    # the stub, where its value need not fit the annotation
    def default(value: str | None) -> str | None:
        return "..." if value in ("NO_DEFAULT", "None") else value

    params = [
        replace(p, annotation=qualify(p.annotation), default=default(p.default))
        for p in signature.params
    ]
    return signature_text(params, qualify(signature.returns), signature.receiver)


def stub(name: str, signature: Signature, shadowed: frozenset[str]) -> str:
    """One stub line; ``__eq__``/``__ne__`` return more than ``object``'s do."""
    line = f"def {name}{stub_signature(signature, shadowed)}: ..."
    if name in ("__eq__", "__ne__"):
        line += "  # type: ignore[override]"
    return line


def stubs(spec: Spec, shadowed: frozenset[str]) -> str:
    out = []
    for family in spec.families:
        out.append(f"    # {family.title} ({family.path})")
        for op in family.ops:
            if op.form is Form.FUNCTION:
                continue
            if op.form in (Form.CLASSMETHOD, Form.PROPERTY):
                out.append(f"    @{op.form.value}")
            out.append("    " + stub(op.name, op.signature, shadowed))
            if op.inplace is not None:
                out.append(
                    "    " + stub(op.inplace.name, op.inplace.signature, shadowed)
                )
            out += ["    " + stub(a.name, a.signature, shadowed) for a in op.aliases()]
    return "\n".join(out)


# ---- tensorclass forwarders ---------------------------------------------------------------


def _unwraps(signature: Signature) -> list[str]:
    """Tensorclass arguments passed on as the tensordicts they wrap."""
    out = []
    for p in signature.params:
        if p.role is Role.OUT or p.kind == "var_keyword" or not p.may_hold_collection:
            continue
        if p.kind == "var_positional":
            out.append(f"{p.name} = tuple(_unwrap(v) for v in {p.name})")
        else:
            out.append(f"{p.name} = _unwrap({p.name})")
    return out


def forwarder(
    name: str, signature: Signature, summary: str, form: Form = Form.METHOD
) -> str:
    """A tensorclass method forwarding to the wrapped tensordict and re-wrapping."""
    if form is Form.PROPERTY:
        doc = emit.docstring(
            summary,
            f"Reads :attr:`TensorDict.{name}`; tensordict results are re-wrapped.",
        )
        return emit.function(
            name,
            signature.text,
            doc,
            f"return self._wrap(self._tensordict.{name})",
            ("property",),
        )
    args = signature.forward_args()
    if form is Form.CLASSMETHOD:
        doc = emit.docstring(
            summary,
            f"Forwards to :meth:`TensorDict.{name}`; tensordict results come back as ``cls``.",
        )
        body = _unwraps(signature) + [
            f'return cls._wrap_new(container_class("TensorDict").{name}({args}))'
        ]
        return emit.function(
            name, signature.text, doc, "\n".join(body), ("classmethod",)
        )
    doc = emit.docstring(
        summary,
        f"Forwards to :meth:`TensorDict.{name}`; tensordict results are re-wrapped.",
    )
    body = _unwraps(signature) + [f"return self._wrap(self._tensordict.{name}({args}))"]
    return emit.function(name, signature.text, doc, "\n".join(body))


def forwarders(op: Op) -> str | None:
    if op.form is Form.FUNCTION:
        return None
    out = [forwarder(op.name, op.signature, op.summary, op.form)]
    if op.inplace is not None:
        summary = f"In-place :meth:`{op.name}`, returning ``self``."
        out.append(forwarder(op.inplace.name, op.inplace.signature, summary))
    for a in op.aliases():
        out.append(
            forwarder(
                a.name,
                a.signature,
                f"``{OPERATORS[a.name]}``: same as :meth:`{a.target}`.",
            )
        )
    return "\n\n".join(out)


# ---- torch.X(td) and the package's functions ----------------------------------------------


def torch_function_table(spec: Spec) -> str:
    """``torch.f: (kind, target, params),`` for every ``torch_function`` of the spec."""
    rows, seen, path = [], {}, ""
    for op in spec.ops():
        for item in op.torch_functions:
            name, params = split_torch_function(item)
            if name in seen:
                raise ValueError(
                    f"{op.location}: {name} already dispatches to {seen[name]!r}"
                )
            seen[name] = op.name
            if op.form is Form.FUNCTION:
                value = f'("function", {op.name}, ())'
            elif op.form is Form.CLASSMETHOD:
                value = f'("classmethod", "{op.name}", ())'
            else:
                value = f'("method", "{op.name}", {tuple(params or ())!r})'
            if op.location.path != path:
                path = op.location.path
                rows.append(f"    # {path}")
            rows.append(f"    {name}: {value},")
        for name in op.inplace.torch_functions if op.inplace else ():
            if name in seen:
                raise ValueError(
                    f"{op.inplace.location}: {name} already dispatches to {seen[name]!r}"
                )
            seen[name] = op.inplace.name
            rows.append(f'    {name}: ("method", "{op.inplace.name}", ()),')
    return "\n".join(rows)


def torch_only_functions(spec: Spec) -> str:
    parts = []
    for family in spec.families:
        ops = [op for op in family.ops if op.form is Form.FUNCTION]
        if ops:
            parts.append(
                f"\n# ---- {family.title} ({family.path}): torch functions only ----"
            )
            parts += ["\n\n" + op.tensordict_code() for op in ops]
    return "\n".join(parts)


def package_functions(spec: Spec) -> tuple[str, str]:
    """(the ``__all__`` names, the functions): a classmethod op as a function of the
    package (``tensordict.stack``)."""
    names, parts = [], []
    for family in spec.families:
        ops = [op for op in family.ops if op.form is Form.CLASSMETHOD]
        if not ops:
            continue
        parts.append(f"\n{section(family)}")
        for op in ops:
            names.append(f'"{op.name}"')
            body = f"return TensorDictGeneratedOps.{op.name}({op.signature.forward_args()})"
            parts.append(
                "\n\n"
                + emit.function(
                    op.name, op.signature.function_text, emit.op_docstring(op), body
                )
            )
    return ", ".join(names), "\n".join(parts)


# ---- every file ---------------------------------------------------------------------------


def render_spec(spec: Spec) -> dict[str, str]:
    """Every generated file: path relative to the repository root -> content."""
    sources = ", ".join(spec.paths)
    method_names = set(spec.method_names())
    shadowed = frozenset(n for n in _SHADOWABLE if n in method_names)
    out: dict[str, str] = {}
    gen = "tensordict/_generated"
    out[f"{gen}/__init__.py"] = format_python(
        fill("generated_init.py.tmpl", sources=sources)
    )
    out[f"{gen}/tensordict_ops.py"] = format_python(
        fill(
            "tensordict_ops.py.tmpl",
            sources=sources,
            methods=class_body(
                spec,
                lambda op: (
                    op.tensordict_code() if op.form is not Form.FUNCTION else None
                ),
            ),
        )
    )
    for module, cls in (
        ("tensordict_ops", "TensorDictGeneratedOps"),
        ("tensorclass_ops", "TensorClassGeneratedOps"),
    ):
        out[f"{gen}/{module}.pyi"] = format_python(
            fill(
                "ops.pyi.tmpl",
                sources=sources,
                class_name=cls,
                stubs=stubs(spec, shadowed),
            ),
            stub=True,
        )
    out[f"{gen}/tensorclass_ops.py"] = format_python(
        fill(
            "tensorclass_ops.py.tmpl",
            sources=sources,
            methods=class_body(spec, forwarders),
        )
    )
    out[f"{gen}/torch_functions.py"] = format_python(
        fill(
            "torch_functions.py.tmpl",
            sources=sources,
            functions=torch_only_functions(spec),
            table=torch_function_table(spec),
        )
    )
    names, functions = package_functions(spec)
    out[f"{gen}/functions.py"] = format_python(
        fill("functions.py.tmpl", sources=sources, names=names, functions=functions)
    )
    out[f"{gen}/lazy_ops.pyi"] = format_python(fill("lazy_ops.pyi.tmpl", sources=sources), stub=True)
    out[f"{gen}/lazy_ops.py"] = format_python(
        fill(
            "lazy_ops.py.tmpl",
            sources=sources,
            methods=class_body(
                spec,
                lambda op: op.lazy_code() if op.form is not Form.FUNCTION else None,
            ),
        )
    )
    out.update(docs.render_docs(spec, sources))
    return dict(sorted(out.items()))


def render_all(root: Path | str) -> dict[str, str]:
    """Load ``root/spec`` and render it (raises :class:`~codegen.model.SpecError`)."""
    return render_spec(load_spec(Path(root) / "spec"))


def existing_outputs(root: Path | str) -> dict[str, Path]:
    """The generated files on disk now: relative path -> absolute path."""
    root = Path(root)
    found: dict[str, Path] = {}
    for folder, suffixes in OUTPUT_DIRS.items():
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if (
                path.is_file()
                and path.suffix in suffixes
                and "__pycache__" not in path.parts
            ):
                found[path.relative_to(root).as_posix()] = path
    return found
