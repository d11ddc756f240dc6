"""Render a loaded :class:`~codegen.model.Spec` into every generated file.

Each output has a Jinja template under ``codegen/templates/`` (``<file>.jinja``), and
each family one (``families/<family>.jinja``) whose macros render its forms
(``codegen/templating.py``). This module hands the templates their context (the spec,
the helpers that compute names, signatures and table rows) and formats Python with
black. :func:`render_all` depends on nothing but the spec and the templates: no
timestamps, no absolute paths, no ordering that is not the spec's own.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import black

from codegen import docs, emit, lazy, templating
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


# ---- what the templates call ------------------------------------------------------------


def format_python(text: str, *, stub: bool = False) -> str:
    return black.format_str(text, mode=BLACK_STUB_MODE if stub else BLACK_MODE)


def unwrapped(signature: Signature) -> list:
    """The parameters a tensorclass forwarder passes on as the tensordicts they wrap."""
    return [
        p
        for p in signature.params
        if p.role is not Role.OUT and p.kind != "var_keyword" and p.may_hold_collection
    ]


def tensordict_methods(op: Op) -> str:
    """The op's ``TensorDict`` method, its in-place variant and its operator dunders
    (a ``method: false`` op: its function), from its family's template."""
    parts = [templating.form(op, "tensordict")]
    if op.form is not Form.FUNCTION:
        if op.inplace is not None:
            parts.append(templating.form(op, "inplace"))
        parts += [templating.form(op, "alias", a) for a in op.aliases()]
    return "\n\n".join(parts)


def torch_function_rows(spec: Spec) -> list[SimpleNamespace]:
    """The ``torch.f -> (kind, target, params)`` rows of every ``torch_function``; a
    row's ``path`` is set where a new spec file starts."""
    rows, seen, path = [], {}, ""
    for op in spec.ops():
        for item in op.torch_functions:
            name, params = split_torch_function(item)
            if name in seen:
                raise ValueError(
                    f"{op.location}: {name} already dispatches to {seen[name]!r}"
                )
            seen[name] = op.name
            kind = "method" if op.form in (Form.METHOD, Form.PROPERTY) else op.form.value
            new_path = op.location.path if op.location.path != path else None
            path = op.location.path
            rows.append(SimpleNamespace(
                path=new_path, name=name, kind=kind, target=op.name,
                params=repr(tuple(params or ())) if kind == "method" else "()",
            ))
        for name in op.inplace.torch_functions if op.inplace else ():
            if name in seen:
                raise ValueError(
                    f"{op.inplace.location}: {name} already dispatches to {seen[name]!r}"
                )
            seen[name] = op.inplace.name
            rows.append(SimpleNamespace(path=None, name=name, kind="method",
                                        target=op.inplace.name, params="()"))
    return rows


templating.add_globals(
    form=templating.form,
    tensordict_methods=tensordict_methods,
    torch_function_rows=torch_function_rows,
    unwrapped=unwrapped,
    stub_signature=stub_signature,
    operators=OPERATORS,
    docstring=emit.docstring,
    op_docstring=emit.op_docstring,
    inplace_docstring=emit.inplace_docstring,
    leaf_expr=emit.leaf_expr,
    negated=emit.negated,
    substitute=emit.substitute,
    foreach_call=emit.foreach_call,
    lazy_docstring=lazy.docstring,
    note_line=lazy.note_line,
    ways=lazy.WAYS,
    display_signature=docs.display_signature,
    operators_md=docs.operators_md,
    method_index=docs.method_index,
)
templating.add_filters(markdown=docs.markdown, cell=docs.cell, anchor=docs.anchor)


# ---- every file ---------------------------------------------------------------------------


def render_spec(spec: Spec) -> dict[str, str]:
    """Every generated file: path relative to the repository root -> content."""
    sources = ", ".join(spec.paths)
    method_names = set(spec.method_names())
    shadowed = frozenset(n for n in _SHADOWABLE if n in method_names)
    context = dict(spec=spec, sources=sources, shadowed=shadowed)
    out: dict[str, str] = {}
    gen = "tensordict/_generated"
    for module in ("__init__", "tensordict_ops", "tensorclass_ops", "torch_functions",
                   "functions", "lazy_ops"):
        template = "generated_init" if module == "__init__" else module
        out[f"{gen}/{module}.py"] = format_python(templating.render(f"{template}.py.jinja", **context))
    for module, cls in (
        ("tensordict_ops", "TensorDictGeneratedOps"),
        ("tensorclass_ops", "TensorClassGeneratedOps"),
    ):
        out[f"{gen}/{module}.pyi"] = format_python(
            templating.render("ops.pyi.jinja", class_name=cls, **context), stub=True
        )
    out[f"{gen}/lazy_ops.pyi"] = format_python(
        templating.render("lazy_ops.pyi.jinja", **context), stub=True
    )
    out["docs/reference/index.md"] = templating.render("reference_index.md.jinja", **context)
    out["docs/reference/lazy.md"] = templating.render("reference_lazy.md.jinja", **context)
    for family in spec.families:
        out[f"docs/reference/{family.name}.md"] = templating.render(
            "reference_family.md.jinja", family=family, **context
        )
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
