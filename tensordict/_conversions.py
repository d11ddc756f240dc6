"""Conversions 0.15.3 code calls that no op family generates: ``to_namedtuple`` /
``from_namedtuple``, ``from_tuple``, ``to_struct_array`` / ``from_struct_array``,
``from_dataclass``, ``from_any``, ``from_schema``, ``auto_device_``, ``to_lazystack`` and the ``pad``
method (issue 14, row 13; issue 13). Tables and files (JSON, pandas, parquet,
safetensors) are in ``tensordict/_interchange.py``. ``TensorDictBase`` inherits
:class:`ConversionMethods`; concrete classes are reached through the registry.
"""

from __future__ import annotations

import collections
import collections.abc
import dataclasses
from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensordict._errors import LOCK_PHRASE as _LOCK_PHRASE
from tensordict._errors import PadSizeError as _PadSizeError
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection


def _namedtuple_type(fields: tuple):
    # one class per field set, as a namedtuple "GenericDict" (0.15.3's name)
    cls = _NAMEDTUPLES.get(fields)
    if cls is None:
        cls = _NAMEDTUPLES[fields] = collections.namedtuple("GenericDict", fields)
    return cls


_NAMEDTUPLES: dict = {}

#: the ``storage`` values ``from_schema`` takes
_SCHEMA_STORAGES = (None, "memmap", "h5", "zarr", "shared")

# numpy dtype kinds torch has a dtype for: bool, ints, unsigned, floats, complex
_NUMERIC_KINDS = "biufc"


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _from_obj(obj, device):
    """A (nested) dict of tensors from a namedtuple, a dataclass, a structured array
    or a mapping."""
    if _is_namedtuple(obj):
        items = obj._asdict().items()
    elif isinstance(obj, tuple):
        items = ((str(i), value) for i, value in enumerate(obj))
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
        elif isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC_KINDS:
            out[key] = torch.as_tensor(np.ascontiguousarray(value))
        elif isinstance(value, np.ndarray):
            out[key] = value  # strings, objects: kept as the array (non-tensor data)
        elif (
            isinstance(value, tuple)
            or isinstance(value, dict)
            or (dataclasses.is_dataclass(value) and not isinstance(value, type))
        ):
            out[key] = _from_obj(value, device)
        else:
            out[key] = value
    return out


def _build(obj, auto_batch_size, batch_dims, device, batch_size, shared_dims=None):
    """A ``TensorDict`` of ``obj`` (see :func:`_from_obj`) with the batch size the
    ``from_*`` keywords ask for (``shared_dims``: a structured array's shape)."""
    data = _from_obj(obj, device)
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
        given), nested tensordicts as nested namedtuples.

        >>> nt = TensorDict(a=torch.zeros(2), sub=TensorDict(b=torch.ones(2))).to_namedtuple()
        >>> nt.sub.b
        tensor([1., 1.])
        """
        values = {}
        for key, value in self._own_items():
            if isinstance(value, TensorCollection) and not value._is_non_tensor:
                value = value.to_namedtuple()
            values[key] = value
        cls = dest_cls if dest_cls is not None else _namedtuple_type(tuple(values))
        return cls(**values)

    @classmethod
    def from_schema(
        cls,
        schema: dict,
        *,
        batch_size=None,
        storage: str | None = None,
        device=None,
        **kwargs,
    ):
        """A zero-filled tensordict from ``schema``, which maps each key (a string or a
        nested key) to ``(element_shape, dtype)``: the entry gets the shape
        ``[*batch_size, *element_shape]``. ``storage`` says where the zeros live:
        ``None`` (ordinary tensors), ``"memmap"`` (memory-mapped, in ``prefix=``, else
        a temporary folder; locked), ``"h5"`` (a ``PersistentTensorDict`` over
        ``filename=``), ``"zarr"`` (one over the zarr store ``filename=``) or ``"shared"``
        (shared memory).

        Raises:
            ValueError: an unknown ``storage``, or a schema entry that is not
                ``(shape, dtype)``.
            TypeError: a dtype that is not a ``torch.dtype``.

        >>> td = TensorDict.from_schema({"obs": ((3,), torch.float32), ("next", "done"): ((), torch.bool)}, batch_size=[4])
        >>> td["obs"].shape, td["next", "done"].dtype
        (torch.Size([4, 3]), torch.bool)
        """
        if storage not in _SCHEMA_STORAGES:
            raise ValueError(
                f"Unknown storage backend {storage!r}. "
                f"from_schema: unknown storage {storage!r}; expected one of "
                f"{', '.join(map(repr, _SCHEMA_STORAGES))} (0.15.3's 'redis' and "
                f"'dragonfly' backends are not available here)"
            )
        batch = torch.Size(batch_size if batch_size is not None else ())
        dense = container_class("TensorDict")
        out = dense({}, batch_size=batch, device=device)
        for key, spec in schema.items():
            if not isinstance(spec, (tuple, list)) or len(spec) != 2:
                raise ValueError(
                    f"from_schema: the schema of {key!r} must be a pair "
                    f"(element_shape, dtype), got {spec!r}"
                )
            shape, dtype = spec
            if not isinstance(dtype, torch.dtype):
                raise TypeError(
                    f"from_schema: the dtype of {key!r} must be a torch.dtype, got "
                    f"{dtype!r}"
                )
            out.set(key, torch.zeros((*batch, *shape), dtype=dtype, device=device))
        if storage == "memmap":
            return out.memmap_(prefix=kwargs.get("prefix"))
        if storage == "shared":
            return out.share_memory_()
        if storage == "h5":
            return container_class("PersistentTensorDict").from_dict(
                out, kwargs["filename"], batch_size=batch
            )
        if storage == "zarr":
            options = {k: v for k, v in kwargs.items() if k != "filename"}
            return out.to_zarr(kwargs["filename"], **options)
        return out

    def from_dict_instance(
        self,
        input_dict,
        *,
        auto_batch_size: bool | None = None,
        batch_size=None,
        device=None,
        batch_dims=None,
        names=None,
    ):
        """A :class:`~tensordict.TensorDict` built from ``input_dict`` as
        :meth:`~tensordict.TensorDict.from_dict` builds it, except that a nested dict
        whose key is a tensorclass in this tensordict becomes that tensorclass
        (recursively): the inverse of :meth:`to_dict` for tensorclass entries. The
        values of this tensordict are not used.

        >>> @tensorclass
        ... class Point:
        ...     x: torch.Tensor
        >>> td = TensorDict(p=Point(x=torch.zeros(3), batch_size=[3]), batch_size=[3])
        >>> type(td.from_dict_instance({"p": {"x": torch.ones(3)}})["p"]).__name__
        'Point'
        """
        converted = _as_classes_of(
            self, input_dict, auto_batch_size, batch_dims, device
        )
        return container_class("TensorDict").from_dict(
            converted,
            auto_batch_size=auto_batch_size,
            batch_size=batch_size,
            device=device,
            batch_dims=batch_dims,
            names=names,
        )

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
        """A tensordict of the fields of a (nested) namedtuple.

        >>> from collections import namedtuple
        >>> Pair = namedtuple("Pair", ["x", "y"])
        >>> td = from_namedtuple(Pair(x=torch.zeros(3), y=torch.ones(3)), auto_batch_size=True)
        >>> sorted(td.keys()), td.batch_size
        (['x', 'y'], torch.Size([3]))
        """
        return _build(named_tuple, auto_batch_size, batch_dims, device, batch_size)

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
        the array's shape unless given.

        >>> import numpy as np
        >>> arr = np.zeros(3, dtype=[("x", "f4"), ("y", "i8")])
        >>> td = from_struct_array(arr)
        >>> td.batch_size, td["y"].dtype
        (torch.Size([3]), torch.int64)
        """
        shape = (
            struct_array.shape if batch_size is None and not auto_batch_size else None
        )
        return _build(
            struct_array, auto_batch_size, batch_dims, device, batch_size, shape
        )

    @classmethod
    def from_tuple(
        cls,
        obj: tuple,
        *,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        device=None,
        batch_size=None,
    ):
        """A tensordict with the items of a (nested) tuple under the keys ``"0"``,
        ``"1"``, ...; nested tuples, dicts and named tuples become nested tensordicts.

        >>> td = from_tuple((torch.zeros(2), (torch.ones(2),)))
        >>> list(td.keys(True, True))
        ['0', ('1', '0')]
        """
        return _build(tuple(obj), auto_batch_size, batch_dims, device, batch_size)

    @classmethod
    def from_dataclass(
        cls,
        dataclass,
        *,
        dest_cls: type | None = None,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
        as_tensorclass: bool = False,
        device=None,
        batch_size=None,
    ):
        """A ``TensorDict`` of the fields of a dataclass instance (nested dataclasses
        become nested tensordicts); ``as_tensorclass=True`` (or a ``dest_cls``) gives
        a tensorclass instance instead, as :func:`tensordict.from_dataclass`.

        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Step:
        ...     obs: torch.Tensor
        >>> TensorDict.from_dataclass(Step(obs=torch.zeros(2)))["obs"].shape
        torch.Size([2])
        """
        if as_tensorclass or dest_cls is not None:
            return container_class("TensorClass")._from_dataclass(
                dataclass,
                dest_cls=dest_cls,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
                batch_size=batch_size,
                device=device,
            )
        if isinstance(dataclass, type) or not dataclasses.is_dataclass(dataclass):
            raise TypeError(
                f"from_dataclass expects a dataclass instance, got "
                f"{type(dataclass).__name__}"
            )
        return _build(dataclass, auto_batch_size, batch_dims, device, batch_size)

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
        """``obj`` as a tensordict, by what it is: a tensordict or a tensor is returned
        as it is; a mapping, a namedtuple, a tuple, a dataclass instance, a numpy
        structured array or a pandas DataFrame is converted (``from_dict``,
        ``from_namedtuple``, ``from_tuple``, ``from_dataclass``,
        ``from_struct_array``, ``from_pandas``); a list becomes a ``NonTensorStack``
        of its items (as 0.15.3 does); any other value is returned as it is.

        >>> from_any({"a": torch.zeros(3, 2)}, auto_batch_size=True).batch_size
        torch.Size([3, 2])
        """
        kwargs = dict(
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
            device=device,
            batch_size=batch_size,
        )
        if isinstance(obj, (TensorCollection, Tensor)):
            return obj
        if isinstance(obj, np.ndarray) and obj.dtype.names:
            return cls.from_struct_array(obj, **kwargs)
        if type(obj).__module__.startswith("pandas") and hasattr(obj, "columns"):
            return cls.from_pandas(obj, **kwargs)
        if isinstance(obj, list):
            return container_class("NonTensorStack").from_list(obj, device=device)
        if (
            isinstance(obj, (tuple, collections.abc.Mapping))
            or (dataclasses.is_dataclass(obj) and not isinstance(obj, type))
            or hasattr(obj, "items")
        ):
            return _build(obj, auto_batch_size, batch_dims, device, batch_size)
        return obj

    def to_struct_array(self) -> np.ndarray:
        """A numpy structured array shaped like the batch: one field per entry (its
        feature dims as the field's shape), nested tensordicts as nested structured
        fields; non-tensor strings and arrays shaped like the batch are fields too.
        The array is a copy (numpy fields cannot share the tensors' memory).

        >>> arr = TensorDict(x=torch.zeros(3), y=torch.ones(3, dtype=torch.int64), batch_size=[3]).to_struct_array()
        >>> arr.dtype.names, arr.shape
        (('x', 'y'), (3,))
        """
        td = self._with_dense_stacks("to_struct_array")
        shape = tuple(td.batch_size)
        return _struct_fill(td, np.empty(shape, dtype=_struct_dtype(td, shape)))

    def auto_device_(self):
        """Set the device to the one every tensor is on (``None`` when they are on
        several devices, or there are none); nested tensordicts get the same device.
        Nothing is moved.

        >>> td = TensorDict(a=torch.zeros(2), b=torch.zeros(2))
        >>> td.auto_device_().device
        device(type='cpu')
        """
        leaves = self._leaves_and_rebuild()[0]
        devices = {leaf.device for leaf in leaves}
        _set_device_tree(self, devices.pop() if len(devices) == 1 else None)
        return self

    def to_lazystack(self, dim: int = 0):
        """A ``LazyStackedTensorDict`` of this tensordict's slices along ``dim``.

        >>> s = TensorDict(a=torch.zeros(2, 3), batch_size=[2]).to_lazystack(0)
        >>> type(s).__name__, len(s.tensordicts)
        ('LazyStackedTensorDict', 2)
        """
        if dim < 0:
            dim += self.batch_dims
        if getattr(self, "_lazy_stack_keeps_class", False):  # the class around it
            return type(self)._from_td(self._tensordict.to_lazystack(dim))
        return container_class("LazyStackedTensorDict")(
            *self.unbind(dim), stack_dim=dim
        )

    def pad(
        self, pad_size, value: float = 0.0, inplace: bool = False, safe: bool = True
    ):
        """Pad every tensor along the batch dims: ``pad_size`` lists ``(before,
        after)`` pairs for the leading batch dims, first dim first (``[1, 0, 0, 2]``
        adds one row before dim 0 and two after dim 1); the new positions hold
        ``value``. Leaves without batch dims (``UnbatchedTensor``) are kept as they
        are. ``inplace=True`` pads the tensordict itself and returns it; nested
        tensordicts stay the same objects. :func:`tensordict.pad` is this method.

        >>> td = TensorDict(a=torch.ones(2, 3), batch_size=[2, 3])
        >>> td.pad([0, 0, 1, 0]).batch_size  # dim 0: 0 before, 0 after; dim 1: 1 before, 0 after
        torch.Size([2, 4])
        """
        sizes = list(pad_size)
        if len(sizes) % 2:
            raise _PadSizeError(
                f"pad_size must hold (before, after) pairs, got {len(sizes)} numbers"
            )
        pairs = [(sizes[i], sizes[i + 1]) for i in range(0, len(sizes), 2)]
        if len(pairs) > self.batch_dims:
            raise _PadSizeError(
                f"pad_size gives {len(pairs)} (before, after) pairs but the tensordict "
                f"has only {self.batch_dims} batch dims (batch_size "
                f"{tuple(self.batch_size)})"
            )

        def pad_leaf(x):
            # torch pads from the last dim backwards: the feature dims get zeros
            torch_pad = [0, 0] * (x.ndim - len(pairs))
            for dim in reversed(range(len(pairs))):
                torch_pad.extend(pairs[dim])
            return torch.nn.functional.pad(x, torch_pad, value=value)

        def padded(size) -> torch.Size:
            size = list(size)
            for dim, (before, after) in enumerate(pairs):
                size[dim] += before + after
            return torch.Size(size)

        if safe:  # every error before any write (inplace=True leaves self as it was)
            for dim, size in enumerate(padded(self.batch_size)[: len(pairs)]):
                if size < 0:
                    raise RuntimeError(
                        f"pad: negative output size {size} for batch dim {dim} (size "
                        f"{self.batch_size[dim]}, padded by {pairs[dim]}): a negative "
                        f"pad crops, by at most the dim's size"
                    )
        if self._is_non_tensor:  # a NonTensorStack or a NonTensorData itself
            return _pad_non_tensor_container(self, pairs, inplace)
        if inplace and type(getattr(self, "_tensordict", None)) is dict:
            if self.is_locked:
                raise RuntimeError(
                    f"{_LOCK_PHRASE} Here: cannot pad in place, as the TensorDict is "
                    f"locked; unlock it first with `unlock_()`"
                )
            _pad_levels(self, pad_leaf, padded, pairs)
            return self
        if hasattr(self, "_dense_op"):  # a lazy stack: padded as its dense stack
            if inplace:
                return _pad_lazy_in_place(self, pairs, value, safe)
            source = self._dense_op("pad")
        else:
            source = self._with_dense_stacks("pad")
        leaves, rebuild = source._batched_leaves_and_rebuild()
        out = rebuild([pad_leaf(x) for x in leaves], batch_size=padded(self.batch_size))
        _pad_non_tensor_entries(source, out, pairs)
        if inplace:  # a kind without a storage dict: its entries replaced
            self._replace_contents(out)
            self.batch_size = out.batch_size
            return self
        return out


def _pad_levels(td, pad_leaf, padded, pairs: list) -> None:
    """Pad a dense tensordict in place, level by level: each level's storage takes
    the padded leaves and its batch size grows, the nested tensordicts stay the same
    objects (a nested lazy stack is replaced by its padded dense stack)."""
    storage = td._tensordict
    for key, value in list(storage.items()):
        if isinstance(value, Tensor):
            if not getattr(type(value), "_pass_through", False):  # UnbatchedTensor
                storage[key] = pad_leaf(value)
        elif _is_non_tensor_entry(value):
            # values, one per element: the new elements hold None (a stack keeps
            # its identity, as in 0.15.3)
            values = _padded_values(_values_of(value, td._batch_size), pairs)
            if isinstance(value, container_class("NonTensorStack")):
                value._values = values
                value._batch_size = torch.Size(values.shape)
            else:
                storage[key] = container_class("NonTensorStack")._from_array(
                    values, td._device
                )
        elif type(getattr(value, "_tensordict", None)) is dict and not getattr(
            value, "_is_non_tensor", False
        ):
            _pad_levels(value, pad_leaf, padded, pairs)
        elif isinstance(value, TensorCollection) and not getattr(
            value, "_is_non_tensor", False
        ):
            storage[key] = _padded_copy(value, pad_leaf, padded)
    td._batch_size = padded(td._batch_size)


def _pad_lazy_in_place(stack, pairs: list, value, safe: bool):
    """``pad(inplace=True)`` of a lazy stack, as 0.15.3: the stacked tensordicts are
    padded in place along their dims (the same objects), and along the stack dim
    tensordicts are dropped (negative pad) or added (filled with ``value``, their
    non-tensor entries ``None``)."""
    if stack.is_locked:
        raise RuntimeError(
            f"{_LOCK_PHRASE} Here: cannot pad in place, as the lazy stack is locked; "
            f"unlock it first with `unlock_()`"
        )
    sd = stack.stack_dim
    member_pairs = pairs[:sd] + pairs[sd + 1 :]
    before, after = pairs[sd] if sd < len(pairs) else (0, 0)
    members = list(stack.tensordicts)
    if any(b or a for b, a in member_pairs):
        flat = [n for pair in member_pairs for n in pair]
        for member in members:
            member.pad(flat, value=value, inplace=True, safe=safe)
    members = members[max(-before, 0) : len(members) - max(-after, 0)]
    if (before > 0 or after > 0) and not members and stack.tensordicts:
        raise RuntimeError(
            "pad: a lazy stack cropped to nothing along its stack dim cannot be "
            "padded there (no tensordict to take the new ones' entries from)"
        )
    if before > 0 or after > 0:
        template = members[0]
        fill = [_filled_like(template, value) for _ in range(max(before, 0))]
        members = fill + members + [
            _filled_like(template, value) for _ in range(max(after, 0))
        ]
    stack.tensordicts = members
    bs = list(members[0].batch_size) if members else list(stack.batch_size)
    bs.insert(sd, len(members))
    stack._batch_size = torch.Size(bs)
    return stack


def _filled_like(td, value):
    """A tensordict shaped like ``td`` whose tensors hold ``value`` and whose
    non-tensor entries hold ``None``: a new element of a padded lazy stack."""
    out = td.apply(lambda x: torch.full_like(x, value))
    _none_entries(out)
    return out


def _none_entries(td) -> None:
    holder = getattr(td, "_tensordict", None)
    if getattr(td, "_is_tensorclass", False):
        td, holder = holder, holder._tensordict
    if type(holder) is not dict:
        return
    for key, value in list(holder.items()):
        if isinstance(value, Tensor):
            continue
        if _is_non_tensor_entry(value):
            values = np.empty(tuple(td._batch_size), dtype=object)
            holder[key] = (
                container_class("NonTensorStack")._from_array(values, td.device)
                if values.ndim
                else None
            )
        else:
            _none_entries(value)


def _is_non_tensor_entry(value) -> bool:
    """A stored non-tensor entry: a raw value, or a NonTensorStack / NonTensorData."""
    if isinstance(value, Tensor):
        return False
    return not isinstance(value, TensorCollection) or value._is_non_tensor


def _values_of(value, batch_size) -> np.ndarray:
    """A non-tensor entry as an object array shaped like ``batch_size``."""
    shape = tuple(batch_size)
    values = getattr(value, "_values", None)  # a NonTensorStack's
    if values is not None:
        return values if values.shape == shape else np.broadcast_to(values, shape)
    if getattr(value, "_is_non_tensor", False):  # a NonTensorData
        value = value.data
    array = np.empty(shape, dtype=object)
    array.fill(value)
    return array


def _padded_values(values: np.ndarray, pairs: list) -> np.ndarray:
    """``values`` padded as ``pad`` pads a tensor's leading dims (``pairs`` of
    (before, after); negative ones crop), the new elements ``None``."""
    shape = list(values.shape)
    src, dst = [], []
    for d, (before, after) in enumerate(pairs):
        size = shape[d] + before + after
        if size < 0:
            raise RuntimeError(
                f"pad: negative output size {size} for batch dim {d} of the non-tensor "
                f"values (size {values.shape[d]}, padded by ({before}, {after}))"
            )
        start, stop = max(-before, 0), values.shape[d] - max(-after, 0)
        src.append(slice(start, stop))
        dst.append(slice(max(before, 0), max(before, 0) + max(stop - start, 0)))
        shape[d] = size
    out = np.empty(shape, dtype=object)
    out[tuple(dst)] = values[tuple(src)]
    return out


def _pad_non_tensor_entries(source, out, pairs: list) -> None:
    """The non-tensor entries of ``source`` padded into ``out`` (its padded form,
    level by level): one value per element, ``None`` in the new ones, as 0.15.3."""
    holder = getattr(source, "_tensordict", None)
    if getattr(source, "_is_tensorclass", False):
        source, out, holder = holder, out._tensordict, holder._tensordict
    target = getattr(out, "_tensordict", None)
    if type(holder) is not dict or type(target) is not dict:
        return
    for key, value in holder.items():
        if isinstance(value, Tensor):
            continue
        if _is_non_tensor_entry(value):
            values = _padded_values(_values_of(value, source._batch_size), pairs)
            target[key] = container_class("NonTensorStack")._from_array(
                values, out.device
            )
        elif key in target:
            _pad_non_tensor_entries(value, target[key], pairs)


def _pad_non_tensor_container(data, pairs: list, inplace: bool):
    """``pad`` of a NonTensorStack or a NonTensorData: a NonTensorStack (the stack
    itself with ``inplace=True``; a NonTensorData cannot become one in place)."""
    values = _padded_values(_values_of(data, data.batch_size), pairs)
    stack_cls = container_class("NonTensorStack")
    if not inplace:
        return stack_cls._from_array(values, data.device)
    if not isinstance(data, stack_cls):
        raise RuntimeError(
            f"pad(inplace=True) cannot preserve the identity of a "
            f"{type(data).__name__}: padding gives one value per element (a "
            f"NonTensorStack); call it without inplace=True"
        )
    data._values = values
    data._batch_size = torch.Size(values.shape)
    return data


def _padded_copy(td, pad_leaf, padded):
    """A nested container of another kind, padded out of place."""
    source = td._dense_op("pad") if hasattr(td, "_dense_op") else td
    leaves, rebuild = source._batched_leaves_and_rebuild()
    return rebuild([pad_leaf(x) for x in leaves], batch_size=padded(td.batch_size))


def _struct_dtype(td, shape: tuple) -> np.dtype:
    fields = []
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            if value.dtype is torch.bfloat16:
                raise TypeError(
                    f"to_struct_array: the entry {key!r} has dtype torch.bfloat16, "
                    f"which numpy has no dtype for; cast it (td.float()) first"
                )
            dtype = torch.empty((), dtype=value.dtype).numpy().dtype
            fields.append((key, dtype, tuple(value.shape[len(shape) :])))
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            fields.append((key, _struct_dtype(value, shape)))
        else:
            rows = _non_tensor_array(value, shape, key)
            fields.append((key, rows.dtype, rows.shape[len(shape) :]))
    return np.dtype(fields)


def _non_tensor_array(value, shape: tuple, key) -> np.ndarray:
    """A non-tensor entry as an array shaped like the batch (a string repeated, an
    array of the batch's shape, a stack's values)."""
    if isinstance(value, TensorCollection):
        value = value.tolist()
    array = np.asarray(value)
    if array.shape[: len(shape)] != shape:
        array = np.broadcast_to(array, shape + array.shape)
    if array.dtype.kind == "O":
        raise TypeError(
            f"to_struct_array: the entry {key!r} holds {type(value).__name__} values, "
            f"which a structured array cannot hold (numbers and strings only)"
        )
    return array


def _struct_fill(td, out: np.ndarray) -> np.ndarray:
    shape = out.shape
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            out[key] = value.detach().cpu().numpy()
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            _struct_fill(value, out[key])
        else:
            out[key] = _non_tensor_array(value, shape, key)
    return out


def _set_device_tree(td, device) -> None:
    """Set ``device`` on ``td`` and on every tensordict nested in it."""
    members = getattr(td, "tensordicts", None)
    if getattr(type(td), "_is_tensorclass", False):
        _set_device_tree(td._tensordict, device)
        return
    if members is not None:  # a lazy stack: its device is its members'
        for member in members:
            _set_device_tree(member, device)
        td._refresh()
        return
    td._device = device
    for value in td._own_values():
        if isinstance(value, TensorCollection) and not value._is_non_tensor:
            _set_device_tree(value, device)


def _as_classes_of(template, input_dict, auto_batch_size, batch_dims, device) -> dict:
    """``input_dict`` with each nested dict whose key holds a tensorclass in
    ``template`` built as that tensorclass (by its own ``from_dict``, so its field
    annotations apply: an ``int`` field stays an int), innermost first."""
    if getattr(type(template), "_is_tensorclass", False):
        template = template._tensordict
    out = {}
    for key, value in input_dict.items():
        mine = None
        if isinstance(value, dict) and isinstance(key, str):
            mine = template._get_str(key, None, missing_ok=True)
        if mine is None or getattr(mine, "_is_non_tensor", False):
            out[key] = value
            continue
        if not hasattr(mine, "batch_size") or isinstance(mine, torch.Tensor):
            out[key] = value
            continue
        value = _as_classes_of(mine, value, auto_batch_size, batch_dims, device)
        cls = type(mine)
        if getattr(cls, "_is_tensorclass", False):
            value = cls.from_dict(
                value,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
                device=device,
            )
        out[key] = value
    return out
