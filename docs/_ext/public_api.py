"""The public API of ``tensordict``, discovered from the package itself.

One list serves the site (``docs/_ext/apipages.py`` writes a reference page per
namespace from it) and the tests (``tests/test_docs_reference.py`` fails on a public
name without a docstring or without an example). Nothing here is a hand-kept list of
names: a module's ``__all__`` (or, where it has none, the functions and classes it
defines) and a class's public attributes are read at run time, so a name another
contributor adds is covered the moment it is exported.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import torch

#: Modules whose public names are documented, and the page each goes to.
MODULES = {
    "tensordict": "tensordict",
    "tensordict.nn": "nn",
    "tensordict.utils": "utils",
    "tensordict.functional": "functional",
    "tensordict.tensorclass": "tensorclass",
    "tensordict.memmap": "memmap",
    "tensordict.persistent": "persistent",
}

PAGE_MODULES = {page: module for module, page in MODULES.items()}

#: Container classes whose public attributes are documented one by one. ``TensorDict``
#: gets all of its attributes; the others the ones ``TensorDict`` lacks or that they
#: define themselves (where they differ).
BASE_CLASS = "tensordict.TensorDict"
CLASSES = [
    "tensordict.TensorDict",
    "tensordict.LazyStackedTensorDict",
    "tensordict.TensorClass",
    "tensordict.NonTensorData",
    "tensordict.NonTensorStack",
    "tensordict.MetaData",
    "tensordict.TypedTensorDict",
    "tensordict.MemoryMappedTensor",
    "tensordict.PersistentTensorDict",
    "tensordict.nn.TensorDictParams",
]


@dataclass(frozen=True)
class Name:
    """One public name: ``qualname`` is how the reference spells it."""

    qualname: str  # e.g. "tensordict.TensorDict.apply"
    page: str  # the reference page it belongs on
    obj: Any  # the object (for a method: the attribute as found on the class)
    kind: str  # "module attribute", "class", "function", "method", "attribute"


def resolve(dotted: str) -> Any:
    module, _, attr = dotted.rpartition(".")
    try:
        return importlib.import_module(dotted)
    except ImportError:
        return getattr(resolve(module), attr)


def module_names(modname: str) -> list[str]:
    module = importlib.import_module(modname)
    names = getattr(module, "__all__", None)
    if names is None:  # the functions and classes the module defines itself
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and (inspect.isfunction(v) or inspect.isclass(v))
            and getattr(v, "__module__", "") == modname
        ]
    return sorted(set(names))


def _defined_in_tensordict(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("tensordict")
    return False


def class_names(dotted: str) -> list[str]:
    cls = resolve(dotted)
    public = {n for n in dir(cls) if not n.startswith("_")}
    public = {n for n in public if _defined_in_tensordict(cls, n)}
    if dotted != BASE_CLASS:
        base = resolve(BASE_CLASS)
        if issubclass(cls, torch.Tensor):  # not a container: what it adds to Tensor
            public = {n for n in public if not hasattr(torch.Tensor, n) or n in vars(cls)}
        else:  # a container: what TensorDict lacks (the rest is on TensorDict's page)
            public = {n for n in public if not hasattr(base, n)}
    return sorted(public)


def iter_names() -> Iterator[Name]:
    """Every public name, each once per place a user looks it up."""
    for modname, page in MODULES.items():
        module = importlib.import_module(modname)
        for n in module_names(modname):
            obj = getattr(module, n)
            kind = (
                "class"
                if inspect.isclass(obj)
                else "function" if callable(obj) else "module attribute"
            )
            yield Name(f"{modname}.{n}", page, obj, kind)
    for dotted in CLASSES:
        cls = resolve(dotted)
        for n in class_names(dotted):
            obj = inspect.getattr_static(cls, n)
            kind = "attribute" if isinstance(obj, property) else "method"
            yield Name(f"{dotted}.{n}", "class-" + dotted.rsplit(".", 1)[1], obj, kind)


def is_constant(obj: Any) -> bool:
    return isinstance(obj, (str, int, float, tuple, type(None), enum.Enum))


def constant_doc(name: str) -> str:
    """The ``#:`` comment above ``name = ...`` in the package's source (Sphinx's
    convention for documenting a constant), or ``""``."""
    package = Path(importlib.import_module("tensordict").__file__).parent
    pattern = re.compile(rf"((?:^[ \t]*#:.*\n)+)^{re.escape(name)}\s*[:=]", re.M)
    for path in sorted(package.rglob("*.py")):
        match = pattern.search(path.read_text(encoding="utf-8"))
        if match:
            lines = match.group(1).strip().splitlines()
            return "\n".join(line.strip()[2:].strip() for line in lines)
    return ""


def python_twin(name: Name) -> Any:
    """For a read that runs in C (``TensorDict.get``/``keys``/``values``/``items``,
    ``tensordict/_fastreads.c``), the Python method it stands for, whose docstring is
    the reference; otherwise ``None``."""
    if type(name.obj).__name__ != "method_descriptor":
        return None
    from tensordict import _hotreads

    owner, _, attr = name.qualname.rpartition(".")
    twin = _hotreads._C_METHODS.get(attr)
    return getattr(resolve(owner), twin, None) if twin else None


def docstring(name: Name) -> str:
    """What the reference shows for ``name`` (its docstring, cleaned)."""
    obj = python_twin(name) or name.obj
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if is_constant(obj):
        return constant_doc(name.qualname.rsplit(".", 1)[1])
    return inspect.getdoc(obj) or ""
