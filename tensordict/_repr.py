"""The verbose ``repr`` the seed documents print: one field per line (sorted by key,
as the seeds print them), with each
tensor's shape, device, dtype and sharing, then the container's batch size and device.

    TensorDict(
        fields={
            a: Tensor(shape=torch.Size([10, 3]), device=cpu, dtype=torch.float32, is_shared=False)},
        batch_size=torch.Size([10]),
        device=None,
        is_shared=False)
"""

from __future__ import annotations

import torch
from torch import Tensor

from tensordict._registry import container_class

_INDENT = "    "


def _indent(text: str, levels: int) -> str:
    """Indent every line of ``text`` by ``levels`` steps."""
    pad = _INDENT * levels
    return pad + text.replace("\n", "\n" + pad)


def tensor_shape(tensor: Tensor) -> torch.Size:
    """``tensor.shape``, also for ``torch.nested`` tensors: ``-1`` for a ragged dim."""
    if not tensor.is_nested:
        return tensor.shape
    if tensor.layout is torch.strided:
        sizes = tensor._nested_tensor_size()
        if sizes.numel() == 0:
            return torch.Size([tensor.size(0)])
        first = sizes[0]
        ragged = (sizes != first).any(0).tolist()
        dims = [-1 if r else int(d) for r, d in zip(ragged, first.tolist())]
        return torch.Size([tensor.size(0), *dims])
    return torch.Size([d if isinstance(d, int) else -1 for d in tensor.shape])


def tensor_repr(tensor: Tensor) -> str:
    name = (
        "Tensor"
        if type(tensor) is Tensor or tensor.is_nested
        else type(tensor).__name__
    )
    return (
        f"{name}(shape={tensor_shape(tensor)!r}, device={tensor.device}, "
        f"dtype={tensor.dtype}, is_shared={tensor.is_shared()})"
    )


def non_tensor_repr(value, container) -> str:
    return (
        f"NonTensorData(data={value}, batch_size={container.batch_size!r}, "
        f"device={container.device})"
    )


def entry_repr(value, container) -> str:
    if isinstance(value, Tensor):
        return tensor_repr(value)
    if isinstance(value, container_class("TensorDictBase")):
        return repr(value)
    return non_tensor_repr(value, container)


def fields_repr(items, container) -> str:
    """The ``fields={...}`` block, unindented."""
    lines = [f"{key}: {entry_repr(value, container)}" for key, value in items]
    if not lines:
        return "fields={\n}"
    return "fields={\n" + ",\n".join(_indent(line, 1) for line in lines) + "}"


def container_repr(td) -> str:
    parts = [
        fields_repr(sorted(td.items(), key=lambda item: item[0]), td),
        f"batch_size={td.batch_size!r}",
        f"device={td.device}",
        f"is_shared={td.is_shared()}",
    ]
    return f"{type(td).__name__}(\n" + ",\n".join(_indent(p, 1) for p in parts) + ")"
