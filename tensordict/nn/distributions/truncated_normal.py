"""The normal distribution truncated to an interval ``[a, b]``."""

from __future__ import annotations

import math
from numbers import Number

import torch
from torch import distributions as D
from torch.distributions import constraints
from torch.distributions.utils import broadcast_all

__all__ = ["TruncatedNormal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT_2 = math.sqrt(2.0)


def _phi(x: torch.Tensor) -> torch.Tensor:
    """The standard normal density."""
    return torch.exp(-0.5 * x * x - _LOG_SQRT_2PI)


def _big_phi(x: torch.Tensor) -> torch.Tensor:
    """The standard normal cumulative distribution function."""
    return 0.5 * (1 + torch.erf(x / _SQRT_2))


def _big_phi_inv(p: torch.Tensor) -> torch.Tensor:
    return _SQRT_2 * torch.erfinv(2 * p - 1)


class TruncatedNormal(D.Distribution):
    """A normal distribution of location ``loc`` and scale ``scale`` restricted to
    ``[a, b]`` (bounds in the same units as ``loc``), renormalised. Closed forms for
    ``mean``, ``variance``, ``entropy``, ``cdf``, ``icdf`` and ``log_prob``;
    ``rsample`` inverts the cdf of a uniform sample, so gradients reach every
    parameter.

    >>> import torch
    >>> dist = TruncatedNormal(torch.zeros(3), torch.ones(3), -1.0, 1.0)
    >>> dist.mean
    tensor([0., 0., 0.])
    >>> bool((dist.rsample((100,)).abs() <= 1).all())
    True
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "a": constraints.real,
        "b": constraints.real,
    }
    has_rsample = True

    def __init__(
        self,
        loc: Number | torch.Tensor,
        scale: Number | torch.Tensor,
        a: Number | torch.Tensor,
        b: Number | torch.Tensor,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale, self.a, self.b = broadcast_all(loc, scale, a, b)
        if (self.a >= self.b).any():
            raise ValueError(
                f"TruncatedNormal: the lower bound a ({a}) must be below the upper "
                f"bound b ({b})"
            )
        self._alpha = (self.a - self.loc) / self.scale
        self._beta = (self.b - self.loc) / self.scale
        self._phi_alpha = _phi(self._alpha)
        self._phi_beta = _phi(self._beta)
        self._cdf_alpha = _big_phi(self._alpha)
        eps = torch.finfo(self.loc.dtype).eps
        self._z = (_big_phi(self._beta) - self._cdf_alpha).clamp_min(eps)
        super().__init__(batch_shape=self.loc.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.a, self.b)

    @property
    def mean(self) -> torch.Tensor:
        return self.loc + self.scale * (self._phi_alpha - self._phi_beta) / self._z

    @property
    def variance(self) -> torch.Tensor:
        alpha_term = torch.nan_to_num(self._alpha * self._phi_alpha)
        beta_term = torch.nan_to_num(self._beta * self._phi_beta)
        shift = (self._phi_alpha - self._phi_beta) / self._z
        return self.scale**2 * (1 + (alpha_term - beta_term) / self._z - shift**2)

    @property
    def mode(self) -> torch.Tensor:
        raise NotImplementedError(
            "TruncatedNormal does not implement mode; use mean (or loc clamped to "
            "[a, b])"
        )

    def entropy(self) -> torch.Tensor:
        alpha_term = torch.nan_to_num(self._alpha * self._phi_alpha)
        beta_term = torch.nan_to_num(self._beta * self._phi_beta)
        return (
            0.5 * math.log(2 * math.pi * math.e)
            + self.scale.log()
            + self._z.log()
            + (alpha_term - beta_term) / (2 * self._z)
        )

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        xi = (value - self.loc) / self.scale
        return ((_big_phi(xi) - self._cdf_alpha) / self._z).clamp(0, 1)

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        p = self._cdf_alpha + value * self._z
        eps = torch.finfo(self.loc.dtype).eps
        x = self.loc + self.scale * _big_phi_inv(p.clamp(eps, 1 - eps))
        return torch.min(torch.max(x, self.a), self.b)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        xi = (value - self.loc) / self.scale
        return -0.5 * xi * xi - _LOG_SQRT_2PI - self.scale.log() - self._z.log()

    def rsample(self, sample_shape=torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(torch.Size(sample_shape))
        uniform = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(uniform)
