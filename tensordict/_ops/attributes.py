"""The attributes family (spec/attributes.yaml): what ``combine`` expressions call to
turn the per-leaf values into the result (``common_dtype``, ``scalar_result``,
``total``, ``join_leaves``, ...).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable

import torch

import tensordict.base as _base
from tensordict._registry import container_class

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


def common_dtype(new: list) -> torch.dtype | None:
    """The dtype every leaf has; ``None`` when they differ or there is no leaf."""
    dtypes = set(new)
    return dtypes.pop() if len(dtypes) == 1 else None


def present_result(td: TensorDictBase, new: list) -> TensorDictBase | None:
    """The per-leaf values that are not ``None`` (``td.grad``), in a tensordict shaped
    like ``td``; nested tensordicts left empty are dropped; ``None`` when none is."""
    if all(v is None for v in new):
        return None
    values = iter(new)
    return td.apply(lambda x: next(values))


def scalar_result(td: TensorDictBase, new: list) -> TensorDictBase:
    """One scalar int64 tensor per leaf (``data_ptr``), keyed like ``td``, batch size
    ``[]`` at every level, on the cpu. A lazy stack gives one entry per stacked
    tensordict, keyed by its index (``"0"``, ``"1"``, ...): its leaves are theirs."""
    return _scalars(td, iter(new))


def _scalars(td: TensorDictBase, values) -> TensorDictBase:
    out = container_class("TensorDict")({}, batch_size=[], device="cpu")
    if getattr(td, "_per_member_leaves", False):  # a lazy stack: member by member
        for i, member in enumerate(td.tensordicts):
            out.set(str(i), _scalars(member, values))
        return out
    storage = getattr(td, "_tensordict", None)
    if storage is not None and not isinstance(storage, dict):  # a tensorclass
        return _scalars(storage, values)
    for key, value in td._own_items():
        if isinstance(value, torch.Tensor):
            out.set(key, torch.tensor(next(values), dtype=torch.int64))
        elif _base._is_node(value):
            out.set(key, _scalars(value, values))
    return out


def leaf_keys(td: TensorDictBase) -> list:
    """The nested key of every tensor leaf, in the order of ``td._leaves()`` where no
    lazy stack is inside (a lazy stack's leaves are its members', one per member)."""
    return list(td.keys(True, True))


def leaf_bytes(x: torch.Tensor) -> int | tuple:
    """The bytes of a leaf, as 0.15.3 counts them: its elements, plus its gradient's
    where it has one; a jagged nested tensor counts the tensors it is made of (values,
    offsets, lengths). A plain tensor gives an int; one made of parts gives its parts
    as ``((tensor, bytes), ...)`` so that :func:`total` counts a part shared by
    several leaves once without ``count_duplicates``."""
    grad = x.grad if x.requires_grad and x.is_leaf else None
    if not x.is_nested and grad is None:
        return x.numel() * x.element_size()
    parts: list = []
    todo = [x] if grad is None else [x, grad]
    while todo:
        t = todo.pop()
        if t.is_nested:
            if t.layout != torch.jagged:
                raise RuntimeError(
                    "NTs that are not jagged are not supported by the bytes method: "
                    "bytes() counts a nested tensor's parts, which only the jagged "
                    "layout exposes; use layout=torch.jagged"
                )
            attrs, _ = t.__tensor_flatten__()
            todo.extend(getattr(t, attr) for attr in reversed(attrs))
        else:
            parts.append((t, t.numel() * t.element_size()))
    return tuple(parts)


def total(leaves: list, new: list, count_duplicates: bool) -> int:
    """The sum of the per-leaf counts; a tensor stored under several keys counts once
    unless ``count_duplicates`` (a count given as parts, see :func:`leaf_bytes`, counts
    each part once)."""
    if count_duplicates:
        return sum(
            count if type(count) is not tuple else sum(n for _, n in count)
            for count in new
        )
    seen: dict[int, int] = {}
    for x, count in zip(leaves, new):
        if type(count) is tuple:
            for part, n in count:
                seen[id(part)] = n
        else:
            seen[id(x)] = count
    return sum(seen.values())


def join_leaves(
    td: TensorDictBase,
    leaves: list,
    fn: Callable,
    dim: int,
    sorted: Any,
    out: Any,
    op: str,
) -> torch.Tensor:
    """``fn(leaves, dim, out=out)`` (``torch.stack`` / ``torch.cat``) over the leaves,
    in insertion order, sorted by key (``sorted=True``) or in the order of the keys
    ``sorted`` lists."""
    if sorted is True:
        keys = builtins.sorted(
            leaf_keys(td), key=lambda k: (k,) if isinstance(k, str) else tuple(k)
        )
        leaves = [td.get(k) for k in keys]
    elif sorted:
        leaves = [td.get(k) for k in sorted]
    if not leaves:
        raise RuntimeError(f"{op}(): the tensordict holds no tensor to join")
    if out is not None:
        return fn(leaves, dim, out=out)
    return fn(leaves, dim)
