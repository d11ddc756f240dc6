"""LazyStackedTensorDict: several tensordicts seen as one, stacked along a batch dim,
without copying anything.

The stack keeps the original tensordicts (its *members*) in ``tensordicts``. Nothing is
stacked when the stack is built: reading a key stacks the members' tensors on demand,
writing a key or an index writes into the members, and indexing along the stack dim
returns the members themselves (``stack[0] is members[0]``). Members share their batch
size but may differ in the shapes of their tensors past the batch dims (the repr shows
``-1`` for a dim that differs) and in their keys: keys that only some members hold are
*exclusive* and are left out of ``keys()`` (the repr lists them under
``exclusive_fields``).

Every primitive of :class:`~tensordict.base.TensorDictBase` is implemented here in terms
of the members, so the shared behaviour (nested keys, ``apply``, ``update``, ...) and
the generated leaf-wise ops work on a stack; leaf-wise ops run member by member, so
members of different shapes are fine. :meth:`densify` and :meth:`to_tensordict` turn a
stack into a dense :class:`~tensordict.TensorDict`.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
from torch import Tensor

from tensordict import _atomic, _errors, _modes
from tensordict._generated.lazy_ops import LazyStackedTensorDictGeneratedOps
from tensordict._ops import operands as _ops_operands
from tensordict._keys import NestedKey, unravel_key_to_tuple
from tensordict._lazy_view import (  # noqa: F401  (0.15.3's name, for isinstance)
    LazyViewTensorDict as _CustomOpTensorDict,
)
from tensordict._lazy_view import LazyViewTensorDict as _LazyView
from tensordict._registry import container_class, register
from tensordict._repr import (
    _indent,
    compact_repr,
    entry_repr,
    printoptions,
    sorted_items,
    tensor_attributes,
    tensor_shape,
    trailer_parts,
)
from tensordict._td import (
    TensorDict,
    _given_batch_size,
    _indexed_batch_shape,
    _normalize_index,
    _parse_batch_size,
    _parse_device,
)
from tensordict._linked_list import entry_value
from tensordict._unbatched import is_unbatched, read_from as _unbatched_read
from tensordict.base import (
    _MISSING,
    _WriteBack,
    NO_DEFAULT,
    TensorDictBase,
    _Filled,
    _is_leaf_default,
    _entry_class,
    _is_node,
    _KeysView,
    _looks_like_key,
    _parse_names,
    _stacked_alike,
    is_tensor_collection,
)

__all__ = [
    "LazyStackedTensorDict",
    "dense_stack_tds",
    "lazy_stack",
    "maybe_dense_stack",
]

_FULL = slice(None)


# Ops on a tensordict's batch dims that a lazy stack held in it (with its stack dim past
# those dims) can run leaf by leaf without being made dense: they read the leading dims
# of every leaf only (and may add leading dims).
_OUTER_DIM_OPS = frozenset({"expand", "expand_as", "broadcast_to", "unsqueeze"})


@register
class LazyStackedTensorDict(
    LazyStackedTensorDictGeneratedOps,
    TensorDictBase,  # with the capabilities every kind has (persistence, map, ...)
):
    """A lazy stack of tensordicts along ``stack_dim``.

    >>> a = TensorDict(x=torch.zeros(3), batch_size=[3])
    >>> b = TensorDict(x=torch.ones(3), batch_size=[3])
    >>> stack = LazyStackedTensorDict(a, b, stack_dim=0)
    >>> stack.batch_size
    torch.Size([2, 3])
    >>> stack[0] is a
    True
    >>> stack["x"] = torch.full((2, 3), 2.0)  # written into a and b
    >>> a["x"]
    tensor([2., 2., 2.])

    ``LazyStackedTensorDict(stack_dim=0)`` builds an empty stack that ``append``,
    ``insert`` and ``extend`` grow.
    """

    # its leaves (for the walks of an enclosing dense tensordict) are the members'
    # leaves, without the stack dim: ops across batch dims must not use them
    _per_member_leaves = True

    # a dict: the values are the docstrings of the two public slots
    __slots__ = {
        "tensordicts": "The list of stacked tensordicts, in stack order (the stack "
        "holds them, it does not copy them).\n\n"
        ">>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2)), "
        "TensorDict(a=torch.ones(2))])\n>>> len(s.tensordicts)\n2",
        "stack_dim": "The batch dim along which the tensordicts are stacked.\n\n"
        ">>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2, 3), batch_size=[2])] * 4, dim=1)\n"
        ">>> s.stack_dim, s.batch_size\n(1, torch.Size([2, 4]))",
        "_batch_size": None,
        "_device": None,
        "_stack_dim_name": None,
        "_is_locked": None,
        "_last_lock_op": None,
        "_lock_stack": None,
        "_memmap_prefix": None,  # set while memory-mapped (tensordict/_persistence.py)
        "_consolidated": None,  # the storage of a consolidated stack (_consolidate.py)
        "__weakref__": None,
    }

    def __init__(
        self,
        *tensordicts: TensorDictBase,
        stack_dim: int = 0,
        hook_out: Callable | None = None,
        hook_in: Callable | None = None,
        batch_size: Sequence[int] | None = None,
        device=None,
        names: Sequence[str] | None = None,
        stack_dim_name: str | None = None,
        strict_shape: bool = False,
    ) -> None:
        if hook_out is not None or hook_in is not None:
            raise NotImplementedError(
                "LazyStackedTensorDict: hook_in / hook_out are not supported"
            )
        if len(tensordicts) == 1 and isinstance(tensordicts[0], (list, tuple)):
            tensordicts = tuple(tensordicts[0])
        members = [_as_member(td, i) for i, td in enumerate(tensordicts)]
        if not isinstance(stack_dim, int) or isinstance(stack_dim, bool):
            raise TypeError(f"stack_dim must be an int, got {stack_dim!r}")
        if members:
            member_bs = members[0].batch_size
            for i, td in enumerate(members[1:], 1):
                # members of one number of batch dims whose sizes differ make a
                # stack with -1 at those dims (as 0.15.3), see _stacked_batch_size
                if len(td.batch_size) != len(member_bs) or (
                    strict_shape and td.batch_size != member_bs
                ):
                    raise _member_batch_mismatch(i, td.batch_size, member_bs)
            stack_dim = _check_stack_dim(stack_dim, len(member_bs))
        elif stack_dim < 0:
            raise ValueError(
                "an empty LazyStackedTensorDict needs a non-negative stack_dim (the "
                f"members' batch dims are not known yet), got {stack_dim}"
            )
        self.tensordicts = members
        self.stack_dim = stack_dim
        self._stack_dim_name = stack_dim_name
        self._is_locked = None  # see is_locked
        self._last_lock_op = None
        self._lock_stack = None
        if device is not None:
            device = _parse_device(device)
            self.tensordicts = members = [
                td if td.device == device else td._moved_to(device) for td in members
            ]
        self._refresh()
        if batch_size is not None:
            batch_size = _parse_batch_size(batch_size)
            if members and batch_size != self._batch_size:
                raise RuntimeError(
                    f"LazyStackedTensorDict: batch_size {tuple(batch_size)} does not "
                    f"match the stack of {len(members)} tensordicts of batch size "
                    f"{tuple(members[0].batch_size)} along dim {stack_dim} "
                    f"({tuple(self._batch_size)})"
                )
            if not members:
                if len(batch_size) <= stack_dim or batch_size[stack_dim] != 0:
                    if len(batch_size) < stack_dim:
                        raise RuntimeError(
                            f"LazyStackedTensorDict: an empty stack along dim "
                            f"{stack_dim} needs at least {stack_dim} batch dims, got "
                            f"batch_size {tuple(batch_size)}"
                        )
                    # the members' batch size (as 0.15.3): the stack dim of size 0
                    # goes in at stack_dim
                    batch_size = torch.Size(
                        [*batch_size[:stack_dim], 0, *batch_size[stack_dim:]]
                    )
                self._batch_size = batch_size
        if not members and device is not None:
            self._device = device  # the device the members will be put on
        if names is not None:
            self.names = names
        if strict_shape and members:
            self._check_homogeneous("strict_shape=True")

    @classmethod
    def _new_unsafe(
        cls, tensordicts: list, stack_dim: int, batch_size=None, stack_dim_name=None
    ) -> "LazyStackedTensorDict":
        """Build without validation: for stacks whose members are known to share
        their batch size (results of indexing and of ops on a stack)."""
        self = object.__new__(LazyStackedTensorDict)
        self.tensordicts = tensordicts
        self.stack_dim = stack_dim
        self._stack_dim_name = stack_dim_name
        self._is_locked = None  # see is_locked
        self._last_lock_op = None
        self._lock_stack = None
        if tensordicts:
            first = tensordicts[0]
            self._batch_size = _stacked_batch_size(tensordicts, stack_dim)
            device = first.device
            for td in tensordicts:
                if td.device != device:
                    device = None
                    break
            self._device = device
        else:
            self._batch_size = (
                batch_size
                if batch_size is not None
                else torch.Size([0] * (stack_dim + 1))
            )
            self._device = None
        return self

    def _refresh(self) -> None:
        """Recompute the batch size and the device from the members."""
        tds = self.tensordicts
        sd = self.stack_dim
        if not tds:
            self._batch_size = torch.Size([0] * (sd + 1))
            self._device = None
            return
        self._batch_size = _stacked_batch_size(tds, sd)
        device = tds[0].device
        for td in tds:
            if td.device != device:
                device = None
                break
        self._device = device

    # ------------------------------------------------------------------ building
    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[TensorDictBase],
        dim: int = 0,
        *,
        device=None,
        out: TensorDictBase | None = None,
        stack_dim_name: str | None = None,
        strict_shape: bool = False,
        **kwargs: Any,
    ):
        """Stack ``items`` lazily along ``dim``: a :class:`LazyStackedTensorDict` that
        keeps the items themselves (always lazy, whatever :func:`lazy_legacy` says).
        Tensors are stacked with :func:`torch.stack`."""
        return lazy_stack(
            items,
            dim,
            device=device,
            out=out,
            stack_dim_name=stack_dim_name,
            strict_shape=strict_shape,
            **kwargs,
        )

    @staticmethod
    def _mapping_members(mappings: list, op: str, **options: Any):
        """The tensordicts ``from_dict`` builds from ``mappings`` (``TensorDict.from_list``
        reaches this through the registry)."""
        return _members_from_mappings(mappings, op, **options)

    @classmethod
    def maybe_dense_stack(
        cls,
        items: Sequence[TensorDictBase],
        dim: int = 0,
        out: TensorDictBase | None = None,
        strict: bool = False,
        **kwargs: Any,
    ):
        """A dense stack where the items allow it, a lazy one otherwise."""
        return maybe_dense_stack(items, dim, out=out, strict=strict, **kwargs)

    @classmethod
    def from_dict(
        cls,
        input_dict: "Mapping | Sequence[Mapping]",
        *other: Mapping,
        auto_batch_size: bool = False,
        batch_size=None,
        device=None,
        batch_dims: int | None = None,
        stack_dim_name: str | None = None,
        stack_dim: int = 0,
        names: Sequence[str] | None = None,
    ) -> "LazyStackedTensorDict":
        """A lazy stack along ``stack_dim`` of one tensordict per mapping: the items of
        ``input_dict`` when it is a list or tuple, else ``input_dict`` itself, then the
        ``other`` mappings. ``batch_size``, ``batch_dims`` and ``names`` describe the
        stack (the stack dim included); ``auto_batch_size`` gives each tensordict the
        batch dims its entries share."""
        items = (
            list(input_dict) if isinstance(input_dict, (list, tuple)) else [input_dict]
        )
        members, stack_dim, names = _members_from_mappings(
            items + list(other),
            "from_dict",
            stack_dim=stack_dim,
            auto_batch_size=auto_batch_size,
            batch_size=batch_size,
            batch_dims=batch_dims,
            device=device,
            names=names,
        )
        if stack_dim_name is None and names is not None:
            stack_dim_name = names[stack_dim]
        return cls(*members, stack_dim=stack_dim, stack_dim_name=stack_dim_name)

    @classmethod
    def from_list(
        cls,
        input: Sequence[Mapping],
        *,
        auto_batch_size: bool | None = None,
        batch_size=None,
        device=None,
        batch_dims: int | None = None,
        names: Sequence[str] | None = None,
        lazy: bool | None = None,
    ) -> "LazyStackedTensorDict":
        """A lazy stack along dim 0 of one tensordict per mapping of ``input`` (options
        as for :meth:`from_dict`). The result is lazy whatever ``lazy`` says;
        ``TensorDict.from_list`` stacks densely where it can."""
        return cls.from_dict(
            list(input),
            auto_batch_size=bool(auto_batch_size),
            batch_size=batch_size,
            device=device,
            batch_dims=batch_dims,
            names=names,
        )

    def valid_keys(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf: Callable | None = None,
        *,
        sort: bool = False,
    ):
        """The keys every stacked tensordict has: :meth:`keys`, under the name older
        code uses.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(1), b=torch.zeros(1)), TensorDict(a=torch.zeros(1))])
        >>> list(s.valid_keys())       # the keys every member has
        ['a']
        """
        return self.keys(include_nested, leaves_only, is_leaf, sort=sort)

    def append(self, tensordict: TensorDictBase) -> None:
        """Add ``tensordict`` at the end of the stack.

        >>> s = LazyStackedTensorDict(stack_dim=0)
        >>> s.append(TensorDict(a=torch.zeros(2)))
        >>> s.append(TensorDict(a=torch.ones(2)))
        >>> s.batch_size
        torch.Size([2])
        """
        self.insert(len(self.tensordicts), tensordict)

    def insert(self, index: int, tensordict: TensorDictBase) -> None:
        """Add ``tensordict`` at position ``index`` of the stack dim.

        >>> s = LazyStackedTensorDict(TensorDict(a=torch.zeros(2)), stack_dim=0)
        >>> s.insert(0, TensorDict(a=torch.ones(2)))
        >>> s["a"][:, 0].tolist()
        [1.0, 0.0]
        """
        if self._is_locked:
            raise _errors.locked("add a tensordict to the lazy stack")
        member = self._check_new_member(tensordict, len(self.tensordicts))
        self.tensordicts.insert(index, member)
        self._refresh()

    def extend(self, tensordict: "list[TensorDictBase] | TensorDictBase") -> None:
        """Add several tensordicts at the end: a list, or a tensordict whose slices
        along the stack dim are appended.

        >>> s = LazyStackedTensorDict(TensorDict(a=torch.zeros(2)), stack_dim=0)
        >>> s.extend([TensorDict(a=torch.ones(2)), TensorDict(a=torch.ones(2))])
        >>> s.batch_size
        torch.Size([3])
        """
        if self._is_locked:
            raise _errors.locked("add tensordicts to the lazy stack")
        if isinstance(tensordict, LazyStackedTensorDict) and (
            tensordict.stack_dim == self.stack_dim
        ):
            new = list(tensordict.tensordicts)
        elif isinstance(tensordict, TensorDictBase) or is_tensor_collection(tensordict):
            new = list(_unbind(tensordict, self.stack_dim))
        else:
            new = list(tensordict)
        start = len(self.tensordicts)
        members = []
        for i, td in enumerate(new):
            members.append(self._check_new_member(td, start + i, members))
        self.tensordicts.extend(members)
        self._refresh()

    def is_empty(self) -> bool:
        """True when the stack holds no entry, at any depth: read from the keys,
        nothing stacked (members of different shapes are fine).

        >>> LazyStackedTensorDict(TensorDict(), TensorDict()).is_empty()
        True
        """
        for _ in self.keys(True, True):
            return False
        return True

    def numel(self) -> int:
        """The number of elements of the batch; with members of different batch
        sizes (a ``-1`` in the batch size), the sum of the members' numbers.

        >>> a, b = TensorDict(batch_size=[3]), TensorDict(batch_size=[5])
        >>> LazyStackedTensorDict(a, b).numel()
        8
        """
        bs = self._batch_size
        if -1 in bs:
            return sum(td.numel() for td in self.tensordicts)
        return bs.numel()

    def _check_new_member(self, td, position, pending=()):
        td = _as_member(td, position)
        if self.tensordicts:
            # the members' batch size: a -1 (a dim whose size already differs between
            # the members) takes any size, as in 0.15.3
            sd = self.stack_dim
            expected = self._batch_size[:sd] + self._batch_size[sd + 1 :]
        else:
            expected = pending[0].batch_size if pending else None
        if expected is not None:
            bs = td.batch_size
            if len(bs) != len(expected) or any(
                e != -1 and e != b for b, e in zip(bs, expected)
            ):
                raise _member_batch_mismatch(position, bs, expected, adding=True)
        elif td.batch_dims < self.stack_dim:
            raise ValueError(
                f"cannot stack a tensordict of batch size {tuple(td.batch_size)} along "
                f"dim {self.stack_dim}: it has only {td.batch_dims} batch dims"
            )
        return td

    # ------------------------------------------------------------------ attributes
    @property
    def batch_size(self) -> torch.Size:
        """The members' batch size with the number of members inserted at the stack
        dim."""
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        new = _parse_batch_size(value)
        sd = self.stack_dim
        n = len(self.tensordicts)
        if len(new) <= sd or new[sd] != n:
            raise RuntimeError(
                f"cannot set the batch_size of a lazy stack to {tuple(new)}: dim {sd} "
                f"is the stack dim and must stay {n} (the number of stacked "
                f"tensordicts)"
            )
        member_bs = new[:sd] + new[sd + 1 :]
        for td in self.tensordicts:
            td.batch_size = member_bs
        self._batch_size = new

    @property
    def names(self) -> list:
        """One name (or None) per batch dim; the stack dim's is ``stack_dim_name``."""
        tds = self.tensordicts
        if tds:
            member = list(getattr(tds[0], "names", [None] * tds[0].batch_dims))
        else:
            member = [None] * (len(self._batch_size) - 1)
        member.insert(self.stack_dim, self._stack_dim_name)
        return member

    @names.setter
    def names(self, value) -> None:
        if value is None:
            value = [None] * len(self._batch_size)
        value = list(value)
        if len(value) != len(self._batch_size):
            raise ValueError(
                f"names {value} must give one name per batch dim "
                f"({len(self._batch_size)} batch dims)"
            )
        sd = self.stack_dim
        self._stack_dim_name = value[sd]
        member = value[:sd] + value[sd + 1 :]
        for td in self.tensordicts:
            if hasattr(td, "names"):
                td.names = member

    @property
    def stack_dim_name(self) -> str | None:
        """The name of the stack dim (see ``names``), or ``None``.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2))] * 3)
        >>> s.names = ["time"]
        >>> s.stack_dim_name
        'time'
        """
        return self._stack_dim_name

    def get_item_shape(self, key: NestedKey) -> torch.Size:
        """The shape the entry at ``key`` would have if stacked, with ``-1`` for the
        dims where the members differ (nothing is stacked)."""
        path = unravel_key_to_tuple(key)
        vals = [td._get_path(path) for td in self.tensordicts]
        if vals and isinstance(vals[0], TensorDictBase):
            return LazyStackedTensorDict._new_unsafe(vals, self.stack_dim).batch_size
        return _stacked_shape(vals, self.stack_dim, len(self._batch_size))

    # ------------------------------------------------------------------ primitives
    def _member_values(self, key: str) -> list:
        """Each member's entry at ``key`` (``_MISSING`` where a member lacks it)."""
        out = []
        for td in self.tensordicts:
            if type(td) is TensorDict:
                out.append(td._tensordict.get(key, _MISSING))
            else:
                out.append(td._get_str(key, _MISSING, missing_ok=True))
        return out

    def _member_kinds(self, key: str) -> list:
        """Each member's entry at ``key`` as far as a walk of keys needs it: a lazy
        member gives its own first member's leaf rather than stacking its members'
        (heterogeneous leaves need not stack to have a key)."""
        out = []
        for td in self.tensordicts:
            if isinstance(td, LazyStackedTensorDict):
                vals = td._member_kinds(key)
                if not vals or any(v is _MISSING for v in vals):
                    out.append(_MISSING)
                elif _is_node(vals[0]):
                    out.append(LazyStackedTensorDict._new_unsafe(vals, td.stack_dim))
                else:
                    out.append(vals[0])
            elif type(td) is TensorDict:
                out.append(td._tensordict.get(key, _MISSING))
            else:
                out.append(td._get_str(key, _MISSING, missing_ok=True))
        return out

    def _update(self, source, clone, inplace, allowed, prefix):
        # A lazy stack laid out like this one (same stack dim and members' batch
        # sizes) updates member by member: its members' entries may differ in shape,
        # which a stacked read of each key cannot give.
        if not prefix and _stacked_alike(self, source):
            for dest, member in zip(self.tensordicts, source.tensordicts):
                dest._update(member, clone, inplace, allowed, ())
            return
        if (
            not prefix
            and isinstance(source, LazyStackedTensorDict)
            and source.batch_size[: self.batch_dims] == self.batch_size
        ):
            # a lazy stack along another dim: each member takes its slice of it
            # (an index of a lazy stack indexes its members, stacking nothing)
            for dest, part in zip(self.tensordicts, _member_slices(self, source)):
                dest._update(part, clone, inplace, allowed, ())
            return
        super()._update(source, clone, inplace, allowed, prefix)

    def _own_keys(self):
        tds = self.tensordicts
        if not tds:
            return []
        first = tds[0]._own_keys()
        if len(tds) == 1:
            return list(first)
        others = [td._own_keys() for td in tds[1:]]
        return [key for key in first if all(key in keys for keys in others)]

    def _own_items(self):
        return [(key, self._get_str(key, NO_DEFAULT)) for key in self._own_keys()]

    def _own_values(self):
        return [self._get_str(key, NO_DEFAULT) for key in self._own_keys()]

    def _iter_own_items(self):
        return ((key, self._get_str(key, NO_DEFAULT)) for key in self._own_keys())

    def _exclusive_keys(self) -> list[list[str]]:
        """For each member, the keys it holds that not every member holds."""
        common = set(self._own_keys())
        return [
            [k for k in td._own_keys() if k not in common] for td in self.tensordicts
        ]

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        return self._combine(key, self._member_values(key), default, missing_ok)

    def entry_class(self, key: NestedKey) -> type:
        # plain tensors in every member: their class, without stacking them (members
        # of heterogeneous stacks hold tensors of different shapes; TorchRL walks
        # such stacks with entry_class before reading only the nested tensordicts)
        path = unravel_key_to_tuple(key)
        vals = [td._get_path(path, _MISSING) for td in self.tensordicts]
        if vals and all(type(v) is Tensor for v in vals):
            return Tensor
        return super().entry_class(key)

    def _get_path(self, key, default=NO_DEFAULT, *, explicit_default: bool = False):
        if len(key) == 1:
            return self._get_str(key[0], default)
        vals = [
            td._get_path(key, _MISSING, explicit_default=explicit_default)
            for td in self.tensordicts
        ]
        return self._combine(key, vals, default, False)

    def _combine(self, key, vals, default, missing_ok):
        """The stacked value of the members' entries ``vals`` at ``key``."""
        if not vals or any(v is _MISSING for v in vals):
            if default is not NO_DEFAULT or missing_ok:
                return default
            holders = [i for i, v in enumerate(vals) if v is not _MISSING]
            if not holders:
                raise _errors.key_missing(key, self.keys(True))
            raise KeyError(
                f"key {_errors._fmt_key(key)} is exclusive to the stacked tensordicts "
                f"at indices {holders} of {len(vals)}: it cannot be read from the lazy "
                f"stack (read it from those tensordicts, or pass a default)"
            )
        first = vals[0]
        sd = self.stack_dim
        if isinstance(first, Tensor):
            if is_unbatched(first):  # no batch dims, so no stack dim: the first one's
                return _unbatched_read(first, self.batch_size)
            return _stack_leaves(key, vals, sd)
        if _tensorclass_of(vals) is not None:  # the class around a stack, as 0.15.3
            _check_nested_batch(key, vals)
            nested = _stack_tensorclasses(key, vals, sd)
            nested._tensordict._is_locked = self._is_locked
            return nested
        if _is_node(first):
            _check_nested_batch(key, vals)
            nested = LazyStackedTensorDict._new_unsafe(vals, sd)
            nested._is_locked = self._is_locked  # its members are locked with self's
            return nested
        if is_tensor_collection(first) and not _is_non_tensor(first):
            return _stack_tensorclasses(key, vals, sd)
        return _stack_non_tensor(vals, sd, self.tensordicts[0].batch_size)

    def get(self, key: NestedKey, *args, **kwargs) -> Any:
        """The entry at ``key`` (stacked on demand); ``get(key, default)`` returns
        ``default`` if missing. For members whose tensors differ in shape,
        ``as_list=True`` returns the members' tensors, ``as_nested_tensor=True`` a
        ``torch.nested`` tensor (``layout=``), ``as_padded_tensor=True`` a padded
        stack (``padding_value=``, ``padding_side=``)."""
        as_list = kwargs.pop("as_list", False)
        as_nested = kwargs.pop("as_nested_tensor", False)
        as_padded = kwargs.pop("as_padded_tensor", False)
        layout = kwargs.pop("layout", None)
        padding_value = kwargs.pop("padding_value", 0.0)
        padding_side = kwargs.pop("padding_side", "right")
        if as_nested:
            default = args[0] if args else kwargs.get("default", NO_DEFAULT)
            return self.get_nestedtensor(key, default, layout=layout)
        if as_list or as_padded:
            # members that are lazy stacks themselves read their own stacked form
            # (a list of lists, a padded tensor), as 0.15.3's do
            path = unravel_key_to_tuple(key)
            opts = (
                {"as_list": True}
                if as_list
                else {
                    "as_padded_tensor": True,
                    "padding_value": padding_value,
                    "padding_side": padding_side,
                }
            )
            vals = [td.get(path, *args, **kwargs, **opts) for td in self.tensordicts]
            if as_list:
                return vals
            return _pad_and_stack(vals, self.stack_dim, padding_value, padding_side)
        return TensorDictBase.get(self, key, *args, **kwargs)

    def __contains__(self, item) -> bool:
        """``key in stack`` for a key; for a tensordict, whether it is one of the
        stacked tensordicts (the very object), as in 0.15.3."""
        if isinstance(item, TensorDictBase):
            return any(item is td for td in self.tensordicts)
        return TensorDictBase.__contains__(self, item)

    def __getitem__(self, index):
        if type(index) is str:
            return entry_value(self._get_str(index, NO_DEFAULT))
        if type(index) is int and self.stack_dim == 0:
            try:
                return self.tensordicts[index]
            except IndexError:
                raise _stack_index_error(index, len(self.tensordicts)) from None
        if isinstance(index, tuple) and index and _looks_like_key(index):
            return entry_value(self._get_path(unravel_key_to_tuple(index)))
        if isinstance(index, str):  # a str subclass (a str-valued Enum): a key too
            return entry_value(self._get_str(index, NO_DEFAULT))
        return self._index(index)

    def _set_str(
        self,
        key: str,
        value,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        tds = self.tensordicts
        if self._is_locked and not inplace:
            raise _errors.locked(f"set the key {key!r}")
        parts = self._split_value(key, value, validated)
        for td, part in zip(tds, parts):
            td._set_str(key, part, inplace=inplace, validated=validated)

    def _split_value(self, key, value, validated):
        """``value`` (shaped like this stack) cut into one value per member."""
        tds = self.tensordicts
        n = len(tds)
        sd = self.stack_dim
        bs = self._batch_size
        if isinstance(value, Tensor):
            if not validated and tuple(tensor_shape(value)[: len(bs)]) != tuple(bs):
                raise _errors.batch_mismatch(key, tensor_shape(value), bs)
            return value.unbind(sd)
        if (
            isinstance(value, LazyStackedTensorDict)
            and value.stack_dim == sd
            and (len(value.tensordicts) == n)
        ):
            return value.tensordicts
        if isinstance(value, TensorDictBase) or is_tensor_collection(value):
            if not validated and value.batch_size[: len(bs)] != bs:
                value = _given_batch_size(key, value, bs)  # batch [] takes the stack's
            parts = _unbind(value, sd)
            if _is_non_tensor(value):
                # each member stores its part as a tensordict stores non-tensor
                # data: the value itself (a NonTensorStack where it is one per
                # element of the member)
                member_bs = tds[0].batch_size if tds else torch.Size([])
                parts = [
                    (
                        part._entry_for(key, member_bs, None)
                        if _is_non_tensor(part)
                        else part
                    )
                    for part in parts
                ]
            return parts
        if isinstance(value, dict):
            return _unbind(TensorDict(value, batch_size=bs, device=self._device), sd)
        if isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)) or (
            isinstance(value, (list, tuple)) and not _is_text_list(value)
        ):
            try:
                tensor = torch.as_tensor(value, device=self._device)
            except (TypeError, ValueError, RuntimeError):
                # a (nested) list of one value per element, tensors of different
                # shapes for instance: each member takes its own, as in 0.15.3
                parts = _modes.list_to_stack() and _split_list(value, bs, sd)
                return parts or [value] * n
            if tensor.shape[: len(bs)] != bs:
                raise _errors.batch_mismatch(key, tensor.shape, bs)
            return tensor.unbind(sd)
        if type(value) is list and value and _modes.list_to_stack():
            # a list of non-tensor values: one per element, as in 0.15.3
            stack = container_class("NonTensorStack").from_list(value)
            return self._split_value(key, stack, validated)
        return [value] * n  # non-tensor data: every member gets it

    def _del_str(self, key: str) -> None:
        if self._is_locked:
            raise _errors.locked(f"delete the key {key!r}")
        found = False
        for td in self.tensordicts:
            if td._get_str(key, _MISSING, missing_ok=True) is not _MISSING:
                td._del_str(key)
                found = True
        if not found:
            raise _errors.key_missing(key, self.keys())

    def del_(self, key: NestedKey) -> "LazyStackedTensorDict":
        """Remove the entry at ``key`` from every stacked tensordict that holds it
        (a key exclusive to some of them included); ``KeyError`` when none does."""
        path = unravel_key_to_tuple(key)
        if len(path) == 1:
            self._del_str(path[0])
            return self
        if self._is_locked:
            raise _errors.locked(f"delete the key {_errors._fmt_key(path)}")
        holders = [
            td for td in self.tensordicts if td.get(path, _MISSING) is not _MISSING
        ]
        if not holders:
            raise _errors.key_missing(path, self.keys(True))
        for td in holders:
            td.del_(path)
        return self

    @property
    def _has_exclusive_keys(self) -> bool:
        """True when the stacked tensordicts do not all hold the same keys, nested
        ones included (TorchRL's batched envs check it before sharing one buffer)."""
        tds = self.tensordicts
        if len(tds) < 2:
            return False
        first = set(tds[0].keys(True))
        return any(set(td.keys(True)) != first for td in tds[1:])

    def clear_device_(self) -> "LazyStackedTensorDict":
        """Forget the device here and in every stacked tensordict (in place)."""
        for td in self.tensordicts:
            td.clear_device_()
        self._device = None
        return self

    def auto_batch_size_(
        self, batch_dims: int | None = None, keep_compliant_size: bool = False
    ) -> "LazyStackedTensorDict":
        """A lazy stack keeps its batch size (its members' with the stack dim): this
        returns it unchanged where the entries give that size, and raises where they
        would give another one (as 0.15.3 does; make it dense first)."""
        before = self._batch_size
        probe = container_class("TensorDict")._new_unsafe(
            dict(self._own_items()), before, self.device
        )
        after = probe.auto_batch_size_(batch_dims, keep_compliant_size).batch_size
        if after != before:
            raise RuntimeError(
                f"Modifying the batch size of a lazy representation of a tensordict is "
                f"not permitted: auto_batch_size_ would turn the batch size "
                f"{list(before)} of this LazyStackedTensorDict into {list(after)}; "
                f"make it dense first with to_tensordict()"
            )
        return self

    def _new_empty(self, batch_size=None, device=NO_DEFAULT, names=NO_DEFAULT):
        if batch_size is None and self.tensordicts:
            return LazyStackedTensorDict._new_unsafe(
                [td._new_empty(device=device) for td in self.tensordicts],
                self.stack_dim,
                stack_dim_name=self._stack_dim_name,
            )
        bs = self._batch_size if batch_size is None else _parse_batch_size(batch_size)
        dev = self._device if device is NO_DEFAULT else _parse_device(device)
        out = TensorDict._from_storage({}, bs, dev, None)
        if names is not NO_DEFAULT and names is not None:
            out.names = names
        return out

    def _create_nested_str(self, key: str) -> TensorDictBase:
        nested = self._new_empty()
        self._set_str(key, nested, inplace=False, validated=True)
        return nested

    def _check_to_batch_size(self) -> None:
        # 0.15.3's phrase first: code matches it
        raise TypeError(
            f"Cannot pass batch-size to a {type(self).__name__}. (to(batch_size=): a "
            f"lazy stack's batch size is its stacked tensordicts' with the stack dim; "
            f"make it dense first with to_tensordict())"
        )

    def _adopt(self, source) -> None:
        # update(update_batch_size=True): source's members along the stack dim (a
        # lazy stack along it hands over its own, as in 0.15.3)
        sd = self.stack_dim
        if isinstance(source, LazyStackedTensorDict) and source.stack_dim == sd:
            self.tensordicts = list(source.tensordicts)
        else:
            self.tensordicts = list(_unbind(source, sd))
        self._refresh()

    def _replace_contents(self, other) -> None:
        for td, new in zip(self.tensordicts, other.tensordicts):
            td._replace_contents(new)

    def _set_lock(self, locked: bool) -> None:
        # None once unlocked: the stack is then as locked as its members (is_locked)
        self._is_locked = True if locked else None
        for td in self.tensordicts:
            td._set_lock(locked)

    @property
    def is_locked(self) -> bool:
        """Whether the stack refuses writes: ``True`` after :meth:`lock_` (of the stack
        or of a tensordict holding it); otherwise, as in 0.15.3, whether every stacked
        tensordict is locked (each may have been locked on its own). ``_is_locked`` is
        ``None`` until the stack itself is locked, and again once unlocked.

        >>> td0, td1 = TensorDict(a=0), TensorDict(a=1)
        >>> s = TensorDict.lazy_stack([td0, td1])
        >>> s.is_locked, s._is_locked
        (False, None)
        >>> _ = td0.lock_(), td1.lock_()
        >>> s.is_locked, s._is_locked
        (True, None)
        """
        if self._is_locked is not None:
            return self._is_locked
        members = self.tensordicts
        return bool(members) and all(td.is_locked for td in members)

    @is_locked.setter
    def is_locked(self, value: bool) -> None:
        if value:
            self.lock_()
        else:
            self.unlock_()

    # ------------------------------------------------------------------ keys
    def keys(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        *,
        sort: bool = False,
    ) -> "_LazyKeysView":
        """The keys every stacked tensordict holds (exclusive keys are left out);
        nested ones as tuples when ``include_nested``. Nothing is stacked."""
        return _LazyKeysView(self, include_nested, leaves_only, is_leaf, sort)

    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        if with_values:
            return TensorDictBase._walk(
                self, include_nested, leaves_only, is_leaf, with_values
            )
        out: list = []
        _walk_keys(self, include_nested, leaves_only, is_leaf, (), out)
        return out

    # ------------------------------------------------------------------ indexing
    def _decompose(self, index):
        """Split a batch index into what it does at the stack dim, the index every
        member gets, and where the stack dim lands in the result. ``None`` when
        per-member indexing cannot reproduce the index (several advanced indices, a
        boolean mask across the stack dim and others, ...)."""
        bs = self._batch_size
        sd = self.stack_dim
        idx = _normalize_index(index, bs)
        parts = idx if type(idx) is tuple else (idx,)
        member_parts: list = []
        stack_part: Any = _FULL
        stack_out = None
        found = False
        advanced = 0
        d = 0  # batch dims consumed so far
        o = 0  # result dims produced so far
        for part in parts:
            if part is None:
                member_parts.append(None)
                o += 1
                continue
            if isinstance(part, (bool, np.bool_)):
                return None
            if isinstance(part, (set, frozenset, dict)):
                # 0.15.3's phrase first (code matches it)
                raise _errors.InvalidIndexError(
                    f"Invalid index {part!r}: a {type(part).__name__} is no batch "
                    f"index (use an int, a slice, a list, a range or a tensor)"
                )
            if isinstance(part, (list, range)):
                part = (
                    torch.as_tensor(list(part))
                    if len(part)
                    else torch.zeros(0, dtype=torch.long)
                )
            elif isinstance(part, np.ndarray):
                part = torch.from_numpy(part)
            elif isinstance(part, np.integer):
                part = int(part)
            if isinstance(part, Tensor):
                if part.dtype is torch.bool:
                    k = part.ndim
                    if k == 0:
                        return None
                    advanced += 1
                    if d <= sd < d + k:
                        if k != 1:
                            return None
                        if part.shape[0] != bs[sd]:
                            raise IndexError(
                                f"the boolean mask of length {part.shape[0]} does not "
                                f"match the stack dim of size {bs[sd]}"
                            )
                        stack_part = part.nonzero().squeeze(-1)
                        stack_out = o
                        found = True
                    else:
                        member_parts.append(part)
                    d += k
                    o += 1
                    continue
                if part.is_floating_point() or part.is_complex():
                    raise IndexError(
                        f"tensors used as indices must be integer or boolean, got "
                        f"{part.dtype}"
                    )
                if part.ndim == 0:
                    part = int(part)
                else:
                    advanced += 1
                    if d == sd:
                        stack_part = part
                        stack_out = o
                        found = True
                    else:
                        member_parts.append(part)
                    d += 1
                    o += part.ndim
                    continue
            if isinstance(part, int):
                if d == sd:
                    stack_part = part
                    found = True
                else:
                    member_parts.append(part)
                d += 1
                continue
            if isinstance(part, slice):
                if d == sd:
                    stack_part = part
                    stack_out = o
                    found = True
                else:
                    member_parts.append(part)
                d += 1
                o += 1
                continue
            return None
        if advanced > 1:
            return None
        if not found:
            stack_out = o + (sd - d)
        while (
            member_parts
            and isinstance(member_parts[-1], slice)
            and (member_parts[-1] == _FULL)
        ):
            member_parts.pop()
        return stack_part, tuple(member_parts), stack_out

    def _member_ids(self, stack_part) -> list[int]:
        n = len(self.tensordicts)
        if isinstance(stack_part, slice):
            return list(range(n)[stack_part])
        ids = stack_part.tolist()
        for i in ids:
            if not -n <= i < n:
                raise _stack_index_error(i, n)
        return [i % n for i in ids]

    def _index(self, index) -> TensorDictBase:
        dec = self._decompose(index)
        if dec is None:
            return self._dense_for("index it with", index)._index(index)
        stack_part, member_index, stack_out = dec
        tds = self.tensordicts
        n = len(tds)

        def member(i):
            td = tds[i]
            return td._index(member_index) if member_index else td

        if isinstance(stack_part, int):
            if not -n <= stack_part < n:
                raise _stack_index_error(stack_part, n)
            return member(stack_part)
        if isinstance(stack_part, Tensor) and stack_part.ndim > 1:
            if stack_part.numel() == 0:
                return self._empty_result(index, stack_out)
            for i in stack_part.reshape(-1).tolist():
                if not -n <= i < n:
                    raise _stack_index_error(i, n)

            def build(t):
                if t.ndim == 1:
                    return LazyStackedTensorDict._new_unsafe(
                        [member(i) for i in t.tolist()], stack_out
                    )
                return LazyStackedTensorDict._new_unsafe(
                    [build(s) for s in t.unbind(0)], stack_out
                )

            return build(stack_part)
        ids = self._member_ids(stack_part)
        if not ids:
            return self._empty_result(index, stack_out)
        result = LazyStackedTensorDict._new_unsafe(
            [member(i) for i in ids], stack_out, stack_dim_name=self._stack_dim_name
        )
        if self.is_locked:  # a view of a memory-mapped stack stays one
            result._memmap_view_from(self, index)
        return result

    def _empty_result(self, index, stack_out):
        return LazyStackedTensorDict._new_unsafe(
            [], stack_out, batch_size=self._indexed_shape(index)
        )

    def _indexed_shape(self, index) -> torch.Size:
        """The batch shape ``index`` gives. A ``-1`` dim (members of different
        sizes there) counts as its largest member's size."""
        bs = self._batch_size
        if -1 in bs:
            sd = self.stack_dim
            largest = [
                max(td.batch_size[i] for td in self.tensordicts)
                for i in range(len(bs) - 1)
            ]
            bs = torch.Size(largest[:sd] + [bs[sd]] + largest[sd:])
        return _indexed_batch_shape(bs, _normalize_index(index, bs))

    def set_at_(self, key, value, index, *, non_blocking: bool = False):
        """Write ``value`` into the existing entry at ``key``, at ``index``: through
        the stacked tensordicts (the entry read from a lazy stack is a copy)."""
        path = unravel_key_to_tuple(key)
        self._get_path(path)  # KeyError naming a missing key, as a dense tensordict
        if isinstance(value, np.ndarray):  # as a dense tensordict takes it
            value = torch.as_tensor(value)
        for part in reversed(path):
            value = {part: value}
        self._set_at_index(index, value)
        return self

    def _member_writes(self, index, value):
        """What writing ``value`` at ``index`` does to each member: a list of
        ``(member, member_index, member_value)``, or ``None`` when the members
        cannot take the index one by one (several advanced indices across the
        stack dim, ...)."""
        dec = self._decompose(index)
        if dec is None:
            return None
        stack_part, member_index, stack_out = dec
        tds = self.tensordicts
        n = len(tds)
        if isinstance(stack_part, int):
            if not -n <= stack_part < n:
                raise _stack_index_error(stack_part, n)
            return [(tds[stack_part], member_index, value)]
        if isinstance(stack_part, Tensor) and stack_part.ndim > 1:
            return None
        ids = self._member_ids(stack_part)
        result_bs = self._indexed_shape(index)
        parts = _split_for_index(value, len(ids), stack_out, len(result_bs))
        if parts is None:
            return None
        return [(tds[i], member_index, part) for i, part in zip(ids, parts)]

    def update_at_(
        self,
        input_dict_or_td,
        idx,
        clone: bool = False,
        *,
        non_blocking: bool = False,
        keys_to_update: Sequence[NestedKey] | None = None,
    ) -> "LazyStackedTensorDict":
        """:meth:`TensorDictBase.update_at_` member by member: each stacked
        tensordict takes its part of ``input_dict_or_td`` at its part of ``idx``,
        so a lazy stack whose members differ in shape (a replay buffer's storage
        made from one) takes a lazy stack of the same layout.

        >>> a = TensorDict(x=torch.zeros(4, 2), batch_size=[4])
        >>> b = TensorDict(x=torch.zeros(4, 3), batch_size=[4])
        >>> storage = LazyStackedTensorDict(a, b, stack_dim=1)
        >>> data = LazyStackedTensorDict(
        ...     TensorDict(x=torch.ones(2, 2), batch_size=[2]),
        ...     TensorDict(x=torch.ones(2, 3), batch_size=[2]),
        ...     stack_dim=1,
        ... )
        >>> _ = storage.update_at_(data, torch.tensor([1, 2]))
        >>> b["x"].sum(-1).tolist()
        [0.0, 3.0, 3.0, 0.0]
        """
        writes = self._member_writes(idx, input_dict_or_td)
        if writes is None:
            return TensorDictBase.update_at_(
                self,
                input_dict_or_td,
                idx,
                clone,
                non_blocking=non_blocking,
                keys_to_update=keys_to_update,
            )
        for td, member_index, part in writes:
            td.update_at_(
                part,
                member_index,
                clone,
                non_blocking=non_blocking,
                keys_to_update=keys_to_update,
            )
        return self

    def _set_at_index(self, index, value) -> None:
        writes = self._member_writes(index, value)
        if writes is not None:
            for td, member_index, part in writes:
                td._set_at_index(member_index, part)
            return
        # an index the members cannot take one by one: write through a dense copy
        dense = self._dense_for("write at the index", index)
        dense._set_at_index(index, value)
        self.update(dense, inplace=True)

    def _dense_for(self, action: str, index) -> TensorDict:
        try:
            return self.to_tensordict()
        except RuntimeError as err:
            raise RuntimeError(
                f"cannot {action} {index!r}: this index mixes the stack dim "
                f"{self.stack_dim} with other advanced indices, which needs a dense "
                f"copy, and the stacked tensordicts cannot be stacked densely ({err})"
            ) from None

    # ------------------------------------------------------------------ leaves
    def _leaves(self) -> list[Tensor]:
        out: list[Tensor] = []
        for td in self.tensordicts:
            out.extend(td._leaves())
        return out

    def _leaves_and_rebuild(self):
        leaves: list[Tensor] = []
        rebuilds = []
        counts = []
        for td in self.tensordicts:
            member_leaves, member_rebuild = td._leaves_and_rebuild()
            leaves.extend(member_leaves)
            rebuilds.append(member_rebuild)
            counts.append(len(member_leaves))
        total = len(leaves)
        sd = self.stack_dim
        n = len(self.tensordicts)
        name = self._stack_dim_name
        empty_bs = self._batch_size

        def rebuild(
            new_leaves,
            *,
            batch_size=None,
            device=NO_DEFAULT,
            names=NO_DEFAULT,
            leaf_fn=None,
            stack_non_tensor=False,  # (a TensorDict's option: nothing to do here)
        ):
            """A lazy stack of the members rebuilt from ``new_leaves`` (each member
            takes its own leaves, in order). The leaves are the members' leaves, which
            lack the stack dim: ``batch_size`` must keep the stack dim where it is,
            and the new leaves must start with the members' new batch size. (Ops that
            read batch dims make a held lazy stack dense first, ``_with_dense_stacks``;
            should a batch change reach it anyway, this says so rather than build a
            wrong stack.)"""
            if len(new_leaves) != total:
                raise ValueError(
                    f"rebuild expected {total} leaves, got {len(new_leaves)}"
                )
            member_bs = None
            new_sd = sd
            expected_bs = empty_bs
            if batch_size is not None:
                bs = _parse_batch_size(batch_size)
                # an op on the dims before the stack dim (expand of the tensordict
                # holding this stack): leading dims it adds move the stack dim along
                added = len(bs) - len(empty_bs)
                if (
                    added >= 0
                    and len(bs) > sd + added
                    and bs[sd + added] == n
                    and bs[sd + added + 1 :] == empty_bs[sd + 1 :]
                ):
                    new_sd = sd + added
                    expected_bs = bs
                member_bs = bs[:new_sd] + bs[new_sd + 1 :] if len(bs) > new_sd else None
                if bs != expected_bs or any(
                    leaf.shape[: len(member_bs)] != member_bs for leaf in new_leaves
                ):
                    raise RuntimeError(
                        f"cannot give a LazyStackedTensorDict of {n} tensordicts "
                        f"(stack dim {sd}, batch_size {tuple(empty_bs)}) the batch "
                        f"size {tuple(bs)} from its tensordicts' leaves: an op that "
                        f"changes the batch dims cannot run leaf by leaf on a lazy "
                        f"stack held in a TensorDict; call the op on the lazy stack "
                        f"itself, or densify() it first"
                    )
            extra = {} if leaf_fn is None else {"leaf_fn": leaf_fn}
            member_names = NO_DEFAULT
            stack_name = name
            if names is not NO_DEFAULT and names is not None:
                names = list(names)
                stack_name = names[new_sd]
                member_names = names[:new_sd] + names[new_sd + 1 :]
            members = []
            start = 0
            for member_rebuild, count in zip(rebuilds, counts):
                members.append(
                    member_rebuild(
                        new_leaves[start : start + count],
                        batch_size=member_bs,
                        device=device,
                        names=member_names,
                        **extra,
                    )
                )
                start += count
            return LazyStackedTensorDict._new_unsafe(
                members,
                new_sd,
                batch_size=empty_bs if batch_size is None else bs,
                stack_dim_name=stack_name,
            )

        return leaves, rebuild

    def _operand_leaves(self, other, op: str, default=None) -> list:
        out: list = []
        parts = self._split_other(other, op)
        for td, part in zip(self.tensordicts, parts):
            out.extend(td._operand_leaves(part, op, default))
        return out

    def _tensor_operand_leaves(
        self, tensor: Tensor, take=None, *, batch_dims: bool = False
    ) -> list:
        """A tensor operand, one per leaf (aligned with :meth:`_leaves`): what each
        stacked tensordict's leaf meets in ``stacked_leaf OP tensor``. Broadcasting
        aligns the tensor with the stacked leaf on the right (with ``batch_dims``,
        with its batch dims: see ``_ops.batch_broadcast``); where it reaches the
        stack dim, each stacked tensordict gets its own slice of it."""
        if take is None:
            if batch_dims:
                batch_ndim = self.batch_dims

                def take(ndim):
                    return _ops_operands.batch_aligned(tensor, ndim, batch_ndim)

            else:

                def take(ndim):
                    return tensor

        sd = self.stack_dim
        out: list = []
        for i, td in enumerate(self.tensordicts):

            def member_take(ndim, i=i):
                t = take(ndim + 1)  # aligned with the stacked leaf, one dim more
                j = t.ndim - (ndim + 1 - sd)
                if j < 0:
                    return t
                return t.select(j, 0 if t.shape[j] == 1 else i)

            if isinstance(td, LazyStackedTensorDict):
                out.extend(td._tensor_operand_leaves(tensor, member_take))
            else:
                out.extend(member_take(leaf.ndim) for leaf in td._leaves())
        return out

    def _split_other(self, other, op: str) -> list:
        """A tensordict shaped like this stack, cut into one per member."""
        n = len(self.tensordicts)
        sd = self.stack_dim
        if (
            isinstance(other, LazyStackedTensorDict)
            and other.stack_dim == sd
            and (len(other.tensordicts) == n)
        ):
            return other.tensordicts
        if isinstance(other, _Filled):
            return [_Filled(td, other._value) for td in self.tensordicts]
        if is_tensor_collection(other) and not isinstance(other, TensorDictBase):
            other = other._tensordict
        bs = self._batch_size
        if other.batch_size[: len(bs)] != bs:
            raise RuntimeError(
                f"{op}: the other tensordict has batch_size {tuple(other.batch_size)}, "
                f"which does not match the lazy stack's {tuple(bs)}"
            )
        return list(_unbind(other, sd))

    def _moved_to(self, device) -> "LazyStackedTensorDict":
        return LazyStackedTensorDict._new_unsafe(
            [td._moved_to(device) for td in self.tensordicts],
            self.stack_dim,
            stack_dim_name=self._stack_dim_name,
        )

    # ------------------------------------------------------------------ per member
    def _restack(self, members: list, stack_dim: int) -> "LazyStackedTensorDict":
        """A lazy stack of ``members`` (results of an op on each stacked tensordict)
        along ``stack_dim``."""
        return LazyStackedTensorDict._new_unsafe(
            members, stack_dim, stack_dim_name=self._stack_dim_name
        )

    def _with_dense_stacks(
        self, op: str, key: tuple = (), outer_dims: int | None = None
    ) -> TensorDictBase:
        if (
            op in _OUTER_DIM_OPS
            and outer_dims is not None
            and self.stack_dim >= outer_dims
        ):
            # held in a tensordict whose batch dims (the first ``outer_dims``) are the
            # only ones the op reads: the members' leaves have those dims too, so the
            # op runs on them leaf by leaf and the stack stays lazy (its stack dim
            # moves with the leading dims the op adds: see the rebuild)
            members = [
                td._with_dense_stacks(op, key, outer_dims) for td in self.tensordicts
            ]
            if all(new is old for new, old in zip(members, self.tensordicts)):
                return self
            return self._restack(members, self.stack_dim)
        try:  # the names stay with their dims
            return _dense_stack(self, None, names=self.names)
        except RuntimeError as err:
            where = "this LazyStackedTensorDict"
            if key:
                where = f"the entry {key[0] if len(key) == 1 else key!r}, a lazy stack,"
            raise RuntimeError(
                f"{op}(): {where} must be stacked densely for this op, which reads "
                f"every batch dim of the leaves (the stacked tensordicts' leaves lack "
                f"the stack dim {self.stack_dim}), but its tensordicts cannot be "
                f"stacked densely: {err}. Run {op} on the lazy stack itself, or make "
                f"its tensordicts' shapes match"
            ) from None

    def _dense_op(self, op: str) -> TensorDict:
        """The dense stack, for an op that needs it (it crosses the stack dim, or
        reads every entry stacked); an error naming ``op`` where the stacked
        tensordicts cannot be stacked densely."""
        try:  # the names stay with their dims
            return _dense_stack(self, None, names=self.names)
        except RuntimeError as err:
            raise RuntimeError(
                f"{op}(): on a LazyStackedTensorDict this op needs the dense stack "
                f"(it crosses the stack dim {self.stack_dim}, or reads every entry "
                f"stacked), but the stacked tensordicts cannot be stacked densely: "
                f"{err}. densify() the stack, or run the op on each of its "
                f"tensordicts (stack.tensordicts)"
            ) from None

    def _write_back(self, dense: TensorDictBase) -> "LazyStackedTensorDict":
        """Copy the entries of ``dense`` (shaped like this stack) into the stacked
        tensordicts, in place; ``self``."""
        self.update(dense, inplace=True)
        return self

    def atleast_1d(self):
        """The stack itself when it has a batch dim (it always has one: the stack
        dim), as a TensorDict's and 0.15.3's ``atleast_1d``.

        >>> stack = LazyStackedTensorDict.lazy_stack([TensorDict(batch_size=[])] * 2, 0)
        >>> stack.atleast_1d() is stack
        True
        """
        return self if self.batch_dims >= 1 else super().atleast_1d()

    def atleast_2d(self):
        """The stack itself when it has two batch dims or more; otherwise as
        :meth:`TensorDict.atleast_2d` (on the dense stack)."""
        return self if self.batch_dims >= 2 else super().atleast_2d()

    def atleast_3d(self):
        """The stack itself when it has three batch dims or more; otherwise as
        :meth:`TensorDict.atleast_3d` (on the dense stack)."""
        return self if self.batch_dims >= 3 else super().atleast_3d()

    def filter_non_tensor_data(self) -> "LazyStackedTensorDict":
        """As :meth:`TensorDict.filter_non_tensor_data`, member by member: a lazy
        stack of the members' tensors (not their dense stack: the leaves stay the
        members' own, autograd leaves included).

        >>> stack = LazyStackedTensorDict.lazy_stack(
        ...     [TensorDict(a=torch.zeros(2), label="x", batch_size=[2])] * 2, 0)
        >>> list(stack.filter_non_tensor_data().keys())
        ['a']
        """
        return self._per_member(
            [td.filter_non_tensor_data() for td in self.tensordicts]
        )

    def _per_member(self, results) -> "LazyStackedTensorDict":
        return LazyStackedTensorDict._new_unsafe(
            results,
            self.stack_dim,
            batch_size=self._batch_size,
            stack_dim_name=self._stack_dim_name,
        )

    def _apply(self, fn, others, **options):
        if options["batch_size"] is not None or not self.tensordicts:
            # a new batch size may drop the stack dim: build a dense result
            return TensorDictBase._apply(self, fn, others, **options)
        split = [self._split_other(other, "apply") for other in others]
        member_options = dict(options, batch_size=None, names=NO_DEFAULT)
        results = []
        for i, td in enumerate(self.tensordicts):
            results.append(
                td._apply(fn, [parts[i] for parts in split], **member_options)
            )
        if options["inplace"]:
            return self
        out = self._per_member(results)
        if options["names"] is not NO_DEFAULT:
            out.names = options["names"]
        return out

    def select(
        self,
        *keys: NestedKey,
        inplace: bool = False,
        strict: bool = True,
        as_tensordict: bool = False,
    ) -> TensorDictBase:
        """A lazy stack of each member's selection (nested keys keep their
        structure)."""
        if inplace:  # every member, or none (a failed call changes nothing)
            with _atomic.unchanged_on_error(self):
                for td in self.tensordicts:
                    td.select(*keys, inplace=True, strict=strict)
            return self
        results = [td.select(*keys, strict=strict) for td in self.tensordicts]
        return self._per_member(results)

    def exclude(self, *keys: NestedKey, inplace: bool = False) -> TensorDictBase:
        """A lazy stack of each member without ``keys`` (missing keys are ignored)."""
        if inplace:  # every member, or none (a failed call changes nothing)
            with _atomic.unchanged_on_error(self):
                for td in self.tensordicts:
                    td.exclude(*keys, inplace=True)
            return self
        return self._per_member([td.exclude(*keys) for td in self.tensordicts])

    def set_(self, key: NestedKey, item: Any, *, non_blocking: bool = False):
        """Update the existing entry at ``key`` in place, in every member."""
        path = unravel_key_to_tuple(key)
        if path not in self.keys(include_nested=True):
            try:
                self._get_path(path)
            except KeyError as err:  # 0.15.3's phrase first, then ours naming the key
                raise KeyError(
                    "setting a value in-place on a stack of TensorDict is only "
                    "permitted if all members of the stack have this key in their "
                    f"register. {err.args[0] if err.args else ''}"
                ) from None
        return self._set_path(path, item, inplace=True)

    def rename_key_(self, old_key: NestedKey, new_key: NestedKey, safe: bool = False):
        """Rename the entry in every member (no copy)."""
        if self._is_locked:
            raise _errors.locked(f"rename the key {old_key!r}")
        with _atomic.unchanged_on_error(self):  # every member, or none
            for td in self.tensordicts:
                td.rename_key_(old_key, new_key, safe=safe)
        return self

    def flatten_keys(self, separator: str = ".", inplace: bool = False, is_leaf=None):
        results = [
            td.flatten_keys(separator, inplace=inplace, is_leaf=is_leaf)
            for td in self.tensordicts
        ]
        if inplace:
            return self
        out = self._per_member(results)
        out._last_lock_op = _WriteBack(self, "unflatten_keys", separator)
        return out

    def unflatten_keys(self, separator: str = ".", inplace: bool = False):
        results = [
            td.unflatten_keys(separator, inplace=inplace) for td in self.tensordicts
        ]
        if inplace:
            return self
        out = self._per_member(results)
        out._last_lock_op = _WriteBack(self, "flatten_keys", separator)
        return out

    def empty(
        self,
        recurse: bool = False,
        *,
        batch_size=None,
        device=NO_DEFAULT,
        names=NO_DEFAULT,
    ) -> TensorDictBase:
        same_size = batch_size is None or (
            _parse_batch_size(batch_size) == self._batch_size
        )
        if not same_size or not self.tensordicts:  # a new batch size: one TensorDict
            return TensorDictBase.empty(
                self, recurse, batch_size=batch_size, device=device, names=names
            )
        return self._per_member(
            [td.empty(recurse=recurse, device=device) for td in self.tensordicts]
        )

    # ------------------------------------------------------------------ dense forms
    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """A dense :class:`~tensordict.TensorDict` holding the stacked entries (copies;
        exclusive keys are left out). Members whose tensors differ in shape cannot be
        stacked: see :meth:`densify`."""
        return _dense_stack(self, None)

    def contiguous(self, *, canonical: bool = False, inplace: bool = False):
        """A dense :class:`~tensordict.TensorDict` (as :meth:`to_tensordict`); with
        ``inplace=True`` every stacked tensordict is made contiguous instead and the
        stack itself is returned."""
        if inplace:
            for td in self.tensordicts:
                td.contiguous(inplace=True)
            return self
        return _dense_stack(self, None)

    def is_contiguous(self) -> bool:
        return False

    def densify(self, layout: torch.layout = torch.strided) -> TensorDict:
        """A dense :class:`~tensordict.TensorDict`: entries whose shapes agree across
        the members are stacked; the others become ``torch.nested`` tensors of the
        given ``layout`` (``torch.strided`` or ``torch.jagged``), which needs the stack
        dim to be the first dim."""
        if layout not in (torch.strided, torch.jagged):
            raise ValueError(
                f"densify: layout must be torch.strided or torch.jagged, got {layout}"
            )
        return _dense_stack(self, layout)

    def get_nestedtensor(
        self, key: NestedKey, default: Any = NO_DEFAULT, *, layout=None
    ) -> Any:
        """The members' tensors at ``key`` as one ``torch.nested`` tensor (of
        ``layout``, strided by default); the stack dim must be the first dim.

        >>> s = TensorDict.lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.zeros(3))])
        >>> nt = s.get_nestedtensor("a")
        >>> nt.is_nested
        True
        """
        path = unravel_key_to_tuple(key)
        vals = [td.get(path, _MISSING) for td in self.tensordicts]
        if any(v is _MISSING for v in vals):
            if default is not NO_DEFAULT:
                return default
            return self._combine(path, vals, NO_DEFAULT, False)  # raises
        if isinstance(vals[0], TensorDictBase):
            nested = LazyStackedTensorDict._new_unsafe(vals, self.stack_dim)
            return nested.densify(layout or torch.strided)
        return _nested(path, vals, self.stack_dim, layout or torch.strided)

    def to_padded_tensor(self, padding: float = 0.0, mask_key: NestedKey | None = None):
        """A dense :class:`~tensordict.TensorDict` where the members' tensors are
        padded with ``padding`` to a common shape and stacked. With ``mask_key``, a
        boolean mask of the real values is stored for each tensor under
        ``(mask_key, *key)``."""
        out = _dense_stack(self, "padded", padding=padding)
        if mask_key is not None:
            masks = _dense_stack(self, "mask")
            for key, mask in masks.items(True, True):
                out.set(
                    unravel_key_to_tuple(mask_key) + unravel_key_to_tuple(key), mask
                )
        return out

    def _check_homogeneous(self, what: str) -> None:
        first = self.tensordicts[0]
        for i, td in enumerate(self.tensordicts[1:], 1):
            if set(td.keys(True, True)) != set(first.keys(True, True)):
                raise RuntimeError(
                    f"{what}: the tensordict at index {i} has other keys"
                )
            for key in first.keys(True, True):
                a, b = first.get(key), td.get(key)
                if tensor_shape(a) != tensor_shape(b):
                    raise RuntimeError(
                        f"{what}: key {_errors._fmt_key(key)} has shape "
                        f"{tuple(tensor_shape(b))} at index {i} but "
                        f"{tuple(tensor_shape(a))} at index 0"
                    )

    # ------------------------------------------------------------------ repr
    def __repr__(self) -> str:
        return _lazy_repr(self)


# ---------------------------------------------------------------------------------------
# keys
# ---------------------------------------------------------------------------------------


class _LazyKeysView(_KeysView):
    """Keys of a lazy stack: walked on the members' structure, nothing stacked."""

    __slots__ = ()

    def __len__(self) -> int:
        if not self._include_nested and not self._leaves_only:
            return len(self._td._own_keys())
        return sum(1 for _ in self)

    def __contains__(self, key) -> bool:
        try:
            path = unravel_key_to_tuple(key)
        except (TypeError, KeyError):
            return False
        if len(path) > 1 and not self._include_nested:
            return False
        td = self._td
        for part in path[:-1]:
            sub = td._get_str(part, None, missing_ok=True)
            if not isinstance(sub, TensorDictBase):
                return False
            td = sub
        if isinstance(td, LazyStackedTensorDict):
            vals = td._member_kinds(path[-1])
            if not vals or any(v is _MISSING for v in vals):
                return False
            kind = _kind(vals)
        else:
            value = td._get_str(path[-1], _MISSING, missing_ok=True)
            if value is _MISSING:
                return False
            kind = type(value)
        if self._leaves_only:
            is_leaf = self._is_leaf or _is_leaf_default
            return is_leaf(kind)
        return True


def _kind(vals: list) -> type:
    """The type the stacked value of ``vals`` has (without stacking)."""
    first = vals[0]
    if isinstance(first, Tensor):
        return Tensor
    if _is_node(first):
        return LazyStackedTensorDict
    return _entry_class(first)


def _walk_keys(td, include_nested, leaves_only, is_leaf, prefix, out) -> None:
    # the key order and nesting of base._walk_default / _walk_custom, on member values
    for key in td._own_keys():
        vals = td._member_kinds(key)
        kind = _kind(vals)
        full = prefix + (key,)
        name = full if prefix else key
        is_node = kind is LazyStackedTensorDict and (
            is_leaf is None or not is_leaf(kind)
        )
        if is_node:
            if include_nested:
                # keys only: members whose nested tensordicts differ in batch size
                # (TorchRL's growing histories) list their common keys, as in 0.15.3
                sub = LazyStackedTensorDict._new_unsafe(vals, td.stack_dim)
                _walk_keys(sub, True, leaves_only, is_leaf, full, out)
            if leaves_only:
                continue
        elif leaves_only and not (is_leaf or _is_leaf_default)(kind):
            continue
        out.append(name)


# ---------------------------------------------------------------------------------------
# stacking values
# ---------------------------------------------------------------------------------------


def _as_member(td, position: int) -> TensorDictBase:
    if isinstance(td, TensorDictBase):
        return td
    if is_tensor_collection(td):
        return td._tensordict
    raise TypeError(
        f"Expected new value to be TensorDictBase instance: LazyStackedTensorDict "
        f"stacks tensordicts; the item at index {position} is a "
        f"{type(td).__name__}"
    )


def _members_from_mappings(
    items: list,
    op: str,
    *,
    stack_dim: int,
    auto_batch_size: bool,
    batch_size,
    batch_dims: int | None,
    device,
    names,
) -> tuple[list, int, list | None]:
    """One tensordict per item (a mapping built with ``TensorDict.from_dict``, a tensor
    collection kept as it is), for a stack along ``stack_dim``. The stack's
    ``batch_size``, ``batch_dims`` and ``names`` (stack dim included) become each
    tensordict's own. Returns the tensordicts, the stack dim (non-negative where the
    batch dims are known) and the names as a list."""
    if not items:
        raise ValueError(f"{op}(): needs at least one mapping to stack, got none")
    member_bs = member_dims = member_names = None
    stack_dims = None  # the stack's number of batch dims, where an option says it
    if batch_size is not None:
        batch_size = _parse_batch_size(batch_size)
        stack_dims = len(batch_size)
    elif batch_dims is not None:
        stack_dims = batch_dims
    if names is not None:
        names = list(names)
        stack_dims = len(names) if stack_dims is None else stack_dims
        if len(names) != stack_dims:
            raise ValueError(
                f"{op}(): names {names} has {len(names)} entries but the stack has "
                f"{stack_dims} batch dims"
            )
    if stack_dims is not None:
        if stack_dims < 1:
            raise ValueError(
                f"{op}(): the stack needs at least one batch dim (the stack dim), "
                f"got {stack_dims}"
            )
        stack_dim = _check_stack_dim(stack_dim, stack_dims - 1)
        if batch_size is not None:
            if batch_size[stack_dim] != len(items):
                raise ValueError(
                    f"{op}(): batch_size {list(batch_size)} has {batch_size[stack_dim]} "
                    f"at the stack dim {stack_dim}, but {len(items)} mappings are given"
                )
            member_bs = batch_size[:stack_dim] + batch_size[stack_dim + 1 :]
        if batch_dims is not None:
            member_dims = batch_dims - 1
        if names is not None:
            member_names = names[:stack_dim] + names[stack_dim + 1 :]
    members = []
    for i, item in enumerate(items):
        if is_tensor_collection(item):
            members.append(item)
        elif isinstance(item, Mapping):
            members.append(
                TensorDict.from_dict(
                    item,
                    auto_batch_size=auto_batch_size,
                    batch_size=member_bs,
                    device=device,
                    batch_dims=member_dims,
                    names=member_names,
                )
            )
        else:
            raise TypeError(
                f"{op}(): item {i} is a {type(item).__name__}; expected a mapping "
                f"(such as a dict) or a tensordict"
            )
    return members, stack_dim, names


def _check_stack_dim(stack_dim: int, member_dims: int) -> int:
    if not -(member_dims + 1) <= stack_dim <= member_dims:
        raise IndexError(
            f"stack_dim {stack_dim} is out of range for tensordicts with {member_dims} "
            f"batch dims (expected a dim in [{-(member_dims + 1)}, {member_dims}])"
        )
    return stack_dim % (member_dims + 1)


class StackBatchSizeError(RuntimeError, ValueError):
    """Tensordicts of different batch sizes in one lazy stack: a ``RuntimeError``
    here, as 0.15.3 raised when stacking; 0.15.3's ``append`` / ``insert`` raised
    ``ValueError``, so code catching either still works."""


def _member_batch_mismatch(
    position, batch_size, expected, adding: bool = False
) -> RuntimeError:
    # 0.15.3's phrases first (existing code matches them), then ours
    lead = (
        "Batch sizes in tensordicts differs: "
        if adding
        else "stacking tensordicts requires them to have congruent batch sizes "
        "(batch sizes in tensordicts differs): "
    )
    return StackBatchSizeError(
        f"{lead}cannot stack tensordicts of different batch sizes: the tensordict at "
        f"index "
        f"{position} has batch_size {tuple(batch_size)}, the stack holds tensordicts "
        f"of batch_size {tuple(expected)}"
    )


def _stack_index_error(index, n) -> IndexError:
    return IndexError(
        f"index {index} is out of range for the stack dim of size {n} (a lazy stack "
        f"of {n} tensordicts)"
    )


def _stacked_batch_size(tds: list, sd: int) -> torch.Size:
    """The batch size of a stack of ``tds`` along ``sd``: the members' batch size with
    the stack dim put in; a dim whose size differs between members is ``-1`` (a
    heterogeneous stack, as 0.15.3's: indexing along the stack dim gives each member
    with its own batch size, ops run member by member)."""
    bs = tds[0].batch_size
    for td in tds:
        other = td.batch_size
        if other != bs:
            # (the members share their number of batch dims: checked where built)
            bs = torch.Size([a if a == b else -1 for a, b in zip(bs, other)])
    return bs[:sd] + (len(tds),) + bs[sd:]


def _check_nested_batch(key, vals) -> None:
    """Nested tensordicts read from the members stack lazily when they have the same
    number of batch dims (sizes that differ give a -1 in the stack's batch size)."""
    bs = vals[0].batch_size
    for i, v in enumerate(vals[1:], 1):
        if len(v.batch_size) != len(bs):
            raise RuntimeError(
                f"cannot stack the nested tensordicts at key {_errors._fmt_key(key)}: "
                f"the one at index {i} has batch_size {tuple(v.batch_size)}, the one "
                f"at index 0 {tuple(bs)}"
            )


def _stack_leaves(key, vals: list, dim: int) -> Tensor:
    try:
        return torch.stack(vals, dim)
    except RuntimeError:
        shapes = [tuple(tensor_shape(v)) for v in vals]
        if len(set(shapes)) > 1:
            # The opening words are 0.15.3's: TorchRL matches them (re.match) to
            # fall back to a member-by-member copy of a heterogeneous key.
            raise RuntimeError(
                f"Failed to stack tensors within a tensordict: cannot stack the "
                f"tensors at key {_errors._fmt_key(key)}: the stacked "
                f"tensordicts hold tensors of shapes {shapes}. Read them with "
                f"get(key, as_list=True), get(key, as_padded_tensor=True) or "
                f"get_nestedtensor(key), or densify() the stack"
            ) from None
        raise


def _is_non_tensor(value) -> bool:
    return getattr(value, "_is_non_tensor", False)


def _stack_non_tensor(vals: list, dim: int, member_batch) -> Any:
    """The members' non-tensor entries stacked as a dense stack holds them: the value
    when they are all the same, a ``NonTensorStack`` otherwise."""
    return container_class("NonTensorStack")._stack_values(vals, dim, member_batch)


def _is_tc(value) -> bool:
    """A tensorclass instance (not non-tensor data)."""
    return getattr(type(value), "_is_tensorclass", False) and not _is_non_tensor(value)


def _stack_tensorclasses(key, vals: list, dim: int) -> Any:
    cls = type(vals[0])
    inner = LazyStackedTensorDict._new_unsafe([v._tensordict for v in vals], dim)
    from_td = getattr(cls, "_from_td", None)  # a rebuild: no __post_init__
    if from_td is None:
        raise TypeError(
            f"cannot stack the {cls.__name__} entries at key {_errors._fmt_key(key)}"
        )
    return from_td(inner)


def _is_text_list(value) -> bool:
    return any(isinstance(v, str) for v in value)


def _unbind(td, dim: int) -> list:
    """The slices of a tensordict (or tensor collection) along batch dim ``dim``."""
    if isinstance(td, LazyStackedTensorDict) and td.stack_dim == dim:
        return list(td.tensordicts)
    prefix = (_FULL,) * dim
    return [td[prefix + (i,)] for i in range(td.batch_size[dim])]


def _split_for_index(value, count: int, dim: int, result_ndim: int):
    """``value`` (what is written at an index whose result has the stack dim at
    ``dim``) cut into ``count`` values, one per member; ``None`` when it cannot be."""
    if (
        isinstance(value, LazyStackedTensorDict)
        and value.stack_dim == dim
        and (len(value.tensordicts) == count)
    ):
        return value.tensordicts
    if isinstance(value, TensorDictBase) or is_tensor_collection(value):
        bs = value.batch_size
        if len(bs) > dim and len(bs) >= result_ndim:
            if bs[dim] != count:
                return None
            return _unbind(value, dim)
        # fewer batch dims: broadcast, aligned on the right (as a tensor's shape)
        d = dim - (result_ndim - len(bs))
        if d < 0:  # the stack dim is not covered
            return [value] * count
        if bs[d] == count:
            return _unbind(value, d)
        if bs[d] == 1:
            return [value[(_FULL,) * d + (0,)]] * count
        return None
    if isinstance(value, dict):
        split = {
            k: _split_for_index(v, count, dim, result_ndim) for k, v in value.items()
        }
        if any(v is None for v in split.values()):
            return None
        return [{k: v[i] for k, v in split.items()} for i in range(count)]
    if isinstance(value, (bool, int, float, complex)):
        return [value] * count
    if isinstance(value, Tensor):
        if value.ndim >= result_ndim:
            if value.shape[dim] != count:
                return None
            return list(value.unbind(dim))
        if value.ndim < result_ndim - dim:
            return [value] * count  # aligned on the right: the stack dim is not covered
        return None
    return [value] * count


def _split_list(value, bs, sd: int):
    """A nested list laid out like batch size ``bs`` down to the stack dim ``sd``, cut
    into the parts that go to each member (``value[k]``, ``[v[k] for v in value]``,
    ...); None when it is not laid out so."""

    def laid_out(v, depth):
        if type(v) is not list or len(v) != bs[depth]:
            return False
        return depth == sd or all(laid_out(x, depth + 1) for x in v)

    def part(v, depth, k):
        return v[k] if depth == sd else [part(x, depth + 1, k) for x in v]

    if not laid_out(value, 0):
        return None
    return [part(value, 0, k) for k in range(bs[sd])]


def _member_slices(td, source) -> list:
    """``source`` (of ``td``'s batch size) cut into the slices that line up with
    ``td``'s members."""
    lead = (slice(None),) * td.stack_dim
    return [source[lead + (i,)] for i in range(len(td.tensordicts))]


def _pad_and_stack(vals, dim, padding_value=0.0, padding_side="right") -> Tensor:
    shapes = [tuple(v.shape) for v in vals]
    ndim = len(shapes[0])
    if any(len(s) != ndim for s in shapes):
        raise RuntimeError(
            f"cannot pad tensors with different numbers of dims: {shapes}"
        )
    target = [max(s[i] for s in shapes) for i in range(ndim)]
    padded = []
    for v in vals:
        pad: list[int] = []
        for i in reversed(range(ndim)):
            extra = target[i] - v.shape[i]
            pad.extend((extra, 0) if padding_side == "left" else (0, extra))
        padded.append(
            torch.nn.functional.pad(v, pad, value=padding_value) if any(pad) else v
        )
    return torch.stack(padded, dim)


def _pad_mask(vals, dim) -> Tensor:
    shapes = [tuple(v.shape) for v in vals]
    ndim = len(shapes[0])
    target = [max(s[i] for s in shapes) for i in range(ndim)]
    masks = []
    for v in vals:
        mask = torch.zeros(target, dtype=torch.bool, device=v.device)
        mask[tuple(slice(0, s) for s in v.shape)] = True
        masks.append(mask)
    return torch.stack(masks, dim)


_QUIET = [False]  # the one-time warning of strided nested tensors was silenced


def _nested(key, vals: list, dim: int, layout) -> Tensor:
    if dim != 0:
        raise RuntimeError(
            f"cannot make a nested tensor of the entries at key "
            f"{_errors._fmt_key(key)}: their shapes differ and the stack dim is {dim}, "
            f"but torch.nested tensors stack along their first dim only"
        )
    dtype = vals[0].dtype
    if any(v.dtype != dtype for v in vals):
        for v in vals:
            dtype = torch.promote_types(dtype, v.dtype)
        vals = [v.to(dtype) for v in vals]
    try:
        if layout is torch.strided and not _QUIET[0]:
            # torch warns once per process that strided nested tensors are a
            # prototype; densify asks for them on purpose
            with warnings.catch_warnings():
                warnings.filterwarnings(
                    "ignore", message=".*nested tensors is in prototype"
                )
                out = torch.nested.as_nested_tensor(vals, layout=layout)
            _QUIET[0] = True
            return out
        # as_nested_tensor keeps the autograd history, as torch.stack does
        return torch.nested.as_nested_tensor(vals, layout=layout)
    except (RuntimeError, ValueError, TypeError) as err:
        shapes = [tuple(v.shape) for v in vals]
        raise RuntimeError(
            f"cannot make a {layout} nested tensor of the entries at key "
            f"{_errors._fmt_key(key)} (shapes {shapes}): {err}"
        ) from None


def _dense_stack(
    stack: LazyStackedTensorDict, mode, padding=0.0, names=None
) -> TensorDict:
    """The stack as a dense TensorDict. ``mode``: None (entries must stack), a layout
    (differing entries become nested tensors), ``"padded"`` or ``"mask"``; ``names``:
    the names of its batch dims (none by default, as ``to_tensordict`` in 0.15.3)."""
    sd = stack.stack_dim
    storage: dict = {}
    for key in stack._own_keys():
        vals = stack._member_values(key)
        first = vals[0]
        if isinstance(first, Tensor):
            if is_unbatched(first):  # not stacked: the first one's
                storage[key] = first
            elif mode is None:
                storage[key] = _stack_leaves(key, vals, sd)
            elif mode == "padded":
                storage[key] = _pad_and_stack(vals, sd, padding)
            elif mode == "mask":
                storage[key] = _pad_mask(vals, sd)
            elif not first.is_nested and all(
                not v.is_nested and v.shape == first.shape for v in vals
            ):
                storage[key] = torch.stack(vals, sd)
            else:
                storage[key] = _nested(key, vals, sd, mode)
        elif _is_node(first) and _lazy_alike(vals) and not _homogeneous(first):
            storage[key] = _stack_lazy_entries(vals, sd, mode, padding)
        elif _is_node(first) and not _is_tc(first):
            _check_nested_batch(key, vals)
            sub = LazyStackedTensorDict._new_unsafe(vals, sd)
            storage[key] = _dense_stack(sub, mode, padding)
        elif is_tensor_collection(first) and not _is_non_tensor(first):
            inner = LazyStackedTensorDict._new_unsafe([v._tensordict for v in vals], sd)
            storage[key] = type(first)._from_td(_dense_stack(inner, mode, padding))
        elif mode != "mask":
            storage[key] = _stack_non_tensor(vals, sd, stack.tensordicts[0].batch_size)
    names = _parse_names(names, len(stack._batch_size))
    return TensorDict._from_storage(storage, stack._batch_size, stack._device, names)


def _lazy_alike(vals: list) -> bool:
    """Whether the entries are lazy stacks of as many members along one dim (as a
    heterogeneous entry is at every step of a rollout)."""
    first = vals[0]
    return isinstance(first, LazyStackedTensorDict) and all(
        isinstance(v, LazyStackedTensorDict)
        and v.stack_dim == first.stack_dim
        and len(v.tensordicts) == len(first.tensordicts)
        and v.batch_size == first.batch_size
        for v in vals
    )


def _homogeneous(stack: LazyStackedTensorDict) -> bool:
    """Whether a lazy stack's members could stack densely (same keys and shapes)."""
    return all(type(td) is TensorDict for td in stack.tensordicts) and _same_structure(
        list(stack.tensordicts)
    )


def _stack_lazy_entries(vals: list, dim: int, mode, padding) -> LazyStackedTensorDict:
    """The dense stack along ``dim`` of lazy-stack entries whose members' shapes differ
    (so they have no dense stack): still a lazy stack, whose member ``i`` is the dense stack of the entries'
    members ``i``; its stack dim moves one up when ``dim`` comes before it."""
    inner = vals[0].stack_dim
    outer = inner + 1 if dim <= inner else inner
    member_dim = dim if dim <= inner else dim - 1
    members = [
        _dense_stack(
            LazyStackedTensorDict._new_unsafe(
                [v.tensordicts[i] for v in vals], member_dim
            ),
            mode,
            padding,
        )
        for i in range(len(vals[0].tensordicts))
    ]
    return LazyStackedTensorDict._new_unsafe(members, outer)


def _stacked_shape(vals: list, dim: int, ndim: int) -> torch.Size:
    shapes = [tensor_shape(v) for v in vals]
    first = shapes[0]
    if any(len(s) != len(first) for s in shapes):
        dims = [-1] * (len(first))
        batch = ndim - 1
        dims[:batch] = first[:batch]
    else:
        dims = [
            d if all(s[i] == d for s in shapes) else -1 for i, d in enumerate(first)
        ]
    dims.insert(dim, len(vals))
    return torch.Size(dims)


# ---------------------------------------------------------------------------------------
# repr
# ---------------------------------------------------------------------------------------


def _block(name: str, lines: list[str]) -> str:
    if not lines:
        return f"{name}={{\n}}"
    return f"{name}={{\n" + ",\n".join(_indent(line, 1) for line in lines) + "}"


def _lazy_repr(td: LazyStackedTensorDict) -> str:
    if printoptions()["compact"]:
        return compact_repr(td)
    sd = td.stack_dim
    ndim = len(td._batch_size)
    fields = []
    for key, _ in sorted_items((key, None) for key in td._own_keys()):
        vals = td._member_values(key)
        first = vals[0]
        if isinstance(first, Tensor):
            shape = _stacked_shape(vals, sd, ndim)
            shared = all(v.is_shared() for v in vals)
            text = f"Tensor({', '.join(tensor_attributes(first, shape, shared))})"
        elif _is_node(first):
            text = repr(LazyStackedTensorDict._new_unsafe(vals, sd))
        else:
            value = _stack_non_tensor(vals, sd, td.tensordicts[0].batch_size)
            text = entry_repr(value, td)
        fields.append(f"{key}: {text}")
    exclusive = []
    for i, (member, keys) in enumerate(zip(td.tensordicts, td._exclusive_keys())):
        if not keys:
            continue
        lines = [
            f"{key}: {entry_repr(member._get_str(key, NO_DEFAULT), member)}"
            for key in sorted(keys)
        ]
        exclusive.append(f"{i} ->\n" + _indent(",\n".join(lines), 1))
    parts = [
        _block("fields", fields),
        _block("exclusive_fields", exclusive),
        *trailer_parts(td),
        f"stack_dim={sd}",
    ]
    return f"{type(td).__name__}(\n" + ",\n".join(_indent(p, 1) for p in parts) + ")"


# ---------------------------------------------------------------------------------------
# functions
# ---------------------------------------------------------------------------------------


def lazy_stack(
    input: Sequence[TensorDictBase],
    dim: int = 0,
    *,
    out: TensorDictBase | None = None,
    device=None,
    stack_dim_name: str | None = None,
    strict_shape: bool = False,
    **kwargs: Any,
):
    """Stack tensordicts lazily along ``dim`` (see :class:`LazyStackedTensorDict`);
    tensors are stacked with :func:`torch.stack`. With ``out``, the stacked entries
    are written into ``out``, which is returned."""
    if kwargs:
        raise TypeError(f"lazy_stack() got unexpected arguments {sorted(kwargs)}")
    items = list(input)
    if items and all(isinstance(x, Tensor) for x in items):
        return torch.stack(items, dim, out=out)
    if out is None and items and all(_is_non_tensor(x) for x in items):
        # non-tensor data keeps one value per element: a stack of the values, as
        # 0.15.3 gives (its .data is the value when they are all the same)
        return container_class("NonTensorStack")(
            *items, stack_dim=dim, device=items[0].device if device is None else device
        )
    cls = _tensorclass_of(items)
    if cls is not None:  # instances of one tensorclass: that class around the stack
        inner = lazy_stack(
            [x._tensordict for x in items],
            dim,
            out=None if out is None else getattr(out, "_tensordict", out),
            device=device,
            stack_dim_name=stack_dim_name,
            strict_shape=strict_shape,
        )
        return out if out is not None else cls._from_td(inner)
    result = LazyStackedTensorDict(
        *items,
        stack_dim=dim,
        device=device,
        stack_dim_name=stack_dim_name,
        strict_shape=strict_shape,
    )
    if out is not None:
        if out.batch_size != result.batch_size:  # 0.15.3's phrase first
            raise RuntimeError(
                f"out.batch_size and stacked batch size must match, got "
                f"out.batch_size={out.batch_size} and batch_size="
                f"{result.batch_size}: lazy_stack(out=) writes the stack into out in "
                f"place"
            )
        out.update(result, inplace=True)
        return out
    return result


def maybe_dense_stack(
    input: Sequence[TensorDictBase],
    dim: int = 0,
    *,
    out: TensorDictBase | None = None,
    strict: bool = False,
    **kwargs: Any,
):
    """Stack densely (a :class:`~tensordict.TensorDict`) when every item is a dense
    tensordict with the same keys and shapes, lazily otherwise."""
    items = list(input)
    if items and all(isinstance(x, Tensor) for x in items):
        return torch.stack(items, dim, out=out)
    cls = _tensorclass_of(items)
    if cls is not None:  # instances of one tensorclass: that class around the stack
        inner = maybe_dense_stack(
            [x._tensordict for x in items],
            dim,
            out=None if out is None else getattr(out, "_tensordict", out),
            strict=strict,
        )
        return out if out is not None else cls._from_td(inner)
    stack = LazyStackedTensorDict(*items, stack_dim=dim)
    if items and all(type(x) is TensorDict for x in items) and _same_structure(items):
        result = _dense_stack(stack, None)
    elif items:
        result = _best_intention_stack(items, stack.stack_dim, stack)
    else:
        result = stack
    if out is not None:
        out.update(result, inplace=True)
        return out
    return result


def _best_intention_stack(items: list, dim: int, stack: LazyStackedTensorDict):
    """The stack :func:`maybe_dense_stack` gives items that cannot stack densely
    as a whole, as 0.15.3 does: dense at every level whose keys agree and whose
    tensors agree in shape, a lazy stack at the levels below where they do not.
    Lazy stacks alike (as many members along one dim) stack member by member,
    under a lazy stack along their stack dim. ``stack`` is the lazy stack of
    ``items`` along ``dim``, returned where nothing can be dense."""
    first = items[0]
    if _lazy_alike(items):
        sd = first.stack_dim
        member_dim, new_sd = (dim, sd + 1) if dim <= sd else (dim - 1, sd)
        count = len(first.tensordicts)
        groups = [[x.tensordicts[i] for x in items] for i in range(count)]
        members = [maybe_dense_stack(group, member_dim) for group in groups]
        if not all(type(m) is TensorDict for m in members):
            # one group stacks only lazily: every group does (members alike)
            members = [
                LazyStackedTensorDict(*group, stack_dim=member_dim) for group in groups
            ]
        return LazyStackedTensorDict._new_unsafe(members, new_sd)
    keys = first._own_keys()
    if not all(
        type(x) is TensorDict
        and x.batch_size == first.batch_size
        and set(x._own_keys()) == set(keys)
        and len(x._own_keys()) == len(keys)
        for x in items
    ):
        return stack
    entries = {}
    for key in keys:
        vals = [x._tensordict[key] for x in items]
        head = vals[0]
        if isinstance(head, Tensor):
            shape = tensor_shape(head)
            if not all(
                isinstance(v, Tensor)
                and not is_unbatched(v)
                and tensor_shape(v) == shape
                for v in vals
            ):
                return stack
            entries[key] = torch.stack(vals, dim)
        elif _is_node(head):
            if not all(_is_node(v) and v.batch_size == head.batch_size for v in vals):
                return stack
            entries[key] = maybe_dense_stack(vals, dim)
        elif any(isinstance(v, TensorDictBase) and not _is_non_tensor(v) for v in vals):
            return stack  # tensorclasses: stacked lazily with the rest
        else:  # non-tensor data: as the lazy stack reads it
            entries[key] = stack._get_str(key, NO_DEFAULT)
    devices = {x.device for x in items}
    out = TensorDict(
        batch_size=stack.batch_size,
        device=first.device if len(devices) == 1 else None,
    )
    for key, value in entries.items():
        out._set_str(key, value, inplace=False, validated=False)
    return out


def _tensorclass_of(items: list):
    """The tensorclass every item is an instance of (not non-tensor data), else None."""
    if not items:
        return None
    cls = type(items[0])
    if not getattr(cls, "_lazy_stack_keeps_class", False) or cls._is_non_tensor:
        return None
    return cls if all(type(x) is cls for x in items) else None


def _same_structure(items: list) -> bool:
    """Whether the tensordicts hold the same keys with tensors of the same shapes at
    every level (lazy stacks inside compared member by member), so that a dense stack
    of them loses nothing."""
    first = items[0]
    keys = first._own_keys()
    for td in items[1:]:
        other = td._own_keys()
        if len(other) != len(keys) or set(other) != set(keys):
            return False
    for key in keys:
        try:
            vals = [_raw_entry(td, key) for td in items]
        except RuntimeError:  # a lazy stack whose members' shapes differ, read whole
            return False
        head = vals[0]
        if isinstance(head, Tensor):
            shape = tensor_shape(head)
            if any(not isinstance(v, Tensor) or tensor_shape(v) != shape for v in vals):
                return False
        elif isinstance(head, LazyStackedTensorDict):
            if not _lazy_alike(vals) or not all(
                _same_structure([v.tensordicts[i] for v in vals])
                for i in range(len(head.tensordicts))
            ):
                return False
        elif isinstance(head, TensorDictBase) and not _is_non_tensor(head):
            if not all(
                isinstance(v, TensorDictBase) and v.batch_size == head.batch_size
                for v in vals
            ) or not _same_structure(vals):
                return False
    return True


def _raw_entry(td, key: str):
    """The entry at ``key`` as stored (a lazy stack is not read as one tensor)."""
    if type(td) is TensorDict:
        return td._tensordict.get(key, _MISSING)
    return td._get_str(key, _MISSING, missing_ok=True)


def dense_stack_tds(
    td_list: "Sequence[TensorDictBase] | LazyStackedTensorDict", dim: int | None = None
) -> TensorDict:
    """Stack tensordicts (or the members of a lazy stack, along its stack dim unless
    ``dim`` says otherwise) into one dense :class:`~tensordict.TensorDict`."""
    if isinstance(td_list, LazyStackedTensorDict):
        if dim is None or dim == td_list.stack_dim:
            return _dense_stack(td_list, None)
        td_list = td_list.tensordicts
    items = list(td_list)
    if not items:
        raise ValueError("dense_stack_tds needs at least one tensordict")
    return _dense_stack(LazyStackedTensorDict(*items, stack_dim=dim or 0), None)


# ---------------------------------------------------------------------------------------
# 0.15.3's lazy-view classes, one per op (code checks ``isinstance(td,
# _PermutedTensorDict)``). A lazy view here is one class, LazyViewTensorDict, which
# knows the op that made it: these names are what isinstance asks of it.
class _LazyViewKind(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _LazyView) and obj._op_name in cls._ops

    def __subclasscheck__(cls, sub) -> bool:
        return type.__subclasscheck__(cls, sub)


class _PermutedTensorDict(metaclass=_LazyViewKind):
    """The lazy views that ``permute`` makes under ``set_lazy_legacy(True)``."""

    _ops = ("permute",)


class _ViewedTensorDict(metaclass=_LazyViewKind):
    """The lazy views that ``view`` makes under ``set_lazy_legacy(True)``."""

    _ops = ("view",)


class _TransposedTensorDict(metaclass=_LazyViewKind):
    """The lazy views that ``transpose`` makes under ``set_lazy_legacy(True)``."""

    _ops = ("transpose",)


class _UnsqueezedTensorDict(metaclass=_LazyViewKind):
    """The lazy views that ``unsqueeze`` makes under ``set_lazy_legacy(True)``."""

    _ops = ("unsqueeze",)


class _SqueezedTensorDict(metaclass=_LazyViewKind):
    """The lazy views that ``squeeze`` makes under ``set_lazy_legacy(True)``."""

    _ops = ("squeeze",)
