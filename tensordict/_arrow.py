"""Arrow tables: ``tensordict.to_arrow(td)`` and ``tensordict.from_arrow(table)``.

A tensordict with one batch dim is a table of ``batch_size[0]`` rows. The column types
follow the data, so that numbers move without a copy both ways:

==========================================  ==========================================
tensordict entry                            Arrow column
==========================================  ==========================================
1-d numeric tensor                          primitive column over the same memory
tensor with feature dims                    ``arrow.fixed_shape_tensor`` (same memory)
bool tensor                                 ``bool`` (Arrow packs bits: a copy)
jagged nested tensor (ragged dim 1)         ``large_list`` of its values
nested tensordict                           ``struct`` of its entries
non-tensor data (strings, objects)          whatever ``pyarrow.array`` makes of them
==========================================  ==========================================

Reading also takes ``fixed_size_list`` columns (feature dims), ``list`` columns of
numbers (jagged nested tensors) and anything else as a ``NonTensorStack`` of the
Python values. Nulls are refused unless ``nulls="fill"`` (NaN, 0, ``False``, ``[]`` or
``None``) or ``nulls="mask"`` (filled, plus a boolean entry per column under
``mask_key``, ``True`` where a row holds a value). pyarrow is optional: the ``arrow``
extra installs it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from tensordict._interchange import _rows_of, require
from tensordict._keys import unravel_key
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection

__all__ = ["from_arrow", "to_arrow"]

_NULL_POLICIES = ("raise", "fill", "mask")
_MIN_PYARROW = 15  # DLPack export of Arrow arrays and the fixed_shape_tensor type

# torch's masked_fill has no unsigned 16/32/64-bit kernels: fill a same-size view
_SAME_BITS = {
    torch.uint16: torch.int16,
    torch.uint32: torch.int32,
    torch.uint64: torch.int64,
}


def _pyarrow(what: str):
    pa = require("pyarrow", what, "arrow")
    major = int(pa.__version__.split(".")[0])
    if major < _MIN_PYARROW:
        raise ImportError(
            f"{what} needs pyarrow {_MIN_PYARROW} or later (DLPack export, "
            f"fixed_shape_tensor), found pyarrow {pa.__version__}: "
            f"pip install 'pyarrow>={_MIN_PYARROW}'"
        )
    return pa


# ----------------------------------------------------------------------- Arrow -> torch


def _numeric(pa, arrow_type) -> bool:
    """Whether a column of this type is a dense tensor (possibly with feature dims)."""
    if isinstance(arrow_type, pa.FixedShapeTensorType):
        return _numeric(pa, arrow_type.storage_type)
    if pa.types.is_fixed_size_list(arrow_type):
        return _numeric(pa, arrow_type.value_type)
    types = pa.types
    return (
        types.is_integer(arrow_type)
        or types.is_floating(arrow_type)
        or types.is_boolean(arrow_type)
    )


def _refuse_nulls(array, where: tuple) -> None:
    if array.null_count:
        raise ValueError(
            f"The Arrow column {where} has {array.null_count} null value(s). from_arrow "
            f"refuses nulls by default: pass nulls='fill' to fill them (NaN, 0, False, "
            f"[] or None) or nulls='mask' to fill them and add a mask entry"
        )


def _refuse_inner_nulls(pa, array, where: tuple) -> None:
    """Nulls inside the rows of a list or struct column, at any depth."""
    arrow_type = array.type
    if pa.types.is_struct(arrow_type):
        children = array.flatten()
    elif (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        children = [array.flatten()]
    else:
        return
    for child in children:
        _refuse_nulls(child, where)
        _refuse_inner_nulls(pa, child, where)


def _view_primitive(pa, array, copy: bool | None) -> Tensor:
    """A 1-d tensor over the values of a null-free primitive array: through DLPack (no
    copy) unless asked to copy, or unless the buffer is read-only (a memory-mapped file:
    torch has no read-only tensors, and writing into such a view would crash)."""
    if pa.types.is_boolean(array.type):
        return torch.from_numpy(array.to_numpy(zero_copy_only=False))
    tensor = torch.from_dlpack(array)
    data = array.buffers()[1]
    read_only = data is not None and not data.is_mutable
    if copy or (copy is None and read_only):
        tensor = tensor.clone()
    return tensor


def _fill_nulls(array, tensor: Tensor) -> Tensor:
    """``tensor`` (the values of ``array``, rows first) with its null rows filled."""
    rows = len(array)
    valid = torch.from_numpy(array.is_valid().to_numpy(zero_copy_only=False))
    missing = ~valid.reshape(rows, *([1] * (tensor.ndim - 1)))
    fill = float("nan") if tensor.is_floating_point() else 0
    dtype = tensor.dtype
    filled = tensor.view(_SAME_BITS.get(dtype, dtype)).masked_fill(missing, fill)
    return filled.view(dtype)


def _dense(pa, array, copy, where) -> Tensor:
    """A column of a type ``_numeric`` accepts as a tensor of ``len(array)`` rows."""
    arrow_type = array.type
    rows = len(array)
    if isinstance(arrow_type, pa.FixedShapeTensorType):
        tensor = _dense(pa, array.storage, copy, where)
        tensor = tensor.reshape(rows, *arrow_type.shape)
        if arrow_type.permutation is not None:
            order = [1 + dim for dim in arrow_type.permutation]
            tensor = tensor.permute(0, *order)
        return tensor
    if pa.types.is_fixed_size_list(arrow_type):
        # .values keeps the nulls and the offset of the rows' values (flatten drops
        # null rows): slice out this array's rows
        width = arrow_type.list_size
        inner = array.values.slice(array.offset * width, rows * width)
        _refuse_nulls(inner, where)
        tensor = _dense(pa, inner, copy, where)
        tensor = tensor.reshape(rows, width, *tensor.shape[1:])
    elif array.null_count:
        # view the values without the validity bitmap, then fill the null rows
        values = pa.Array.from_buffers(
            arrow_type, rows, [None, array.buffers()[1]], offset=array.offset
        )
        tensor = _view_primitive(pa, values, copy)
    else:
        return _view_primitive(pa, array, copy)
    if array.null_count:
        tensor = _fill_nulls(array, tensor)
    return tensor


def _jagged(pa, array, copy, where) -> Tensor:
    """A list column of numbers as a jagged nested tensor over its values."""
    if array.null_count:
        array = array.fill_null(pa.scalar([], type=array.type))
    offsets = _view_primitive(pa, array.offsets, copy)
    first, last = int(offsets[0]), int(offsets[-1])
    values = array.values.slice(first, last - first)
    _refuse_nulls(values, where)
    if first:  # a slice of a longer array
        offsets = offsets - first
    return torch.nested.nested_tensor_from_jagged(
        _dense(pa, values, copy, where), offsets.to(torch.int64)
    )


def _entry(pa, array, copy, nulls: str, where: tuple, masks: dict) -> Any:
    """One column (or one field of a struct column) as a tensordict entry."""
    arrow_type = array.type
    if pa.types.is_struct(arrow_type):
        # flatten() applies the struct's offset and passes its null rows to the fields
        fields = {
            field.name: _entry(pa, child, copy, nulls, (*where, field.name), masks)
            for field, child in zip(arrow_type, array.flatten())
        }
        return container_class("TensorDict")(fields, batch_size=[len(array)])
    if nulls == "raise":
        _refuse_nulls(array, where)
    elif nulls == "mask" and array.null_count:
        masks[where] = torch.from_numpy(array.is_valid().to_numpy(zero_copy_only=False))
    if _numeric(pa, arrow_type):
        return _dense(pa, array, copy, where)
    if (
        pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    ) and _numeric(pa, arrow_type.value_type):
        return _jagged(pa, array, copy, where)
    if nulls == "raise":
        _refuse_inner_nulls(pa, array, where)
    stack = container_class("NonTensorStack")
    if not len(array):
        return stack()
    return stack(*array.to_pylist(), batch_size=[len(array)])


def _mask_key(mask_key, nulls: str) -> tuple:
    if mask_key is not None and nulls != "mask":
        raise ValueError(
            f"from_arrow got mask_key={mask_key!r} but nulls={nulls!r}: the masks are "
            f"written with nulls='mask' only"
        )
    if mask_key is None:
        return ("_mask",)
    try:
        key = unravel_key(mask_key)
    except Exception:
        key = None
    if isinstance(key, str):
        key = (key,)
    if not key or not all(isinstance(part, str) for part in key):
        raise (TypeError if key is None else ValueError)(
            f"mask_key must be a string or a non-empty tuple of strings, got "
            f"{mask_key!r}"
        )
    return key


def from_arrow(
    table: Any,
    *,
    copy: bool | None = None,
    nulls: str = "raise",
    mask_key=None,
    device=None,
):
    """A :class:`~tensordict.TensorDict` with one entry per column of ``table`` (a
    ``pyarrow.Table`` or ``RecordBatch``; anything ``pyarrow.table`` takes, such as a
    Polars frame, is converted first) and batch size ``[num_rows]``.

    Numeric columns are viewed through DLPack, without a copy (a column of several
    chunks is combined first, which copies it); ``copy=True`` copies every column,
    ``copy=None`` copies only buffers Arrow marks read-only (a memory-mapped file),
    ``copy=False`` views those too. See the module docstring for the column types and
    ``nulls`` / ``mask_key``. ``device`` moves the result.

    >>> table = to_arrow(TensorDict(x=torch.arange(3), batch_size=[3]))
    >>> from_arrow(table)["x"].tolist()
    [0, 1, 2]
    """
    pa = _pyarrow("from_arrow")
    if nulls not in _NULL_POLICIES:
        raise ValueError(f"nulls must be one of {_NULL_POLICIES}, got {nulls!r}")
    mask_path = _mask_key(mask_key, nulls)
    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        table = pa.table(table)
    if nulls == "mask" and mask_path[0] in table.column_names:
        raise ValueError(
            f"nulls='mask' puts the masks under the key {mask_path[0]!r}, which is "
            f"already a column of the table: pass another mask_key"
        )
    data = {}
    masks: dict = {}
    for name, column in zip(table.column_names, table.columns):
        if isinstance(column, pa.ChunkedArray):
            if column.num_chunks == 1:
                column = column.chunk(0)
            else:
                column = column.combine_chunks()
        data[name] = _entry(pa, column, copy, nulls, (name,), masks)
    result = container_class("TensorDict")(data, batch_size=[table.num_rows])
    for where, mask in masks.items():
        result.set((*mask_path, *where), mask)
    if device is not None:
        result = result.to(device)
    return result


# ----------------------------------------------------------------------- torch -> Arrow


def _arrow_of_tensor(pa, tensor: Tensor, key) -> Any:
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if tensor.is_nested:
        if tensor.layout is not torch.jagged:
            raise ValueError(
                f"to_arrow: the entry {key!r} is a nested tensor of layout "
                f"{tensor.layout}; only torch.jagged nested tensors convert (to a "
                f"large_list column)"
            )
        if tensor._ragged_idx != 1:
            raise ValueError(
                f"to_arrow: the jagged tensor {key!r} has its ragged dim at position "
                f"{tensor._ragged_idx}; a large_list column needs it at position 1: "
                f"move it there first (.transpose(1, {tensor._ragged_idx}))"
            )
        offsets = pa.array(tensor.offsets().numpy())
        return pa.LargeListArray.from_arrays(
            offsets, _arrow_of_tensor(pa, tensor.values(), key)
        )
    if tensor.dtype is torch.bfloat16 or tensor.is_complex():
        raise TypeError(
            f"to_arrow: the entry {key!r} has dtype {tensor.dtype}, which Arrow has no "
            f"type for; cast it first (td.float())"
        )
    array = tensor.contiguous().numpy()
    if array.ndim == 1:
        return pa.array(array)  # numbers: a view of the tensor's memory
    if len(array) == 0:  # from_numpy_ndarray refuses an empty array
        kind = pa.fixed_shape_tensor(pa.from_numpy_dtype(array.dtype), array.shape[1:])
        return pa.ExtensionArray.from_storage(kind, pa.array([], kind.storage_type))
    return pa.FixedShapeTensorArray.from_numpy_ndarray(array)


def _arrow_of(pa, value, key, rows: int) -> Any:
    """One entry of a tensordict of ``rows`` rows as an Arrow array."""
    if isinstance(value, Tensor):
        return _arrow_of_tensor(pa, value, key)
    if isinstance(value, TensorCollection) and not value._is_non_tensor:
        if isinstance(value, container_class("LazyStackedTensorDict")):
            value = value.densify(layout=torch.jagged)
        items = list(value.items())
        if not items:
            return pa.array([{}] * rows, type=pa.struct([]))
        return pa.StructArray.from_arrays(
            [_arrow_of(pa, item, (*_path(key), name), rows) for name, item in items],
            names=[name for name, _ in items],
        )
    # non-tensor data (a NonTensorStack, or one value for every row): one value a row
    return pa.array(_rows_of(value, rows, key))


def _path(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def to_arrow(td) -> Any:
    """A ``pyarrow.Table`` with one row per index of ``td`` (a tensordict with one batch
    dim) and one column per entry: numeric columns share the tensors' memory (see the
    module docstring for the column types). :func:`from_arrow` reads it back.

    >>> table = to_arrow(TensorDict(x=torch.arange(3), batch_size=[3]))
    >>> table.num_rows, table.column_names
    (3, ['x'])
    """
    pa = _pyarrow("to_arrow")
    if td.batch_dims != 1:
        raise ValueError(
            f"to_arrow needs a tensordict with one batch dimension (one row per index), "
            f"got the batch size {tuple(td.batch_size)}: call td.reshape(-1) first"
        )
    if getattr(type(td), "_is_tensorclass", False):
        td = td._tensordict
    if isinstance(td, container_class("LazyStackedTensorDict")):
        td = td.densify(layout=torch.jagged)
    rows = td.batch_size[0]
    return pa.table({key: _arrow_of(pa, value, key, rows) for key, value in td.items()})
