"""The state of an ``nn.Module`` (its parameters and buffers) as a tensordict, and back.

A capability mixin: :class:`ModuleStateMixin`, a base of ``TensorDictBase``, gives every
container kind ``from_module``, ``from_modules``, ``to_module``, ``state_dict`` and
``load_state_dict``. It sits below ``base`` in the import graph: it reaches
the classes it builds (``TensorDict``, ``LazyStackedTensorDict``, ``TensorDictParams``)
through :func:`tensordict._registry.container_class`.

The tree of a module maps onto a tensordict one to one: a submodule is a nested
tensordict under its attribute name, a parameter or buffer is a leaf under its own.
``from_module`` reads that tree without copying anything; ``to_module`` writes a
tensordict's leaves into the module's ``_parameters`` / ``_buffers`` dicts directly (no
``setattr`` checks, so plain tensors, tensors that carry a graph and ``torch.vmap``'s
batched tensors can stand in for parameters, as ``torch.func.functional_call`` does) and
hands back what it replaced, as a tensordict that restores it when used as a context
manager.
"""

from __future__ import annotations

import collections
import collections.abc
from typing import Any

import torch
from torch import Tensor, nn
from torch._C._functorch import _add_batch_dim, is_functorch_wrapped_tensor
from torch.nn.parameter import is_lazy

from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection, _is_node

_NO_BATCH = torch.Size(())


def _new_td(storage: dict):
    """A TensorDict over ``storage`` (a module's tensors carry no batch dims)."""
    return container_class("TensorDict")._from_storage(storage, _NO_BATCH, None, None)


# --------------------------------------------------------------------------------------
# stacks of lazy (uninitialized) parameters
# --------------------------------------------------------------------------------------


class _StackedLazy:
    """What ``from_modules`` stacks the uninitialized parameters (or buffers) of lazy
    modules (``nn.LazyLinear``...) into: still uninitialized, but knowing the shape of
    the stack (``stack_shape``), so that when a lazy module materializes it with the
    shape of one module's tensor, it gets that shape behind the stack's dims: the
    parameters of ``n`` modules, ``n`` leading.

    ``torch.vmap`` over the stack hands each call a *view* of it (``_vmapped`` is
    ``(stack, dim, level)``), which is what a lazy module receives through
    ``to_module``. Materializing the view materializes the stack (the tensor the
    tensordict holds, and an optimizer may already hold), the view sharing its
    storage so that the module's initialization writes into the stack; then
    :func:`_batch_when_materialized` gives the module the stack batched at that vmap
    level, so that the call computes with one module's tensor and gradients reach the
    stack.
    """

    stack_shape: torch.Size = torch.Size(())
    _vmapped: tuple | None = None

    def materialize(self, shape, device=None, dtype=None) -> None:
        vmapped = self._vmapped
        if vmapped is None:
            shape = torch.Size((*self.stack_shape, *shape))
            super().materialize(shape, device=device, dtype=dtype)
        else:
            stack = vmapped[0]
            if is_lazy(stack):
                stack.materialize(shape, device=device, dtype=dtype)
            self.data = stack.data
            self.__class__ = self.cls_to_become
        # a materialized tensor is a plain one: no stack state left on it
        self.__dict__.pop("stack_shape", None)
        self.__dict__.pop("_vmapped", None)

    def _vmap_view(self, dim: int, level: int):
        """This stack as a call of ``torch.vmap`` over its dim ``dim`` sees it."""
        if not 0 <= dim < len(self.stack_shape):
            raise ValueError(
                f"vmap over dim {dim} of a stack of uninitialized parameters of stack "
                f"shape {list(self.stack_shape)}: only the stack's dims can be mapped "
                f"before the lazy modules have run once"
            )
        view = _new_stacked_lazy(
            type(self),
            self.stack_shape[:dim] + self.stack_shape[dim + 1 :],
            self.requires_grad,
            self.device,
            self.dtype,
        )
        view._vmapped = (self, dim, level)
        return view

    def _unvmapped(self):
        """The stack a vmap view was taken from (itself when it is not a view)."""
        return self if self._vmapped is None else self._vmapped[0]

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = _new_stacked_lazy(
            type(self), self.stack_shape, self.requires_grad, self.device, self.dtype
        )
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, proto):
        return (
            _new_stacked_lazy,
            (type(self), self.stack_shape, self.requires_grad, None, self.dtype),
        )

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} stack_shape={list(self.stack_shape)}, "
            f"uninitialized>"
        )


class _StackedUninitializedParameter(_StackedLazy, nn.UninitializedParameter):
    """The uninitialized parameters of several lazy modules, stacked (see
    :class:`_StackedLazy`)."""


class _StackedUninitializedBuffer(_StackedLazy, nn.UninitializedBuffer):
    """The uninitialized buffers of several lazy modules, stacked (see
    :class:`_StackedLazy`)."""


_STACKED_LAZY = (_StackedUninitializedParameter, _StackedUninitializedBuffer)


def _new_stacked_lazy(cls, stack_shape, requires_grad, device, dtype):
    out = cls(requires_grad=requires_grad, device=device, dtype=dtype)
    out.stack_shape = torch.Size(stack_shape)
    return out


def _stack_lazy(values: list, path: tuple):
    """The uninitialized tensors ``values`` (one per module) as one stack."""
    first = values[0]
    cls = (
        _StackedUninitializedParameter
        if isinstance(first, nn.UninitializedParameter)
        else _StackedUninitializedBuffer
    )
    for position, value in enumerate(values):
        if not is_lazy(value) or isinstance(value, nn.UninitializedParameter) != (
            cls is _StackedUninitializedParameter
        ):
            raise RuntimeError(
                f"from_modules: the tensor at key {path!r} is an uninitialized "
                f"{'parameter' if cls is _StackedUninitializedParameter else 'buffer'} "
                f"in the first module but {type(value).__name__} in module "
                f"{position}; stack lazy modules before any of them has run"
            )
        if isinstance(value, _StackedLazy):
            raise RuntimeError(
                f"from_modules: the tensor at key {path!r} is already a stack of "
                f"uninitialized tensors; stacking stacks of lazy modules is not "
                f"supported, run the modules once first"
            )
    return _new_stacked_lazy(
        cls, (len(values),), first.requires_grad, first.device, first.dtype
    )


def _batch_when_materialized(module: nn.Module, key: str, view) -> None:
    """``view`` (a vmap view of a stack of uninitialized tensors) was put in
    ``module`` at ``key``: once the lazy module's own pre-hook has materialized it,
    before ``forward`` runs, put the stack batched at the view's vmap level(s) in its
    place (what ``forward`` must compute with)."""
    views = []
    stack = view
    while isinstance(stack, _StackedLazy) and stack._vmapped is not None:
        views.append(stack._vmapped[1:])
        stack = stack._vmapped[0]
    handle = None

    def batch_it(module, args):
        handle.remove()
        if is_lazy(view):
            return
        for where in (module._parameters, module._buffers):
            if where.get(key) is view:
                batched = stack
                for dim, level in reversed(views):
                    batched = _add_batch_dim(batched, dim, level)
                where[key] = batched

    # registered after the lazy module's own hook (at its construction): runs after it
    handle = module.register_forward_pre_hook(batch_it)


# --------------------------------------------------------------------------------------
# module -> tensordict
# --------------------------------------------------------------------------------------


def _read_module(module: nn.Module, filter_empty: bool) -> dict:
    """The storage dict of ``module``'s tensordict: its parameters, buffers and, under
    their names, its submodules' (submodules without any tensor are left out when
    ``filter_empty``)."""
    storage = {}
    for name, param in module._parameters.items():
        if param is not None:
            storage[name] = param
    for name, buffer in module._buffers.items():
        if buffer is not None:
            storage[name] = buffer
    for name, child in module._modules.items():
        if child is None:
            continue
        held = child.__dict__.get("_tensordict")
        if held is not None and isinstance(
            child, container_class("TensorDictParams")
        ):
            # a TensorDictParams submodule: its entries with their nesting (its
            # parameter names "0.weight" would otherwise become keys with a dot)
            if not held.is_empty() or not filter_empty:
                storage[name] = held.copy()
            continue
        sub = _read_module(child, filter_empty)
        if sub or not filter_empty:
            storage[name] = _new_td(sub)
    return storage


def from_module(
    module: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    filter_empty: bool = True,
):
    """The parameters and buffers of ``module`` as a tensordict shaped like its tree
    of submodules (the tensors themselves, not copies). ``as_module=True`` gives a
    :class:`~tensordict.nn.TensorDictParams`; ``use_state_dict=True`` reads
    ``module.state_dict()`` (its hooks applied) instead of the attributes.

    >>> params = from_module(torch.nn.Linear(3, 4))
    >>> sorted(params.keys())
    ['bias', 'weight']
    """
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"from_module expects an nn.Module, got {type(module).__name__}"
        )
    if use_state_dict:
        flat = module.state_dict(keep_vars=False)
        td = container_class("TensorDict")(dict(flat)).unflatten_keys(".")
    else:
        td = _new_td(_read_module(module, filter_empty))
    if as_module:
        td = container_class("TensorDictParams")(td, no_convert=True)
    if lock:
        td.lock_()
    return td


def from_modules(
    *modules: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    lazy_stack: bool = False,
    expand_identical: bool = False,
):
    """The parameters of several modules of the same structure, stacked along a new
    first batch dim (an ensemble's parameters, ready for ``torch.vmap``).

    Dense stacking copies: the result's leaves are new tensors (parameters where the
    modules had parameters), the modules keep theirs. ``lazy_stack=True`` keeps the
    modules' own tensors in a :class:`~tensordict.LazyStackedTensorDict` (shapes may
    then differ). ``expand_identical=True`` expands, instead of stacking, a tensor that
    every module shares (the same object).

    >>> stacked = from_modules(torch.nn.Linear(3, 4), torch.nn.Linear(3, 4))
    >>> stacked["weight"].shape     # one set of weights per module, stacked
    torch.Size([2, 4, 3])
    """
    if not modules:
        raise ValueError("from_modules needs at least one module")
    tds = [from_module(m, lock=False, use_state_dict=use_state_dict) for m in modules]
    if lazy_stack:
        # 0.15.3's phrases lead (existing code matches them), then ours
        if any(
            torch.nn.parameter.is_lazy(t)
            for m in modules
            for t in (*m.parameters(), *m.buffers())
        ):
            raise RuntimeError(
                "lasy_stack=True is not compatible with lazy modules. "
                "from_modules(lazy_stack=True): a lazy module (nn.LazyLinear...) has "
                "no parameter values to stack until it has run once; run the modules "
                "on an input first, or use lazy_stack=False"
            )
        if as_module:
            raise NotImplementedError(
                "Using a LazyStackedTensorDict within a TensorDictParams isn't "
                "permitted. "
                "from_modules(lazy_stack=True, as_module=True): TensorDictParams "
                "registers one tensor per leaf, which a lazy stack does not have; "
                "use lazy_stack=False (a dense stack) with as_module=True"
            )
        td = container_class("LazyStackedTensorDict").lazy_stack(tds, 0)
    else:
        td = _stack_module_states(tds, expand_identical)
        if as_module:
            td = container_class("TensorDictParams")(td, no_convert=True)
    if lock:
        td.lock_()
    return td


def _stack_module_states(tds: list, expand_identical: bool):
    """One dense TensorDict with batch size ``[len(tds)]`` stacking the leaves of
    ``tds`` (the module states of same-structured modules)."""
    count = len(tds)
    first = tds[0]

    def stack(level: list, prefix: tuple) -> dict:
        storage = {}
        for key, value in level[0]._own_items():
            values = [td._get_str(key, None, missing_ok=True) for td in level]
            path = prefix + (key,)
            for position, other in enumerate(values):
                if other is None or _is_node(other) != _is_node(value):
                    raise KeyError(
                        f"from_modules: the module at position {position} has no "
                        f"{'submodule' if _is_node(value) else 'tensor'} at key "
                        f"{path!r} (module 0 has one); the modules must share one "
                        f"structure"
                    )
            if is_lazy(value):  # lazy modules that have not run yet
                storage[key] = _stack_lazy(values, path)
                continue
            if _is_node(value):
                sub = stack(values, path)
                storage[key] = container_class("TensorDict")._from_storage(
                    sub, torch.Size((count,)), None, None
                )
                continue
            shapes = {tuple(v.shape) for v in values}
            if len(shapes) > 1:
                raise RuntimeError(
                    f"from_modules: the tensors at key {path!r} have different "
                    f"shapes {sorted(shapes)}; stack them lazily with "
                    f"from_modules(..., lazy_stack=True)"
                )
            if expand_identical and all(v is value for v in values):
                # a view of the shared tensor, not a new parameter: gradients reach
                # the one the modules share (as in 0.15.3)
                storage[key] = value.expand(count, *value.shape)
                continue
            stacked = torch.stack([v.detach() for v in values])
            if isinstance(value, nn.Parameter):
                stacked = nn.Parameter(stacked, requires_grad=value.requires_grad)
            storage[key] = stacked
        return storage

    for td in tds[1:]:
        extra = set(td._own_keys()) - set(first._own_keys())
        if extra:
            raise KeyError(
                f"from_modules: keys {sorted(extra)} are in one module but not in "
                f"the first; the modules must share one structure"
            )
    return container_class("TensorDict")._from_storage(
        stack(tds, ()), torch.Size((count,)), None, None
    )


# --------------------------------------------------------------------------------------
# tensordict -> module
# --------------------------------------------------------------------------------------


def _wrap_as_parameter(value: Tensor, old: Any) -> Tensor:
    """What ``preserve_module_state`` stores: a plain tensor replacing a parameter
    becomes a parameter (sharing the tensor's storage, with the old one's
    ``requires_grad``), unless it carries a graph or is a functorch tensor (a
    ``torch.vmap`` or ``torch.func.grad`` input), which must stay as it is so that
    gradients and batching go through."""
    if (  # cheapest tests first: under vmap every value is a functorch tensor
        value.requires_grad
        or is_functorch_wrapped_tensor(value)
        or not isinstance(old, nn.Parameter)
        or isinstance(value, nn.Parameter)
    ):
        return value
    return nn.Parameter(value, requires_grad=old.requires_grad)


def _swap_into(
    td: TensorCollection,
    module: nn.Module,
    preserve: bool,
    collect: bool,
    memo: set,
    path: tuple,
    undo: list | None = None,
):
    """Write the leaves of ``td`` into ``module`` (replacing the tensors, not copying
    into them); the storage of the swap tensordict (what was replaced) when
    ``collect``, else None. With ``undo``, each write is also recorded there as
    ``(tensor dict of the module, key, storage of the swap at that level)``, so that
    :class:`_Restore` puts the old tensors back without walking the tensordict and the
    module again. (``with params.to_module(module)`` runs this once a call, often under
    ``torch.vmap`` around a small network: the loop is kept to plain dict operations,
    and ``path`` is only extended for error messages.)"""
    swap = {} if collect else None
    params = module._parameters
    buffers = module._buffers
    attrs = module.__dict__
    back_to_params = back_to_attrs = None  # the _Relocate undo targets, made once
    for key, value in td._own_items():
        if isinstance(value, Tensor) or value is None:
            if key in params:
                where = params
            elif key in buffers:
                where = buffers
            elif isinstance(attrs.get(key), Tensor):
                where = attrs  # a parameter's slot, holding a plain tensor
            elif isinstance(value, nn.Parameter):
                where = params
            elif value is not None:
                where = buffers
            else:
                continue
            old = where.get(key)
            if (
                preserve
                and value is not None
                and not (value.requires_grad or is_functorch_wrapped_tensor(value))
            ):  # (under vmap, every value stops at the cheap test)
                value = _wrap_as_parameter(value, old)
            if where is buffers:
                if preserve and isinstance(value, nn.Parameter):
                    value = value.data  # a buffer stays a buffer (as in 0.15.3)
                buffers[key] = value
                restore = buffers
            elif (
                value is None
                or isinstance(value, nn.Parameter)
                or (preserve and where is params)
            ):  # a parameter, or (preserve_module_state) what stands for one
                if where is params:
                    params[key] = value
                    restore = params
                else:
                    del attrs[key]
                    params[key] = value
                    if back_to_attrs is None:
                        back_to_attrs = _Relocate(attrs, params)
                    restore = back_to_attrs
            else:
                # a plain tensor in a parameter's slot is an attribute, as in 0.15.3:
                # module.parameters() and state_dict() leave it out
                if where is params:
                    del params[key]
                    attrs[key] = value
                    if back_to_params is None:
                        back_to_params = _Relocate(params, attrs)
                    restore = back_to_params
                else:
                    attrs[key] = value
                    restore = attrs
            if type(value) in _STACKED_LAZY and value._vmapped is not None:
                _batch_when_materialized(module, key, value)
            if collect:
                swap[key] = old
                if undo is not None:
                    undo.append((restore, key, swap))
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            child = module._modules.get(key)
            if child is None:
                raise KeyError(_no_submodule(module, path + (key,)))
            child_id = id(child)
            if child_id in memo:
                continue
            memo.add(child_id)
            held = child.__dict__.get("_tensordict")
            if held is not None and isinstance(
                child, container_class("TensorDictParams")
            ):  # a TensorDictParams submodule: its entries, nesting and all
                sub = _swap_into_tensordict(value, held, collect, undo)
            else:
                sub = _swap_into(
                    value, child, preserve, collect, memo, path + (key,), undo
                )
            if collect:
                swap[key] = _new_td(sub)
    return swap


class _Relocate:
    """An undo record's target for a tensor ``_swap_into`` moved between a module's
    ``_parameters`` and its ``__dict__`` (a plain tensor in a parameter's slot is an
    attribute): ``relocate[key] = old`` puts ``old`` back in ``dest`` and removes what
    stood for it in ``other``."""

    __slots__ = ("dest", "other")

    def __init__(self, dest: dict, other: dict) -> None:
        self.dest = dest
        self.other = other

    def __setitem__(self, key: str, value) -> None:
        self.other.pop(key, None)
        self.dest[key] = value


class _Slots:
    """One level of a tensordict as ``_swap_into``'s undo records write it:
    ``slots[key] = tensor``, with no validation (the tensor was there before) and
    through a lock, as a swap into a module's own ``_parameters`` goes through the
    module's TensorDictParams lock."""

    __slots__ = ("td",)

    def __init__(self, td) -> None:
        self.td = td

    def __setitem__(self, key: str, value) -> None:
        storage = getattr(self.td, "_tensordict", None)
        if type(storage) is dict:  # a dense level: its storage, lock or not
            storage[key] = value
        else:
            self.td._set_str(key, value, inplace=False, validated=True)


def _swap_into_tensordict(td, held, collect: bool, undo) -> dict | None:
    """``_swap_into`` for a TensorDictParams submodule: write the entries of ``td``
    into its tensordict ``held``, level by level; the old ones, nested alike, are
    returned when ``collect``."""
    swap = {} if collect else None
    slots = _Slots(held)
    for key, value in td._own_items():
        if _is_node(value):
            inner = held._get_str(key, None, missing_ok=True)
            if not _is_node(inner):
                raise KeyError(
                    f"to_module: the tensordict has an entry {key!r} holding tensors "
                    f"where the TensorDictParams submodule has "
                    f"{'nothing' if inner is None else 'a tensor'}"
                )
            sub = _swap_into_tensordict(value, inner, collect, undo)
            if collect:
                swap[key] = _new_td(sub)
            continue
        old = held._get_str(key, None, missing_ok=True)
        slots[key] = value
        if collect:
            swap[key] = old
            if undo is not None:
                undo.append((slots, key, swap))
    return swap


def _pair_targets(td, module: nn.Module, targets: list, sources: list, memo, path):
    """Collect, in one walk, the module's tensors (``targets``) and the tensordict's
    leaves to copy into them (``sources``); the swap's structure (keys -> target, or
    nested structures) is returned for the caller to fill with copies."""
    layout = {}
    params = module._parameters
    buffers = module._buffers
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            target = params.get(key)
            if target is None:
                target = buffers.get(key)
            if target is None and isinstance(module.__dict__.get(key), Tensor):
                target = module.__dict__[key]  # a parameter's slot, holding a tensor
            if target is None:
                raise KeyError(
                    f"to_module(inplace=True): the module has no tensor at "
                    f"{path + (key,)!r} to copy into"
                )
            layout[key] = len(targets)
            targets.append(target)
            sources.append(value)
        elif _is_node(value):
            child = module._modules.get(key)
            if child is None:
                raise KeyError(_no_submodule(module, path + (key,)))
            if id(child) in memo:
                continue
            memo.add(id(child))
            layout[key] = _pair_targets(
                value, child, targets, sources, memo, path + (key,)
            )
    return layout


def _fill_swap(layout: dict, olds: list) -> dict:
    return {
        key: olds[where] if type(where) is int else _new_td(_fill_swap(where, olds))
        for key, where in layout.items()
    }


def _copy_into(td, module: nn.Module, collect: bool, non_blocking: bool, memo):
    """Copy the leaves of ``td`` into the tensors ``module`` already holds (they keep
    their identity and storage), in one ``torch._foreach_copy_``; the storage of the
    swap (copies of the old values) when ``collect``."""
    targets: list = []
    sources: list = []
    layout = _pair_targets(td, module, targets, sources, memo, ())
    with torch.no_grad():
        olds = [target.clone() for target in targets] if collect else []
        if targets:
            torch._foreach_copy_(targets, sources, non_blocking=non_blocking)
    return _fill_swap(layout, olds) if collect else None


def _no_submodule(module: nn.Module, path: tuple) -> str:
    return (
        f"to_module: the tensordict has an entry {path!r} but the module "
        f"{type(module).__name__} has no submodule {path[-1]!r} (its submodules: "
        f"{sorted(module._modules)})"
    )


class _Restore:
    """What ``with params.to_module(module):`` runs on exit (also when the block
    raises): the swap tensordict written back into the module."""

    __slots__ = ("module", "inplace", "use_state_dict", "undo")

    def __init__(self, module, inplace, use_state_dict, undo=None) -> None:
        self.module = module
        self.inplace = inplace
        self.use_state_dict = use_state_dict
        self.undo = undo

    def __call__(self, swap) -> None:
        if self.undo is not None:  # the common case: the writes recorded on entry
            # read back from the swap's storage, so that a value the block set in the
            # swap tensordict is the one restored (as a walk of the swap would)
            # in the order of the writes: a module's parameters taken out of its
            # _parameters go back in their order
            for where, key, storage in self.undo:
                if key in storage:
                    where[key] = storage[key]
            return
        if not (self.inplace or self.use_state_dict):
            _swap_into(swap, self.module, False, False, set(), ())
            return
        to_module(
            swap,
            self.module,
            inplace=self.inplace,
            return_swap=False,
            use_state_dict=self.use_state_dict,
            preserve_module_state=False,
        )


def to_module(
    td: TensorCollection,
    module: nn.Module,
    *,
    inplace: bool | None = None,
    return_swap: bool = True,
    swap_dest=None,
    use_state_dict: bool = False,
    non_blocking: bool = False,
    preserve_module_state: bool = True,
    memo=None,
):
    """See :meth:`ModuleStateMixin.to_module`."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"to_module expects an nn.Module, got {type(module).__name__}")
    if isinstance(module, container_class("TensorDictParams")):
        # a TensorDictParams: its entries are swapped (it has no submodules), the
        # whole wrapped tensordict at once, so that batch sizes may differ
        return _swap_wrapped(td, module, return_swap)
    inplace = bool(inplace)
    memo = set() if memo is None else memo
    undo = None
    if use_state_dict:
        swap = None
        if return_swap:
            swap = from_module(module, use_state_dict=True, lock=False).clone()
        flat = state_dict(td)
        if inplace:
            module.load_state_dict(flat, strict=True)
        else:
            module.load_state_dict(flat, strict=True, assign=True)
    elif inplace:
        storage = _copy_into(td, module, return_swap, non_blocking, memo)
        swap = _new_td(storage) if return_swap else None
    else:
        undo = [] if return_swap and swap_dest is None else None
        storage = _swap_into(
            td, module, preserve_module_state, return_swap, memo, (), undo
        )
        swap = _new_td(storage) if return_swap else None
    if swap is None:
        return None
    if swap_dest is not None:
        swap_dest.update(swap)
        swap = swap_dest
        undo = None  # swap_dest may hold more than this call replaced: walk it
    # used as a context manager, the swap writes itself back on exit
    swap._last_lock_op = _Restore(module, inplace, use_state_dict, undo)
    return swap


class _RestoreWrapped:
    """On exit of ``with params.to_module(tdparams):``: the wrapped tensordict put
    back."""

    __slots__ = ("module", "old")

    def __init__(self, module, old) -> None:
        self.module = module
        self.old = old

    def __call__(self, swap) -> None:
        self.module.__dict__["_tensordict"] = self.old


def _put_wrapped(module, td):
    """Make ``td`` (or the tensordict it wraps) the tensordict ``module`` (a
    TensorDictParams) wraps; the one it wrapped before."""
    old = module.__dict__["_tensordict"]
    inner = td.__dict__.get("_tensordict")
    module.__dict__["_tensordict"] = inner if _is_node(inner) else td
    return old


def _swap_wrapped(td, module, return_swap: bool):
    """``td.to_module(params)`` for a module that is a tensordict (TensorDictParams):
    ``td``'s entries become its entries; the swap holds the previous ones."""
    old = _put_wrapped(module, td)
    if not return_swap:
        return None
    swap = old.copy()
    swap._last_lock_op = _RestoreWrapped(module, old)
    return swap


# --------------------------------------------------------------------------------------
# state_dict
# --------------------------------------------------------------------------------------


def state_dict(
    td,
    destination=None,
    prefix: str = "",
    keep_vars: bool = False,
    flatten: bool = True,
):
    """See :meth:`ModuleStateMixin.state_dict`."""
    out = collections.OrderedDict() if destination is None else destination
    if flatten:
        for key, value in td.items(True, True):
            name = key if type(key) is str else ".".join(key)
            out[prefix + name] = value if keep_vars else value.detach()
        if destination is None:
            out._metadata = _shape_metadata(td)
        return out
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            out[prefix + key] = value if keep_vars else value.detach()
        elif _is_node(value):
            out[prefix + key] = state_dict(value, keep_vars=keep_vars, flatten=False)
    return out


def _shape_metadata(td) -> collections.OrderedDict:
    """``{"": {"batch_size", "device"}, "a.b": {...}}`` for the tensordict and each
    nested one, kept as ``state_dict()._metadata`` (as ``nn.Module`` keeps its own
    there) so that loading into an empty tensordict restores the batch sizes
    (TorchRL's ``TensorStorage.load_state_dict`` does ``TensorDict().load_state_dict``).
    """
    meta = collections.OrderedDict()
    meta[""] = _level_metadata(td)
    for key, value in td.items(True, False, is_leaf=_is_leaf_for_metadata):
        if _is_node(value):
            name = key if type(key) is str else ".".join(key)
            meta[name] = _level_metadata(value)
    return meta


def _level_metadata(td) -> dict:
    """One level's entry of :func:`_shape_metadata`; a tensorclass adds its class name
    (``_type``) and its non-tensor fields' values (``_non_tensor``, ``None`` for the
    fields it does not hold), as 0.15.3 records them."""
    level = {"batch_size": td.batch_size, "device": td.device}
    fields = getattr(type(td), "_tc_fields", None)
    if fields is not None and getattr(td, "_is_tensorclass", False):
        level["_type"] = type(td).__name__
        inner = td._tensordict
        non_tensor = {}
        for name in fields:
            value = inner._get_str(name, None, missing_ok=True)
            if value is None or not isinstance(value, (Tensor, TensorCollection)):
                non_tensor[name] = value
        level["_non_tensor"] = non_tensor
    return level


class UnexpectedStateKeyError(KeyError, RuntimeError):
    """A state dict holding a key the tensordict has no entry for (strict loading):
    0.15.3's ``KeyError`` for a tensorclass, a ``RuntimeError`` as ``nn.Module``
    raises."""

    def __str__(self) -> str:  # the message as written, not quoted as a KeyError's
        return str(self.args[0]) if self.args else ""


def _legacy_tensorclass_state(source):
    """A state dict in the layout of older tensorclasses (``{"_tensordict": {...,
    "__batch_size", "__device"}, "_non_tensordict": {...}}``) as a flat one, and its
    non-tensor values; anything else unchanged."""
    if not (
        isinstance(source, collections.abc.Mapping)
        and set(source.keys()) <= {"_tensordict", "_non_tensordict"}
        and isinstance(source.get("_tensordict"), collections.abc.Mapping)
    ):
        return source, {}
    inner = collections.OrderedDict(
        (k, v) for k, v in source["_tensordict"].items() if not k.startswith("__")
    )
    return inner, dict(source.get("_non_tensordict") or {})


def _is_leaf_for_metadata(cls: type) -> bool:
    return not issubclass(cls, TensorCollection)


def _restore_batch_sizes(td, meta) -> None:
    """Give ``td`` and its nested tensordicts the batch sizes ``meta`` (see
    :func:`_shape_metadata`) records, where theirs are a prefix of it (an empty
    ``TensorDict()`` loading a state dict)."""
    for name in sorted(meta, key=lambda n: n.count(".") + bool(n), reverse=True):
        recorded = meta[name].get("batch_size")
        target = td if name == "" else td.get(tuple(name.split(".")), None)
        if recorded is None or not isinstance(target, TensorCollection):
            continue
        recorded = torch.Size(recorded)
        current = target.batch_size
        if len(current) < len(recorded) and recorded[: len(current)] == current:
            try:
                target.batch_size = recorded
            except RuntimeError:
                pass  # the loaded tensors do not fit it: keep the batch size


def _state_paths(source, from_flatten, known, prefix=()):
    """``(path, tensor)`` for every tensor of a (nested) state dict; a key holding
    dots is a flattened nested key unless ``from_flatten`` is False (or, when it is
    None, the key is one of ``known`` as it is)."""
    for key, value in source.items():
        if isinstance(value, collections.abc.Mapping) and not isinstance(
            value, TensorCollection
        ):
            yield from _state_paths(value, from_flatten, known, prefix + (key,))
            continue
        if isinstance(value, TensorCollection):
            for sub, leaf in value.items(True, True):
                yield prefix + (key,) + unravel_key_to_tuple(sub), leaf
            continue
        if isinstance(key, str) and "." in key and from_flatten is not False:
            whole = prefix + (key,)
            if from_flatten or whole not in known:
                yield prefix + tuple(key.split(".")), value
                continue
        yield prefix + unravel_key_to_tuple(key), value


def load_state_dict(
    td, source, strict: bool = True, assign: bool = False, from_flatten=None
):
    """See :meth:`ModuleStateMixin.load_state_dict`."""
    dense = container_class("TensorDict")
    meta = getattr(source, "_metadata", None)
    source, non_tensor = _legacy_tensorclass_state(source)
    if isinstance(meta, collections.abc.Mapping) and isinstance(meta.get(""), dict):
        non_tensor = {**non_tensor, **(meta[""].get("_non_tensor") or {})}
    fields = getattr(type(td), "_tc_fields", None)
    if strict and fields is not None:
        for name in non_tensor:
            if name not in fields:  # 0.15.3's phrase first
                raise UnexpectedStateKeyError(
                    f"Key '{name}' wasn't expected in the state-dict: "
                    f"{type(td).__name__} has no such field"
                )
    known = {unravel_key_to_tuple(k) for k in td.keys(True, True)}
    given = dict(_state_paths(source, from_flatten, known))
    if strict:
        missing = sorted(known - set(given), key=str)
        unexpected = sorted(set(given) - known, key=str)
        if missing or unexpected:
            lead = (
                f"Key '{'.'.join(unexpected[0])}' wasn't expected in the state-dict. "
                if unexpected
                else ""
            )
            raise (UnexpectedStateKeyError if unexpected else RuntimeError)(
                f"{lead}load_state_dict(strict=True): the keys do not match; missing "
                f"from the state dict: {missing}, not in the tensordict: {unexpected}. "
                f"Pass strict=False to load the matching keys only"
            )
    with torch.no_grad():
        for path, value in given.items():
            target = td.get(path, None)
            if assign or not isinstance(target, Tensor):
                td.set(path, value)
            elif type(td) is dense:
                target.copy_(value)  # the stored tensor itself
            else:
                # a lazy stack or a view reads a copy or a view: write through it
                td.set_(path, value.to(target.dtype))
    if fields is not None:
        for name, value in non_tensor.items():
            if name in fields and value is not None:
                td._set_field(name, value)
    if isinstance(meta, collections.abc.Mapping):
        # nested tensorclasses' non-tensor fields
        for name, level in meta.items():
            if not name or not isinstance(level, dict) or not level.get("_non_tensor"):
                continue
            target = td.get(tuple(name.split(".")), None)
            sub_fields = getattr(type(target), "_tc_fields", None)
            if sub_fields is None:
                continue
            for field, value in level["_non_tensor"].items():
                if field in sub_fields and value is not None:
                    target._set_field(field, value)
    if isinstance(meta, collections.abc.Mapping) and isinstance(meta.get(""), dict):
        _restore_batch_sizes(td, meta)
    return td


class ModuleStateMixin:
    """``from_module`` / ``to_module`` / ``state_dict`` for every concrete container
    (see the module docstring)."""

    __slots__ = ()

    @classmethod
    def from_module(
        cls,
        module: nn.Module,
        as_module: bool = False,
        lock: bool = False,
        use_state_dict: bool = False,
        filter_empty: bool = True,
    ):
        """The parameters and buffers of ``module`` as a tensordict, nested like its
        submodules; the tensors are the module's own (no copy).

        ``as_module=True`` returns a :class:`~tensordict.nn.TensorDictParams` (an
        ``nn.Module`` registering them), ``lock=True`` a locked tensordict,
        ``use_state_dict=True`` the values of ``module.state_dict()`` (its hooks
        applied); ``filter_empty=False`` keeps submodules without tensors as empty
        tensordicts.

        >>> from torch import nn
        >>> params = TensorDict.from_module(nn.Sequential(nn.Linear(3, 4)))
        >>> params["0", "weight"].shape
        torch.Size([4, 3])
        """
        return from_module(
            module,
            as_module=as_module,
            lock=lock,
            use_state_dict=use_state_dict,
            filter_empty=filter_empty,
        )

    @classmethod
    def from_modules(
        cls,
        *modules: nn.Module,
        as_module: bool = False,
        lock: bool = True,
        use_state_dict: bool = False,
        lazy_stack: bool = False,
        expand_identical: bool = False,
    ):
        """The parameters of same-structured modules stacked along a new first batch
        dim: the parameters of an ensemble, to ``torch.vmap`` over.

        Stacking copies (the modules keep their own tensors); ``lazy_stack=True``
        keeps the modules' tensors in a lazy stack, ``expand_identical=True``
        expands a tensor every module shares instead of stacking copies of it.

        >>> from torch import nn
        >>> params = TensorDict.from_modules(nn.Linear(3, 4), nn.Linear(3, 4))
        >>> params.batch_size, params["weight"].shape
        (torch.Size([2]), torch.Size([2, 4, 3]))
        """
        return from_modules(
            *modules,
            as_module=as_module,
            lock=lock,
            use_state_dict=use_state_dict,
            lazy_stack=lazy_stack,
            expand_identical=expand_identical,
        )

    def to_module(
        self,
        module: nn.Module,
        *,
        inplace: bool | None = None,
        return_swap: bool = True,
        swap_dest=None,
        use_state_dict: bool = False,
        non_blocking: bool = False,
        preserve_module_state: bool = True,
        memo=None,
    ):
        """Put this tensordict's tensors into ``module`` (keys name submodules and
        their parameters or buffers, as :meth:`from_module` gives them).

        By default the module's tensors are replaced by these ones (no copy): the
        module then computes with them, and gradients flow back to them. With
        ``inplace=True`` they are copied into the tensors the module holds instead.
        Returns what was replaced (copies of it with ``inplace=True``) as a
        tensordict, ``None`` with ``return_swap=False``; ``swap_dest`` receives it.

        As a context manager, the old tensors are put back on exit, also when the
        block raises:

        >>> from torch import nn
        >>> module = nn.Linear(3, 4)
        >>> zeros = TensorDict.from_module(module).detach().clone().zero_()
        >>> with zeros.to_module(module):
        ...     print(module(torch.ones(1, 3)).detach())
        tensor([[0., 0., 0., 0.]])
        >>> bool(module.weight.abs().sum() > 0)
        True

        ``preserve_module_state=True`` keeps a parameter a parameter: a plain tensor
        that carries no graph replacing an ``nn.Parameter`` is stored as an
        ``nn.Parameter`` sharing its storage (tensors that require grad, and
        ``torch.vmap`` / ``torch.func`` tensors, are stored as they are).
        ``use_state_dict=True`` loads through ``module.load_state_dict`` (its hooks
        applied). ``memo`` is a set of ids of modules already written (shared
        submodules are written once).
        """
        return to_module(
            self,
            module,
            inplace=inplace,
            return_swap=return_swap,
            swap_dest=swap_dest,
            use_state_dict=use_state_dict,
            non_blocking=non_blocking,
            preserve_module_state=preserve_module_state,
            memo=memo,
        )

    def state_dict(
        self,
        destination=None,
        prefix: str = "",
        keep_vars: bool = False,
        flatten: bool = True,
    ):
        """The tensors as an ``OrderedDict`` that ``torch.save`` writes and
        ``torch.load(..., weights_only=True)`` reads back: flat ``"a.b"`` keys
        (nested ``OrderedDict``\\ s with ``flatten=False``), detached unless
        ``keep_vars``, each key prefixed with ``prefix``, written into
        ``destination`` when given (the call ``nn.Module.state_dict`` makes on its
        children). Non-tensor entries are left out.

        >>> td = TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(2)}}, [2])
        >>> list(td.state_dict())
        ['a', 'b.c']
        """
        return state_dict(self, destination, prefix, keep_vars, flatten)

    def load_state_dict(
        self, state_dict, strict: bool = True, assign: bool = False, from_flatten=None
    ):
        """Load the tensors of ``state_dict`` (flat ``"a.b"`` keys or nested dicts)
        into this tensordict: copied into the existing tensors, or set as they are
        with ``assign=True`` (and for keys without a tensor yet). ``strict=True``
        requires the keys to match exactly; ``from_flatten`` says whether dotted keys
        are flattened nested keys (by default: unless the dotted key itself exists).

        >>> td = TensorDict({"a": torch.zeros(2), "b": {"c": torch.zeros(2)}}, [2])
        >>> td.load_state_dict({"a": torch.ones(2), "b.c": torch.ones(2)})["b", "c"]
        tensor([1., 1.])
        """
        return load_state_dict(self, state_dict, strict, assign, from_flatten)
