"""Load ``spec/*.yaml``, validate, report ``file:line``.

Each YAML file holds one family (``spec/README.md``). The loader reads what every file
has (``family``, ``title``, ``doc``, ``defaults``, ``signatures``, ``ops``), checks each
entry's name and keys, and hands the entry to its family's op type
(``codegen/families/``), whose ``parse`` reads the rest. Every problem is reported as

    spec/binary.yaml:42: entry 'add': what is wrong

and all problems of a run are reported together (:class:`~codegen.model.SpecError`).
"""

from __future__ import annotations

import keyword
from pathlib import Path

import yaml

from codegen.entry import (
    Entry,
    Problems,
    default_fields,
    line_of,
    mapping,
    merged_fields,
    plain,
)
from codegen.families import families
from codegen.model import FamilySpec, Location, Op, Spec, SpecError
from codegen.parse import COMMON_KEYS, OPERATORS
from codegen.signature import SignatureTable

FILE_KEYS = frozenset({"family", "title", "doc", "defaults", "signatures", "ops"})
FILE_REQUIRED = ("family", "title", "doc", "ops")


def load_spec(spec_dir: Path | str) -> Spec:
    """Load and validate every ``*.yaml`` under ``spec_dir``; raise :class:`SpecError`."""
    spec_dir = Path(spec_dir)
    problems = Problems()
    loaded: list[FamilySpec] = []
    for file in sorted(spec_dir.glob("*.yaml")):
        family = _load_file(file, f"{spec_dir.name}/{file.name}", problems)
        if family is not None:
            loaded.append(family)
    _check_unique(loaded, problems)
    if problems.items:
        raise SpecError(problems.items)
    return Spec(families=tuple(sorted(loaded, key=lambda f: f.name)))


def _check_unique(loaded: list[FamilySpec], problems: Problems) -> None:
    seen: dict[str, Location] = {}
    for family in loaded:
        for op in family.ops:
            named = [(op.name, op.location)] + [(a.name, a.location) for a in op.dunders]
            if op.inplace is not None:
                named.append((op.inplace.name, op.inplace.location))
                named += [(a.name, a.location) for a in op.inplace.dunders]
            for name, loc in named:
                if name in seen:
                    problems.add(loc.path, loc.line, op.name,
                                 f"duplicate name {name!r} (already defined at {seen[name]})")
                else:
                    seen[name] = loc


def _load_file(file: Path, path: str, problems: Problems) -> FamilySpec | None:
    try:
        root = yaml.compose(file.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problems.add(path, line, None, f"invalid YAML: {getattr(exc, 'problem', exc)}")
        return None
    if root is None:
        problems.add(path, 1, None, "empty spec file")
        return None
    top = mapping(root, path, None, "a spec file", problems)
    if top is None:
        return None
    for key, (knode, _) in top.items():
        if key not in FILE_KEYS:
            problems.add(path, line_of(knode), None,
                         f"unknown top-level key {key!r} (allowed: {', '.join(sorted(FILE_KEYS))})")
    for key in FILE_REQUIRED:
        if key not in top:
            problems.add(path, line_of(root), None, f"missing top-level key {key!r}")
    if any(key not in top for key in FILE_REQUIRED):
        return None

    known = families()
    name = plain(top["family"][1])
    if name not in known:
        problems.add(path, line_of(top["family"][1]), None,
                     f"unknown family {name!r} (known: {', '.join(sorted(known))})")
        return None
    op_type = known[name]
    stem = getattr(op_type, "spec_file", None) or name
    if file.stem != stem:
        problems.add(path, line_of(top["family"][1]), None, f"family {name!r} must live in {stem}.yaml")
    title, doc = plain(top["title"][1]), plain(top["doc"][1])
    for key, value in (("title", title), ("doc", doc)):
        if not isinstance(value, str) or not value.strip():
            problems.add(path, line_of(top[key][1]), None, f"{key!r} must be a text")

    allowed = COMMON_KEYS | op_type.KEYS
    defaults: dict = {}
    if "defaults" in top:
        defaults = mapping(top["defaults"][1], path, None, "'defaults'", problems) or {}
        for key, (knode, _) in defaults.items():
            if key == "name" or key not in allowed:
                problems.add(path, line_of(knode), None, f"unknown key {key!r} in 'defaults'")

    signatures = SignatureTable()
    if "signatures" in top:
        declared = mapping(top["signatures"][1], path, None, "'signatures'", problems) or {}
        for key, (knode, vnode) in declared.items():
            signatures.declare(key, plain(vnode), line_of(vnode),
                               lambda line, msg: problems.add(path, line, None, msg))
        signatures.check_declarations(lambda line, msg: problems.add(path, line, None, msg))

    ops_node = top["ops"][1]
    if not isinstance(ops_node, yaml.SequenceNode):
        problems.add(path, line_of(ops_node), None, "'ops' must be a list of entries")
        return None
    ops = []
    for index, node in enumerate(ops_node.value):
        op = _load_op(node, index, op_type, allowed, defaults, signatures, path, problems)
        if op is not None:
            ops.append(op)
    return FamilySpec(name=name, title=str(title).strip(), doc=str(doc).strip(), path=path, ops=tuple(ops))


def _load_op(node, index, op_type, allowed, defaults, signatures, path, problems) -> Op | None:
    label = f"#{index + 1}"
    entry = mapping(node, path, label, "an entry", problems)
    if entry is None:
        return None
    name_field = entry.get("name")
    name = plain(name_field[1]) if name_field else None
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        line = line_of(name_field[1]) if name_field else line_of(node)
        problems.add(path, line, label, "missing or invalid 'name' (must be a Python identifier)")
        return None
    if name.startswith("__") and name not in OPERATORS:
        problems.add(path, line_of(name_field[1]), name, "not an operator dunder codegen knows")
        return None
    before = len(problems.items)
    for key, (knode, _) in entry.items():
        if key not in allowed:
            problems.add(path, line_of(knode), name,
                         f"unknown key {key!r} for family {op_type.family!r} "
                         f"(allowed: {', '.join(sorted(allowed))})")
    if len(problems.items) > before:
        return None
    base = default_fields(defaults, name)
    fields = Entry(name, path, line_of(node), merged_fields(entry, base), base, problems, signatures.resolve)
    op = op_type.parse(fields)
    return None if fields.failed else op
