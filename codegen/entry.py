"""One spec entry as its family's ``parse`` reads it: the YAML keys with their lines
(the file's ``defaults`` merged in), typed accessors that report a wrong value as
``spec/<file>.yaml:<line>: entry '<name>': <what is wrong>``, and the file's named
signatures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import yaml

from codegen.model import Location, Signature

_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def plain(node: yaml.Node) -> Any:
    """The Python value of a YAML node."""
    if isinstance(node, yaml.MappingNode):
        return {plain(k): plain(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [plain(v) for v in node.value]
    return _CONSTRUCTOR.construct_object(node, deep=True)


class Problems:
    """Every problem of a load, reported together."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: str, line: int, entry: str | None, message: str) -> None:
        where = f"{path}:{line}: "
        if entry is not None:
            where += f"entry {entry!r}: "
        self.items.append(where + message)


def mapping(
    node: yaml.Node, path: str, entry: str | None, what: str, problems: Problems
) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
    """The keys of a mapping node (key -> (key node, value node)); None if no mapping."""
    if not isinstance(node, yaml.MappingNode):
        problems.add(path, line_of(node), entry, f"{what} must be a mapping")
        return None
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for knode, vnode in node.value:
        key = plain(knode)
        if not isinstance(key, str):
            problems.add(path, line_of(knode), entry, f"key {key!r} must be a string")
            continue
        if key in out:
            first = line_of(out[key][0])
            problems.add(
                path, line_of(knode), entry, f"duplicate key {key!r} (first at line {first})"
            )
            continue
        out[key] = (knode, vnode)
    return out


@dataclass(frozen=True)
class Field:
    value: Any
    node: yaml.Node
    line: int
    from_defaults: bool


def default_fields(
    defaults: dict[str, tuple[yaml.Node, yaml.Node]], name: str
) -> dict[str, Field]:
    """The file's defaults for the entry ``name`` (``{name}`` in a string is it)."""
    return {
        key: Field(substitute_name(plain(vnode), name), vnode, line_of(vnode), True)
        for key, (_, vnode) in defaults.items()
    }


def merged_fields(
    entry: dict[str, tuple[yaml.Node, yaml.Node]], defaults: dict[str, Field]
) -> dict[str, Field]:
    """An entry over the file's defaults."""
    out = dict(defaults)
    for key, (_, vnode) in entry.items():
        out[key] = Field(plain(vnode), vnode, line_of(vnode), False)
    return out


def substitute_name(value: Any, name: str) -> Any:
    """``{name}`` replaced by ``name`` in every string of ``value``."""
    if isinstance(value, str):
        return value.replace("{name}", name)
    if isinstance(value, list):
        return [substitute_name(v, name) for v in value]
    if isinstance(value, dict):
        return {k: substitute_name(v, name) for k, v in value.items()}
    return value


class Entry:
    """An entry of a spec file, read by its family's ``parse``."""

    def __init__(
        self,
        name: str,
        path: str,
        line: int,
        fields: dict[str, Field],
        defaults: dict[str, Field],
        problems: Problems,
        resolve_signature: Callable[..., Signature | None],
    ):
        self.name = name
        self.path = path
        self.line = line
        self.fields = fields  # the entry's keys over the file's defaults
        self.defaults = defaults  # the file's defaults alone (``inplace: true``)
        self._problems = problems
        self._resolve_signature = resolve_signature
        self._start = len(problems.items)
        self._signatures: dict[tuple[str, str], Signature | None] = {}

    # ---- reporting --------------------------------------------------------------------
    def err(self, line: int, message: str) -> None:
        self._problems.add(self.path, line, self.name, message)

    @property
    def failed(self) -> bool:
        """Whether a problem was reported for this entry."""
        return len(self._problems.items) > self._start

    @property
    def location(self) -> Location:
        return Location(self.path, self.line)

    def line_of(self, key: str) -> int:
        return self.fields[key].line if key in self.fields else self.line

    # ---- typed accessors --------------------------------------------------------------
    def has(self, key: str) -> bool:
        return key in self.fields

    def value(self, key: str, default: Any = None) -> Any:
        return self.fields[key].value if key in self.fields else default

    def text(self, key: str, *, optional: bool = False) -> str | None:
        """A non-empty string; None when absent (or null, where ``optional``)."""
        field = self.fields.get(key)
        if field is None or (optional and field.value is None):
            return None
        if not isinstance(field.value, str) or not field.value.strip():
            self.err(field.line, f"{key!r} must be a non-empty string")
            return None
        return field.value

    def flag(self, key: str, default: bool = False) -> bool:
        field = self.fields.get(key)
        if field is None:
            return default
        if not isinstance(field.value, bool):
            self.err(field.line, f"{key!r} must be true or false")
            return default
        return field.value

    def choice(self, key: str, choices: Iterable[str], default: str) -> str:
        field = self.fields.get(key)
        if field is None:
            return default
        choices = tuple(choices)
        if field.value not in choices:
            self.err(
                field.line,
                f"{key!r} must be one of {', '.join(choices)}, got {field.value!r}",
            )
            return default
        return field.value

    def parameter(self, key: str, signature: Signature | None) -> str | None:
        """A key whose value names a parameter of the signature."""
        field = self.fields.get(key)
        if field is None:
            return None
        value = field.value
        if signature is not None and not (isinstance(value, str) and signature.has(value)):
            self.err(field.line, f"{key!r}: {value!r} is not a parameter")
            return None
        return value

    def parameters(self, key: str, signature: Signature | None) -> tuple[str, ...]:
        """A key whose value is a list of parameter names of the signature."""
        field = self.fields.get(key)
        if field is None or field.value is None:
            return ()
        value = field.value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.err(field.line, f"{key!r} must be a list of parameter names")
            return ()
        for name in value:
            if signature is not None and not signature.has(name):
                self.err(field.line, f"{key}: {name!r} is not a parameter of the signature")
        return tuple(value)

    def signature(self, key: str = "signature", receiver: str = "self") -> Signature | None:
        """The entry's signature: a signature string, or the name of one the file
        declares under ``signatures:``."""
        field = self.fields.get(key)
        if field is None:
            return None
        if (key, receiver) not in self._signatures:  # parsed (and reported) once
            self._signatures[key, receiver] = self._resolve_signature(
                field.value, field.line, self.err, receiver
            )
        return self._signatures[key, receiver]

    def signature_value(
        self, value: Any, line: int, receiver: str = "self"
    ) -> Signature | None:
        """A signature given somewhere else in the entry (``inplace``, ``dunders``)."""
        return self._resolve_signature(value, line, self.err, receiver)
