"""The op families codegen knows: one module per family, each a plug-in.

A family module defines one op type, a frozen dataclass subclassing
:class:`codegen.model.Op`, decorated with :func:`register`. The op type says:

- ``family``: the name a spec file gives (``family: pointwise``); ``spec_file``: the
  file's stem when it is not the family's name;
- ``KEYS``: the entry keys it reads beyond the common ones (``codegen.parse``);
- ``parse(entry)``: a classmethod building the op from an :class:`~codegen.entry.Entry`,
  reporting what is wrong with ``entry.err(line, message)`` (``file:line`` errors);
- ``lazy_way``: how it runs on a lazy stack (``inherit``: no lazy form);
  ``doc_facts()``: extra paragraphs of its reference entry; ``needs_dense_stacks``;
  and whatever properties its template reads.

Its code is a Jinja template, ``codegen/templates/families/<family>.jinja``, whose
macros render the forms (``tensordict``, ``inplace``, ``lazy``; ``forwarder``,
``stub``, ``reference``, ``alias`` default to ``common.jinja``'s): see
``codegen/templating.py``. An op type defined elsewhere sets ``template_dir``.

Every module of this package is imported by :func:`families` (so adding a family is
adding a module); a family defined elsewhere (a test's toy family) calls
:func:`register` itself.
"""

from __future__ import annotations

import importlib
import pkgutil

from codegen.model import Op

_REGISTRY: dict[str, type[Op]] = {}
_LOADED = False


def register(op_type: type[Op]) -> type[Op]:
    """Class decorator: make ``op_type`` the family ``op_type.family``."""
    _REGISTRY[op_type.family] = op_type
    return op_type


def unregister(name: str) -> None:
    """Forget the family ``name`` (tests that add a toy family)."""
    _REGISTRY.pop(name, None)


def families() -> dict[str, type[Op]]:
    """Every registered family, by name (this package's modules imported first)."""
    global _LOADED
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _LOADED = True
    return dict(sorted(_REGISTRY.items()))
