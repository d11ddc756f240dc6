"""``TypedTensorDict``: a tensordict whose fields are declared as class annotations.

Code written for 0.15.3 declares a schema the way a ``TypedDict`` does::

    class State(TypedTensorDict):
        eta: torch.Tensor
        X: torch.Tensor
        mask: torch.Tensor = None      # a default: the field may be left out

and gets attribute access (``state.eta``) next to ``state["eta"]``, a constructor that
takes the fields by keyword (or one mapping) and refuses missing or unknown fields with
``TypeError``, inheritance of fields, ``**state`` unpacking, and every tensordict op,
whose result is of the class where the op keeps the keys. ``State.from_tensordict(td)``
gives typed access to an existing tensordict without copying it (writes go through).

It is a tensorclass underneath (``tensordict/tensorclass.py``): the class options
``shadow`` and ``frozen`` work as there (``class S(TypedTensorDict, frozen=True)`` or
``TypedTensorDict["frozen"]``), and ``is_tensorclass`` is true of it, where 0.15.3 says
otherwise. Unlike a tensorclass, keys that are not fields may be added with ``set``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tensordict._registry import register
from tensordict._td import TensorDict
from tensordict.base import TensorDictBase
from tensordict.tensorclass import TensorClass

__all__ = ["TypedTensorDict"]


@register
class TypedTensorDict(TensorClass):
    """A tensordict whose fields are the class's annotations (see the module
    docstring). Construct with ``State(eta=..., X=..., batch_size=[5])`` or
    ``State({"eta": ..., "X": ...}, batch_size=[5])``; ``device``, ``names`` and
    ``lock`` as for ``TensorDict``.

    >>> class Obs(TypedTensorDict):
    ...     pixels: torch.Tensor
    >>> obs = Obs(pixels=torch.zeros(4, 3), batch_size=[4])
    >>> obs.pixels.shape
    torch.Size([4, 3])
    """

    __slots__ = ()
    _lazy_stack_keeps_class = False  # lazy stacks are LazyStackedTensorDicts (0.15.3)

    def __init_subclass__(cls, **options):
        own_init = "__init__" in cls.__dict__
        super().__init_subclass__(**options)
        if not own_init:  # the typed constructor, not the tensorclass one
            cls.__init__ = TypedTensorDict.__init__

    def __init__(
        self,
        source: Any = None,
        *,
        batch_size=None,
        device=None,
        names=None,
        non_blocking: bool | None = None,
        lock: bool = False,
        **fields: Any,
    ) -> None:
        cls = type(self)
        values = dict(source.items() if source is not None else ())
        values.update(fields)
        _check_fields(cls, values, f"{cls.__name__}()")
        for name, field in cls.__dataclass_fields__.items():
            if name not in values and _has_default(cls, name):
                if field.default_factory is not dataclasses.MISSING:
                    values[name] = field.default_factory()
                else:
                    values[name] = field.default
        td = TensorDict(
            {k: v for k, v in values.items() if v is not None},
            batch_size=batch_size,
            device=device,
            names=names,
            non_blocking=non_blocking,
        )
        object.__setattr__(self, "_tensordict", td)
        if lock or "frozen" in cls._tc_options:
            td.lock_()

    @classmethod
    def from_tensordict(cls, tensordict: TensorDictBase, *args, **kwargs):
        """Typed access to ``tensordict`` without copying it: reads and writes go
        through to it. ``TypeError`` when a required field is missing.

        >>> class Obs(TypedTensorDict):
        ...     pixels: torch.Tensor
        >>> td = TensorDict(pixels=torch.zeros(2, 3), batch_size=[2])
        >>> Obs.from_tensordict(td).pixels is td["pixels"]
        True
        """
        source = getattr(tensordict, "_tensordict", tensordict) if getattr(
            tensordict, "_is_tensorclass", False
        ) else tensordict
        if not isinstance(source, TensorDictBase):
            raise TypeError(
                f"{cls.__name__}.from_tensordict expects a tensordict, got "
                f"{type(tensordict).__name__}"
            )
        _check_fields(cls, dict.fromkeys(source.keys()), f"{cls.__name__}.from_tensordict()",
                      unknown_ok=True)
        return cls._from_td(source)


def _check_fields(cls, values: dict, call: str, unknown_ok: bool = False) -> None:
    """``TypeError`` naming the required fields ``values`` lacks and the names in it
    that are not fields."""
    missing = [
        spec.name
        for spec in cls._tc_field_list
        if spec.name not in values and not _has_default(cls, spec.name)
    ]
    if missing:
        raise TypeError(f"{call} missing required field(s): {', '.join(missing)}")
    if not unknown_ok:
        unknown = [k for k in values if k not in cls._tc_fields]
        if unknown:
            raise TypeError(
                f"{call} got unexpected field(s): {', '.join(map(str, unknown))} "
                f"(the fields of {cls.__name__} are {', '.join(cls._tc_fields)})"
            )


def _has_default(cls, name: str) -> bool:
    field = cls.__dataclass_fields__.get(name)
    if field is None:
        return False
    return (
        field.default is not dataclasses.MISSING
        or field.default_factory is not dataclasses.MISSING
    )
