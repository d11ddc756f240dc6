"""Index metadata as 0.15.3 writes it in JSON (``_index_to_str`` / ``_str_to_index``,
importable from ``tensordict._td``).

0.15.3 records the index of a sub-tensordict it saves as tagged JSON: a tuple as
``["tuple", [...]]``, a list as ``["list", [...]]``, a slice or a range as ``["slice",
{"start": ..., "stop": ..., "step": ...}]``, a tensor as ``["tensor", values,
device]``, ``...`` as ``["ellipsis"]``; older metadata has an untagged list for a tuple
of indices. These functions read and write that form.
"""

from __future__ import annotations

from typing import Any

import torch

__all__: list[str] = []

_TAGS = ("tuple", "list", "slice", "range", "tensor", "ellipsis")


def _index_to_str(index: Any) -> Any:
    """``index`` in 0.15.3's tagged JSON form.

    >>> from tensordict._td import _index_to_str
    >>> _index_to_str((slice(None, 2), 0))
    ('tuple', [('slice', {'start': None, 'stop': 2, 'step': None}), 0])
    """
    if isinstance(index, tuple):
        return ("tuple", [_index_to_str(i) for i in index])
    if isinstance(index, list):
        return ("list", [_index_to_str(i) for i in index])
    if isinstance(index, (slice, range)):
        kind = "slice" if isinstance(index, slice) else "range"
        return (kind, {"start": index.start, "stop": index.stop, "step": index.step})
    if isinstance(index, torch.Tensor):
        return ("tensor", index.tolist(), str(index.device))
    if index is Ellipsis:
        return ("ellipsis",)
    return index


def _str_to_index(index: Any) -> Any:
    """The index that 0.15.3's tagged JSON ``index`` describes (an untagged list, from
    older metadata, is a tuple of indices).

    >>> from tensordict._td import _str_to_index
    >>> _str_to_index([["slice", {"start": None, "stop": None, "step": None}], 1])
    (slice(None, None, None), 1)
    """
    if not isinstance(index, (tuple, list)):
        return index
    if not index:
        return ()
    tag = index[0]
    if isinstance(tag, str) and tag in _TAGS:
        if tag == "tuple":
            return tuple(_str_to_index(i) for i in index[1])
        if tag == "list":
            return [_str_to_index(i) for i in index[1]]
        if tag in ("slice", "range"):
            bounds = index[1]
            make = slice if tag == "slice" else range
            return make(bounds["start"], bounds["stop"], bounds["step"])
        if tag == "tensor":
            return torch.tensor(index[1], device=index[2])
        return Ellipsis
    return tuple(_str_to_index(i) for i in index)
