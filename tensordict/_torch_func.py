"""Old private import path (``from tensordict._torch_func import _stack``), kept
working.

Code written for 0.15.3 (test helpers among it) imports the stacking function from
here; it is :func:`torch.stack` on tensordicts, with ``maybe_dense_stack=True`` giving
:func:`tensordict.maybe_dense_stack` (dense when the items allow it, lazy otherwise).
"""

from __future__ import annotations

from typing import Sequence

import torch

from tensordict._lazy import LazyStackedTensorDict, maybe_dense_stack
from tensordict.base import TensorDictBase


def _stack(
    list_of_tensordicts: Sequence[TensorDictBase],
    dim: int = 0,
    device=None,
    out=None,
    strict: bool = False,
    contiguous: bool = False,
    maybe_dense_stack: bool | None = None,
):
    """Stack tensordicts along ``dim``: densely, lazily with ``maybe_dense_stack``
    when the items cannot be stacked densely."""
    items = list(list_of_tensordicts)
    if maybe_dense_stack:
        result = _maybe_dense_stack(items, dim, out=out, strict=strict)
    elif contiguous or out is not None:
        result = torch.stack(items, dim, out=out)
    else:
        result = torch.stack(items, dim)
    if device is not None:
        result = result.to(device)
    return result


_maybe_dense_stack = maybe_dense_stack

__all__ = ["_stack", "LazyStackedTensorDict"]
