"""The device family (spec/device.yaml): device rules (``*_device_rule``), ``new_*``
shapes, per-leaf helpers and the collectors that turn leaves into plain data
(``nested_dict_result``, ``nested_lists_result``). Rules follow the convention in
:mod:`tensordict._ops.indexing`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import torch

import tensordict.base as _base
from tensordict._ops.batch_shape import shape_arg

if TYPE_CHECKING:
    from tensordict.base import TensorDictBase


def _as_device(device: Any, op: str) -> torch.device:
    if isinstance(device, torch.device):
        parsed = device
    elif isinstance(device, int) and not isinstance(device, bool):
        parsed = torch.device("cuda", device)
    elif isinstance(device, str):
        parsed = torch.device(device)
    else:
        raise TypeError(f"{op}(): expected a device, got {device!r}")
    if parsed.type == "cuda" and parsed.index is None and torch.cuda.is_available():
        parsed = torch.device("cuda", torch.cuda.current_device())
    return parsed


# ``non_blocking_pin`` and ``num_threads`` are 0.15.3's ways to ask for a staged move
# to a GPU; every move between the host and a GPU is staged here
# (``tensordict/_transfer.py``), so they change nothing.
_TO_KEYWORDS = frozenset(
    {
        "device",
        "dtype",
        "non_blocking",
        "other",
        "inplace",
        "non_blocking_pin",
        "num_threads",
        "batch_size",
    }
)


def to_device_rule(current, args: tuple, kwargs: dict, op: str):
    """to: ``(device, dtype, non_blocking, new_device, unchanged, inplace,
    new_batch_size)`` from the forms
    ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)`` (its device
    and dtype), ``to(other_tensordict)`` (its device) and the keywords ``device``,
    ``dtype``, ``non_blocking``, ``other`` (the tensor or tensordict form) and
    ``batch_size`` (the result's, None to keep it). ``unchanged`` when nothing would
    change."""
    inplace = bool(kwargs.get("inplace", False))
    unknown = set(kwargs) - _TO_KEYWORDS
    if unknown:
        raise TypeError(
            f"{op}(): unexpected keyword argument(s) {sorted(unknown)} "
            f"(it takes {sorted(_TO_KEYWORDS)})"
        )
    device = kwargs.get("device")
    dtype = kwargs.get("dtype")
    non_blocking = bool(kwargs.get("non_blocking", False))
    rest = list(args)
    other = kwargs.get("other")
    if other is not None:  # to(other=tensor_or_tensordict), as 0.15.3
        rest.insert(0, other)
        if dtype is None and _base.is_tensor_collection(other):
            # other='s leaves all of one dtype: that dtype too (0.15.3)
            dtypes = {
                x.dtype
                for x in other.values(True, True)
                if isinstance(x, torch.Tensor)
            }
            if len(dtypes) == 1:
                dtype = dtypes.pop()
    if rest:
        first = rest.pop(0)
        if first is None:  # to(None): no device given, as torch's Tensor.to(None)
            pass
        elif isinstance(first, torch.dtype):
            dtype = first
        elif isinstance(first, torch.Tensor):
            device, dtype = first.device, first.dtype
        elif _base.is_tensor_collection(first):
            device = first.device
        elif isinstance(first, (str, int, torch.device)) and not isinstance(
            first, bool
        ):
            device = first
            if rest and isinstance(rest[0], torch.dtype):
                dtype = rest.pop(0)
        else:
            raise TypeError(
                f"{op}(): cannot move or cast a tensordict to {first!r}: expected a "
                "device, a dtype, a tensor or a tensordict"
            )
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"{op}(): unexpected positional argument(s) {rest!r}")
    if device is not None:
        device = _as_device(device, op)
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"{op}(): dtype must be a torch.dtype, got {dtype!r}")
    new_batch_size = kwargs.get("batch_size")  # the result's batch size (0.15.3)
    unchanged = (
        dtype is None
        and (device is None or device == current)
        and new_batch_size is None
    )
    new_device = _base.NO_DEFAULT if device is None else device
    return device, dtype, non_blocking, new_device, unchanged, inplace, new_batch_size


def cuda_device_rule(current, device: Any, kwargs: dict, op: str):
    """cuda: as :func:`to_device_rule` for ``device`` (an index, a device or None for
    the current CUDA device)."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int) and not isinstance(device, bool):
        device = torch.device("cuda", device)
    parsed = _as_device(device, op)
    if parsed.type != "cuda":
        raise ValueError(f"{op}(): {device!r} is not a CUDA device")
    return to_device_rule(current, (parsed,), kwargs, op)


def new_device_rule(current, device: Any, op: str):
    """new_zeros & co.: ``(device, new_device)``: ``device`` for the new leaves (None:
    each leaf's own) and the result's device (NO_DEFAULT: the input's)."""
    if device is _base.NO_DEFAULT or device is None:
        return None, _base.NO_DEFAULT
    parsed = _as_device(device, op)
    return parsed, parsed


def like_device_rule(
    current, dtype: Any, layout: Any, device: Any, requires_grad: bool, memory_format: Any, op: str
):
    """zeros_like & co.: ``(like, new_device)``: the keyword arguments for each leaf's
    ``torch.*_like`` call, only those that differ from torch's defaults, and the
    result's device (NO_DEFAULT: the input's)."""
    device, new_device = new_device_rule(current, device, op)
    like = {}
    if dtype is not None:
        like["dtype"] = dtype
    if layout is not None:
        like["layout"] = layout
    if device is not None:
        like["device"] = device
    if requires_grad:
        like["requires_grad"] = requires_grad
    if memory_format is not torch.preserve_format:
        like["memory_format"] = memory_format
    return like, new_device


def new_rule(batch_size, size: Any, op: str):
    """new_zeros & co.: ``(new_batch_size, batch_dims)``: the new batch size, from
    ``*size`` or ``size`` (ints, a list, a tuple or a torch.Size), and the number of
    batch dims of the input (where each leaf's feature dims start)."""
    if not isinstance(size, tuple):
        size = (size,)
    shape = shape_arg(size, op, "size")
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}(): sizes must be >= 0, got {list(shape)}")
    return torch.Size(shape), len(batch_size)


def new_tensor_leaf(x, data, dtype, device, requires_grad, pin_memory):
    """``x.new_tensor(data, ...)`` for one leaf: a copy of ``data`` with the dtype and
    device of ``x`` unless given (a tensor is copied without torch's warning)."""
    if isinstance(data, torch.Tensor):
        out = data.detach().to(
            device=x.device if device is None else device,
            dtype=x.dtype if dtype is None else dtype,
            copy=True,
        )
        if pin_memory:
            out = out.pin_memory()
        return out.requires_grad_(requires_grad) if requires_grad else out
    return x.new_tensor(
        data,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        pin_memory=bool(pin_memory),
    )


def new_tensor_rule(batch_size, data: Any, op: str) -> tuple:
    """new_tensor: ``data`` is a tensor collection (its leaves are matched key by key;
    the result has its batch size) or tensor-like data (a tensor, a sequence, a number,
    as 0.15.3 takes), which every leaf copies: the result's batch size is then its
    leading dims, as many as this tensordict has batch dims."""
    if _base.is_tensor_collection(data) or isinstance(data, torch.Tensor):
        # as torch's Tensor.new_tensor(tensor) (and 0.15.3, which calls it per leaf)
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than "
            f"td.{op}(sourceTensor).",
            UserWarning,
            stacklevel=3,
        )
    if _base.is_tensor_collection(data):
        return data, data.batch_size
    if not isinstance(data, torch.Tensor):
        try:
            data = torch.as_tensor(data)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(
                f"{op}(): data must be a tensor collection with the same keys or "
                f"tensor-like data, got {type(data).__name__} ({exc})"
            ) from None
    return data, data.shape[: len(batch_size)]


def zero_grad_leaf(x: torch.Tensor, set_to_none: bool) -> None:
    grad = x.grad
    if grad is None:
        return
    if set_to_none:
        x.grad = None
    else:
        if grad.grad_fn is not None:
            grad.detach_()
        else:
            grad.requires_grad_(False)
        grad.zero_()


def share_memory_leaf(x: torch.Tensor) -> None:
    """``x.share_memory_()``: for a plain tensor, on its untyped storage directly
    (what torch's method does after building a typed storage around it, which was
    most of a repeated call's time), and skipped when that storage is shared already."""
    if type(x) is torch.Tensor:
        storage = x.untyped_storage()
        if not storage.is_shared():
            storage.share_memory_()
        return
    x.share_memory_()


def plain_tensor(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a plain ``torch.Tensor`` (a subclass, e.g. a memory-mapped tensor, is
    viewed as one over the same storage)."""
    return x if type(x) is torch.Tensor else x.as_subclass(torch.Tensor)


def leaves_at(td: TensorDictBase, key: Any, op: str) -> list:
    """``target: key``: the tensor at ``key``, or every leaf of the tensordict there
    (a missing key raises KeyError naming it; non-tensor data has no leaves)."""
    value = td.get(key, _base.NO_DEFAULT)
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, _base.TensorDictBase):
        return value._leaves()
    return []


def tolist_leaf(x: torch.Tensor, convert_tensors: Any) -> Any:
    """tolist: one leaf as nested lists (``convert_tensors=True``), a numpy array
    (``"numpy"``) or the tensor itself; indexed along the batch dims afterwards."""
    if convert_tensors == "numpy":
        return x.detach().cpu().numpy()
    if convert_tensors:
        return x.tolist()
    return x


class _Node:
    """A tensordict level in :func:`nested_lists_result`: its entries and batch dims."""

    __slots__ = ("items", "batch_dims")

    def __init__(self, items: dict, batch_dims: int):
        self.items = items
        self.batch_dims = batch_dims


class _Leaf:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _tree(td, it, root_dims: int) -> _Node:
    items = {}
    for key, value in td._own_items():
        if isinstance(value, torch.Tensor):
            items[key] = _Leaf(next(it))
        elif isinstance(value, _base.TensorDictBase):
            items[key] = _tree(value, it, root_dims)
        else:
            items[key] = value
    return _Node(items, len(td.batch_size) - root_dims)


def _index_node(node: _Node, i: int) -> _Node:
    items = {}
    for key, value in node.items.items():
        if isinstance(value, _Leaf):
            value = _Leaf(value.value[i])
        elif isinstance(value, _Node):
            value = _index_node(value, i)
        items[key] = value
    return _Node(items, node.batch_dims)


def _node_lists(node: _Node, sizes: tuple, tolist_first: bool, leaf_sizes) -> Any:
    if sizes:
        return [
            _node_lists(_index_node(node, i), sizes[1:], tolist_first, leaf_sizes)
            for i in range(sizes[0])
        ]
    out = {}
    for key, value in node.items.items():
        if isinstance(value, _Leaf):
            value = value.value
        elif isinstance(value, _Node):
            extra = leaf_sizes(value) if tolist_first else ()
            value = _node_lists(value, extra, tolist_first, leaf_sizes)
        out[key] = value
    return out


def nested_dict_result(td: TensorDictBase, new: list) -> dict:
    """``result: nested_dict``: the new leaves as a nested dict shaped like ``td``
    (non-tensor entries as they are)."""
    return _node_lists(_tree(td, iter(new), len(td.batch_size)), (), False, None)


def nested_lists_result(
    td: TensorDictBase,
    new: list,
    convert_nodes: bool,
    tolist_first: bool,
    as_linked_list: bool,
) -> Any:
    """``result: nested_lists(...)`` (tolist): nested lists along the batch dims, each
    item a dict of the leaves there (a tensordict with ``convert_nodes=False``). With
    ``tolist_first``, nested tensordicts with more batch dims than the root are
    nested lists along those dims too."""
    if not convert_nodes:
        return _td_lists(td, len(td.batch_size))
    sizes = tuple(td.batch_size)

    def leaf_sizes(node: _Node) -> tuple:
        first = next(
            (v.value for v in node.items.values() if isinstance(v, _Leaf)), None
        )
        if first is None or not node.batch_dims:
            return ()
        shape = first.shape if hasattr(first, "shape") else _list_shape(first)
        return tuple(shape[: node.batch_dims])

    root = _tree(td, iter(new), len(sizes))
    return _node_lists(root, sizes, tolist_first, leaf_sizes)


def _list_shape(value) -> tuple:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _td_lists(td, dims: int):
    if not dims:
        return td
    return [_td_lists(item, dims - 1) for item in td.unbind(0)]


def grad_result(
    outputs: TensorDictBase,
    new: list,
    inputs: Any,
    retain_graph: Any,
    create_graph: bool,
    allow_unused: Any,
    is_grads_batched: bool,
    materialize_grads: bool,
) -> TensorDictBase:
    """``result: grad(...)``: ``torch.autograd.grad(outputs, inputs, grad_outputs)``
    in one call over the leaves; ``new`` pairs each leaf of ``outputs`` with its
    ``grad_outputs`` leaf. The gradients come back shaped like ``inputs``; an input
    leaf the outputs do not depend on (``allow_unused=True``) is left out."""
    if not _base.is_tensor_collection(inputs):
        raise ValueError(
            f"torch.autograd.grad(td, inputs): inputs must be a tensordict when the outputs "
            f"are one (got {type(inputs).__name__})"
        )
    grad_outputs = [g for _, g in new]
    in_leaves, rebuild = inputs._leaves_and_rebuild()
    grads = torch.autograd.grad(
        [y for y, _ in new],
        in_leaves,
        None if all(g is None for g in grad_outputs) else grad_outputs,
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=allow_unused,
        is_grads_batched=is_grads_batched,
        materialize_grads=materialize_grads,
    )
    unused = {id(x) for x, g in zip(in_leaves, grads) if g is None}
    if not unused:
        return rebuild(list(grads))
    result = rebuild([x if g is None else g for x, g in zip(in_leaves, grads)])
    return result._fast_apply(lambda g: None if id(g) in unused else g, filter_empty=False)


def to_with_batch_size(td, new_batch_size, device, dtype, non_blocking: bool):
    """``to(..., batch_size=)``: ``td`` moved or cast as asked (a copy when nothing
    else changes), with batch size ``new_batch_size`` (the nested tensordicts keep
    theirs). A kind whose batch size follows another's raises first."""
    td._check_to_batch_size()
    if device is None and dtype is None:
        result = td.copy()
    else:
        result = td.to(device, dtype, non_blocking=non_blocking)
        if result is td:
            result = td.copy()
    result.batch_size = new_batch_size
    return result


def moved_back(source, result):
    """``result`` (a moved or cast copy of ``source``) as a context manager: ``with
    td.to(...) as moved:`` writes what the block wrote back into ``td`` on exit (see
    ``_MovedBack`` in ``base.py``), as 0.15.3 does. ``source`` itself is returned as
    it is."""
    if result is not source:
        result._last_lock_op = _base._MovedBack(source)
    return result
