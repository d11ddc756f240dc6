"""Tensordicts as nodes of torch's pytrees (``torch.utils._pytree``).

``TensorDict``, ``LazyStackedTensorDict`` and every tensorclass are registered, so that
``tree_map``, ``tree_flatten``, ``torch.export`` inputs and the ``torch.func`` transforms
(``vmap``, ``grad``, ``jacrev``, ``jacfwd``) reach the tensors inside them. Tensorclasses
defined later register as they are created (``tensorclass._SUBCLASS_HOOKS``).

What a node flattens to (its *children*; the rest goes into its *context*):

- ``TensorDict``: its entries in key order, tensors and nested containers; non-tensor
  data stays in the context, beside the keys, batch size, device and names.
- a tensorclass: one child, the tensordict it wraps.
- ``LazyStackedTensorDict``: one child, its dense stack, when its tensordicts are
  ``TensorDict``\\ s with the same keys and shapes; otherwise each of its tensordicts
  with the stack dim kept as a dim of size one. Either way the leaves carry every batch
  dim of the stack, where the stack has it, so that ``in_dims``/``out_dims`` mean the
  same dims as on a ``TensorDict``. Unflattening splits the stack again.

The batch size of an unflattened tensordict is the one it had, unless the leaves say
otherwise (see :func:`_batch_change`): a leaf that ``torch.vmap`` has just batched lost
the vmapped dim, and the tensordict loses it too (inside the vmapped function the batch
size is the per-sample one); a leaf that vmap has just unbatched gained the dim at
``out_dims``, and so does the tensordict. Any other change (a ``tree_map`` whose
function reshapes) keeps the batch size if every entry still fits it, and otherwise
takes the longest leading shape the entries share.

The module sits below the concrete classes (it is a base of ``TensorDict`` and
``LazyStackedTensorDict`` through :class:`PytreeMixin`): it reaches them through
``tensordict._registry``; :func:`register_nodes` runs once every class exists.
"""

from __future__ import annotations

import collections
from typing import Any, Sequence

import torch
import torch.utils._pytree as _torch_pytree
from torch import Tensor
from torch._C import _functorch

from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection, _is_node

__all__ = ["PytreeMixin", "from_pytree", "register_nodes"]

# Filled by register_nodes(): the concrete classes (this module is imported by them).
_TensorDict: type = None  # type: ignore[assignment]
_LazyStack: type = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------
# How the batch dims moved between flatten and unflatten.
# --------------------------------------------------------------------------------------


def _first_leaf(node: Any) -> Tensor | None:
    """The first tensor that flattening ``node`` yields (depth first), when it is a
    tensor the node holds as it is: a lazy stack's leaves are made by its flatten, so
    none is looked for inside one."""
    if isinstance(node, Tensor):
        return node
    if getattr(node, "_is_tensorclass", False):
        node = node._tensordict
    if type(node) is not _TensorDict:
        return None
    for value in node._tensordict.values():
        if isinstance(value, Tensor):
            return value
        if _is_node(value):
            leaf = _first_leaf(value)
            if leaf is not None:
                return leaf
    return None


def _probe_of(children: Sequence) -> tuple[int, Tensor | None]:
    """The child holding the probe leaf (the first one that holds a leaf) and that
    leaf."""
    for index, child in enumerate(children):
        leaf = _first_leaf(child)
        if leaf is not None:
            return index, leaf
    return -1, None


def _batch_change(probe_shape, probe_id, new_probe, ndim: int):
    """How the batch dims moved, read off the probe leaf (``ndim``: the batch dims
    before); ``None`` when the leaf's number of dims did not change in a way this reads.

    - ``("removed", d)``: ``torch.vmap`` has just batched the leaf along its dim ``d``
      (the leaf is a batched tensor of the current vmap level wrapping the very tensor
      that was flattened), so the vmapped function sees it without that dim;
    - ``("inserted", p)``: the leaf gained one dim, at ``p`` (the first position where
      inserting a dim into the old shape gives the new one; ``None`` when that is past
      the batch dims): what vmap's ``out_dims`` does, and the batching dim of
      ``jacrev``'s basis;
    - ``("prefixed", m)``: the leaf gained ``m`` leading dims (a jacobian's output
      dims) and does not read as the old shape with dims appended (a jacobian with
      respect to a tensor input appends the input's dims, which keeps the batch).
    """
    new_shape = new_probe.shape
    delta = len(new_shape) - len(probe_shape)
    if delta == -1:
        if torch.compiler.is_compiling():
            # torch.compile traces vmap with batched fake tensors but cannot read
            # their levels and batch dims: the first dim whose removal gives the new
            # shape (exact unless sizes repeat around it)
            if not _functorch.is_batchedtensor(new_probe):
                return None
            for d in range(len(probe_shape)):
                if (
                    new_shape[:d] == probe_shape[:d]
                    and new_shape[d:] == probe_shape[d + 1 :]
                ):
                    return ("removed", d)
            return None
        level = _functorch.maybe_current_level()
        if (
            level is not None
            and _functorch.is_batchedtensor(new_probe)
            and _functorch.maybe_get_level(new_probe) == level
            and id(_functorch.get_unwrapped(new_probe)) == probe_id
        ):
            return ("removed", _functorch.maybe_get_bdim(new_probe))
        return None
    if delta == 1:
        for p in range(min(ndim, len(probe_shape)) + 1):
            if (
                new_shape[:p] == probe_shape[:p]
                and new_shape[p + 1 :] == probe_shape[p:]
            ):
                return ("inserted", p)
        return ("inserted", None)
    if (
        delta > 1
        and new_shape[: len(probe_shape)] != probe_shape  # not dims appended
        and new_shape[delta:] == probe_shape
    ):
        return ("prefixed", delta)
    return None


def _shape_of(value: Any):
    if isinstance(value, TensorCollection):  # before Tensor, whose isinstance is slower
        return value.batch_size
    if isinstance(value, Tensor):
        return value.shape
    return None


def _fitted(children: Sequence, batch_size: torch.Size, names):
    """``(batch_size, names)`` if every child still fits the batch size, else the
    longest leading shape the children share (names dropped)."""
    n = len(batch_size)
    if not n:
        return batch_size, names
    if n == 1:  # the common batch, checked without slicing
        first = batch_size[0]
        for child in children:
            shape = child.shape if type(child) is Tensor else _shape_of(child)
            if shape is not None and (not shape or shape[0] != first):
                break
        else:
            return batch_size, names
    else:
        for child in children:
            shape = child.shape if type(child) is Tensor else _shape_of(child)
            if shape is not None and shape[:n] != batch_size:
                break
        else:
            return batch_size, names
    shapes = [s for s in map(_shape_of, children) if s is not None]
    common = []
    for dims in zip(*shapes):
        if any(d != dims[0] for d in dims):
            break
        common.append(dims[0])
    return torch.Size(common), None


def _moved(batch_size: torch.Size, names, change, probe_shape):
    """The batch size and names after ``change`` (see :func:`_batch_change`);
    ``probe_shape`` is the probe leaf's new shape."""
    kind, pos = change
    n = len(batch_size)
    if kind == "prefixed":
        new_names = None if names is None else [None] * pos + list(names)
        return probe_shape[:pos] + batch_size, new_names
    if pos is None or (kind == "removed" and pos >= n):
        return batch_size, names  # the dim was past the batch dims
    if kind == "removed":
        new_names = None if names is None else names[:pos] + names[pos + 1 :]
        return batch_size[:pos] + batch_size[pos + 1 :], new_names
    new_names = None if names is None else names[:pos] + [None] + names[pos:]
    return probe_shape[: n + 1], new_names


# --------------------------------------------------------------------------------------
# TensorDict.
# --------------------------------------------------------------------------------------


def _probe_fields(probe) -> tuple:
    """``(shape, id)`` of the leaf a context watches (``(None, None)`` without one).
    Under torch.compile the id is not taken (dynamo before torch 2.13 cannot take the
    id of a tensor made in the graph) and not needed: :func:`_batch_change` reads the
    batch dims from the shapes there."""
    if probe is None:
        return None, None
    return probe.shape, None if torch.compiler.is_compiling() else id(probe)


class TensorDictContext:
    """The context of a flattened ``TensorDict``: its keys (every key, in order),
    batch size, device, names and non-tensor entries (``{position: value}``), plus the
    shape and id of its probe leaf, which only serve to read how the batch dims moved
    (they take no part in comparisons: two tensordicts with the same keys, batch size,
    device, names and non-tensor data have equal specs)."""

    __slots__ = (
        "keys",
        "batch_size",
        "device",
        "names",
        "non_tensor",
        "probe_index",
        "probe_shape",
        "probe_id",
        "in_transform",
    )

    def __init__(
        self, keys, batch_size, device, names, non_tensor, probe_index, probe
    ) -> None:
        self.keys = keys
        self.batch_size = batch_size
        self.device = device
        self.names = names
        self.non_tensor = non_tensor
        self.probe_index = probe_index
        self.probe_shape, self.probe_id = _probe_fields(probe)
        # A tensordict without batch dims takes new ones from its leaves only when it
        # was flattened under a torch.func transform (vmap's out_dims); elsewhere, as
        # jacrev's result built on the input's spec or a tree_map, it keeps none, as in
        # 0.15.3 (every leaf fits an empty batch size).
        self.in_transform = bool(batch_size) or (
            probe is not None
            and (
                torch.compiler.is_compiling()
                or _functorch.maybe_current_level() is not None
            )
        )

    def _compared(self) -> tuple:
        return (self.keys, self.batch_size, self.device, self.names)

    def __eq__(self, other: object) -> bool:
        if type(other) is not TensorDictContext:
            return NotImplemented
        return self._compared() == other._compared() and _same_data(
            self.non_tensor, other.non_tensor
        )

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(
            (
                tuple(self.keys),
                tuple(self.batch_size),
                self.device,
                None if self.names is None else tuple(self.names),
            )
        )

    def __repr__(self) -> str:
        extra = f", non_tensor={self.non_tensor}" if self.non_tensor else ""
        return (
            f"TensorDictContext(keys={self.keys}, batch_size={list(self.batch_size)}, "
            f"device={self.device}, names={self.names}{extra})"
        )


def _static_shape(shape) -> tuple | None:
    """``shape`` as a tuple of ints, None when a dim is symbolic (dynamic shapes)."""
    dims = tuple(shape)
    for d in dims:
        if not isinstance(d, int):
            return None
    return dims


def _traced_context(storage: dict, td, non_tensor: dict, index: int, probe) -> dict:
    """The context of a ``TensorDict`` flattened while dynamo traces (``torch.compile``,
    strict ``torch.export``): a dict of plain values. Dynamo must turn the spec of a
    traced function's output into a constant, and cannot do so with an object it saw
    created (a :class:`TensorDictContext`); it can with a dict of ints, strings,
    devices and tuples. Sizes that are symbolic (dynamic shapes) are left out
    (``None``): the unflattened tensordict then reads its batch size off its leaves.
    :func:`_unflatten_td` turns it back into a :class:`TensorDictContext`."""
    batch_size = td._batch_size
    names = td._names
    return {
        "keys": list(storage),
        "batch_size": _static_shape(batch_size),
        "batch_dims": len(batch_size),
        "device": td._device,
        "names": None if names is None else list(names),
        "non_tensor": non_tensor,
        "probe_index": index,
        "probe_shape": None if probe is None else _static_shape(probe.shape),
    }


def _context_of_traced(traced: dict, children: Sequence) -> TensorDictContext:
    """The :class:`TensorDictContext` a :func:`_traced_context` stands for."""
    context = TensorDictContext.__new__(TensorDictContext)
    context.keys = traced["keys"]
    context.device = traced["device"]
    context.names = traced["names"]
    context.non_tensor = traced["non_tensor"]
    batch_size = traced["batch_size"]
    probe_shape = traced["probe_shape"]
    if batch_size is None:  # symbolic: the leading dims of a leaf
        leaf = next((c for c in map(_shape_of, children) if c is not None), None)
        batch_size = () if leaf is None else leaf[: traced["batch_dims"]]
        probe_shape = None
    context.batch_size = torch.Size(batch_size)
    # without a known probe shape, the batch dims are not read off the leaves
    context.probe_index = -1 if probe_shape is None else traced["probe_index"]
    context.probe_shape = None if probe_shape is None else torch.Size(probe_shape)
    context.probe_id = None
    context.in_transform = bool(batch_size) or probe_shape is not None
    return context


def _same_data(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for key, value in a.items():
        other = b[key]
        if value is other:
            continue
        try:
            if not bool(value == other):
                return False
        except Exception:  # noqa: BLE001 - values without a plain truth value
            return False
    return True


# Python numbers are children too: a tensordict stores a number as a tensor, so a raw
# number is a placeholder some pytree code unflattened into it (torch's in_dims
# broadcasting unflattens zeros), which must flatten back as the leaf it stands for.
_CHILD_TYPES = (Tensor, int, float, complex)


def _is_child(value: Any) -> bool:
    return isinstance(value, _CHILD_TYPES) or _is_node(value)


# The types seen to be children. Whether a value is a child depends on its type only
# (``_is_non_tensor`` is a class attribute), so flattening checks a node's entries with
# one C-level set operation on their types; values of a type not seen yet take the
# per-value test once.
_KNOWN_CHILD_TYPES: set = {Tensor}


def _flatten_td(td) -> tuple[list, TensorDictContext]:
    storage = td._tensordict
    values = list(storage.values())
    non_tensor: dict = {}
    if not _KNOWN_CHILD_TYPES.issuperset(map(type, values)):
        for value in values:
            if _is_child(value):
                _KNOWN_CHILD_TYPES.add(type(value))
        if not _KNOWN_CHILD_TYPES.issuperset(map(type, values)):
            # non-tensor data: kept in the context, at its position among the keys
            non_tensor = {i: v for i, v in enumerate(values) if not _is_child(v)}
            values = [v for v in values if _is_child(v)]
    if values and type(values[0]) is Tensor:
        index, probe = 0, values[0]
    else:
        index, probe = _probe_of(values)
    if torch.compiler.is_dynamo_compiling():
        return values, _traced_context(storage, td, non_tensor, index, probe)
    context = TensorDictContext(
        list(storage), td._batch_size, td._device, td._names, non_tensor, index, probe
    )
    return values, context


def _flatten_td_with_keys(td):
    values, context = _flatten_td(td)
    if type(context) is dict:  # traced (see _traced_context)
        keys, non_tensor = context["keys"], context["non_tensor"]
    else:
        keys, non_tensor = context.keys, context.non_tensor
    if non_tensor:
        keys = [k for i, k in enumerate(keys) if i not in non_tensor]
    return [(_torch_pytree.MappingKey(k), v) for k, v in zip(keys, values)], context


def _unflatten_td(children, context: TensorDictContext):
    if not isinstance(children, list):
        children = list(children)
    if type(context) is dict:
        context = _context_of_traced(context, children)
    keys = context.keys
    if context.non_tensor:
        values = iter(children)
        storage = {
            key: (context.non_tensor[i] if i in context.non_tensor else next(values))
            for i, key in enumerate(keys)
        }
    else:
        storage = dict(zip(keys, children))
    batch_size, names, device = context.batch_size, context.names, context.device
    change = None
    probe = None
    index = context.probe_index
    if 0 <= index < len(children):
        probe = children[index]
        if type(probe) is not Tensor:
            probe = _first_leaf(probe)
        if (
            probe is not None
            and probe.ndim != len(context.probe_shape)
            and context.in_transform
        ):
            change = _batch_change(
                context.probe_shape, context.probe_id, probe, len(batch_size)
            )
    if change is not None:
        batch_size, names = _moved(batch_size, names, change, probe.shape)
    batch_size, names = _fitted(children, batch_size, names)
    if device is not None and probe is not None and probe.device != device:
        device = None  # the leaves were moved (tree_map(lambda x: x.to(...)))
    return _TensorDict._from_storage(storage, batch_size, device, names)


def _dumpable_td_context(context: TensorDictContext) -> dict:
    import json

    if type(context) is dict:  # a traced one (the out spec of torch.export)
        context = _context_of_traced(context, ())

    non_tensor = [[i, value] for i, value in context.non_tensor.items()]
    try:
        json.dumps(non_tensor)
    except TypeError as err:
        raise TypeError(
            f"a TensorDict spec can be serialized only when its non-tensor entries are "
            f"JSON values; keys {[context.keys[i] for i in context.non_tensor]} hold "
            f"{[type(v).__name__ for v in context.non_tensor.values()]} ({err})"
        ) from None
    return {
        "keys": list(context.keys),
        "batch_size": list(context.batch_size),
        "device": None if context.device is None else str(context.device),
        "names": context.names,
        "non_tensor": non_tensor,
    }


def _loaded_td_context(dumped: dict) -> TensorDictContext:
    non_tensor = {int(i): value for i, value in dumped["non_tensor"]}
    device = dumped["device"]
    return TensorDictContext(
        dumped["keys"],
        torch.Size(dumped["batch_size"]),
        None if device is None else torch.device(device),
        dumped["names"],
        non_tensor,
        -1,  # no probe: a spec read back from disk holds no leaf to compare with
        None,
    )


# --------------------------------------------------------------------------------------
# Tensorclasses: one child, the wrapped tensordict.
# --------------------------------------------------------------------------------------


def _flatten_tc(tc):
    return [tc._tensordict], None


def _flatten_tc_with_keys(tc):
    return [(_torch_pytree.GetAttrKey("_tensordict"), tc._tensordict)], None


def _tc_unflattener(cls: type):
    def unflatten(children, context):
        (td,) = children
        return cls._from_td(td)

    unflatten.__qualname__ = f"unflatten_{cls.__qualname__}"
    return unflatten


def _register_tensorclass(cls: type) -> None:
    if cls in _torch_pytree.SUPPORTED_NODES:
        return
    _torch_pytree.register_pytree_node(
        cls,
        _flatten_tc,
        _tc_unflattener(cls),
        serialized_type_name=f"{cls.__module__}.{cls.__qualname__}",
        flatten_with_keys_fn=_flatten_tc_with_keys,
    )


# --------------------------------------------------------------------------------------
# LazyStackedTensorDict.
# --------------------------------------------------------------------------------------


class LazyStackContext:
    """The context of a flattened lazy stack: whether its child is the dense stack
    (``dense=True``) or its tensordicts (each with the stack dim of size one), the
    stack dim, its name, the batch size and the probe leaf (as in
    :class:`TensorDictContext`, left out of comparisons)."""

    __slots__ = (
        "dense",
        "stack_dim",
        "stack_dim_name",
        "batch_size",
        "probe_shape",
        "probe_id",
    )

    def __init__(self, dense, stack_dim, stack_dim_name, batch_size, probe) -> None:
        self.dense = dense
        self.stack_dim = stack_dim
        self.stack_dim_name = stack_dim_name
        self.batch_size = batch_size
        self.probe_shape, self.probe_id = _probe_fields(probe)

    def _compared(self) -> tuple:
        return (self.dense, self.stack_dim, self.stack_dim_name, self.batch_size)

    def __eq__(self, other: object) -> bool:
        if type(other) is not LazyStackContext:
            return NotImplemented
        return self._compared() == other._compared()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._compared()[:3] + (tuple(self.batch_size),))

    def __repr__(self) -> str:
        return (
            f"LazyStackContext(dense={self.dense}, stack_dim={self.stack_dim}, "
            f"batch_size={list(self.batch_size)})"
        )


def _stackable(members: list) -> bool:
    """True when the members are TensorDicts with the same keys (nested and
    non-tensor ones included) and the same tensor shapes: their dense stack loses
    nothing."""
    if not all(type(td) is _TensorDict for td in members):
        return False
    first = members[0]
    for _, value in first.items(True):
        if isinstance(value, (int, float, complex)):
            return False  # placeholders, not data: the stacked tensordicts as they are
    keys = set(first.keys(True))
    shapes = {key: value.shape for key, value in first.items(True, True)}
    for td in members[1:]:
        if set(td.keys(True)) != keys:
            return False
        for key, value in td.items(True, True):
            if shapes.get(key) != value.shape:
                return False
    return True


def _flatten_lazy(stack):
    members = stack.tensordicts
    sd = stack.stack_dim
    if members and _stackable(members):
        children = [stack._with_dense_stacks("tree_flatten")]
        dense = True
    else:
        children = [td.unsqueeze(sd) for td in members]
        dense = False
    probe = _first_leaf(children[0]) if children else None
    context = LazyStackContext(
        dense, sd, stack._stack_dim_name, stack.batch_size, probe
    )
    return children, context


def _flatten_lazy_with_keys(stack):
    children, context = _flatten_lazy(stack)
    return [(_torch_pytree.SequenceKey(i), c) for i, c in enumerate(children)], context


def _unflatten_lazy(children, context: LazyStackContext):
    if not isinstance(children, list):
        children = list(children)
    sd = context.stack_dim
    if not children:
        return _LazyStack._new_unsafe(
            [], sd, batch_size=context.batch_size, stack_dim_name=context.stack_dim_name
        )
    change = None
    if context.probe_shape is not None:
        probe = _first_leaf(children[0])
        if probe is not None and len(probe.shape) != len(context.probe_shape):
            change = _batch_change(
                context.probe_shape,
                context.probe_id,
                probe,
                len(context.batch_size),
            )
    new_sd = sd
    if change is not None:
        kind, pos = change
        if kind == "prefixed":
            pos = 0
            new_sd = sd + change[1]
        elif kind == "removed" and pos == sd:
            if context.dense:
                return children[0]  # vmap over the stack dim: one tensordict a call
            raise ValueError(
                f"vmap over dim {sd} of a LazyStackedTensorDict, its stack dim: each "
                f"call would get one of its tensordicts, which have different keys or "
                f"shapes and cannot be batched. vmap over another dim, or make the "
                f"tensordicts match and stack them densely"
            )
        elif pos is not None and (pos < sd or (kind == "inserted" and pos == sd)):
            new_sd = sd - 1 if kind == "removed" else sd + 1
    if context.dense:
        dense = children[0]
        n = len(context.batch_size) if change is None else None
        bs = dense.batch_size
        if (
            (n is not None and len(bs) != n)
            or len(bs) <= new_sd
            or (context.probe_shape is not None and _first_leaf(dense) is None)
        ):
            # the batch dims changed beyond what a stack can follow, or the leaves
            # are placeholders (torch's in_dims broadcasting): a dense tensordict,
            # which flattens to the same leaves
            return dense
        members = list(dense.unbind(new_sd))
    else:
        members = []
        for child in children:
            bs = child.batch_size
            if len(bs) <= new_sd or bs[new_sd] != 1:
                raise ValueError(
                    f"cannot rebuild a LazyStackedTensorDict (stack dim {sd}) from "
                    f"tensordicts of batch size {list(bs)}: the stack dim, kept as a "
                    f"dim of size one, was expected at {new_sd}"
                )
            members.append(child.squeeze(new_sd))
    return _LazyStack._new_unsafe(
        members, new_sd, stack_dim_name=context.stack_dim_name
    )


# --------------------------------------------------------------------------------------
# Registration.
# --------------------------------------------------------------------------------------


def register_nodes() -> None:
    """Register the concrete classes with ``torch.utils._pytree`` (once, when every
    class exists: ``tensordict/__init__.py`` calls it), and every tensorclass, now and
    as they are defined."""
    global _TensorDict, _LazyStack
    if _TensorDict is not None:
        return
    _TensorDict = container_class("TensorDict")
    _LazyStack = container_class("LazyStackedTensorDict")
    _torch_pytree.register_pytree_node(
        _TensorDict,
        _flatten_td,
        _unflatten_td,
        serialized_type_name="tensordict.TensorDict",
        to_dumpable_context=_dumpable_td_context,
        from_dumpable_context=_loaded_td_context,
        flatten_with_keys_fn=_flatten_td_with_keys,
    )
    _torch_pytree.register_pytree_node(
        _LazyStack,
        _flatten_lazy,
        _unflatten_lazy,
        serialized_type_name="tensordict.LazyStackedTensorDict",
        flatten_with_keys_fn=_flatten_lazy_with_keys,
    )
    tensorclass_base = container_class("TensorClass")
    pending = [tensorclass_base]
    while pending:
        cls = pending.pop()
        _register_tensorclass(cls)
        pending.extend(cls.__subclasses__())
    tensorclass_base._subclass_hooks.append(_register_tensorclass)


class _exclude_td_from_pytree:
    """Within this block, tensordicts, lazy stacks and tensorclasses are pytree
    leaves, not nodes (0.15.3's name; TorchRL's ``_pseudo_vmap`` unbinds and stacks
    them whole). Their registrations come back on exit."""

    def __enter__(self) -> "_exclude_td_from_pytree":
        nodes = _torch_pytree.SUPPORTED_NODES
        tensordict_base = container_class("TensorDictBase")
        self._removed = {
            cls: nodes.pop(cls)
            for cls in list(nodes)
            if isinstance(cls, type)
            and (
                issubclass(cls, tensordict_base)
                or getattr(cls, "_is_tensorclass", False)
            )
        }
        return self

    def __exit__(self, *exc_info) -> None:
        _torch_pytree.SUPPORTED_NODES.update(self._removed)
        self._removed = {}


# --------------------------------------------------------------------------------------
# to_pytree / from_pytree: plain Python containers <-> tensordicts.
# --------------------------------------------------------------------------------------

#: The entry naming the Python container a level came from.
PYTREE_TYPE_KEY = "_pytree_type"
_KEY_ENTRY = "<pytree key {}>"


def _is_structseq(kind: type) -> bool:
    return issubclass(kind, tuple) and hasattr(kind, "n_fields")


def from_pytree(
    pytree: Any,
    *,
    batch_size=None,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
):
    """A tensordict from a pytree of dicts, lists, tuples and named tuples (nested to
    any depth) whose leaves are tensors, tensordicts, Python numbers or numpy arrays;
    :meth:`PytreeMixin.to_pytree` gives the pytree back.

    Each container becomes a nested TensorDict whose ``"_pytree_type"`` entry holds its
    type; list and tuple items get the keys ``"0"``, ``"1"``, ...; a dict key that is not
    a string is kept in an entry ``{"key": key, "value": value}``. A tensor or a
    tensordict given as ``pytree`` is returned as it is. ``batch_size`` sets the batch
    size; ``auto_batch_size=True`` takes the longest leading shape the entries share (at
    most ``batch_dims`` dims).

    >>> td = from_pytree({"a": [torch.zeros(3), torch.ones(3)]})
    >>> td["a", "1"]
    tensor([1., 1., 1.])
    >>> td.to_pytree()["a"][1]
    tensor([1., 1., 1.])
    """
    if isinstance(pytree, Tensor) or isinstance(pytree, TensorCollection):
        return pytree
    td = _container_to_td(pytree, ())
    if batch_size is not None:
        td.batch_size = batch_size
    elif auto_batch_size:
        td.auto_batch_size_(batch_dims)
    return td


def _leaf_to_entry(value: Any, path: tuple):
    if isinstance(value, (Tensor, TensorCollection)):
        return value
    if isinstance(value, (bool, int, float, complex)) or type(value).__module__ == (
        "numpy"
    ):
        return torch.as_tensor(value)
    if isinstance(value, (dict, list, tuple)):
        return _container_to_td(value, path)
    raise NotImplementedError(
        f"from_pytree: the value at {path!r} is a {type(value).__name__}; a pytree "
        f"converts to a tensordict when its leaves are tensors, tensordicts, Python "
        f"numbers or numpy arrays (in dicts, lists, tuples and named tuples)"
    )


def _container_to_td(container: Any, path: tuple):
    td = _TensorDict()
    storage = td._tensordict
    if isinstance(container, dict):
        for i, (key, value) in enumerate(container.items()):
            if isinstance(key, str):
                storage[key] = _leaf_to_entry(value, path + (key,))
            else:  # a key a tensordict cannot hold: kept beside its value
                entry = _TensorDict()
                entry._tensordict["key"] = key
                entry._tensordict["value"] = _leaf_to_entry(value, path + (key,))
                storage[_KEY_ENTRY.format(i)] = entry
    elif isinstance(container, (list, tuple)):
        for i, value in enumerate(container):
            storage[str(i)] = _leaf_to_entry(value, path + (i,))
    else:
        raise NotImplementedError(
            f"from_pytree: {type(container).__name__} is not a pytree container "
            f"(dict, list, tuple, named tuple)"
        )
    storage[PYTREE_TYPE_KEY] = type(container)
    return td


def _td_to_container(td) -> Any:
    kind = td._get_str(PYTREE_TYPE_KEY, None, missing_ok=True)
    items = [(k, v) for k, v in td._own_items() if k != PYTREE_TYPE_KEY]
    converted = [(k, _td_to_container(v) if _is_node(v) else v) for k, v in items]
    if kind is None:  # not made by from_pytree: a tensordict it stays
        out = td._new_empty()
        for key, value in converted:
            out._set_str(key, value, inplace=False, validated=True)
        return out
    if issubclass(kind, dict):
        pairs = []
        for key, value in converted:
            if key.startswith("<pytree key ") and isinstance(value, _TensorDict):
                pairs.append((value["key"], value["value"]))
            else:
                pairs.append((key, value))
        if issubclass(kind, collections.defaultdict):
            return kind(None, pairs)
        return kind(pairs)
    values = [value for _, value in sorted(converted, key=lambda kv: int(kv[0]))]
    if _torch_pytree.is_namedtuple_class(kind):
        return kind(*values)
    if kind is tuple or kind is list:
        return kind(values)
    if _is_structseq(kind):
        return kind(values)
    return kind(values)


class PytreeMixin:
    """``to_pytree`` / ``from_pytree``: tensordicts and plain Python containers (a base
    of the concrete container classes; tensorclasses forward to it)."""

    __slots__ = ()

    def to_pytree(self):
        """The pytree :func:`from_pytree` was given: each level with a
        ``"_pytree_type"`` entry becomes that container again (its keys, or its items
        in order); a level without one stays a tensordict.

        >>> tree = {"obs": [torch.zeros(2), torch.ones(2)], "done": torch.zeros(1)}
        >>> td = TensorDict.from_pytree(tree)
        >>> tree = td.to_pytree()
        >>> type(tree).__name__, type(tree["obs"]).__name__, tree["obs"][1]
        ('dict', 'list', tensor([1., 1.]))
        >>> type(TensorDict(a=torch.zeros(1)).to_pytree()).__name__   # no "_pytree_type"
        'TensorDict'
        """
        return _td_to_container(self)

    @classmethod
    def from_pytree(
        cls,
        pytree: Any,
        *,
        batch_size=None,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
    ):
        """See :func:`tensordict.from_pytree`.

        >>> td = TensorDict.from_pytree({"a": torch.zeros(2), "b": (torch.ones(1),)})
        >>> td.to_pytree()["b"]
        (tensor([1.]),)
        """
        return from_pytree(
            pytree,
            batch_size=batch_size,
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
        )
