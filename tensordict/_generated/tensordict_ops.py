# generated from spec/binary.yaml, spec/cast.yaml, spec/pointwise.yaml by codegen/templates/tensordict_ops.py.jinja; do not edit
"""The generated ops of :class:`tensordict.TensorDict`.

Rendered from the YAML op specs under ``spec/`` by ``python -m codegen``; the reference
pages under ``docs/reference/`` come from the same entries. Every method does its Python
work once per call: collect the leaves, make one ``torch._foreach_*`` call where torch
has one (one list comprehension otherwise), rebuild the tree without re-validating it.
The methods use only the primitives that ``docs/architecture.md`` lists:
``_leaves_and_rebuild``, ``_leaves`` and ``_operand_leaves``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from tensordict import _ops

if TYPE_CHECKING:
    from typing import Any, Callable

    from typing_extensions import Self

    from tensordict._ops import CompatibleType, TensorCollection
    from tensordict.base import TensorDictBase

__all__ = ["TensorDictGeneratedOps"]


class TensorDictGeneratedOps:
    """The generated ops, as a mixin that :class:`~tensordict.TensorDict` inherits."""

    __slots__ = ()

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "add", default)
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
        return rebuild(new)

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
        other_leaves = _ops.operand_leaves(self, leaves, other, "add_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "sub", default)
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
        return rebuild(new)

    def sub_(
        self, other: TensorDictBase | torch.Tensor | float, alpha: float | None = None
    ):
        """In-place :meth:`sub`, returning ``self``.

        ``self - alpha * other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "sub_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "rsub", default)
        if alpha is None:
            new = [torch.rsub(x, other) for x, other in zip(leaves, other_leaves)]
        else:
            new = [
                torch.rsub(x, other, alpha=alpha)
                for x, other in zip(leaves, other_leaves)
            ]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "mul", default)
        new = _ops.try_foreach(torch._foreach_mul, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.mul(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def mul_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`mul`, returning ``self``.

        ``self * other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "mul_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "div", default)
        new = _ops.try_foreach(torch._foreach_div, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.div(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def div_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`div`, returning ``self``.

        ``self / other`` (true division), leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "div_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__rtruediv__")
        new = [other / x for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "pow", default)
        new = _ops.try_foreach(torch._foreach_pow, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.pow(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def pow_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`pow`, returning ``self``.

        ``self ** other``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "pow_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__rpow__")
        new = [torch.pow(other, x) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "mod")
        new = [torch.remainder(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "maximum", default)
        new = _ops.try_foreach(torch._foreach_maximum, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.maximum(x, torch.as_tensor(other))
                for x, other in zip(leaves, other_leaves)
            ]
        return rebuild(new)

    def maximum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`maximum`, returning ``self``.

        Elementwise maximum of every leaf and the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "maximum_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "minimum", default)
        new = _ops.try_foreach(torch._foreach_minimum, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.minimum(x, torch.as_tensor(other))
                for x, other in zip(leaves, other_leaves)
            ]
        return rebuild(new)

    def minimum_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`minimum`, returning ``self``.

        Elementwise minimum of every leaf and the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "minimum_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "clamp_min", default)
        new = _ops.try_foreach(torch._foreach_clamp_min, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.clamp_min(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def clamp_min_(self, other: TensorDictBase | torch.Tensor) -> Self:
        """In-place :meth:`clamp_min`, returning ``self``.

        Clamp every leaf from below at the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "clamp_min_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "clamp_max", default)
        new = _ops.try_foreach(torch._foreach_clamp_max, leaves, other_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [torch.clamp_max(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

    def clamp_max_(self, other: TensorCollection | torch.Tensor) -> Self:
        """In-place :meth:`clamp_max`, returning ``self``.

        Clamp every leaf from above at the operand. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other_leaves = _ops.operand_leaves(self, leaves, other, "clamp_max_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        min_leaves = _ops.operand_leaves(self, leaves, min, "clamp")
        max_leaves = _ops.operand_leaves(self, leaves, max, "clamp")
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
        leaves, rebuild = self._leaves_and_rebuild()
        end_leaves = _ops.operand_leaves(self, leaves, end, "lerp")
        weight_leaves = _ops.operand_leaves(self, leaves, weight, "lerp")
        new = _ops.try_foreach(torch._foreach_lerp, leaves, end_leaves, weight_leaves)
        if new is None:  # foreach rejected the leaves: go leaf by leaf
            new = [
                torch.lerp(x, end, weight)
                for x, end, weight in zip(leaves, end_leaves, weight_leaves)
            ]
        return rebuild(new)

    def lerp_(
        self,
        end: TensorDictBase | torch.Tensor,
        weight: TensorDictBase | torch.Tensor | float,
    ):
        """In-place :meth:`lerp`, returning ``self``.

        Linear interpolation ``self + weight * (end - self)``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        end_leaves = _ops.operand_leaves(self, leaves, end, "lerp_")
        weight_leaves = _ops.operand_leaves(self, leaves, weight, "lerp_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other1_leaves = _ops.operand_leaves(self, leaves, other1, "addcmul")
        other2_leaves = _ops.operand_leaves(self, leaves, other2, "addcmul")
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
        return rebuild(new)

    def addcmul_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcmul`, returning ``self``.

        ``self + value * other1 * other2``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other1_leaves = _ops.operand_leaves(self, leaves, other1, "addcmul_")
        other2_leaves = _ops.operand_leaves(self, leaves, other2, "addcmul_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other1_leaves = _ops.operand_leaves(self, leaves, other1, "addcdiv")
        other2_leaves = _ops.operand_leaves(self, leaves, other2, "addcdiv")
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
        return rebuild(new)

    def addcdiv_(self, other1, other2, *, value: float | None = 1):
        """In-place :meth:`addcdiv`, returning ``self``.

        ``self + value * other1 / other2``, leaf by leaf. Writes into the stored tensors.
        """
        leaves = self._leaves()
        other1_leaves = _ops.operand_leaves(self, leaves, other1, "addcdiv_")
        other2_leaves = _ops.operand_leaves(self, leaves, other2, "addcdiv_")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "bitwise_and", default)
        new = [torch.bitwise_and(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "logical_and", default)
        new = [torch.logical_and(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__or__")
        new = [torch.bitwise_or(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__xor__")
        new = [torch.bitwise_xor(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__eq__")
        new = [torch.eq(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__ne__")
        new = [torch.ne(x, other) for x, other in zip(leaves, other_leaves)]
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__lt__")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__le__")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__gt__")
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
        leaves, rebuild = self._leaves_and_rebuild()
        other_leaves = _ops.operand_leaves(self, leaves, other, "__ge__")
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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float32) for x in leaves])
        return rebuild([x.to(torch.float32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float64) for x in leaves])
        return rebuild([x.to(torch.float64) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float16) for x in leaves])
        return rebuild([x.to(torch.float16) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.bfloat16) for x in leaves])
        return rebuild([x.to(torch.bfloat16) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.int32) for x in leaves])
        return rebuild([x.to(torch.int32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.bool) for x in leaves])
        return rebuild([x.to(torch.bool) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float16) for x in leaves])
        return rebuild([x.to(torch.float16) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float32) for x in leaves])
        return rebuild([x.to(torch.float32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.float64) for x in leaves])
        return rebuild([x.to(torch.float64) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.int8) for x in leaves])
        return rebuild([x.to(torch.int8) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.int16) for x in leaves])
        return rebuild([x.to(torch.int16) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.int32) for x in leaves])
        return rebuild([x.to(torch.int32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.int64) for x in leaves])
        return rebuild([x.to(torch.int64) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.uint8) for x in leaves])
        return rebuild([x.to(torch.uint8) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.uint16) for x in leaves])
        return rebuild([x.to(torch.uint16) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.uint32) for x in leaves])
        return rebuild([x.to(torch.uint32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.uint64) for x in leaves])
        return rebuild([x.to(torch.uint64) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.complex32) for x in leaves])
        return rebuild([x.to(torch.complex32) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.complex64) for x in leaves])
        return rebuild([x.to(torch.complex64) if cast_filter(x) else x for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(torch.complex128) for x in leaves])
        return rebuild(
            [x.to(torch.complex128) if cast_filter(x) else x for x in leaves]
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
        leaves, rebuild = self._leaves_and_rebuild()
        if cast_filter is None:
            return rebuild([x.to(dst_type) for x in leaves])
        return rebuild([x.to(dst_type) if cast_filter(x) else x for x in leaves])

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        return rebuild(new)

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
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.isfinite(x) for x in leaves])

    def isnan(self) -> Self:
        """Whether each element of every leaf is ``nan``.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([1.0, float("inf"), float("nan")]), batch_size=[3])
            >>> td.isnan()["a"]
            tensor([False, False,  True])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.isnan(x) for x in leaves])

    def isneginf(self) -> Self:
        """Whether each element of every leaf is negative infinity.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([-float("inf"), float("inf"), 0.0]), batch_size=[3])
            >>> td.isneginf()["a"]
            tensor([ True, False, False])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.isneginf(x) for x in leaves])

    def isposinf(self) -> Self:
        """Whether each element of every leaf is positive infinity.

        Returns a tensordict of boolean leaves.

        Example:
            >>> td = TensorDict(a=torch.tensor([-float("inf"), float("inf"), 0.0]), batch_size=[3])
            >>> td.isposinf()["a"]
            tensor([False,  True, False])
        """
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.isposinf(x) for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.isreal(x) for x in leaves])

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
        leaves, rebuild = self._leaves_and_rebuild()
        return rebuild([torch.bitwise_not(x) for x in leaves])
