"""CompositeDistribution: several distributions over the entries of one tensordict.

Each part is a distribution built from the parameters under its key in ``params``; a
sample is a tensordict holding every part's sample at its key (or at the key
``name_map`` gives it). Log-probabilities and entropies come back per part, in a
tensordict (``<name>_log_prob`` next to each sample), or summed into one tensor over
the batch dims when :func:`~tensordict.nn.composite_lp_aggregate` is on.
"""

from __future__ import annotations

import collections.abc
from typing import Callable

import torch
from torch import distributions as D

from tensordict._keys import NestedKey, unravel_key
from tensordict._registry import container_class
from tensordict.base import TensorDictBase
from tensordict.nn.utils import composite_lp_aggregate

__all__ = ["CompositeDistribution"]


def _add_suffix(key: NestedKey, suffix: str) -> NestedKey:
    """``key`` with ``suffix`` added to its last part: ``("a", "b")`` -> ``("a", "b_log_prob")``."""
    if isinstance(key, str):
        return key + suffix
    return key[:-1] + (key[-1] + suffix,)


def _sum_to_batch(value: torch.Tensor, batch_dims: int) -> torch.Tensor:
    if value.ndim > batch_dims:
        return value.flatten(batch_dims).sum(-1)
    return value


def _deterministic(dist: D.Distribution) -> torch.Tensor:
    """The sample a deterministic policy takes: ``deterministic_sample`` if the
    distribution has one, else its mode, else its mean."""
    value = getattr(dist, "deterministic_sample", None)
    if value is not None:
        return value
    try:
        return dist.mode
    except (NotImplementedError, RuntimeError):  # Wishart's mode overflows
        pass
    return dist.mean


class CompositeDistribution(D.Distribution, collections.abc.Mapping):
    """A distribution over a tensordict, one part per key of ``distribution_map``.

    Args:
        params: a tensordict holding, under each key of ``distribution_map``, the
            keyword arguments of that part's distribution (``{"loc": ..., "scale":
            ...}``).
        distribution_map: ``{key: distribution class}``.

    Keyword Args:
        name_map: where each part's sample goes (its key by default).
        extra_kwargs: ``{key: dict}`` of further keyword arguments per part.
        log_prob_key: the key of the summed log-probability (``"sample_log_prob"``).
        entropy_key: the key of the summed entropy (``"entropy"``).

    >>> import torch
    >>> from torch import distributions as D
    >>> from tensordict import TensorDict
    >>> params = TensorDict({"cont": {"loc": torch.zeros(3, 4), "scale": torch.ones(3, 4)},
    ...                      ("nested", "disc"): {"logits": torch.zeros(3, 10)}}, [3])
    >>> dist = CompositeDistribution(params, {"cont": D.Normal, ("nested", "disc"): D.Categorical})
    >>> sample = dist.sample()
    >>> sample["cont"].shape, sample["nested", "disc"].shape
    (torch.Size([3, 4]), torch.Size([3]))
    >>> list(dist.log_prob(sample).keys(True, True))
    ['cont_log_prob', ('nested', 'disc_log_prob')]
    """

    arg_constraints: dict = {}

    def __init__(
        self,
        params: TensorDictBase,
        distribution_map: dict,
        *,
        name_map: dict | None = None,
        extra_kwargs: dict | None = None,
        log_prob_key: NestedKey | None = None,
        entropy_key: NestedKey | None = None,
    ) -> None:
        extra = {unravel_key(k): v for k, v in (extra_kwargs or {}).items()}
        dists = {}
        for key, dist_class in distribution_map.items():
            key = unravel_key(key)
            part = params.get(key, None)
            if part is None:
                raise KeyError(
                    f"CompositeDistribution: no parameters at key {key!r} for its "
                    f"{getattr(dist_class, '__name__', dist_class)} part (the "
                    f"parameters' keys: {sorted(map(str, params.keys(True, True)))})"
                )
            kwargs = dict(part.items()) if isinstance(part, TensorDictBase) else {}
            kwargs.update(extra.get(key, {}))
            dists[key] = dist_class(**kwargs)
        self._setup(dists, params.batch_size, name_map, log_prob_key, entropy_key)

    def _setup(self, dists, batch_size, name_map, log_prob_key, entropy_key) -> None:
        names = {unravel_key(k): unravel_key(v) for k, v in (name_map or {}).items()}
        # each part is known by where its sample goes (0.15.3: ``dists``, ``dist[key]``
        # and iteration give the mapped names; TorchRL walks ``dists`` to sample)
        self.dists = {names.get(key, key): dist for key, dist in dists.items()}
        self.name_map = {name: name for name in self.dists}
        self._log_prob_key = log_prob_key
        self._entropy_key = entropy_key
        super().__init__(batch_shape=torch.Size(batch_size), validate_args=False)

    @classmethod
    def from_distributions(
        cls,
        params: TensorDictBase,
        distributions: dict,
        *,
        name_map: dict | None = None,
        log_prob_key: NestedKey | None = None,
        entropy_key: NestedKey | None = None,
    ) -> "CompositeDistribution":
        """A composite of distributions built already (``{key: distribution}``);
        ``params`` gives the batch size."""
        self = cls.__new__(cls)
        dists = {unravel_key(k): d for k, d in distributions.items()}
        self._setup(dists, params.batch_size, name_map, log_prob_key, entropy_key)
        return self

    # ------------------------------------------------------------------ mapping
    def __getitem__(self, key: NestedKey) -> D.Distribution:
        return self.dists[unravel_key(key)]

    def __iter__(self):
        return iter(self.dists)

    def __len__(self) -> int:
        return len(self.dists)

    @property
    def log_prob_key(self) -> NestedKey:
        return "sample_log_prob" if self._log_prob_key is None else self._log_prob_key

    @log_prob_key.setter
    def log_prob_key(self, value: NestedKey) -> None:
        self._log_prob_key = value

    @property
    def entropy_key(self) -> NestedKey:
        return "entropy" if self._entropy_key is None else self._entropy_key

    @entropy_key.setter
    def entropy_key(self, value: NestedKey) -> None:
        self._entropy_key = value

    # ------------------------------------------------------------------ samples
    def _collect(self, value_of: Callable, batch_size) -> TensorDictBase:
        out = container_class("TensorDict")(batch_size=batch_size)
        for key, dist in self.dists.items():
            out.set(self.name_map[key], value_of(dist))
        return out

    def sample(self, shape=None) -> TensorDictBase:
        shape = torch.Size(() if shape is None else shape)
        return self._collect(lambda d: d.sample(shape), shape + self.batch_shape)

    def rsample(self, shape=None) -> TensorDictBase:
        shape = torch.Size(() if shape is None else shape)
        return self._collect(lambda d: d.rsample(shape), shape + self.batch_shape)

    def sample_and_log_prob(self, shape=None):
        sample = self.sample(shape)
        return sample, self.log_prob(sample)

    def rsample_and_log_prob(self, shape=None):
        sample = self.rsample(shape)
        return sample, self.log_prob(sample)

    @property
    def mode(self) -> TensorDictBase:
        return self._collect(lambda d: d.mode, self.batch_shape)

    @property
    def mean(self) -> TensorDictBase:
        return self._collect(lambda d: d.mean, self.batch_shape)

    @property
    def deterministic_sample(self) -> TensorDictBase:
        return self._collect(_deterministic, self.batch_shape)

    # ------------------------------------------------------------------ densities
    def _per_part(self, sample: TensorDictBase, method: str, suffix: str):
        out = container_class("TensorDict")(batch_size=sample.batch_size)
        for key, dist in self.dists.items():
            name = self.name_map[key]
            out.set(_add_suffix(name, suffix), getattr(dist, method)(sample.get(name)))
        return out

    def log_prob(self, sample: TensorDictBase) -> torch.Tensor | TensorDictBase:
        """The log-probability of ``sample``: per part in a tensordict
        (``<name>_log_prob``), or one tensor over the batch dims when
        :func:`~tensordict.nn.composite_lp_aggregate` is on."""
        if composite_lp_aggregate():
            return self._summed(sample, "log_prob")
        return self._per_part(sample, "log_prob", "_log_prob")

    def _summed(self, sample: TensorDictBase, method: str) -> torch.Tensor:
        total = 0
        for key, dist in self.dists.items():
            value = getattr(dist, method)(sample.get(self.name_map[key]))
            total = total + _sum_to_batch(value, sample.batch_dims)
        return total

    def log_prob_composite(
        self, sample: TensorDictBase, *, include_sum: bool | None = None
    ) -> TensorDictBase:
        """The per-part log-probabilities in a tensordict, with their sum at
        :attr:`log_prob_key` when ``include_sum`` (by default: when
        :func:`composite_lp_aggregate` is on)."""
        out = self._per_part(sample, "log_prob", "_log_prob")
        if include_sum is None:
            include_sum = composite_lp_aggregate()
        if include_sum:
            total = 0
            for value in out.values(True, True):
                total = total + _sum_to_batch(value, out.batch_dims)
            out.set(self.log_prob_key, total)
        return out

    def _entropies(self, samples_mc: int) -> dict:
        out = {}
        for key, dist in self.dists.items():
            try:
                value = dist.entropy()
            except NotImplementedError:
                draws = (
                    dist.rsample((samples_mc,))
                    if dist.has_rsample
                    else dist.sample((samples_mc,))
                )
                value = -dist.log_prob(draws).mean(0)
            out[self.name_map[key]] = value
        return out

    def entropy(
        self,
        samples_mc: int = 1,
        *,
        aggregate_probabilities: bool | None = None,
        include_sum: bool | None = None,
    ) -> torch.Tensor | TensorDictBase:
        """The entropy of each part (a Monte-Carlo estimate from ``samples_mc``
        samples where it has no closed form): summed into one tensor when
        ``aggregate_probabilities`` (by default: :func:`composite_lp_aggregate`), else
        per part in a tensordict (``<name>_entropy``)."""
        if aggregate_probabilities is None:
            aggregate_probabilities = composite_lp_aggregate()
        if aggregate_probabilities:
            dims = len(self.batch_shape)
            return sum(
                _sum_to_batch(v, dims) for v in self._entropies(samples_mc).values()
            )
        return self.entropy_composite(samples_mc, include_sum=include_sum)

    def entropy_composite(self, samples_mc=1, *, include_sum: bool | None = None):
        """The per-part entropies in a tensordict, with their sum at
        :attr:`entropy_key` when ``include_sum``."""
        out = container_class("TensorDict")(batch_size=self.batch_shape)
        dims = len(self.batch_shape)
        total = 0
        for name, value in self._entropies(samples_mc).items():
            out.set(_add_suffix(name, "_entropy"), value)
            total = total + _sum_to_batch(value, dims)
        if include_sum:
            out.set(self.entropy_key, total)
        return out

    def cdf(self, sample: TensorDictBase) -> TensorDictBase:
        """Each part's cdf at its sample, written into ``sample`` at
        ``<name>_cdf`` (as 0.15.3); returns ``sample``."""
        for key, dist in self.dists.items():
            name = self.name_map[key]
            sample.set(_add_suffix(name, "_cdf"), dist.cdf(sample.get(name)))
        return sample

    def icdf(self, sample: TensorDictBase) -> TensorDictBase:
        """Each part's inverse cdf, written into ``sample`` at ``<name>_icdf``, of
        the probability at ``<name>_cdf`` (as :meth:`cdf` writes it), or where that
        is missing of the cdf of the value at ``<name>`` (as 0.15.3); returns
        ``sample``."""
        for key, dist in self.dists.items():
            name = self.name_map[key]
            prob = sample.get(_add_suffix(name, "_cdf"), None)
            if prob is None:
                value = sample.get(name, None)
                if value is None:
                    raise KeyError(
                        f"icdf: neither {_add_suffix(name, '_cdf')!r} nor {name!r} is "
                        f"in the sample"
                    )
                prob = dist.cdf(value)
            sample.set(_add_suffix(name, "_icdf"), dist.icdf(prob))
        return sample

    def __repr__(self) -> str:
        parts = ", ".join(f"{k!r}: {d}" for k, d in self.dists.items())
        return f"{type(self).__name__}({{{parts}}})"
