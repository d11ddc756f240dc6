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
from tensordict.base import (
    NO_DEFAULT,
    TensorDictBase,
    is_tensor_collection,
)  # noqa: F401

from tensordict._linked_list import LinkedList  # noqa: F401  (td[key] of a NonTensorStack)

# 0.15.3's private helpers that existing code imports from here (tensordict/_compat.py)
from tensordict._repr import get_printoptions, set_printoptions  # noqa: F401
from tensordict._compat import (  # noqa: F401  (re-exported)
    Buffer,
    _default_is_leaf,
    _getitem_batch_size,
    _is_leaf_nontensor,
    _is_non_tensor,
    _is_tensorclass,
    _maybe_correct_neg_dim,
    _shape,
    _unravel_key_to_tuple,
    _zip_strict,
    is_non_tensor,
    is_seq_of_nested_key,
    is_tensorclass,
    logger,
)


def expand_right(tensor: torch.Tensor, shape) -> torch.Tensor:
    """Expand ``tensor`` to ``shape`` by adding dims on the right (not the left, as
    broadcasting does): a ``[3]`` tensor expanded to ``[3, 4]`` repeats each value,
    and a dim of size one is expanded too (``[1]`` to ``[7, 3]``). A tensordict is
    expanded along its batch dims the same way."""
    shape = torch.Size(shape)
    if isinstance(tensor, TensorDictBase):
        bs = tensor.batch_size
        if not _expands_on_the_right(bs, shape):
            raise RuntimeError(
                f"cannot expand a tensordict of batch size {tuple(bs)} on the right "
                f"to {tuple(shape)}: its batch size must be a prefix of the target, "
                "up to dims of size one"
            )
        return tensor.reshape(bs + (1,) * (len(shape) - len(bs))).expand(shape)
    if not _expands_on_the_right(tensor.shape, shape):
        raise RuntimeError(
            f"cannot expand a tensor of shape {tuple(tensor.shape)} on the right to "
            f"{tuple(shape)}: its shape must be a prefix of the target, up to dims "
            "of size one"
        )
    view = tensor.reshape(tensor.shape + (1,) * (len(shape) - tensor.ndim))
    return view.expand(shape)


def _expands_on_the_right(shape: torch.Size, target: torch.Size) -> bool:
    return len(shape) <= len(target) and all(
        dim == want or dim == 1 for dim, want in zip(shape, target)
    )


def expand_as_right(tensor: torch.Tensor, dest: torch.Tensor) -> torch.Tensor:
    """:func:`expand_right` to the shape of ``dest`` (a tensordict's batch size)."""
    return expand_right(tensor, dest.shape)


def convert_ellipsis_to_idx(idx, batch_size) -> tuple:
    """``idx`` with its ``...`` replaced by the full slices it stands for, given the
    ``batch_size`` it indexes: ``(..., 0)`` on ``[3, 4, 5]`` is ``(:, :, 0)``."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if sum(part is Ellipsis for part in parts) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...'), got {idx!r}")
    consumed = sum(part is not Ellipsis and part is not None for part in parts)
    fill = (slice(None),) * max(len(batch_size) - consumed, 0)
    out = []
    for part in parts:
        out.extend(fill if part is Ellipsis else (part,))
    return tuple(out)


def assert_allclose_td(
    actual,
    expected,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    intersection: bool = False,
    msg: str = "",
    prefix=(),
) -> bool:
    """Assert that two tensordicts hold close tensors at the same keys (as
    :func:`torch.testing.assert_close`, key by key); return ``True``.

    A key one side lacks raises ``KeyError`` naming it (only the common keys are
    compared with ``intersection=True``); values that differ, or differ in shape or
    dtype, raise ``AssertionError`` naming the key; anything but two tensor
    collections raises ``TypeError``. Non-tensor entries are not compared."""
    if not (is_tensor_collection(actual) and is_tensor_collection(expected)):
        raise TypeError(
            f"assert_allclose_td compares two tensordicts, got "
            f"{type(actual).__name__} and {type(expected).__name__}"
        )
    prefix = unravel_key_to_tuple(prefix) if prefix != () else ()
    actual_keys = set(actual.keys())
    expected_keys = set(expected.keys())
    if not intersection and actual_keys != expected_keys:
        only_actual = actual_keys - expected_keys
        only_expected = expected_keys - actual_keys
        raise KeyError(
            f"the tensordicts' keys differ at {prefix or 'the root'}: only the first "
            f"has {sorted(only_actual)}, only the second has {sorted(only_expected)}"
        )
    for key in actual.keys():
        if key not in expected_keys:
            continue
        a, b = actual.get(key), expected.get(key)
        full = prefix + (key,)
        if is_tensor_collection(a) and not is_non_tensor(a):
            assert_allclose_td(
                a, b, rtol, atol, equal_nan, intersection, msg, prefix=full
            )
            continue
        if not isinstance(a, torch.Tensor):
            continue  # non-tensor data
        try:
            torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        except AssertionError as err:
            detail = f"key {full!r} does not match: {err}"
            raise AssertionError(f"{msg}\n{detail}" if msg else detail) from None
    return True


# The global modes and their set_* switches live in tensordict/_modes.py.
from tensordict._modes import (  # noqa: E402,F401  (re-exported)
    capture_non_tensor_stack,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
)
