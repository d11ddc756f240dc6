"""Pickling tensordicts: a reduce form made of tensors and plain values.

Since torch 2.6, ``torch.load`` defaults to ``weights_only=True``, which refuses every
global it does not know. Each container pickles as a call of one of the rebuild
functions below on tensors, plain values (lists, strings, numbers, None) and nested
containers (pickled the same way); the functions are registered as safe globals, and so
is every tensorclass when it is defined (:func:`allow_class`), so that
``torch.load(f)`` rebuilds a ``TensorDict``, a lazy stack, a tensorclass or non-tensor
data without running code from the file. A non-tensor value of any other type (an
arbitrary object) still needs ``weights_only=False``, as it would anywhere.

The rebuild functions check what they are given (they can be reached from untrusted
files) and build containers without calling user code. Through ``multiprocessing``
the same reduce form sends tensors by shared-memory handle, as torch does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection, _parse_names

__all__ = ["allow_class", "object_array", "reduce_container"]


def allow_class(cls: type) -> None:
    """Let ``torch.load(weights_only=True)`` name ``cls`` (a tensorclass)."""
    torch.serialization.add_safe_globals([cls])


def reduce_container(td) -> tuple:
    """``__reduce_ex__`` of every container."""
    reducer = getattr(td, "_pickle_reduce", None)
    if reducer is not None:  # containers with a form of their own (HDF5 files)
        return reducer()
    if getattr(type(td), "_is_tensorclass", False):
        return _rebuild_tensorclass, (type(td), td._tensordict)
    if isinstance(td, container_class("LazyStackedTensorDict")):
        return _rebuild_lazy_stack, (
            list(td.tensordicts),
            td.stack_dim,
            td._stack_dim_name,
            bool(td.is_locked),
        )
    if isinstance(td, container_class("NonTensorStack")):
        return _rebuild_non_tensor_stack, (
            td.tolist(),
            list(td.batch_size),
            _device_str(td.device),
            _names(td),
        )
    return _rebuild_tensordict, (
        dict(td._own_items()),
        list(td.batch_size),
        _device_str(td.device),
        _names(td),
        bool(td.is_locked),
    )


def _device_str(device) -> str | None:
    return None if device is None else str(device)


def _names(td) -> list | None:
    names = td._names
    return None if names is None else list(names)


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"cannot unpickle a tensordict: {what}")


def _batch_size(value) -> torch.Size:
    _check(
        isinstance(value, (list, tuple, torch.Size))
        and all(type(d) is int and d >= 0 for d in value),
        f"bad batch size {value!r}",
    )
    return torch.Size(value)


def _device(value):
    _check(value is None or isinstance(value, str), f"bad device {value!r}")
    return None if value is None else torch.device(value)


def _rebuild_tensordict(entries, batch_size, device, names, locked):
    _check(isinstance(entries, dict), "the entries are not a dict")
    bs = _batch_size(batch_size)
    n = len(bs)
    for key, value in entries.items():
        _check(type(key) is str, f"bad key {key!r}")
        if isinstance(value, Tensor):
            _check(value.shape[:n] == bs, f"the entry {key!r} does not fit the batch size")
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            _check(
                value.batch_size[:n] == bs,
                f"the entry {key!r} does not fit the batch size",
            )
    td = container_class("TensorDict")._from_storage(
        entries, bs, _device(device), _parse_names(names, n)
    )
    if locked:
        td.lock_()
    return td


def _rebuild_lazy_stack(members, stack_dim, stack_dim_name, locked):
    _check(isinstance(members, list), "the members are not a list")
    _check(type(stack_dim) is int, f"bad stack dim {stack_dim!r}")
    stack = container_class("LazyStackedTensorDict")(
        *members, stack_dim=stack_dim, stack_dim_name=stack_dim_name
    )
    if locked:
        stack.lock_()
    return stack


def _rebuild_tensorclass(cls, inner):
    _check(
        isinstance(cls, type) and getattr(cls, "_is_tensorclass", False),
        f"{cls!r} is not a tensorclass",
    )
    _check(isinstance(inner, TensorCollection), "the fields are not a tensordict")
    return cls._from_td(inner)


def _rebuild_non_tensor_stack(values, batch_size, device, names):
    array = object_array(values, tuple(_batch_size(batch_size)))
    stack = container_class("NonTensorStack")._from_array(array, _device(device))
    if names is not None:
        stack.names = names
    return stack


def object_array(values: Any, shape: tuple) -> np.ndarray:
    """The nested lists ``values`` (one level per dim of ``shape``) as an object array
    (ValueError if they do not have that shape); values that are lists stay lists."""
    array = np.empty(shape, dtype=object)
    _fill(array, values, shape)
    return array


def _fill(array: np.ndarray, values: Any, shape: tuple) -> None:
    if not shape:
        array[()] = values
        return
    _check(
        isinstance(values, list) and len(values) == shape[0],
        "the non-tensor values do not match the batch size",
    )
    for i, value in enumerate(values):
        if len(shape) == 1:
            array[i] = value
        else:
            _fill(array[i], value, shape[1:])


torch.serialization.add_safe_globals(
    [
        _rebuild_tensordict,
        _rebuild_lazy_stack,
        _rebuild_tensorclass,
        _rebuild_non_tensor_stack,
    ]
)
