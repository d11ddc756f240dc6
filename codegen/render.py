"""Render a loaded :class:`~codegen.model.Spec` through the Jinja templates.

:func:`render_all` returns every generated file (path relative to the repository root ->
text), black-formatted where it is Python. It reads nothing but the spec and the
templates, and its output depends on nothing else: no timestamps, no absolute paths, no
set or dict ordering that is not the spec's own.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import black
import jinja2

from codegen.lazy import lazy_note, lazy_note_for, lazy_strategy
from codegen.loader import _signature_text, load_spec, split_torch_function
from codegen.model import Op, Spec
from codegen.schema import (
    BATCH_RULES,
    BATCH_SIZE_RULES,
    DEVICE_RULES,
    OPERATORS,
    STORAGE,
)

TEMPLATES = Path(__file__).parent / "templates"

# The folders codegen owns: every file with one of these suffixes in them is generated.
OUTPUT_DIRS: dict[str, tuple[str, ...]] = {
    "tensordict/_generated": (".py", ".pyi"),
    "docs/reference": (".md",),
}

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310},
    line_length=88,
    string_normalization=True,
    is_pyi=False,
)
BLACK_STUB_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310},
    line_length=88,
    string_normalization=True,
    is_pyi=True,
)

# Builtin names that a generated method shadows inside the class body of a stub.
_SHADOWABLE = ("bool", "complex", "float", "int", "str", "type")


# --------------------------------------------------------------------------------------
# Expression helpers the templates call (as ``h.<name>``).
# --------------------------------------------------------------------------------------


class _DropKeyword(ast.NodeTransformer):
    def __init__(self, name: str):
        self.name = name

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        node.keywords = [kw for kw in node.keywords if kw.arg != self.name]
        return node


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(
            ast.Name(id=self.mapping.get(node.id, node.id), ctx=node.ctx), node
        )


def _expr(text: str, drop: str | None = None) -> ast.expr:
    tree = ast.parse(text, mode="eval").body
    if drop:
        tree = _DropKeyword(drop).visit(tree)
    return tree


def leaf_expr(text: str, drop: str | None = None) -> str:
    """The per-leaf expression, with keyword ``drop`` left out of its calls."""
    return ast.unparse(_expr(text, drop))


def comprehension(text: str, operands: tuple[str, ...], drop: str | None = None) -> str:
    """``[torch.add(x, other) for x, other in zip(leaves, other_leaves)]``."""
    expr = leaf_expr(text, drop)
    if not operands:
        return f"[{expr} for x in leaves]"
    targets = ", ".join(("x",) + operands)
    lists = ", ".join(("leaves",) + tuple(f"{o}_leaves" for o in operands))
    return f"[{expr} for {targets} in zip({lists})]"


def loop(text: str, operands: tuple[str, ...], drop: str | None = None) -> str:
    """``for x, other in zip(leaves, other_leaves):`` + the per-leaf statement."""
    expr = leaf_expr(text, drop)
    if not operands:
        return f"for x in leaves:\n    {expr}"
    targets = ", ".join(("x",) + operands)
    lists = ", ".join(("leaves",) + tuple(f"{o}_leaves" for o in operands))
    return f"for {targets} in zip({lists}):\n    {expr}"


def foreach_call(
    text: str, operands: tuple[str, ...], drop: str | None = None, *, inplace: bool
) -> str:
    """``torch._foreach_add(leaves, other)`` -> ``_ops.try_foreach(torch._foreach_add,
    leaves, other_leaves)``: operands become their aligned lists."""
    call = _expr(text, drop)
    assert isinstance(call, ast.Call)
    call = _Rename({o: f"{o}_leaves" for o in operands}).visit(call)
    helper = "try_foreach_" if inplace else "try_foreach"
    wrapped = ast.Call(
        func=ast.Attribute(value=ast.Name("_ops", ast.Load()), attr=helper),
        args=[call.func, *call.args],
        keywords=call.keywords,
    )
    return ast.unparse(wrapped)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(
        prefix + line if line.strip() else "" for line in text.splitlines()
    )


def docstring(summary: str, *sections: str, example: str | None = None) -> str:
    """A docstring literal for a method body (4 spaces deep)."""
    parts = [summary.strip()]
    parts += [s.strip() for s in sections if s and s.strip()]
    if example:
        parts.append("Example:\n" + _indent(example.rstrip(), "    "))
    body = "\n\n".join(parts)
    prefix = 'r"""' if "\\" in body else '"""'
    text = prefix + body + ("\n" if "\n" in body else "") + '"""'
    return _indent(text, "    ").lstrip()


def call_args(alias_params) -> str:
    """Positional arguments an alias passes to the method it stands for."""
    return ", ".join(p.name for p in alias_params)


def op_docstring(op: Op) -> str:
    notes = []
    if op.inplace is not None:
        notes.append(f"In place: :meth:`{op.inplace.name}`.")
    aliases = op.dunders + (op.inplace.dunders if op.inplace else ())
    if aliases:
        spelled = ", ".join(f"``{OPERATORS[a.name]}``" for a in aliases)
        notes.append(f"Operators: {spelled}.")
    return docstring(op.summary, op.details, " ".join(notes), example=op.example)


def inplace_docstring(op: Op) -> str:
    return docstring(
        f"In-place :meth:`{op.name}`, returning ``self``.",
        f"{op.summary} Writes into the stored tensors.",
    )


def operator(name: str) -> str:
    return OPERATORS[name]


_ROLE = re.compile(r":(?:meth|func|class|attr):`~?([^`]+)`")


def markdown(text: str) -> str:
    """Docs text (RST-ish roles) as Markdown."""
    return _ROLE.sub(lambda m: f"`{m.group(1)}`", text)


def stub_signature(signature, shadowed: frozenset[str]) -> str:
    """A signature for the stub, with builtins the class shadows spelled ``builtins.X``
    (inside the class body ``float`` names the method ``float``)."""

    def qualify(annotation: str | None) -> str | None:
        if annotation is None:
            return None
        tree = ast.parse(annotation, mode="eval")
        for node in ast.walk(tree):
            for field, value in ast.iter_fields(node):
                if isinstance(value, ast.Name) and value.id in shadowed:
                    setattr(node, field, ast.Attribute(ast.Name("builtins"), value.id))
        if isinstance(tree.body, ast.Name) and tree.body.id in shadowed:
            return f"builtins.{tree.body.id}"
        return ast.unparse(tree)

    params = [
        dataclasses.replace(p, annotation=qualify(p.annotation))
        for p in signature.params
    ]
    return _signature_text(params, qualify(signature.returns), signature.receiver)


def stub(name: str, signature, shadowed: frozenset[str]) -> str:
    """One stub line; ``__eq__``/``__ne__`` return more than ``object``'s do."""
    line = f"def {name}{stub_signature(signature, shadowed)}: ..."
    if name in ("__eq__", "__ne__"):
        line += "  # type: ignore[override]"
    return line


def cell(text: str) -> str:
    """Text for a Markdown table cell (``|`` escaped)."""
    return markdown(text).replace("|", "\\|")


def anchor(name: str) -> str:
    """The anchor GitHub-style Markdown gives a ``## name`` heading."""
    return re.sub(r"[^a-z0-9_-]", "", name.lower().replace(" ", "-"))


def operators_md(op: Op) -> str:
    aliases = op.dunders + (op.inplace.dunders if op.inplace else ())
    if op.is_dunder:
        aliases = (op,) + aliases
    return ", ".join(f"`{OPERATORS[a.name]}`" for a in aliases)


def method_index(spec: Spec) -> list[dict[str, str]]:
    """Every generated method, sorted by name, with the op it belongs to."""
    items = []
    for op in spec.ops():
        if not op.method:  # a torch function only (listed on its family's page)
            continue
        items.append({"name": op.name, "family": op.family, "summary": op.summary})
        related = list(op.dunders)
        if op.inplace is not None:
            items.append(
                {
                    "name": op.inplace.name,
                    "family": op.family,
                    "summary": f"In-place `{op.name}`.",
                }
            )
            related += op.inplace.dunders
        for a in related:
            items.append(
                {
                    "name": a.name,
                    "family": op.family,
                    "summary": f"`{OPERATORS[a.name]}`: same as `{a.target}`.",
                }
            )
    for item in items:
        item["anchor"] = anchor(
            next(o.name for o in spec.ops() if item["name"] in o.method_names())
        )
    return sorted(items, key=lambda item: item["name"])


def uses_name(text: str | None, name: str) -> bool:
    """Whether the expression ``text`` reads the name ``name`` (attributes family)."""
    if not text:
        return False
    tree = ast.parse(text.strip(), mode="eval")
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree))


class Helpers:
    """What the templates may call, as ``h.<name>``."""

    uses_name = staticmethod(uses_name)
    leaf_expr = staticmethod(leaf_expr)
    comprehension = staticmethod(comprehension)
    loop = staticmethod(loop)
    foreach_call = staticmethod(foreach_call)
    docstring = staticmethod(docstring)
    call_args = staticmethod(call_args)
    op_docstring = staticmethod(op_docstring)
    inplace_docstring = staticmethod(inplace_docstring)
    operator = staticmethod(operator)
    markdown = staticmethod(markdown)
    stub_signature = staticmethod(stub_signature)
    stub = staticmethod(stub)
    anchor = staticmethod(anchor)
    cell = staticmethod(cell)
    operators_md = staticmethod(operators_md)
    method_index = staticmethod(method_index)
    batch_size_rules = BATCH_SIZE_RULES
    # lazy stacks (codegen/lazy.py): how each entry runs on a LazyStackedTensorDict
    lazy_strategy = staticmethod(lazy_strategy)
    lazy_note = staticmethod(lazy_note)
    lazy_note_for = staticmethod(lazy_note_for)

    @staticmethod
    def operand_call(op_name: str, operand: str, signature) -> str:
        """``_ops.operand_leaves(self, leaves, other, "add", default)``."""
        args = f'self, leaves, {operand}, "{op_name}"'
        if signature.has("default"):
            args += ", default"
        return f"_ops.operand_leaves({args})"

    # ---- batch_shape and reduction families -------------------------------------------
    batch_rules = BATCH_RULES
    storage = STORAGE

    @staticmethod
    def substitute(text: str, mapping: dict[str, str]) -> str:
        """The expression ``text`` with the names in ``mapping`` replaced by the given
        expressions: ``torch.sum(x, dim, keepdim=keepdim)`` with ``{"dim": "-1",
        "keepdim": "False"}`` is ``torch.sum(x, -1, keepdim=False)``."""
        parsed = {k: ast.parse(v, mode="eval").body for k, v in mapping.items()}

        class _Sub(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                return parsed.get(node.id, node)

        return ast.unparse(_Sub().visit(ast.parse(text, mode="eval")).body)

    @staticmethod
    def rule_call(op: Op) -> str:
        """``dim0, dim1, new_batch_size = _ops.transpose_rule(self._batch_size, axis0,
        axis1, "swapdims")``: the entry's batch rule, run once per call."""
        rule = BATCH_RULES[op.batch_size]
        args = ", ".join(("self._batch_size",) + op.batch_args + (f'"{op.name}"',))
        return f"{', '.join(rule.defines)} = _ops.{op.batch_size}_rule({args})"

    @staticmethod
    def reduce_call(op: Op) -> str:
        """``_ops.reduce_rule(self._batch_size, dim, keepdim, "sum", ...)``."""
        keepdim = "keepdim" if op.signature.has("keepdim") else "False"
        args = ["self._batch_size", "dim", keepdim, f'"{op.name}"']
        if op.dims == "one":
            args.append("one=True")
        if op.no_dim == "batch":
            args.append('no_dim="batch"')
        if op.batch_prefix:
            args.append("prefix=prefix")
        return f"_ops.reduce_rule({', '.join(args)})"

    # ---- indexing, device and stacking families ---------------------------------------
    device_rules = DEVICE_RULES

    @staticmethod
    def leafwise_rule_call(op: Op, name: str) -> str:
        """``dim, batch_sizes = _ops.unbind_rule(self._batch_size, dim, "unbind")``:
        the entry's batch rule, named after the method calling it."""
        rule = BATCH_RULES[op.batch_size]
        args = ", ".join(("self._batch_size",) + op.batch_args + (f'"{name}"',))
        return f"{', '.join(rule.defines)} = _ops.{op.batch_size}_rule({args})"

    @staticmethod
    def device_rule_call(op: Op, name: str) -> str:
        """``device, new_device = _ops.new_device_rule(self._device, device, "...")``."""
        rule = DEVICE_RULES[op.device_rule]
        args = ", ".join(("self._device",) + op.device_args + (f'"{name}"',))
        return f"{', '.join(rule.defines)} = _ops.{op.device_rule}_device_rule({args})"

    @staticmethod
    def stack_rule_call(op: Op) -> str:
        """``input, dim, new_batch_size = _ops.stack_rule(input, dim, "stack")``: a
        stacking rule gets the inputs (there is no ``self``)."""
        rule = BATCH_RULES[op.batch_size]
        args = ", ".join(op.batch_args + (f'"{op.name}"',))
        return f"{', '.join(rule.defines)} = _ops.{op.batch_size}_rule({args})"

    @staticmethod
    def function_signature(signature) -> str:
        """A classmethod's signature without ``cls``, for a package-level function."""
        text = _signature_text(list(signature.params), signature.returns, "cls")
        return "(" + text[len("(cls, ") :] if signature.params else "()" + text[5:]

    @staticmethod
    def forward_args(signature) -> str:
        """The parameters passed on as they came: ``input, dim, out=out``."""
        parts = []
        for p in signature.params:
            if p.kind == "var_positional":
                parts.append(f"*{p.name}")
            elif p.kind == "var_keyword":
                parts.append(f"**{p.name}")
            elif p.kind == "keyword_only":
                parts.append(f"{p.name}={p.name}")
            else:
                parts.append(p.name)
        return ", ".join(parts)

    @staticmethod
    def torch_function_table(spec: Spec) -> list[tuple[str, str, str]]:
        """``(torch function, (kind, target, params), entry)`` for every
        ``torch_function`` item of the spec, in spec order."""
        rows, seen = [], {}
        for op in spec.ops():
            for item in op.torch_functions:
                dotted, params = split_torch_function(item)
                if dotted in seen:
                    raise ValueError(
                        f"{op.location}: {dotted} already dispatches to "
                        f"{seen[dotted]!r}"
                    )
                seen[dotted] = op.name
                if not op.method:
                    value = f'("function", {op.name}, ())'
                elif op.signature.receiver == "cls":
                    value = f'("classmethod", "{op.name}", ())'
                else:
                    names = repr(tuple(params or ()))
                    value = f'("method", "{op.name}", {names})'
                rows.append((dotted, value, op.location.path))
        return rows

    @staticmethod
    def compact(text: str) -> str:
        """``text`` without its blank lines (macros that render nothing leave some)."""
        return "\n".join(line for line in text.splitlines() if line.strip()) + "\n"

    @staticmethod
    def display_signature(op: Op) -> str:
        """How users spell the op, for the docs."""
        if not op.method:
            return f"{op.torch_functions[0] if op.torch_functions else op.name}" + (
                op.signature.text
            )
        if op.signature.receiver == "cls":
            text = Helpers.function_signature(op.signature)
            return f"TensorDict.{op.name}{text}\ntensordict.{op.name}{text}"
        return f"TensorDict.{op.name}{op.signature.text}"


# --------------------------------------------------------------------------------------
# Rendering.
# --------------------------------------------------------------------------------------


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.globals["h"] = Helpers
    return env


def format_python(text: str, *, stub: bool = False) -> str:
    return black.format_str(text, mode=BLACK_STUB_MODE if stub else BLACK_MODE)


def _spec_list(paths) -> str:
    return ", ".join(paths)


def render_spec(spec: Spec) -> dict[str, str]:
    """Every generated file: path relative to the repository root -> content."""
    env = _environment()
    sources = _spec_list(spec.paths)
    method_names = set(spec.method_names())
    shadowed = frozenset(n for n in _SHADOWABLE if n in method_names)
    context = {
        "spec": spec,
        "sources": sources,
        "shadowed": shadowed,
    }
    out: dict[str, str] = {}

    def render(template: str, **extra) -> str:
        return env.get_template(template).render(**context, **extra)

    out["tensordict/_generated/__init__.py"] = format_python(
        render("generated_init.py.jinja")
    )
    out["tensordict/_generated/tensordict_ops.py"] = format_python(
        render("tensordict_ops.py.jinja")
    )
    out["tensordict/_generated/tensordict_ops.pyi"] = format_python(
        render("ops.pyi.jinja", class_name="TensorDictGeneratedOps"), stub=True
    )
    # tensorclasses: every op of every family, forwarded to the wrapped tensordict
    out["tensordict/_generated/tensorclass_ops.py"] = format_python(
        render("tensorclass_ops.py.jinja")
    )
    out["tensordict/_generated/tensorclass_ops.pyi"] = format_python(
        render("ops.pyi.jinja", class_name="TensorClassGeneratedOps"), stub=True
    )
    # torch.X(td) dispatch (spec entries' torch_function) and the package's functions
    out["tensordict/_generated/torch_functions.py"] = format_python(
        render("torch_functions.py.jinja")
    )
    out["tensordict/_generated/functions.py"] = format_python(
        render("functions.py.jinja")
    )
    # LazyStackedTensorDict: the lazy form of every op (codegen/lazy.py)
    out["tensordict/_generated/lazy_ops.py"] = format_python(
        render("lazy_ops.py.jinja")
    )
    out["docs/reference/lazy.md"] = render("reference_lazy.md.jinja")
    out["docs/reference/index.md"] = render("reference_index.md.jinja")
    for family in spec.families:
        out[f"docs/reference/{family.name}.md"] = render(
            "reference_family.md.jinja", family=family
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
