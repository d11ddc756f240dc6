"""``torch.vmap`` over tensordicts, one tensordict at a time.

Tensordicts are pytree nodes (``tensordict/_pytree.py``), so ``torch.vmap`` would
already reach their tensors one by one. It would do so slowly (vmap flattens and
unflattens its inputs and outputs several times over to match ``in_dims`` and
``out_dims``), and ``in_dims``/``out_dims`` would count a tensordict's dims per leaf,
like a tensor's. Here vmap's three steps that take inputs apart and put outputs back
together (``_process_batched_inputs``, ``_create_batched_inputs``, ``_unwrap_batched``,
and ``_flatten_chunks_output`` for ``chunk_size``) are wrapped so that a tensordict is
one argument with one in/out dim, counted along its batch dims:

- ``in_dims=d`` batches every tensor of the tensordict along ``d`` (negative ``d``
  counts from the last batch dim), and the vmapped function sees the tensordict with
  batch dim ``d`` removed: the per-sample batch size (names follow). A ``d`` past the
  batch dims batches a feature dim of every tensor and keeps the batch size.
- a tensordict returned gets the vmapped dim at ``out_dims=o`` (negative ``o`` counts
  from the end of the batch dims it comes back with).
- a lazy stack batched along its stack dim gives each call the dense stack's element (a
  TensorDict; its tensordicts must stack densely), and that tensordict, returned, comes
  back as a lazy stack along its out dim; along another dim, each stacked tensordict is
  batched and the stack stays lazy. A tensorclass is batched through the
  tensordict it wraps. Non-tensor data passes through unchanged.
- a tensordict with ``in_dims`` None reaches the function as a shallow copy (new
  tensordicts, the same tensors), so that what the function writes into it (batched
  tensors, dead once vmap returns) stays out of the caller's. A locked tensordict
  reaches it locked.

Calls without tensordicts go to torch's own functions unchanged; a tensordict hidden in
a container other than tuples, lists and dicts goes through the pytree route.
``randomness`` and ``chunk_size`` are vmap's own. Under ``torch.compile`` the same code
is traced (through ``torch._functorch.predispatch``'s traceable wrappers).
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch._functorch.vmap as _vmap_module
import torch.utils._pytree as _pytree
from torch import Tensor
from torch._C import _functorch
from torch._functorch import predispatch

from tensordict._lazy import LazyStackedTensorDict
from tensordict._module_state import _STACKED_LAZY
from tensordict._td import TensorDict
from tensordict.base import TensorDictBase

__all__ = ["install"]

_WRAPPED = (
    "_process_batched_inputs",
    "_create_batched_inputs",
    "_unwrap_batched",
    "_flatten_chunks_output",
)
# torch's functions (if this module is reloaded, the ones it wrapped)
_TORCH: dict[str, Callable] = {
    name: getattr(
        getattr(_vmap_module, name), "__tensordict_wraps__", getattr(_vmap_module, name)
    )
    for name in _WRAPPED
}


def _is_collection(value: Any) -> bool:
    return isinstance(value, TensorDictBase)


def _holds_collection(tree: Any) -> bool:
    """Whether a tensordict sits in ``tree``, looking through tuples, lists and
    dicts."""
    if isinstance(tree, TensorDictBase):
        return True
    if isinstance(tree, (tuple, list)):
        for item in tree:
            if isinstance(item, (TensorDictBase, tuple, list, dict)) and (
                _holds_collection(item)
            ):
                return True
        return False
    if isinstance(tree, dict):
        return any(_holds_collection(item) for item in tree.values())
    return False


def _name(func: Callable) -> str:
    return _vmap_module._get_name(func)


_TUPLE_SPECS: dict[int, Any] = {}


def _flat(args: tuple) -> tuple[list, Any]:
    """``tree_flatten(args)`` with tensordicts as leaves; when no argument is a
    container (the common call, ``vmap(f)(td, x)``), without walking anything."""
    nodes = _pytree.SUPPORTED_NODES
    for arg in args:
        if type(arg) is Tensor or isinstance(arg, TensorDictBase):
            continue  # leaves here (before the slower namedtuple test)
        kind = type(arg)
        if kind in nodes:
            return _pytree.tree_flatten(args, is_leaf=_is_collection)
        if _pytree.is_namedtuple_class(kind):
            return _pytree.tree_flatten(args, is_leaf=_is_collection)
    spec = _TUPLE_SPECS.get(len(args))
    if spec is None:
        spec = _TUPLE_SPECS[len(args)] = _pytree.tree_structure((0,) * len(args))
    return list(args), spec


def _leaf_dims(dims: Any, tree: Any, flat: list, spec) -> list | None:
    """``dims`` (an int, or a tuple matching ``tree``) given to each of the ``flat``
    leaves of ``tree``: torch's ``_broadcast_to_and_flatten``, with the two common
    forms answered without rebuilding the tree."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(flat)
    if (
        type(dims) is tuple
        and type(tree) is tuple
        and len(dims) == len(tree) == len(flat)
    ):
        for d, item, leaf in zip(dims, tree, flat):
            if item is not leaf or not (d is None or isinstance(d, int)):
                break
        else:
            return list(dims)
    return _pytree._broadcast_to_and_flatten(dims, spec, is_leaf=_is_collection)


# --------------------------------------------------------------------------------------
# Batching one tensordict (entering the vmapped function) and unbatching one (leaving).
# --------------------------------------------------------------------------------------


def _batch_dim_ops():
    """``(add, remove)``: torch's C++ batching functions, or in a traced region (a
    torch function mode active, torch.compile tracing) their traceable wrappers."""
    if torch.compiler.is_compiling() or torch._C._is_torch_function_mode_enabled():
        return predispatch._add_batch_dim, predispatch._remove_batch_dim
    return _functorch._add_batch_dim, _functorch._remove_batch_dim


def _without(names, dim: int):
    return None if names is None else names[:dim] + names[dim + 1 :]


_DROPPED: dict[tuple, torch.Size] = {}


def _dropped(batch_size: torch.Size, dim: int) -> torch.Size:
    """``batch_size`` without ``dim`` (a batch dim), from a cache: slicing and adding
    ``torch.Size`` objects costs as much as batching a tensor, and an ensemble's vmap
    drops the same dim of the same few batch sizes at every call."""
    key = (batch_size, dim)
    dropped = _DROPPED.get(key)
    if dropped is None:
        if len(_DROPPED) > 1024:  # many shapes seen: start over rather than grow
            _DROPPED.clear()
        dropped = _DROPPED[key] = batch_size[:dim] + batch_size[dim + 1 :]
    return dropped


_INSERTED: dict[tuple, torch.Size] = {}


def _inserted(batch_size: torch.Size, dim: int, size: int) -> torch.Size:
    """``batch_size`` with a dim of ``size`` inserted at ``dim`` (cached, as
    :func:`_dropped`)."""
    key = (batch_size, dim, size)
    inserted = _INSERTED.get(key)
    if inserted is None:
        if len(_INSERTED) > 1024:
            _INSERTED.clear()
        inserted = _INSERTED[key] = torch.Size(
            (*batch_size[:dim], size, *batch_size[dim:])
        )
    return inserted


# per vmap level, the tensordicts that the function got for lazy stacks batched along
# their stack dim (by id, with the tensordict, so that an id is never reused): one
# returned comes back as a lazy stack, as it went in
_FROM_STACKS: dict[int, dict[int, TensorDictBase]] = {}


def _add_leaf(add, value: Tensor, dim: int, level: int) -> Tensor:
    """``add(value, dim, level)``; for a stack of lazy modules' uninitialized
    parameters (``from_modules`` of ``nn.LazyLinear``...), which has no data to batch
    yet, a view of it that batches it once a lazy module materializes it."""
    if type(value) in _STACKED_LAZY:
        return value._vmap_view(dim, level)
    return add(value, dim, level)


def _remove_leaf(remove, value: Tensor, level: int, size: int, dim: int) -> Tensor:
    """``remove(value, level, size, dim)``; a vmap view of uninitialized parameters
    (see :func:`_add_leaf`) returned as it went in gives back its stack."""
    if type(value) in _STACKED_LAZY:
        return value._unvmapped()
    return remove(value, level, size, dim)


def _batched(td: TensorDictBase, dim: int, level: int, add) -> TensorDictBase:
    """``td`` as the vmapped function sees it: each tensor batched along ``dim`` (a
    non-negative dim of the tensordict), batch dim ``dim`` gone."""
    if type(td) is TensorDict:
        storage = {}
        for key, value in td._tensordict.items():
            if isinstance(value, Tensor):
                storage[key] = (
                    add(value, dim, level)
                    if type(value) not in _STACKED_LAZY
                    else value._vmap_view(dim, level)
                )
            elif isinstance(value, TensorDictBase) and not value._is_non_tensor:
                storage[key] = _batched(value, dim, level, add)
            else:
                storage[key] = value  # non-tensor data: the same for every sample
        bs = td._batch_size
        if dim < len(bs):
            names = td._names
            return TensorDict._from_storage(
                storage,
                _dropped(bs, dim),
                td._device,
                None if names is None else _without(names, dim),
            )
        return TensorDict._from_storage(storage, bs, td._device, td._names)
    if getattr(td, "_is_tensorclass", False):
        return type(td)._from_td(_batched(td._tensordict, dim, level, add))
    if isinstance(td, LazyStackedTensorDict):
        sd = td.stack_dim
        if dim == sd:  # one element of the stack a call: the dense stack's
            try:
                dense = td._with_dense_stacks("vmap")
            except RuntimeError as err:
                raise ValueError(
                    f"vmap over dim {dim} of a LazyStackedTensorDict, its stack dim, "
                    f"gives each call one of its tensordicts, as one batched "
                    f"tensordict: they must have the same keys and shapes, and these "
                    f"do not ({err}). vmap over another dim, or make them match"
                ) from None
            batched = _batched(dense, dim, level, add)
            _FROM_STACKS.setdefault(level, {})[id(batched)] = batched
            return batched
        member_dim = dim if dim < sd else dim - 1
        return LazyStackedTensorDict._new_unsafe(
            [_batched(member, member_dim, level, add) for member in td.tensordicts],
            sd - 1 if dim < sd else sd,
            stack_dim_name=td._stack_dim_name,
        )
    if td._is_non_tensor:
        return td
    # another container: through its leaf primitives
    leaves, rebuild = td._leaves_and_rebuild()
    bs = td.batch_size
    return rebuild(
        [_add_leaf(add, leaf, dim, level) for leaf in leaves],
        batch_size=bs[:dim] + bs[dim + 1 :] if dim < len(bs) else bs,
    )


def _structure_copy(td: TensorDictBase) -> TensorDictBase:
    """``td.copy()`` (new tensordicts over the same tensors), with the dense
    tensordicts of a vmap argument copied directly."""
    if type(td) is not TensorDict:
        return td.copy()
    storage = {
        key: _structure_copy(value) if isinstance(value, TensorDictBase) else value
        for key, value in td._tensordict.items()
    }
    names = td._names
    return TensorDict._from_storage(
        storage, td._batch_size, td._device, None if names is None else list(names)
    )


def _unbatched(
    td: TensorDictBase, level: int, size: int, dim: int, remove
) -> TensorDictBase:
    """``td`` returned by the vmapped function, with the vmapped dim (``size``
    long) put back at ``dim`` (a non-negative insert position among its batch
    dims, or past them)."""
    if type(td) is TensorDict:
        storage = {}
        for key, value in td._tensordict.items():
            if isinstance(value, Tensor):
                storage[key] = (
                    remove(value, level, size, dim)
                    if type(value) not in _STACKED_LAZY
                    else value._unvmapped()
                )
            elif isinstance(value, TensorDictBase) and not value._is_non_tensor:
                storage[key] = _unbatched(value, level, size, dim, remove)
            else:
                storage[key] = value
        bs = td._batch_size
        if dim <= len(bs):
            names = td._names
            if names is not None:
                names = names[:dim] + [None] + names[dim:]
            out = TensorDict._from_storage(
                storage, _inserted(bs, dim, size), td._device, names
            )
            from_stacks = _FROM_STACKS.get(level)
            if from_stacks and from_stacks.get(id(td)) is td:
                # it came in as a lazy stack along the vmapped dim: it goes out as one,
                # stacked along its out dim
                out = LazyStackedTensorDict._new_unsafe(
                    list(out.unbind(dim)), dim, stack_dim_name=None
                )
                if td.is_locked:
                    out.lock_()
            return out
        return TensorDict._from_storage(storage, bs, td._device, td._names)
    if getattr(td, "_is_tensorclass", False):
        return type(td)._from_td(_unbatched(td._tensordict, level, size, dim, remove))
    if isinstance(td, LazyStackedTensorDict):
        sd = td.stack_dim
        member_dim = dim if dim <= sd else dim - 1
        return LazyStackedTensorDict._new_unsafe(
            [
                _unbatched(member, level, size, member_dim, remove)
                for member in td.tensordicts
            ],
            sd + 1 if dim <= sd else sd,
            stack_dim_name=td._stack_dim_name,
        )
    if td._is_non_tensor:
        return td
    leaves, rebuild = td._leaves_and_rebuild()
    bs = td.batch_size
    return rebuild(
        [_remove_leaf(remove, leaf, level, size, dim) for leaf in leaves],
        batch_size=bs[:dim] + (size,) + bs[dim:] if dim <= len(bs) else bs,
    )


def _has_batched_leaf(td: TensorDictBase, level: int) -> bool:
    for leaf in td._leaves():
        if _functorch.maybe_get_level(leaf) == level:
            return True
    return False


# --------------------------------------------------------------------------------------
# The wrapped steps of torch._functorch.vmap.
# --------------------------------------------------------------------------------------


def _process_batched_inputs(in_dims, args: tuple, func: Callable):
    """torch's step, with each tensordict one argument: ``(batch_size, flat_in_dims,
    flat_args, args_spec)``, tensordict in_dims normalised to non-negative dims."""
    if not _holds_collection(args):
        return _TORCH["_process_batched_inputs"](in_dims, args, func)
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
            f"be int or a (potentially nested) tuple matching the structure of "
            f"inputs, got: {type(in_dims)}."
        )
    flat_args, args_spec = _flat(args)
    flat_in_dims = _leaf_dims(in_dims, args, flat_args, args_spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
            f"compatible with the structure of `inputs`: in_dims has structure "
            f"{_pytree.tree_flatten(in_dims)[1]} but inputs has structure {args_spec}."
        )
    sizes = []
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if in_dim is None:
            continue
        if not isinstance(in_dim, int):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): got in_dim={in_dim} "
                f"for an input, but an in_dim must be an integer dimension or None"
            )
        if isinstance(arg, TensorDictBase):
            bs = arg.batch_size
            dim = in_dim + len(bs) if in_dim < 0 else in_dim
            if dim < 0:
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): got "
                    f"in_dim={in_dim} for a {type(arg).__name__} of batch size "
                    f"{list(bs)}; a negative in_dim counts from its last batch dim, "
                    f"so it must be at least {-len(bs)}"
                )
            flat_in_dims[i] = dim
            if dim < len(bs):
                sizes.append(bs[dim])
            else:  # a feature dim: its size, which every leaf must share
                leaf_sizes = {leaf.size(dim) for leaf in arg._leaves()}
                if len(leaf_sizes) != 1:
                    raise ValueError(
                        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dim="
                        f"{in_dim} is a feature dim of the {type(arg).__name__} of "
                        f"batch size {list(bs)}, and its tensors have sizes "
                        f"{sorted(leaf_sizes)} there; they must share one"
                    )
                sizes.append(leaf_sizes.pop())
            continue
        if not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): got in_dim={in_dim} "
                f"for an input of type {type(arg)}; vmap maps over tensors and "
                f"tensordicts only, use None as the respective in_dim"
            )
        if not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): got in_dim={in_dim} "
                f"for an input, but that input is a Tensor of dimensionality "
                f"{arg.dim()} so expected in_dim to satisfy "
                f"-{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
        sizes.append(arg.size(flat_in_dims[i]))
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped "
            f"dimension, got sizes {sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, args_spec


def _create_batched_inputs(flat_in_dims, flat_args, vmap_level: int, args_spec):
    for arg in flat_args:
        if isinstance(arg, TensorDictBase):
            break
    else:
        return _TORCH["_create_batched_inputs"](
            flat_in_dims, flat_args, vmap_level, args_spec
        )
    add, _ = _batch_dim_ops()
    _FROM_STACKS.pop(vmap_level, None)  # (left over from a call that raised)
    batched = []
    for in_dim, arg in zip(flat_in_dims, flat_args):
        if isinstance(arg, TensorDictBase):
            # not mapped: a shallow copy, so that what the function writes into it
            # (batched tensors, dead once vmap returns) stays out of the caller's
            locked = arg.is_locked
            arg = (
                _structure_copy(arg)
                if in_dim is None
                else _batched(arg, in_dim, vmap_level, add)
            )
            if locked:  # the function sees the argument as locked as it was given
                arg.lock_()
        elif in_dim is not None:
            arg = add(arg, in_dim, vmap_level)
        batched.append(arg)
    if args_spec is _TUPLE_SPECS.get(len(batched)):  # the arguments as they were given
        return tuple(batched)
    return _pytree.tree_unflatten(batched, args_spec)


def _unwrap_batched(batched_outputs, out_dims, vmap_level: int, batch_size: int, func):
    try:
        return _unwrap(batched_outputs, out_dims, vmap_level, batch_size, func)
    finally:
        _FROM_STACKS.pop(vmap_level, None)


def _unwrap(batched_outputs, out_dims, vmap_level: int, batch_size: int, func):
    _, remove = _batch_dim_ops()
    if type(out_dims) is int:  # the common call: one output, one out dim
        if isinstance(batched_outputs, TensorDictBase):
            return _unbatched_output(
                batched_outputs,
                out_dims,
                out_dims,
                vmap_level,
                batch_size,
                func,
                remove,
            )
        if isinstance(batched_outputs, Tensor):
            # what torch's step does with one tensor, without its pytree round trip
            return remove(batched_outputs, vmap_level, batch_size, out_dims)
    if not _holds_collection(batched_outputs):
        return _TORCH["_unwrap_batched"](
            batched_outputs, out_dims, vmap_level, batch_size, func
        )
    flat_outputs, output_spec = _pytree.tree_flatten(
        batched_outputs, is_leaf=_is_collection
    )
    if isinstance(batched_outputs, TensorDictBase) and type(out_dims) is tuple:
        # one output and out_dims=(d,): torch accepts this for a tensor too
        out_dims = out_dims[0] if len(out_dims) == 1 else out_dims
    flat_out_dims = _leaf_dims(out_dims, batched_outputs, flat_outputs, output_spec)
    if flat_out_dims is None:
        name = _name(func)
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`: out_dims has structure "
            f"{_pytree.tree_flatten(out_dims)[1]} but outputs has structure "
            f"{output_spec}."
        )
    unbatched = []
    for output, out_dim in zip(flat_outputs, flat_out_dims):
        if isinstance(output, TensorDictBase):
            output = _unbatched_output(
                output, out_dim, out_dims, vmap_level, batch_size, func, remove
            )
        else:
            output = _vmap_module._maybe_remove_batch_dim(
                _name(func), output, vmap_level, batch_size, out_dim
            )
        unbatched.append(output)
    return _pytree.tree_unflatten(unbatched, output_spec)


def _unbatched_output(
    output: TensorDictBase,
    out_dim,
    out_dims,
    vmap_level: int,
    batch_size: int,
    func,
    remove,
):
    """One tensordict returned by the vmapped function, given its ``out_dim`` (an
    int counted along its batch dims, or None)."""
    if out_dim is None:
        if _has_batched_leaf(output, vmap_level):
            name = _name(func)
            raise ValueError(
                f"vmap({name}, ...): `{name}` returned a {type(output).__name__} "
                f"holding batched tensors, but its out_dim is None"
            )
        return output
    ndim = output.batch_dims
    dim = out_dim + ndim + 1 if out_dim < 0 else out_dim
    if dim < 0:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims}): out_dim={out_dim} for a "
            f"{type(output).__name__} of batch size {list(output.batch_size)}: a "
            f"negative out_dim counts from the end of its batch dims, so it must "
            f"be at least {-ndim - 1}"
        )
    return _unbatched(output, vmap_level, batch_size, dim, remove)


def _flatten_chunks_output(chunks_output: list):
    """torch's step, with each tensordict one output: the chunks are joined with
    ``torch.cat`` along their out dim, a tensordict's along its batch dims."""
    if not chunks_output or not _holds_collection(chunks_output[0]):
        return _TORCH["_flatten_chunks_output"](chunks_output)
    flat_chunks = []
    spec = None
    for output in chunks_output:
        flat, output_spec = _pytree.tree_flatten(output, is_leaf=_is_collection)
        flat_chunks.append(flat)
        if spec is None:
            spec = output_spec
    return list(zip(*flat_chunks)), spec


def install() -> None:
    """Put the wrapped steps in ``torch._functorch.vmap`` (once)."""
    for name, wrapper in (
        ("_process_batched_inputs", _process_batched_inputs),
        ("_create_batched_inputs", _create_batched_inputs),
        ("_unwrap_batched", _unwrap_batched),
        ("_flatten_chunks_output", _flatten_chunks_output),
    ):
        wrapper.__tensordict_wraps__ = _TORCH[name]
        setattr(_vmap_module, name, wrapper)
