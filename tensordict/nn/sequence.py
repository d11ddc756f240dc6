"""TensorDictSequential: tensordict modules run one after the other on one tensordict.

Each module reads what it needs from the tensordict and writes its outputs into it, so a
module can read the input as well as the outputs of any module before it. The
sequence's ``in_keys`` are the keys some module reads that no earlier module writes; its
``out_keys`` every key a module writes, in the order of their last writers.
"""

from __future__ import annotations

import collections
from typing import Callable, Iterable

from torch import nn

from tensordict import _errors
from tensordict._keys import NestedKey, unravel_key, unravel_key_list
from tensordict.base import TensorDictBase
from tensordict.nn.common import (
    TensorDictModule,
    TensorDictModuleBase,
    WrapModule,
    _call_with_tensors,
    _describe,
    _key_list,
)
from tensordict.nn.utils import _SKIP_EXISTING, outputs_exist

__all__ = ["TensorDictSequential"]


def _as_module(module) -> TensorDictModuleBase:
    """A sequence's element: tensordict modules as they are, other callables (functions
    of a tensordict) wrapped in a :class:`WrapModule`."""
    if isinstance(module, nn.Module) and TensorDictModuleBase.is_tdmodule_compatible(
        module
    ):
        return module
    if TensorDictModuleBase.is_tdmodule_compatible(module):  # a keyed function
        return WrapModule(module, in_keys=module.in_keys, out_keys=module.out_keys)
    if callable(module):
        return WrapModule(module)
    raise TypeError(
        f"TensorDictSequential takes tensordict modules or functions of a tensordict, "
        f"got {type(module).__name__}"
    )


def _subsequence_keys(keys) -> list:
    """The keys given to :meth:`TensorDictSequential.select_subsequence`: one key, or
    a list or tuple of keys (a tuple is a list of keys here, as in 0.15.3)."""
    if isinstance(keys, str):
        return [keys]
    return [unravel_key(key) for key in keys]


def _sequence_keys(modules) -> tuple[list, list]:
    """``(in_keys, out_keys)`` of modules run in order (see the module docstring)."""
    in_keys: list = []
    out_keys: list = []
    for module in modules:
        for key in module.in_keys:
            if key not in out_keys and key not in in_keys:
                in_keys.append(key)
        for key in module.out_keys:  # a key written again moves to its last writer
            if key in out_keys:
                out_keys.remove(key)
            out_keys.append(key)
    return in_keys, out_keys


class TensorDictSequential(TensorDictModule):
    """Run tensordict modules one after the other on the same tensordict.

    Args:
        *modules: tensordict modules, or functions of a tensordict (wrapped in a
            :class:`WrapModule`); or one ``OrderedDict`` naming them, so that
            ``sequence["name"]`` works.

    Keyword Args:
        partial_tolerant: skip a module whose inputs are missing instead of raising
            (on a lazy stack, run it on the stacked tensordicts that have them).
        selected_out_keys: return only these outputs (see
            :meth:`select_out_keys`).
        inplace: ``True`` (or ``None``, the default) writes into the input; ``False``
            returns a new tensordict holding only the outputs.

    ``in_keys`` are the keys a module reads and no earlier one writes; ``out_keys``
    the keys the modules write. :meth:`select_subsequence` keeps only the modules a
    set of inputs or outputs needs; indexing, slicing and ``len`` work as on a list.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> from tensordict.nn import TensorDictModule
    >>> add = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    >>> mul = TensorDictModule(lambda y, z: y * z, in_keys=["y", "z"], out_keys=["w"])
    >>> sequence = TensorDictSequential(add, mul)
    >>> sequence.in_keys, sequence.out_keys
    (['x', 'z'], ['y', 'w'])
    >>> sequence(TensorDict(x=torch.ones(2), z=torch.full((2,), 3.0)))["w"]
    tensor([6., 6.])
    """

    # Defaults for subclasses that build the sequence without this ``__init__``
    # (TorchRL's ``SafeSequential`` calls ``TensorDictModule.__init__`` with the
    # ``nn.ModuleList`` and the keys of :meth:`_compute_in_and_out_keys`).
    partial_tolerant = False
    inplace = None
    _selected = None

    def __init__(
        self,
        *modules: Callable,
        partial_tolerant: bool = False,
        selected_out_keys: list | None = None,
        inplace: bool | str | None = None,
    ) -> None:
        TensorDictModuleBase.__init__(self)
        if len(modules) == 1 and isinstance(modules[0], dict):  # named, in order
            self.module = nn.ModuleDict(
                {name: _as_module(m) for name, m in modules[0].items()}
            )
        else:
            self.module = nn.ModuleList([_as_module(m) for m in modules])
        if inplace not in (None, True, False, "empty"):
            raise ValueError(
                f"TensorDictSequential: inplace must be None, True, False or 'empty', "
                f"got {inplace!r}"
            )
        self.partial_tolerant = partial_tolerant
        self.inplace = inplace
        self._selected = (
            None
            if selected_out_keys is None
            else _key_list(selected_out_keys, "selected_out_keys")
        )
        self._refresh()

    # ------------------------------------------------------------------ keys
    def _modules_in_order(self) -> list:
        module = self.module
        if isinstance(module, nn.ModuleDict):
            return list(module.values())
        return list(module)

    @property
    def _sequence(self) -> list:
        """The modules in order (kept by :meth:`_refresh`; read from ``self.module``
        when a subclass built the sequence without ``__init__``)."""
        modules = self.__dict__.get("_sequence_cache")
        return self._modules_in_order() if modules is None else modules

    def _compute_in_and_out_keys(self, modules) -> tuple[list, list]:
        """``(in_keys, out_keys)`` of ``modules`` run in order: the keys some module
        reads that no earlier one writes, and every key written (0.15.3's name, which
        TorchRL's ``SafeSequential`` calls before ``nn.Module.__init__``)."""
        return _sequence_keys(modules)

    def _refresh(self) -> None:
        """Recompute what depends on the list of modules (after any change)."""
        self.__dict__["_sequence_cache"] = self._modules_in_order()
        self.in_keys, source = _sequence_keys(self._sequence)
        self.__dict__.pop("_out_keys_source", None)
        self.__dict__.pop("_dropped_out_keys", None)
        if self._selected is None:
            self.out_keys = source
            return
        unknown = [key for key in self._selected if key not in source]
        if unknown:
            raise _errors.OutKeyNotFoundError(
                f"All keys in selected_out_keys must be in out_keys. "
                f"TensorDictSequential: selected_out_keys {unknown} are not written "
                f"by any module (the modules write {source})"
            )
        self.__dict__["_out_keys_source"] = source
        self.__dict__["_dropped_out_keys"] = [
            k for k in source if k not in self._selected
        ]
        self.out_keys = [key for key in source if key in self._selected]

    @property
    def _select_before_return(self) -> bool:
        """Whether :meth:`select_out_keys` is in force (0.15.3's private name)."""
        return self._selected is not None

    def select_out_keys(self, *selected_out_keys: NestedKey) -> "TensorDictSequential":
        """Return only these outputs; the other keys the modules write are removed from
        the result, unless they were in the input already. In place; returns self."""
        for key in selected_out_keys:  # 0.15.3's phrase first
            if not isinstance(key, (str, tuple)):
                raise RuntimeError(
                    f"key should be a Sequence<NestedKey>: select_out_keys takes the "
                    f"keys unpacked (select_out_keys('a', 'b')), got {key!r}"
                )
        previous = self._selected
        self._selected = unravel_key_list(list(selected_out_keys))
        try:
            self._refresh()
        except KeyError:
            self._selected = previous  # a refused selection changes nothing
            self._refresh()
            raise
        return self

    def reset_out_keys(self) -> "TensorDictSequential":
        """Return every output again (undo :meth:`select_out_keys`)."""
        self._selected = None
        self._refresh()
        return self

    # ------------------------------------------------------------------ list-like
    def __len__(self) -> int:
        return len(self._sequence)

    def __getitem__(self, index: int | slice | str):
        if isinstance(index, str):
            if not isinstance(self.module, nn.ModuleDict):
                raise KeyError(
                    f"TensorDictSequential[{index!r}]: the modules have no names (build "
                    f"the sequence from an OrderedDict to name them)"
                )
            return self.module[index]
        if isinstance(index, slice):
            return self._with_modules(self._sequence[index])
        return self._sequence[index]

    def __setitem__(self, index: int | str, module) -> None:
        self.module[index] = _as_module(module)
        self._refresh()

    def __delitem__(self, index: int | slice | str) -> None:
        del self.module[index]
        self._refresh()

    def _with_modules(self, modules: list) -> "TensorDictSequential":
        """A sequence of ``modules`` with this one's options (indexing by a slice,
        :meth:`select_subsequence`)."""
        return TensorDictSequential(
            *modules, partial_tolerant=self.partial_tolerant, inplace=self.inplace
        )

    def select_subsequence(
        self,
        in_keys: Iterable[NestedKey] | None = None,
        out_keys: Iterable[NestedKey] | None = None,
    ) -> "TensorDictSequential":
        """The sequence of only the modules needed: given ``in_keys`` (the inputs
        available), the modules that can run from them and from the outputs of the
        modules kept before; given ``out_keys``, the modules those outputs depend on.

        >>> import torch
        >>> from tensordict.nn import TensorDictModule
        >>> a = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["a"])
        >>> b = TensorDictModule(lambda x: x * 2, in_keys=["x"], out_keys=["b"])
        >>> c = TensorDictModule(lambda a: a - 1, in_keys=["a"], out_keys=["c"])
        >>> sub = TensorDictSequential(a, b, c).select_subsequence(out_keys=["c"])
        >>> len(sub), sub.out_keys
        (2, ['a', 'c'])
        """
        names = list(self.module) if isinstance(self.module, nn.ModuleDict) else None
        modules = list(enumerate(self._sequence))  # (position, module)
        if in_keys is not None:
            # the modules that read a changed key, the keys they write changed in turn
            changed = set(_subsequence_keys(in_keys))
            kept = []
            for position, module in modules:
                if isinstance(module, TensorDictSequential):
                    module = module._subsequence_or_none(in_keys=list(changed))
                elif not any(key in changed for key in module.in_keys):
                    module = None
                if module is not None:
                    kept.append((position, module))
                    changed.update(module.out_keys)
            modules = kept
        if out_keys is not None:
            # the modules whose outputs are needed, their inputs needed in turn
            needed = set(_subsequence_keys(out_keys))
            kept = []
            for position, module in reversed(modules):
                if isinstance(module, TensorDictSequential):
                    module = module._subsequence_or_none(out_keys=list(needed))
                elif not any(key in needed for key in module.out_keys):
                    module = None
                if module is not None:
                    kept.append((position, module))
                    needed.update(module.in_keys)
            modules = kept[::-1]
        if not modules:
            raise ValueError(
                f"select_subsequence(in_keys={in_keys}, out_keys={out_keys}): no module "
                f"of {_describe(self)} is left; the modules read and write "
                f"{[(m.in_keys, m.out_keys) for m in self._sequence]}"
            )
        if names is not None:  # the kept modules keep their names
            return self._with_modules(
                [collections.OrderedDict((names[i], m) for i, m in modules)]
            )
        return self._with_modules([module for _, module in modules])

    def _subsequence_or_none(self, **keys) -> "TensorDictSequential | None":
        """:meth:`select_subsequence` of a nested sequence; None when no module of it
        is left."""
        try:
            return self.select_subsequence(**keys)
        except ValueError:
            return None

    # ------------------------------------------------------------------ running
    def forward(
        self,
        tensordict: TensorDictBase | None = None,
        *args,
        tensordict_out: TensorDictBase | None = None,
        **kwargs,
    ) -> TensorDictBase:
        """Run the modules in order on ``tensordict`` (extra keyword arguments go to
        every module); tensors instead of a tensordict work as for
        :class:`TensorDictModule`."""
        if not isinstance(tensordict, TensorDictBase):
            positional = args if tensordict is None else (tensordict, *args)
            return _call_with_tensors(self, positional, kwargs)
        mode = _SKIP_EXISTING.get()
        if mode is not False and outputs_exist(
            tensordict, self.in_keys, self.out_keys, mode
        ):
            return tensordict
        inplace = self.inplace
        dropped = self.__dict__.get("_dropped_out_keys")
        if dropped:
            had = [key for key in dropped if key in tensordict.keys(True)]
        # with tensordict_out, the input is left as it is
        td = (
            tensordict
            if (inplace is None or inplace is True) and tensordict_out is None
            else tensordict.copy()
        )
        td = self._run_modules(td, kwargs)
        if inplace is True and td is not tensordict and tensordict_out is None:
            td = tensordict.update(td)  # modules that return a new tensordict
        if dropped:  # removed in place: the input tensordict is returned
            for key in dropped:
                if key not in had and key in td.keys(True):
                    td.del_(key)
        if inplace is False or inplace == "empty":
            written = [key for key in self.out_keys if key in td.keys(True)]
            outputs = td.select(*written)
            td = outputs if inplace is False else tensordict.empty().update(outputs)
        if tensordict_out is not None:
            written = [key for key in self.out_keys if key in td.keys(True)]
            return tensordict_out.update(td.select(*written))
        return td

    forward._handles_calls = True

    def _run_modules(self, td: TensorDictBase, kwargs: dict) -> TensorDictBase:
        """Run every module on ``td`` in turn (``kwargs`` to each); the result."""
        if self.partial_tolerant:
            for module in self._sequence:
                td = self._run_tolerant(module, td, kwargs)
        elif kwargs:
            for module in self._sequence:
                td = module(td, **kwargs)
        else:
            for module in self._sequence:
                td = module(td)
        return td

    @staticmethod
    def _run_tolerant(module, td, kwargs):
        """Run ``module`` where its inputs are present: on the whole tensordict, on the
        stacked tensordicts of a lazy stack that have them, or not at all."""
        keys = td.keys(True)
        if all(key in keys for key in module.in_keys):
            return module(td, **kwargs)
        members = getattr(td, "tensordicts", None)
        if members is not None:
            for member in members:
                member_keys = member.keys(True)
                if all(key in member_keys for key in module.in_keys):
                    module(member, **kwargs)
        return td

    def extra_repr(self) -> str:
        parts = [f"in_keys={self.in_keys}", f"out_keys={self.out_keys}"]
        if self.partial_tolerant:
            parts.append("partial_tolerant=True")
        if self.inplace is not None:
            parts.append(f"inplace={self.inplace!r}")
        return ", ".join(parts)
