"""Public helpers users import from ``tensordict.utils``."""

from __future__ import annotations

import torch

from tensordict._keys import (  # noqa: F401  (re-exported)
    KEY_SEPARATOR,
    NestedKey,
    is_valid_key,
    unravel_key,
    unravel_key_list,
    unravel_key_to_tuple,
)
from tensordict.base import NO_DEFAULT, is_tensor_collection  # noqa: F401


def expand_right(tensor: torch.Tensor, shape) -> torch.Tensor:
    """Expand ``tensor`` to ``shape`` by adding dims on the right (not the left, as
    broadcasting does): a ``[3]`` tensor expanded to ``[3, 4]`` repeats each value."""
    shape = torch.Size(shape)
    if tensor.ndim > len(shape) or tensor.shape != shape[: tensor.ndim]:
        raise RuntimeError(
            f"cannot expand a tensor of shape {tuple(tensor.shape)} on the right to "
            f"{tuple(shape)}: its shape must be a prefix of the target"
        )
    view = tensor.reshape(tensor.shape + (1,) * (len(shape) - tensor.ndim))
    return view.expand(shape)


def expand_as_right(tensor: torch.Tensor, dest: torch.Tensor) -> torch.Tensor:
    """:func:`expand_right` to the shape of ``dest``."""
    return expand_right(tensor, dest.shape)
