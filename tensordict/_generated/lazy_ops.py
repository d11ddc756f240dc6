# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/lazy_ops.py.jinja; do not edit
"""The generated ops of :class:`tensordict.LazyStackedTensorDict`.

Rendered from the same YAML op specs under ``spec/`` as the methods of
:class:`tensordict.TensorDict`; each family's op type (``codegen/families/``) says how
the op runs on a lazy stack:

- leaf-wise ops that keep the batch size, the keys and the nesting (pointwise, binary,
  cast, most of the device family) are not repeated here: the ``TensorDict`` forms,
  inherited, run on the lazy stack's leaves (the stacked tensordicts' leaves, one
  foreach call for all of them) and rebuild a lazy stack;
- batch-dim ops translate their dims around the stack dim and run on each stacked
  tensordict (``tensordict/_lazy_rules.py``, one function per batch-size rule), or on
  the dense stack where they cross the stack dim;
- reductions run per stacked tensordict over the other dims;
- the rest runs on the dense stack (``_dense_op``), with an error naming the op when
  the stacked tensordicts cannot be stacked densely.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch  # noqa: F401  (signatures name torch types)

from tensordict import _lazy_rules, _ops  # noqa: F401
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict.base import NO_DEFAULT  # noqa: F401  (a default in the signatures)

if TYPE_CHECKING:
    from typing import Any, Callable, List, Literal, Sequence, Tuple

    import numpy as np
    from torch import Tensor
    from typing_extensions import Self

    from tensordict._keys import NestedKey
    from tensordict._ops import CompatibleType, TensorCollection
    from tensordict.base import TensorDictBase

__all__ = ["LazyStackedTensorDictGeneratedOps"]


class LazyStackedTensorDictGeneratedOps(TensorDictGeneratedOps):
    """The lazy forms of the generated ops, as a mixin that
    :class:`~tensordict.LazyStackedTensorDict` inherits (the leaf-wise ones come from
    :class:`TensorDictGeneratedOps`, unchanged)."""

    __slots__ = ()

    # ---- Attributes and aggregates over the leaves (spec/attributes.yaml) ----

    def stack_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves stacked into one tensor.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.stack_from_tensordict`.
        """
        return self._dense_op("stack_from_tensordict").stack_from_tensordict(
            dim, sorted=sorted, out=out
        )

    def cat_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves concatenated into one tensor.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.cat_from_tensordict`.
        """
        return self._dense_op("cat_from_tensordict").cat_from_tensordict(
            dim, sorted=sorted, out=out
        )

    # ---- Gradients (spec/autograd.yaml) ----

    # ---- Batch-shape ops (spec/shape.yaml) ----

    def view(
        self,
        *shape: int,
        size: list | tuple | torch.Size | None = None,
        batch_size: torch.Size | None = None,
    ):
        """A view with a new batch shape (or a dtype view of every leaf).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.view`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.view(self, shape, size, batch_size, self, "view")
        )

    def reshape(self, *args, **kwargs) -> Self:
        """A new batch shape, as a view where possible.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.reshape`.
        """
        return _ops.keep_lock(self, _lazy_rules.reshape(self, args, kwargs, "reshape"))

    def permute(self, *args, **kwargs):
        """The batch dims reordered (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.permute`.
        """
        return _ops.keep_lock(self, _lazy_rules.permute(self, args, kwargs, "permute"))

    def transpose(self, dim0, dim1):
        """Two batch dims swapped (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.transpose`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.transpose(self, dim0, dim1, "transpose")
        )

    def swapdims(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.swapdims`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.transpose(self, axis0, axis1, "swapdims")
        )

    def swapaxes(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.swapaxes`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.transpose(self, axis0, axis1, "swapaxes")
        )

    def movedim(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.movedim`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.movedim(self, source, destination, "movedim")
        )

    def moveaxis(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view); an alias of :meth:`movedim`.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.moveaxis`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.movedim(self, source, destination, "moveaxis")
        )

    def squeeze(self, *args, **kwargs):
        """Size-one batch dims removed (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.squeeze`.
        """
        return _ops.keep_lock(self, _lazy_rules.squeeze(self, args, kwargs, "squeeze"))

    def unsqueeze(self, *args, **kwargs):
        """A batch dim of size one inserted (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.unsqueeze`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.unsqueeze(self, args, kwargs, "unsqueeze")
        )

    def flatten(
        self,
        start_dim: int | None = None,
        end_dim: int | None = None,
        *,
        inplace: bool = False,
    ):
        """Batch dims ``start_dim`` to ``end_dim`` merged into one.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.flatten`.
        """
        return _ops.keep_lock(
            self,
            _lazy_rules.flatten(self, start_dim, end_dim, "flatten", inplace=inplace),
        )

    def unflatten(self, dim, unflattened_size, *, inplace: bool = False):
        """One batch dim split into several (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.unflatten`.
        """
        return _ops.keep_lock(
            self,
            _lazy_rules.unflatten(
                self, dim, unflattened_size, "unflatten", inplace=inplace
            ),
        )

    def expand(self, *args, **kwargs) -> Self:
        """Size-one batch dims grown and new leading batch dims added (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.expand`.
        """
        return _ops.keep_lock(self, _lazy_rules.expand(self, args, kwargs, "expand"))

    def expand_as(self, other: TensorCollection | torch.Tensor) -> Self:
        """Expanded to the shape of a tensor or the batch size of a tensordict.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.expand_as`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.expand(self, other.shape, None, "expand_as")
        )

    def broadcast_to(self, shape: tuple[int, ...]):
        """Broadcast to a new batch shape (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.broadcast_to`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.expand(self, shape, None, "broadcast_to")
        )

    def repeat(self, *repeats: int, inplace: bool = False) -> Self:
        """Every leaf tiled along the batch dims (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.repeat`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.repeat(self, repeats, "repeat", inplace=inplace)
        )

    def repeat_interleave(
        self,
        repeats: torch.Tensor | int,
        dim: int | None = None,
        *,
        output_size: int | None = None,
        inplace: bool = False,
    ) -> Self:
        """Each element of a batch dim repeated in place (a copy).

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.repeat_interleave`.
        """
        if inplace:
            raise _lazy_rules.not_in_place(self, "repeat_interleave")
        return _ops.keep_lock(
            self,
            self._dense_op("repeat_interleave").repeat_interleave(
                repeats, dim, output_size=output_size, inplace=inplace
            ),
        )

    def tile(self, dims: tuple[int, ...]):
        """Every leaf tiled along the batch dims, as ``torch.tile`` (a copy).

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.tile`.
        """
        return _ops.keep_lock(self, self._dense_op("tile").tile(dims))

    def flip(self, dims: int | tuple[int, ...]):
        """The order of elements reversed along batch dims (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.flip`.
        """
        return _ops.keep_lock(self, _lazy_rules.flip(self, dims, "flip"))

    def fliplr(self):
        """Batch dim 1 reversed (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.fliplr`.
        """
        return _ops.keep_lock(self, _lazy_rules.flip(self, (1,), "fliplr"))

    def flipud(self):
        """Batch dim 0 reversed (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.flipud`.
        """
        return _ops.keep_lock(self, _lazy_rules.flip(self, (0,), "flipud"))

    def roll(
        self,
        shifts: int | tuple[int, ...],
        dims: int | tuple[int, ...] = None,
        *,
        inplace: bool = False,
    ):
        """Elements rolled along batch dims (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.roll`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.roll(self, shifts, dims, "roll", inplace=inplace)
        )

    def rot90(self, k: int = 1, dims: tuple[int, int] = (0, 1)):
        """A rotation by 90 degrees in the plane of two batch dims (a copy).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.rot90`.
        """
        return _ops.keep_lock(self, _lazy_rules.rot90(self, k, dims, "rot90"))

    def atleast_1d(self):
        """At least one batch dim (a view).

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.atleast_1d`.
        """
        return _ops.keep_lock(self, self._dense_op("atleast_1d").atleast_1d())

    def atleast_2d(self):
        """At least two batch dims (a view).

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.atleast_2d`.
        """
        return _ops.keep_lock(self, self._dense_op("atleast_2d").atleast_2d())

    def atleast_3d(self):
        """At least three batch dims (a view).

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.atleast_3d`.
        """
        return _ops.keep_lock(self, self._dense_op("atleast_3d").atleast_3d())

    def narrow(self, dim: int, start: int, length: int):
        """A slice of ``length`` elements of one batch dim (a view).

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.narrow`.
        """
        return _ops.keep_lock(
            self, _lazy_rules.narrow(self, dim, start, length, "narrow")
        )

    # ---- Binary, operator and comparison ops (spec/binary.yaml) ----

    # ---- Dtype casts (spec/cast.yaml) ----

    # ---- Devices, memory and copies (spec/device.yaml) ----

    def fill_(self, key: NestedKey, value: float | bool) -> Self:
        """Fill the entry at ``key`` with ``value``, in place.

        On a lazy stack it runs on each stacked tensordict.

        See :meth:`TensorDict.fill_`.
        """
        for td in self.tensordicts:
            td.fill_(key, value)
        return self

    def numpy(self) -> np.ndarray | dict[str, Any]:
        """The leaves as numpy arrays, in a nested dict.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.numpy`.
        """
        return self._dense_op("numpy").numpy()

    def tolist(
        self,
        *,
        convert_nodes: bool = True,
        convert_tensors: bool | Literal["numpy"] = False,
        tolist_first: bool = False,
        as_linked_list: bool = False,
    ) -> List[Any]:
        """The tensordict as nested lists along its batch dims.

        On a lazy stack each stacked tensordict gives its own lists, nested along
        the stack dim as the batch dims are (stacked tensordicts of different
        shapes are fine).

        See :meth:`TensorDict.tolist`.
        """
        return _lazy_rules.member_lists(
            self,
            lambda td: td.tolist(
                convert_nodes=convert_nodes,
                convert_tensors=convert_tensors,
                tolist_first=tolist_first,
                as_linked_list=as_linked_list,
            ),
        )

    def new_zeros(
        self,
        *size: torch.Size,
        dtype: torch.dtype = None,
        device: DeviceType = NO_DEFAULT,
        requires_grad: bool = False,
        layout: torch.layout = torch.strided,
        pin_memory: bool | None = None,
        empty_lazy: bool = False,
    ):
        """A tensordict of batch size ``size`` with the same keys, filled with zeros.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.new_zeros`.
        """
        return self._dense_op("new_zeros").new_zeros(
            *size,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            layout=layout,
            pin_memory=pin_memory,
            empty_lazy=empty_lazy,
        )

    def new_ones(
        self,
        *size: torch.Size,
        dtype: torch.dtype = None,
        device: DeviceType = NO_DEFAULT,
        requires_grad: bool = False,
        layout: torch.layout = torch.strided,
        pin_memory: bool | None = None,
        empty_lazy: bool = False,
    ):
        """A tensordict of batch size ``size`` with the same keys, filled with ones.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.new_ones`.
        """
        return self._dense_op("new_ones").new_ones(
            *size,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            layout=layout,
            pin_memory=pin_memory,
            empty_lazy=empty_lazy,
        )

    def new_empty(
        self,
        *size: torch.Size,
        dtype: torch.dtype = None,
        device: DeviceType = NO_DEFAULT,
        requires_grad: bool = False,
        layout: torch.layout = torch.strided,
        pin_memory: bool | None = None,
        empty_lazy: bool = False,
    ):
        """A tensordict of batch size ``size`` with the same keys, uninitialised.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.new_empty`.
        """
        return self._dense_op("new_empty").new_empty(
            *size,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            layout=layout,
            pin_memory=pin_memory,
            empty_lazy=empty_lazy,
        )

    def new_full(
        self,
        size: torch.Size,
        fill_value,
        *,
        dtype: torch.dtype = None,
        device: DeviceType = NO_DEFAULT,
        requires_grad: bool = False,
        layout: torch.layout = torch.strided,
        pin_memory: bool | None = None,
        empty_lazy: bool = False,
    ):
        """A tensordict of batch size ``size`` with the same keys, filled with ``fill_value``.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.new_full`.
        """
        return self._dense_op("new_full").new_full(
            size,
            fill_value,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            layout=layout,
            pin_memory=pin_memory,
            empty_lazy=empty_lazy,
        )

    def new_tensor(
        self,
        data: torch.Tensor | TensorCollection | np.ndarray | Sequence | float,
        *,
        dtype: torch.dtype = None,
        device: DeviceType = NO_DEFAULT,
        requires_grad: bool = False,
        pin_memory: bool | None = None,
    ) -> Self:
        """A copy of the tensordict ``data`` with this one's dtypes and device.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.new_tensor`.
        """
        return self._dense_op("new_tensor").new_tensor(
            data,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
            pin_memory=pin_memory,
        )

    # ---- Splitting, gathering and masking (spec/indexing.yaml) ----

    def split(
        self, split_size: int | list[int], dim: int = 0
    ) -> tuple[TensorDictBase, ...]:
        """Split into tensordicts along batch dim ``dim``.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.split`.
        """
        return _ops.keep_lock(self, _lazy_rules.split(self, split_size, dim, "split"))

    def chunk(self, chunks: int, dim: int = 0) -> tuple[TensorCollection, ...]:
        """Split into ``chunks`` tensordicts of (nearly) equal size along ``dim``.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.chunk`.
        """
        return _ops.keep_lock(self, _lazy_rules.chunk(self, chunks, dim, "chunk"))

    def tensor_split(
        self,
        indices_or_sections: int | list[int] | tuple[int, ...] | torch.Tensor,
        dim=0,
    ) -> tuple[TensorDictBase, ...]:
        """Split along ``dim`` into sections, or at the given indices.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.tensor_split`.
        """
        return _ops.keep_lock(
            self,
            _lazy_rules.tensor_split(self, indices_or_sections, dim, "tensor_split"),
        )

    def unbind(self, dim: int) -> tuple[TensorDictBase, ...]:
        """One tensordict per index of batch dim ``dim``, without that dim.

        On a lazy stack the dims are translated around the stack dim and the op
        runs on each stacked tensordict, giving a lazy stack; where it crosses the
        stack dim it runs on the dense stack.

        See :meth:`TensorDict.unbind`.
        """
        return _lazy_rules.unbind(self, dim, "unbind")

    def gather(
        self, dim: int, index: Tensor, out: T | None = None, *, inplace: bool = False
    ) -> Self:
        """Gather the items of batch dim ``dim`` that ``index`` picks.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.gather`.
        """
        if inplace:
            raise _lazy_rules.not_in_place(self, "gather")
        return self._dense_op("gather").gather(dim, index, out, inplace=inplace)

    def masked_fill(self, mask: Tensor, value: float | bool) -> Self:
        """Fill the batch items where ``mask`` is true with ``value``.

        On a lazy stack it runs on each stacked tensordict, its batch-shaped
        arguments cut along the stack dim (stacked tensordicts of different shapes
        are fine), and returns a lazy stack (or ``out``).

        See :meth:`TensorDict.masked_fill`.
        """
        return _lazy_rules.on_members(self, "masked_fill", dict(mask=mask, value=value))

    def masked_fill_(self, mask: Tensor, value: float | bool) -> Self:
        """In-place :meth:`masked_fill`, returning ``self``.

        On a lazy stack it runs on each stacked tensordict.
        """
        _lazy_rules.on_members(self, "masked_fill_", dict(mask=mask, value=value))
        return self

    def masked_select(self, mask: Tensor, *, inplace: bool = False) -> Self:
        """The batch items where ``mask`` is true, as one batch dim.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.masked_select`.
        """
        if inplace:
            raise _lazy_rules.not_in_place(self, "masked_select")
        return self._dense_op("masked_select").masked_select(mask, inplace=inplace)

    def where(
        self,
        condition: Tensor,
        other: Tensor | TensorDictBase,
        *,
        out: TensorDictBase | None = None,
        pad: int | bool = None,
        update_batch_size: bool = False,
    ) -> Self:
        """The tensordict where ``condition`` is true, ``other`` elsewhere.

        On a lazy stack it runs on each stacked tensordict, its batch-shaped
        arguments cut along the stack dim (stacked tensordicts of different shapes
        are fine), and returns a lazy stack (or ``out``).

        See :meth:`TensorDict.where`.
        """
        result = _lazy_rules.on_members(
            self,
            "where",
            dict(
                condition=condition,
                other=other,
                out=out,
                pad=pad,
                update_batch_size=update_batch_size,
            ),
        )
        return result if out is not None else _ops.keep_lock(self, result)

    # ---- Losses (spec/loss.yaml) ----

    # ---- Pointwise (unary) ops (spec/pointwise.yaml) ----

    # ---- Reductions (spec/reduction.yaml) ----

    def sum(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self | torch.Tensor:
        """Sum of every leaf over batch dims.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.sum`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().sum(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "sum")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("sum").sum(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.sum(
                    member_dim,
                    keepdim,
                    dtype=dtype,
                    reduce=reduce,
                    key_transform=key_transform,
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def nansum(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Sum of every leaf over batch dims, counting ``nan`` as zero.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.nansum`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().nansum(dim, keepdim, dtype=dtype, reduce=reduce)
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "nansum")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("nansum").nansum(
                dim, keepdim, dtype=dtype, reduce=reduce
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.nansum(member_dim, keepdim, dtype=dtype, reduce=reduce)
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def mean(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self | torch.Tensor:
        """Mean of every leaf over batch dims.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.mean`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().mean(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "mean")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("mean").mean(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.mean(
                    member_dim,
                    keepdim,
                    dtype=dtype,
                    reduce=reduce,
                    key_transform=key_transform,
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def nanmean(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Mean of every leaf over batch dims, leaving out ``nan`` values.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.nanmean`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().nanmean(dim, keepdim, dtype=dtype, reduce=reduce)
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "nanmean")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("nanmean").nanmean(
                dim, keepdim, dtype=dtype, reduce=reduce
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.nanmean(member_dim, keepdim, dtype=dtype, reduce=reduce)
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def prod(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Product of every leaf over one batch dim.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.prod`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().prod(dim, keepdim, dtype=dtype, reduce=reduce)
        where = _lazy_rules.reduced_dim(self, dim, keepdim, "prod")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("prod").prod(dim, keepdim, dtype=dtype, reduce=reduce)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.prod(member_dim, keepdim, dtype=dtype, reduce=reduce)
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def std(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        correction: int = 1,
        reduce: bool | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self | torch.Tensor:
        """Standard deviation of every leaf over batch dims.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.std`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().std(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "std")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("std").std(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.std(
                    member_dim,
                    keepdim,
                    correction=correction,
                    reduce=reduce,
                    key_transform=key_transform,
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def var(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        correction: int = 1,
        reduce: bool | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self | torch.Tensor:
        """Variance of every leaf over batch dims.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.var`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().var(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "var")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("var").var(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.var(
                    member_dim,
                    keepdim,
                    correction=correction,
                    reduce=reduce,
                    key_transform=key_transform,
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def min(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> Self | torch.Tensor:
        """Minimum of every leaf over one batch dim, with its indices.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.min`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().min(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
        where = _lazy_rules.reduced_dim(self, dim, keepdim, "min")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("min").min(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.min(
                    member_dim, keepdim, reduce=reduce, return_indices=return_indices
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def max(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> Self | torch.Tensor:
        """Maximum of every leaf over one batch dim, with its indices.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.max`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().max(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
        where = _lazy_rules.reduced_dim(self, dim, keepdim, "max")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("max").max(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.max(
                    member_dim, keepdim, reduce=reduce, return_indices=return_indices
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def amin(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Minimum of every leaf over batch dims, values only.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.amin`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().amin(dim, keepdim, reduce=reduce)
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "amin")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("amin").amin(dim, keepdim, reduce=reduce)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [td.amin(member_dim, keepdim, reduce=reduce) for td in self.tensordicts],
            stack_dim,
        )

    def amax(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Maximum of every leaf over batch dims, values only.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.amax`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().amax(dim, keepdim, reduce=reduce)
        where = _lazy_rules.reduced_dims(self, dim, keepdim, "amax")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("amax").amax(dim, keepdim, reduce=reduce)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [td.amax(member_dim, keepdim, reduce=reduce) for td in self.tensordicts],
            stack_dim,
        )

    def all(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether every value is true, over batch dims or overall.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.all`.
        """
        if _lazy_rules.no_dim(dim):  # one bool: each stacked tensordict's
            return all(td.all(dim) for td in self.tensordicts)
        where = _lazy_rules.reduced_dims(self, dim, False, "all")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("all").all(dim)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self, [td.all(member_dim) for td in self.tensordicts], stack_dim
        )

    def any(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether any value is true, over batch dims or overall.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.any`.
        """
        if _lazy_rules.no_dim(dim):  # one bool: each stacked tensordict's
            return any(td.any(dim) for td in self.tensordicts)
        where = _lazy_rules.reduced_dims(self, dim, False, "any")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("any").any(dim)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self, [td.any(member_dim) for td in self.tensordicts], stack_dim
        )

    def logsumexp(self, dim=None, keepdim=False, *, out=None):
        """Log of the summed exponentials of every leaf over batch dims.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.logsumexp`.
        """
        if out is not None:  # written into out: on the dense stack
            return self._dense_op("logsumexp").logsumexp(dim, keepdim, out=out)
        where = _lazy_rules.batch_reduced_dims(self, dim, keepdim, "logsumexp")
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("logsumexp").logsumexp(dim, keepdim, out=out)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [td.logsumexp(member_dim, keepdim, out=out) for td in self.tensordicts],
            stack_dim,
        )

    def norm(
        self,
        *,
        out=None,
        dtype: torch.dtype | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self:
        """Euclidean norm of every leaf.

        On a lazy stack it runs on the dense stack (``to_tensordict()``); stacked
        tensordicts whose shapes differ raise an error naming the op.

        See :meth:`TensorDict.norm`.
        """
        return self._dense_op("norm").norm(
            out=out, dtype=dtype, key_transform=key_transform
        )

    def quantile(
        self,
        q: float | torch.Tensor,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        interpolation: str = "linear",
        reduce: bool | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self | torch.Tensor:
        """Quantiles of every leaf over one batch dim.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.quantile`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().quantile(
                q,
                dim,
                keepdim,
                interpolation=interpolation,
                reduce=reduce,
                key_transform=key_transform,
            )
        where = _lazy_rules.reduced_dim(
            self, dim, keepdim, "quantile", _ops.quantile_shape(q)
        )
        if where is None:  # no dim, or over the stack dim: on the dense stack
            return self._dense_op("quantile").quantile(
                q,
                dim,
                keepdim,
                interpolation=interpolation,
                reduce=reduce,
                key_transform=key_transform,
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.quantile(
                    q,
                    member_dim,
                    keepdim,
                    interpolation=interpolation,
                    reduce=reduce,
                    key_transform=key_transform,
                )
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def cummin(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative minimum of every leaf along one batch dim, with its indices.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.cummin`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().cummin(dim, reduce=reduce, return_indices=return_indices)
        where = _lazy_rules.scanned_dim(self, dim, "cummin")
        if where is None:  # along the stack dim: on the dense stack
            return self._dense_op("cummin").cummin(
                dim, reduce=reduce, return_indices=return_indices
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.cummin(member_dim, reduce=reduce, return_indices=return_indices)
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def cummax(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative maximum of every leaf along one batch dim, with its indices.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.cummax`.
        """
        if reduce:  # the leaves as one tensor: the stacked tensordicts' leaves
            return super().cummax(dim, reduce=reduce, return_indices=return_indices)
        where = _lazy_rules.scanned_dim(self, dim, "cummax")
        if where is None:  # along the stack dim: on the dense stack
            return self._dense_op("cummax").cummax(
                dim, reduce=reduce, return_indices=return_indices
            )
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self,
            [
                td.cummax(member_dim, reduce=reduce, return_indices=return_indices)
                for td in self.tensordicts
            ],
            stack_dim,
        )

    def softmax(self, dim: int, dtype: torch.dtype | None = None):
        """Softmax of every leaf along one batch dim.

        On a lazy stack it reduces each stacked tensordict over the other dims (a
        lazy stack); over the stack dim it runs on the dense stack.

        See :meth:`TensorDict.softmax`.
        """
        where = _lazy_rules.scanned_dim(self, dim, "softmax")
        if where is None:  # along the stack dim: on the dense stack
            return self._dense_op("softmax").softmax(dim, dtype)
        member_dim, stack_dim = where
        return _lazy_rules.restack(
            self, [td.softmax(member_dim, dtype) for td in self.tensordicts], stack_dim
        )

    # ---- Stacking and concatenation (spec/stacking.yaml) ----

    @classmethod
    def stack(cls, input, dim: int = 0, *, out=None):
        """Stack tensordicts along a new batch dim ``dim``.

        Lazy stacks alike (one stack dim, as many tensordicts) stack into a lazy
        stack of their tensordicts stacked one by one; other inputs are stacked
        densely (lazily under ``set_lazy_legacy(True)``). ``cat`` along their stack
        dim joins their tensordicts without a copy.

        See :meth:`TensorDict.stack`.
        """
        return _lazy_rules.stack(cls, input, dim, out=out, op="stack")

    @classmethod
    def cat(cls, input, dim: int = 0, *, out=None):
        """Concatenate tensordicts along batch dim ``dim``.

        Lazy stacks alike (one stack dim, as many tensordicts) stack into a lazy
        stack of their tensordicts stacked one by one; other inputs are stacked
        densely (lazily under ``set_lazy_legacy(True)``). ``cat`` along their stack
        dim joins their tensordicts without a copy.

        See :meth:`TensorDict.cat`.
        """
        return _lazy_rules.cat(cls, input, dim, out=out, op="cat")
