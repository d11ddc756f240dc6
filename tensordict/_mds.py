"""``td.to_mds(out=...)``: a MosaicML Streaming (MDS) dataset of the rows of a
tensordict, one sample per index of its first batch dim (one sample for a tensordict
without batch dims), through ``streaming.MDSWriter``.

A sample is a dict of the entries: tensors become numpy arrays (0-d ones Python
numbers), non-tensor data its value. The column encodings are inferred from the first
sample unless ``columns`` gives them (0.15.3's table: floats name their dtype
``"float32"``, integers and booleans ``"int"``, arrays ``"ndarray"``, strings
``"str"``, lists ``"json"``, bytes ``"bytes"``). MDS has no nested columns: a nested
tensordict is an error that says to ``flatten_keys`` first.

mosaicml-streaming is optional and imported only when no ``writer`` is passed. It is
not in this project's extras: its requirements pin numpy below 2.2 and pull
transformers, torchvision and a CUDA build of torch (see ``docs/compatibility.md``).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from typing import Any

import numpy as np
from torch import Tensor

from tensordict._tensorcollection import TensorCollection


def _mds_writer_class():
    try:
        return importlib.import_module("streaming").MDSWriter
    except ImportError:
        raise ImportError(
            "to_mds needs MDSWriter from mosaicml-streaming, which is not installed: "
            "pip install mosaicml-streaming (or pass writer=)"
        ) from None


def _encoding(key, value) -> str:
    """The MDS column encoding of one sample's value."""
    if isinstance(value, bool):
        return "int"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "json"
    if isinstance(value, np.ndarray):
        if value.ndim:
            return "ndarray"
        if value.dtype.kind == "f":
            return value.dtype.name
        return "int" if value.dtype.kind in "iub" else "str"
    if isinstance(value, dict):
        raise ValueError(
            f"to_mds: the entry {key!r} is a nested tensordict, and MDS columns are "
            f"flat: call td.flatten_keys() before to_mds (and unflatten_keys() after "
            f"reading)"
        )
    raise ValueError(
        f"to_mds: the entry {key!r} holds a {type(value).__name__}, which has no MDS "
        f"encoding; pass columns={{{key!r}: 'pkl'}} to pickle it"
    )


def _columns(row) -> dict:
    """The encodings of one row (a tensordict): a tensor's come from its dtype (a 0-d
    float32 tensor is written as a Python float, in a ``"float32"`` column)."""
    columns = {}
    for key, value in row.items():
        if isinstance(value, Tensor):
            value = value.detach().cpu().numpy()
        columns[key] = _encoding(key, _sample_value(value))
    return columns


def _sample_value(value):
    if isinstance(value, TensorCollection) and not value._is_non_tensor:
        return _sample(value)
    if isinstance(value, TensorCollection):
        return value.tolist() if value.batch_dims else value.data
    return value


def _sample(td) -> dict:
    """One sample: ``{key: numpy array, Python number or value}``."""
    out: dict = {}
    for key, value in td.items():
        if isinstance(value, Tensor):
            array = value.detach().cpu().numpy()
            out[key] = array.item() if array.ndim == 0 else array
        else:
            out[key] = _sample_value(value)
    return out


def to_mds(
    td,
    *,
    columns: dict | None = None,
    out: Any,
    keep_local: bool = False,
    compression: str | None = None,
    hashes: list | None = None,
    size_limit: int | str | None = 1 << 26,
    writer: Any = None,
    finish_writer: bool | None = None,
    **kwargs,
) -> None:
    """See the module docstring and :meth:`TensorDictBase.to_mds`."""
    if not td.numel():
        raise ValueError(
            "Cannot write an empty TensorDict to a streaming dataset (to_mds writes "
            f"one sample per row; batch size {tuple(td.batch_size)})"
        )
    samples = [_sample(row) for row in td.unbind(0)] if td.batch_dims else [_sample(td)]
    created = writer is None
    if created:
        if columns is None:
            columns = _columns(td[0] if td.batch_dims else td)
        writer = _mds_writer_class()(
            out=out,
            columns=columns,
            keep_local=keep_local,
            compression=compression,
            hashes=hashes,
            size_limit=size_limit,
            **kwargs,
        )
        finish_writer = True
    elif finish_writer is None:
        if td.batch_dims:
            warnings.warn(
                "to_mds finished the writer passed by the caller after a tensordict "
                "with batch dims. Starting with TensorDict 0.17, the default will "
                "change to leaving it open, as for a tensordict without batch dims. "
                "Pass finish_writer=True or False to choose.",
                FutureWarning,
                stacklevel=3,
            )
        finish_writer = bool(td.batch_dims)
    names = getattr(writer, "column_names", None)
    with writer if finish_writer else contextlib.nullcontext(writer) as sink:
        for sample in samples:
            if names is not None:
                sample = {key: sample[key] for key in names if key in sample}
            sink.write(sample)
