"""Load ``spec/*.yaml``, validate, report ``file:line``.

Each YAML file holds one family (see ``spec/README.md``). Loading keeps the line of every
key (``yaml.compose`` node marks), so that every problem is reported as

    spec/binary.yaml:42: entry 'add': what is wrong

and all problems of a run are reported together (:class:`~codegen.model.SpecError`).
"""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from codegen.model import (
    Alias,
    Family,
    InPlace,
    Location,
    Op,
    Param,
    Signature,
    Spec,
    SpecError,
)
from codegen.schema import (
    ATTRIBUTE_NAMES,
    BATCH_RULES,
    BATCH_SIZE_RULES,
    BatchRule,
    COLLECTORS,
    COMMON_KEYS,
    COMMON_REQUIRED,
    DEFAULT_BATCH_SIZE_RULE,
    DEVICE_RULES,
    DUNDER_RE,
    FAMILIES,
    FamilyRule,
    FILE_KEYS,
    FILE_REQUIRED,
    INPLACE_KEYS,
    INPLACE_REQUIRED,
    LEAFWISE_FAMILIES,
    OPERATORS,
    REDUCTION_DIMS,
    REDUCTION_NO_DIM,
    RESERVED_NAMES,
    RESULTS,
    STORAGE,
    TYPE_NAMES,
)

_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _plain(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return {_plain(k): _plain(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_plain(v) for v in node.value]
    return _CONSTRUCTOR.construct_object(node, deep=True)


@dataclass(frozen=True)
class _Field:
    value: Any
    node: yaml.Node
    line: int
    from_defaults: bool


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: str, line: int, entry: str | None, message: str) -> None:
        where = f"{path}:{line}: "
        if entry is not None:
            where += f"entry {entry!r}: "
        self.items.append(where + message)


def _mapping(
    node: yaml.Node, path: str, entry: str | None, what: str, problems: _Problems
) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
    """The keys of a mapping node (key -> (key node, value node)); None if no mapping."""
    if not isinstance(node, yaml.MappingNode):
        problems.add(path, _line(node), entry, f"{what} must be a mapping")
        return None
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for knode, vnode in node.value:
        key = _plain(knode)
        if not isinstance(key, str):
            problems.add(path, _line(knode), entry, f"key {key!r} must be a string")
            continue
        if key in out:
            problems.add(
                path,
                _line(knode),
                entry,
                f"duplicate key {key!r} (first at line {_line(out[key][0])})",
            )
            continue
        out[key] = (knode, vnode)
    return out


def load_spec(spec_dir: Path | str) -> Spec:
    """Load and validate every ``*.yaml`` under ``spec_dir``; raise :class:`SpecError`."""
    spec_dir = Path(spec_dir)
    problems = _Problems()
    families: list[Family] = []
    for file in sorted(spec_dir.glob("*.yaml")):
        display = f"{spec_dir.name}/{file.name}"
        family = _load_file(file, display, problems)
        if family is not None:
            families.append(family)
    _check_unique(families, problems)
    if problems.items:
        raise SpecError(problems.items)
    return Spec(families=tuple(sorted(families, key=lambda f: f.name)))


def _check_unique(families: list[Family], problems: _Problems) -> None:
    seen: dict[str, Location] = {}
    for family in families:
        for op in family.ops:
            named = [(op.name, op.location)] + [
                (d.name, d.location) for d in op.dunders
            ]
            if op.inplace is not None:
                named.append((op.inplace.name, op.inplace.location))
                named += [(d.name, d.location) for d in op.inplace.dunders]
            for name, loc in named:
                if name in seen:
                    problems.add(
                        loc.path,
                        loc.line,
                        op.name,
                        f"duplicate name {name!r} (already defined at {seen[name]})",
                    )
                else:
                    seen[name] = loc


def _load_file(file: Path, path: str, problems: _Problems) -> Family | None:
    text = file.read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problems.add(path, line, None, f"invalid YAML: {getattr(exc, 'problem', exc)}")
        return None
    if root is None:
        problems.add(path, 1, None, "empty spec file")
        return None
    top = _mapping(root, path, None, "a spec file", problems)
    if top is None:
        return None
    for key, (knode, _) in top.items():
        if key not in FILE_KEYS:
            problems.add(
                path,
                _line(knode),
                None,
                f"unknown top-level key {key!r} (allowed: {', '.join(sorted(FILE_KEYS))})",
            )
    for key in sorted(FILE_REQUIRED - top.keys()):
        problems.add(path, _line(root), None, f"missing top-level key {key!r}")
    if not FILE_REQUIRED <= top.keys():
        return None

    family_name = _plain(top["family"][1])
    if family_name not in FAMILIES:
        problems.add(
            path,
            _line(top["family"][1]),
            None,
            f"unknown family {family_name!r} (known: {', '.join(sorted(FAMILIES))})",
        )
        return None
    rule = FAMILIES[family_name]
    if file.stem != (rule.file or family_name):
        problems.add(
            path,
            _line(top["family"][1]),
            None,
            f"family {family_name!r} must live in {rule.file or family_name}.yaml",
        )
    title, doc = _plain(top["title"][1]), _plain(top["doc"][1])
    for key, value in (("title", title), ("doc", doc)):
        if not isinstance(value, str) or not value.strip():
            problems.add(path, _line(top[key][1]), None, f"{key!r} must be a text")

    defaults: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    if "defaults" in top:
        defaults = (
            _mapping(top["defaults"][1], path, None, "'defaults'", problems) or {}
        )
        for key, (knode, _) in defaults.items():
            if key == "name" or key not in COMMON_KEYS | rule.keys:
                problems.add(
                    path, _line(knode), None, f"unknown key {key!r} in 'defaults'"
                )

    ops_node = top["ops"][1]
    if not isinstance(ops_node, yaml.SequenceNode):
        problems.add(path, _line(ops_node), None, "'ops' must be a list of entries")
        return None
    ops = []
    for index, entry_node in enumerate(ops_node.value):
        op = _load_op(entry_node, index, rule, defaults, path, problems)
        if op is not None:
            ops.append(op)
    return Family(
        name=family_name,
        title=str(title).strip(),
        doc=str(doc).strip(),
        path=path,
        ops=tuple(ops),
    )


def _fields(
    entry: dict[str, tuple[yaml.Node, yaml.Node]],
    defaults: dict[str, tuple[yaml.Node, yaml.Node]],
    name: str,
) -> dict[str, _Field]:
    """Merge an entry over the family defaults; ``{name}`` in a default is the op name."""
    out: dict[str, _Field] = {}
    for key, (_, vnode) in defaults.items():
        value = _plain(vnode)
        if isinstance(value, str):
            value = value.replace("{name}", name)
        out[key] = _Field(value, vnode, _line(vnode), True)
    for key, (_, vnode) in entry.items():
        out[key] = _Field(_plain(vnode), vnode, _line(vnode), False)
    return out


def _load_op(
    node: yaml.Node,
    index: int,
    rule: FamilyRule,
    defaults: dict[str, tuple[yaml.Node, yaml.Node]],
    path: str,
    problems: _Problems,
) -> Op | None:
    before = len(problems.items)
    label = f"#{index + 1}"
    entry = _mapping(node, path, label, "an entry", problems)
    if entry is None:
        return None
    name_field = entry.get("name")
    name = _plain(name_field[1]) if name_field else None
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        line = _line(name_field[1]) if name_field else _line(node)
        problems.add(
            path, line, label, "missing or invalid 'name' (must be a Python identifier)"
        )
        return None
    if name.startswith("__") and name not in OPERATORS:
        problems.add(
            path, _line(name_field[1]), name, "not an operator dunder codegen knows"
        )
        return None
    entry_line = _line(node)

    def err(line: int, message: str) -> None:
        problems.add(path, line, name, message)

    for key, (knode, _) in entry.items():
        if key not in COMMON_KEYS | rule.keys:
            err(
                _line(knode),
                f"unknown key {key!r} for family {rule.name!r} "
                f"(allowed: {', '.join(sorted(COMMON_KEYS | rule.keys))})",
            )
    fields = _fields(entry, defaults, name)
    for key in sorted((COMMON_REQUIRED | rule.required) - fields.keys()):
        err(entry_line, f"missing required field {key!r}")
    if len(problems.items) > before:
        return None

    def text(key: str, *, optional: bool = False) -> str | None:
        field = fields.get(key)
        if field is None or (optional and field.value is None):
            return None
        if not isinstance(field.value, str) or not field.value.strip():
            err(field.line, f"{key!r} must be a non-empty string")
            return None
        return field.value

    signature = _signature(
        text("signature"), fields["signature"].line, err, receiver=rule.receiver
    )
    summary = text("summary")
    if summary is not None and "\n" in summary.strip():
        err(fields["summary"].line, "'summary' must be one line")
    details = text("details")
    example = text("example")
    if example is not None:
        _check_example(example, fields["example"].line, err)
    for key, value in (
        ("summary", summary),
        ("details", details),
        ("example", example),
    ):
        if value is not None and '"""' in value:
            err(fields[key].line, f"{key!r} must not contain triple double quotes")

    batch_size = DEFAULT_BATCH_SIZE_RULE
    batch_args: tuple[str, ...] = ()
    if "batch_size" in fields:
        batch_size = fields["batch_size"].value
        if isinstance(batch_size, str) and "(" in batch_size:  # rule(args): BATCH_RULES
            batch_size, batch_args = _batch_rule_call(
                batch_size, fields["batch_size"].line, signature, err
            )
        elif batch_size in BATCH_RULES:
            err(
                fields["batch_size"].line,
                f"unknown batch_size rule {batch_size!r} without arguments; it is a "
                f"rule with code: {batch_size}({', '.join(BATCH_RULES[batch_size].args)})",
            )
        if batch_size not in BATCH_SIZE_RULES:
            err(
                fields["batch_size"].line,
                f"unknown batch_size rule {batch_size!r} "
                f"(known: {', '.join(sorted(BATCH_SIZE_RULES))})",
            )

    operands: tuple[str, ...] = ()
    if "operands" in fields:
        value = fields["operands"].value
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) for v in value)
        ):
            err(fields["operands"].line, "'operands' must be a list of parameter names")
        else:
            operands = tuple(value)
            if signature is not None:
                for operand in operands:
                    if not signature.has(operand):
                        err(
                            fields["operands"].line,
                            f"operand {operand!r} is not a parameter of the signature",
                        )
            if DUNDER_RE.match(name) and len(operands) != 1:
                err(fields["operands"].line, "an operator takes exactly one operand")

    if signature is not None:
        for param in rule.required_params:
            if not signature.has(param) or signature.get(param).kind != "keyword_only":
                err(
                    fields["signature"].line,
                    f"a {rule.name} signature takes the keyword-only parameter {param!r}",
                )

    drop_if_none = _drop_if_none(fields.get("drop_if_none"), signature, err)
    params = signature.names if signature is not None else None
    leaf_text = text("leaf")
    if leaf_text is not None:
        _check_expr(
            leaf_text,
            "leaf",
            fields["leaf"].line,
            _leaf_names(params, rule, batch_size),
            per_leaf=True,
            err=err,
        )
    foreach_text = text("foreach", optional=True) if "foreach" in fields else None
    if foreach_text is not None:
        _check_expr(
            foreach_text,
            "foreach",
            fields["foreach"].line,
            params,
            per_leaf=False,
            err=err,
        )

    for param in drop_if_none:
        for key, expr in (("leaf", leaf_text), ("foreach", foreach_text)):
            if expr is not None and not _passes_keyword(expr, param):
                err(
                    fields["drop_if_none"].line,
                    f"{key!r} does not pass {param}={param}",
                )

    location = Location(path, entry_line)
    torch_functions = _torch_functions(fields.get("torch_function"), err)
    dunders = _aliases(fields.get("dunders"), name, rule, signature, path, err)
    inplace = None
    if "inplace" in entry:  # defaults.inplace is a template that entries opt into
        inplace = _inplace(fields["inplace"], name, operands, rule, defaults, path, err)
    leafwise = _leafwise_fields(rule, fields, signature, batch_size, inplace, err)
    if rule.name == "batch_shape" and "lazy" in fields:  # a lazy view under legacy
        if not isinstance(fields["lazy"].value, bool):
            err(fields["lazy"].line, "'lazy' must be true or false")
        else:
            leafwise["lazy"] = fields["lazy"].value

    if len(problems.items) > before:
        return None
    assert signature is not None and summary is not None and leaf_text is not None
    return Op(
        name=name,
        family=rule.name,
        signature=signature,
        summary=summary.strip(),
        details=(details or "").strip(),
        example=(example or "").rstrip() + "\n",
        leaf=leaf_text.strip(),
        foreach=foreach_text.strip() if foreach_text else None,
        operands=operands,
        drop_if_none=drop_if_none,
        batch_size=batch_size,
        inplace=inplace,
        dunders=dunders,
        location=location,
        torch_functions=torch_functions,
        batch_args=batch_args,
        **_reduction_fields(rule, fields, signature, params, err),
        **leafwise,
        **_attribute_fields(rule, fields, signature, err),
    )


def _attribute_fields(family: FamilyRule, fields, signature, err) -> dict:
    """``combine`` and ``property`` (attributes family), checked; ``{}`` otherwise."""
    if family.name != "attributes":
        return {}
    out: dict[str, Any] = {}
    if "property" in fields:
        value = fields["property"].value
        if not isinstance(value, bool):
            err(fields["property"].line, "'property' must be true or false")
        else:
            out["is_property"] = value
            if value and signature is not None and signature.params:
                err(
                    fields["property"].line, "a property's signature is '(self) -> ...'"
                )
    if "combine" in fields:
        text, line = fields["combine"].value, fields["combine"].line
        if not isinstance(text, str):
            err(line, "'combine' must be a Python expression")
            return out
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            err(line, f"'combine' is not an expression: {exc.msg}")
            return out
        allowed = ATTRIBUTE_NAMES | set(signature.names if signature else ())
        import builtins

        bound = {
            n.id
            for node in ast.walk(tree)
            if isinstance(node, ast.comprehension)
            for n in ast.walk(node.target)
            if isinstance(n, ast.Name)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Name)
                and node.id not in allowed
                and node.id not in bound
                and not hasattr(builtins, node.id)
            ):
                err(line, f"'combine': unknown name {node.id!r}")
        _check_ops_names(text, "combine", line, err)
        out["combine"] = text.strip()
    return out


# ---- batch_shape and reduction families ----------------------------------------------


def _batch_rule_call(
    text: str, line: int, signature, err
) -> tuple[str, tuple[str, ...]]:
    """``batch_size: transpose(axis0, axis1)``: the rule's name and its arguments
    (Python expressions over the parameters, e.g. ``other.shape`` or ``(1,)``)."""
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        err(line, f"'batch_size' is not a rule call: {exc.msg}: {text.strip()!r}")
        return text, ()
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        err(line, f"'batch_size' must be a rule name or rule(args), got {text!r}")
        return text, ()
    name = call.func.id
    rule = BATCH_RULES.get(name)
    if rule is None:
        err(
            line,
            f"unknown batch_size rule {name!r} "
            f"(rules with arguments: {', '.join(sorted(BATCH_RULES))})",
        )
        return name, ()
    if call.keywords or len(call.args) != len(rule.args):
        err(
            line,
            f"batch_size rule {name!r} takes {len(rule.args)} positional "
            f"argument(s): {name}({', '.join(rule.args)})",
        )
        return name, ()
    allowed = {"self", "torch", "_ops", *(signature.names if signature else ())}
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node is not call.func:
            if signature is not None and node.id not in allowed:
                err(
                    line,
                    f"batch_size rule {name!r}: unknown name {node.id!r} "
                    f"(it may use self, the parameters, torch and _ops)",
                )
    return name, tuple(ast.unparse(a) for a in call.args)


def _leaf_names(params, family: FamilyRule, batch_size: str):
    """The names a ``leaf`` may use: the parameters, plus what its batch rule defines
    (and ``_ops`` for the runtime helpers) in the batch_shape and reduction families."""
    if family.name in LEAFWISE_FAMILIES:
        return None  # checked with their rules' names by _leafwise_fields
    if params is not None and family.name == "attributes":
        return tuple(params) + ("_ops",)
    if params is None or family.name not in ("batch_shape", "reduction"):
        return params
    rule = BATCH_RULES.get(batch_size)
    return tuple(params) + ("_ops",) + (rule.defines if rule else ())


def _reduction_fields(family: FamilyRule, fields, signature, params, err) -> dict:
    """The keys only the reduction family has (``leaf_all``, ``dims``, ``no_dim``,
    ``batch_prefix``), checked; ``{}`` for other families."""
    if family.name == "batch_shape" and "storage" in fields:
        if fields["storage"].value not in STORAGE:
            err(
                fields["storage"].line,
                f"'storage' must be one of {', '.join(STORAGE)}, "
                f"got {fields['storage'].value!r}",
            )
            return {}
        return {"storage": fields["storage"].value}
    if family.name != "reduction":
        return {}
    out: dict[str, Any] = {}
    if "leaf_all" in fields and fields["leaf_all"].value is not None:  # null: none
        value = fields["leaf_all"].value
        if not isinstance(value, str) or not value.strip():
            err(fields["leaf_all"].line, "'leaf_all' must be a non-empty string")
        else:
            _check_expr(
                value,
                "leaf_all",
                fields["leaf_all"].line,
                _leaf_names(params, family, "reduce"),
                per_leaf=True,
                err=err,
            )
            out["leaf_all"] = value.strip()
    for key, choices in (("dims", REDUCTION_DIMS), ("no_dim", REDUCTION_NO_DIM)):
        if key in fields:
            if fields[key].value not in choices:
                err(
                    fields[key].line,
                    f"{key!r} must be one of {', '.join(choices)}, "
                    f"got {fields[key].value!r}",
                )
            else:
                out[key] = fields[key].value
    if "batch_prefix" in fields:
        value = fields["batch_prefix"].value
        try:
            names = {
                n.id
                for n in ast.walk(ast.parse(str(value), mode="eval"))
                if isinstance(n, ast.Name)
            }
        except SyntaxError as exc:
            err(fields["batch_prefix"].line, f"'batch_prefix': {exc.msg}")
        else:
            unknown = names - {"torch", "_ops", *(params or ())}
            if unknown and params is not None:
                err(
                    fields["batch_prefix"].line,
                    f"'batch_prefix' uses unknown names {sorted(unknown)}",
                )
            out["batch_prefix"] = str(value).strip()
    batch_size = fields["batch_size"].value if "batch_size" in fields else "keep"
    if batch_size not in ("reduce", "keep"):
        err(
            fields["batch_size"].line,
            "a reduction's batch_size is 'reduce' (dims go) or 'keep' (cummax, softmax)",
        )
    if signature is not None:
        if batch_size == "reduce" and out.get("no_dim", "each_leaf") != "batch":
            if "leaf_all" not in out:
                err(
                    fields["name"].line,
                    "a reduction whose no-dim form reduces every dim of each leaf "
                    "needs 'leaf_all'",
                )
        if batch_size == "keep" and not signature.has("dim"):
            err(fields["signature"].line, "a 'keep' reduction takes a 'dim'")
        if signature.has("return_indices"):
            import torch

            if not hasattr(torch.return_types, fields["name"].value):
                err(
                    fields["signature"].line,
                    f"return_indices: torch.return_types has no "
                    f"{fields['name'].value!r} to hold values and indices",
                )
    return out


def _torch_functions(field, err) -> tuple[str, ...]:
    """``torch_function: [torch.abs, ...]``: dotted names of torch callables that
    dispatch to the entry's method; each must exist in the installed torch."""
    if field is None:
        return ()
    value = field.value
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        err(field.line, "'torch_function' must be a list of names like torch.abs")
        return ()
    import torch

    for item in value:
        dotted, params = split_torch_function(item)
        if params is not None and params.count("self") != 1:
            err(
                field.line,
                f"'torch_function': {item!r} must name 'self' (the tensordict) once",
            )
        parts = dotted.split(".")
        target = torch if parts[0] == "torch" else None
        for part in parts[1:]:
            target = getattr(target, part, None)
        if target is None or not callable(target):
            err(field.line, f"'torch_function': {dotted!r} is not a torch function")
    return tuple(value)


def _signature(
    text: str | None, line: int, err, receiver: str = "self"
) -> Signature | None:
    if text is None:
        return None
    source = f"def _f{text.strip()}:\n    pass\n"
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        err(line, f"bad signature {text!r}: {exc.msg}")
        return None
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef) or len(tree.body) != 1:
        err(line, f"bad signature {text!r}")
        return None
    args = func.args
    positional = args.posonlyargs + args.args
    if not positional or positional[0].arg != receiver or positional[0].annotation:
        err(
            line,
            f"bad signature {text!r}: the first parameter must be a bare {receiver!r}",
        )
        return None

    params: list[Param] = []
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional"
        if i:
            params.append(_param(arg, kind, default))
    if args.vararg:
        params.append(_param(args.vararg, "var_positional", None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(_param(arg, "keyword_only", default))
    if args.kwarg:
        params.append(_param(args.kwarg, "var_keyword", None))

    ok = True
    annotations = [p.annotation for p in params if p.annotation]
    if func.returns is not None:
        annotations.append(ast.unparse(func.returns))
    for annotation in annotations:
        for node in ast.walk(ast.parse(annotation, mode="eval")):
            if isinstance(node, ast.Name) and node.id not in TYPE_NAMES:
                err(
                    line,
                    f"bad signature {text!r}: unknown type name {node.id!r} "
                    f"(known: {', '.join(sorted(TYPE_NAMES))})",
                )
                ok = False
    for param in params:
        if param.default is not None and not _symbolic_default(param.default):
            try:
                ast.literal_eval(param.default)
            except ValueError:
                err(
                    line,
                    f"bad signature {text!r}: the default of {param.name!r} "
                    "must be a literal",
                )
                ok = False
        if keyword.iskeyword(param.name) or param.name in RESERVED_NAMES:
            err(
                line,
                f"bad signature {text!r}: parameter name {param.name!r} is reserved",
            )
            ok = False
    if not ok:
        return None
    returns = ast.unparse(func.returns) if func.returns is not None else None
    return Signature(
        text=_signature_text(params, returns, receiver),
        params=tuple(params),
        returns=returns,
        receiver=receiver,
    )


def _signature_text(
    params: list[Param], returns: str | None, receiver: str = "self"
) -> str:
    """``(self, a: int, /, b=1, *, c: float | None = None) -> Self``, as PEP 8 spells it."""
    parts = [receiver]
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
    out = "(" + ", ".join(parts) + ")"
    return out + (f" -> {returns}" if returns else "")


def _param(arg: ast.arg, kind: str, default: ast.expr | None) -> Param:
    return Param(
        name=arg.arg,
        kind=kind,
        annotation=ast.unparse(arg.annotation) if arg.annotation is not None else None,
        default=ast.unparse(default) if default is not None else None,
    )


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _resolve_torch(dotted: str) -> bool:
    import torch

    obj: Any = torch
    for part in dotted.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _check_expr(
    text: str,
    key: str,
    line: int,
    params: tuple[str, ...] | None,
    *,
    per_leaf: bool,
    err,
) -> None:
    """``leaf`` (per leaf, uses ``x``) or ``foreach`` (one torch._foreach_* call).
    ``params`` is None when the signature is broken (names are not checked then)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        err(line, f"{key!r} is not a Python expression: {exc.msg}: {text.strip()!r}")
        return
    local = "x" if per_leaf else "leaves"
    allowed = {local, "torch", *(params or ())}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for unknown in sorted(names - allowed if params is not None else ()):
        err(
            line,
            f"{key!r} uses the unknown name {unknown!r} "
            f"(it may use {', '.join(sorted(allowed))})",
        )
    if local not in names:
        err(line, f"{key!r} must use {local!r}")
    if not per_leaf:
        call = tree.body
        dotted = _dotted(call.func) if isinstance(call, ast.Call) else None
        if dotted is None or not dotted.startswith("torch._foreach_"):
            err(line, "'foreach' must be one call of a torch._foreach_* function")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted and dotted.startswith("torch.") and not _resolve_torch(dotted):
                err(line, f"{key!r}: torch has no attribute {dotted[6:]!r}")
                return


def _passes_keyword(expr: str, param: str) -> bool:
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        return True  # reported elsewhere
    return any(
        isinstance(node, ast.Call) and any(kw.arg == param for kw in node.keywords)
        for node in ast.walk(tree)
    )


def _check_example(example: str, line: int, err) -> None:
    import doctest

    try:
        examples = doctest.DocTestParser().get_examples(example)
    except ValueError as exc:
        err(line, f"'example' is not valid doctest text: {exc}")
        return
    if not examples:
        err(line, "'example' must hold at least one '>>> ' line")


def _drop_if_none(field: _Field | None, signature: Signature | None, err):
    if field is None or field.value is None:
        return ()
    value = field.value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        err(field.line, "'drop_if_none' must be a list of parameter names")
        return ()
    if len(value) > 1:
        err(field.line, "'drop_if_none' takes at most one parameter")
        return ()
    for param in value:
        if signature is not None and not signature.has(param):
            err(
                field.line,
                f"drop_if_none: {param!r} is not a parameter of the signature",
            )
    return tuple(value)


def _aliases(
    field: _Field | None,
    target: str,
    rule: FamilyRule,
    signature: Signature | None,
    path: str,
    err,
) -> tuple[Alias, ...]:
    if field is None or field.value is None:
        return ()
    if not isinstance(field.value, list):
        err(field.line, "'dunders' must be a list")
        return ()
    out = []
    items = field.node.value if isinstance(field.node, yaml.SequenceNode) else []
    for item, node in zip(field.value, items):
        line = _line(node)
        if isinstance(item, str):
            dname, sig_text = item, rule.dunder_signature
        elif (
            isinstance(item, dict)
            and set(item) <= {"name", "signature"}
            and "name" in item
        ):
            dname, sig_text = item["name"], item.get("signature", rule.dunder_signature)
        else:
            err(line, "a dunder is a name or a mapping with 'name' and 'signature'")
            continue
        if dname not in OPERATORS:
            err(line, f"{dname!r} is not an operator dunder codegen knows")
            continue
        sig = _signature(sig_text, line, err)
        if sig is None:
            continue
        if signature is not None and len(sig.params) > len(signature.positional):
            err(line, f"{dname}{sig.text} passes more arguments than {target!r} takes")
            continue
        out.append(
            Alias(
                name=dname,
                signature=sig,
                target=target,
                binary=bool(sig.params),
                location=Location(path, line),
            )
        )
    return tuple(out)


def _inplace(
    field: _Field,
    name: str,
    operands: tuple[str, ...],
    rule: FamilyRule,
    defaults: dict[str, tuple[yaml.Node, yaml.Node]],
    path: str,
    err,
) -> InPlace | None:
    value = field.value
    if value is None or value is False:
        return None
    base: dict[str, _Field] = {}
    if "inplace" in defaults and isinstance(defaults["inplace"][1], yaml.MappingNode):
        for knode, vnode in defaults["inplace"][1].value:
            v = _plain(vnode)
            if isinstance(v, str):
                v = v.replace("{name}", name)
            base[_plain(knode)] = _Field(v, vnode, _line(vnode), True)
    if value is True:
        if not base:
            err(field.line, "'inplace: true' needs an 'inplace' mapping in 'defaults'")
            return None
    elif isinstance(field.node, yaml.MappingNode):
        for knode, vnode in field.node.value:
            base[_plain(knode)] = _Field(_plain(vnode), vnode, _line(vnode), False)
    else:
        err(field.line, "'inplace' must be true, false or a mapping")
        return None
    for key in sorted(set(base) - INPLACE_KEYS):
        err(base[key].line, f"unknown key {key!r} in 'inplace'")
    for key in sorted(INPLACE_REQUIRED - set(base)):
        err(field.line, f"'inplace' is missing {key!r}")
    if not INPLACE_REQUIRED <= set(base):
        return None
    iname = base["name"].value
    if not isinstance(iname, str) or not iname.isidentifier():
        err(base["name"].line, f"in-place name {iname!r} is not an identifier")
        return None
    sig = _signature(base["signature"].value, base["signature"].line, err)
    if sig is None:
        return None
    for operand in operands:
        if not sig.has(operand):
            err(
                base["signature"].line,
                f"in-place {iname!r} lacks the operand parameter {operand!r}",
            )
    leaf = base["leaf"].value
    _check_expr(
        leaf,
        "inplace leaf",
        base["leaf"].line,
        _leaf_names(sig.names, rule, "keep"),
        per_leaf=True,
        err=err,
    )
    foreach = base["foreach"].value if "foreach" in base else None
    if foreach is not None:
        _check_expr(
            foreach,
            "inplace foreach",
            base["foreach"].line,
            sig.names,
            per_leaf=False,
            err=err,
        )
    drop_if_none = _drop_if_none(base.get("drop_if_none"), sig, err)
    for param in drop_if_none:
        for key, expr in (("leaf", leaf), ("foreach", foreach)):
            if expr is not None and not _passes_keyword(expr, param):
                err(
                    base["drop_if_none"].line,
                    f"in-place {key!r} does not pass {param}={param}",
                )
    dunders = _aliases(base.get("dunders"), iname, rule, sig, path, err)
    return InPlace(
        name=iname,
        signature=sig,
        leaf=leaf.strip(),
        foreach=foreach.strip() if foreach else None,
        drop_if_none=drop_if_none,
        dunders=dunders,
        location=Location(path, base["name"].line),
    )


# ---- indexing, device and stacking families ------------------------------------------


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
    return _dotted(call.func) or text, tuple(a.id for a in call.args)


def _symbolic_default(text: str) -> bool:
    """Defaults that are no literals but are allowed: ``NO_DEFAULT`` and torch
    constants such as ``torch.strided`` (the signatures users call have them)."""
    return text == "NO_DEFAULT" or (text.startswith("torch.") and _resolve_torch(text))


_OPS_FUNCTIONS: frozenset[str] | None = None


def _ops_functions() -> frozenset[str]:
    """The names the ``tensordict/_ops/`` modules define (``_ops/__init__.py``
    re-exports them all), read from their source: importing the package could fail
    while the generated code is being rewritten."""
    global _OPS_FUNCTIONS
    if _OPS_FUNCTIONS is None:
        package = Path(__file__).resolve().parent.parent / "tensordict" / "_ops"
        names = set()
        for path in sorted(package.glob("*.py")):
            if path.name == "__init__.py":
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        _OPS_FUNCTIONS = frozenset(names)
    return _OPS_FUNCTIONS


def _rule_call(text, line: int, table: dict, key: str, signature, err):
    """``key: rule(arg, ...)`` for a rule of ``table``: its name and arguments (Python
    expressions over the parameters, ``torch`` and ``_ops``)."""
    try:
        call = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError as exc:
        err(line, f"{key!r} is not a rule call: {exc.msg}: {text!r}")
        return None, ()
    if isinstance(call, ast.Name):
        call = ast.Call(func=call, args=[], keywords=[])
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        err(line, f"{key!r} must be rule(args), got {text!r}")
        return None, ()
    name = call.func.id
    if name not in table:
        err(line, f"unknown {key} rule {name!r} (known: {', '.join(sorted(table))})")
        return None, ()
    rule = table[name]
    if call.keywords or len(call.args) != len(rule.args):
        err(
            line,
            f"{key} rule {name!r} takes {len(rule.args)} positional argument(s): "
            f"{name}({', '.join(rule.args)})",
        )
        return None, ()
    allowed = {"torch", "_ops", "None", *(signature.names if signature else ())}
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node is not call.func:
            if signature is not None and node.id not in allowed:
                err(line, f"{key} rule {name!r}: unknown name {node.id!r}")
    return name, tuple(ast.unparse(a) for a in call.args)


def _check_ops_names(text: str, key: str, line: int, err) -> None:
    """Every ``_ops.<name>`` an expression uses exists in tensordict/_ops/."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return  # reported by _check_expr
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "_ops"
            and node.attr not in _ops_functions()
        ):
            err(line, f"{key!r}: tensordict/_ops has no {node.attr!r}")


def _leafwise_fields(
    family: FamilyRule, fields, signature, batch_size: str, inplace, err
) -> dict:
    """The keys of the indexing, device and stacking families, checked (and their
    ``leaf`` expressions, with the names their rules define); ``{}`` for the others."""
    if family.name not in LEAFWISE_FAMILIES:
        return {}
    out: dict[str, Any] = {}
    params = signature.names if signature is not None else None
    names = {family.receiver, "_ops", *(params or ())}
    batch_rule = BATCH_RULES.get(batch_size)
    if batch_rule is not None:
        names.update(batch_rule.defines)

    def line_of(key: str) -> int:
        return fields[key].line if key in fields else fields["name"].line

    if "device" in fields:
        rule, args = _rule_call(
            fields["device"].value,
            fields["device"].line,
            DEVICE_RULES,
            "device",
            signature,
            err,
        )
        if rule is not None:
            out["device_rule"], out["device_args"] = rule, args
            names.update(DEVICE_RULES[rule].defines)

    result = fields["result"].value if "result" in fields else "tensordict"
    if not isinstance(result, str):
        err(line_of("result"), f"'result' must be a name, got {result!r}")
    elif result in RESULTS:
        out["result"] = result
    else:
        rule, args = _rule_call(
            result,
            line_of("result"),
            {k: BatchRule("", v, ()) for k, v in COLLECTORS.items()},
            "result",
            signature,
            err,
        )
        if rule is not None:
            out["result"], out["result_args"] = rule, args
    result = out.get("result", "tensordict")
    if result == "tensordicts" and (
        batch_rule is None or "batch_sizes" not in batch_rule.defines
    ):
        err(
            line_of("result"),
            "'result: tensordicts' needs a batch_size rule defining batch_sizes "
            "(split, chunk, tensor_split, unbind)",
        )
    if family.name == "stacking" and (
        batch_rule is None or batch_size not in ("stack", "cat")
    ):
        err(
            line_of("batch_size"),
            "a stacking op's batch_size is stack(...) or cat(...)",
        )

    for key in ("operand_default", "target"):
        if key in fields:
            value = fields[key].value
            if signature is not None and not (
                isinstance(value, str) and signature.has(value)
            ):
                err(fields[key].line, f"{key!r}: {value!r} is not a parameter")
            else:
                out[key] = value
    if "operand_default" in out and "operands" not in fields:
        err(fields["operand_default"].line, "'operand_default' needs 'operands'")
    if "then" in fields:
        value = fields["then"].value
        if not isinstance(value, str) or not value.isidentifier():
            err(fields["then"].line, f"'then' must be a method name, got {value!r}")
        else:
            out["then"] = value
    for key in ("method", "lazy"):
        if key in fields:
            if not isinstance(fields[key].value, bool):
                err(fields[key].line, f"{key!r} must be true or false")
            else:
                out[key] = fields[key].value
    if out.get("method") is False and family.name != "device":
        err(fields["method"].line, "'method: false' is for device-family entries")

    if (
        params is not None
        and "leaf" in fields
        and isinstance(fields["leaf"].value, str)
    ):
        leaf = fields["leaf"].value
        _check_expr(
            leaf, "leaf", fields["leaf"].line, tuple(names), per_leaf=True, err=err
        )
        _check_ops_names(leaf, "leaf", fields["leaf"].line, err)
    if inplace is not None:
        line = inplace.location.line
        inames = {"self", "_ops", *inplace.signature.names}
        if batch_rule is not None:
            inames.update(batch_rule.defines)
        _check_expr(
            inplace.leaf, "inplace leaf", line, tuple(inames), per_leaf=True, err=err
        )
        _check_ops_names(inplace.leaf, "inplace leaf", line, err)
    return out
