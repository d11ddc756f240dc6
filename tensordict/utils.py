"""Public helpers users import from ``tensordict.utils``."""

from __future__ import annotations

import functools

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


# --------------------------------------------------------------------------------------
# lazy legacy mode: torch.stack of tensordicts builds a LazyStackedTensorDict
# --------------------------------------------------------------------------------------

_LAZY_LEGACY: bool | None = None  # None: never set (reads as False)


def lazy_legacy(allow_none: bool = False) -> bool | None:
    """Whether :func:`torch.stack` of tensordicts builds a lazy stack (see
    :class:`set_lazy_legacy`). ``False`` by default: stacking is dense; with
    ``allow_none=True``, ``None`` while the mode was never set."""
    if _LAZY_LEGACY is None:
        return None if allow_none else False
    return _LAZY_LEGACY


class set_lazy_legacy:
    """Make :func:`torch.stack` of tensordicts lazy (a ``LazyStackedTensorDict``
    whose writes go through to the stacked tensordicts) or dense (the default).

    Works three ways, like :class:`torch.set_grad_enabled`:

    - as a function, ``set_lazy_legacy(True)`` sets the mode from then on;
    - as a context manager, ``with set_lazy_legacy(True): ...`` sets it inside the
      block and restores the previous mode on exit;
    - as a decorator, ``@set_lazy_legacy(True)`` sets it while the function runs.
    """

    def __init__(self, mode: bool) -> None:
        global _LAZY_LEGACY
        self.mode = bool(mode)
        self._previous = _LAZY_LEGACY
        _LAZY_LEGACY = self.mode

    def __enter__(self) -> "set_lazy_legacy":
        global _LAZY_LEGACY
        _LAZY_LEGACY = self.mode
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        global _LAZY_LEGACY
        _LAZY_LEGACY = self._previous
        return False

    def __call__(self, func):
        global _LAZY_LEGACY
        # used as a decorator: the mode applies only while func runs
        _LAZY_LEGACY = self._previous
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            global _LAZY_LEGACY
            previous = _LAZY_LEGACY
            _LAZY_LEGACY = mode
            try:
                return func(*args, **kwargs)
            finally:
                _LAZY_LEGACY = previous

        return wrapper
