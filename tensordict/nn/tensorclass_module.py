"""Modules between tensorclasses: ``TensorClassModuleBase[In, Out]`` maps an instance
of tensorclass ``In`` to one of ``Out``; ``as_td_module()`` turns it into a module of
tensordicts reading ``In``'s fields and writing ``Out``'s."""

from __future__ import annotations

import typing
from typing import Generic, TypeVar

from torch import nn

from tensordict.base import TensorDictBase
from tensordict.tensorclass import is_tensorclass
from tensordict.nn.common import TensorDictModuleBase

__all__ = ["TensorClassModuleBase", "TensorClassModuleWrapper"]

InputClass = TypeVar("InputClass")
OutputClass = TypeVar("OutputClass")


def _tensorclass_keys(cls: type) -> list:
    """The keys of a tensorclass's tensor fields (nested tensorclass fields give
    nested keys)."""
    keys = []
    for spec in getattr(cls, "_tc_field_list", ()):
        nested = getattr(spec, "tc_cls", None)
        if nested is not None:
            keys.extend(
                (spec.name, *k) if isinstance(k, tuple) else (spec.name, k)
                for k in _tensorclass_keys(nested)
            )
        else:
            keys.append(spec.name)
    return keys


class TensorClassModuleBase(Generic[InputClass, OutputClass], nn.Module):
    """Base of modules whose ``forward`` takes an instance of tensorclass
    ``InputClass`` and returns one of ``OutputClass``, declared as
    ``class M(TensorClassModuleBase[In, Out])``. ``in_keys`` / ``out_keys`` are the
    two classes' fields.

    >>> import torch
    >>> from tensordict import TensorClass, TensorDict
    >>> class In(TensorClass):
    ...     a: torch.Tensor
    >>> class Out(TensorClass):
    ...     b: torch.Tensor
    >>> class AddOne(TensorClassModuleBase[In, Out]):
    ...     def forward(self, x: In) -> Out:
    ...         return Out(b=x.a + 1, batch_size=x.batch_size)
    >>> AddOne().as_td_module()(TensorDict(a=torch.zeros(2), batch_size=[2]))["b"]
    tensor([1., 1.])
    """

    input_class: type | None = None
    output_class: type | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is TensorClassModuleBase:
                cls.input_class, cls.output_class = typing.get_args(base)
        if cls.input_class is not None:
            cls.in_keys = _tensorclass_keys(cls.input_class)
        if cls.output_class is not None:
            cls.out_keys = _tensorclass_keys(cls.output_class)

    def forward(self, x):
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def as_td_module(self) -> "TensorClassModuleWrapper":
        """This module as a module of tensordicts."""
        return TensorClassModuleWrapper(self)


class _NotTensorClassesError(TypeError, ValueError):
    """as_td_module() of a module whose classes are not tensorclasses (0.15.3 raises
    ValueError)."""


class TensorClassModuleWrapper(TensorDictModuleBase):
    """A :class:`TensorClassModuleBase` as a module of tensordicts: it builds the
    input instance from the tensordict's entries at ``in_keys`` and returns the
    output instance's entries as a tensordict.

    >>> import torch
    >>> from tensordict import TensorClass, TensorDict
    >>> class Obs(TensorClass):
    ...     x: torch.Tensor
    >>> class Action(TensorClass):
    ...     action: torch.Tensor
    >>> class Policy(TensorClassModuleBase[Obs, Action]):
    ...     def forward(self, obs: Obs) -> Action:
    ...         return Action(action=obs.x * 2, batch_size=obs.batch_size)
    >>> module = TensorClassModuleWrapper(Policy())
    >>> module.in_keys, module.out_keys
    (['x'], ['action'])
    >>> out = module(TensorDict(x=torch.ones(3), other=torch.zeros(3), batch_size=[3]))
    >>> type(out).__name__, out["action"].tolist()
    ('TensorDict', [2.0, 2.0, 2.0])
    """

    def __init__(self, module: TensorClassModuleBase) -> None:
        super().__init__()
        if not (
            is_tensorclass(module.input_class) and is_tensorclass(module.output_class)
        ):
            raise _NotTensorClassesError(  # 0.15.3's words first
                "Only TensorClassModuleBase implementations with both input and "
                "output type as TensorClass can be converted to TensorDictModule: "
                f"TensorClassModuleWrapper needs a TensorClassModuleBase[In, Out] "
                f"subclass naming two tensorclasses; {type(module).__name__} names "
                f"{getattr(module.input_class, '__name__', module.input_class)} and "
                f"{getattr(module.output_class, '__name__', module.output_class)}"
            )
        self.tc_module = module
        self.in_keys = list(module.in_keys)
        self.out_keys = list(module.out_keys)

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        inputs = self.tc_module.input_class.from_tensordict(
            tensordict.select(*self.in_keys, strict=False)
        )
        output = self.tc_module(inputs)
        return output.to_tensordict() if hasattr(output, "to_tensordict") else output

    def extra_repr(self) -> str:
        return f"in_keys={self.in_keys}, out_keys={self.out_keys}"
