# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/tensorclass_ops.py.jinja; do not edit
"""The generated ops of tensorclasses (:class:`tensordict.TensorClass`).

Rendered from the same YAML op specs under ``spec/`` as the methods of
:class:`tensordict.TensorDict`, whatever their family: each method forwards to the
tensordict the tensorclass wraps (``self._tensordict``), with the op's own signature,
and re-wraps what comes back (``TensorClass._wrap``): a tensordict becomes an instance
of the user's class, a tuple or list of tensordicts a tuple or list of instances, the
wrapped tensordict itself (in-place ops) the tensorclass itself; anything else (a
tensor, a bool, ``NotImplemented``) is returned as it is. Tensorclass arguments are
unwrapped first, so that the tensordict op sees tensordicts only. Ops whose receiver is
the class (stacking) call the ``TensorDict`` classmethod and wrap the result in ``cls``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch  # noqa: F401  (signatures name torch types)

from tensordict._registry import container_class
from tensordict.base import NO_DEFAULT  # noqa: F401  (a default in the signatures)

if TYPE_CHECKING:
    from typing import Any, Callable, List, Literal, Sequence, Tuple

    import numpy as np
    from torch import Tensor
    from typing_extensions import Self

    from tensordict._keys import NestedKey
    from tensordict._ops import CompatibleType, TensorCollection
    from tensordict.base import TensorDictBase

__all__ = ["TensorClassGeneratedOps"]


def _unwrap(value):
    """A tensorclass argument as the tensordict it wraps (in a list or tuple too);
    anything else as it is."""
    if getattr(value, "_is_tensorclass", False):
        return value._tensordict
    kind = type(value)
    if (kind is list or kind is tuple) and any(
        getattr(v, "_is_tensorclass", False) for v in value
    ):
        return kind(
            v._tensordict if getattr(v, "_is_tensorclass", False) else v for v in value
        )
    return value


class TensorClassGeneratedOps:
    """The generated ops, as a mixin that :class:`~tensordict.TensorClass` inherits."""

    __slots__ = ()

    # ---- Attributes and aggregates over the leaves (spec/attributes.yaml) ----

    @property
    def dtype(self):
        """The dtype every leaf has, or None when they differ.

        Reads :attr:`TensorDict.dtype`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.dtype)

    @property
    def requires_grad(self):
        """Whether any leaf requires gradients.

        Reads :attr:`TensorDict.requires_grad`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.requires_grad)

    @property
    def grad(self):
        """The gradients of the leaves, as a tensordict.

        Reads :attr:`TensorDict.grad`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.grad)

    @property
    def data(self):
        """The leaves' ``.data``, as a tensordict shaped like this one.

        Reads :attr:`TensorDict.data`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.data)

    @property
    def is_cpu(self):
        """Whether the tensordict's device is the CPU.

        Reads :attr:`TensorDict.is_cpu`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.is_cpu)

    @property
    def is_cuda(self):
        """Whether the tensordict's device is a CUDA device.

        Reads :attr:`TensorDict.is_cuda`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.is_cuda)

    @property
    def is_meta(self):
        """Whether the tensordict's device is the meta device.

        Reads :attr:`TensorDict.is_meta`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.is_meta)

    def is_contiguous(self) -> bool:
        """Whether every leaf is contiguous.

        Forwards to :meth:`TensorDict.is_contiguous`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.is_contiguous())

    def is_floating_point(self) -> bool:
        """Whether every leaf has a floating-point dtype.

        Forwards to :meth:`TensorDict.is_floating_point`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.is_floating_point())

    def data_ptr(self, *, storage: bool = False):
        """The address of every leaf's first element, as a tensordict of integers.

        Forwards to :meth:`TensorDict.data_ptr`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.data_ptr(storage=storage))

    def bytes(self, *, count_duplicates: bool = True) -> int:
        """The number of bytes the leaves' elements take.

        Forwards to :meth:`TensorDict.bytes`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.bytes(count_duplicates=count_duplicates))

    def param_count(self, *, count_duplicates: bool = True) -> int:
        """The number of elements of the leaves.

        Forwards to :meth:`TensorDict.param_count`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.param_count(count_duplicates=count_duplicates)
        )

    def stack_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves stacked into one tensor.

        Forwards to :meth:`TensorDict.stack_from_tensordict`; tensordict results are re-wrapped.
        """
        result = self._tensordict.stack_from_tensordict(dim, sorted=sorted, out=out)
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    def cat_from_tensordict(
        self,
        dim: int = 0,
        *,
        sorted: bool | List[NestedKey] | None = None,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The leaves concatenated into one tensor.

        Forwards to :meth:`TensorDict.cat_from_tensordict`; tensordict results are re-wrapped.
        """
        result = self._tensordict.cat_from_tensordict(dim, sorted=sorted, out=out)
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    # ---- Gradients (spec/autograd.yaml) ----

    # ---- Batch-shape ops (spec/shape.yaml) ----

    def view(
        self,
        *shape: int,
        size: list | tuple | torch.Size | None = None,
        batch_size: torch.Size | None = None,
    ):
        """A view with a new batch shape (or a dtype view of every leaf).

        Forwards to :meth:`TensorDict.view`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.view(*shape, size=size, batch_size=batch_size)
        )

    def reshape(self, *args, **kwargs) -> Self:
        """A new batch shape, as a view where possible.

        Forwards to :meth:`TensorDict.reshape`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.reshape(*args, **kwargs))

    def permute(self, *args, **kwargs):
        """The batch dims reordered (a view).

        Forwards to :meth:`TensorDict.permute`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.permute(*args, **kwargs))

    def transpose(self, dim0, dim1):
        """Two batch dims swapped (a view).

        Forwards to :meth:`TensorDict.transpose`; tensordict results are re-wrapped.
        """
        dim0 = _unwrap(dim0)
        dim1 = _unwrap(dim1)
        return self._wrap(self._tensordict.transpose(dim0, dim1))

    def swapdims(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        Forwards to :meth:`TensorDict.swapdims`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.swapdims(axis0, axis1))

    def swapaxes(self, axis0: int, axis1: int):
        """Two batch dims swapped (a view); an alias of :meth:`transpose`.

        Forwards to :meth:`TensorDict.swapaxes`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.swapaxes(axis0, axis1))

    def movedim(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view).

        Forwards to :meth:`TensorDict.movedim`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.movedim(source, destination))

    def moveaxis(
        self, source: int | tuple[int, ...], destination: int | tuple[int, ...]
    ):
        """Batch dims moved to new positions (a view); an alias of :meth:`movedim`.

        Forwards to :meth:`TensorDict.moveaxis`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.moveaxis(source, destination))

    def squeeze(self, *args, **kwargs):
        """Size-one batch dims removed (a view).

        Forwards to :meth:`TensorDict.squeeze`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.squeeze(*args, **kwargs))

    def unsqueeze(self, *args, **kwargs):
        """A batch dim of size one inserted (a view).

        Forwards to :meth:`TensorDict.unsqueeze`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.unsqueeze(*args, **kwargs))

    def flatten(
        self,
        start_dim: int | None = None,
        end_dim: int | None = None,
        *,
        inplace: bool = False,
    ):
        """Batch dims ``start_dim`` to ``end_dim`` merged into one.

        Forwards to :meth:`TensorDict.flatten`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.flatten(start_dim, end_dim, inplace=inplace))

    def unflatten(self, dim, unflattened_size, *, inplace: bool = False):
        """One batch dim split into several (a view).

        Forwards to :meth:`TensorDict.unflatten`; tensordict results are re-wrapped.
        """
        dim = _unwrap(dim)
        unflattened_size = _unwrap(unflattened_size)
        return self._wrap(
            self._tensordict.unflatten(dim, unflattened_size, inplace=inplace)
        )

    def expand(self, *args, **kwargs) -> Self:
        """Size-one batch dims grown and new leading batch dims added (a view).

        Forwards to :meth:`TensorDict.expand`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.expand(*args, **kwargs))

    def expand_as(self, other: TensorCollection | torch.Tensor) -> Self:
        """Expanded to the shape of a tensor or the batch size of a tensordict.

        Forwards to :meth:`TensorDict.expand_as`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.expand_as(other))

    def broadcast_to(self, shape: tuple[int, ...]):
        """Broadcast to a new batch shape (a view).

        Forwards to :meth:`TensorDict.broadcast_to`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.broadcast_to(shape))

    def repeat(self, *repeats: int, inplace: bool = False) -> Self:
        """Every leaf tiled along the batch dims (a copy).

        Forwards to :meth:`TensorDict.repeat`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.repeat(*repeats, inplace=inplace))

    def repeat_interleave(
        self,
        repeats: torch.Tensor | int,
        dim: int | None = None,
        *,
        output_size: int | None = None,
        inplace: bool = False,
    ) -> Self:
        """Each element of a batch dim repeated in place (a copy).

        Forwards to :meth:`TensorDict.repeat_interleave`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.repeat_interleave(
                repeats, dim, output_size=output_size, inplace=inplace
            )
        )

    def tile(self, dims: tuple[int, ...]):
        """Every leaf tiled along the batch dims, as ``torch.tile`` (a copy).

        Forwards to :meth:`TensorDict.tile`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.tile(dims))

    def flip(self, dims: int | tuple[int, ...]):
        """The order of elements reversed along batch dims (a copy).

        Forwards to :meth:`TensorDict.flip`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.flip(dims))

    def fliplr(self):
        """Batch dim 1 reversed (a copy).

        Forwards to :meth:`TensorDict.fliplr`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.fliplr())

    def flipud(self):
        """Batch dim 0 reversed (a copy).

        Forwards to :meth:`TensorDict.flipud`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.flipud())

    def roll(
        self,
        shifts: int | tuple[int, ...],
        dims: int | tuple[int, ...] = None,
        *,
        inplace: bool = False,
    ):
        """Elements rolled along batch dims (a copy).

        Forwards to :meth:`TensorDict.roll`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.roll(shifts, dims, inplace=inplace))

    def rot90(self, k: int = 1, dims: tuple[int, int] = (0, 1)):
        """A rotation by 90 degrees in the plane of two batch dims (a copy).

        Forwards to :meth:`TensorDict.rot90`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.rot90(k, dims))

    def atleast_1d(self):
        """At least one batch dim (a view).

        Forwards to :meth:`TensorDict.atleast_1d`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.atleast_1d())

    def atleast_2d(self):
        """At least two batch dims (a view).

        Forwards to :meth:`TensorDict.atleast_2d`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.atleast_2d())

    def atleast_3d(self):
        """At least three batch dims (a view).

        Forwards to :meth:`TensorDict.atleast_3d`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.atleast_3d())

    def narrow(self, dim: int, start: int, length: int):
        """A slice of ``length`` elements of one batch dim (a view).

        Forwards to :meth:`TensorDict.narrow`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.narrow(dim, start, length))

    def contiguous(self, *, canonical: bool = False, inplace: bool = False) -> Self:
        """Every leaf laid out contiguously in memory.

        Forwards to :meth:`TensorDict.contiguous`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.contiguous(canonical=canonical, inplace=inplace)
        )

    # ---- Binary, operator and comparison ops (spec/binary.yaml) ----

    def add(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self + alpha * other``, leaf by leaf.

        Forwards to :meth:`TensorDict.add`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.add(other, alpha=alpha, default=default))

    def add_(
        self,
        other: TensorCollection | torch.Tensor | float,
        *,
        alpha: float | None = None,
    ) -> Self:
        """In-place :meth:`add`, returning ``self``.

        Forwards to :meth:`TensorDict.add_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.add_(other, alpha=alpha))

    def __add__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td + other``: same as :meth:`add`.

        Forwards to :meth:`TensorDict.__add__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__add__(other))

    def __radd__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other + td``: same as :meth:`add`.

        Forwards to :meth:`TensorDict.__radd__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__radd__(other))

    def __iadd__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td += other``: same as :meth:`add_`.

        Forwards to :meth:`TensorDict.__iadd__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__iadd__(other))

    def sub(
        self,
        other: TensorDictBase | torch.Tensor | float,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self - alpha * other``, leaf by leaf.

        Forwards to :meth:`TensorDict.sub`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.sub(other, alpha=alpha, default=default))

    def sub_(
        self, other: TensorDictBase | torch.Tensor | float, alpha: float | None = None
    ):
        """In-place :meth:`sub`, returning ``self``.

        Forwards to :meth:`TensorDict.sub_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.sub_(other, alpha))

    def __sub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td - other``: same as :meth:`sub`.

        Forwards to :meth:`TensorDict.__sub__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__sub__(other))

    def __isub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td -= other``: same as :meth:`sub_`.

        Forwards to :meth:`TensorDict.__isub__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__isub__(other))

    def rsub(
        self,
        other: TensorDictBase | torch.Tensor | float,
        *,
        alpha: float | None = None,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``other - alpha * self``, leaf by leaf.

        Forwards to :meth:`TensorDict.rsub`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.rsub(other, alpha=alpha, default=default))

    def __rsub__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other - td``: same as :meth:`rsub`.

        Forwards to :meth:`TensorDict.__rsub__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rsub__(other))

    def mul(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self * other``, leaf by leaf.

        Forwards to :meth:`TensorDict.mul`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.mul(other, default=default))

    def mul_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`mul`, returning ``self``.

        Forwards to :meth:`TensorDict.mul_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.mul_(other))

    def __mul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td * other``: same as :meth:`mul`.

        Forwards to :meth:`TensorDict.__mul__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__mul__(other))

    def __rmul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other * td``: same as :meth:`mul`.

        Forwards to :meth:`TensorDict.__rmul__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rmul__(other))

    def __imul__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td *= other``: same as :meth:`mul_`.

        Forwards to :meth:`TensorDict.__imul__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__imul__(other))

    def div(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self / other`` (true division), leaf by leaf.

        Forwards to :meth:`TensorDict.div`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.div(other, default=default))

    def div_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`div`, returning ``self``.

        Forwards to :meth:`TensorDict.div_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.div_(other))

    def __truediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td / other``: same as :meth:`div`.

        Forwards to :meth:`TensorDict.__truediv__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__truediv__(other))

    def __itruediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td /= other``: same as :meth:`div_`.

        Forwards to :meth:`TensorDict.__itruediv__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__itruediv__(other))

    def __rtruediv__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other / self`` (true division), leaf by leaf.

        Forwards to :meth:`TensorDict.__rtruediv__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rtruediv__(other))

    def pow(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """``self ** other``, leaf by leaf.

        Forwards to :meth:`TensorDict.pow`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.pow(other, default=default))

    def pow_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`pow`, returning ``self``.

        Forwards to :meth:`TensorDict.pow_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.pow_(other))

    def __pow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td ** other``: same as :meth:`pow`.

        Forwards to :meth:`TensorDict.__pow__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__pow__(other))

    def __ipow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td **= other``: same as :meth:`pow_`.

        Forwards to :meth:`TensorDict.__ipow__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__ipow__(other))

    def __rpow__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other ** self``, leaf by leaf.

        Forwards to :meth:`TensorDict.__rpow__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rpow__(other))

    def mod(self, other: TensorCollection | torch.Tensor) -> Self:
        """``self % other`` (Python's modulus: the sign of the divisor), leaf by leaf.

        Forwards to :meth:`TensorDict.mod`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.mod(other))

    def __mod__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td % other``: same as :meth:`mod`.

        Forwards to :meth:`TensorDict.__mod__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__mod__(other))

    def maximum(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Elementwise maximum of every leaf and the operand.

        Forwards to :meth:`TensorDict.maximum`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.maximum(other, default=default))

    def maximum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`maximum`, returning ``self``.

        Forwards to :meth:`TensorDict.maximum_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.maximum_(other))

    def minimum(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Elementwise minimum of every leaf and the operand.

        Forwards to :meth:`TensorDict.minimum`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.minimum(other, default=default))

    def minimum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`minimum`, returning ``self``.

        Forwards to :meth:`TensorDict.minimum_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.minimum_(other))

    def clamp_min(
        self,
        other: TensorDictBase | torch.Tensor,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Clamp every leaf from below at the operand.

        Forwards to :meth:`TensorDict.clamp_min`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.clamp_min(other, default))

    def clamp_min_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`clamp_min`, returning ``self``.

        Forwards to :meth:`TensorDict.clamp_min_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.clamp_min_(other))

    def clamp_max(
        self,
        other: TensorDictBase | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Clamp every leaf from above at the operand.

        Forwards to :meth:`TensorDict.clamp_max`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.clamp_max(other, default=default))

    def clamp_max_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`clamp_max`, returning ``self``.

        Forwards to :meth:`TensorDict.clamp_max_`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.clamp_max_(other))

    def clamp(
        self,
        min: TensorDictBase | torch.Tensor | float | None = None,
        max: TensorDictBase | torch.Tensor | float | None = None,
        *,
        out=None,
    ) -> Self:
        """Clamp every leaf into ``[min, max]``.

        Forwards to :meth:`TensorDict.clamp`; tensordict results are re-wrapped.
        """
        min = _unwrap(min)
        max = _unwrap(max)
        result = self._tensordict.clamp(min, max, out=out)
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    def lerp(
        self,
        end: TensorCollection | torch.Tensor,
        weight: TensorCollection | torch.Tensor | float,
    ) -> Self:
        """Linear interpolation ``self + weight * (end - self)``, leaf by leaf.

        Forwards to :meth:`TensorDict.lerp`; tensordict results are re-wrapped.
        """
        end = _unwrap(end)
        weight = _unwrap(weight)
        return self._wrap(self._tensordict.lerp(end, weight))

    def lerp_(
        self,
        end: TensorDictBase | torch.Tensor,
        weight: TensorDictBase | torch.Tensor | float,
    ):
        """In-place :meth:`lerp`, returning ``self``.

        Forwards to :meth:`TensorDict.lerp_`; tensordict results are re-wrapped.
        """
        end = _unwrap(end)
        weight = _unwrap(weight)
        return self._wrap(self._tensordict.lerp_(end, weight))

    def addcmul(
        self,
        other1: TensorDictBase | torch.Tensor,
        other2: TensorDictBase | torch.Tensor,
        *,
        value: float | None = 1,
    ) -> Self:
        """``self + value * other1 * other2``, leaf by leaf.

        Forwards to :meth:`TensorDict.addcmul`; tensordict results are re-wrapped.
        """
        other1 = _unwrap(other1)
        other2 = _unwrap(other2)
        return self._wrap(self._tensordict.addcmul(other1, other2, value=value))

    def addcmul_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcmul`, returning ``self``.

        Forwards to :meth:`TensorDict.addcmul_`; tensordict results are re-wrapped.
        """
        other1 = _unwrap(other1)
        other2 = _unwrap(other2)
        return self._wrap(self._tensordict.addcmul_(other1, other2, value=value))

    def addcdiv(
        self,
        other1: TensorDictBase | torch.Tensor,
        other2: TensorDictBase | torch.Tensor,
        value: float | None = 1,
    ) -> Self:
        """``self + value * other1 / other2``, leaf by leaf.

        Forwards to :meth:`TensorDict.addcdiv`; tensordict results are re-wrapped.
        """
        other1 = _unwrap(other1)
        other2 = _unwrap(other2)
        return self._wrap(self._tensordict.addcdiv(other1, other2, value))

    def addcdiv_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcdiv`, returning ``self``.

        Forwards to :meth:`TensorDict.addcdiv_`; tensordict results are re-wrapped.
        """
        other1 = _unwrap(other1)
        other2 = _unwrap(other2)
        return self._wrap(self._tensordict.addcdiv_(other1, other2, value=value))

    def bitwise_and(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Bitwise AND of every leaf and the operand.

        Forwards to :meth:`TensorDict.bitwise_and`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.bitwise_and(other, default=default))

    def __and__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``td & other``: same as :meth:`bitwise_and`.

        Forwards to :meth:`TensorDict.__and__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__and__(other))

    def __rand__(self, other: TensorCollection | torch.Tensor | float) -> Self:
        """``other & td``: same as :meth:`bitwise_and`.

        Forwards to :meth:`TensorDict.__rand__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rand__(other))

    def logical_and(
        self,
        other: TensorCollection | torch.Tensor,
        *,
        default: str | CompatibleType | None = None,
    ) -> Self:
        """Logical AND of every leaf and the operand, as booleans.

        Forwards to :meth:`TensorDict.logical_and`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        default = _unwrap(default)
        return self._wrap(self._tensordict.logical_and(other, default=default))

    def __or__(self, other: Any) -> Self | bool:
        """Bitwise OR of every leaf and the operand (``td | other``).

        Forwards to :meth:`TensorDict.__or__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__or__(other))

    def __ror__(self, other: TensorCollection | torch.Tensor) -> Self:
        """``other | td``: same as :meth:`__or__`.

        Forwards to :meth:`TensorDict.__ror__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__ror__(other))

    def __xor__(self, other: Any) -> Self | bool:
        """Bitwise exclusive OR of every leaf and the operand (``td ^ other``).

        Forwards to :meth:`TensorDict.__xor__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__xor__(other))

    def __rxor__(self, other: TensorCollection | torch.Tensor | float):
        """``other ^ td``: same as :meth:`__xor__`.

        Forwards to :meth:`TensorDict.__rxor__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__rxor__(other))

    def __eq__(self, other: Any) -> Self | bool:
        """Elementwise ``==``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__eq__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__eq__(other))

    def __ne__(self, other: Any) -> Self | bool:
        """Elementwise ``!=``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__ne__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__ne__(other))

    def __lt__(self, other: Any) -> Self | bool:
        """Elementwise ``<``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__lt__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__lt__(other))

    def __le__(self, other: Any) -> Self | bool:
        """Elementwise ``<=``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__le__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__le__(other))

    def __gt__(self, other: Any) -> Self | bool:
        """Elementwise ``>``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__gt__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__gt__(other))

    def __ge__(self, other: Any) -> Self | bool:
        """Elementwise ``>=``: a tensordict of booleans.

        Forwards to :meth:`TensorDict.__ge__`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        return self._wrap(self._tensordict.__ge__(other))

    # ---- Dtype casts (spec/cast.yaml) ----

    def float(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float32``.

        Forwards to :meth:`TensorDict.float`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.float(cast_filter=cast_filter))

    def double(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float64``.

        Forwards to :meth:`TensorDict.double`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.double(cast_filter=cast_filter))

    def half(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float16``.

        Forwards to :meth:`TensorDict.half`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.half(cast_filter=cast_filter))

    def bfloat16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.bfloat16``.

        Forwards to :meth:`TensorDict.bfloat16`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.bfloat16(cast_filter=cast_filter))

    def int(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int32``.

        Forwards to :meth:`TensorDict.int`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.int(cast_filter=cast_filter))

    def bool(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.bool``.

        Forwards to :meth:`TensorDict.bool`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.bool(cast_filter=cast_filter))

    def float16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float16``.

        Forwards to :meth:`TensorDict.float16`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.float16(cast_filter=cast_filter))

    def float32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float32``.

        Forwards to :meth:`TensorDict.float32`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.float32(cast_filter=cast_filter))

    def float64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.float64``.

        Forwards to :meth:`TensorDict.float64`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.float64(cast_filter=cast_filter))

    def int8(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int8``.

        Forwards to :meth:`TensorDict.int8`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.int8(cast_filter=cast_filter))

    def int16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int16``.

        Forwards to :meth:`TensorDict.int16`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.int16(cast_filter=cast_filter))

    def int32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int32``.

        Forwards to :meth:`TensorDict.int32`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.int32(cast_filter=cast_filter))

    def int64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.int64``.

        Forwards to :meth:`TensorDict.int64`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.int64(cast_filter=cast_filter))

    def uint8(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint8``.

        Forwards to :meth:`TensorDict.uint8`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.uint8(cast_filter=cast_filter))

    def uint16(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint16``.

        Forwards to :meth:`TensorDict.uint16`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.uint16(cast_filter=cast_filter))

    def uint32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint32``.

        Forwards to :meth:`TensorDict.uint32`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.uint32(cast_filter=cast_filter))

    def uint64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.uint64``.

        Forwards to :meth:`TensorDict.uint64`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.uint64(cast_filter=cast_filter))

    def complex32(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex32``.

        Forwards to :meth:`TensorDict.complex32`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.complex32(cast_filter=cast_filter))

    def complex64(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex64``.

        Forwards to :meth:`TensorDict.complex64`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.complex64(cast_filter=cast_filter))

    def complex128(self, *, cast_filter: Callable | None = None) -> Self:
        """Cast every leaf to ``torch.complex128``.

        Forwards to :meth:`TensorDict.complex128`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.complex128(cast_filter=cast_filter))

    def type(
        self, dst_type: torch.dtype, *, cast_filter: Callable | None = None
    ) -> Self:
        """Cast every leaf to the dtype ``dst_type``.

        Forwards to :meth:`TensorDict.type`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.type(dst_type, cast_filter=cast_filter))

    # ---- Devices, memory and copies (spec/device.yaml) ----

    def to(self, *args, **kwargs) -> Self:
        """Move every leaf to a device, cast it to a dtype, or both.

        Forwards to :meth:`TensorDict.to`; tensordict results are re-wrapped.
        """
        args = tuple(_unwrap(v) for v in args)
        return self._wrap(self._tensordict.to(*args, **kwargs))

    def cpu(self, **kwargs) -> Self:
        """Move every leaf to the CPU.

        Forwards to :meth:`TensorDict.cpu`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cpu(**kwargs))

    def cuda(self, device: int | str | torch.device | None = None, **kwargs) -> Self:
        """Move every leaf to a CUDA device (the current one by default).

        Forwards to :meth:`TensorDict.cuda`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cuda(device, **kwargs))

    def pin_memory(self, num_threads: int | None = None, inplace: bool = False) -> Self:
        """Copy every leaf into pinned (page-locked) memory.

        Forwards to :meth:`TensorDict.pin_memory`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.pin_memory(num_threads, inplace))

    def pin_memory_(self, num_threads: int = 0) -> Self:
        """Pin every leaf's memory, in place.

        Forwards to :meth:`TensorDict.pin_memory_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.pin_memory_(num_threads))

    def share_memory_(self) -> Self:
        """Move every leaf's storage to shared memory, and lock the tensordict.

        Forwards to :meth:`TensorDict.share_memory_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.share_memory_())

    def detach(self) -> Self:
        """The leaves detached from the autograd graph.

        Forwards to :meth:`TensorDict.detach`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.detach())

    def detach_(self) -> Self:
        """In-place :meth:`detach`, returning ``self``.

        Forwards to :meth:`TensorDict.detach_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.detach_())

    def requires_grad_(self, requires_grad=True) -> Self:
        """Make autograd record operations on every leaf (or stop it).

        Forwards to :meth:`TensorDict.requires_grad_`; tensordict results are re-wrapped.
        """
        requires_grad = _unwrap(requires_grad)
        return self._wrap(self._tensordict.requires_grad_(requires_grad))

    def zero_(self) -> Self:
        """Fill every leaf with zeros, in place.

        Forwards to :meth:`TensorDict.zero_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.zero_())

    def fill_(self, key: NestedKey, value: float | bool) -> Self:
        """Fill the entry at ``key`` with ``value``, in place.

        Forwards to :meth:`TensorDict.fill_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.fill_(key, value))

    def zero_grad(self, set_to_none: bool = True) -> Self:
        """Reset the gradients of every leaf.

        Forwards to :meth:`TensorDict.zero_grad`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.zero_grad(set_to_none))

    def clone(self, recurse: bool = True, **kwargs) -> Self:
        """A copy of the tensordict and of its leaves.

        Forwards to :meth:`TensorDict.clone`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.clone(recurse, **kwargs))

    def as_tensor(self) -> Self:
        """Every leaf as a plain ``torch.Tensor``.

        Forwards to :meth:`TensorDict.as_tensor`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.as_tensor())

    def numpy(self) -> np.ndarray | dict[str, Any]:
        """The leaves as numpy arrays, in a nested dict.

        Forwards to :meth:`TensorDict.numpy`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.numpy())

    def tolist(
        self,
        *,
        convert_nodes: bool = True,
        convert_tensors: bool | Literal["numpy"] = False,
        tolist_first: bool = False,
        as_linked_list: bool = False,
    ) -> List[Any]:
        """The tensordict as nested lists along its batch dims.

        Forwards to :meth:`TensorDict.tolist`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.tolist(
                convert_nodes=convert_nodes,
                convert_tensors=convert_tensors,
                tolist_first=tolist_first,
                as_linked_list=as_linked_list,
            )
        )

    def record_stream(self, stream: torch.cuda.Stream) -> Self:
        """Mark every leaf as used by a CUDA stream.

        Forwards to :meth:`TensorDict.record_stream`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.record_stream(stream))

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

        Forwards to :meth:`TensorDict.new_zeros`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.new_zeros(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
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

        Forwards to :meth:`TensorDict.new_ones`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.new_ones(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
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

        Forwards to :meth:`TensorDict.new_empty`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.new_empty(
                *size,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
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

        Forwards to :meth:`TensorDict.new_full`; tensordict results are re-wrapped.
        """
        fill_value = _unwrap(fill_value)
        return self._wrap(
            self._tensordict.new_full(
                size,
                fill_value,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                layout=layout,
                pin_memory=pin_memory,
                empty_lazy=empty_lazy,
            )
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

        Forwards to :meth:`TensorDict.new_tensor`; tensordict results are re-wrapped.
        """
        data = _unwrap(data)
        return self._wrap(
            self._tensordict.new_tensor(
                data,
                dtype=dtype,
                device=device,
                requires_grad=requires_grad,
                pin_memory=pin_memory,
            )
        )

    # ---- Splitting, gathering and masking (spec/indexing.yaml) ----

    def split(
        self, split_size: int | list[int], dim: int = 0
    ) -> tuple[TensorDictBase, ...]:
        """Split into tensordicts along batch dim ``dim``.

        Forwards to :meth:`TensorDict.split`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.split(split_size, dim))

    def chunk(self, chunks: int, dim: int = 0) -> tuple[TensorCollection, ...]:
        """Split into ``chunks`` tensordicts of (nearly) equal size along ``dim``.

        Forwards to :meth:`TensorDict.chunk`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.chunk(chunks, dim))

    def tensor_split(
        self,
        indices_or_sections: int | list[int] | tuple[int, ...] | torch.Tensor,
        dim=0,
    ) -> tuple[TensorDictBase, ...]:
        """Split along ``dim`` into sections, or at the given indices.

        Forwards to :meth:`TensorDict.tensor_split`; tensordict results are re-wrapped.
        """
        dim = _unwrap(dim)
        return self._wrap(self._tensordict.tensor_split(indices_or_sections, dim))

    def unbind(self, dim: int) -> tuple[TensorDictBase, ...]:
        """One tensordict per index of batch dim ``dim``, without that dim.

        Forwards to :meth:`TensorDict.unbind`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.unbind(dim))

    def gather(
        self, dim: int, index: Tensor, out: T | None = None, *, inplace: bool = False
    ) -> Self:
        """Gather the items of batch dim ``dim`` that ``index`` picks.

        Forwards to :meth:`TensorDict.gather`; tensordict results are re-wrapped.
        """
        result = self._tensordict.gather(dim, index, out, inplace=inplace)
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    def masked_fill(self, mask: Tensor, value: float | bool) -> Self:
        """Fill the batch items where ``mask`` is true with ``value``.

        Forwards to :meth:`TensorDict.masked_fill`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.masked_fill(mask, value))

    def masked_fill_(self, mask: Tensor, value: float | bool) -> Self:
        """In-place :meth:`masked_fill`, returning ``self``.

        Forwards to :meth:`TensorDict.masked_fill_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.masked_fill_(mask, value))

    def masked_select(self, mask: Tensor, *, inplace: bool = False) -> Self:
        """The batch items where ``mask`` is true, as one batch dim.

        Forwards to :meth:`TensorDict.masked_select`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.masked_select(mask, inplace=inplace))

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

        Forwards to :meth:`TensorDict.where`; tensordict results are re-wrapped.
        """
        other = _unwrap(other)
        result = self._tensordict.where(
            condition, other, out=out, pad=pad, update_batch_size=update_batch_size
        )
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    # ---- Losses (spec/loss.yaml) ----

    # ---- Pointwise (unary) ops (spec/pointwise.yaml) ----

    def abs(self) -> Self:
        """Absolute value of every leaf.

        Forwards to :meth:`TensorDict.abs`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.abs())

    def abs_(self) -> Self:
        """In-place :meth:`abs`, returning ``self``.

        Forwards to :meth:`TensorDict.abs_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.abs_())

    def __abs__(self) -> Self:
        """``abs(td)``: same as :meth:`abs`.

        Forwards to :meth:`TensorDict.__abs__`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.__abs__())

    def acos(self) -> Self:
        """Inverse cosine of every leaf.

        Forwards to :meth:`TensorDict.acos`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.acos())

    def acos_(self) -> Self:
        """In-place :meth:`acos`, returning ``self``.

        Forwards to :meth:`TensorDict.acos_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.acos_())

    def asin(self) -> Self:
        """Inverse sine of every leaf.

        Forwards to :meth:`TensorDict.asin`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.asin())

    def asin_(self) -> Self:
        """In-place :meth:`asin`, returning ``self``.

        Forwards to :meth:`TensorDict.asin_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.asin_())

    def atan(self) -> Self:
        """Inverse tangent of every leaf.

        Forwards to :meth:`TensorDict.atan`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.atan())

    def atan_(self) -> Self:
        """In-place :meth:`atan`, returning ``self``.

        Forwards to :meth:`TensorDict.atan_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.atan_())

    def ceil(self) -> Self:
        """Round every leaf up to the nearest integer value.

        Forwards to :meth:`TensorDict.ceil`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.ceil())

    def ceil_(self) -> Self:
        """In-place :meth:`ceil`, returning ``self``.

        Forwards to :meth:`TensorDict.ceil_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.ceil_())

    def cos(self) -> Self:
        """Cosine of every leaf (radians).

        Forwards to :meth:`TensorDict.cos`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cos())

    def cos_(self) -> Self:
        """In-place :meth:`cos`, returning ``self``.

        Forwards to :meth:`TensorDict.cos_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cos_())

    def cosh(self) -> Self:
        """Hyperbolic cosine of every leaf.

        Forwards to :meth:`TensorDict.cosh`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cosh())

    def cosh_(self) -> Self:
        """In-place :meth:`cosh`, returning ``self``.

        Forwards to :meth:`TensorDict.cosh_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.cosh_())

    def erf(self) -> Self:
        """Gauss error function of every leaf.

        Forwards to :meth:`TensorDict.erf`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.erf())

    def erf_(self) -> Self:
        """In-place :meth:`erf`, returning ``self``.

        Forwards to :meth:`TensorDict.erf_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.erf_())

    def erfc(self) -> Self:
        """Complementary error function (``1 - erf``) of every leaf.

        Forwards to :meth:`TensorDict.erfc`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.erfc())

    def erfc_(self) -> Self:
        """In-place :meth:`erfc`, returning ``self``.

        Forwards to :meth:`TensorDict.erfc_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.erfc_())

    def exp(self) -> Self:
        """Exponential of every leaf.

        Forwards to :meth:`TensorDict.exp`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.exp())

    def exp_(self) -> Self:
        """In-place :meth:`exp`, returning ``self``.

        Forwards to :meth:`TensorDict.exp_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.exp_())

    def expm1(self) -> Self:
        """``exp(x) - 1`` of every leaf.

        Forwards to :meth:`TensorDict.expm1`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.expm1())

    def expm1_(self) -> Self:
        """In-place :meth:`expm1`, returning ``self``.

        Forwards to :meth:`TensorDict.expm1_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.expm1_())

    def floor(self) -> Self:
        """Round every leaf down to the nearest integer value.

        Forwards to :meth:`TensorDict.floor`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.floor())

    def floor_(self) -> Self:
        """In-place :meth:`floor`, returning ``self``.

        Forwards to :meth:`TensorDict.floor_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.floor_())

    def frac(self) -> Self:
        """Fractional part of every leaf, keeping the sign.

        Forwards to :meth:`TensorDict.frac`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.frac())

    def frac_(self) -> Self:
        """In-place :meth:`frac`, returning ``self``.

        Forwards to :meth:`TensorDict.frac_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.frac_())

    def lgamma(self) -> Self:
        """Natural log of the absolute value of the gamma function, leaf by leaf.

        Forwards to :meth:`TensorDict.lgamma`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.lgamma())

    def lgamma_(self) -> Self:
        """In-place :meth:`lgamma`, returning ``self``.

        Forwards to :meth:`TensorDict.lgamma_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.lgamma_())

    def log(self) -> Self:
        """Natural logarithm of every leaf.

        Forwards to :meth:`TensorDict.log`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log())

    def log_(self) -> Self:
        """In-place :meth:`log`, returning ``self``.

        Forwards to :meth:`TensorDict.log_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log_())

    def log10(self) -> Self:
        """Base-10 logarithm of every leaf.

        Forwards to :meth:`TensorDict.log10`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log10())

    def log10_(self) -> Self:
        """In-place :meth:`log10`, returning ``self``.

        Forwards to :meth:`TensorDict.log10_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log10_())

    def log1p(self) -> Self:
        """``log(1 + x)`` of every leaf.

        Forwards to :meth:`TensorDict.log1p`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log1p())

    def log1p_(self) -> Self:
        """In-place :meth:`log1p`, returning ``self``.

        Forwards to :meth:`TensorDict.log1p_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log1p_())

    def log2(self) -> Self:
        """Base-2 logarithm of every leaf.

        Forwards to :meth:`TensorDict.log2`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log2())

    def log2_(self) -> Self:
        """In-place :meth:`log2`, returning ``self``.

        Forwards to :meth:`TensorDict.log2_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.log2_())

    def neg(self) -> Self:
        """Negate every leaf.

        Forwards to :meth:`TensorDict.neg`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.neg())

    def neg_(self) -> Self:
        """In-place :meth:`neg`, returning ``self``.

        Forwards to :meth:`TensorDict.neg_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.neg_())

    def __neg__(self) -> Self:
        """``-td``: same as :meth:`neg`.

        Forwards to :meth:`TensorDict.__neg__`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.__neg__())

    def reciprocal(self) -> Self:
        """``1 / x`` for every leaf.

        Forwards to :meth:`TensorDict.reciprocal`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.reciprocal())

    def reciprocal_(self) -> Self:
        """In-place :meth:`reciprocal`, returning ``self``.

        Forwards to :meth:`TensorDict.reciprocal_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.reciprocal_())

    def round(self) -> Self:
        """Round every leaf to the nearest integer value, halves to even.

        Forwards to :meth:`TensorDict.round`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.round())

    def round_(self) -> Self:
        """In-place :meth:`round`, returning ``self``.

        Forwards to :meth:`TensorDict.round_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.round_())

    def sigmoid(self) -> Self:
        """Logistic sigmoid ``1 / (1 + exp(-x))`` of every leaf.

        Forwards to :meth:`TensorDict.sigmoid`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sigmoid())

    def sigmoid_(self) -> Self:
        """In-place :meth:`sigmoid`, returning ``self``.

        Forwards to :meth:`TensorDict.sigmoid_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sigmoid_())

    def sign(self) -> Self:
        """Sign (-1, 0 or 1) of every leaf.

        Forwards to :meth:`TensorDict.sign`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sign())

    def sign_(self) -> Self:
        """In-place :meth:`sign`, returning ``self``.

        Forwards to :meth:`TensorDict.sign_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sign_())

    def sin(self) -> Self:
        """Sine of every leaf (radians).

        Forwards to :meth:`TensorDict.sin`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sin())

    def sin_(self) -> Self:
        """In-place :meth:`sin`, returning ``self``.

        Forwards to :meth:`TensorDict.sin_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sin_())

    def sinh(self) -> Self:
        """Hyperbolic sine of every leaf.

        Forwards to :meth:`TensorDict.sinh`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sinh())

    def sinh_(self) -> Self:
        """In-place :meth:`sinh`, returning ``self``.

        Forwards to :meth:`TensorDict.sinh_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sinh_())

    def sqrt(self) -> Self:
        """Square root of every leaf.

        Forwards to :meth:`TensorDict.sqrt`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sqrt())

    def sqrt_(self) -> Self:
        """In-place :meth:`sqrt`, returning ``self``.

        Forwards to :meth:`TensorDict.sqrt_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.sqrt_())

    def tan(self) -> Self:
        """Tangent of every leaf (radians).

        Forwards to :meth:`TensorDict.tan`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.tan())

    def tan_(self) -> Self:
        """In-place :meth:`tan`, returning ``self``.

        Forwards to :meth:`TensorDict.tan_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.tan_())

    def tanh(self) -> Self:
        """Hyperbolic tangent of every leaf.

        Forwards to :meth:`TensorDict.tanh`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.tanh())

    def tanh_(self) -> Self:
        """In-place :meth:`tanh`, returning ``self``.

        Forwards to :meth:`TensorDict.tanh_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.tanh_())

    def trunc(self) -> Self:
        """Round every leaf towards zero.

        Forwards to :meth:`TensorDict.trunc`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.trunc())

    def trunc_(self) -> Self:
        """In-place :meth:`trunc`, returning ``self``.

        Forwards to :meth:`TensorDict.trunc_`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.trunc_())

    def isfinite(self) -> Self:
        """Whether each element of every leaf is finite.

        Forwards to :meth:`TensorDict.isfinite`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.isfinite())

    def isnan(self) -> Self:
        """Whether each element of every leaf is ``nan``.

        Forwards to :meth:`TensorDict.isnan`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.isnan())

    def isneginf(self) -> Self:
        """Whether each element of every leaf is negative infinity.

        Forwards to :meth:`TensorDict.isneginf`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.isneginf())

    def isposinf(self) -> Self:
        """Whether each element of every leaf is positive infinity.

        Forwards to :meth:`TensorDict.isposinf`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.isposinf())

    def isreal(self) -> Self:
        """Whether each element of every leaf is real (zero imaginary part).

        Forwards to :meth:`TensorDict.isreal`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.isreal())

    def __invert__(self) -> Self:
        """Bitwise NOT of every leaf (``~td``).

        Forwards to :meth:`TensorDict.__invert__`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.__invert__())

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

        Forwards to :meth:`TensorDict.sum`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.sum(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
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

        Forwards to :meth:`TensorDict.nansum`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.nansum(dim, keepdim, dtype=dtype, reduce=reduce)
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

        Forwards to :meth:`TensorDict.mean`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.mean(
                dim, keepdim, dtype=dtype, reduce=reduce, key_transform=key_transform
            )
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

        Forwards to :meth:`TensorDict.nanmean`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.nanmean(dim, keepdim, dtype=dtype, reduce=reduce)
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

        Forwards to :meth:`TensorDict.prod`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.prod(dim, keepdim, dtype=dtype, reduce=reduce)
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

        Forwards to :meth:`TensorDict.std`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.std(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
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

        Forwards to :meth:`TensorDict.var`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.var(
                dim,
                keepdim,
                correction=correction,
                reduce=reduce,
                key_transform=key_transform,
            )
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

        Forwards to :meth:`TensorDict.min`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.min(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
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

        Forwards to :meth:`TensorDict.max`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.max(
                dim, keepdim, reduce=reduce, return_indices=return_indices
            )
        )

    def amin(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Minimum of every leaf over batch dims, values only.

        Forwards to :meth:`TensorDict.amin`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.amin(dim, keepdim, reduce=reduce))

    def amax(
        self,
        dim: int | NO_DEFAULT = NO_DEFAULT,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
    ) -> Self | torch.Tensor:
        """Maximum of every leaf over batch dims, values only.

        Forwards to :meth:`TensorDict.amax`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.amax(dim, keepdim, reduce=reduce))

    def all(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether every value is true, over batch dims or overall.

        Forwards to :meth:`TensorDict.all`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.all(dim))

    def any(self, dim: int | None = None) -> bool | TensorCollection:
        """Whether any value is true, over batch dims or overall.

        Forwards to :meth:`TensorDict.any`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.any(dim))

    def logsumexp(self, dim=None, keepdim=False, *, out=None):
        """Log of the summed exponentials of every leaf over batch dims.

        Forwards to :meth:`TensorDict.logsumexp`; tensordict results are re-wrapped.
        """
        dim = _unwrap(dim)
        keepdim = _unwrap(keepdim)
        result = self._tensordict.logsumexp(dim, keepdim, out=out)
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

    def norm(
        self,
        *,
        out=None,
        dtype: torch.dtype | None = None,
        key_transform: Callable[[NestedKey], NestedKey] | None = None,
    ) -> Self:
        """Euclidean norm of every leaf.

        Forwards to :meth:`TensorDict.norm`; tensordict results are re-wrapped.
        """
        result = self._tensordict.norm(
            out=out, dtype=dtype, key_transform=key_transform
        )
        if result is out:  # written into out: out itself, as given
            return result
        return self._wrap(result)

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

        Forwards to :meth:`TensorDict.quantile`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.quantile(
                q,
                dim,
                keepdim,
                interpolation=interpolation,
                reduce=reduce,
                key_transform=key_transform,
            )
        )

    def cummin(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative minimum of every leaf along one batch dim, with its indices.

        Forwards to :meth:`TensorDict.cummin`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.cummin(dim, reduce=reduce, return_indices=return_indices)
        )

    def cummax(
        self, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Self | torch.Tensor:
        """Cumulative maximum of every leaf along one batch dim, with its indices.

        Forwards to :meth:`TensorDict.cummax`; tensordict results are re-wrapped.
        """
        return self._wrap(
            self._tensordict.cummax(dim, reduce=reduce, return_indices=return_indices)
        )

    def softmax(self, dim: int, dtype: torch.dtype | None = None):
        """Softmax of every leaf along one batch dim.

        Forwards to :meth:`TensorDict.softmax`; tensordict results are re-wrapped.
        """
        return self._wrap(self._tensordict.softmax(dim, dtype))

    # ---- Stacking and concatenation (spec/stacking.yaml) ----

    @classmethod
    def stack(cls, input, dim: int = 0, *, out=None):
        """Stack tensordicts along a new batch dim ``dim``.

        Forwards to :meth:`TensorDict.stack`; tensordict results come back as ``cls``.
        """
        input = _unwrap(input)
        return cls._wrap_new(container_class("TensorDict").stack(input, dim, out=out))

    @classmethod
    def cat(cls, input, dim: int = 0, *, out=None):
        """Concatenate tensordicts along batch dim ``dim``.

        Forwards to :meth:`TensorDict.cat`; tensordict results come back as ``cls``.
        """
        input = _unwrap(input)
        return cls._wrap_new(container_class("TensorDict").cat(input, dim, out=out))
