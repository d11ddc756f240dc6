"""TensorDict's hot dict-like reads in C, optional: ``td[key]``, ``td.get(key)`` and
``td.keys()``/``values()``/``items()`` (issue 15: within 1.5x of a plain dict).

``ReadsBase`` is TensorDict's first base. Where the C extension (``tensordict/_fastreads.c``)
is built and ``TENSORDICT_NO_C`` is not set, it is the extension's type, which holds
the storage dict (``_tensordict``) as a C member, and :func:`install` replaces these
reads on TensorDict with the extension's: they answer the common case in C and hand
every other call to TensorDict's Python method of the same read (``_getitem_py``,
``_get_py``, ...). Otherwise ``ReadsBase`` is a Python class holding only that slot,
and the Python methods answer. Either way the Python methods are the reference
behaviour; ``tests/test_hotreads.py`` runs the reads on both paths.

torch.compile cannot trace a C method of a user type, so :func:`install` registers each
Python method with dynamo as the traceable stand-in of its C method (at dynamo's import:
importing it here would add over a second to ``import tensordict``). For ``td[key]``
the class keeps a Python ``__getitem__`` (:func:`_subscript`), which dynamo traces,
while CPython calls the C slot.
"""

from __future__ import annotations

import collections.abc
import importlib.abc
import importlib.machinery
import os
import sys
from typing import TYPE_CHECKING

import torch

#: Set (to anything but "" or "0") to use the pure-Python reads even where the C
#: extension is built: read once, at import.
NO_C_VARIABLE = "TENSORDICT_NO_C"

#: torch.compile traces through the C reads (their Python stand-ins, registered with
#: ``torch.compiler.substitute_in_graph``) from this torch on; torch 2.11's dynamo
#: breaks the graph at a substituted method of a user type, so older torch runs the
#: Python reads.
C_READS_MIN_TORCH = (2, 13)


def _torch_version() -> tuple:
    release = torch.__version__.split("+")[0].split(".")
    return tuple(int(part) for part in release[:2] if part.isdigit())


if os.environ.get(NO_C_VARIABLE, "") not in ("", "0"):
    _fastreads = None
elif _torch_version() < C_READS_MIN_TORCH:
    _fastreads = None
else:
    try:
        import tensordict._fastreads as _fastreads
    except ImportError:  # not built: a machine without a C compiler
        _fastreads = None

#: Whether TensorDict's reads run in C in this process.
C_READS = _fastreads is not None

# The methods the C module sets on TensorDict, each with the Python method it falls
# back to (and that torch.compile traces in its place).
_C_METHODS = {
    "get": "_get_py",
    "keys": "_keys_py",
    "values": "_values_py",
    "items": "_items_py",
}

# (type checkers see the Python class: the C type's methods are TensorDict's, typed there)
if TYPE_CHECKING or _fastreads is None:

    class ReadsBase:
        """The pure-Python stand-in of the C base: the storage slot alone."""

        __slots__ = ("_tensordict",)

else:
    ReadsBase = _fastreads.FastReads


class _StringKeys:
    """``td.keys()``: the storage dict's live keys view, where ``in`` takes a key as
    0.15.3's view does: a str, or a non-empty tuple of str (``("a",)`` is ``"a"``; a
    longer tuple is a nested key, never among one level's keys); anything else raises
    ``TypeError``. Iteration, ``len``, comparisons and set operators are the dict
    view's. The C extension's ``_StringKeys`` is the same, faster; this one answers
    without it.

    >>> td = TensorDict(a=torch.zeros(2))
    >>> "a" in td.keys(), ("a",) in td.keys(), ("a", "b") in td.keys()
    (True, True, False)
    """

    __slots__ = ("_view",)

    def __init__(self, view) -> None:
        self._view = view

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return key in self._view
        if (
            isinstance(key, tuple)
            and key
            and all(isinstance(part, str) for part in key)
        ):
            return len(key) == 1 and key[0] in self._view
        raise TypeError(
            "TensorDict keys are always strings. Membership checks are only "
            "supported for strings or non-empty tuples of strings (for nested "
            f"TensorDicts); got {key!r}"
        )

    def __iter__(self):
        return iter(self._view)

    def __reversed__(self):
        return reversed(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __repr__(self) -> str:
        return f"_StringKeys({self._view!r})"

    __hash__ = None

    def isdisjoint(self, other) -> bool:
        return self._view.isdisjoint(_unwrap_keys(other))


def _unwrap_keys(obj):
    return obj._view if type(obj) is _StringKeys else obj


def _delegate(name: str):
    def method(self, other):
        return getattr(self._view, name)(_unwrap_keys(other))

    method.__name__ = name
    return method


def _reflected(op):
    def method(self, other):
        return op(_unwrap_keys(other), self._view)

    return method


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(_StringKeys, _name, _delegate(_name))
for _name, _op in (
    ("and", lambda a, b: a & b),
    ("or", lambda a, b: a | b),
    ("xor", lambda a, b: a ^ b),
    ("sub", lambda a, b: a - b),
):
    setattr(_StringKeys, f"__{_name}__", _delegate(f"__{_name}__"))
    setattr(_StringKeys, f"__r{_name}__", _reflected(_op))
del _name, _op

#: What ``td.keys()`` returns (``_StringKeys(view)``): the C type where the extension
#: runs, else the Python one; either is a ``collections.abc.KeysView``.
#: (An extension built from an older source lacks the C type: the Python one answers.)
StringKeys = getattr(_fastreads, "_StringKeys", _StringKeys)


def string_keys(view):
    """``view`` (a dict's keys view) as ``td.keys()`` returns it: :data:`StringKeys`,
    or the Python class where torch.compile traces the call (dynamo cannot build an
    instance of a C type)."""
    if StringKeys is not _StringKeys and torch.compiler.is_compiling():
        return _StringKeys(view)
    return StringKeys(view)


collections.abc.KeysView.register(_StringKeys)
if StringKeys is not _StringKeys:
    collections.abc.KeysView.register(StringKeys)


def install(cls: type) -> None:
    """Wire the C reads into ``cls`` (TensorDict, after its class body): its
    ``get``/``keys``/``values``/``items`` become the C methods, ``td[key]`` runs C.
    Without the extension, nothing to do: the class's own Python methods answer."""
    if _fastreads is None:
        return
    cls.__getitem__ = _subscript  # before install: assigning it resets the C slot
    _fastreads.install(cls, torch.Tensor)
    _when_dynamo_imported(lambda: _register_with_dynamo(cls))


def install_subclass(cls: type) -> None:
    """``td[key]`` in C for a subclass of TensorDict too, unless it defines its own
    ``__getitem__`` (a class's slot is made at its creation, from the Python method)."""
    if _fastreads is not None and cls.__getitem__ is _subscript:
        _fastreads.install_subscript(cls)


def _subscript(self, index, *_not_inlined):
    """``td[index]`` as torch.compile traces it (TensorDict's Python ``__getitem__``);
    CPython runs the C slot instead. The ``*`` parameter keeps CPython 3.11+ from
    specialising ``td[index]`` into a call of this function (it does so for a plain
    ``(self, index)`` function, bypassing the slot); extra arguments raise there."""
    return self._getitem_py(index, *_not_inlined)


def _register_with_dynamo(cls: type) -> None:
    for name, python_name in _C_METHODS.items():
        torch.compiler.substitute_in_graph(
            cls.__dict__[name], skip_signature_check=True
        )(getattr(cls, python_name))


def _when_dynamo_imported(callback) -> None:
    """Run ``callback`` once ``torch._dynamo`` is imported: now if it is, else right
    after its import (whoever triggers it: torch.compile, torch.export, ...)."""
    if "torch._dynamo" in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImport("torch._dynamo", callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the import of ``name``, it lets the usual finder find
    the module and has ``callback`` run once the module has run."""

    def __init__(self, name: str, callback) -> None:
        self._name = name
        self._callback = callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        callback = self._callback

        def exec_then_callback(module) -> None:
            exec_module(module)
            callback()

        spec.loader.exec_module = exec_then_callback
        return spec
