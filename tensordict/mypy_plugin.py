"""A mypy plugin: a class decorated with ``@tensorclass`` is, for mypy, the subclass of
``TensorClass`` it becomes at run time, so its ops (``data * 2``, ``data[0]``,
``data.to(...)``) and its constructor's ``batch_size``/``device`` type-check.

Enable it in the user's mypy configuration::

    [mypy]
    plugins = tensordict.mypy_plugin

Without it, ``typing.dataclass_transform`` on ``tensorclass`` still gives type checkers
the fields and the constructor's field arguments (but not the ops, nor
``batch_size=``: a decorator cannot add a base class for a type checker).
"""

from __future__ import annotations

from typing import Callable

from mypy.mro import MroError, calculate_mro
from mypy.nodes import TypeInfo
from mypy.plugin import ClassDefContext, Plugin
from mypy.types import Instance

_DECORATOR = "tensordict.tensorclass.tensorclass"
_BASE = "tensordict.tensorclass.TensorClass"


def _derive_from_tensorclass(ctx: ClassDefContext) -> bool:
    """Give the class ``TensorClass`` as a base (once semantic analysis is done)."""
    info = ctx.cls.info
    if any(base.fullname == _BASE for base in info.mro):
        return True
    symbol = ctx.api.lookup_fully_qualified_or_none(_BASE)
    if symbol is None or not isinstance(symbol.node, TypeInfo):
        return False  # not analysed yet: mypy calls again
    info.bases = [b for b in info.bases if b.type.fullname != "builtins.object"]
    info.bases.append(Instance(symbol.node, []))
    try:
        info.mro = []  # linearize_hierarchy returns a computed mro as it is
        calculate_mro(info)
    except MroError:
        ctx.api.fail("@tensorclass: this class cannot derive from TensorClass", ctx.cls)
    return True


class TensorclassPlugin(Plugin):
    def get_class_decorator_hook_2(
        self, fullname: str
    ) -> Callable[[ClassDefContext], bool] | None:
        return _derive_from_tensorclass if fullname == _DECORATOR else None


def plugin(version: str) -> type[Plugin]:
    return TensorclassPlugin
