# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/tensordict_ops.py.jinja; do not edit
"""The generated ops of :class:`tensordict.TensorDict`.

Rendered from the YAML op specs under ``spec/`` by ``python -m codegen``; the reference
pages under ``docs/reference/`` come from the same entries. Every method does its Python
work once per call: collect the leaves, make one ``torch._foreach_*`` call where torch
has one, rebuild the tree without re-validating it; an op whose new leaves come from one
leaf expression does the three in one walk (``_map_leaves``). The methods use the
primitives that ``docs/architecture.md`` lists (the leaf primitives
``_leaves_and_rebuild``, ``_map_leaves``, ``_leaves``, ``_scan_entries`` and
``_operand_leaves``, and the runtime helpers in ``tensordict/_ops/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from tensordict import _ops
from tensordict.base import NO_DEFAULT  # a default in the signatures users call
from tensordict.base import TensorDictBase  # any()/all(): nested containers answer

if TYPE_CHECKING:
    from typing import Any, Callable, List, Literal, Sequence, Tuple, TypeVar

    import numpy as np
    from torch import Tensor

    from typing_extensions import Self

    from tensordict._keys import NestedKey
    from tensordict._ops import CompatibleType, TensorCollection

    DeviceType = torch.device | str | int | None
    T = TypeVar("T")

__all__ = ["TensorDictGeneratedOps"]


class TensorDictGeneratedOps:
    """The generated ops, as a mixin that :class:`~tensordict.TensorDict` inherits."""

    __slots__ = ()

    # ---- Attributes and aggregates over the leaves (spec/attributes.yaml) ----

    @property
    def dtype(self):
        """The dtype every leaf has, or None when they differ.

        ``None`` too when the tensordict holds no tensor.

        Example:
            >>> TensorDict(a=torch.zeros(2), b={"c": torch.ones(2)}, batch_size=[2]).dtype
            torch.float32
            >>> TensorDict(a=torch.zeros(2), b=torch.tensor([1, 2]), batch_size=[2]).dtype is None
            True
        """
        leaves = self._leaves()
        new = [x.dtype for x in leaves]
        return _ops.common_dtype(new)

    @property
    def requires_grad(self):
        """Whether any leaf requires gradients.

        ``False`` for a tensordict without tensors.

        Example:
            >>> td = TensorDict(a=torch.zeros(2), b=torch.ones(2, requires_grad=True), batch_size=[2])
            >>> td.requires_grad
            True
        """
        for x in self._leaves():
            if x.requires_grad:
                return True
        return False

    @property
    def grad(self):
        """The gradients of the leaves, as a tensordict.

        Leaves without a gradient are left out, and nested tensordicts left empty with
        them; ``None`` when no leaf has a gradient.

        Example:
            >>> td = TensorDict(a=torch.ones(2, requires_grad=True), b=torch.ones(2), batch_size=[2])
            >>> td.grad is None
            True
            >>> (td["a"] * 3).sum().backward()
            >>> td.grad
            TensorDict(
                fields={
                    a: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False)},
                batch_size=torch.Size([2]),
                device=None,
                is_shared=False)
            >>> td.grad["a"]
            tensor([3., 3.])
        """
        leaves = self._leaves()
        new = [x.grad for x in leaves]
        return _ops.present_result(self, new)

    @property
    def data(self):
        """The leaves' ``.data``, as a tensordict shaped like this one.

        The new leaves share storage with the old ones and do not require gradients.

        Example:
            >>> td = TensorDict(a=torch.ones(2, requires_grad=True), batch_size=[2])
            >>> td.data["a"].requires_grad
            False
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: x.data))

    @property
    def is_cpu(self):
        """Whether the tensordict's device is the CPU.

        A property of the tensordict's ``device``, not of each leaf: ``False`` for a
        tensordict without a device, whatever its leaves.

        Example:
            >>> TensorDict(a=torch.zeros(2), batch_size=[2], device="cpu").is_cpu
            True
            >>> TensorDict(a=torch.zeros(2), batch_size=[2]).is_cpu
            False
        """
        return self._device is not None and self._device.type == "cpu"

    @property
    def is_cuda(self):
        """Whether the tensordict's device is a CUDA device.

        A property of the tensordict's ``device``: ``False`` for a tensordict without a
        device.

        Example:
            >>> TensorDict(a=torch.zeros(2), batch_size=[2], device="cpu").is_cuda
            False
        """
        return self._device is not None and self._device.type == "cuda"

    @property
    def is_meta(self):
        """Whether the tensordict's device is the meta device.

        A property of the tensordict's ``device``: ``False`` for a tensordict without a
        device, even when its leaves are meta tensors.

        Example:
            >>> TensorDict(a=torch.zeros(2, device="meta"), batch_size=[2], device="meta").is_meta
            True
        """
        return self._device is not None and self._device.type == "meta"

    def is_contiguous(self) -> bool:
        """Whether every leaf is contiguous.

        ``True`` for a tensordict without tensors.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
            >>> td.is_contiguous()
            True
            >>> TensorDict(a=torch.zeros(4, 3).t(), batch_size=[3]).is_contiguous()
            False
        """
        for x in self._leaves():
            if not x.is_contiguous():
                return False
        return True

    def is_floating_point(self) -> bool:
        """Whether every leaf has a floating-point dtype.

        ``True`` for a tensordict without tensors.

        Example:
            >>> TensorDict(a=torch.zeros(2), b=torch.ones(2), batch_size=[2]).is_floating_point()
            True
            >>> TensorDict(a=torch.zeros(2), b=torch.tensor([1, 2]), batch_size=[2]).is_floating_point()
            False
        """
        for x in self._leaves():
            if not x.is_floating_point():
                return False
        return True

    def data_ptr(self, *, storage: bool = False):
        """The address of every leaf's first element, as a tensordict of integers.

        With ``storage=True``, the address of the start of each leaf's storage instead
        (the same for views of one tensor). The result has batch size ``[]`` at every
        level and lives on the CPU. A lazy stack gives one entry per stacked tensordict,
        keyed by its index (``"0"``, ``"1"``, ...).

        Example:
            >>> x = torch.arange(6.0)
            >>> td = TensorDict(a=x, b=x[2:], batch_size=[])
            >>> ptrs = td.data_ptr()
            >>> int(ptrs["b"] - ptrs["a"])
            8
            >>> bool(td.data_ptr(storage=True)["b"] == ptrs["a"])
            True
        """
        leaves = self._leaves()
        new = [
            x.untyped_storage().data_ptr() if storage else x.data_ptr() for x in leaves
        ]
        return _ops.scalar_result(self, new)

    def bytes(self, *, count_duplicates: bool = True) -> int:
        """The number of bytes the leaves' elements take.

        With ``count_duplicates=False``, a tensor stored under several keys counts once
        (views of one tensor are different tensors and each counts). As in 0.15.3, a
        leaf's gradient counts too, and a jagged nested tensor counts the tensors it is
        made of (values, offsets, lengths; each once without ``count_duplicates``).

        Example:
            >>> x = torch.zeros(5)
            >>> td = TensorDict(a=x, b=x, c=torch.zeros(2, dtype=torch.float64), batch_size=[])
            >>> td.bytes(), td.bytes(count_duplicates=False)
            (56, 36)
        """
        leaves = self._leaves()
        new = [_ops.leaf_bytes(x) for x in leaves]
        return _ops.total(leaves, new, count_duplicates)

    def param_count(self, *, count_duplicates: bool = True) -> int:
        """The number of elements of the leaves.

        With ``count_duplicates=False``, a tensor stored under several keys counts once.

        Example:
            >>> x = torch.zeros(5)
            >>> td = TensorDict(a=x, b=x, c=torch.zeros(2), batch_size=[])
            >>> td.param_count(), td.param_count(count_duplicates=False)
            (12, 7)
        """
        leaves = self._leaves()
        new = [x.numel() for x in leaves]
        return _ops.total(leaves, new, count_duplicates)

    def stack_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves stacked into one tensor.

        ``torch.stack`` of the leaves in key insertion order (depth first), or sorted by
        key with ``sorted=True``, or in the order of the keys ``sorted`` lists. ``dim``
        is a dim of the result, as for ``torch.stack``; the leaves must have one shape.
        With ``out``, the result is written there and ``out`` is returned.

        Example:
            >>> td = TensorDict(b=torch.zeros(3), a={"c": torch.ones(3)}, batch_size=[3])
            >>> td.stack_from_tensordict()
            tensor([[0., 0., 0.],
                    [1., 1., 1.]])
            >>> td.stack_from_tensordict(1, sorted=True)
            tensor([[1., 0.],
                    [1., 0.],
                    [1., 0.]])
        """
        dense = self._with_dense_stacks("stack_from_tensordict")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.stack_from_tensordict(dim, sorted=sorted, out=out)
        leaves = self._leaves()
        new = [x for x in leaves]
        return _ops.join_leaves(
            self, new, torch.stack, dim, sorted, out, "stack_from_tensordict"
        )

    def cat_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves concatenated into one tensor.

        ``torch.cat`` of the leaves in key insertion order (depth first), or sorted by
        key with ``sorted=True``, or in the order of the keys ``sorted`` lists. ``dim``
        is a dim of the leaves, as for ``torch.cat``.

        Example:
            >>> td = TensorDict(b=torch.zeros(3, 1), a={"c": torch.ones(3, 1)}, batch_size=[3])
            >>> td.cat_from_tensordict(1)
            tensor([[0., 1.],
                    [0., 1.],
                    [0., 1.]])
        """
        dense = self._with_dense_stacks("cat_from_tensordict")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.cat_from_tensordict(dim, sorted=sorted, out=out)
        leaves = self._leaves()
        new = [x for x in leaves]
        return _ops.join_leaves(
            self, new, torch.cat, dim, sorted, out, "cat_from_tensordict"
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

        The shape is given as ``view(2, 6)``, ``view((2, 6))``, ``view(torch.Size([2,
        6]))`` or ``view(size=[2, 6])``; one size may be -1. It must hold as many elements
        as the batch. Every leaf is a view of the input's (torch raises when a leaf's
        strides do not allow one: use :meth:`reshape`). ``view(torch.float16)`` views every
        leaf with another dtype and keeps the batch size; ``view(torch.int16,
        batch_size=[3, 8])`` gives the result that batch size, which must lead every
        viewed leaf's shape (a leaf's last dim scales with the element size).

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4])
            >>> td.view(-1).batch_size, td.view(-1)["a"].shape
            (torch.Size([12]), torch.Size([12, 2]))
            >>> td.view(2, 6).batch_size
            torch.Size([2, 6])
            >>> td.view(torch.int32)["a"].dtype
            torch.int32
        """
        new_batch_size, dtype, batch_dims, unchanged = _ops.view_rule(
            self._batch_size, shape, size, batch_size, self, "view"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        # set_lazy_legacy(True): a lazy view, whose writes go through to self
        if _ops.lazy_legacy():
            return _ops.lazy_view(
                self,
                lambda td: td.view(*shape, size=size, batch_size=batch_size),
                "view",
            )
        dense = self._with_dense_stacks("view")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(
                self, dense.view(*shape, size=size, batch_size=batch_size)
            )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [
                    (
                        x.view(dtype)
                        if dtype is not None
                        else x.view(new_batch_size + x.shape[batch_dims:])
                    )
                    for x in leaves
                ],
                batch_size=new_batch_size,
                names=self._names
                and _ops.same_size_names(self._names, self._batch_size, new_batch_size),
                leaf_fn=lambda x: (
                    x.view(dtype)
                    if dtype is not None
                    else x.view(new_batch_size + x.shape[batch_dims:])
                ),
            ),
        )

    def reshape(self, *args, **kwargs) -> Self:
        """A new batch shape, as a view where possible.

        As :meth:`view`, but a leaf whose strides do not allow a view is copied, as
        ``torch.reshape`` does. The shape is given as ``reshape(2, 6)``, ``reshape((2,
        6))`` or ``reshape(shape=(2, 6))``. With ``inplace=True`` the tensordict itself
        takes the new batch shape and is returned.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4])
            >>> td.reshape(-1).batch_size
            torch.Size([12])
            >>> td.permute(1, 0).reshape(2, 6)["a"].shape
            torch.Size([2, 6, 2])
        """
        new_batch_size, batch_dims, inplace, unchanged = _ops.reshape_rule(
            self._batch_size, args, kwargs, "reshape"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("reshape")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.reshape(*args, **kwargs))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [x.reshape(new_batch_size + x.shape[batch_dims:]) for x in leaves],
            batch_size=new_batch_size,
            names=self._names
            and _ops.same_size_names(self._names, self._batch_size, new_batch_size),
            leaf_fn=lambda x: x.reshape(new_batch_size + x.shape[batch_dims:]),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def permute(self, *args, **kwargs):
        """The batch dims reordered (a view).

        ``permute(1, 0)``, ``permute((1, 0))`` or ``permute(dims=[1, 0])``: the dims must
        be a permutation of the batch dims. Feature dims stay after the batch dims, in
        their order.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4])
            >>> td.permute(1, 0).batch_size, td.permute([1, 0])["a"].shape
            (torch.Size([4, 3]), torch.Size([4, 3, 2]))
        """
        dims, positions, new_batch_size, unchanged = _ops.permute_rule(
            self._batch_size, args, kwargs, "permute"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        # set_lazy_legacy(True): a lazy view, whose writes go through to self
        if _ops.lazy_legacy():
            return _ops.lazy_view(
                self,
                lambda td: td.permute(*args, **kwargs),
                "permute",
            )
        dense = self._with_dense_stacks("permute")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.permute(*args, **kwargs))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.movedim(dims, positions) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.moved_names(self._names, dims, positions),
                leaf_fn=lambda x: x.movedim(dims, positions),
            ),
        )

    def transpose(self, dim0, dim1):
        """Two batch dims swapped (a view).

        ``dim0`` and ``dim1`` are batch dims; negative dims count from the last batch dim.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4])
            >>> td.transpose(0, -1)["a"].shape
            torch.Size([4, 3, 2])
        """
        dim0, dim1, new_batch_size, unchanged = _ops.transpose_rule(
            self._batch_size, dim0, dim1, "transpose"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        # set_lazy_legacy(True): a lazy view, whose writes go through to self
        if _ops.lazy_legacy():
            return _ops.lazy_view(
                self,
                lambda td: td.transpose(dim0, dim1),
                "transpose",
            )
        dense = self._with_dense_stacks("transpose")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.transpose(dim0, dim1))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.transpose(dim0, dim1) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.swapped_names(self._names, dim0, dim1),
                leaf_fn=lambda x: x.transpose(dim0, dim1),
            ),
        )

    def swapdims(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        As ``torch.swapdims``.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
            >>> td.swapdims(0, 1).batch_size
            torch.Size([4, 3])
        """
        dim0, dim1, new_batch_size, unchanged = _ops.transpose_rule(
            self._batch_size, axis0, axis1, "swapdims"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("swapdims")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.swapdims(axis0, axis1))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.transpose(dim0, dim1) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.swapped_names(self._names, dim0, dim1),
                leaf_fn=lambda x: x.transpose(dim0, dim1),
            ),
        )

    def swapaxes(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        As ``torch.swapaxes``.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
            >>> td.swapaxes(1, 0).batch_size
            torch.Size([4, 3])
        """
        dim0, dim1, new_batch_size, unchanged = _ops.transpose_rule(
            self._batch_size, axis0, axis1, "swapaxes"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("swapaxes")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.swapaxes(axis0, axis1))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.transpose(dim0, dim1) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.swapped_names(self._names, dim0, dim1),
                leaf_fn=lambda x: x.transpose(dim0, dim1),
            ),
        )

    def movedim(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view).

        The batch dims in ``source`` go to the positions in ``destination``; the other
        batch dims keep their order, and feature dims stay last.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, 3, 4, 5), batch_size=[2, 3, 4])
            >>> td.movedim(0, -1).batch_size, td.movedim(0, -1)["a"].shape
            (torch.Size([3, 4, 2]), torch.Size([3, 4, 2, 5]))
        """
        source, destination, new_batch_size, unchanged = _ops.movedim_rule(
            self._batch_size, source, destination, "movedim"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("movedim")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.movedim(source, destination))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.movedim(source, destination) for x in leaves],
                batch_size=new_batch_size,
                names=self._names
                and _ops.moved_names(self._names, source, destination),
                leaf_fn=lambda x: x.movedim(source, destination),
            ),
        )

    def moveaxis(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view); an alias of :meth:`movedim`.

        As ``torch.moveaxis``.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, 3, 4), batch_size=[2, 3, 4])
            >>> td.moveaxis((0, 1), (1, 0)).batch_size
            torch.Size([3, 2, 4])
        """
        source, destination, new_batch_size, unchanged = _ops.movedim_rule(
            self._batch_size, source, destination, "moveaxis"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("moveaxis")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.moveaxis(source, destination))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.movedim(source, destination) for x in leaves],
                batch_size=new_batch_size,
                names=self._names
                and _ops.moved_names(self._names, source, destination),
                leaf_fn=lambda x: x.movedim(source, destination),
            ),
        )

    def squeeze(self, *args, **kwargs):
        """Size-one batch dims removed (a view).

        ``squeeze()`` removes every batch dim of size one, ``squeeze(dim)`` (or a tuple of
        dims, or ``dim=``) those named that have size one; a named dim of another size
        stays, as for ``torch.squeeze``. Feature dims of size one stay.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 1, 1), batch_size=[3, 1])
            >>> td.squeeze().batch_size, td.squeeze()["a"].shape
            (torch.Size([3]), torch.Size([3, 1]))
            >>> td.squeeze(0).batch_size
            torch.Size([3, 1])
        """
        dims, new_batch_size, unchanged = _ops.squeeze_rule(
            self._batch_size, args, kwargs, "squeeze"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        # set_lazy_legacy(True): a lazy view, whose writes go through to self
        if _ops.lazy_legacy():
            return _ops.lazy_view(
                self,
                lambda td: td.squeeze(*args, **kwargs),
                "squeeze",
            )
        dense = self._with_dense_stacks("squeeze")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.squeeze(*args, **kwargs))
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.squeeze(dims) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.dropped_names(self._names, dims),
                leaf_fn=lambda x: x.squeeze(dims),
            ),
        )

    def unsqueeze(self, *args, **kwargs):
        """A batch dim of size one inserted (a view).

        ``dim`` may be one past the last batch dim: ``unsqueeze(-1)`` adds a batch dim
        after the last one, before the feature dims.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4])
            >>> td.unsqueeze(-1).batch_size, td.unsqueeze(-1)["a"].shape
            (torch.Size([3, 4, 1]), torch.Size([3, 4, 1, 2]))
            >>> td.unsqueeze(0).batch_size
            torch.Size([1, 3, 4])
        """
        # set_lazy_legacy(True): a lazy view, whose writes go through to self
        if _ops.lazy_legacy():
            return _ops.lazy_view(
                self,
                lambda td: td.unsqueeze(*args, **kwargs),
                "unsqueeze",
            )
        dense = self._with_dense_stacks("unsqueeze")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.unsqueeze(*args, **kwargs))
        dim, new_batch_size = _ops.unsqueeze_rule(
            self._batch_size, args, kwargs, "unsqueeze"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.unsqueeze(dim) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.inserted_names(self._names, dim),
                leaf_fn=lambda x: x.unsqueeze(dim),
                stack_non_tensor=True,
            ),
        )

    def flatten(
        self,
        start_dim: int | None = None,
        end_dim: int | None = None,
        *,
        inplace: bool = False,
    ):
        """Batch dims ``start_dim`` to ``end_dim`` merged into one.

        By default every batch dim is merged; feature dims are never touched. A view where
        the leaf's strides allow it, a copy otherwise, as ``torch.flatten``. A tensordict
        without batch dims gets batch size ``[1]``, as ``torch.flatten`` of a 0-d tensor.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, 3, 4, 5), batch_size=[2, 3, 4])
            >>> td.flatten().batch_size, td.flatten()["a"].shape
            (torch.Size([24]), torch.Size([24, 5]))
            >>> td.flatten(1, 2).batch_size
            torch.Size([2, 12])
        """
        dense = self._with_dense_stacks("flatten")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.flatten(start_dim, end_dim, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        start_dim, end_dim, new_batch_size = _ops.flatten_rule(
            self._batch_size, start_dim, end_dim, "flatten"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [
                (
                    x.flatten(start_dim, end_dim)
                    if end_dim >= start_dim
                    else x.unsqueeze(0)
                )
                for x in leaves
            ],
            batch_size=new_batch_size,
            names=self._names and _ops.flattened_names(self._names, start_dim, end_dim),
            leaf_fn=lambda x: (
                x.flatten(start_dim, end_dim)
                if end_dim >= start_dim
                else x.unsqueeze(0)
            ),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def unflatten(self, dim, unflattened_size, *, inplace: bool = False):
        """One batch dim split into several (a view).

        ``unflattened_size`` must multiply to the size of batch dim ``dim``; one size may
        be -1.

        Example:
            >>> td = TensorDict(a=torch.zeros(12, 2), batch_size=[12])
            >>> td.unflatten(0, (3, -1)).batch_size, td.unflatten(0, (3, 4))["a"].shape
            (torch.Size([3, 4]), torch.Size([3, 4, 2]))
        """
        dense = self._with_dense_stacks("unflatten")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.unflatten(dim, unflattened_size, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        dim, sizes, new_batch_size = _ops.unflatten_rule(
            self._batch_size, dim, unflattened_size, "unflatten"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [x.unflatten(dim, sizes) for x in leaves],
            batch_size=new_batch_size,
            names=self._names and _ops.unflattened_names(self._names, dim, sizes),
            leaf_fn=lambda x: x.unflatten(dim, sizes),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def expand(self, *args, **kwargs) -> Self:
        """Size-one batch dims grown and new leading batch dims added (a view).

        ``expand(2, 3, 4)``, ``expand((2, 3, 4))`` or ``expand(torch.Size(...))``: the
        trailing sizes match the batch dims (-1 keeps a size, a size-one dim may grow),
        extra leading sizes add batch dims. No memory is allocated, as for
        ``torch.Tensor.expand``.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 1, 2), batch_size=[3, 1])
            >>> td.expand(5, 3, 4).batch_size, td.expand(5, -1, 4)["a"].shape
            (torch.Size([5, 3, 4]), torch.Size([5, 3, 4, 2]))
        """
        dense = self._with_dense_stacks("expand")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.expand(*args, **kwargs))
        new_batch_size, batch_dims = _ops.expand_rule(
            self._batch_size, args, kwargs, "expand"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.expand(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.expand(new_batch_size + x.shape[batch_dims:]),
                stack_non_tensor=True,
            ),
        )

    def expand_as(self, other: TensorCollection | torch.Tensor) -> Self:
        """Expanded to the shape of a tensor or the batch size of a tensordict.

        ``td.expand_as(other)`` is ``td.expand(other.shape)``: a tensor's whole shape, or a
        tensordict's batch size, becomes the new batch size.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 2), batch_size=[3])
            >>> td.expand_as(torch.zeros(4, 3)).batch_size
            torch.Size([4, 3])
        """
        dense = self._with_dense_stacks("expand_as")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.expand_as(other))
        new_batch_size, batch_dims = _ops.expand_rule(
            self._batch_size, other.shape, None, "expand_as"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.expand(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.expand(new_batch_size + x.shape[batch_dims:]),
            ),
        )

    def broadcast_to(self, shape: tuple[int, ...]):
        """Broadcast to a new batch shape (a view).

        As :meth:`expand` with the shape given as one tuple, like ``torch.broadcast_to``.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 2), batch_size=[3])
            >>> td.broadcast_to((2, 3)).batch_size
            torch.Size([2, 3])
        """
        dense = self._with_dense_stacks("broadcast_to")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.broadcast_to(shape))
        new_batch_size, batch_dims = _ops.expand_rule(
            self._batch_size, shape, None, "broadcast_to"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.expand(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.expand(new_batch_size + x.shape[batch_dims:]),
            ),
        )

    def repeat(self, *repeats: int, inplace: bool = False) -> Self:
        """Every leaf tiled along the batch dims (a copy).

        One count per batch dim, as ``repeat(2, 1)`` or ``repeat((2, 1))``; extra leading
        counts add batch dims, as ``torch.Tensor.repeat`` does. Feature dims are not
        repeated.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0], [2.0]]), batch_size=[2])
            >>> td.repeat(2)["a"].squeeze(-1)
            tensor([1., 2., 1., 2.])
        """
        dense = self._with_dense_stacks("repeat")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.repeat(*repeats, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        repeats, new_batch_size, batch_dims = _ops.repeat_rule(
            self._batch_size, repeats, "repeat"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [x.repeat(repeats + (1,) * (x.ndim - batch_dims)) for x in leaves],
            batch_size=new_batch_size,
            names=self._names and _ops.leading_names(self._names, new_batch_size),
            leaf_fn=lambda x: x.repeat(repeats + (1,) * (x.ndim - batch_dims)),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def repeat_interleave(
        self,
        repeats: torch.Tensor | int,
        dim: int | None = None,
        *,
        output_size: int | None = None,
        inplace: bool = False,
    ) -> Self:
        """Each element of a batch dim repeated in place (a copy).

        ``repeats`` is a count or one count per element of batch dim ``dim``; with no dim,
        the batch dims are flattened first, as ``torch.repeat_interleave`` flattens a
        tensor.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> td.repeat_interleave(2, dim=0)["a"]
            tensor([1., 1., 2., 2.])
        """
        dense = self._with_dense_stacks("repeat_interleave")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.repeat_interleave(
                repeats, dim, output_size=output_size, inplace=False
            )
            return _ops.assign_inplace(self, result) if inplace else result
        dim, flat, new_batch_size, batch_dims = _ops.repeat_interleave_rule(
            self._batch_size, repeats, dim, output_size, "repeat_interleave"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [
                (x.flatten(0, batch_dims - 1) if flat else x).repeat_interleave(
                    repeats, dim, output_size=output_size
                )
                for x in leaves
            ],
            batch_size=new_batch_size,
            names=self._names and None if flat else self._names,
            leaf_fn=lambda x: (
                x.flatten(0, batch_dims - 1) if flat else x
            ).repeat_interleave(repeats, dim, output_size=output_size),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def tile(self, dims: tuple[int, ...]):
        """Every leaf tiled along the batch dims, as ``torch.tile`` (a copy).

        As :meth:`repeat`, but fewer counts than batch dims are padded with ones in front:
        ``tile((2,))`` on batch size ``[3, 4]`` repeats the last batch dim.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
            >>> td.tile((2,)).batch_size, td.tile((2, 1)).batch_size
            (torch.Size([3, 8]), torch.Size([6, 4]))
        """
        dense = self._with_dense_stacks("tile")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.tile(dims))
        repeats, new_batch_size, batch_dims = _ops.tile_rule(
            self._batch_size, dims, "tile"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.repeat(repeats + (1,) * (x.ndim - batch_dims)) for x in leaves],
                batch_size=new_batch_size,
                leaf_fn=lambda x: x.repeat(repeats + (1,) * (x.ndim - batch_dims)),
            ),
        )

    def flip(self, dims: int | tuple[int, ...]):
        """The order of elements reversed along batch dims (a copy).

        ``dims`` is a batch dim or a tuple of them.

        Example:
            >>> td = TensorDict(a=torch.tensor([1, 2, 3]), batch_size=[3])
            >>> td.flip(0)["a"]
            tensor([3, 2, 1])
        """
        dense = self._with_dense_stacks("flip")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.flip(dims))
        dims = _ops.flip_rule(self._batch_size, dims, "flip")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild([x.flip(dims) for x in leaves], leaf_fn=lambda x: x.flip(dims)),
        )

    def fliplr(self):
        """Batch dim 1 reversed (a copy).

        As ``torch.fliplr`` on the batch dims: the tensordict needs at least two batch
        dims.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1, 2], [3, 4]]), batch_size=[2, 2])
            >>> td.fliplr()["a"]
            tensor([[2, 1],
                    [4, 3]])
        """
        dense = self._with_dense_stacks("fliplr")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.fliplr())
        dims = _ops.flip_rule(self._batch_size, (1,), "fliplr")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild([x.flip(dims) for x in leaves], leaf_fn=lambda x: x.flip(dims)),
        )

    def flipud(self):
        """Batch dim 0 reversed (a copy).

        As ``torch.flipud`` on the batch dims: the tensordict needs at least one batch dim.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1, 2], [3, 4]]), batch_size=[2, 2])
            >>> td.flipud()["a"]
            tensor([[3, 4],
                    [1, 2]])
        """
        dense = self._with_dense_stacks("flipud")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.flipud())
        dims = _ops.flip_rule(self._batch_size, (0,), "flipud")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild([x.flip(dims) for x in leaves], leaf_fn=lambda x: x.flip(dims)),
        )

    def roll(
        self,
        shifts: int | tuple[int, ...],
        dims: int | tuple[int, ...] = None,
        *,
        inplace: bool = False,
    ):
        """Elements rolled along batch dims (a copy).

        One shift per dim in ``dims``; with no dims the batch is rolled as if flattened,
        as ``torch.roll`` rolls a flattened tensor.

        Example:
            >>> td = TensorDict(a=torch.tensor([1, 2, 3]), batch_size=[3])
            >>> td.roll(1, 0)["a"]
            tensor([3, 1, 2])
        """
        dense = self._with_dense_stacks("roll")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.roll(shifts, dims, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        shifts, dims, batch_dims = _ops.roll_rule(
            self._batch_size, shifts, dims, "roll"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        result = rebuild(
            [
                (
                    x.roll(shifts, dims)
                    if dims is not None
                    else x.flatten(0, batch_dims - 1).roll(shifts, 0).view(x.shape)
                )
                for x in leaves
            ],
            leaf_fn=lambda x: (
                x.roll(shifts, dims)
                if dims is not None
                else x.flatten(0, batch_dims - 1).roll(shifts, 0).view(x.shape)
            ),
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def rot90(self, k: int = 1, dims: tuple[int, int] = (0, 1)):
        """A rotation by 90 degrees in the plane of two batch dims (a copy).

        ``k`` times, from the first dim of ``dims`` towards the second, as ``torch.rot90``;
        the two sizes swap when ``k`` is odd.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1, 2], [3, 4]]), batch_size=[2, 2])
            >>> td.rot90()["a"]
            tensor([[2, 4],
                    [1, 3]])
        """
        dense = self._with_dense_stacks("rot90")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.rot90(k, dims))
        k, dims, new_batch_size = _ops.rot90_rule(self._batch_size, k, dims, "rot90")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.rot90(k, dims) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.rot90_names(self._names, k, dims),
                leaf_fn=lambda x: x.rot90(k, dims),
            ),
        )

    def atleast_1d(self):
        """At least one batch dim (a view).

        A tensordict with no batch dims gets batch size ``[1]``; others are returned as
        they are (the tensordict itself).

        Example:
            >>> td = TensorDict(a=torch.zeros(2), batch_size=[])
            >>> td.atleast_1d().batch_size, td.atleast_1d()["a"].shape
            (torch.Size([1]), torch.Size([1, 2]))
        """
        new_batch_size, batch_dims, unchanged = _ops.atleast_rule(
            self._batch_size, 1, "atleast_1d"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("atleast_1d")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.atleast_1d())
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.reshape(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.reshape(new_batch_size + x.shape[batch_dims:]),
            ),
        )

    def atleast_2d(self):
        """At least two batch dims (a view).

        Size-one batch dims are added in front, as ``torch.atleast_2d`` does for a 1-d
        tensor.

        Example:
            >>> td = TensorDict(a=torch.zeros(3), batch_size=[3])
            >>> td.atleast_2d().batch_size
            torch.Size([1, 3])
        """
        new_batch_size, batch_dims, unchanged = _ops.atleast_rule(
            self._batch_size, 2, "atleast_2d"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("atleast_2d")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.atleast_2d())
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.reshape(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.reshape(new_batch_size + x.shape[batch_dims:]),
            ),
        )

    def atleast_3d(self):
        """At least three batch dims (a view).

        Size-one batch dims are added in front (unlike ``torch.atleast_3d``, which adds
        some at the end: here the end of a leaf holds its feature dims).

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
            >>> td.atleast_3d().batch_size
            torch.Size([1, 3, 4])
        """
        new_batch_size, batch_dims, unchanged = _ops.atleast_rule(
            self._batch_size, 3, "atleast_3d"
        )
        if unchanged:  # nothing to change: the tensordict itself
            return self
        dense = self._with_dense_stacks("atleast_3d")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.atleast_3d())
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.reshape(new_batch_size + x.shape[batch_dims:]) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and _ops.leading_names(self._names, new_batch_size),
                leaf_fn=lambda x: x.reshape(new_batch_size + x.shape[batch_dims:]),
            ),
        )

    def narrow(self, dim: int, start: int, length: int):
        """A slice of ``length`` elements of one batch dim (a view).

        ``start`` may be negative (counted from the end of the dim); ``start + length``
        must not pass the end.

        Example:
            >>> td = TensorDict(a=torch.arange(5), batch_size=[5])
            >>> td.narrow(0, 1, 3)["a"]
            tensor([1, 2, 3])
        """
        dense = self._with_dense_stacks("narrow")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(self, dense.narrow(dim, start, length))
        dim, start, new_batch_size = _ops.narrow_rule(
            self._batch_size, dim, start, length, "narrow"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        return _ops.keep_lock(
            self,
            rebuild(
                [x.narrow(dim, start, length) for x in leaves],
                batch_size=new_batch_size,
                names=self._names and self._names,
                leaf_fn=lambda x: x.narrow(dim, start, length),
            ),
        )

    def contiguous(self, *, canonical: bool = False, inplace: bool = False) -> Self:
        """Every leaf laid out contiguously in memory.

        Leaves that are contiguous already are the same tensors in the result; the others
        are copied. The batch size stays. ``canonical`` is accepted for compatibility and
        has no effect on a dense tensordict.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4]).permute(1, 0)
            >>> td["a"].is_contiguous(), td.contiguous()["a"].is_contiguous()
            (False, True)
        """
        leaves, rebuild = self._leaves_and_rebuild()
        result = rebuild(
            [x.contiguous() for x in leaves], leaf_fn=lambda x: x.contiguous()
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return result

    # ---- Binary, operator and comparison ops (spec/binary.yaml) ----

    def add(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self + alpha * other``, leaf by leaf.

        ``alpha`` scales the operand before the addition (torch's default is 1).
        ``td + other``, ``other + td`` and ``td += other`` use this op.

        In place: :meth:`add_`. Operators: ``td + other``, ``other + td``, ``td += other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), b=torch.tensor([1, 2]), batch_size=[2])
            >>> td.add(1)["a"]
            tensor([2., 3.])
            >>> (td + td)["b"]
            tensor([2, 4])
            >>> td.add(torch.tensor([10.0, 20.0]), alpha=2)["a"]
            tensor([21., 42.])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "add", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS and alpha is None:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_add, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "add", default, batch_dims=True
        )
        if alpha is None:
            new = _ops.try_foreach(torch._foreach_add, leaves, other_leaves)
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [torch.add(x, other) for x, other in zip(leaves, other_leaves)]
        else:
            new = _ops.try_foreach(
                torch._foreach_add, leaves, other_leaves, alpha=alpha
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.add(x, other, alpha=alpha)
                    for x, other in zip(leaves, other_leaves)
                ]
        return _ops.keep_lock(self, rebuild(new))

    def add_(
        self,
        other: TensorCollection | torch.Tensor | float,
        *,
        alpha: float | None = None,
    ) -> Self:
        """In-place :meth:`add`, returning ``self``.

        ``self + alpha * other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "add_", batch_dims=True)
        if alpha is None:
            if not _ops.try_foreach_(torch._foreach_add_, leaves, other_leaves):
                for x, other in zip(leaves, other_leaves):
                    x.add_(other)
        else:
            if not _ops.try_foreach_(
                torch._foreach_add_, leaves, other_leaves, alpha=alpha
            ):
                for x, other in zip(leaves, other_leaves):
                    x.add_(other, alpha=alpha)
        return self

    def __add__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td + other``: same as :meth:`add`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.add(other)

    def __radd__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other + td``: same as :meth:`add`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.add(other)

    def __iadd__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td += other``: same as :meth:`add_`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.add_(other)

    def sub(
        self,
        other: TensorDictBase | torch.Tensor | float,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self - alpha * other``, leaf by leaf.

        ``td - other`` and ``td -= other`` use this op; ``other - td`` is :meth:`rsub`.
        torch rejects subtracting booleans.

        In place: :meth:`sub_`. Operators: ``td - other``, ``td -= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> td.sub(1)["a"]
            tensor([0., 1.])
            >>> (td - td)["a"]
            tensor([0., 0.])
            >>> td.sub(torch.tensor(1.0), alpha=3)["a"]
            tensor([-2., -1.])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "sub", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS and alpha is None:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_sub, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "sub", default, batch_dims=True
        )
        if alpha is None:
            new = _ops.try_foreach(torch._foreach_sub, leaves, other_leaves)
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [torch.sub(x, other) for x, other in zip(leaves, other_leaves)]
        else:
            new = _ops.try_foreach(
                torch._foreach_sub, leaves, other_leaves, alpha=alpha
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.sub(x, other, alpha=alpha)
                    for x, other in zip(leaves, other_leaves)
                ]
        return _ops.keep_lock(self, rebuild(new))

    def sub_(
        self, other: TensorDictBase | torch.Tensor | float, alpha: float | None = None
    ):
        """In-place :meth:`sub`, returning ``self``.

        ``self - alpha * other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "sub_", batch_dims=True)
        if alpha is None:
            if not _ops.try_foreach_(torch._foreach_sub_, leaves, other_leaves):
                for x, other in zip(leaves, other_leaves):
                    x.sub_(other)
        else:
            if not _ops.try_foreach_(
                torch._foreach_sub_, leaves, other_leaves, alpha=alpha
            ):
                for x, other in zip(leaves, other_leaves):
                    x.sub_(other, alpha=alpha)
        return self

    def __sub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td - other``: same as :meth:`sub`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.sub(other)

    def __isub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td -= other``: same as :meth:`sub_`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.sub_(other)

    def rsub(
        self,
        other: TensorDictBase | torch.Tensor | float,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``other - alpha * self``, leaf by leaf.

        The reflected subtraction: ``other - td`` uses this op.

        Operators: ``other - td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> td.rsub(10)["a"]
            tensor([9., 8.])
            >>> (1 - td)["a"]
            tensor([ 0., -1.])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "rsub", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "rsub", default, batch_dims=True
        )
        if alpha is None:
            new = [torch.rsub(x, other) for x, other in zip(leaves, other_leaves)]
        else:
            new = [
                torch.rsub(x, other, alpha=alpha)
                for x, other in zip(leaves, other_leaves)
            ]
        return _ops.keep_lock(self, rebuild(new))

    def __rsub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other - td``: same as :meth:`rsub`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.rsub(other)

    def mul(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self * other``, leaf by leaf.

        ``td * other``, ``other * td`` and ``td *= other`` use this op.

        In place: :meth:`mul_`. Operators: ``td * other``, ``other * td``, ``td *= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), b=torch.tensor([3, 4]), batch_size=[2])
            >>> td.mul(2)["a"]
            tensor([2., 4.])
            >>> (td * td)["b"]
            tensor([ 9, 16])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "mul", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_mul, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "mul", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_mul, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.mul(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def mul_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`mul`, returning ``self``.

        ``self * other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "mul_", batch_dims=True)
        if not _ops.try_foreach_(torch._foreach_mul_, leaves, other_leaves):
            for x, other in zip(leaves, other_leaves):
                x.mul_(other)
        return self

    def __mul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td * other``: same as :meth:`mul`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.mul(other)

    def __rmul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other * td``: same as :meth:`mul`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.mul(other)

    def __imul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td *= other``: same as :meth:`mul_`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.mul_(other)

    def div(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self / other`` (true division), leaf by leaf.

        Integer leaves divided out of place give floating results; ``div_`` on an integer
        leaf raises torch's dtype error. ``td / other`` and ``td /= other`` use this op.

        In place: :meth:`div_`. Operators: ``td / other``, ``td /= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), b=torch.tensor([3, 4]), batch_size=[2])
            >>> td.div(2)["a"]
            tensor([0.5000, 1.0000])
            >>> (td / 2)["b"]
            tensor([1.5000, 2.0000])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "div", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_div, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "div", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_div, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.div(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def div_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`div`, returning ``self``.

        ``self / other`` (true division), leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "div_", batch_dims=True)
        if not _ops.try_foreach_(torch._foreach_div_, leaves, other_leaves):
            for x, other in zip(leaves, other_leaves):
                x.div_(other)
        return self

    def __truediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td / other``: same as :meth:`div`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.div(other)

    def __itruediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td /= other``: same as :meth:`div_`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.div_(other)

    def __rtruediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other / self`` (true division), leaf by leaf.

        The reflected division, used by ``other / td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 4.0]), batch_size=[2])
            >>> (2 / td)["a"]
            tensor([2.0000, 0.5000])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__rtruediv__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__rtruediv__", batch_dims=True
        )
        new = [other / x for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def pow(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self ** other``, leaf by leaf.

        torch rejects integer leaves raised to negative integer powers.
        ``td ** other`` and ``td **= other`` use this op.

        In place: :meth:`pow_`. Operators: ``td ** other``, ``td **= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), b=torch.tensor([3, 4]), batch_size=[2])
            >>> td.pow(2)["a"]
            tensor([1., 4.])
            >>> (td ** 2)["b"]
            tensor([ 9, 16])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "pow", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_pow, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "pow", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_pow, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.pow(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def pow_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`pow`, returning ``self``.

        ``self ** other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "pow_", batch_dims=True)
        if not _ops.try_foreach_(torch._foreach_pow_, leaves, other_leaves):
            for x, other in zip(leaves, other_leaves):
                x.pow_(other)
        return self

    def __pow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td ** other``: same as :meth:`pow`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.pow(other)

    def __ipow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td **= other``: same as :meth:`pow_`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.pow_(other)

    def __rpow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other ** self``, leaf by leaf.

        The reflected power, used by ``other ** td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 3.0]), batch_size=[2])
            >>> (2 ** td)["a"]
            tensor([2., 8.])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__rpow__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__rpow__", batch_dims=True
        )
        new = [torch.pow(other, x) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def mod(self, other: TensorCollection | torch.Tensor) -> Self:
        """``self % other`` (Python's modulus: the sign of the divisor), leaf by leaf.

        Computed with :func:`torch.remainder`, like ``%`` on tensors. ``td % other`` uses
        this op.

        Operators: ``td % other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([-3.0, 5.0]), b=torch.tensor([-3, 5]), batch_size=[2])
            >>> td.mod(2)["a"]
            tensor([1., 1.])
            >>> (td % 3)["b"]
            tensor([0, 2])
        """
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "mod", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "mod", batch_dims=True)
        new = [torch.remainder(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def __mod__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td % other``: same as :meth:`mod`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.mod(other)

    def maximum(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Elementwise maximum of every leaf and the operand.

        ``nan`` in either input propagates. A number operand is compared as a zero-dim
        tensor, so it does not change the leaf's dtype category rules.

        In place: :meth:`maximum_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 5.0]), batch_size=[2])
            >>> td.maximum(2)["a"]
            tensor([2., 5.])
            >>> td.maximum(torch.tensor([3.0, 4.0]))["a"]
            tensor([3., 5.])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "maximum", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_maximum, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "maximum", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_maximum, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.maximum(x, torch.as_tensor(other))
                for x, other in zip(leaves, other_leaves)
            ]
        return _ops.keep_lock(self, rebuild(new))

    def maximum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`maximum`, returning ``self``.

        Elementwise maximum of every leaf and the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "maximum_", batch_dims=True
        )
        for x, other in zip(leaves, other_leaves):
            torch.maximum(x, torch.as_tensor(other), out=x)
        return self

    def minimum(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Elementwise minimum of every leaf and the operand.

        ``nan`` in either input propagates.

        In place: :meth:`minimum_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 5.0]), batch_size=[2])
            >>> td.minimum(2)["a"]
            tensor([1., 2.])
            >>> td.minimum_(0) is td
            True
            >>> td["a"]
            tensor([0., 0.])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "minimum", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_minimum, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "minimum", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_minimum, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.minimum(x, torch.as_tensor(other))
                for x, other in zip(leaves, other_leaves)
            ]
        return _ops.keep_lock(self, rebuild(new))

    def minimum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`minimum`, returning ``self``.

        Elementwise minimum of every leaf and the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "minimum_", batch_dims=True
        )
        for x, other in zip(leaves, other_leaves):
            torch.minimum(x, torch.as_tensor(other), out=x)
        return self

    def clamp_min(
        self,
        other: TensorDictBase | torch.Tensor,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Clamp every leaf from below at the operand.

        Elements smaller than the operand are replaced by it.

        In place: :meth:`clamp_min_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.0, 0.5, 2.0]), batch_size=[3])
            >>> td.clamp_min(0)["a"]
            tensor([0.0000, 0.5000, 2.0000])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "clamp_min", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_clamp_min, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "clamp_min", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_clamp_min, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.clamp_min(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def clamp_min_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`clamp_min`, returning ``self``.

        Clamp every leaf from below at the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "clamp_min_", batch_dims=True
        )
        if not _ops.try_foreach_(torch._foreach_clamp_min_, leaves, other_leaves):
            for x, other in zip(leaves, other_leaves):
                x.clamp_min_(other)
        return self

    def clamp_max(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Clamp every leaf from above at the operand.

        Elements larger than the operand are replaced by it.

        In place: :meth:`clamp_max_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.0, 0.5, 2.0]), batch_size=[3])
            >>> td.clamp_max(1)["a"]
            tensor([-1.0000,  0.5000,  1.0000])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "clamp_max", other)
        leaves, rebuild = self._leaves_and_rebuild()
        if type(other) in _ops.PLAIN_NUMBERS:
            # the common case, one number for every leaf: torch's scalar overload, given
            # the number itself (the general path below gives the same call)
            new = _ops.try_foreach(torch._foreach_clamp_max, leaves, other)
            if new is not None:
                return _ops.keep_lock(self, rebuild(new))
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "clamp_max", default, batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_clamp_max, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.clamp_max(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def clamp_max_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`clamp_max`, returning ``self``.

        Clamp every leaf from above at the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "clamp_max_", batch_dims=True
        )
        if not _ops.try_foreach_(torch._foreach_clamp_max_, leaves, other_leaves):
            for x, other in zip(leaves, other_leaves):
                x.clamp_max_(other)
        return self

    def clamp(
        self,
        min: TensorDictBase | torch.Tensor | float | None = None,
        max: TensorDictBase | torch.Tensor | float | None = None,
        *,
        out=None,
    ) -> Self:
        """Clamp every leaf into ``[min, max]``.

        Either bound may be ``None`` (no bound on that side), but not both. With ``out=``
        (a tensor collection with the same keys) the results are written into ``out``,
        which is returned.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.0, 0.5, 2.0]), batch_size=[3])
            >>> td.clamp(0, 1)["a"]
            tensor([0.0000, 0.5000, 1.0000])
            >>> td.clamp(max=0)["a"]
            tensor([-1.,  0.,  0.])
        """
        if type(min) not in _ops.PLAIN_NUMBERS or type(max) not in _ops.PLAIN_NUMBERS:
            self, min, max = _ops.batch_broadcast(self, "clamp", min, max)
        leaves, rebuild = self._leaves_and_rebuild()
        min_leaves = _ops.operand_leaves(self, leaves, min, "clamp", batch_dims=True)
        max_leaves = _ops.operand_leaves(self, leaves, max, "clamp", batch_dims=True)
        new = [
            torch.clamp(x, min, max)
            for x, min, max in zip(leaves, min_leaves, max_leaves)
        ]
        if out is not None:
            return _ops.write_into(self, out, new, "clamp")
        return rebuild(new)

    def lerp(
        self,
        end: TensorCollection | torch.Tensor,
        weight: TensorCollection | torch.Tensor | float,
    ) -> Self:
        """Linear interpolation ``self + weight * (end - self)``, leaf by leaf.

        ``end`` is a tensor collection or a tensor; ``weight`` may also be a number.
        torch accepts floating leaves only.

        In place: :meth:`lerp_`.

        Example:
            >>> start = TensorDict(a=torch.tensor([0.0, 10.0]), batch_size=[2])
            >>> end = TensorDict(a=torch.tensor([10.0, 20.0]), batch_size=[2])
            >>> start.lerp(end, 0.25)["a"]
            tensor([ 2.5000, 12.5000])
        """
        if (
            type(end) not in _ops.PLAIN_NUMBERS
            or type(weight) not in _ops.PLAIN_NUMBERS
        ):
            self, end, weight = _ops.batch_broadcast(self, "lerp", end, weight)
        leaves, rebuild = self._leaves_and_rebuild()
        end_leaves = _ops.operand_leaves(self, leaves, end, "lerp", batch_dims=True)
        weight_leaves = _ops.operand_leaves(
            self, leaves, weight, "lerp", batch_dims=True
        )
        new = _ops.try_foreach(torch._foreach_lerp, leaves, end_leaves, weight_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.lerp(x, end, weight)
                for x, end, weight in zip(leaves, end_leaves, weight_leaves)
            ]
        return _ops.keep_lock(self, rebuild(new))

    def lerp_(
        self,
        end: TensorDictBase | torch.Tensor,
        weight: TensorDictBase | torch.Tensor | float,
    ):
        """In-place :meth:`lerp`, returning ``self``.

        Linear interpolation ``self + weight * (end - self)``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        end_leaves = _ops.operand_leaves(self, leaves, end, "lerp_", batch_dims=True)
        weight_leaves = _ops.operand_leaves(
            self, leaves, weight, "lerp_", batch_dims=True
        )
        if not _ops.try_foreach_(
            torch._foreach_lerp_, leaves, end_leaves, weight_leaves
        ):
            for x, end, weight in zip(leaves, end_leaves, weight_leaves):
                x.lerp_(end, weight)
        return self

    def addcmul(
        self,
        other1: TensorDictBase | torch.Tensor,
        other2: TensorDictBase | torch.Tensor,
        *,
        value: float | None = 1,
    ) -> Self:
        """``self + value * other1 * other2``, leaf by leaf.

        Both factors are tensor collections or tensors.

        In place: :meth:`addcmul_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 1.0]), batch_size=[2])
            >>> t1 = TensorDict(a=torch.tensor([2.0, 3.0]), batch_size=[2])
            >>> td.addcmul(t1, t1, value=0.5)["a"]
            tensor([3.0000, 5.5000])
        """
        if (
            type(other1) not in _ops.PLAIN_NUMBERS
            or type(other2) not in _ops.PLAIN_NUMBERS
        ):
            self, other1, other2 = _ops.batch_broadcast(self, "addcmul", other1, other2)
        leaves, rebuild = self._leaves_and_rebuild()
        other1_leaves = _ops.operand_leaves(
            self, leaves, other1, "addcmul", batch_dims=True
        )
        other2_leaves = _ops.operand_leaves(
            self, leaves, other2, "addcmul", batch_dims=True
        )
        if value is None:
            new = _ops.try_foreach(
                torch._foreach_addcmul, leaves, other1_leaves, other2_leaves
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.addcmul(x, other1, other2)
                    for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves)
                ]
        else:
            new = _ops.try_foreach(
                torch._foreach_addcmul,
                leaves,
                other1_leaves,
                other2_leaves,
                value=value,
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.addcmul(x, other1, other2, value=value)
                    for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves)
                ]
        return _ops.keep_lock(self, rebuild(new))

    def addcmul_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcmul`, returning ``self``.

        ``self + value * other1 * other2``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other1_leaves = _ops.operand_leaves(
            self, leaves, other1, "addcmul_", batch_dims=True
        )
        other2_leaves = _ops.operand_leaves(
            self, leaves, other2, "addcmul_", batch_dims=True
        )
        if value is None:
            if not _ops.try_foreach_(
                torch._foreach_addcmul_, leaves, other1_leaves, other2_leaves
            ):
                for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves):
                    x.addcmul_(other1, other2)
        else:
            if not _ops.try_foreach_(
                torch._foreach_addcmul_,
                leaves,
                other1_leaves,
                other2_leaves,
                value=value,
            ):
                for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves):
                    x.addcmul_(other1, other2, value=value)
        return self

    def addcdiv(
        self,
        other1: TensorDictBase | torch.Tensor,
        other2: TensorDictBase | torch.Tensor,
        value: float | None = 1,
    ) -> Self:
        """``self + value * other1 / other2``, leaf by leaf.

        Both operands are tensor collections or tensors; torch accepts floating leaves
        only.

        In place: :meth:`addcdiv_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 1.0]), batch_size=[2])
            >>> num = TensorDict(a=torch.tensor([2.0, 3.0]), batch_size=[2])
            >>> den = TensorDict(a=torch.tensor([4.0, 2.0]), batch_size=[2])
            >>> td.addcdiv(num, den, 2)["a"]
            tensor([2., 4.])
        """
        if (
            type(other1) not in _ops.PLAIN_NUMBERS
            or type(other2) not in _ops.PLAIN_NUMBERS
        ):
            self, other1, other2 = _ops.batch_broadcast(self, "addcdiv", other1, other2)
        leaves, rebuild = self._leaves_and_rebuild()
        other1_leaves = _ops.operand_leaves(
            self, leaves, other1, "addcdiv", batch_dims=True
        )
        other2_leaves = _ops.operand_leaves(
            self, leaves, other2, "addcdiv", batch_dims=True
        )
        if value is None:
            new = _ops.try_foreach(
                torch._foreach_addcdiv, leaves, other1_leaves, other2_leaves
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.addcdiv(x, other1, other2)
                    for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves)
                ]
        else:
            new = _ops.try_foreach(
                torch._foreach_addcdiv,
                leaves,
                other1_leaves,
                other2_leaves,
                value=value,
            )
            if new is None:  # foreach rejected the leaves: go leaf by leaf
                new = [
                    torch.addcdiv(x, other1, other2, value=value)
                    for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves)
                ]
        return _ops.keep_lock(self, rebuild(new))

    def addcdiv_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcdiv`, returning ``self``.

        ``self + value * other1 / other2``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other1_leaves = _ops.operand_leaves(
            self, leaves, other1, "addcdiv_", batch_dims=True
        )
        other2_leaves = _ops.operand_leaves(
            self, leaves, other2, "addcdiv_", batch_dims=True
        )
        if value is None:
            if not _ops.try_foreach_(
                torch._foreach_addcdiv_, leaves, other1_leaves, other2_leaves
            ):
                for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves):
                    x.addcdiv_(other1, other2)
        else:
            if not _ops.try_foreach_(
                torch._foreach_addcdiv_,
                leaves,
                other1_leaves,
                other2_leaves,
                value=value,
            ):
                for x, other1, other2 in zip(leaves, other1_leaves, other2_leaves):
                    x.addcdiv_(other1, other2, value=value)
        return self

    def bitwise_and(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Bitwise AND of every leaf and the operand.

        For integer and boolean leaves; torch rejects floating leaves. ``td & other`` and
        ``other & td`` use this op.

        Operators: ``td & other``, ``other & td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([True, False]), b=torch.tensor([6, 3]), batch_size=[2])
            >>> td.bitwise_and(True)["a"]
            tensor([ True, False])
            >>> (td & 5)["b"]
            tensor([4, 1])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "bitwise_and", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "bitwise_and", default, batch_dims=True
        )
        new = [torch.bitwise_and(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def __and__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td & other``: same as :meth:`bitwise_and`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.bitwise_and(other)

    def __rand__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other & td``: same as :meth:`bitwise_and`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.bitwise_and(other)

    def logical_and(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Logical AND of every leaf and the operand, as booleans.

        Non-zero elements count as ``True``; the result leaves are boolean. The operand is
        a tensor collection or a tensor (torch does not take a number here).

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 2.0, 3.0]), batch_size=[3])
            >>> td.logical_and(torch.tensor([1, 1, 0]))["a"]
            tensor([False,  True, False])
        """
        if default is not None:  # keys one side lacks: filled with default (or dropped)
            self, other, default = _ops.fill_defaults(self, other, default)
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "logical_and", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "logical_and", default, batch_dims=True
        )
        new = [torch.logical_and(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.keep_lock(self, rebuild(new))

    def __or__(self, other: Any) -> Self | bool:
        """Bitwise OR of every leaf and the operand (``td | other``).

        For integer and boolean leaves; torch rejects floating leaves.

        Operators: ``other | td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([True, False]), b=torch.tensor([4, 1]), batch_size=[2])
            >>> (td | False)["a"]
            tensor([ True, False])
            >>> (td | 2)["b"]
            tensor([6, 3])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__or__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__or__", batch_dims=True
        )
        new = [torch.bitwise_or(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.compare_non_tensor(self, other, rebuild(new), "__or__")

    def __ror__(self, other: TensorCollection | torch.Tensor) -> Self:
        """``other | td``: same as :meth:`__or__`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.__or__(other)

    def __xor__(self, other: Any) -> Self | bool:
        """Bitwise exclusive OR of every leaf and the operand (``td ^ other``).

        For integer and boolean leaves; torch rejects floating leaves.

        Operators: ``other ^ td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([True, False]), b=torch.tensor([6, 3]), batch_size=[2])
            >>> (td ^ True)["a"]
            tensor([False,  True])
            >>> (td ^ 5)["b"]
            tensor([3, 6])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__xor__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__xor__", batch_dims=True
        )
        new = [torch.bitwise_xor(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.compare_non_tensor(self, other, rebuild(new), "__xor__")

    def __rxor__(self, other: TensorCollection | torch.Tensor | float):
        """``other ^ td``: same as :meth:`__xor__`."""
        if not _ops.is_operand(other):
            return NotImplemented
        return self.__xor__(other)

    def __eq__(self, other: Any) -> Self | bool:
        """Elementwise ``==``: a tensordict of booleans.

        ``td == other`` for a tensor collection, tensor or number operand. Anything else
        (``None``, a string, ...) compares unequal: ``td == None`` is ``False``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> (td == 2)["a"]
            tensor([False,  True])
            >>> (td == td)["a"].all()
            tensor(True)
            >>> td == None
            False
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__eq__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__eq__", batch_dims=True
        )
        new = [torch.eq(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.compare_non_tensor(self, other, rebuild(new), "__eq__")

    def __ne__(self, other: Any) -> Self | bool:
        """Elementwise ``!=``: a tensordict of booleans.

        ``td != other``; operands that are not a tensor collection, tensor or number
        compare unequal (``td != None`` is ``True``).

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> (td != 2)["a"]
            tensor([ True, False])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__ne__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__ne__", batch_dims=True
        )
        new = [torch.ne(x, other) for x, other in zip(leaves, other_leaves)]
        return _ops.compare_non_tensor(self, other, rebuild(new), "__ne__")

    def __lt__(self, other: Any) -> Self | bool:
        """Elementwise ``<``: a tensordict of booleans.

        ``td < other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> (td < 2)["a"]
            tensor([ True, False])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__lt__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__lt__", batch_dims=True
        )
        new = [torch.lt(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def __le__(self, other: Any) -> Self | bool:
        """Elementwise ``<=``: a tensordict of booleans.

        ``td <= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0, 3.0]), batch_size=[3])
            >>> (td <= 2)["a"]
            tensor([ True,  True, False])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__le__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__le__", batch_dims=True
        )
        new = [torch.le(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def __gt__(self, other: Any) -> Self | bool:
        """Elementwise ``>``: a tensordict of booleans.

        ``td > other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), batch_size=[2])
            >>> (td > 1)["a"]
            tensor([False,  True])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__gt__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__gt__", batch_dims=True
        )
        new = [torch.gt(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def __ge__(self, other: Any) -> Self | bool:
        """Elementwise ``>=``: a tensordict of booleans.

        ``td >= other``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0, 3.0]), batch_size=[3])
            >>> (td >= 2)["a"]
            tensor([False,  True,  True])
        """
        if not _ops.is_operand(other):
            return NotImplemented
        if type(other) not in _ops.PLAIN_NUMBERS:
            self, other = _ops.batch_broadcast(self, "__ge__", other)
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(
            self, leaves, other, "__ge__", batch_dims=True
        )
        new = [torch.ge(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    # ---- Dtype casts (spec/cast.yaml) ----

    def float(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float32``.

        Same as :meth:`float32`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.float()["a"].dtype
            torch.float32
            >>> td.float()["a"]
            tensor([ 1.5000, -2.0000])
            >>> td.float(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.float()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.float() if cast_filter(x) else x)
        )

    def double(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float64``.

        Same as :meth:`float64`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.double()["a"].dtype
            torch.float64
            >>> td.double()["a"]
            tensor([ 1.5000, -2.0000], dtype=torch.float64)
            >>> td.double(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.double()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.double() if cast_filter(x) else x)
        )

    def half(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float16``.

        Same as :meth:`float16`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.half()["a"].dtype
            torch.float16
            >>> td.half()["a"]
            tensor([ 1.5000, -2.0000], dtype=torch.float16)
            >>> td.half(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.half()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.half() if cast_filter(x) else x)
        )

    def bfloat16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.bfloat16``.

        Brain floating point: the exponent range of float32 with a shorter mantissa.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.bfloat16()["a"].dtype
            torch.bfloat16
            >>> td.bfloat16()["a"]
            tensor([ 1.5000, -2.0000], dtype=torch.bfloat16)
            >>> td.bfloat16(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.bfloat16()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.bfloat16() if cast_filter(x) else x)
        )

    def int(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int32``.

        Same as :meth:`int32`, like ``Tensor.int()``. Floating values are truncated towards zero.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.int()["a"].dtype
            torch.int32
            >>> td.int()["a"]
            tensor([ 1, -2], dtype=torch.int32)
            >>> td.int(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.int()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.int() if cast_filter(x) else x)
        )

    def bool(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.bool``.

        Zero becomes ``False``, anything else ``True``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.bool()["a"].dtype
            torch.bool
            >>> td.bool()["a"]
            tensor([True, True])
            >>> td.bool(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.bool()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.bool() if cast_filter(x) else x)
        )

    def float16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float16``.

        Half precision; values beyond its range become ``inf``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.float16()["a"].dtype
            torch.float16
            >>> td.float16()["a"]
            tensor([ 1.5000, -2.0000], dtype=torch.float16)
            >>> td.float16(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.half()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.half() if cast_filter(x) else x)
        )

    def float32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float32``.

        Single precision.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.float32()["a"].dtype
            torch.float32
            >>> td.float32()["a"]
            tensor([ 1.5000, -2.0000])
            >>> td.float32(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.float()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.float() if cast_filter(x) else x)
        )

    def float64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float64``.

        Double precision.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.float64()["a"].dtype
            torch.float64
            >>> td.float64()["a"]
            tensor([ 1.5000, -2.0000], dtype=torch.float64)
            >>> td.float64(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.double()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.double() if cast_filter(x) else x)
        )

    def int8(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int8``.

        Floating values are truncated towards zero; out-of-range values wrap as in torch.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.int8()["a"].dtype
            torch.int8
            >>> td.int8()["a"]
            tensor([ 1, -2], dtype=torch.int8)
            >>> td.int8(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.char()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.char() if cast_filter(x) else x)
        )

    def int16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int16``.

        Floating values are truncated towards zero.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.int16()["a"].dtype
            torch.int16
            >>> td.int16()["a"]
            tensor([ 1, -2], dtype=torch.int16)
            >>> td.int16(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.short()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.short() if cast_filter(x) else x)
        )

    def int32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int32``.

        Floating values are truncated towards zero.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.int32()["a"].dtype
            torch.int32
            >>> td.int32()["a"]
            tensor([ 1, -2], dtype=torch.int32)
            >>> td.int32(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.int()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.int() if cast_filter(x) else x)
        )

    def int64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int64``.

        Floating values are truncated towards zero.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.int64()["a"].dtype
            torch.int64
            >>> td.int64()["a"]
            tensor([ 1, -2])
            >>> td.int64(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.long()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.long() if cast_filter(x) else x)
        )

    def uint8(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint8``.

        Floating values are truncated towards zero; negative values wrap as in torch.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, 2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.uint8()["a"].dtype
            torch.uint8
            >>> td.uint8()["a"]
            tensor([1, 2], dtype=torch.uint8)
            >>> td.uint8(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.byte()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.byte() if cast_filter(x) else x)
        )

    def uint16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint16``.

        torch supports few operations on this dtype beyond casting and copying.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, 2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.uint16()["a"].dtype
            torch.uint16
            >>> td.uint16(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(
                self,
                self._map_leaves(
                    lambda x: x if x.dtype is torch.uint16 else x.to(torch.uint16)
                ),
            )
        return _ops.keep_lock(
            self,
            self._map_leaves(
                lambda x: (
                    x
                    if x.dtype is torch.uint16
                    else x.to(torch.uint16) if cast_filter(x) else x
                )
            ),
        )

    def uint32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint32``.

        torch supports few operations on this dtype beyond casting and copying.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, 2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.uint32()["a"].dtype
            torch.uint32
            >>> td.uint32(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(
                self,
                self._map_leaves(
                    lambda x: x if x.dtype is torch.uint32 else x.to(torch.uint32)
                ),
            )
        return _ops.keep_lock(
            self,
            self._map_leaves(
                lambda x: (
                    x
                    if x.dtype is torch.uint32
                    else x.to(torch.uint32) if cast_filter(x) else x
                )
            ),
        )

    def uint64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint64``.

        torch supports few operations on this dtype beyond casting and copying.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, 2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.uint64()["a"].dtype
            torch.uint64
            >>> td.uint64(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(
                self,
                self._map_leaves(
                    lambda x: x if x.dtype is torch.uint64 else x.to(torch.uint64)
                ),
            )
        return _ops.keep_lock(
            self,
            self._map_leaves(
                lambda x: (
                    x
                    if x.dtype is torch.uint64
                    else x.to(torch.uint64) if cast_filter(x) else x
                )
            ),
        )

    def complex32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex32``.

        Complex numbers made of two float16 halves; torch marks this dtype as experimental and warns when it is created.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.complex32()["a"].dtype
            torch.complex32
            >>> td.complex32(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(
                self,
                self._map_leaves(
                    lambda x: x if x.dtype is torch.complex32 else x.to(torch.complex32)
                ),
            )
        return _ops.keep_lock(
            self,
            self._map_leaves(
                lambda x: (
                    x
                    if x.dtype is torch.complex32
                    else x.to(torch.complex32) if cast_filter(x) else x
                )
            ),
        )

    def complex64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex64``.

        Complex numbers made of two float32 halves; real leaves get a zero imaginary part.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.complex64()["a"].dtype
            torch.complex64
            >>> td.complex64(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.cfloat()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.cfloat() if cast_filter(x) else x)
        )

    def complex128(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex128``.

        Complex numbers made of two float64 halves; real leaves get a zero imaginary part.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.complex128()["a"].dtype
            torch.complex128
            >>> td.complex128(cast_filter=lambda t: t.is_floating_point())["b"].dtype
            torch.int64
        """
        if cast_filter is None:
            return _ops.keep_lock(self, self._map_leaves(lambda x: x.cdouble()))
        return _ops.keep_lock(
            self, self._map_leaves(lambda x: x.cdouble() if cast_filter(x) else x)
        )

    def type(
        self, dst_type: torch.dtype, *, cast_filter: Callable | None = None
    ) -> Self:
        """Cast every leaf to the dtype ``dst_type``.

        The dtype is given as an argument; ``td.type(torch.float16)`` is ``td.half()``.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.5, -2.0]), b=torch.tensor([1, 0]), batch_size=[2])
            >>> td.type(torch.float64)["b"]
            tensor([1., 0.], dtype=torch.float64)
            >>> td.type(torch.int64, cast_filter=lambda t: t.dtype == torch.float32)["a"]
            tensor([ 1, -2])
        """
        if cast_filter is None:
            return self._map_leaves(lambda x: x.type(dst_type))
        return self._map_leaves(lambda x: x.type(dst_type) if cast_filter(x) else x)

    # ---- Devices, memory and copies (spec/device.yaml) ----

    def to(self, *args, **kwargs) -> Self:
        """Move every leaf to a device, cast it to a dtype, or both.

        The forms of ``Tensor.to``: ``td.to(device)`` (``"cuda:0"``, ``torch.device``, an
        index), ``td.to(dtype)`` (every leaf, integer ones included, as ``Tensor.to``
        casts), ``td.to(device, dtype)``, ``td.to(tensor)`` (its device and dtype),
        ``td.to(other_tensordict)`` (its device), and the keywords ``device``, ``dtype``
        and ``non_blocking``; ``other=`` is the tensor or tensordict form. The result's
        ``device`` is the new device. When nothing would change the tensordict itself is
        returned; with ``inplace=True`` the tensordict itself takes the moved or cast
        leaves and is returned.

        Example:
            >>> td = TensorDict(a=torch.ones(2), b=torch.tensor([1, 2]), batch_size=[2])
            >>> as_double = td.to(torch.float64)
            >>> as_double["a"].dtype, as_double["b"].dtype
            (torch.float64, torch.float64)
            >>> td.to("cpu").device
            device(type='cpu')
            >>> on_cpu = td.to("cpu")
            >>> on_cpu.to("cpu") is on_cpu
            True
        """
        device, dtype, non_blocking, new_device, unchanged, inplace, new_batch_size = (
            _ops.to_device_rule(self._device, args, kwargs, "to")
        )
        if inplace:  # a kind whose entries are another's refuses
            self._check_inplace_move("to")
        if new_batch_size is not None:  # the result takes another batch size
            return _ops.to_with_batch_size(
                self, new_batch_size, device, dtype, non_blocking
            )
        if unchanged:  # nothing to move or cast
            return self
        shortcut = self._moved_whole(device, dtype, non_blocking)
        if shortcut is not None:  # done without the leaf-by-leaf way
            return _ops.assign_inplace(self, shortcut) if inplace else shortcut
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.to(device, dtype, non_blocking=non_blocking) for x in leaves]
        result = rebuild(new, device=new_device)
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.moved_back(self, _ops.keep_lock(self, result))

    def cpu(self, **kwargs) -> Self:
        """Move every leaf to the CPU.

        Same as ``td.to("cpu", **kwargs)``; the result's device is ``cpu``.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.cpu().device
            device(type='cpu')
        """
        device, dtype, non_blocking, new_device, unchanged, inplace, new_batch_size = (
            _ops.to_device_rule(self._device, ("cpu",), kwargs, "cpu")
        )
        if inplace:  # a kind whose entries are another's refuses
            self._check_inplace_move("cpu")
        if new_batch_size is not None:  # the result takes another batch size
            return _ops.to_with_batch_size(
                self, new_batch_size, device, dtype, non_blocking
            )
        if unchanged:  # nothing to move or cast
            return self
        shortcut = self._moved_whole(device, dtype, non_blocking)
        if shortcut is not None:  # done without the leaf-by-leaf way
            return _ops.assign_inplace(self, shortcut) if inplace else shortcut
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.to(device, dtype, non_blocking=non_blocking) for x in leaves]
        result = rebuild(new, device=new_device)
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def cuda(self, device: int | str | torch.device | None = None, **kwargs) -> Self:
        """Move every leaf to a CUDA device (the current one by default).

        ``device`` is an index, a string or a ``torch.device``; the result's device is
        that CUDA device. Without a GPU torch raises its error for the first leaf.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.cuda().device  # doctest: +SKIP
            device(type='cuda', index=0)
        """
        device, dtype, non_blocking, new_device, unchanged, inplace, new_batch_size = (
            _ops.cuda_device_rule(self._device, device, kwargs, "cuda")
        )
        if inplace:  # a kind whose entries are another's refuses
            self._check_inplace_move("cuda")
        if new_batch_size is not None:  # the result takes another batch size
            return _ops.to_with_batch_size(
                self, new_batch_size, device, dtype, non_blocking
            )
        if unchanged:  # nothing to move or cast
            return self
        shortcut = self._moved_whole(device, dtype, non_blocking)
        if shortcut is not None:  # done without the leaf-by-leaf way
            return _ops.assign_inplace(self, shortcut) if inplace else shortcut
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.to(device, dtype, non_blocking=non_blocking) for x in leaves]
        result = rebuild(new, device=new_device)
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def pin_memory(self, num_threads: int | None = None, inplace: bool = False) -> Self:
        """Copy every leaf into pinned (page-locked) memory.

        Pinned CPU memory makes later copies to a GPU faster (and ``non_blocking``). With
        ``inplace=True`` the tensordict itself holds the pinned leaves. The leaves are
        pinned one after the other (``num_threads`` is accepted for compatibility). Needs
        a GPU.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.pin_memory()["a"].is_pinned()  # doctest: +SKIP
            True
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.pin_memory() for x in leaves]
        result = rebuild(new)
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return _ops.keep_lock(self, result)

    def pin_memory_(self, num_threads: int = 0) -> Self:
        """Pin every leaf's memory, in place.

        The tensordict itself holds the pinned copies afterwards. Needs a GPU.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.pin_memory_() is td  # doctest: +SKIP
            True
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.pin_memory() for x in leaves]
        return _ops.assign_inplace(self, rebuild(new))

    def share_memory_(self) -> Self:
        """Move every leaf's storage to shared memory, and lock the tensordict.

        Other processes can then see the leaves (``torch.multiprocessing``); the
        tensordict is locked (no keys added or removed) so that they keep seeing the same
        ones. Returns the tensordict itself.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.share_memory_() is td, td["a"].is_shared(), td.is_locked
            (True, True, True)
        """
        leaves = self._leaves()
        for x in leaves:
            _ops.share_memory_leaf(x)
        return self._lock_shared_()

    def detach(self) -> Self:
        """The leaves detached from the autograd graph.

        The new leaves share their storage with the old ones but do not require
        gradients.

        In place: :meth:`detach_`.

        Example:
            >>> td = TensorDict(a=torch.ones(2, requires_grad=True), batch_size=[2])
            >>> td.detach()["a"].requires_grad
            False
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.detach() for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def detach_(self) -> Self:
        """In-place :meth:`detach`, returning ``self``.

        The leaves detached from the autograd graph. Writes into the stored tensors.
        """
        leaves = self._leaves()
        for x in leaves:
            x.detach_()
        return self

    def requires_grad_(self, requires_grad=True) -> Self:
        """Make autograd record operations on every leaf (or stop it).

        Only floating and complex leaves can require gradients; torch raises its error
        for another one.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.requires_grad_()["a"].requires_grad
            True
        """
        leaves = self._leaves()
        for x in leaves:
            x.requires_grad_(requires_grad)
        return self

    def zero_(self) -> Self:
        """Fill every leaf with zeros, in place.

        One ``torch._foreach_zero_`` call for all the leaves.

        Example:
            >>> td = TensorDict(a=torch.ones(2), b=torch.tensor([3, 4]), batch_size=[2])
            >>> td.zero_()["b"]
            tensor([0, 0])
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_zero_, leaves):
            for x in leaves:
                x.zero_()
        return self

    def fill_(self, key: NestedKey, value: float | bool) -> Self:
        """Fill the entry at ``key`` with ``value``, in place.

        ``key`` names a tensor, or a nested tensordict whose leaves are all filled. A
        missing key raises ``KeyError`` naming it.

        Example:
            >>> td = TensorDict(a=torch.zeros(2), sub={"b": torch.zeros(2, 3)}, batch_size=[2])
            >>> td.fill_("a", 1.5)["a"]
            tensor([1.5000, 1.5000])
            >>> td.fill_("sub", 2)["sub", "b"].sum()
            tensor(12.)
        """
        leaves = _ops.leaves_at(self, key, "fill_")
        for x in leaves:
            x.fill_(value)
        return self

    def zero_grad(self, set_to_none: bool = True) -> Self:
        """Reset the gradients of every leaf.

        With ``set_to_none`` (the default) each leaf's ``grad`` becomes ``None``,
        otherwise it is zeroed in place, as ``torch.optim.Optimizer.zero_grad`` does.

        Example:
            >>> td = TensorDict(a=torch.ones(2, requires_grad=True), batch_size=[2])
            >>> (td["a"] * 2).sum().backward()
            >>> td.zero_grad(set_to_none=False)["a"].grad
            tensor([0., 0.])
            >>> td.zero_grad()["a"].grad is None
            True
        """
        leaves = self._leaves()
        for x in leaves:
            _ops.zero_grad_leaf(x, set_to_none)
        return self

    def clone(self, recurse: bool = True, **kwargs) -> Self:
        """A copy of the tensordict and of its leaves.

        With ``recurse=False`` only the structure is copied and the leaves are shared
        (as :meth:`copy`). Keyword arguments go to ``Tensor.clone``
        (``memory_format``).

        Example:
            >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
            >>> copy = td.clone()
            >>> copy["a"] += 1
            >>> td["a"]
            tensor([0., 0.])
            >>> td.clone(recurse=False)["a"] is td["a"]
            True
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.clone(**kwargs) if recurse else x for x in leaves]
        return rebuild(new)

    def as_tensor(self) -> Self:
        """Every leaf as a plain ``torch.Tensor``.

        Leaves of a tensor subclass (memory-mapped tensors, ...) are viewed as plain
        tensors over the same storage; plain tensors are kept as they are.

        Example:
            >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
            >>> td.as_tensor()["a"] is td["a"]
            True
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = [_ops.plain_tensor(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def numpy(self) -> np.ndarray | dict[str, Any]:
        """The leaves as numpy arrays, in a nested dict.

        Nested tensordicts become nested dicts; non-tensor entries are kept as they are.
        The arrays share memory with the leaves (``Tensor.numpy``).

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0]), sub={"b": torch.tensor([3, 4])}, batch_size=[2])
            >>> td.numpy()
            {'a': array([1., 2.], dtype=float32), 'sub': {'b': array([3, 4])}}
        """
        dense = self._with_dense_stacks("numpy")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.numpy()
        leaves, rebuild = self._leaves_and_rebuild()
        new = [x.numpy() for x in leaves]
        return _ops.nested_dict_result(self, new)

    def tolist(
        self,
        *,
        convert_nodes: bool = True,
        convert_tensors: bool | Literal["numpy"] = False,
        tolist_first: bool = False,
        as_linked_list: bool = False,
    ) -> List[Any]:
        """The tensordict as nested lists along its batch dims.

        One item per batch element, nested as the batch dims are: each item is a dict of
        the leaves there (nested tensordicts as nested dicts), or the tensordict itself
        with ``convert_nodes=False``. The values are tensors, Python lists and numbers
        with ``convert_tensors=True``, or numpy arrays with ``convert_tensors="numpy"``.
        With ``tolist_first=True``, a nested tensordict whose batch size is longer than
        its parent's becomes nested lists along its extra dims too. ``as_linked_list`` is
        accepted for compatibility; the result is plain lists.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1, 2], [3, 4]]), batch_size=[2])
            >>> td.tolist(convert_tensors=True)
            [{'a': [1, 2]}, {'a': [3, 4]}]
            >>> td.tolist()[1]["a"]
            tensor([3, 4])
        """
        dense = self._with_dense_stacks("tolist")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.tolist(
                convert_nodes=convert_nodes,
                convert_tensors=convert_tensors,
                tolist_first=tolist_first,
                as_linked_list=as_linked_list,
            )
        leaves, rebuild = self._leaves_and_rebuild()
        new = [_ops.tolist_leaf(x, convert_tensors) for x in leaves]
        return _ops.nested_lists_result(
            self, new, convert_nodes, tolist_first, as_linked_list
        )

    def record_stream(self, stream: torch.cuda.Stream) -> Self:
        """Mark every leaf as used by a CUDA stream.

        As ``Tensor.record_stream``: the caching allocator does not reuse a leaf's memory
        before the work queued on ``stream`` is done. Needs a GPU.

        Example:
            >>> td = TensorDict(a=torch.ones(2), batch_size=[2])
            >>> td.cuda().record_stream(torch.cuda.current_stream())  # doctest: +SKIP
        """
        leaves = self._leaves()
        for x in leaves:
            x.record_stream(stream)
        return self

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

        Every leaf keeps its feature dims, dtype and device (unless ``dtype`` or
        ``device`` is given); nested tensordicts keep their extra batch dims.
        ``empty_lazy`` only matters for lazy stacks.

        Example:
            >>> td = TensorDict(a=torch.ones(3, 4), b=torch.tensor([1, 2, 3]), batch_size=[3])
            >>> zeros = td.new_zeros(2, 5)
            >>> zeros.batch_size, zeros["a"].shape, zeros["b"].dtype
            (torch.Size([2, 5]), torch.Size([2, 5, 4]), torch.int64)
        """
        dense = self._with_dense_stacks("new_zeros")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.new_zeros(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
        new_batch_size, batch_dims = _ops.new_rule(self._batch_size, size, "new_zeros")
        device, new_device = _ops.new_device_rule(self._device, device, "new_zeros")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [
            x.new_zeros(
                new_batch_size + x.shape[batch_dims:],
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
            )
            for x in leaves
        ]
        return rebuild(new, batch_size=new_batch_size, device=new_device)

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

        As :meth:`new_zeros`, with ones.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
            >>> td.new_ones([2], dtype=torch.float64)["a"]
            tensor([[1., 1., 1., 1.],
                    [1., 1., 1., 1.]], dtype=torch.float64)
        """
        dense = self._with_dense_stacks("new_ones")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.new_ones(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
        new_batch_size, batch_dims = _ops.new_rule(self._batch_size, size, "new_ones")
        device, new_device = _ops.new_device_rule(self._device, device, "new_ones")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [
            x.new_ones(
                new_batch_size + x.shape[batch_dims:],
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
            )
            for x in leaves
        ]
        return rebuild(new, batch_size=new_batch_size, device=new_device)

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

        As :meth:`new_zeros`, without filling the new leaves.

        Example:
            >>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
            >>> td.new_empty(torch.Size([6]))["a"].shape
            torch.Size([6, 4])
        """
        dense = self._with_dense_stacks("new_empty")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.new_empty(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
        new_batch_size, batch_dims = _ops.new_rule(self._batch_size, size, "new_empty")
        device, new_device = _ops.new_device_rule(self._device, device, "new_empty")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [
            x.new_empty(
                new_batch_size + x.shape[batch_dims:],
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
            )
            for x in leaves
        ]
        return rebuild(new, batch_size=new_batch_size, device=new_device)

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

        As :meth:`new_zeros`; each leaf holds ``fill_value`` in its own dtype.

        Example:
            >>> td = TensorDict(a=torch.zeros(3), b=torch.tensor([1, 2, 3]), batch_size=[3])
            >>> full = td.new_full([2], 7.5)
            >>> full["a"], full["b"]
            (tensor([7.5000, 7.5000]), tensor([7, 7]))
        """
        dense = self._with_dense_stacks("new_full")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.new_full(
                size,
                fill_value,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
        new_batch_size, batch_dims = _ops.new_rule(self._batch_size, size, "new_full")
        device, new_device = _ops.new_device_rule(self._device, device, "new_full")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [
            x.new_full(
                new_batch_size + x.shape[batch_dims:],
                fill_value,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
            )
            for x in leaves
        ]
        return rebuild(new, batch_size=new_batch_size, device=new_device)

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

        ``data`` is a tensor collection with the same keys; each of its leaves is copied
        with the dtype and device of the matching leaf here (unless ``dtype`` or
        ``device`` is given). The result has the batch size of ``data``.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, dtype=torch.float64), batch_size=[2])
            >>> data = TensorDict(a=torch.tensor([1, 2]), batch_size=[2])
            >>> td.new_tensor(data)["a"]
            tensor([1., 2.], dtype=torch.float64)
        """
        dense = self._with_dense_stacks("new_tensor")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.new_tensor(
                data,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                pin_memory=pin_memory,
            )
        data, new_batch_size = _ops.new_tensor_rule(
            self._batch_size, data, "new_tensor"
        )
        device, new_device = _ops.new_device_rule(self._device, device, "new_tensor")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        data_leaves = _ops.operand_leaves(self, leaves, data, "new_tensor")
        new = [
            _ops.new_tensor_leaf(x, data, dtype, device, requires_grad, pin_memory)
            for x, data in zip(leaves, data_leaves)
        ]
        return rebuild(new, batch_size=new_batch_size, device=new_device)

    # ---- Splitting, gathering and masking (spec/indexing.yaml) ----

    def split(
        self, split_size: int | list[int], dim: int = 0
    ) -> tuple[TensorDictBase, ...]:
        """Split into tensordicts along batch dim ``dim``.

        ``split_size`` is the size of every piece (the last one may be smaller) or a list
        of sizes that add up to the size of the dim, as for ``torch.split``.

        Example:
            >>> td = TensorDict(a=torch.arange(10).reshape(5, 2), batch_size=[5])
            >>> [part.batch_size for part in td.split(2)]
            [torch.Size([2]), torch.Size([2]), torch.Size([1])]
            >>> first, rest = td.split([1, 4])
            >>> rest["a"][0]
            tensor([2, 3])
            >>> td.split([1, 2])
            Traceback (most recent call last):
            ...
            tensordict._errors.SplitSizeError: split(): split sizes [1, 2] must be >= 0 and sum to 5, the size of batch dim 0 (batch_size [5] (1 batch dim))
        """
        split_size, dim, batch_sizes = _ops.split_rule(
            self._batch_size, split_size, dim, "split"
        )
        # lazy stacks inside: the pieces are read by indexing
        if self._holds_lazy_stack():
            return _ops.cut_by_index(self, dim, batch_sizes)
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.split(x, split_size, dim) for x in leaves]
        return _ops.keep_lock(
            self, _ops.rebuild_each(self, rebuild, new, batch_sizes, dim)
        )

    def chunk(self, chunks: int, dim: int = 0) -> tuple[TensorCollection, ...]:
        """Split into ``chunks`` tensordicts of (nearly) equal size along ``dim``.

        As ``torch.chunk``: every piece but the last has ``ceil(size / chunks)`` items,
        so there may be fewer than ``chunks`` pieces.

        Example:
            >>> td = TensorDict(a=torch.zeros(4, 3), batch_size=[4, 3])
            >>> [part.batch_size for part in td.chunk(2, dim=-1)]
            [torch.Size([4, 2]), torch.Size([4, 1])]
        """
        chunks, dim, batch_sizes = _ops.chunk_rule(
            self._batch_size, chunks, dim, "chunk"
        )
        # lazy stacks inside: the pieces are read by indexing
        if self._holds_lazy_stack():
            return _ops.cut_by_index(self, dim, batch_sizes)
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.chunk(x, chunks, dim) for x in leaves]
        return _ops.keep_lock(
            self, _ops.rebuild_each(self, rebuild, new, batch_sizes, dim)
        )

    def tensor_split(
        self,
        indices_or_sections: int | list[int] | tuple[int, ...] | torch.Tensor,
        dim=0,
    ) -> tuple[TensorDictBase, ...]:
        """Split along ``dim`` into sections, or at the given indices.

        As ``torch.tensor_split``: an int ``n`` gives ``n`` sections whose sizes differ by
        at most one; a list (or 1-d tensor) of indices splits before each index.

        Example:
            >>> td = TensorDict(a=torch.arange(5), batch_size=[5])
            >>> [part["a"] for part in td.tensor_split([1, 3])]
            [tensor([0]), tensor([1, 2]), tensor([3, 4])]
            >>> [part.batch_size[0] for part in td.tensor_split(3)]
            [2, 2, 1]
        """
        indices_or_sections, dim, batch_sizes = _ops.tensor_split_rule(
            self._batch_size, indices_or_sections, dim, "tensor_split"
        )
        # lazy stacks inside: the pieces are read by indexing
        if self._holds_lazy_stack():
            return _ops.cut_by_index(self, dim, batch_sizes)
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.tensor_split(x, indices_or_sections, dim) for x in leaves]
        return _ops.keep_lock(
            self, _ops.rebuild_each(self, rebuild, new, batch_sizes, dim)
        )

    def unbind(self, dim: int) -> tuple[TensorDictBase, ...]:
        """One tensordict per index of batch dim ``dim``, without that dim.

        ``td.unbind(0)`` is ``(td[0], td[1], ...)``; the leaves are views of the input's.

        Example:
            >>> td = TensorDict(a=torch.arange(6).reshape(3, 2), batch_size=[3])
            >>> td0, td1, td2 = td.unbind(0)
            >>> td1["a"], td1.batch_size
            (tensor([2, 3]), torch.Size([]))
            >>> td.unbind(1)
            Traceback (most recent call last):
            ...
            tensordict._errors.DimOutOfRangeError: Incompatible dim 1 for tensordict with shape torch.Size([3]). unbind(): dim=1 is out of range for a tensordict with batch_size [3] (1 batch dim); dims count batch dims only, so dim must be in [-1, 0]
        """
        dim, batch_sizes = _ops.unbind_rule(self._batch_size, dim, "unbind")
        # lazy stacks inside: the pieces are read by indexing
        if self._holds_lazy_stack():
            return _ops.cut_by_index(self, dim, batch_sizes)
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.unbind(x, dim) for x in leaves]
        return _ops.rebuild_each(self, rebuild, new, batch_sizes, dim)

    def gather(
        self, dim: int, index: Tensor, out: T | None = None, *, inplace: bool = False
    ) -> Self:
        """Gather the items of batch dim ``dim`` that ``index`` picks.

        ``index`` is an int64 tensor with one dim per batch dim; the result's batch size
        is its shape, and ``result[i][j]... = td[i]...[index[i][j]...]...`` along ``dim``,
        as ``torch.gather`` does for a tensor of the batch size (each leaf's feature dims
        come along). With ``out=`` (a tensordict with the same keys and the result's
        shapes) the results are written into ``out``, which is returned; with
        ``inplace=True`` the tensordict itself takes the result's entries and batch size.

        Example:
            >>> td = TensorDict(a=torch.arange(12).reshape(3, 4), batch_size=[3, 4])
            >>> td.gather(1, torch.tensor([[0, 3], [1, 1], [2, 0]]))["a"]
            tensor([[ 0,  3],
                    [ 5,  5],
                    [10,  8]])
            >>> td.gather(1, torch.tensor([0, 1]))
            Traceback (most recent call last):
            ...
            IndexError: gather(): index has 1 dims (shape [2]) but the tensordict has batch_size [3, 4] (2 batch dims); the index needs one dim per batch dim
        """
        dense = self._with_dense_stacks("gather")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.gather(dim, index, out, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        dim, index, new_batch_size = _ops.gather_rule(
            self._batch_size, dim, index, out, inplace, "gather"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.gather(x, dim, _ops.expand_index(index, x)) for x in leaves]
        if out is not None:  # the results are written into out
            return _ops.write_into(self, out, new, "gather")
        result = rebuild(
            new, batch_size=new_batch_size, names=self._names and self._names
        )
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return result

    def masked_fill(self, mask: Tensor, value: float | bool) -> Self:
        """Fill the batch items where ``mask`` is true with ``value``.

        ``mask`` is a boolean tensor shaped like the batch size (or its first dims); every
        leaf's items at the true positions (all their feature dims) become ``value``.

        In place: :meth:`masked_fill_`.

        Example:
            >>> td = TensorDict(a=torch.ones(3, 2), b=torch.arange(3), batch_size=[3])
            >>> out = td.masked_fill(torch.tensor([True, False, True]), -1)
            >>> out["a"]
            tensor([[-1., -1.],
                    [ 1.,  1.],
                    [-1., -1.]])
            >>> out["b"]
            tensor([-1,  1, -1])
            >>> td.masked_fill(torch.tensor([True, False]), 0)
            Traceback (most recent call last):
            ...
            tensordict._errors.MaskShapeError: masked_fill(): mask of shape [2] does not match the tensordict's batch_size [3] (1 batch dim): its shape must be the batch size or its first dims
        """
        dense = self._with_dense_stacks("masked_fill")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.masked_fill(mask, value)
        mask = _ops.mask_rule(self._batch_size, mask, "masked_fill")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [x.masked_fill(_ops.expand_mask(mask, x), value) for x in leaves]
        return rebuild(new)

    def masked_fill_(self, mask: Tensor, value: float | bool) -> Self:
        """In-place :meth:`masked_fill`, returning ``self``.

        Fill the batch items where ``mask`` is true with ``value``. Writes into the stored tensors.
        """
        dense = self._with_dense_stacks("masked_fill_")
        if dense is not self:
            # lazy stacks inside: out of place on their dense stacks, then written back
            return self.update_(dense.masked_fill(mask, value))
        mask = _ops.mask_rule(self._batch_size, mask, "masked_fill_")
        leaves = self._leaves()
        for x in leaves:
            x.masked_fill_(_ops.expand_mask(mask, x), value)
        return self

    def masked_select(self, mask: Tensor, *, inplace: bool = False) -> Self:
        """The batch items where ``mask`` is true, as one batch dim.

        ``mask`` is a boolean tensor shaped like the batch size (or its first dims), as
        for ``td[mask]``: the dims it covers become one dim holding the selected items.
        With ``inplace=True`` the tensordict itself takes the result's entries and batch
        size.

        Example:
            >>> td = TensorDict(a=torch.arange(8).reshape(4, 2), batch_size=[4])
            >>> picked = td.masked_select(torch.tensor([True, False, True, True]))
            >>> picked.batch_size, picked["a"][:, 0]
            (torch.Size([3]), tensor([0, 4, 6]))
        """
        dense = self._with_dense_stacks("masked_select")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            result = dense.masked_select(mask, inplace=False)
            return _ops.assign_inplace(self, result) if inplace else result
        mask, new_batch_size = _ops.masked_select_rule(
            self._batch_size, mask, "masked_select"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [x[mask] for x in leaves]
        result = rebuild(new, batch_size=new_batch_size)
        if inplace:  # self takes the result's entries and batch size
            return _ops.assign_inplace(self, result)
        return result

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

        ``condition`` is a boolean tensor shaped like the batch size (or its first dims).
        ``other`` is a tensor collection (matched key by key), a tensor or a number; with
        ``pad``, a key ``other`` lacks takes ``pad`` there instead of raising
        ``KeyError``. With ``out=`` the results become ``out``'s entries (new tensors:
        the ones ``out`` held keep their values, as other tensordicts may share them; a
        locked ``out`` is written into) and ``out`` is returned. The result keeps the batch size (``update_batch_size`` changes nothing
        here: a condition never has more dims than the batch). ``torch.where(condition,
        td, other)`` is ``td.where(condition, other)``.

        Example:
            >>> td = TensorDict(a=torch.arange(3.0), batch_size=[3])
            >>> td.where(torch.tensor([True, False, True]), -1.0)["a"]
            tensor([ 0., -1.,  2.])
            >>> torch.where(torch.tensor([False, True, True]), td, td + 10)["a"]
            tensor([10.,  1.,  2.])
        """
        dense = self._with_dense_stacks("where")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return _ops.keep_lock(
                self,
                dense.where(
                    condition,
                    other,
                    out=out,
                    pad=pad,
                    update_batch_size=update_batch_size,
                ),
            )
        condition = _ops.where_rule(self._batch_size, condition, "where")
        if pad is not None:
            self, other, pad = _ops.fill_defaults(self, other, pad)
        leaves, rebuild = self._batched_leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "where", pad)
        new = [
            torch.where(_ops.expand_mask(condition, x), x, other)
            for x, other in zip(leaves, other_leaves)
        ]
        if out is not None:  # the results are written into out
            return _ops.write_into(self, out, new, "where")
        return _ops.keep_lock(self, rebuild(new))

    # ---- Losses (spec/loss.yaml) ----

    # ---- Pointwise (unary) ops (spec/pointwise.yaml) ----

    def abs(self) -> Self:
        """Absolute value of every leaf.

        Integer leaves stay integers; boolean leaves are rejected by torch.
        ``abs(td)`` is the same as ``td.abs()``.

        In place: :meth:`abs_`. Operators: ``abs(td)``.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.0, 2.0]), b=torch.tensor([-3, 4, -5]), batch_size=[3])
            >>> td.abs()["a"]
            tensor([1.5000, 0.0000, 2.0000])
            >>> abs(td)["b"]
            tensor([3, 4, 5])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_abs, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.abs(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def abs_(self) -> Self:
        """In-place :meth:`abs`, returning ``self``.

        Absolute value of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_abs_, leaves):
            for x in leaves:
                x.abs_()
        return self

    def __abs__(self) -> Self:
        """``abs(td)``: same as :meth:`abs`."""
        return self.abs()

    def acos(self) -> Self:
        """Inverse cosine of every leaf.

        Values outside ``[-1, 1]`` give ``nan``. Integer leaves are promoted to the default
        floating dtype; the in-place form needs floating leaves.

        In place: :meth:`acos_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 0.5, 0.0]), batch_size=[3])
            >>> td.acos()["a"]
            tensor([0.0000, 1.0472, 1.5708])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_acos, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.acos(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def acos_(self) -> Self:
        """In-place :meth:`acos`, returning ``self``.

        Inverse cosine of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_acos_, leaves):
            for x in leaves:
                x.acos_()
        return self

    def asin(self) -> Self:
        """Inverse sine of every leaf.

        Values outside ``[-1, 1]`` give ``nan``. Integer leaves are promoted to the default
        floating dtype.

        In place: :meth:`asin_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.asin()["a"]
            tensor([0.0000, 0.5236, 1.5708])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_asin, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.asin(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def asin_(self) -> Self:
        """In-place :meth:`asin`, returning ``self``.

        Inverse sine of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_asin_, leaves):
            for x in leaves:
                x.asin_()
        return self

    def atan(self) -> Self:
        """Inverse tangent of every leaf.

        Results lie in ``(-pi/2, pi/2)``. Integer leaves are promoted to the default
        floating dtype.

        In place: :meth:`atan_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.atan()["a"]
            tensor([0.0000, 0.4636, 0.7854])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_atan, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.atan(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def atan_(self) -> Self:
        """In-place :meth:`atan`, returning ``self``.

        Inverse tangent of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_atan_, leaves):
            for x in leaves:
                x.atan_()
        return self

    def ceil(self) -> Self:
        """Round every leaf up to the nearest integer value.

        Floating leaves keep their dtype (the result holds whole numbers); integer leaves
        are returned unchanged.

        In place: :meth:`ceil_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.2, 2.0]), batch_size=[3])
            >>> td.ceil()["a"]
            tensor([-1.,  1.,  2.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_ceil, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.ceil(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def ceil_(self) -> Self:
        """In-place :meth:`ceil`, returning ``self``.

        Round every leaf up to the nearest integer value. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_ceil_, leaves):
            for x in leaves:
                x.ceil_()
        return self

    def cos(self) -> Self:
        """Cosine of every leaf (radians).

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`cos_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.cos()["a"]
            tensor([1.0000, 0.8776, 0.5403])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_cos, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.cos(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def cos_(self) -> Self:
        """In-place :meth:`cos`, returning ``self``.

        Cosine of every leaf (radians). Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_cos_, leaves):
            for x in leaves:
                x.cos_()
        return self

    def cosh(self) -> Self:
        """Hyperbolic cosine of every leaf.

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`cosh_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.cosh()["a"]
            tensor([1.0000, 1.1276, 1.5431])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_cosh, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.cosh(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def cosh_(self) -> Self:
        """In-place :meth:`cosh`, returning ``self``.

        Hyperbolic cosine of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_cosh_, leaves):
            for x in leaves:
                x.cosh_()
        return self

    def erf(self) -> Self:
        """Gauss error function of every leaf.

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`erf_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.erf()["a"]
            tensor([0.0000, 0.5205, 0.8427])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_erf, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.erf(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def erf_(self) -> Self:
        """In-place :meth:`erf`, returning ``self``.

        Gauss error function of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_erf_, leaves):
            for x in leaves:
                x.erf_()
        return self

    def erfc(self) -> Self:
        """Complementary error function (``1 - erf``) of every leaf.

        More accurate than ``1 - td.erf()`` for large inputs. Integer leaves are promoted
        to the default floating dtype.

        In place: :meth:`erfc_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.erfc()["a"]
            tensor([1.0000, 0.4795, 0.1573])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_erfc, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.erfc(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def erfc_(self) -> Self:
        """In-place :meth:`erfc`, returning ``self``.

        Complementary error function (``1 - erf``) of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_erfc_, leaves):
            for x in leaves:
                x.erfc_()
        return self

    def exp(self) -> Self:
        """Exponential of every leaf.

        Integer leaves are promoted to the default floating dtype; ``exp_`` on an integer
        leaf raises torch's dtype error.

        In place: :meth:`exp_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.exp()["a"]
            tensor([1.0000, 1.6487, 2.7183])
            >>> td.exp_() is td
            True
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_exp, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.exp(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def exp_(self) -> Self:
        """In-place :meth:`exp`, returning ``self``.

        Exponential of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_exp_, leaves):
            for x in leaves:
                x.exp_()
        return self

    def expm1(self) -> Self:
        """``exp(x) - 1`` of every leaf.

        Accurate for inputs close to zero, where ``exp(x) - 1`` loses precision.

        In place: :meth:`expm1_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.expm1()["a"]
            tensor([0.0000, 0.6487, 1.7183])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_expm1, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.expm1(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def expm1_(self) -> Self:
        """In-place :meth:`expm1`, returning ``self``.

        ``exp(x) - 1`` of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_expm1_, leaves):
            for x in leaves:
                x.expm1_()
        return self

    def floor(self) -> Self:
        """Round every leaf down to the nearest integer value.

        Floating leaves keep their dtype; integer leaves are returned unchanged.

        In place: :meth:`floor_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.2, 2.0]), batch_size=[3])
            >>> td.floor()["a"]
            tensor([-2.,  0.,  2.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_floor, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.floor(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def floor_(self) -> Self:
        """In-place :meth:`floor`, returning ``self``.

        Round every leaf down to the nearest integer value. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_floor_, leaves):
            for x in leaves:
                x.floor_()
        return self

    def frac(self) -> Self:
        """Fractional part of every leaf, keeping the sign.

        ``x - trunc(x)``. Only floating leaves are accepted; torch rejects integer leaves.

        In place: :meth:`frac_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.25, 2.0]), batch_size=[3])
            >>> td.frac()["a"]
            tensor([-0.5000,  0.2500,  0.0000])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_frac, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.frac(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def frac_(self) -> Self:
        """In-place :meth:`frac`, returning ``self``.

        Fractional part of every leaf, keeping the sign. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_frac_, leaves):
            for x in leaves:
                x.frac_()
        return self

    def lgamma(self) -> Self:
        """Natural log of the absolute value of the gamma function, leaf by leaf.

        Poles (zero and the negative integers) give ``inf``. Integer leaves are promoted to
        the default floating dtype.

        In place: :meth:`lgamma_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0, 3.0]), batch_size=[3])
            >>> td.lgamma()["a"]
            tensor([0.0000, 0.0000, 0.6931])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_lgamma, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.lgamma(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def lgamma_(self) -> Self:
        """In-place :meth:`lgamma`, returning ``self``.

        Natural log of the absolute value of the gamma function, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_lgamma_, leaves):
            for x in leaves:
                x.lgamma_()
        return self

    def log(self) -> Self:
        """Natural logarithm of every leaf.

        Zero gives ``-inf`` and negative values ``nan``. Integer leaves are promoted to the
        default floating dtype.

        In place: :meth:`log_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 4.0, 0.5]), batch_size=[3])
            >>> td.log()["a"]
            tensor([ 0.0000,  1.3863, -0.6931])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_log, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.log(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def log_(self) -> Self:
        """In-place :meth:`log`, returning ``self``.

        Natural logarithm of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_log_, leaves):
            for x in leaves:
                x.log_()
        return self

    def log10(self) -> Self:
        """Base-10 logarithm of every leaf.

        Zero gives ``-inf`` and negative values ``nan``.

        In place: :meth:`log10_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 10.0, 1000.0]), batch_size=[3])
            >>> td.log10()["a"]
            tensor([0., 1., 3.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_log10, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.log10(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def log10_(self) -> Self:
        """In-place :meth:`log10`, returning ``self``.

        Base-10 logarithm of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_log10_, leaves):
            for x in leaves:
                x.log10_()
        return self

    def log1p(self) -> Self:
        """``log(1 + x)`` of every leaf.

        Accurate for inputs close to zero, where ``log(1 + x)`` loses precision.

        In place: :meth:`log1p_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.log1p()["a"]
            tensor([0.0000, 0.4055, 0.6931])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_log1p, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.log1p(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def log1p_(self) -> Self:
        """In-place :meth:`log1p`, returning ``self``.

        ``log(1 + x)`` of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_log1p_, leaves):
            for x in leaves:
                x.log1p_()
        return self

    def log2(self) -> Self:
        """Base-2 logarithm of every leaf.

        Zero gives ``-inf`` and negative values ``nan``.

        In place: :meth:`log2_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 2.0, 8.0]), batch_size=[3])
            >>> td.log2()["a"]
            tensor([0., 1., 3.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_log2, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.log2(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def log2_(self) -> Self:
        """In-place :meth:`log2`, returning ``self``.

        Base-2 logarithm of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_log2_, leaves):
            for x in leaves:
                x.log2_()
        return self

    def neg(self) -> Self:
        """Negate every leaf.

        ``-td`` is the same as ``td.neg()``. Boolean leaves are rejected by torch (use
        ``~td`` to flip booleans).

        In place: :meth:`neg_`. Operators: ``-td``.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.0, 2.0]), b=torch.tensor([1, 2, 3]), batch_size=[3])
            >>> td.neg()["a"]
            tensor([ 1.5000, -0.0000, -2.0000])
            >>> (-td)["b"]
            tensor([-1, -2, -3])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_neg, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.neg(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def neg_(self) -> Self:
        """In-place :meth:`neg`, returning ``self``.

        Negate every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_neg_, leaves):
            for x in leaves:
                x.neg_()
        return self

    def __neg__(self) -> Self:
        """``-td``: same as :meth:`neg`."""
        return self.neg()

    def reciprocal(self) -> Self:
        """``1 / x`` for every leaf.

        Zero gives ``inf``. Integer leaves are promoted to the default floating dtype.

        In place: :meth:`reciprocal_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.5, 1.0, 4.0]), batch_size=[3])
            >>> td.reciprocal()["a"]
            tensor([2.0000, 1.0000, 0.2500])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_reciprocal, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.reciprocal(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def reciprocal_(self) -> Self:
        """In-place :meth:`reciprocal`, returning ``self``.

        ``1 / x`` for every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_reciprocal_, leaves):
            for x in leaves:
                x.reciprocal_()
        return self

    def round(self) -> Self:
        """Round every leaf to the nearest integer value, halves to even.

        Floating leaves keep their dtype; integer leaves are returned unchanged. Halfway
        values round to the nearest even number, as in torch.

        In place: :meth:`round_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.5, 2.7]), batch_size=[3])
            >>> td.round()["a"]
            tensor([-2.,  0.,  3.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_round, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.round(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def round_(self) -> Self:
        """In-place :meth:`round`, returning ``self``.

        Round every leaf to the nearest integer value, halves to even. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_round_, leaves):
            for x in leaves:
                x.round_()
        return self

    def sigmoid(self) -> Self:
        """Logistic sigmoid ``1 / (1 + exp(-x))`` of every leaf.

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`sigmoid_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.sigmoid()["a"]
            tensor([0.5000, 0.6225, 0.7311])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_sigmoid, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.sigmoid(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def sigmoid_(self) -> Self:
        """In-place :meth:`sigmoid`, returning ``self``.

        Logistic sigmoid ``1 / (1 + exp(-x))`` of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_sigmoid_, leaves):
            for x in leaves:
                x.sigmoid_()
        return self

    def sign(self) -> Self:
        """Sign (-1, 0 or 1) of every leaf.

        The result has the dtype of the leaf; boolean leaves are returned as they are.

        In place: :meth:`sign_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.0, 2.0]), batch_size=[3])
            >>> td.sign()["a"]
            tensor([-1.,  0.,  1.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_sign, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.sign(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def sign_(self) -> Self:
        """In-place :meth:`sign`, returning ``self``.

        Sign (-1, 0 or 1) of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_sign_, leaves):
            for x in leaves:
                x.sign_()
        return self

    def sin(self) -> Self:
        """Sine of every leaf (radians).

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`sin_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.sin()["a"]
            tensor([0.0000, 0.4794, 0.8415])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_sin, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.sin(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def sin_(self) -> Self:
        """In-place :meth:`sin`, returning ``self``.

        Sine of every leaf (radians). Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_sin_, leaves):
            for x in leaves:
                x.sin_()
        return self

    def sinh(self) -> Self:
        """Hyperbolic sine of every leaf.

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`sinh_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.sinh()["a"]
            tensor([0.0000, 0.5211, 1.1752])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_sinh, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.sinh(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def sinh_(self) -> Self:
        """In-place :meth:`sinh`, returning ``self``.

        Hyperbolic sine of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_sinh_, leaves):
            for x in leaves:
                x.sinh_()
        return self

    def sqrt(self) -> Self:
        """Square root of every leaf.

        Negative values give ``nan``. Integer leaves are promoted to the default floating
        dtype; ``sqrt_`` on an integer leaf raises torch's dtype error.

        In place: :meth:`sqrt_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 4.0, 9.0]), b=torch.tensor([1, 4, 16]), batch_size=[3])
            >>> td.sqrt()["a"]
            tensor([0., 2., 3.])
            >>> td.sqrt()["b"]
            tensor([1., 2., 4.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_sqrt, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.sqrt(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def sqrt_(self) -> Self:
        """In-place :meth:`sqrt`, returning ``self``.

        Square root of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_sqrt_, leaves):
            for x in leaves:
                x.sqrt_()
        return self

    def tan(self) -> Self:
        """Tangent of every leaf (radians).

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`tan_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.tan()["a"]
            tensor([0.0000, 0.5463, 1.5574])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_tan, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.tan(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def tan_(self) -> Self:
        """In-place :meth:`tan`, returning ``self``.

        Tangent of every leaf (radians). Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_tan_, leaves):
            for x in leaves:
                x.tan_()
        return self

    def tanh(self) -> Self:
        """Hyperbolic tangent of every leaf.

        Integer leaves are promoted to the default floating dtype.

        In place: :meth:`tanh_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([0.0, 0.5, 1.0]), batch_size=[3])
            >>> td.tanh()["a"]
            tensor([0.0000, 0.4621, 0.7616])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_tanh, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.tanh(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def tanh_(self) -> Self:
        """In-place :meth:`tanh`, returning ``self``.

        Hyperbolic tangent of every leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_tanh_, leaves):
            for x in leaves:
                x.tanh_()
        return self

    def trunc(self) -> Self:
        """Round every leaf towards zero.

        Floating leaves keep their dtype; integer leaves are returned unchanged.

        In place: :meth:`trunc_`.

        Example:
            >>> td = TensorDict(a=torch.tensor([-1.5, 0.5, 2.7]), batch_size=[3])
            >>> td.trunc()["a"]
            tensor([-1.,  0.,  2.])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        new = _ops.try_foreach(torch._foreach_trunc, leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.trunc(x) for x in leaves]
        return _ops.keep_lock(self, rebuild(new))

    def trunc_(self) -> Self:
        """In-place :meth:`trunc`, returning ``self``.

        Round every leaf towards zero. Writes into the stored tensors.
        """
        leaves = self._leaves()
        if not _ops.try_foreach_(torch._foreach_trunc_, leaves):
            for x in leaves:
                x.trunc_()
        return self

    def isfinite(self) -> Self:
        """Whether each element of every leaf is finite.

        Returns a tensordict of boolean leaves: ``False`` for ``inf``, ``-inf`` and
        ``nan``. Integer and boolean leaves are always finite.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, float("inf"), float("nan")]), batch_size=[3])
            >>> td.isfinite()["a"]
            tensor([ True, False, False])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: torch.isfinite(x)))

    def isnan(self) -> Self:
        """Whether each element of every leaf is ``nan``.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, float("inf"), float("nan")]), batch_size=[3])
            >>> td.isnan()["a"]
            tensor([False, False,  True])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: torch.isnan(x)))

    def isneginf(self) -> Self:
        """Whether each element of every leaf is negative infinity.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([-float("inf"), float("inf"), 0.0]), batch_size=[3])
            >>> td.isneginf()["a"]
            tensor([ True, False, False])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: torch.isneginf(x)))

    def isposinf(self) -> Self:
        """Whether each element of every leaf is positive infinity.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([-float("inf"), float("inf"), 0.0]), batch_size=[3])
            >>> td.isposinf()["a"]
            tensor([False,  True, False])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: torch.isposinf(x)))

    def isreal(self) -> Self:
        """Whether each element of every leaf is real (zero imaginary part).

        Returns a tensordict of boolean leaves; every element of a real-dtype leaf is real.

        Example:
            >>> td = TensorDict(a=torch.tensor([1 + 0j, 1 + 1j]), b=torch.tensor([0.5, 2.0]), batch_size=[2])
            >>> td.isreal()["a"]
            tensor([ True, False])
            >>> td.isreal()["b"]
            tensor([True, True])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: torch.isreal(x)))

    def __invert__(self) -> Self:
        """Bitwise NOT of every leaf (``~td``).

        Flips booleans and inverts the bits of integers; torch rejects floating leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([True, False]), b=torch.tensor([0, 5]), batch_size=[2])
            >>> (~td)["a"]
            tensor([False,  True])
            >>> (~td)["b"]
            tensor([-1, -6])
        """
        return _ops.keep_lock(self, self._map_leaves(lambda x: ~x))

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

        ``dtype`` is passed to ``torch.sum`` (boolean and integer leaves sum to
        ``int64`` otherwise). ``key_transform`` renames every key of the result
        (``lambda key: key + "_sum"``).

        Example:
            >>> td = TensorDict(a=torch.ones(3, 4, 2), b=torch.arange(12).reshape(3, 4), batch_size=[3, 4])
            >>> td.sum(1).batch_size, td.sum(1)["a"].shape
            (torch.Size([3]), torch.Size([3, 2]))
            >>> td.sum(-1, keepdim=True).batch_size
            torch.Size([3, 1])
            >>> td.sum()["b"]
            tensor(66)
            >>> td.sum("feature")["a"].shape
            torch.Size([3, 4])
            >>> td.sum(reduce=True)
            tensor(90.)
        """
        dense = self._with_dense_stacks("sum")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.sum(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "sum"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "sum")
            if dim is None:
                return torch.sum(x, dtype=dtype)
            if dim == "feature":  # reduced over its last dim
                return torch.sum(x, -1, keepdim=False, dtype=dtype)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.sum(x, dim, keepdim=keepdim, dtype=dtype)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.sum(x, dtype=dtype) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            if key_transform is not None:
                result = _ops.transform_keys(result, key_transform)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.sum(x, dim, keepdim=keepdim, dtype=dtype), leaves, dim
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

    def nansum(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Sum of every leaf over batch dims, counting ``nan`` as zero.

        As :meth:`sum`, with ``torch.nansum`` on each leaf.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, float("nan")], [2.0, 3.0]]), batch_size=[2, 2])
            >>> td.nansum(1)["a"]
            tensor([1., 5.])
        """
        dense = self._with_dense_stacks("nansum")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.nansum(dim, keepdim, dtype=dtype, reduce=reduce)
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "nansum"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "nansum")
            if dim is None:
                return torch.nansum(x, dtype=dtype)
            if dim == "feature":  # reduced over its last dim
                return torch.nansum(x, -1, keepdim=False, dtype=dtype)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.nansum(x, dim, keepdim=keepdim, dtype=dtype)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.nansum(x, dtype=dtype) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.nansum(x, dim, keepdim=keepdim, dtype=dtype),
            leaves,
            dim,
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

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

        Leaves must be floating (or ``dtype`` a floating dtype), as for ``torch.mean``.
        With ``reduce=True`` the mean is taken over every value of every leaf together.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, 2.0], [3.0, 4.0]]), b=torch.tensor([[10.0], [20.0]]), batch_size=[2])
            >>> td.mean(0)["a"]
            tensor([2., 3.])
            >>> td.mean()["b"]
            tensor(15.)
            >>> td.mean("feature", reduce=True)
            tensor([4.3333, 9.0000])
        """
        dense = self._with_dense_stacks("mean")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.mean(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "mean"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "mean")
            if dim is None:
                return torch.mean(x, dtype=dtype)
            if dim == "feature":  # reduced over its last dim
                return torch.mean(x, -1, keepdim=False, dtype=dtype)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.mean(x, dim, keepdim=keepdim, dtype=dtype)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.mean(x, dtype=dtype) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            if key_transform is not None:
                result = _ops.transform_keys(result, key_transform)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.mean(x, dim, keepdim=keepdim, dtype=dtype), leaves, dim
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

    def nanmean(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Mean of every leaf over batch dims, leaving out ``nan`` values.

        As :meth:`mean`, with ``torch.nanmean`` on each leaf.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, float("nan")], [2.0, 3.0]]), batch_size=[2, 2])
            >>> td.nanmean(1)["a"]
            tensor([1.0000, 2.5000])
        """
        dense = self._with_dense_stacks("nanmean")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.nanmean(dim, keepdim, dtype=dtype, reduce=reduce)
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "nanmean"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "nanmean")
            if dim is None:
                return torch.nanmean(x, dtype=dtype)
            if dim == "feature":  # reduced over its last dim
                return torch.nanmean(x, -1, keepdim=False, dtype=dtype)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.nanmean(x, dim, keepdim=keepdim, dtype=dtype)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.nanmean(x, dtype=dtype) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.nanmean(x, dim, keepdim=keepdim, dtype=dtype),
            leaves,
            dim,
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def prod(
        self,
        dim: int | Tuple[int] | Literal["feature"] = NO_DEFAULT,
        keepdim: bool = NO_DEFAULT,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Product of every leaf over one batch dim.

        ``torch.prod`` takes one dim, so ``dim`` is an int here (a tuple raises a
        ``TypeError``); no dim multiplies every value of each leaf.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, 2.0], [3.0, 4.0]]), batch_size=[2])
            >>> td.prod(0)["a"]
            tensor([3., 8.])
            >>> td.prod()["a"]
            tensor(24.)
        """
        dense = self._with_dense_stacks("prod")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.prod(dim, keepdim, dtype=dtype, reduce=reduce)
        dim, keepdim, new_batch_size = _ops.reduce_one_rule(
            self._batch_size, dim, keepdim, "prod"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "prod")
            if dim is None:
                return torch.prod(x, dtype=dtype)
            if dim == "feature":  # reduced over its last dim
                return torch.prod(x, -1, keepdim=False, dtype=dtype)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.prod(x, dim, keepdim=keepdim, dtype=dtype)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.prod(x, dtype=dtype) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.prod(x, dim, keepdim=keepdim, dtype=dtype), leaves, dim
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

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

        ``correction`` is Bessel's correction, as for ``torch.std`` (``0``: the
        population standard deviation).

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, 2.0], [3.0, 6.0]]), batch_size=[2])
            >>> td.std(0)["a"]
            tensor([1.4142, 2.8284])
            >>> td.std(0, correction=0)["a"]
            tensor([1., 2.])
        """
        dense = self._with_dense_stacks("std")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.std(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "std"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "std")
            if dim is None:
                return torch.std(x, correction=correction)
            if dim == "feature":  # reduced over its last dim
                return torch.std(x, -1, correction=correction, keepdim=False)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.std(x, dim, correction=correction, keepdim=keepdim)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.std(x, correction=correction) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            if key_transform is not None:
                result = _ops.transform_keys(result, key_transform)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.std(x, dim, correction=correction, keepdim=keepdim),
            leaves,
            dim,
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

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

        ``correction`` is Bessel's correction, as for ``torch.var``.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, 2.0], [3.0, 6.0]]), batch_size=[2])
            >>> td.var(0)["a"]
            tensor([2., 8.])
        """
        dense = self._with_dense_stacks("var")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.var(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "var"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "var")
            if dim is None:
                return torch.var(x, correction=correction)
            if dim == "feature":  # reduced over its last dim
                return torch.var(x, -1, correction=correction, keepdim=False)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.var(x, dim, correction=correction, keepdim=keepdim)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.var(x, correction=correction) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            if key_transform is not None:
                result = _ops.transform_keys(result, key_transform)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.var(x, dim, correction=correction, keepdim=keepdim),
            leaves,
            dim,
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

    def min(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> Self | torch.Tensor:
        """Minimum of every leaf over one batch dim, with its indices.

        With a dim, returns ``torch.return_types.min(values, indices)``, two tensordicts
        (``return_indices=False``: the values only). Without a dim, the minimum of every
        value of each leaf, as a tensordict of values.

        Example:
            >>> td = TensorDict(a=torch.tensor([[3.0, 1.0], [2.0, 5.0]]), batch_size=[2])
            >>> result = td.min(0)
            >>> result.values["a"], result.indices["a"]
            (tensor([2., 1.]), tensor([1, 0]))
            >>> td.min(0, return_indices=False)["a"]
            tensor([2., 1.])
            >>> td.min()["a"]
            tensor(1.)
        """
        dense = self._with_dense_stacks("min")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.min(dim, keepdim, reduce=reduce, return_indices=return_indices)
        dim, keepdim, new_batch_size = _ops.reduce_one_rule(
            self._batch_size, dim, keepdim, "min"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "min")
            if dim is None:
                return torch.min(x)
            if dim == "feature":  # reduced over its last dim
                out = torch.min(x, -1, keepdim=False)
                return out if return_indices else out[0]
            # batch dims: the leaves concatenated along them, reduced as one leaf
            out = torch.min(x, dim, keepdim=keepdim)
            return out if return_indices else out[0]
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.min(x) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = [torch.min(x, dim, keepdim=keepdim) for x in leaves]
        values, indices = _ops.unzip(new)
        result = rebuild(
            values,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if return_indices:
            return torch.return_types.min(
                (
                    result,
                    rebuild(
                        indices,
                        batch_size=new_batch_size,
                        names=self._names
                        and _ops.reduced_names(self._names, dim, new_batch_size),
                    ),
                )
            )
        return result

    def max(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> Self | torch.Tensor:
        """Maximum of every leaf over one batch dim, with its indices.

        With a dim, returns ``torch.return_types.max(values, indices)``, two tensordicts
        (``return_indices=False``: the values only). Without a dim, the maximum of every
        value of each leaf, as a tensordict of values.

        Example:
            >>> td = TensorDict(a=torch.tensor([[3.0, 1.0], [2.0, 5.0]]), batch_size=[2])
            >>> values, indices = td.max(0)
            >>> values["a"], indices["a"]
            (tensor([3., 5.]), tensor([0, 1]))
            >>> td.max(reduce=True)
            tensor(5.)
        """
        dense = self._with_dense_stacks("max")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.max(dim, keepdim, reduce=reduce, return_indices=return_indices)
        dim, keepdim, new_batch_size = _ops.reduce_one_rule(
            self._batch_size, dim, keepdim, "max"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "max")
            if dim is None:
                return torch.max(x)
            if dim == "feature":  # reduced over its last dim
                out = torch.max(x, -1, keepdim=False)
                return out if return_indices else out[0]
            # batch dims: the leaves concatenated along them, reduced as one leaf
            out = torch.max(x, dim, keepdim=keepdim)
            return out if return_indices else out[0]
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.max(x) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = [torch.max(x, dim, keepdim=keepdim) for x in leaves]
        values, indices = _ops.unzip(new)
        result = rebuild(
            values,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if return_indices:
            return torch.return_types.max(
                (
                    result,
                    rebuild(
                        indices,
                        batch_size=new_batch_size,
                        names=self._names
                        and _ops.reduced_names(self._names, dim, new_batch_size),
                    ),
                )
            )
        return result

    def amin(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Minimum of every leaf over batch dims, values only.

        As ``torch.amin``: ``dim`` may be a tuple of batch dims, and no indices are
        returned.

        Example:
            >>> td = TensorDict(a=torch.tensor([[3.0, 1.0], [2.0, 5.0]]), batch_size=[2, 2])
            >>> td.amin(0)["a"]
            tensor([2., 1.])
            >>> td.amin((0, 1))["a"]
            tensor(1.)
        """
        dense = self._with_dense_stacks("amin")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.amin(dim, keepdim, reduce=reduce)
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "amin"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "amin")
            if dim is None:
                return torch.amin(x)
            if dim == "feature":  # reduced over its last dim
                return torch.amin(x, -1, keepdim=False)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.amin(x, dim, keepdim=keepdim)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.amin(x) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.amin(x, dim, keepdim=keepdim), leaves, dim
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def amax(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Maximum of every leaf over batch dims, values only.

        As ``torch.amax``: ``dim`` may be a tuple of batch dims, and no indices are
        returned.

        Example:
            >>> td = TensorDict(a=torch.tensor([[3.0, 1.0], [2.0, 5.0]]), batch_size=[2, 2])
            >>> td.amax(1, keepdim=True)["a"]
            tensor([[3.],
                    [5.]])
        """
        dense = self._with_dense_stacks("amax")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.amax(dim, keepdim, reduce=reduce)
        dim, keepdim, new_batch_size = _ops.reduce_rule(
            self._batch_size, dim, keepdim, "amax"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "amax")
            if dim is None:
                return torch.amax(x)
            if dim == "feature":  # reduced over its last dim
                return torch.amax(x, -1, keepdim=False)
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.amax(x, dim, keepdim=keepdim)
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.amax(x) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.amax(x, dim, keepdim=keepdim), leaves, dim
        )
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def all(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether every value is true, over batch dims or overall.

        With no dim, one Python ``bool``: whether every value of every leaf is true (an
        empty tensordict gives ``True``). With a dim (or a tuple of dims, or
        ``"feature"``), a tensordict of booleans.

        Example:
            >>> td = TensorDict(a=torch.tensor([[True, False], [True, True]]), batch_size=[2])
            >>> td.all()
            False
            >>> td.all(0)["a"]
            tensor([ True, False])
        """
        if dim is None:  # one bool for every value of every leaf
            # a loop over the entries (a nested container answers for itself,
            # non-tensor data is skipped): a generator left at the deciding
            # leaf costs ~0.2 us; a one-element leaf is read by bool(), with
            # no reduction kernel
            for x in self._scan_entries():
                if isinstance(x, torch.Tensor):
                    if not (bool(x) if x.numel() == 1 else x.all()):
                        return False
                elif isinstance(x, TensorDictBase) and not x.all():
                    return False
            return True
        dense = self._with_dense_stacks("all")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.all(dim)
        dim, _, new_batch_size = _ops.reduce_rule(self._batch_size, dim, False, "all")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim = _ops.flatten_features(self, leaves), -1
        new = _ops.reduce_leaves(lambda x, dim: torch.all(x, dim), leaves, dim)
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def any(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether any value is true, over batch dims or overall.

        With no dim, one Python ``bool``: whether any value of any leaf is true (an
        empty tensordict gives ``False``). With a dim (or a tuple of dims, or
        ``"feature"``), a tensordict of booleans.

        Example:
            >>> td = TensorDict(a=torch.tensor([[False, False], [True, False]]), batch_size=[2])
            >>> td.any()
            True
            >>> td.any(0)["a"]
            tensor([ True, False])
        """
        if dim is None:  # one bool for every value of every leaf
            # a loop over the entries (a nested container answers for itself,
            # non-tensor data is skipped): a generator left at the deciding
            # leaf costs ~0.2 us; a one-element leaf is read by bool(), with
            # no reduction kernel
            for x in self._scan_entries():
                if isinstance(x, torch.Tensor):
                    if bool(x) if x.numel() == 1 else x.any():
                        return True
                elif isinstance(x, TensorDictBase) and x.any():
                    return True
            return False
        dense = self._with_dense_stacks("any")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.any(dim)
        dim, _, new_batch_size = _ops.reduce_rule(self._batch_size, dim, False, "any")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim = _ops.flatten_features(self, leaves), -1
        new = _ops.reduce_leaves(lambda x, dim: torch.any(x, dim), leaves, dim)
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def logsumexp(self, dim=None, keepdim=False, *, out=None):
        """Log of the summed exponentials of every leaf over batch dims.

        Unlike the other reductions, no dim reduces every **batch** dim and keeps each
        leaf's feature dims. ``out``, a tensor collection with the result's keys, receives
        the result and is returned.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, 3), batch_size=[2])
            >>> td.logsumexp()["a"]
            tensor([0.6931, 0.6931, 0.6931])
        """
        dense = self._with_dense_stacks("logsumexp")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.logsumexp(dim, keepdim, out=out)
        dim, keepdim, new_batch_size = _ops.reduce_batch_rule(
            self._batch_size, dim, keepdim, "logsumexp"
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = _ops.reduce_leaves(
            lambda x, dim: torch.logsumexp(x, dim, keepdim=keepdim), leaves, dim
        )
        if out is not None:
            return _ops.write_into(self, out, new, "logsumexp")
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        return result

    def norm(
        self,
        *,
        out=None,
        dtype: torch.dtype | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self:
        """Euclidean norm of every leaf.

        The 2-norm of all the values of each leaf (``torch.linalg.vector_norm``); the
        result has batch size ``[]``. ``out``, a tensor collection with the same keys,
        receives the result and is returned. (``torch.norm(td)`` is not dispatched: it
        passes ``p`` and ``dim``, which this method does not take.)

        Example:
            >>> td = TensorDict(a=torch.tensor([[3.0], [4.0]]), batch_size=[2])
            >>> td.norm()["a"]
            tensor(5.)
        """
        dense = self._with_dense_stacks("norm")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.norm(out=out, dtype=dtype, key_transform=key_transform)
        leaves = self._batched_leaves_and_rebuild()[0]
        new = [torch.linalg.vector_norm(x, dtype=dtype) for x in leaves]
        if out is not None:
            return _ops.write_into(self, out, new, "norm")
        result = _ops.rebuild_reduced(self, leaves, new, False)
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

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

        As ``torch.quantile``: ``dim`` is one batch dim, and a 1-d tensor ``q`` puts a
        leading dim of its size in front of the result's batch size.

        Example:
            >>> td = TensorDict(a=torch.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]), batch_size=[3])
            >>> td.quantile(0.5, 0)["a"]
            tensor([ 2., 20.])
            >>> td.quantile(torch.tensor([0.0, 1.0]), 0).batch_size
            torch.Size([2])
        """
        dense = self._with_dense_stacks("quantile")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.quantile(
                q,
                dim,
                keepdim,
                interpolation=interpolation,
                reduce=reduce,
                key_transform=key_transform,
            )
        prefix = _ops.quantile_shape(q)
        dim, keepdim, new_batch_size = _ops.reduce_one_rule(
            self._batch_size, dim, keepdim, "quantile", prefix=prefix
        )
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor
            x = _ops.leaves_as_one(leaves, self._batch_size, dim, "quantile")
            if dim is None:
                return torch.quantile(x, q, interpolation=interpolation)
            if dim == "feature":  # reduced over its last dim
                return torch.quantile(
                    x, q, -1, keepdim=False, interpolation=interpolation
                )
            # batch dims: the leaves concatenated along them, reduced as one leaf
            return torch.quantile(
                x, q, dim, keepdim=keepdim, interpolation=interpolation
            )
        if dim is None:  # every dim of every leaf: no batch dims left at any level
            new = [torch.quantile(x, q, interpolation=interpolation) for x in leaves]
            result = _ops.rebuild_reduced(self, leaves, new, keepdim, prefix)
            if key_transform is not None:
                result = _ops.transform_keys(result, key_transform)
            return result
        if dim == "feature":  # each leaf's feature dims, flattened into its last dim
            leaves, dim, keepdim = _ops.flatten_features(self, leaves), -1, False
        new = [
            torch.quantile(x, q, dim, keepdim=keepdim, interpolation=interpolation)
            for x in leaves
        ]
        result = rebuild(
            new,
            batch_size=new_batch_size,
            names=self._names and _ops.reduced_names(self._names, dim, new_batch_size),
        )
        if key_transform is not None:
            result = _ops.transform_keys(result, key_transform)
        return result

    def cummin(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative minimum of every leaf along one batch dim, with its indices.

        Returns ``torch.return_types.cummin(values, indices)``, two tensordicts with the
        batch size of the input (``return_indices=False``: the values only). With
        ``reduce=True``, the leaves are taken as one tensor (the batch dims, then every
        leaf's features side by side) and the result is torch's own.

        Example:
            >>> td = TensorDict(a=torch.tensor([3.0, 1.0, 2.0]), batch_size=[3])
            >>> td.cummin(0).values["a"]
            tensor([3., 1., 1.])
        """
        dense = self._with_dense_stacks("cummin")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.cummin(dim, reduce=reduce, return_indices=return_indices)
        dim = _ops.batch_dim(dim, self._batch_size, "cummin")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor: batch dims, then all features
            x = _ops.leaves_as_one(leaves, self._batch_size, "feature", "cummin")
            out = torch.cummin(x, dim)
            return out if return_indices else out[0]
        new = [torch.cummin(x, dim) for x in leaves]
        values, indices = _ops.unzip(new)
        result = rebuild(values)
        if return_indices:
            return torch.return_types.cummin((result, rebuild(indices)))
        return result

    def cummax(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative maximum of every leaf along one batch dim, with its indices.

        Returns ``torch.return_types.cummax(values, indices)``, two tensordicts with the
        batch size of the input (``return_indices=False``: the values only).

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, 3.0, 2.0]), batch_size=[3])
            >>> td.cummax(0, return_indices=False)["a"]
            tensor([1., 3., 3.])
            >>> td.cummax(0).indices["a"]
            tensor([0, 1, 1])
        """
        dense = self._with_dense_stacks("cummax")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.cummax(dim, reduce=reduce, return_indices=return_indices)
        dim = _ops.batch_dim(dim, self._batch_size, "cummax")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        if reduce:  # the leaves as one tensor: batch dims, then all features
            x = _ops.leaves_as_one(leaves, self._batch_size, "feature", "cummax")
            out = torch.cummax(x, dim)
            return out if return_indices else out[0]
        new = [torch.cummax(x, dim) for x in leaves]
        values, indices = _ops.unzip(new)
        result = rebuild(values)
        if return_indices:
            return torch.return_types.cummax((result, rebuild(indices)))
        return result

    def softmax(self, dim: int, dtype: torch.dtype | None = None):
        """Softmax of every leaf along one batch dim.

        The batch size stays. ``dtype`` casts each leaf before the softmax, as for
        ``torch.softmax``.

        Example:
            >>> td = TensorDict(a=torch.zeros(2, 3), batch_size=[2])
            >>> td.softmax(0)["a"]
            tensor([[0.5000, 0.5000, 0.5000],
                    [0.5000, 0.5000, 0.5000]])
        """
        dense = self._with_dense_stacks("softmax")
        if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
            return dense.softmax(dim, dtype)
        dim = _ops.batch_dim(dim, self._batch_size, "softmax")
        leaves, rebuild = self._batched_leaves_and_rebuild()
        new = [torch.softmax(x, dim, dtype) for x in leaves]
        return rebuild(new)

    # ---- Stacking and concatenation (spec/stacking.yaml) ----

    @classmethod
    def stack(cls, input, dim: int = 0, *, out=None):
        """Stack tensordicts along a new batch dim ``dim``.

        Every tensordict has the same batch size; the result has one more batch dim, of
        size ``len(input)``, at ``dim`` (which may be one past the last batch dim). Each
        leaf is ``torch.stack`` of the matching leaves.

        Example:
            >>> tds = [TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4]) for _ in range(2)]
            >>> stacked = torch.stack(tds, 1)
            >>> stacked.batch_size, stacked["key 1"].shape
            (torch.Size([3, 2, 4]), torch.Size([3, 2, 4, 5]))
            >>> torch.stack([tds[0], tds[1].exclude("key 1")], 0)
            Traceback (most recent call last):
            ...
            tensordict._errors.MismatchedKeysError: The sets of keys in the tensordicts to stack are exclusive: stack(): the tensordicts must have the same keys: key ('key 1',) is missing from tensordict 1. Consider using `LazyStackedTensorDict.maybe_dense_stack` instead
        """
        if _ops.lazy_legacy():  # set_lazy_legacy(True): a LazyStackedTensorDict instead
            return _ops.lazy_stack(input, dim, out=out)
        input, dim, new_batch_size = _ops.stack_rule(input, dim, "stack")
        leaves, rebuild = input[0]._batched_leaves_and_rebuild()
        new = [torch.stack(x, dim) for x in _ops.stacked_leaves(input, leaves, "stack")]
        if out is not None:  # the results are written into out
            return _ops.write_into(
                rebuild(new, batch_size=new_batch_size), out, new, "stack"
            )
        input_names = _ops.first_names(input, same=True)
        return _ops.stack_non_tensor(
            input,
            rebuild(
                new,
                batch_size=new_batch_size,
                names=input_names and _ops.inserted_names(input_names, dim),
            ),
            dim,
            "stack",
        )

    @classmethod
    def cat(cls, input, dim: int = 0, *, out=None):
        """Concatenate tensordicts along batch dim ``dim``.

        The batch sizes agree but at ``dim``, where the result's size is the sum of
        theirs. Each leaf is ``torch.cat`` of the matching leaves.

        Example:
            >>> tds = [TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4]) for _ in range(2)]
            >>> joined = torch.cat(tds, 0)
            >>> joined.batch_size, joined["key 1"].shape
            (torch.Size([6, 4]), torch.Size([6, 4, 5]))
        """
        input, dim, new_batch_size = _ops.cat_rule(input, dim, "cat")
        leaves, rebuild = input[0]._batched_leaves_and_rebuild()
        new = [torch.cat(x, dim) for x in _ops.stacked_leaves(input, leaves, "cat")]
        if out is not None:  # the results are written into out
            return _ops.write_into(
                rebuild(new, batch_size=new_batch_size), out, new, "cat"
            )
        input_names = _ops.first_names(input)
        return _ops.stack_non_tensor(
            input,
            rebuild(new, batch_size=new_batch_size, names=input_names and input_names),
            dim,
            "cat",
        )
