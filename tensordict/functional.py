"""Functions that build or combine tensordicts (the functional forms of the API)."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from tensordict._keys import NestedKey


def from_dict(
    d,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device=None,
    batch_size=None,
    names=None,
):
    """Build a :class:`~tensordict.TensorDict` from a (nested) dict.

    Without ``batch_size`` the batch size is empty, unless ``auto_batch_size=True``
    (or ``batch_dims``) asks for the longest one every entry shares.
    """
    from tensordict._td import TensorDict

    return TensorDict.from_dict(
        d,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        names=names,
    )


def make_tensordict(
    input_dict: dict | None = None,
    batch_size=None,
    device=None,
    auto_batch_size: bool | None = None,
    **kwargs: Any,
):
    """Build a tensordict from a dict and/or keyword entries; without ``batch_size``
    the batch size is inferred (the longest one every entry shares)."""
    from tensordict._td import TensorDict

    entries = dict(input_dict or {})
    entries.update(kwargs)
    if batch_size is None and auto_batch_size is not False:
        return TensorDict.from_dict(entries, auto_batch_size=True, device=device)
    return TensorDict(entries, batch_size=batch_size, device=device)


def fromkeys(keys: Sequence[NestedKey], value: Any = 0):
    """A tensordict with every key of ``keys`` set to ``value`` (batch size empty)."""
    from tensordict._td import TensorDict

    td = TensorDict()
    for key in keys:
        td.set(key, value.clone() if isinstance(value, torch.Tensor) else value)
    return td
