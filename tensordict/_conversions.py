"""Conversions 0.15.3 code calls that no op family generates: ``to_namedtuple``,
``from_namedtuple``, ``from_struct_array``, ``from_any``, ``to_lazystack`` and the
``pad`` method (issue 14, row 13). ``TensorDictBase`` inherits
:class:`ConversionMethods`; concrete classes are reached through the registry.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection


def _namedtuple_type(fields: tuple):
    # one class per field set, as a namedtuple "GenericDict" (0.15.3's name)
    cls = _NAMEDTUPLES.get(fields)
    if cls is None:
        cls = _NAMEDTUPLES[fields] = collections.namedtuple("GenericDict", fields)
    return cls


_NAMEDTUPLES: dict = {}


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _from_obj(obj, device):
    """A (nested) dict of tensors from a namedtuple, a dataclass, a structured array
    or a mapping."""
    if _is_namedtuple(obj):
        items = obj._asdict().items()
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = ((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj))
    elif isinstance(obj, np.ndarray) and obj.dtype.names:
        items = ((name, obj[name]) for name in obj.dtype.names)
    elif hasattr(obj, "items"):
        items = obj.items()
    else:
        raise TypeError(
            f"from_any: cannot build a tensordict from a {type(obj).__name__}: expected "
            f"a tensordict, a mapping, a namedtuple, a dataclass instance or a numpy "
            f"structured array"
        )
    out = {}
    for key, value in items:
        if isinstance(value, (Tensor, TensorCollection)):
            out[key] = value
        elif isinstance(value, np.ndarray) and value.dtype.names:
            out[key] = _from_obj(value, device)
        elif isinstance(value, np.ndarray):
            out[key] = torch.as_tensor(np.ascontiguousarray(value))
        elif (
            _is_namedtuple(value)
            or isinstance(value, dict)
            or (dataclasses.is_dataclass(value) and not isinstance(value, type))
        ):
            out[key] = _from_obj(value, device)
        else:
            out[key] = value
    return out


def _build(data: dict, auto_batch_size, batch_dims, device, batch_size, shared_dims):
    TensorDict = container_class("TensorDict")
    if batch_size is not None:
        return TensorDict(data, batch_size=batch_size, device=device)
    td = TensorDict(data, device=device)
    if shared_dims is not None:
        td = TensorDict(data, batch_size=shared_dims, device=device)
    if auto_batch_size or batch_dims is not None:
        td.auto_batch_size_(batch_dims)
    return td


class ConversionMethods:
    """See the module docstring."""

    __slots__ = ()

    def to_namedtuple(self, dest_cls: type | None = None) -> Any:
        """The entries as a namedtuple (``GenericDict`` unless ``dest_cls`` is
        given), nested tensordicts as nested namedtuples."""
        values = {}
        for key, value in self._own_items():
            if isinstance(value, TensorCollection) and not value._is_non_tensor:
                value = value.to_namedtuple()
            values[key] = value
        cls = dest_cls if dest_cls is not None else _namedtuple_type(tuple(values))
        return cls(**values)

    @classmethod
    def from_namedtuple(
        cls,
        named_tuple,
        *,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        device=None,
        batch_size=None,
    ):
        """A tensordict of the fields of a (nested) namedtuple."""
        return _build(
            _from_obj(named_tuple, device),
            auto_batch_size,
            batch_dims,
            device,
            batch_size,
            None,
        )

    @classmethod
    def from_struct_array(
        cls,
        struct_array: np.ndarray,
        *,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        device=None,
        batch_size=None,
    ):
        """A tensordict of the fields of a numpy structured array; the batch size is
        the array's shape unless given."""
        shape = (
            struct_array.shape if batch_size is None and not auto_batch_size else None
        )
        return _build(
            _from_obj(struct_array, device),
            auto_batch_size,
            batch_dims,
            device,
            batch_size,
            shape,
        )

    @classmethod
    def from_any(
        cls,
        obj,
        *,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        device=None,
        batch_size=None,
    ):
        """A tensordict from what ``obj`` is: a tensordict (returned as is), a mapping,
        a namedtuple, a dataclass instance or a numpy structured array."""
        if isinstance(obj, TensorCollection):
            return obj
        if isinstance(obj, np.ndarray) and obj.dtype.names:
            return cls.from_struct_array(
                obj,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
                device=device,
                batch_size=batch_size,
            )
        return _build(
            _from_obj(obj, device),
            auto_batch_size,
            batch_dims,
            device,
            batch_size,
            None,
        )

    def to_lazystack(self, dim: int = 0):
        """A ``LazyStackedTensorDict`` of this tensordict's slices along ``dim``."""
        if dim < 0:
            dim += self.batch_dims
        return container_class("LazyStackedTensorDict")(
            *self.unbind(dim), stack_dim=dim
        )

    def pad(
        self, pad_size, value: float = 0.0, inplace: bool = False, safe: bool = True
    ):
        """Pad every tensor along the batch dims (as :func:`tensordict.pad`):
        ``(before, after)`` pairs for the batch dims, first dim first; the new
        positions hold ``value``. ``inplace=True`` is taken by :func:`tensordict.pad`."""
        if inplace:
            raise TypeError(
                "td.pad(..., inplace=True): call tensordict.pad(td, pad_size, "
                "inplace=True), which replaces the entries of td"
            )
        sizes = list(pad_size)
        if len(sizes) % 2 or len(sizes) // 2 > self.batch_dims:
            raise ValueError(
                f"pad_size must hold (before, after) pairs for at most the "
                f"{self.batch_dims} batch dims (batch_size {tuple(self.batch_size)}), "
                f"got {sizes}"
            )
        pairs = [(sizes[i], sizes[i + 1]) for i in range(0, len(sizes), 2)]
        new_batch = list(self.batch_size)
        for dim, (before, after) in enumerate(pairs):
            new_batch[dim] += before + after

        def pad_leaf(x):
            # torch pads from the last dim backwards: the feature dims get zeros
            torch_pad = [0, 0] * (x.ndim - len(pairs))
            for dim in reversed(range(len(pairs))):
                torch_pad.extend(pairs[dim])
            return torch.nn.functional.pad(x, torch_pad, value=value)

        dense = self._with_dense_stacks("pad")
        leaves, rebuild = dense._leaves_and_rebuild()
        return rebuild([pad_leaf(x) for x in leaves], batch_size=new_batch)
