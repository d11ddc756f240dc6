"""The parts of an entry every family parses alike: the shared :class:`~codegen.model.Op`
fields (signature, docs, torch functions, operator aliases, test cases) and the in-place
variant. A family's ``parse`` calls :func:`common` and adds its own keys.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any, Iterable

import yaml

from codegen.checks import check_example, check_expr, passes_keyword, torch_functions
from codegen.entry import Entry, Field, line_of, plain
from codegen.signature import parse_signature
from codegen.model import (
    Alias,
    Call,
    ErrorCase,
    Form,
    InPlace,
    Location,
    Role,
    Signature,
    Tests,
)

# The keys every entry may have; a family adds its own (``KEYS`` of its op type).
COMMON_KEYS = frozenset(
    {"name", "signature", "summary", "details", "example", "dunders", "torch_function", "tests",
     "keeps_lock"}
)
REQUIRED_KEYS = ("name", "signature", "summary", "details", "example")
INPLACE_KEYS = frozenset(
    {"name", "signature", "leaf", "foreach", "drop_if_none", "dunders", "torch_function"}
)
INPLACE_REQUIRED = ("name", "signature", "leaf")
TESTS_KEYS = frozenset({"batch_size", "calls", "errors", "oracle", "floating", "values"})
# ``tests: values``: whether the results' values can be compared (spec/README.md).
TEST_VALUES = ("defined", "random", "uninitialized")
# Names a test call may use (tests/spec_cases.py gives them their values).
CASE_NAMES = frozenset({"torch", "TensorDict", "other", "batch_size", "nested_key"})
# Names a ``tests: oracle`` may use besides the op's parameters (tests/spec_cases.py).
ORACLE_NAMES = frozenset(
    {"x", "td", "leaf_key", "leaves", "torch", "expand_right", "is_under", "NO_DEFAULT",
     "TensorDictBase"}
)

# Parameters whose meaning is the same in every family.
UNIVERSAL_ROLES = {"out": Role.OUT, "inplace": Role.INPLACE}

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


def common(
    entry: Entry,
    *,
    receiver: str = "self",
    dunder_signature: str = "(self) -> Self",
    form: Form = Form.METHOD,
) -> dict[str, Any] | None:
    """The shared fields of :class:`~codegen.model.Op` (None when one is missing or
    wrong; the problems are reported). ``dunder_signature``: the signature of an
    operator alias that gives none."""
    for key in REQUIRED_KEYS:
        if not entry.has(key):
            entry.err(entry.line, f"missing required field {key!r}")
    if entry.failed:
        return None
    signature = entry.signature(receiver=receiver)
    summary = entry.text("summary")
    if summary is not None and "\n" in summary.strip():
        entry.err(entry.line_of("summary"), "'summary' must be one line")
    details = entry.text("details")
    example = entry.text("example")
    if example is not None:
        check_example(example, entry.line_of("example"), entry.err)
    for key in ("summary", "details", "example"):
        value = entry.value(key)
        if isinstance(value, str) and '"""' in value:
            entry.err(entry.line_of(key), f"{key!r} must not contain triple double quotes")
    found = entry.fields.get("torch_function")
    functions = torch_functions(found.value, found.line, entry.err) if found else ()
    dunders = aliases(entry, entry.fields.get("dunders"), entry.name, dunder_signature, signature)
    tests = parse_tests(entry, signature)
    if signature is None or summary is None or details is None or example is None:
        return None
    # every family: ``out`` receives the results, ``inplace=True`` makes self the result
    signature = signature.with_roles(
        {n: r for n, r in UNIVERSAL_ROLES.items() if signature.has(n)}
    )
    return dict(
        name=entry.name,
        signature=signature,
        form=form,
        summary=summary.strip(),
        details=details.strip(),
        example=example.rstrip() + "\n",
        location=entry.location,
        dunders=dunders,
        torch_functions=functions,
        tests=tests,
        keeps_lock=entry.flag("keeps_lock"),
    )


def aliases(
    entry: Entry,
    field: Field | None,
    target: str,
    default_signature: str,
    signature: Signature | None,
) -> tuple[Alias, ...]:
    """``dunders: [__add__, {name: __radd__, signature: ...}]``: operator aliases."""
    if field is None or field.value is None:
        return ()
    if not isinstance(field.value, list):
        entry.err(field.line, "'dunders' must be a list")
        return ()
    out = []
    nodes = field.node.value if isinstance(field.node, yaml.SequenceNode) else []
    for item, node in zip(field.value, nodes):
        line = line_of(node)
        if isinstance(item, str):
            name, sig_value = item, None
        elif isinstance(item, dict) and "name" in item and set(item) <= {"name", "signature"}:
            name, sig_value = item["name"], item.get("signature")
        else:
            entry.err(line, "a dunder is a name or a mapping with 'name' and 'signature'")
            continue
        if name not in OPERATORS:
            entry.err(line, f"{name!r} is not an operator dunder codegen knows")
            continue
        if sig_value is None:  # the family's operator signature (not the spec's text)
            sig = parse_signature(default_signature, line, entry.err)
        else:
            sig = entry.signature_value(sig_value, line)
        if sig is None:
            continue
        if signature is not None and len(sig.params) > len(signature.positional):
            entry.err(line, f"{name}{sig.text} passes more arguments than {target!r} takes")
            continue
        out.append(Alias(name, sig, target, bool(sig.params), Location(entry.path, line)))
    return tuple(out)


def drop_if_none(entry: Entry, field: Field | None, signature: Signature | None) -> tuple[str, ...]:
    """``drop_if_none: [alpha]``: one keyword parameter left out of the calls when it
    is None, so that torch applies its own default."""
    if field is None or field.value is None:
        return ()
    value = field.value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        entry.err(field.line, "'drop_if_none' must be a list of parameter names")
        return ()
    if len(value) > 1:
        entry.err(field.line, "'drop_if_none' takes at most one parameter")
        return ()
    for param in value:
        if signature is not None and not signature.has(param):
            entry.err(field.line, f"drop_if_none: {param!r} is not a parameter of the signature")
    return tuple(value)


def check_drops(entry: Entry, drops: tuple[str, ...], line: int, exprs: dict, what: str = "") -> None:
    for param in drops:
        for key, expr in exprs.items():
            if expr is not None and not passes_keyword(expr, param):
                entry.err(line, f"{what}{key!r} does not pass {param}={param}")


def inplace(
    entry: Entry,
    *,
    operands: tuple[str, ...] = (),
    leaf_names: Iterable[str] = (),
    dunder_signature: str = "(self) -> Self",
) -> InPlace | None:
    """The ``inplace`` key: ``true`` (the file's ``defaults.inplace``, which only then
    applies) or a mapping over it. The statement ``leaf`` may read the parameters,
    ``leaf_names`` and ``x``."""
    if "inplace" not in entry.fields or entry.fields["inplace"].from_defaults:
        return None
    field = entry.fields["inplace"]
    if field.value is None or field.value is False:
        return None
    keys: dict[str, Field] = {}
    template = entry.defaults.get("inplace")
    if template is not None and isinstance(template.node, yaml.MappingNode):
        for knode, vnode in template.node.value:
            value = template.value[plain(knode)]
            keys[plain(knode)] = Field(value, vnode, line_of(vnode), True)
    if field.value is True:
        if not keys:
            entry.err(field.line, "'inplace: true' needs an 'inplace' mapping in 'defaults'")
            return None
    elif isinstance(field.node, yaml.MappingNode):
        for knode, vnode in field.node.value:
            keys[plain(knode)] = Field(plain(vnode), vnode, line_of(vnode), False)
    else:
        entry.err(field.line, "'inplace' must be true, false or a mapping")
        return None
    for key in sorted(set(keys) - INPLACE_KEYS):
        entry.err(keys[key].line, f"unknown key {key!r} in 'inplace'")
    for key in INPLACE_REQUIRED:
        if key not in keys:
            entry.err(field.line, f"'inplace' is missing {key!r}")
    if any(key not in keys for key in INPLACE_REQUIRED):
        return None
    name = keys["name"].value
    if not isinstance(name, str) or not name.isidentifier():
        entry.err(keys["name"].line, f"in-place name {name!r} is not an identifier")
        return None
    sig = entry.signature_value(keys["signature"].value, keys["signature"].line)
    if sig is None:
        return None
    for operand in operands:
        if not sig.has(operand):
            entry.err(keys["signature"].line, f"in-place {name!r} lacks the operand parameter {operand!r}")
    leaf = keys["leaf"].value
    names = (*sig.names, *leaf_names)
    check_expr(str(leaf), "inplace leaf", keys["leaf"].line, names, entry.err)
    foreach = keys["foreach"].value if "foreach" in keys else None
    if foreach is not None:
        check_expr(foreach, "inplace foreach", keys["foreach"].line, sig.names, entry.err,
                   local="leaves", foreach=True)
    drops = drop_if_none(entry, keys.get("drop_if_none"), sig)
    if drops:
        check_drops(entry, drops, keys["drop_if_none"].line, {"leaf": leaf, "foreach": foreach}, "in-place ")
    dunders = aliases(entry, keys.get("dunders"), name, dunder_signature, sig)
    found = keys.get("torch_function")
    functions = torch_functions(found.value, found.line, entry.err) if found else ()
    return InPlace(
        name=name,
        signature=sig,
        leaf=str(leaf).strip(),
        foreach=foreach.strip() if foreach else None,
        drop_if_none=drops,
        dunders=dunders,
        torch_functions=functions,
        location=Location(entry.path, keys["name"].line),
    )


def parse_tests(entry: Entry, signature: Signature | None = None) -> Tests:
    """``tests:``: the calls the spec-driven tests make (see spec/README.md)."""
    field = entry.fields.get("tests")
    if field is None:
        return Tests()
    if not isinstance(field.value, dict):
        entry.err(field.line, "'tests' must be a mapping with batch_size, calls, errors")
        return Tests()
    nodes = {}  # key -> value node: the file's defaults, then the entry's own keys
    values = {}
    for source in (entry.defaults.get("tests"), field):
        if source is not None and isinstance(source.node, yaml.MappingNode):
            nodes.update({plain(k): v for k, v in source.node.value})
            values.update(source.value)
    field = Field(values, field.node, field.line, field.from_defaults)
    for key in sorted(set(field.value) - TESTS_KEYS):
        entry.err(field.line, f"unknown key {key!r} in 'tests' (allowed: {', '.join(sorted(TESTS_KEYS))})")
    batch_size = field.value.get("batch_size")
    if batch_size is not None and not (
        isinstance(batch_size, list) and all(isinstance(s, int) and s >= 0 for s in batch_size)
    ):
        entry.err(field.line, f"tests: 'batch_size' must be a list of sizes, got {batch_size!r}")
        batch_size = None
    oracle = field.value.get("oracle")
    if oracle is not None:
        params = signature.names if signature is not None else ()
        oracle = _expression(entry, oracle, line_of(nodes["oracle"]), ORACLE_NAMES | set(params))
    floating = field.value.get("floating", False)
    if not isinstance(floating, bool):
        entry.err(field.line, f"tests: 'floating' must be true or false, got {floating!r}")
    values = field.value.get("values", "defined")
    if values not in TEST_VALUES:
        entry.err(field.line, f"tests: 'values' must be one of {', '.join(TEST_VALUES)}, got {values!r}")
        values = "defined"
    calls = []
    calls_node = nodes.get("calls")
    for item, node in zip(field.value.get("calls") or [], getattr(calls_node, "value", [])):
        call = _call(entry, item, line_of(node))
        if call is not None:
            calls.append(call)
    errors = []
    errors_node = nodes.get("errors")
    for item, node in zip(field.value.get("errors") or [], getattr(errors_node, "value", [])):
        line = line_of(node)
        if not isinstance(item, dict) or set(item) != {"call", "raises", "match"}:
            entry.err(line, "a test error is a mapping with 'call', 'raises' and 'match'")
            continue
        call = _call(entry, item["call"], line)
        exc = getattr(builtins, str(item["raises"]), None)
        if not (isinstance(exc, type) and issubclass(exc, BaseException)):
            entry.err(line, f"tests: {item['raises']!r} is not a builtin exception")
            continue
        match = item["match"] if isinstance(item["match"], list) else [item["match"]]
        if call is not None:
            errors.append(ErrorCase(call, item["raises"], tuple(str(m) for m in match)))
    return Tests(
        batch_size=tuple(batch_size) if batch_size is not None else None,
        calls=tuple(calls),
        errors=tuple(errors),
        oracle=oracle,
        floating=floating is True,
        values=values,
    )


def _call(entry: Entry, text: Any, line: int) -> Call | None:
    """A test call: Python call arguments over ``CASE_NAMES`` and builtins."""
    if text is None:
        text = ""
    if not isinstance(text, (str, int, float)):
        entry.err(line, f"tests: a call is Python call arguments as a string, got {text!r}")
        return None
    text = str(text)
    try:
        tree = ast.parse(f"_f({text})", mode="eval")
    except SyntaxError as exc:
        entry.err(line, f"tests: {text!r} are not call arguments: {exc.msg}")
        return None
    _check_names(entry, text, tree, line, CASE_NAMES | {"_f"})
    return Call(text, line)


def _expression(entry: Entry, text: Any, line: int, names: frozenset | set) -> str | None:
    """``tests: oracle``: one Python expression over ``names`` and builtins."""
    if not isinstance(text, str):
        entry.err(line, f"tests: 'oracle' must be a Python expression as a string, got {text!r}")
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        entry.err(line, f"tests: oracle {text.strip()!r} is not an expression: {exc.msg}")
        return None
    _check_names(entry, text.strip(), tree, line, names)
    return text.strip()


def _check_names(entry: Entry, text: str, tree: ast.AST, line: int, names: frozenset | set) -> None:
    """Every free name of ``tree`` is one of ``names`` or a builtin."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            bound |= {a.arg for a in node.args.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in bound:
            if node.id not in names and not hasattr(builtins, node.id):
                allowed = ", ".join(sorted(n for n in names if not n.startswith("_")))
                entry.err(line, f"tests: {text!r} uses the unknown name {node.id!r} "
                                f"(it may use {allowed})")


def require(entry: Entry, *keys: str) -> None:
    for key in keys:
        if not entry.has(key):
            entry.err(entry.line, f"missing required field {key!r}")


def leaf(
    entry: Entry,
    signature: Signature | None,
    names: Iterable[str] = (),
    *,
    key: str = "leaf",
    local: str = "x",
) -> str | None:
    """A per-leaf expression of ``x`` (the leaf); it may read the parameters, ``torch``
    and ``names``."""
    text = entry.text(key, optional=True)
    if text is None:
        return None
    allowed = None if signature is None else (*signature.names, *names)
    check_expr(text, key, entry.line_of(key), allowed, entry.err, local=local)
    return text.strip()


def foreach(entry: Entry, signature: Signature | None) -> str | None:
    """``foreach``: one ``torch._foreach_*`` call over ``leaves``; null: none."""
    text = entry.text("foreach", optional=True)
    if text is None:
        return None
    check_expr(text, "foreach", entry.line_of("foreach"), signature.names if signature else None,
               entry.err, local="leaves", foreach=True)
    return text.strip()
