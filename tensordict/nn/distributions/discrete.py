"""Discrete distributions: ``OneHotCategorical`` samples one-hot vectors."""

from __future__ import annotations

import enum
from typing import Sequence

import torch
from torch import distributions as D

__all__ = ["OneHotCategorical", "ReparamGradientStrategy", "rand_one_hot"]


def rand_one_hot(values: torch.Tensor, do_softmax: bool = True) -> torch.Tensor:
    """A one-hot sample (integer) of the categorical distribution whose logits (or,
    with ``do_softmax=False``, probabilities) are the last dim of ``values``.

    >>> sample = rand_one_hot(torch.zeros(4, 3))
    >>> sample.shape, sample.sum(-1).tolist()
    (torch.Size([4, 3]), [1, 1, 1, 1])
    """
    probs = values.softmax(-1) if do_softmax else values
    index = torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1)
    index = index.reshape(probs.shape[:-1])
    return torch.nn.functional.one_hot(index, probs.shape[-1])


class ReparamGradientStrategy(enum.Enum):
    """How :meth:`OneHotCategorical.rsample` lets gradients through a discrete sample:
    straight through (``PassThrough``: the sample, with the gradient of the
    probabilities) or through a relaxed (Gumbel-softmax) sample."""

    PassThrough = "pass_through"
    RelaxedOneHot = "relaxed_one_hot"


class OneHotCategorical(D.Categorical):
    """A categorical distribution over one-hot vectors: ``sample`` and ``mode`` return
    one-hot (integer) tensors, ``log_prob`` takes them, and ``rsample`` returns a float
    one-hot sample that gradients go through (see :class:`ReparamGradientStrategy`).

    >>> import torch
    >>> dist = OneHotCategorical(logits=torch.tensor([0.0, 5.0, 0.0]))
    >>> dist.mode
    tensor([0, 1, 0])
    >>> dist.log_prob(dist.mode).exp().round(decimals=2)
    tensor(0.9900)
    """

    has_rsample = True

    def __init__(
        self,
        logits: torch.Tensor | None = None,
        probs: torch.Tensor | None = None,
        grad_method: ReparamGradientStrategy = ReparamGradientStrategy.PassThrough,
        **kwargs,
    ) -> None:
        super().__init__(probs=probs, logits=logits, **kwargs)
        self.num_classes = self._param.shape[-1]
        self.grad_method = grad_method

    def _one_hot(self, index: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.one_hot(index, self.num_classes)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return super().log_prob(value.argmax(-1))

    @property
    def mode(self) -> torch.Tensor:
        return self._one_hot(self.probs.argmax(-1))

    @property
    def deterministic_sample(self) -> torch.Tensor:
        return self.mode

    def sample(
        self, sample_shape: torch.Size | Sequence[int] | None = None
    ) -> torch.Tensor:
        return self._one_hot(super().sample(torch.Size(sample_shape or ())))

    def rsample(
        self, sample_shape: torch.Size | Sequence[int] | None = None
    ) -> torch.Tensor:
        shape = torch.Size(sample_shape or ())
        if self.grad_method is ReparamGradientStrategy.RelaxedOneHot:
            relaxed = D.RelaxedOneHotCategorical(torch.ones(()), logits=self.logits)
            soft = relaxed.rsample(shape)
            hard = self._one_hot(soft.argmax(-1)).to(soft.dtype)
            return hard + soft - soft.detach()
        hard = self._one_hot(super().sample(shape)).to(self.probs.dtype)
        probs = self.probs.expand_as(hard)
        return hard + probs - probs.detach()
