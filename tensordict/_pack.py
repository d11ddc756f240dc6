"""Packing the leaves of a tensordict into one tensor (``pack`` / :class:`PackLayout`),
and describing them (``attrs`` / ``TensorAttrs``): methods every container has.

``td.pack(dim)`` flattens each tensor leaf after the batch dims, in the order of
``keys(True, True, sort=True)``, and concatenates them into one tensor of shape
``(*batch_size, F)`` (the feature dim moved to ``dim``); the :class:`PackLayout` it
returns records where each leaf's columns are and how the tree nests, so
``layout.unpack(flat)`` rebuilds the tensordict with leaves that are views of
``flat``. A layout is a frozen dataclass: hashable, compared by value, reusable across
batches (``td.pack(layout=layout)`` checks that the keys and shapes still match).
"""

from __future__ import annotations

import dataclasses
import math
import torch
from torch import Tensor

from tensordict._compat import _is_leaf_nontensor
from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import container_class

__all__ = ["PackLayout", "PackMethods"]


def _size(shape) -> torch.Size:
    return shape if type(shape) is torch.Size else torch.Size(shape)


def _key(key):
    """A nested key as ``keys()`` gives it: a str at the top level, else a tuple."""
    key = unravel_key_to_tuple(key)
    return key[0] if len(key) == 1 else key


@dataclasses.dataclass(frozen=True)
class PackLayout:
    """Where each leaf of a packed tensordict lies in the packed tensor, and how to
    rebuild the tree (see the module docstring).

    ``keys``: the leaf keys in column order; ``shapes``: each leaf's shape after the
    batch dims; ``dim``: the packed dim, counted from the end; ``nested``: one
    ``(key, batch_shape, cls)`` per nested tensordict (its batch shape after the root's
    batch dims; ``cls`` its tensorclass or ``None``); ``device``; ``cls``: the root's
    tensorclass or ``None``. ``offsets`` and ``numel`` are derived.

    >>> layout = PackLayout(keys=("a", ("b", "c")), shapes=([2], []))
    >>> layout.offsets, layout.numel
    ((0, 2), 3)
    >>> layout.unpack(torch.arange(6.0).reshape(2, 3))["b", "c"].tolist()
    [2.0, 5.0]
    """

    keys: tuple
    shapes: tuple
    dim: int = -1
    nested: tuple = ()
    device: torch.device | None = None
    cls: type | None = None
    offsets: tuple = dataclasses.field(init=False, compare=False)
    numel: int = dataclasses.field(init=False, compare=False)

    def __post_init__(self) -> None:
        keys = tuple(_key(k) for k in self.keys)
        shapes = tuple(_size(s) for s in self.shapes)
        if len(keys) != len(shapes):
            raise ValueError(
                f"PackLayout: {len(keys)} keys but {len(shapes)} shapes; give one "
                f"feature shape per key"
            )
        nested = tuple((_key(k), _size(s), c) for k, s, c in self.nested)
        offsets, total = [], 0
        for shape in shapes:
            offsets.append(total)
            total += math.prod(shape)
        set_ = object.__setattr__  # frozen: set the normalised and derived fields once
        set_(self, "keys", keys)
        set_(self, "shapes", shapes)
        set_(self, "nested", nested)
        set_(self, "device", None if self.device is None else torch.device(self.device))
        set_(self, "offsets", tuple(offsets))
        set_(self, "numel", total)

    def unpack(self, flat: Tensor):
        """The tensordict packed into ``flat`` (its leaves are views of ``flat``); the
        batch size is ``flat``'s shape without the packed dim, so extra leading dims
        are fine."""
        if flat.dim() < -self.dim or flat.shape[self.dim] != self.numel:
            raise ValueError(
                f"PackLayout.unpack: the packed dim {self.dim} of a tensor of shape "
                f"{tuple(flat.shape)} must hold {self.numel} features"
            )
        features = flat.movedim(self.dim, -1)
        batch = features.shape[:-1]
        device = flat.device if self.device is not None else None
        root = container_class("TensorDict")({}, batch_size=batch, device=device)
        for key, batch_shape, _ in self.nested:
            root.set(
                key, container_class("TensorDict")({}, batch_size=batch + batch_shape)
            )
        for key, shape, offset in zip(self.keys, self.shapes, self.offsets):
            columns = features.narrow(-1, offset, math.prod(shape))
            leaf = columns.unflatten(-1, shape) if len(shape) else columns.squeeze(-1)
            root.set(key, leaf)
        for key, _, cls in reversed(self.nested):  # innermost first
            if cls is not None:
                root.set(key, cls._from_td(root.get(key)))
        return self.cls._from_td(root) if self.cls is not None else root


def _plain(td):
    return td._tensordict if getattr(type(td), "_is_tensorclass", False) else td


class PackMethods:
    """``pack`` and ``attrs`` (see the module docstring)."""

    __slots__ = ()

    def pack(self, dim: int = -1, *, layout: PackLayout | None = None):
        """Pack every tensor leaf into one tensor of shape ``(*batch_size, F)`` (the
        feature dim at ``dim``), in the order of ``keys(True, True, sort=True)``;
        returns ``(flat, layout)`` and ``layout.unpack(flat)`` gives the tensordict
        back. Every leaf must share one dtype and device; non-tensor entries are
        refused (drop them with ``filter_non_tensor_data()``).

        >>> td = TensorDict(a=torch.zeros(3, 2), b=torch.ones(3), batch_size=[3])
        >>> flat, layout = td.pack()
        >>> flat.shape, layout.keys
        (torch.Size([3, 3]), ('a', 'b'))
        >>> layout.unpack(flat)["b"].tolist()
        [1.0, 1.0, 1.0]
        """
        ndim = self.batch_dims
        if not -(ndim + 1) <= dim <= ndim:
            raise IndexError(
                f"pack: dim {dim} is out of range for a tensordict with {ndim} batch "
                f"dims (expected a dim in [{-(ndim + 1)}, {ndim}])"
            )
        position = dim if dim >= 0 else dim + ndim + 1
        batch = self.batch_size
        keys, shapes, leaves = [], [], []
        dtype = device = None
        # non-tensor entries are listed too, to be refused rather than dropped
        for key in self.keys(True, True, sort=True, is_leaf=_is_leaf_nontensor):
            leaf = self.get(key)
            if not isinstance(leaf, Tensor):
                raise TypeError(
                    f"Cannot pack the non-tensor entry {key!r}. Drop the non-tensor "
                    f"entries with filter_non_tensor_data() first."
                )
            if dtype is None:
                dtype, device = leaf.dtype, leaf.device
            elif leaf.dtype != dtype:
                raise TypeError(
                    f"Cannot pack leaves of different dtypes: {dtype} and {leaf.dtype} "
                    f"at {key!r}. Cast the tensordict first, e.g. with float()."
                )
            elif leaf.device != device:
                raise ValueError(
                    f"Cannot pack leaves on different devices: {device} and "
                    f"{leaf.device} at {key!r}. Move the tensordict first with to()."
                )
            keys.append(_key(key))
            shapes.append(leaf.shape[ndim:])
            leaves.append(leaf.reshape(*batch, -1))
        nested = []
        for key in self.keys(True, False, sort=True):
            value = self.get(key)
            if isinstance(value, Tensor) or getattr(value, "_is_non_tensor", False):
                continue
            if not hasattr(value, "batch_size"):
                continue
            cls = (
                type(value) if getattr(type(value), "_is_tensorclass", False) else None
            )
            nested.append((_key(key), value.batch_size[ndim:], cls))
        root_cls = type(self) if getattr(type(self), "_is_tensorclass", False) else None
        new = PackLayout(
            keys=tuple(keys),
            shapes=tuple(shapes),
            dim=position - (ndim + 1),
            nested=tuple(nested),
            device=self.device,
            cls=root_cls,
        )
        if layout is not None and (layout.keys, layout.shapes) != (
            new.keys,
            new.shapes,
        ):
            if layout.keys != new.keys:
                raise KeyError(
                    f"The leaves of the tensordict differ from the keys of the layout: "
                    f"{list(new.keys)} vs {list(layout.keys)}."
                )
            raise ValueError(
                f"The feature shapes of the tensordict differ from those of the layout: "
                f"{[tuple(s) for s in new.shapes]} vs {[tuple(s) for s in layout.shapes]}."
            )
        if leaves:
            flat = torch.cat(leaves, -1) if len(leaves) > 1 else leaves[0].clone()
        else:
            flat = torch.empty(*batch, 0, device=self.device)
        if position != ndim:
            flat = flat.movedim(-1, position)
        return flat.contiguous(), new if layout is None else layout

    def attrs(self, *, fields=("device", "dtype", "shape"), num_threads=None):
        """A tensordict (empty batch size, no device) holding, for each tensor leaf, a
        :class:`~tensordict.TensorAttrs` with its device, dtype and shape (the
        attributes not in ``fields`` are ``None``). ``num_threads`` is accepted for
        compatibility.

        >>> td = TensorDict(a=torch.zeros(3), b=torch.zeros(3, dtype=torch.int32), batch_size=[3])
        >>> td.attrs()["b"].tgt_dtype
        torch.int32
        """
        unknown = set(fields) - {"device", "dtype", "shape"}
        if unknown:
            raise ValueError(
                f"attrs: unknown fields {sorted(unknown)}; choose among 'device', "
                f"'dtype' and 'shape'"
            )
        attrs_cls = container_class("TensorAttrs")
        out = container_class("TensorDict")({}, batch_size=[])
        for key in self.keys(True, True):
            leaf = self.get(key)
            if not isinstance(leaf, Tensor):
                continue
            out.set(
                key,
                attrs_cls(
                    tgt_device=leaf.device if "device" in fields else None,
                    tgt_dtype=leaf.dtype if "dtype" in fields else None,
                    tgt_shape=leaf.shape if "shape" in fields else None,
                    batch_size=[],
                ),
            )
        return out

    def clear_refs_for_compile_(self):
        """Forget the last ``lock_``/``unlock_`` recorded for their ``with`` form, here
        and in every nested tensordict, and return ``self`` (0.15.3's call before
        returning a tensordict from a ``torch.compile``-d function).

        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> td.clear_refs_for_compile_() is td
        True
        """
        stack = [self]
        while stack:
            td = _plain(stack.pop())
            if getattr(td, "_last_lock_op", None) is not None:
                td._last_lock_op = None
            for value in td.values():
                if hasattr(value, "batch_size") and not isinstance(value, Tensor):
                    stack.append(value)
        return self
