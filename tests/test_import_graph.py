"""The import graph of ``tensordict/``, built with ``ast`` from the source: imports point
one way, ``base`` <- ``_ops`` <- generated mixins <- concrete classes (``_td``, ``_lazy``,
``tensorclass``) <- the rest (docs/architecture.md, "Layers").

- the module-level imports of the package's own modules form no cycle;
- a function-level import of the package's own modules (one that dodges a cycle) is
  an exception: at most ``MAX_FUNCTION_IMPORTS`` of them, each with a comment saying why;
- ``tensordict/_ops`` knows only ``base`` and the helpers below it (it reaches the
  concrete classes through ``tensordict._registry``), the generated mixins import no
  concrete class, and ``_ops`` exports exactly what the generated code calls.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tensordict"
MAX_FUNCTION_IMPORTS = 3
# What tensordict/_ops may import: the contract and the helpers below it.
OPS_MAY_IMPORT = {
    "tensordict.base",
    "tensordict._keys",
    "tensordict._errors",
    "tensordict._registry",
    "tensordict._repr",
    "tensordict._lock_graph",
    "tensordict.utils",
}
CONCRETE = {"tensordict._td", "tensordict._lazy", "tensordict.tensorclass", "tensordict._lazy_view"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The package's own modules an import statement imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative
            parts = module.split(".")
            parts = parts if is_package else parts[:-1]
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        names = []
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            names.append(sub if sub in MODULES else base)
    return [n for n in names if n == "tensordict" or n.startswith("tensordict.")]


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports(module: str) -> tuple[set[str], list[tuple[int, str]]]:
    """(the modules imported at module level, [(line, target)] imported in functions)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    at_top: set[str] = set()
    in_functions: list[tuple[int, str]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue  # never runs
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _targets(child, module, path.name == "__init__.py"):
                    if in_function:
                        in_functions.append((child.lineno, target))
                    else:
                        at_top.add(target)
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            walk(child, inside)

    walk(tree, False)
    at_top.discard(module)
    return at_top, in_functions


GRAPH = {module: imports(module)[0] for module in MODULES}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_module_level_imports_form_no_cycle() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_function_level_imports_of_the_package_are_few_and_explained() -> None:
    found = []
    for module, path in MODULES.items():
        lines = path.read_text().splitlines()
        for line, target in imports(module)[1]:
            here, above = lines[line - 1], lines[line - 2] if line > 1 else ""
            commented = "#" in here or above.strip().startswith("#")
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {target}")
            assert commented, f"{found[-1]}: say in a comment why it is imported here"
    assert len(found) <= MAX_FUNCTION_IMPORTS, "\n".join(found)


def test_ops_knows_only_base() -> None:
    for module, targets in GRAPH.items():
        if module.startswith("tensordict._ops"):
            other = {t for t in targets if not t.startswith("tensordict._ops")}
            assert other <= OPS_MAY_IMPORT, (module, sorted(other - OPS_MAY_IMPORT))


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("tensordict._generated")])
def test_generated_mixins_import_no_concrete_class(module: str) -> None:
    assert not GRAPH[module] & CONCRETE, (module, sorted(GRAPH[module] & CONCRETE))


def test_ops_exports_exactly_what_generated_code_calls() -> None:
    import tensordict._ops as ops

    used = set()
    for module, path in MODULES.items():
        if module.startswith("tensordict._generated"):
            used |= set(re.findall(r"\b_ops\.([A-Za-z_][A-Za-z0-9_]*)", path.read_text()))
    assert set(ops.__all__) == used, (
        sorted(set(ops.__all__) - used),
        sorted(used - set(ops.__all__)),
    )
    for name in ops.__all__:
        assert hasattr(ops, name), name
