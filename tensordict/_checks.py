"""``_check_recursive_properties``: a consistency check of a tensordict's tree, for
tests and debugging (0.15.3's private ``tensordict.utils._check_recursive_properties``,
which test helpers written for it import).

Walks every level and collects what disagrees with the level above: a batch size that
does not start with the parent's, a leaf whose shape does not, a device other than the
parent's, an unlocked child of a locked parent, ``names`` of the wrong length, and the
optional ``requires_grad`` / ``is_shared`` / ``is_memmap`` expectations. Each check can
be switched off by its keyword.
"""

from __future__ import annotations

import torch

from tensordict._keys import unravel_key_to_tuple
from tensordict.base import is_tensor_collection
from tensordict.memmap import MemoryMappedTensor


class _TensorDictPropertyError(RuntimeError):
    """Raised by :func:`_check_recursive_properties` with every inconsistency found."""


def _starts_with(shape, prefix) -> bool:
    return tuple(shape[: len(prefix)]) == tuple(prefix)


def _check_recursive_properties(
    tensordict,
    *,
    batch_size: bool = True,
    shape: bool = True,
    device: bool = True,
    lock: bool = True,
    names: bool = True,
    requires_grad: bool | None = None,
    is_shared: bool | None = None,
    is_memmap: bool | None = None,
    allow_none: bool = False,
    include_non_tensor: bool = True,
    include_unbatched: bool = True,
    strict: bool = True,
    raise_exception: bool = True,
) -> bool:
    """Check that every level of ``tensordict`` agrees with the level above it; raise
    :class:`_TensorDictPropertyError` listing the disagreements (or return ``False``
    with ``raise_exception=False``), return ``True`` when there are none."""
    if not is_tensor_collection(tensordict):
        raise TypeError(
            "_check_recursive_properties: expected a tensordict or a tensorclass "
            f"instance, got {type(tensordict).__name__}"
        )
    problems: list[str] = []

    def where(path) -> str:
        return "at the root" if not path else f"at key {path!r}"

    def expect(value, wanted, label, path):
        if wanted is None or value is None and allow_none:
            return
        if bool(value) != wanted:
            problems.append(f"{label} is {value}, expected {wanted} {where(path)}")

    def check_leaf(value, path, parent):
        # non-tensor data: wrapped (NonTensorData) or, as tensorclass fields and
        # entries set as Python values hold it here, the value itself
        non_tensor = getattr(value, "_is_non_tensor", False) or not isinstance(
            value, torch.Tensor
        )
        unbatched = (
            getattr(type(value), "_pass_through", False)
            or type(value).__name__ == "UnbatchedTensor"
        )
        if non_tensor and not include_non_tensor:
            return
        if unbatched and not include_unbatched:
            return
        if non_tensor and not isinstance(value, torch.Tensor) and not hasattr(value, "shape"):
            return  # a plain Python value: no shape or device to compare
        if not (non_tensor or unbatched) and not isinstance(value, torch.Tensor):
            if strict:
                problems.append(
                    f"unsupported leaf of type {type(value).__name__} {where(path)}"
                )
            return
        if (batch_size or shape) and not unbatched:
            if not _starts_with(value.shape, parent.batch_size):
                problems.append(
                    f"the leaf's shape {tuple(value.shape)} does not start with the "
                    f"batch size {tuple(parent.batch_size)} {where(path)}"
                )
        if device and parent.device is not None and not non_tensor:
            if value.device != parent.device:
                problems.append(
                    f"the leaf is on {value.device}, its parent on {parent.device} "
                    f"{where(path)}"
                )
        if requires_grad is not None and isinstance(value, torch.Tensor):
            expect(value.requires_grad, requires_grad, "requires_grad", path)
        if is_shared is not None and isinstance(value, torch.Tensor):
            expect(value.is_shared(), is_shared, "is_shared", path)
        if is_memmap is not None and isinstance(value, torch.Tensor):
            expect(isinstance(value, MemoryMappedTensor), is_memmap, "is_memmap", path)

    def visit(node, path, parent):
        if batch_size and parent is not None:
            if not _starts_with(node.batch_size, parent.batch_size):
                problems.append(
                    f"the batch size {tuple(node.batch_size)} does not start with its "
                    f"parent's {tuple(parent.batch_size)} {where(path)}"
                )
        if shape and tuple(node.shape) != tuple(node.batch_size):
            problems.append(
                f"shape {tuple(node.shape)} differs from batch size "
                f"{tuple(node.batch_size)} {where(path)}"
            )
        if device and parent is not None and parent.device is not None:
            if node.device is not None and node.device != parent.device:
                problems.append(
                    f"the device {node.device} differs from its parent's "
                    f"{parent.device} {where(path)}"
                )
        if lock and parent is not None and parent.is_locked and not node.is_locked:
            problems.append(f"a locked parent holds an unlocked child {where(path)}")
        if names:
            node_names = node.names
            if len(node_names) != node.batch_dims:
                problems.append(
                    f"{len(node_names)} names for {node.batch_dims} batch dims "
                    f"{where(path)}"
                )
        if is_shared is not None and parent is None:
            expect(node.is_shared(), is_shared, "is_shared", path)
        if is_memmap is not None and parent is None:
            expect(node.is_memmap(), is_memmap, "is_memmap", path)
        for key, value in node.items():
            child = path + unravel_key_to_tuple(key)
            if is_tensor_collection(value) and not getattr(
                value, "_is_non_tensor", False
            ):
                visit(value, child, node)
            else:
                check_leaf(value, child, node)

    visit(tensordict, (), None)
    if not problems:
        return True
    if not raise_exception:
        return False
    raise _TensorDictPropertyError(
        f"the tensordict's tree is inconsistent ({len(problems)} problem(s)):\n"
        + "\n".join(f"  {p}" for p in problems)
    )
