# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/torch_functions.py.jinja; do not edit
"""``torch.X(td, ...)`` for tensordicts: the table ``tensordict/_torch_function.py``
dispatches through, rendered from every spec entry's ``torch_function`` list.

``TORCH_FUNCTIONS`` maps a torch function to ``(kind, target, params)``:

- ``("method", name, ())``: ``torch.f(td, *args, **kwargs)`` is
  ``td.name(*args, **kwargs)``;
- ``("method", name, params)``: the positional arguments are named by ``params``
  (``self`` is the tensordict) and passed to ``td.name`` by keyword:
  ``torch.where(condition, td, other)`` is ``td.where(condition=condition, other=other)``;
- ``("classmethod", name, ())``: ``torch.f(seq, *args, **kwargs)`` is
  ``type(seq[0]).name(seq, *args, **kwargs)`` (``torch.stack``, ``torch.cat``);
- ``("function", fn, ())``: ``fn(*args, **kwargs)``, for the entries that are no
  method (``method: false``), defined below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import torch

from tensordict import _ops
from tensordict.base import NO_DEFAULT  # noqa: F401  (a default in the signatures)

if TYPE_CHECKING:
    from typing import Any

    from typing_extensions import Self

    from tensordict._ops import CompatibleType, TensorCollection
    from tensordict.base import TensorDictBase

    DeviceType = torch.device | str | int | None

__all__ = ["TORCH_FUNCTIONS"]

# ---- Gradients (spec/autograd.yaml): torch functions only ----


def autograd_grad(
    self,
    inputs: TensorCollection,
    grad_outputs: TensorCollection | torch.Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Self:
    """``torch.autograd.grad(td, inputs, grad_outputs)``: the gradients of a tensordict's leaves.

    One ``torch.autograd.grad`` call: the outputs are the leaves of the tensordict,
    ``grad_outputs`` a tensordict with the same keys (or ``None`` for scalar leaves),
    and ``inputs`` a tensordict whose leaves the gradients are taken with respect to;
    the result is shaped like ``inputs``. With ``allow_unused=True`` an input leaf the
    outputs do not depend on is left out of the result. The other arguments are
    ``torch.autograd.grad``'s.

    Example:
        >>> x = TensorDict(a=torch.ones(3, requires_grad=True), batch_size=[3])
        >>> y = x * 2
        >>> torch.autograd.grad(y, x, torch.ones_like(y))["a"]
        tensor([2., 2., 2.])
    """
    dense = self._with_dense_stacks("autograd_grad")
    if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
        return autograd_grad(
            dense,
            inputs,
            grad_outputs,
            retain_graph,
            create_graph,
            only_inputs,
            allow_unused,
            is_grads_batched,
            materialize_grads,
        )
    leaves, rebuild = self._leaves_and_rebuild()
    grad_outputs_leaves = _ops.operand_leaves(
        self, leaves, grad_outputs, "autograd_grad"
    )
    new = [(x, grad_outputs) for x, grad_outputs in zip(leaves, grad_outputs_leaves)]
    return _ops.grad_result(
        self,
        new,
        inputs,
        retain_graph,
        create_graph,
        allow_unused,
        is_grads_batched,
        materialize_grads,
    )


# ---- Devices, memory and copies (spec/device.yaml): torch functions only ----


def zeros_like(
    self,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.zeros_like(td)``: every leaf replaced by zeros of its shape.

    The keyword arguments of ``torch.zeros_like`` apply to every leaf; ``device``
    also sets the result's device.

    Example:
        >>> td = TensorDict(a=torch.ones(2), b=torch.tensor([1, 2]), batch_size=[2])
        >>> torch.zeros_like(td)["b"]
        tensor([0, 0])
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "zeros_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.zeros_like(x, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


def ones_like(
    self,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.ones_like(td)``: every leaf replaced by ones of its shape.

    As ``torch.zeros_like(td)``, with ones.

    Example:
        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> torch.ones_like(td, dtype=torch.int32)["a"]
        tensor([1, 1], dtype=torch.int32)
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "ones_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.ones_like(x, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


def empty_like(
    self,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.empty_like(td)``: every leaf replaced by an uninitialised one.

    As ``torch.zeros_like(td)``, without filling the new leaves.

    Example:
        >>> td = TensorDict(a=torch.zeros(2, 3), batch_size=[2])
        >>> torch.empty_like(td)["a"].shape
        torch.Size([2, 3])
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "empty_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.empty_like(x, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


def full_like(
    self,
    fill_value,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.full_like(td, fill_value)``: every leaf filled with ``fill_value``.

    Each leaf holds ``fill_value`` in its own dtype (unless ``dtype`` is given).

    Example:
        >>> td = TensorDict(a=torch.zeros(2), b=torch.tensor([1, 2]), batch_size=[2])
        >>> out = torch.full_like(td, 3)
        >>> out["a"], out["b"]
        (tensor([3., 3.]), tensor([3, 3]))
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "full_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.full_like(x, fill_value, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


def rand_like(
    self,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.rand_like(td)``: every leaf replaced by uniform samples in [0, 1).

    Floating leaves only, unless ``dtype`` is a floating dtype (torch raises its
    error for an integer leaf).

    Example:
        >>> td = TensorDict(a=torch.zeros(2, 3), batch_size=[2])
        >>> sample = torch.rand_like(td)["a"]
        >>> sample.shape, bool(((sample >= 0) & (sample < 1)).all())
        (torch.Size([2, 3]), True)
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "rand_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.rand_like(x, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


def randn_like(
    self,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: DeviceType = None,
    requires_grad: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> Self:
    """``torch.randn_like(td)``: every leaf replaced by standard normal samples.

    Floating leaves only, unless ``dtype`` is a floating dtype.

    Example:
        >>> td = TensorDict(a=torch.zeros(2, 3), batch_size=[2])
        >>> torch.randn_like(td)["a"].dtype
        torch.float32
    """
    like, new_device = _ops.like_device_rule(
        self._device, dtype, layout, device, requires_grad, memory_format, "randn_like"
    )
    leaves, rebuild = self._leaves_and_rebuild()
    new = [torch.randn_like(x, **like) for x in leaves]
    return _ops.keep_lock(self, rebuild(new, device=new_device))


# ---- Losses (spec/loss.yaml): torch functions only ----


def l1_loss(
    self,
    target: TensorCollection | torch.Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: torch.Tensor | None = None,
) -> Self:
    """``torch.nn.functional.l1_loss(td, target)``: the mean absolute error of every leaf.

    One ``torch.nn.functional.l1_loss`` per leaf, against ``target``'s leaf of the
    same key; ``reduction`` (and torch's legacy ``size_average``/``reduce``) as for a
    tensor, ``weight`` passed on to every leaf.

    Example:
        >>> td = TensorDict(a=torch.zeros(2, 3), b=torch.ones(2), batch_size=[2])
        >>> target = TensorDict(a=torch.ones(2, 3), b=torch.ones(2), batch_size=[2])
        >>> loss = torch.nn.functional.l1_loss(td, target)
        >>> loss["a"], loss["b"], loss.batch_size
        (tensor(1.), tensor(0.), torch.Size([]))
        >>> torch.nn.functional.l1_loss(td, target, reduction="none")["a"].shape
        torch.Size([2, 3])
    """
    dense = self._with_dense_stacks("l1_loss")
    if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
        return l1_loss(dense, target, size_average, reduce, reduction, weight)
    leaves, rebuild = self._leaves_and_rebuild()
    target_leaves = _ops.operand_leaves(self, leaves, target, "l1_loss")
    new = [
        torch.nn.functional.l1_loss(x, target, size_average, reduce, reduction, weight)
        for x, target in zip(leaves, target_leaves)
    ]
    return _ops.loss_result(self, new, size_average, reduce, reduction)


def mse_loss(
    self,
    target: TensorCollection | torch.Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: torch.Tensor | None = None,
) -> Self:
    """``torch.nn.functional.mse_loss(td, target)``: the mean squared error of every leaf.

    As :func:`l1_loss`, with ``torch.nn.functional.mse_loss``.

    Example:
        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> torch.nn.functional.mse_loss(td, td + 3, reduction="sum")["a"]
        tensor(18.)
    """
    dense = self._with_dense_stacks("mse_loss")
    if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
        return mse_loss(dense, target, size_average, reduce, reduction, weight)
    leaves, rebuild = self._leaves_and_rebuild()
    target_leaves = _ops.operand_leaves(self, leaves, target, "mse_loss")
    new = [
        torch.nn.functional.mse_loss(x, target, size_average, reduce, reduction, weight)
        for x, target in zip(leaves, target_leaves)
    ]
    return _ops.loss_result(self, new, size_average, reduce, reduction)


def smooth_l1_loss(
    self,
    target: TensorCollection | torch.Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Self:
    """``torch.nn.functional.smooth_l1_loss(td, target)``: the Huber-like loss of every leaf.

    As :func:`l1_loss`, with ``torch.nn.functional.smooth_l1_loss``; ``beta`` is the
    threshold between its squared and its absolute part.

    Example:
        >>> td = TensorDict(a=torch.zeros(2), batch_size=[2])
        >>> torch.nn.functional.smooth_l1_loss(td, td + 3, beta=2.0)["a"]
        tensor(2.)
    """
    dense = self._with_dense_stacks("smooth_l1_loss")
    if dense is not self:  # lazy stacks inside: the op runs on their dense stacks
        return smooth_l1_loss(dense, target, size_average, reduce, reduction, beta)
    leaves, rebuild = self._leaves_and_rebuild()
    target_leaves = _ops.operand_leaves(self, leaves, target, "smooth_l1_loss")
    new = [
        torch.nn.functional.smooth_l1_loss(
            x, target, size_average, reduce, reduction, beta
        )
        for x, target in zip(leaves, target_leaves)
    ]
    return _ops.loss_result(self, new, size_average, reduce, reduction)


TORCH_FUNCTIONS: dict[Callable, tuple] = {
    # spec/autograd.yaml
    torch.autograd.grad: ("function", autograd_grad, ()),
    # spec/shape.yaml
    torch.reshape: ("method", "reshape", ()),
    torch.permute: ("method", "permute", ()),
    torch.transpose: ("method", "transpose", ()),
    torch.swapdims: ("method", "swapdims", ()),
    torch.swapaxes: ("method", "swapaxes", ()),
    torch.movedim: ("method", "movedim", ()),
    torch.moveaxis: ("method", "moveaxis", ()),
    torch.squeeze: ("method", "squeeze", ()),
    torch.unsqueeze: ("method", "unsqueeze", ()),
    torch.flatten: ("method", "flatten", ()),
    torch.unflatten: ("method", "unflatten", ()),
    torch.broadcast_to: ("method", "broadcast_to", ()),
    torch.repeat_interleave: ("method", "repeat_interleave", ()),
    torch.tile: ("method", "tile", ()),
    torch.flip: ("method", "flip", ()),
    torch.fliplr: ("method", "fliplr", ()),
    torch.flipud: ("method", "flipud", ()),
    torch.roll: ("method", "roll", ()),
    torch.rot90: ("method", "rot90", ()),
    torch.atleast_1d: ("method", "atleast_1d", ()),
    torch.atleast_2d: ("method", "atleast_2d", ()),
    torch.atleast_3d: ("method", "atleast_3d", ()),
    torch.narrow: ("method", "narrow", ()),
    # spec/binary.yaml
    torch.add: ("method", "add", ()),
    torch.sub: ("method", "sub", ()),
    torch.rsub: ("method", "rsub", ()),
    torch.mul: ("method", "mul", ()),
    torch.div: ("method", "div", ()),
    torch.pow: ("method", "pow", ()),
    torch.remainder: ("method", "mod", ()),
    torch.maximum: ("method", "maximum", ()),
    torch.minimum: ("method", "minimum", ()),
    torch.clamp_min: ("method", "clamp_min", ()),
    torch.clamp_max: ("method", "clamp_max", ()),
    torch.clamp: ("method", "clamp", ()),
    torch.lerp: ("method", "lerp", ()),
    torch.addcmul: ("method", "addcmul", ()),
    torch.addcdiv: ("method", "addcdiv", ()),
    torch.bitwise_and: ("method", "bitwise_and", ()),
    torch.logical_and: ("method", "logical_and", ()),
    torch.bitwise_or: ("method", "__or__", ()),
    torch.bitwise_xor: ("method", "__xor__", ()),
    torch.eq: ("method", "__eq__", ()),
    torch.ne: ("method", "__ne__", ()),
    torch.lt: ("method", "__lt__", ()),
    torch.le: ("method", "__le__", ()),
    torch.gt: ("method", "__gt__", ()),
    torch.ge: ("method", "__ge__", ()),
    # spec/device.yaml
    torch.detach: ("method", "detach", ()),
    torch.zero_: ("method", "zero_", ()),
    torch.clone: ("method", "clone", ()),
    torch.zeros_like: ("function", zeros_like, ()),
    torch.ones_like: ("function", ones_like, ()),
    torch.empty_like: ("function", empty_like, ()),
    torch.full_like: ("function", full_like, ()),
    torch.rand_like: ("function", rand_like, ()),
    torch.randn_like: ("function", randn_like, ()),
    # spec/indexing.yaml
    torch.split: ("method", "split", ()),
    torch.chunk: ("method", "chunk", ()),
    torch.tensor_split: ("method", "tensor_split", ()),
    torch.unbind: ("method", "unbind", ()),
    torch.gather: ("method", "gather", ()),
    torch.masked_fill: ("method", "masked_fill", ()),
    torch.masked_select: ("method", "masked_select", ()),
    torch.where: ("method", "where", ("condition", "self", "other")),
    # spec/loss.yaml
    torch.nn.functional.l1_loss: ("function", l1_loss, ()),
    torch.nn.functional.mse_loss: ("function", mse_loss, ()),
    torch.nn.functional.smooth_l1_loss: ("function", smooth_l1_loss, ()),
    # spec/pointwise.yaml
    torch.abs: ("method", "abs", ()),
    torch.abs_: ("method", "abs_", ()),
    torch.acos: ("method", "acos", ()),
    torch.acos_: ("method", "acos_", ()),
    torch.asin: ("method", "asin", ()),
    torch.asin_: ("method", "asin_", ()),
    torch.atan: ("method", "atan", ()),
    torch.atan_: ("method", "atan_", ()),
    torch.ceil: ("method", "ceil", ()),
    torch.ceil_: ("method", "ceil_", ()),
    torch.cos: ("method", "cos", ()),
    torch.cos_: ("method", "cos_", ()),
    torch.cosh: ("method", "cosh", ()),
    torch.cosh_: ("method", "cosh_", ()),
    torch.erf: ("method", "erf", ()),
    torch.erf_: ("method", "erf_", ()),
    torch.erfc: ("method", "erfc", ()),
    torch.erfc_: ("method", "erfc_", ()),
    torch.exp: ("method", "exp", ()),
    torch.exp_: ("method", "exp_", ()),
    torch.expm1: ("method", "expm1", ()),
    torch.expm1_: ("method", "expm1_", ()),
    torch.floor: ("method", "floor", ()),
    torch.floor_: ("method", "floor_", ()),
    torch.frac: ("method", "frac", ()),
    torch.frac_: ("method", "frac_", ()),
    torch.lgamma: ("method", "lgamma", ()),
    torch.log: ("method", "log", ()),
    torch.log_: ("method", "log_", ()),
    torch.log10: ("method", "log10", ()),
    torch.log10_: ("method", "log10_", ()),
    torch.log1p: ("method", "log1p", ()),
    torch.log1p_: ("method", "log1p_", ()),
    torch.log2: ("method", "log2", ()),
    torch.log2_: ("method", "log2_", ()),
    torch.neg: ("method", "neg", ()),
    torch.neg_: ("method", "neg_", ()),
    torch.reciprocal: ("method", "reciprocal", ()),
    torch.reciprocal_: ("method", "reciprocal_", ()),
    torch.round: ("method", "round", ()),
    torch.round_: ("method", "round_", ()),
    torch.sigmoid: ("method", "sigmoid", ()),
    torch.sigmoid_: ("method", "sigmoid_", ()),
    torch.sign: ("method", "sign", ()),
    torch.sin: ("method", "sin", ()),
    torch.sin_: ("method", "sin_", ()),
    torch.sinh: ("method", "sinh", ()),
    torch.sinh_: ("method", "sinh_", ()),
    torch.sqrt: ("method", "sqrt", ()),
    torch.sqrt_: ("method", "sqrt_", ()),
    torch.tan: ("method", "tan", ()),
    torch.tan_: ("method", "tan_", ()),
    torch.tanh: ("method", "tanh", ()),
    torch.tanh_: ("method", "tanh_", ()),
    torch.trunc: ("method", "trunc", ()),
    torch.trunc_: ("method", "trunc_", ()),
    torch.isfinite: ("method", "isfinite", ()),
    torch.isnan: ("method", "isnan", ()),
    torch.isneginf: ("method", "isneginf", ()),
    torch.isposinf: ("method", "isposinf", ()),
    torch.isreal: ("method", "isreal", ()),
    torch.bitwise_not: ("method", "__invert__", ()),
    # spec/reduction.yaml
    torch.sum: ("method", "sum", ()),
    torch.nansum: ("method", "nansum", ()),
    torch.mean: ("method", "mean", ()),
    torch.nanmean: ("method", "nanmean", ()),
    torch.prod: ("method", "prod", ()),
    torch.std: ("method", "std", ()),
    torch.var: ("method", "var", ()),
    torch.min: ("method", "min", ()),
    torch.max: ("method", "max", ()),
    torch.amin: ("method", "amin", ()),
    torch.amax: ("method", "amax", ()),
    torch.all: ("method", "all", ()),
    torch.any: ("method", "any", ()),
    torch.logsumexp: ("method", "logsumexp", ()),
    torch.quantile: ("method", "quantile", ()),
    torch.cummin: ("method", "cummin", ()),
    torch.cummax: ("method", "cummax", ()),
    torch.softmax: ("method", "softmax", ()),
    # spec/stacking.yaml
    torch.stack: ("classmethod", "stack", ()),
    torch.cat: ("classmethod", "cat", ()),
    torch.concat: ("classmethod", "cat", ()),
    torch.concatenate: ("classmethod", "cat", ()),
}
