"""Signature strings: parsing (with ``ast``), the names annotations may use, and the
named signatures a spec file declares once under ``signatures:``.

A signature is written as users call it, ``"(self, other: TensorCollection |
torch.Tensor, *, alpha: float | None = None) -> Self"``, and rendered as written (PEP 8
spacing), so that ``inspect.signature`` shows what users already call.
"""

from __future__ import annotations

import ast
import keyword
from typing import Any, Callable

from codegen.checks import resolve_torch
from codegen.model import Param, Signature

# Names a signature's annotations may use; the stub and the generated modules define them.
TYPE_NAMES = frozenset(
    {
        "Any",
        "Callable",
        "CompatibleType",
        "Self",
        "TensorCollection",
        "TensorDictBase",
        "bool",
        "complex",
        "float",
        "int",
        "str",
        "torch",
        # the signatures users call (the API listing of tensordict 0.15.3) also say:
        "Literal",
        "NO_DEFAULT",
        "NestedKey",
        "Tuple",
        "list",
        "tuple",
        "DeviceType",
        "List",
        "Sequence",
        "T",
        "Tensor",
        "dict",
        "np",
    }
)

# Names the generated code uses for its own locals; no parameter may take them.
RESERVED_NAMES = frozenset({"leaves", "new", "rebuild", "torch", "x", "_ops"})

Err = Callable[[int, str], None]


def parse_signature(text: Any, line: int, err: Err, receiver: str = "self") -> Signature | None:
    """``text`` parsed; problems reported through ``err`` (then None)."""
    if not isinstance(text, str) or not text.strip():
        err(line, f"a signature must be a string like '({receiver}) -> Self', got {text!r}")
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
        err(line, f"bad signature {text!r}: the first parameter must be a bare {receiver!r}")
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
    returns = ast.unparse(func.returns) if func.returns is not None else None
    if not _check_params(params, returns, text, line, err):
        return None
    return Signature(params=tuple(params), returns=returns, receiver=receiver)


def _param(arg: ast.arg, kind: str, default: ast.expr | None) -> Param:
    return Param(
        name=arg.arg,
        kind=kind,
        annotation=ast.unparse(arg.annotation) if arg.annotation is not None else None,
        default=ast.unparse(default) if default is not None else None,
    )


def _check_params(params: list[Param], returns: str | None, text, line: int, err: Err) -> bool:
    ok = True
    annotations = [p.annotation for p in params if p.annotation]
    if returns is not None:
        annotations.append(returns)
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
                err(line, f"bad signature {text!r}: the default of {param.name!r} must be a literal")
                ok = False
        if keyword.iskeyword(param.name) or param.name in RESERVED_NAMES:
            err(line, f"bad signature {text!r}: parameter name {param.name!r} is reserved")
            ok = False
    return ok


def _symbolic_default(text: str) -> bool:
    """Defaults that are no literals but are allowed: ``NO_DEFAULT`` and torch
    constants such as ``torch.strided`` (the signatures users call have them)."""
    return text == "NO_DEFAULT" or (text.startswith("torch.") and resolve_torch(text))


class SignatureTable:
    """A spec file's named signatures (``signatures:``) and the signature strings its
    entries write inline: an entry's ``signature`` is either; a string written at two
    places of the file is an error (declare it once, by name)."""

    def __init__(self) -> None:
        self.named: dict[str, tuple[Any, int]] = {}  # name -> (declaration, line)
        self._parsed: dict[tuple[str, str], Signature | None] = {}
        self._inline: dict[str, int] = {}  # normalised text -> first line

    def declare(self, name: str, value: Any, line: int, err: Err) -> None:
        if not name.isidentifier():
            err(line, f"signature name {name!r} must be an identifier")
            return
        self.named[name] = (value, line)

    def check_declarations(self, err: Err) -> None:
        """Every named signature parses, and no two say the same."""
        seen: dict[str, str] = {}
        for name, (_, line) in self.named.items():
            sig = self._named(name, self._receiver_of(name, ()), err, ())
            if sig is None:
                continue
            if sig.text in seen:
                err(line, f"signature {name!r} is the same as {seen[sig.text]!r}")
            seen[sig.text] = name

    def _receiver_of(self, name: str, seen: tuple) -> str:
        """``cls`` for a declaration written ``(cls, ...)``, else ``self``."""
        value = self.named[name][0]
        if isinstance(value, dict) and value.get("extends") in self.named:
            if value["extends"] not in seen:
                return self._receiver_of(value["extends"], seen + (name,))
        text = value if isinstance(value, str) else ""
        return "cls" if text.lstrip("( ").startswith("cls") else "self"

    def resolve(self, value: Any, line: int, err: Err, receiver: str = "self") -> Signature | None:
        """An entry's ``signature``: inline text, or the name of a declared one."""
        if isinstance(value, str) and value.strip().isidentifier():
            name = value.strip()
            if name not in self.named:
                known = ", ".join(sorted(self.named)) or "none declared"
                err(line, f"unknown signature name {name!r} (known: {known})")
                return None
            return self._named(name, receiver, err, ())
        sig = parse_signature(value, line, err, receiver)
        if sig is not None:
            self._note_inline(sig, line, err)
        return sig

    def _note_inline(self, sig: Signature, line: int, err: Err) -> None:
        first = self._inline.setdefault(sig.text, line)
        if first != line:
            err(
                line,
                f"the signature {sig.text!r} is written again (first at line {first}); "
                "declare it once under 'signatures:' and refer to it by name",
            )
        for name, (value, _) in self.named.items():
            if isinstance(value, str) and self._parsed.get((name, sig.receiver)) == sig:
                err(line, f"the signature {sig.text!r} is declared as {name!r}; use the name")

    def _named(self, name: str, receiver: str, err: Err, seen: tuple) -> Signature | None:
        key = (name, receiver)
        if key in self._parsed:
            return self._parsed[key]
        value, line = self.named[name]
        if isinstance(value, str):
            sig = parse_signature(value, line, err, receiver)
        else:
            sig = self._extended(name, value, line, err, receiver, seen)
        self._parsed[key] = sig
        return sig

    def _extended(self, name, value, line, err: Err, receiver, seen) -> Signature | None:
        """``{extends: base, keywords: "k: int = 0, ..."}``: ``base`` with keyword-only
        parameters added (before ``**kwargs``)."""
        if not isinstance(value, dict) or set(value) != {"extends", "keywords"}:
            err(line, f"signature {name!r} must be a string or a mapping with 'extends' and 'keywords'")
            return None
        base = value["extends"]
        if base not in self.named or base in seen + (name,):
            err(line, f"signature {name!r} extends {base!r}, which is not a signature declared before it")
            return None
        parent = self._named(base, receiver, err, seen + (name,))
        extra = parse_signature(f"({receiver}, *, {value['keywords']})", line, err, receiver)
        if parent is None or extra is None:
            return None
        params = list(parent.params)
        tail = [p for p in params if p.kind == "var_keyword"]
        params = [p for p in params if p.kind != "var_keyword"] + list(extra.params) + tail
        clash = {p.name for p in parent.params} & {p.name for p in extra.params}
        if clash:
            err(line, f"signature {name!r} adds parameters {base!r} already has: {sorted(clash)}")
            return None
        return Signature(params=tuple(params), returns=parent.returns, receiver=receiver)
