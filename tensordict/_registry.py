"""The concrete container classes, reached by the layers below them.

Imports point one way (``docs/architecture.md``): ``base`` <- ``_ops`` <- generated and
feature mixins <- concrete classes (``_td``, ``_lazy``, ``tensorclass``) <- persistence,
``nn``, distribution. A lower layer that must build a concrete container (the dense
result of an op on a lazy stack, a tensordict loaded from disk) looks its class up here.
Each concrete class registers itself with :func:`register` where it is defined, and
``import tensordict`` imports them all, so a lookup never needs an import of its own.
"""

from __future__ import annotations

_CLASSES: dict[str, type] = {}


def register(cls: type) -> type:
    """Class decorator: make ``cls`` reachable as ``container_class(cls.__name__)``."""
    _CLASSES[cls.__name__] = cls
    return cls


def container_class(name: str) -> type:
    """The registered concrete class called ``name`` (``"TensorDict"``, ...)."""
    try:
        return _CLASSES[name]
    except KeyError:
        raise LookupError(
            f"no container class {name!r} is registered (registered: "
            f"{sorted(_CLASSES)}); it registers itself when its module is imported"
        ) from None
