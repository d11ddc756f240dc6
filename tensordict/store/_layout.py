"""How a store is laid out on the server, and which byte ranges an index touches.

Every key of one store shares the namespace ``{prefix}:{<td_id>}`` (the braces are a
Redis Cluster hash tag: all keys of a store live in one slot, so one transaction or
script can touch them all):

- ``{ns}:meta`` a hash: one field per entry, at any depth, named by the entry's path
  as a JSON list (``'["b", "c"]'``); its value is a JSON record: ``{"t": "tensor",
  "shape": [...], "dtype": "float32"}``, ``{"t": "td", "batch_size": [...]}`` for a
  nested tensordict, ``{"t": "json", "v": ...}`` for a non-tensor value. The field
  ``'[]'`` is the store itself (its batch size and device).
- ``{ns}:ver`` an integer bumped by every write that changes the metadata (a new,
  replaced or deleted entry, a new batch size): a process that keeps the metadata
  checks it in the same round trip as its reads, and indexed writes are refused by the
  server when it changed (see ``_store.py``).
- ``{ns}:d:<path>`` the tensor's bytes: the C-contiguous buffer, row after row, so
  that rows ``i..j`` of the first dim are the bytes ``[i*row, j*row)``; indexed reads
  and writes move only those (GETRANGE / SETRANGE).

This module knows nothing of the server: it names keys and plans byte ranges.
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch
from torch import Tensor

from tensordict._td import _normalize_index

# torch dtypes stored by name ("float32"); every dtype torch.frombuffer reads
_DTYPES = {
    str(dtype).split(".")[-1]: dtype
    for dtype in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.complex64,
        torch.complex128,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).split(".")[-1]


def dtype_of(name: str) -> torch.dtype:
    return _DTYPES[name]


def field(path: tuple) -> str:
    """The meta hash field of the entry at ``path``."""
    return json.dumps(list(path))


def path_of(name) -> tuple:
    if isinstance(name, bytes):
        name = name.decode()
    return tuple(json.loads(name))


class Names:
    """The server keys of one store."""

    __slots__ = ("ns", "meta", "ver", "_data")

    def __init__(self, prefix: str, td_id: str) -> None:
        self.ns = f"{prefix}:{{{td_id}}}"
        self.meta = f"{self.ns}:meta"
        self.ver = f"{self.ns}:ver"
        self._data: dict = {}

    def data(self, path: tuple) -> str:
        name = self._data.get(path)
        if name is None:
            name = self._data[path] = f"{self.ns}:d:{field(path)}"
        return name


def tensor_record(value: Tensor) -> dict:
    return {"t": "tensor", "shape": list(value.shape), "dtype": dtype_name(value.dtype)}


def row_bytes(record: dict) -> int:
    shape = record["shape"]
    return math.prod(shape[1:]) * dtype_of(record["dtype"]).itemsize


def as_bytes(value: Tensor) -> memoryview:
    """The bytes of ``value`` (C order, on CPU), without a copy where it already is."""
    if value.device.type != "cpu":
        value = value.to("cpu")
    if value.requires_grad:
        value = value.detach()
    if not value.is_contiguous():
        value = value.contiguous()
    try:
        array = value.numpy()
    except (TypeError, RuntimeError):  # dtypes numpy lacks (bfloat16): as bytes
        array = value.reshape(-1).view(torch.uint8).numpy()
    return memoryview(array.reshape(-1)).cast("B")


def from_bytes(data, record_dtype: str, shape) -> Tensor:
    """A tensor of ``shape`` from the raw bytes ``data`` (copied once, writable)."""
    dtype = dtype_of(record_dtype)
    if not data:
        return torch.empty(shape, dtype=dtype)
    buffer = data if isinstance(data, bytearray) else bytearray(data)
    return torch.frombuffer(buffer, dtype=dtype).reshape(shape)


# ----------------------------------------------------------------------------- rows


class RowPlan:
    """What an index over the batch dims reads of each tensor: ``rows`` of the first
    dim (in the order asked for), the shape those rows take (``lead``: ``()`` for an
    int, ``(n,)`` for a slice or a 1-d index, the index's shape for an index tensor),
    and ``rest``, the part of the index for the other dims, applied to the rows once
    they are read (``None`` when there is none). ``runs`` are ``(first_row, count,
    position)``: consecutive rows read or written as one byte range."""

    __slots__ = ("rows", "lead", "rest", "runs")

    def __init__(self, rows: list, lead: tuple, rest) -> None:
        self.rows = rows
        self.lead = lead
        self.rest = rest
        runs = []
        if rows:
            start, prev = 0, rows[0]
            for i, row in enumerate(rows):
                if i and row != prev + 1:
                    runs.append((rows[start], i - start, start))
                    start = i
                prev = row
            runs.append((rows[start], len(rows) - start, start))
        self.runs = runs

    def batch_size(self, batch_size: torch.Size) -> torch.Size:
        """The batch size of the rows read, shaped as the index asks."""
        dims = list(self.lead)
        rest = self.rest or ()
        for pos, size in enumerate(batch_size[1:]):
            if pos < len(rest):
                part = rest[pos]
                if isinstance(part, int):
                    continue
                dims.append(len(range(*part.indices(size))))
            else:
                dims.append(size)
        return torch.Size(dims)

    def runs_text(self) -> str:
        """The runs as the row scripts take them: ``"first,count;first,count"``."""
        return ";".join([f"{first},{count}" for first, count, _ in self.runs])

    def span(self) -> tuple[int, int]:
        return min(self.rows), max(self.rows) + 1

    def read_as_span(self) -> bool:
        """Many short runs close together: one range read, picked out locally."""
        if len(self.runs) <= 8:
            return False
        lo, hi = self.span()
        return hi - lo <= 4 * len(self.rows)


def plan_rows(index, batch_size: torch.Size) -> RowPlan | None:
    """The :class:`RowPlan` of ``index``, or ``None`` where an index is not a choice of
    rows of the first dim followed by basic indexing of the others (``None`` dims, a
    mask over several dims, index tensors on several dims): such an index is applied to
    the whole tensor read."""
    if not batch_size:
        return None
    if type(index) is Tensor and index.dtype is torch.long and index.ndim == 1:
        # the common case (a sampler's indices): no normalising to do
        rows = index.tolist()
        n0 = batch_size[0]
        if rows and (min(rows) < 0 or max(rows) >= n0):
            if min(rows) < -n0 or max(rows) >= n0:
                raise IndexError(
                    f"index {rows} is out of bounds for dimension 0 with size {n0}"
                )
            rows = [r % n0 for r in rows]
        return RowPlan(rows, (len(rows),), None)
    idx = _normalize_index(index, batch_size)
    parts = idx if type(idx) is tuple else (idx,)
    if not parts:
        return None
    first, rest = parts[0], parts[1:]
    for part in rest:
        if not (isinstance(part, (int, slice)) and not isinstance(part, bool)):
            return None
    n0 = batch_size[0]
    if isinstance(first, bool) or first is None or first is Ellipsis:
        return None
    if isinstance(first, int):
        if not -n0 <= first < n0:
            raise IndexError(
                f"index {first} is out of bounds for dimension 0 with size {n0}"
            )
        rows, lead = [first % n0], ()
    elif isinstance(first, slice):
        rows = list(range(*first.indices(n0)))
        lead = (len(rows),)
    else:
        if isinstance(first, (list, np.ndarray)):
            first = torch.as_tensor(first)
        if not isinstance(first, Tensor):
            return None
        if first.dtype is torch.bool:
            if first.ndim != 1:
                return None
            if first.shape[0] != n0:
                raise IndexError(
                    f"the boolean mask of shape {tuple(first.shape)} does not match "
                    f"the first batch dim of size {n0}"
                )
            rows = first.nonzero().reshape(-1).tolist()
            lead = (len(rows),)
        elif first.dtype.is_floating_point or first.dtype.is_complex:
            return None
        else:
            rows = first.reshape(-1).tolist()
            if rows and (min(rows) < 0 or max(rows) >= n0):
                if min(rows) < -n0 or max(rows) >= n0:
                    raise IndexError(
                        f"index {first.tolist()} is out of bounds for dimension 0 "
                        f"with size {n0}"
                    )
                rows = [r % n0 for r in rows]
            lead = tuple(first.shape)
    rest = tuple(rest) if any(part != slice(None) for part in rest) else None
    return RowPlan(rows, lead, rest)


def apply_rest(rows: Tensor, plan: RowPlan) -> Tensor:
    """The rows read (``len(plan.rows)`` of them) shaped as the index asks."""
    out = rows.reshape(plan.lead + tuple(rows.shape[1:]))
    if plan.rest is not None:
        out = out[(slice(None),) * len(plan.lead) + plan.rest]
    return out
