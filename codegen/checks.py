"""Checks of the Python snippets a spec entry holds (``leaf``, ``foreach``, rule
arguments, ``torch_function`` patterns), made when the spec is loaded so that a typo
fails ``python -m codegen`` instead of a user's call: every name a snippet reads must be
one it may use, every ``torch.X`` must exist in the installed torch, every method it
calls on the leaf ``x`` must be a ``torch.Tensor`` method (``x.erfinv_()``), and every
``_ops.X`` must be a helper ``tensordict/_ops`` exports to generated code.
"""

from __future__ import annotations

import ast
import builtins
import doctest
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

Err = Callable[[int, str], None]

OPS_PACKAGE = Path(__file__).resolve().parent.parent / "tensordict" / "_ops"


def dotted(node: ast.AST) -> str | None:
    """``torch._foreach_add`` for an attribute chain on a name; None otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def resolve_torch(name: str) -> Any:
    """The object ``torch.a.b`` names in the installed torch, or None."""
    import torch

    obj: Any = torch
    for part in name.split(".")[1:]:
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


@lru_cache(maxsize=None)
def ops_exports() -> frozenset[str]:
    """The names ``tensordict/_ops/__init__.py`` exports to generated code, read from
    its source (importing the package could fail while generated code is rewritten)."""
    tree = ast.parse((OPS_PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def parse_expr(text: str, key: str, line: int, err: Err) -> ast.Expression | None:
    try:
        return ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        err(line, f"{key!r} is not a Python expression: {exc.msg}: {text.strip()!r}")
        return None


def check_expr(
    text: str,
    key: str,
    line: int,
    names: Iterable[str] | None,
    err: Err,
    *,
    local: str | None = "x",
    foreach: bool = False,
    builtin_names: bool = False,
) -> None:
    """A snippet of the spec: ``names`` are the names it may read besides ``local``
    (None: not checked, the signature being broken), ``local`` a name it must use
    (``x``: the leaf; ``leaves``: every leaf, in a ``foreach`` call)."""
    tree = parse_expr(text, key, line, err)
    if tree is None:
        return
    if names is not None:
        allowed = set(names) | {"torch"} | ({local} if local else set())
        bound = {
            n.id
            for node in ast.walk(tree)
            if isinstance(node, ast.comprehension)
            for n in ast.walk(node.target)
            if isinstance(n, ast.Name)
        }
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound
        if builtin_names:
            used = {n for n in used if not hasattr(builtins, n)}
        for unknown in sorted(used - allowed):
            err(line, f"{key!r} uses the unknown name {unknown!r} (it may use {', '.join(sorted(allowed))})")
    if local and local not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}:
        err(line, f"{key!r} must use {local!r}")
    if foreach:
        call = tree.body
        name = dotted(call.func) if isinstance(call, ast.Call) else None
        if name is None or not name.startswith("torch._foreach_"):
            err(line, "'foreach' must be one call of a torch._foreach_* function")
    check_names_resolve(tree, key, line, err, leaf=local == "x")


def check_names_resolve(tree: ast.AST, key: str, line: int, err: Err, *, leaf: bool) -> None:
    """Every ``torch.X``, ``x.method`` (``leaf``: ``x`` is a tensor) and ``_ops.X`` the
    snippet uses exists."""
    import torch

    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = dotted(node)
        if name is None:
            continue
        if name.startswith("torch.") and resolve_torch(name) is None:
            err(line, f"{key!r}: torch has no attribute {name[6:]!r}")
            return
        if leaf and name.count(".") == 1 and name.startswith("x."):
            if not hasattr(torch.Tensor, node.attr):
                err(line, f"{key!r}: torch.Tensor has no attribute {node.attr!r} (x is a tensor)")
                return
        if name.startswith("_ops.") and name.count(".") == 1:
            if node.attr not in ops_exports():
                err(line, f"{key!r}: tensordict/_ops has no {node.attr!r}")


def passes_keyword(expr: str, param: str) -> bool:
    """Whether a call in ``expr`` passes ``param=...``."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        return True  # reported elsewhere
    return any(
        isinstance(node, ast.Call) and any(kw.arg == param for kw in node.keywords)
        for node in ast.walk(tree)
    )


def check_example(example: str, line: int, err: Err) -> None:
    try:
        examples = doctest.DocTestParser().get_examples(example)
    except ValueError as exc:
        err(line, f"'example' is not valid doctest text: {exc}")
        return
    if not examples:
        err(line, "'example' must hold at least one '>>> ' line")


def split_torch_function(text: str) -> tuple[str, tuple[str, ...] | None]:
    """A ``torch_function`` item: ``torch.abs`` (the tensordict comes first: ``(name,
    None)``) or a call pattern naming the positional arguments, ``self`` being the
    tensordict: ``torch.where(condition, self, other)`` -> ``("torch.where",
    ("condition", "self", "other"))``. A malformed pattern gives ``()``."""
    text = text.strip()
    if "(" not in text:
        return text, None
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text, ()
    if (
        not isinstance(call, ast.Call)
        or call.keywords
        or not all(isinstance(a, ast.Name) for a in call.args)
    ):
        return text, ()
    return dotted(call.func) or text, tuple(a.id for a in call.args)


def torch_functions(value: Any, line: int, err: Err) -> tuple[str, ...]:
    """``torch_function: [torch.abs, ...]``: dotted names of torch callables (or call
    patterns) that dispatch to the entry; each must exist in the installed torch."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        err(line, "'torch_function' must be a list of names like torch.abs")
        return ()
    for item in value:
        name, params = split_torch_function(item)
        if params is not None and params.count("self") != 1:
            err(line, f"'torch_function': {item!r} must name 'self' (the tensordict) once")
        target = resolve_torch(name) if name.startswith("torch.") else None
        if target is None or not callable(target):
            err(line, f"'torch_function': {name!r} is not a torch function")
    return tuple(value)
