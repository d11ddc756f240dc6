"""Continuous distributions and the modules that shape their parameters.

``NormalParamExtractor`` and ``AddStateIndependentNormalScale`` turn a network's output
into a ``(loc, scale)`` pair; ``Delta`` is the distribution of one value (what a
deterministic policy samples from); ``TanhNormal`` is a normal squashed into
``(low, high)``.
"""

from __future__ import annotations

from numbers import Number
from typing import Sequence

import torch
from torch import distributions as D, nn
from torch.distributions import constraints

from tensordict.nn.utils import mappings

__all__ = [
    "AddStateIndependentNormalScale",
    "Delta",
    "NormalParamExtractor",
    "TanhNormal",
]


class NormalParamExtractor(nn.Module):
    """Split the last dim of a tensor in two halves: a location, and a scale made
    positive by ``scale_mapping`` (see :func:`~tensordict.nn.mappings`) and at least
    ``scale_lb``. Further input tensors are passed through after them.

    >>> import torch
    >>> loc, scale = NormalParamExtractor()(torch.zeros(2, 4))
    >>> loc.shape, scale
    (torch.Size([2, 2]), tensor([[1., 1.],
            [1., 1.]]))
    """

    def __init__(
        self, scale_mapping: str = "biased_softplus_1.0", scale_lb: Number = 1e-4
    ) -> None:
        super().__init__()
        self.scale_mapping = scale_mapping
        self.scale_lb = scale_lb
        self._mapping = mappings(scale_mapping)

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if not tensors:
            raise TypeError("NormalParamExtractor needs at least one tensor")
        first, *rest = tensors
        if first.shape[-1] % 2:
            raise ValueError(
                f"NormalParamExtractor splits the last dim in two halves; a tensor of "
                f"shape {tuple(first.shape)} has an odd last dim"
            )
        loc, scale = first.chunk(2, -1)
        scale = self._mapping(scale).clamp_min(self.scale_lb)
        return (loc, scale, *rest)

    def extra_repr(self) -> str:
        return f"scale_mapping={self.scale_mapping!r}, scale_lb={self.scale_lb}"


class AddStateIndependentNormalScale(nn.Module):
    """Pair a location with a learned scale that does not depend on the input: returns
    ``(loc, scale, *rest)`` with ``scale = scale_mapping(param)`` (at least
    ``scale_lb``), broadcast to the location's shape. ``make_param=False`` keeps the
    scale as a buffer (not trained).

    >>> import torch
    >>> loc, scale = AddStateIndependentNormalScale(3)(torch.zeros(2, 3))
    >>> scale
    tensor([[1., 1., 1.],
            [1., 1., 1.]], grad_fn=<ExpandBackward0>)
    """

    def __init__(
        self,
        scale_shape: torch.Size | int | tuple | None = None,
        *,
        scale_mapping: str = "exp",
        scale_lb: Number = 1e-4,
        device: torch.device | None = None,
        make_param: bool = True,
        init_value: float = 0.0,
    ) -> None:
        super().__init__()
        if scale_shape is None:
            scale_shape = torch.Size(())
        elif isinstance(scale_shape, int):
            scale_shape = torch.Size((scale_shape,))
        else:
            scale_shape = torch.Size(scale_shape)
        self.scale_mapping = scale_mapping
        self.scale_lb = scale_lb
        self._mapping = mappings(scale_mapping)
        value = torch.full(scale_shape, float(init_value), device=device)
        if make_param:
            self.state_independent_scale = nn.Parameter(value)
        else:
            self.register_buffer("state_independent_scale", value)

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        loc, *rest = tensors
        param = self.state_independent_scale
        if loc.shape[loc.ndim - param.ndim :] != param.shape:
            raise RuntimeError(
                f"AddStateIndependentNormalScale: the location has shape "
                f"{tuple(loc.shape)}, whose trailing dims do not match the scale's "
                f"shape {tuple(param.shape)}"
            )
        scale = self._mapping(param).clamp_min(self.scale_lb).expand_as(loc)
        return (loc, scale, *rest)

    def extra_repr(self) -> str:
        return (
            f"scale_shape={tuple(self.state_independent_scale.shape)}, "
            f"scale_mapping={self.scale_mapping!r}, scale_lb={self.scale_lb}"
        )


class Delta(D.Distribution):
    """The distribution of a single value ``param``: sampling returns it, its
    log-probability is ``+inf`` at it (within ``atol``/``rtol``) and ``-inf``
    elsewhere. By default the last dim of ``param`` is the event dim.

    >>> import torch
    >>> delta = Delta(torch.ones(3))
    >>> delta.sample(), delta.log_prob(torch.ones(3)), delta.log_prob(torch.zeros(3))
    (tensor([1., 1., 1.]), tensor(inf), tensor(-inf))
    """

    arg_constraints: dict = {}
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        param: torch.Tensor,
        atol: float = 1e-6,
        rtol: float = 1e-6,
        batch_shape: torch.Size | Sequence[int] | None = None,
        event_shape: torch.Size | Sequence[int] | None = None,
    ) -> None:
        if batch_shape is None and event_shape is None:
            batch_shape = param.shape[:-1]
            event_shape = param.shape[-1:]
        elif batch_shape is None:
            event_shape = torch.Size(event_shape)
            batch_shape = param.shape[: param.ndim - len(event_shape)]
        elif event_shape is None:
            batch_shape = torch.Size(batch_shape)
            event_shape = param.shape[len(batch_shape) :]
        self.param = param
        self.atol = atol
        self.rtol = rtol
        super().__init__(
            batch_shape=torch.Size(batch_shape),
            event_shape=torch.Size(event_shape),
            validate_args=False,
        )

    def update(self, param: torch.Tensor) -> None:
        """Point the distribution at another value of the same shape."""
        self.param = param

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        equal = torch.isclose(value, self.param, atol=self.atol, rtol=self.rtol)
        if self.event_shape:
            equal = equal.flatten(-len(self.event_shape)).all(-1)
        inf = torch.full_like(equal, float("inf"), dtype=self.param.dtype)
        return torch.where(equal, inf, -inf)

    def rsample(self, sample_shape: torch.Size | Sequence[int] = ()) -> torch.Tensor:
        return self.param.expand(*sample_shape, *self.param.shape)

    def sample(self, sample_shape: torch.Size | Sequence[int] = ()) -> torch.Tensor:
        with torch.no_grad():
            return self.rsample(sample_shape)

    @property
    def mode(self) -> torch.Tensor:
        return self.param

    @property
    def mean(self) -> torch.Tensor:
        return self.param

    @property
    def deterministic_sample(self) -> torch.Tensor:
        return self.param


class TanhNormal(D.TransformedDistribution):
    """A normal distribution squashed by ``tanh`` and rescaled into ``(low, high)``;
    the last ``event_dims`` dims are the event (1 by default). ``tanh_loc=True`` passes
    the location through ``tanh`` first. Its ``deterministic_sample`` (the squashed
    location) stands in for the mode, which has no closed form.

    >>> import torch
    >>> dist = TanhNormal(torch.zeros(2, 3), torch.ones(2, 3), low=-2.0, high=2.0)
    >>> sample = dist.rsample()
    >>> bool(sample.abs().max() < 2), dist.log_prob(sample).shape
    (True, torch.Size([2]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.greater_than(0.0)}
    has_rsample = True

    def __init__(
        self,
        loc: torch.Tensor,
        scale: torch.Tensor,
        low: float | torch.Tensor = -1.0,
        high: float | torch.Tensor = 1.0,
        event_dims: int | None = None,
        tanh_loc: bool = False,
    ) -> None:
        if event_dims is None:
            event_dims = min(1, loc.ndim)
        if not isinstance(low, torch.Tensor):
            low = torch.as_tensor(low, device=loc.device, dtype=loc.dtype)
        if not isinstance(high, torch.Tensor):
            high = torch.as_tensor(high, device=loc.device, dtype=loc.dtype)
        if (high <= low).any():
            raise ValueError(f"TanhNormal: high ({high}) must be above low ({low})")
        if tanh_loc:
            loc = loc.tanh()
        self.loc = loc
        self.scale = scale
        self.low = low
        self.high = high
        base = D.Normal(loc, scale)
        if event_dims:
            base = D.Independent(base, event_dims)
        transforms = [
            D.TanhTransform(cache_size=1),
            D.AffineTransform((high + low) / 2, (high - low) / 2, event_dim=event_dims),
        ]
        super().__init__(base, transforms, validate_args=False)

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def deterministic_sample(self) -> torch.Tensor:
        center, half = (self.high + self.low) / 2, (self.high - self.low) / 2
        return center + half * self.loc.tanh()

    @property
    def mode(self) -> torch.Tensor:
        raise NotImplementedError(
            "TanhNormal has no closed-form mode; use deterministic_sample (the "
            "squashed location) or an empirical estimate"
        )
