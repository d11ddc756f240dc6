"""Probabilistic modules: build a distribution from tensordict entries and write a
value drawn from it (and its log-probability).

A :class:`ProbabilisticTensorDictModule` reads the distribution's parameters at its
``in_keys``, builds ``distribution_class(**params, **distribution_kwargs)`` and writes,
at its ``out_keys``, the value the current :class:`InteractionType` asks for (see
:func:`set_interaction_type`; each module has a default). A
:class:`ProbabilisticTensorDictSequential` runs the modules computing the parameters
before it, so that ``get_dist`` / ``log_prob`` work from the raw input.
"""

from __future__ import annotations

import collections
import contextlib
import functools
from typing import Any, Iterator

import torch
from torch import distributions as D

from tensordict._compat import is_non_tensor
from tensordict._keys import NestedKey, unravel_key
from tensordict.base import TensorDictBase
from tensordict.nn._interaction import (
    InteractionType,
    interaction_type,
    set_interaction_type,
)
from tensordict.nn._interaction import (  # the function, beside a parameter of its name
    interaction_type as _current_interaction_type,
)
from tensordict.nn.common import (
    TensorDictModuleBase,
    _call_with_tensors,
    _describe,
    _key_list,
    _rewrap,
)
from tensordict.nn.distributions.composite import (
    CompositeDistribution,
    _add_suffix,
    _deterministic,
)
from tensordict.nn.distributions.continuous import Delta
from tensordict.nn.sequence import TensorDictSequential
from tensordict.nn.utils import _SKIP_EXISTING, composite_lp_aggregate, outputs_exist

__all__ = [
    "InteractionType",
    "ProbabilisticTensorDictModule",
    "ProbabilisticTensorDictSequential",
    "interaction_type",
    "set_interaction_type",
]


_CENTRAL = (
    InteractionType.DETERMINISTIC,
    InteractionType.MEAN,
    InteractionType.MODE,
)


def _draw(
    dist: D.Distribution, kind: InteractionType, shape: torch.Size, n_estimate: int
):
    """The value ``kind`` asks for (``shape``: leading sample dims, RANDOM only)."""
    if kind is InteractionType.RANDOM:
        return dist.rsample(shape) if dist.has_rsample else dist.sample(shape)
    if isinstance(dist, D.LKJCholesky) and kind in _CENTRAL:
        # its mean is an expectation over matrices nobody means to act on: refused,
        # as in 0.15.3 (whose words lead)
        raise RuntimeError(
            f"DETERMINISTIC, MEAN and MODE are not implemented for "
            f"{type(dist).__name__}: draw samples (InteractionType.RANDOM) instead"
        )
    if kind is InteractionType.MODE:
        return dist.mode
    if kind is InteractionType.MEDIAN:
        median = getattr(dist, "median", None)
        if median is None:
            raise NotImplementedError(
                f"{type(dist).__name__} has no median; use another interaction type"
            )
        return median
    if kind is InteractionType.MEAN:
        try:
            return dist.mean
        except NotImplementedError:
            return _empirical_mean(dist, n_estimate)
    try:  # DETERMINISTIC
        return _deterministic(dist)
    except NotImplementedError:
        return _empirical_mean(dist, n_estimate)


def _empirical_mean(dist: D.Distribution, n: int):
    draws = dist.rsample((n,)) if dist.has_rsample else dist.sample((n,))
    return draws.mean(0)


@contextlib.contextmanager
def _use_generator(generator: torch.Generator | None) -> Iterator[None]:
    """Draw the block's global random numbers from ``generator`` (TorchRL samples
    through it): the global CPU state is saved, replaced by the generator's for the
    block, written back into the generator afterwards (so its stream advances) and then
    restored. ``None`` changes nothing. CPU generators only."""
    if generator is None:
        yield
        return
    if generator.device.type != "cpu":
        raise NotImplementedError(
            f"_use_generator: only CPU generators are supported, got one on "
            f"{generator.device}"
        )
    saved = torch.get_rng_state()
    torch.set_rng_state(generator.get_state())
    try:
        yield
    finally:
        generator.set_state(torch.get_rng_state())
        torch.set_rng_state(saved)


def _generator_source(generator: Any) -> tuple:
    """``(generator, key)`` from a module's ``generator`` argument: a
    ``torch.Generator`` as is, an int as the seed of a CPU generator the module owns, a
    key to read one from the input on every call, or ``None`` (the global generator)."""
    if generator is None or isinstance(generator, torch.Generator):
        return generator, None
    if isinstance(generator, int) and not isinstance(generator, bool):
        return torch.Generator().manual_seed(generator), None
    if isinstance(generator, (str, tuple)):
        return None, unravel_key(generator)
    raise TypeError(
        f"generator must be a torch.Generator, an int seed, a key or None, got "
        f"{type(generator).__name__}"
    )


class ProbabilisticTensorDictModule(TensorDictModuleBase):
    """Draw a value from a distribution whose parameters are tensordict entries.

    Args:
        in_keys: the keys of the distribution's parameters: a key or a list of keys
            (each passed under the last part of its name: ``("params", "loc")`` as
            ``loc``), or a dict ``{parameter name: key}``.
        out_keys: where the drawn value goes (``["_"]`` by default); for a
            :class:`CompositeDistribution`, the keys of its parts' samples.

    Keyword Args:
        default_interaction_type: which value to draw when no
            :class:`set_interaction_type` block says otherwise (``DETERMINISTIC``).
        distribution_class: the distribution (:class:`Delta` by default).
        distribution_kwargs: further keyword arguments of the distribution.
        return_log_prob: also write the log-probability of the value.
        log_prob_key: where (``"<out_key>_log_prob"`` by default, or
            ``"sample_log_prob"`` when :func:`composite_lp_aggregate` is on).
        log_prob_keys: the same for several out_keys (composite distributions).
        cache_dist: keep the last distribution built (``module._dist``).
        n_empirical_estimate: how many samples estimate a mean that has no closed
            form.
        num_samples: draw that many samples (RANDOM): the output tensordict gets
            that many leading dims.
        generator: accepted for compatibility; sampling uses torch's global RNG.

    >>> import torch
    >>> from torch import distributions as D
    >>> from tensordict import TensorDict
    >>> module = ProbabilisticTensorDictModule(
    ...     in_keys=["loc", "scale"], out_keys=["action"], distribution_class=D.Normal,
    ...     return_log_prob=True)
    >>> td = module(TensorDict(loc=torch.zeros(3), scale=torch.ones(3), batch_size=[3]))
    >>> td["action"]  # DETERMINISTIC by default: the mode of the normal
    tensor([0., 0., 0.])
    >>> with set_interaction_type("random"):
    ...     sample = module(td.exclude("action"))["action"]
    >>> sorted(td.keys())
    ['action', 'action_log_prob', 'loc', 'scale']
    """

    def __init__(
        self,
        in_keys: NestedKey | list | dict,
        out_keys: NestedKey | list | None = None,
        *,
        default_interaction_type: InteractionType | str = InteractionType.DETERMINISTIC,
        distribution_class: type = Delta,
        distribution_kwargs: dict | None = None,
        return_log_prob: bool = False,
        log_prob_keys: list | None = None,
        log_prob_key: NestedKey | None = None,
        cache_dist: bool = False,
        n_empirical_estimate: int = 1000,
        num_samples: int | torch.Size | None = None,
        generator: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(in_keys, dict):
            self._param_names = list(in_keys)
            self.in_keys = [unravel_key(key) for key in in_keys.values()]
        else:
            self.in_keys = _key_list(in_keys, "in_keys")
            self._param_names = [
                key if isinstance(key, str) else key[-1] for key in self.in_keys
            ]
        if out_keys is None:
            sample_keys = _default_sample_keys(distribution_class, distribution_kwargs)
        else:
            sample_keys = _key_list(out_keys, "out_keys")
        self.dist_sample_keys = sample_keys
        self.default_interaction_type = InteractionType(default_interaction_type)
        self.distribution_class = distribution_class
        self.distribution_kwargs = dict(distribution_kwargs or {})
        self.return_log_prob = return_log_prob
        self.cache_dist = cache_dist
        self._dist = None
        self.n_empirical_estimate = n_empirical_estimate
        if num_samples is not None and not isinstance(num_samples, torch.Size):
            num_samples = torch.Size(
                (num_samples,) if isinstance(num_samples, int) else num_samples
            )
        self.num_samples = num_samples
        self.generator = generator
        self._generator, self._generator_key = _generator_source(generator)
        target = distribution_class
        while isinstance(target, functools.partial):  # partial(CompositeDistribution, ...)
            target = target.func
        self._composite = isinstance(target, type) and issubclass(
            target, CompositeDistribution
        )
        if log_prob_key is not None and log_prob_keys is not None:
            raise ValueError("pass log_prob_key or log_prob_keys, not both")
        if log_prob_key is not None:
            log_prob_keys = [log_prob_key]
        # the keys of a composite distribution's log-probabilities follow the
        # composite_lp_aggregate() in force when the module is built: read under the
        # other setting, they are refused (as in 0.15.3)
        self.__dict__["_lp_aggregate_built"] = (
            composite_lp_aggregate(nowarn=True)
            if self._composite and log_prob_keys is None
            else None
        )
        if log_prob_keys is None:
            if composite_lp_aggregate():
                log_prob_keys = ["sample_log_prob"]
            else:
                log_prob_keys = [_add_suffix(key, "_log_prob") for key in sample_keys]
        self.log_prob_keys = _key_list(log_prob_keys, "log_prob_keys")
        self.out_keys = list(sample_keys) + (
            list(self.log_prob_keys) if return_log_prob else []
        )

    def _check_lp_aggregate(self, name: str) -> None:
        built = self.__dict__.get("_lp_aggregate_built")
        if built is not None and composite_lp_aggregate(nowarn=True) != built:
            raise RuntimeError(
                f"{type(self).__name__}.{name} was built with "
                f"composite_lp_aggregate()={built} (its composite distribution's "
                f"log-probability keys follow it) and is read with "
                f"composite_lp_aggregate()={not built}: read it under "
                f"set_composite_lp_aggregate({built}), or build the module under the "
                f"setting it runs with"
            )

    @property
    def out_keys(self) -> list:
        """The sample keys, then the log-probability keys when ``return_log_prob``."""
        self._check_lp_aggregate("out_keys")
        return self.__dict__["_prob_out_keys"]

    @out_keys.setter
    def out_keys(self, value) -> None:
        self.__dict__["_prob_out_keys"] = value

    @property
    def log_prob_keys(self) -> list:
        """Where the log-probabilities go (one key, or one per part of a composite
        distribution that does not aggregate them)."""
        self._check_lp_aggregate("log_prob_keys")
        return self.__dict__["_prob_log_prob_keys"]

    @log_prob_keys.setter
    def log_prob_keys(self, value) -> None:
        self.__dict__["_prob_log_prob_keys"] = value

    @property
    def _out_keys(self) -> list:
        """The sample keys (``out_keys`` without the log-probability keys), under
        the private name TorchRL's ``SafeProbabilisticModule`` reads."""
        return self.dist_sample_keys

    @property
    def log_prob_key(self) -> NestedKey:
        """The key of the log-probability: the only one of :attr:`log_prob_keys`
        (``RuntimeError`` when a composite distribution that does not aggregate has
        several)."""
        self._check_lp_aggregate("log_prob_key")
        keys = self.log_prob_keys
        if len(keys) != 1:
            raise RuntimeError(
                f"{type(self).__name__}.log_prob_key cannot be accessed unless there "
                f"is one and only one element in log_prob_keys (got "
                f"log_prob_keys={keys}): composite_lp_aggregate() is False, so each "
                f"part of the composite distribution has its own key; read "
                f"log_prob_keys instead"
            )
        return keys[0]

    @property
    def dist_params_keys(self) -> list:
        return list(self.in_keys)

    # ------------------------------------------------------------------ distribution
    def get_dist(self, tensordict: TensorDictBase) -> D.Distribution:
        """The distribution whose parameters are ``tensordict``'s entries at
        ``in_keys``."""
        params = {}
        for name, key in zip(self._param_names, self.in_keys):
            value = tensordict.get(key, None)
            if value is None:
                raise KeyError(
                    f"{_describe(self)}: the distribution parameter {name!r} is missing "
                    f"at key {key!r} (the tensordict's keys: "
                    f"{sorted(map(str, tensordict.keys(True, True)))})"
                )
            params[name] = value
        try:
            dist = self.distribution_class(**params, **self.distribution_kwargs)
        except Exception as err:
            raise _rewrap(
                err,
                f"{_describe(self)} could not build "
                f"{getattr(self.distribution_class, '__name__', self.distribution_class)}"
                f" from {sorted(params)}: {err}",
            ) from err
        if self.cache_dist:
            self._dist = dist
        return dist

    build_dist_from_params = get_dist

    def log_prob(
        self, tensordict: TensorDictBase, *, dist: D.Distribution | None = None
    ):
        """The log-probability of the value stored at ``out_keys`` under the
        distribution (built from ``tensordict`` unless ``dist`` is given): a tensor,
        or a tensordict for a composite distribution that does not aggregate."""
        if dist is None:
            dist = self.get_dist(tensordict)
        if isinstance(dist, CompositeDistribution):
            values = tensordict.select(*dist.name_map.values(), strict=False)
            if composite_lp_aggregate():
                # as 0.15.3: each part's log-prob is written into tensordict too
                tensordict.update(dist.log_prob_composite(values, include_sum=False))
            return dist.log_prob(values)
        return dist.log_prob(tensordict.get(self.dist_sample_keys[0]))

    def _dist_sample(self, dist, interaction_type=None) -> Any:
        """The value this module would write for ``dist`` under ``interaction_type``
        (else the current one, else its default): TorchRL's value estimators call
        it to draw the action whose log-probability they need."""
        kind = (
            InteractionType(interaction_type)
            if interaction_type is not None
            else _current_interaction_type() or self.default_interaction_type
        )
        generator = self._generator if kind is InteractionType.RANDOM else None
        with _use_generator(generator):
            return _draw(dist, kind, torch.Size(), self.n_empirical_estimate)

    def _resolve_generator(self, tensordict: TensorDictBase):
        """``(generator, writeback)`` for one random draw: the module's own generator;
        or, with a key, the ``torch.Generator`` stored there, or a fresh one seeded with
        the int stored there, in which case ``writeback(generator)`` stores the next
        seed (drawn from it) at the key, so that repeated calls on one tensordict give
        a reproducible sequence. ``(None, None)``: the global generator."""
        if self._generator is not None or self._generator_key is None:
            return self._generator, None
        value = tensordict.get(self._generator_key, None)
        if value is None:
            return None, None
        value = value.data if is_non_tensor(value) else value
        if isinstance(value, torch.Generator):
            return value, None
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = int(value.item())
        if isinstance(value, int) and not isinstance(value, bool):
            key = self._generator_key

            def writeback(generator: torch.Generator) -> None:
                seed = int(torch.randint(2**62, (), generator=generator))
                tensordict.set(key, seed)

            return torch.Generator().manual_seed(value), writeback
        raise TypeError(
            f"{type(self).__name__}: the entry at generator key "
            f"{self._generator_key!r} must be a torch.Generator or an int seed, got "
            f"{type(value).__name__}"
        )

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        tensordict: TensorDictBase | None = None,
        *args,
        tensordict_out: TensorDictBase | None = None,
        _requires_sample: bool = True,
        **kwargs,
    ) -> TensorDictBase:
        """Build the distribution, draw the value the interaction type asks for, write
        it (and its log-probability with ``return_log_prob``)."""
        if not isinstance(tensordict, TensorDictBase):
            positional = args if tensordict is None else (tensordict, *args)
            return _call_with_tensors(self, positional, kwargs)
        mode = _SKIP_EXISTING.get()
        if mode is not False and outputs_exist(
            tensordict, self.in_keys, self.out_keys, mode
        ):
            return tensordict
        dist = self.get_dist(tensordict)
        dest = tensordict if tensordict_out is None else tensordict_out
        kind = interaction_type() or self.default_interaction_type
        sample = None
        if _requires_sample:
            shape = self.num_samples if kind is InteractionType.RANDOM else None
            generator, writeback = (
                self._resolve_generator(tensordict)
                if kind is InteractionType.RANDOM
                else (None, None)
            )
            with _use_generator(generator):
                sample = _draw(
                    dist, kind, shape or torch.Size(), self.n_empirical_estimate
                )
            if writeback is not None:
                writeback(generator)
            if shape:
                dest = dest.expand(*shape, *dest.batch_size).clone(False)
            if isinstance(sample, TensorDictBase):
                dest.update(sample)
            elif isinstance(sample, (tuple, list)):
                for key, value in zip(self.dist_sample_keys, sample):
                    dest.set(key, value)
            else:
                dest.set(self.dist_sample_keys[0], sample)
        if self.return_log_prob:
            if isinstance(dist, CompositeDistribution):
                values = sample if sample is not None else dest
                values = values.select(*dist.name_map.values(), strict=False)
                if composite_lp_aggregate():
                    # each part's log-prob and their sum at log_prob_key
                    lp = dist.log_prob_composite(values, include_sum=False)
                    dest.update(lp)
                    lp = dist.log_prob(values)
                else:
                    lp = dist.log_prob(values)
            else:
                value = (
                    sample if sample is not None else dest.get(self.dist_sample_keys[0])
                )
                lp = dist.log_prob(value)
            if isinstance(lp, TensorDictBase):
                dest.update(lp)
            else:
                dest.set(self.log_prob_key, lp)
        return dest

    forward._handles_calls = True

    def extra_repr(self) -> str:
        name = getattr(self.distribution_class, "__name__", self.distribution_class)
        parts = [
            f"in_keys={self.in_keys}",
            f"out_keys={self.out_keys}",
            f"distribution_class={name}",
        ]
        if self.distribution_kwargs:
            parts.append(f"distribution_kwargs={self.distribution_kwargs}")
        parts.append(f"default_interaction_type={self.default_interaction_type}")
        return ", ".join(parts)


def _default_sample_keys(distribution_class, distribution_kwargs) -> list:
    """The sample keys of a module given no ``out_keys``: for a
    :class:`CompositeDistribution`, where its parts' samples go (``name_map``'s values,
    else ``distribution_map``'s keys); else ``["_"]``."""
    kwargs = distribution_kwargs or {}
    if isinstance(distribution_class, type) and issubclass(
        distribution_class, CompositeDistribution
    ):
        parts = kwargs.get("distribution_map") or {}
        names = {
            unravel_key(k): unravel_key(v)
            for k, v in (kwargs.get("name_map") or {}).items()
        }
        keys = [names.get(unravel_key(key), unravel_key(key)) for key in parts]
        if keys:
            return keys
    return ["_"]


def _is_probabilistic(module) -> bool:
    return isinstance(
        module, (ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential)
    )


class ProbabilisticTensorDictSequential(TensorDictSequential):
    """A :class:`TensorDictSequential` ending with probabilistic modules: the modules
    before compute the distribution's parameters, so that :meth:`get_dist`,
    :meth:`log_prob` work from the raw input.

    With several probabilistic modules (``return_composite``, the default when there
    is more than one), :meth:`get_dist` returns a :class:`CompositeDistribution` of
    theirs, keyed by their sample keys.

    >>> import torch
    >>> from torch import nn, distributions as D
    >>> from tensordict import TensorDict
    >>> from tensordict.nn import TensorDictModule, NormalParamExtractor
    >>> net = TensorDictModule(nn.Sequential(nn.Linear(3, 4), NormalParamExtractor()),
    ...                        in_keys=["obs"], out_keys=["loc", "scale"])
    >>> policy = ProbabilisticTensorDictSequential(net, ProbabilisticTensorDictModule(
    ...     in_keys=["loc", "scale"], out_keys=["action"], distribution_class=D.Normal))
    >>> td = TensorDict(obs=torch.randn(5, 3), batch_size=[5])
    >>> policy.get_dist(td).batch_shape
    torch.Size([5, 2])
    >>> policy(td)["action"].shape
    torch.Size([5, 2])
    """

    def __init__(
        self,
        *modules,
        partial_tolerant: bool = False,
        return_composite: bool | None = None,
        selected_out_keys: list | None = None,
        inplace: bool | None = None,
    ) -> None:
        if not modules:
            raise TypeError("ProbabilisticTensorDictSequential: no module given")
        # only the options given: a subclass's base in between may not take them
        # (TorchRL's SafeSequential takes ``partial_tolerant`` and ``inplace``)
        options = {}
        if selected_out_keys is not None:
            options["selected_out_keys"] = selected_out_keys
        if inplace is not None:
            options["inplace"] = inplace
        super().__init__(*modules, partial_tolerant=partial_tolerant, **options)
        sequence = self._sequence
        count = sum(1 for m in sequence if _is_probabilistic(m))
        if return_composite is None:
            # one distribution when a single probabilistic module ends the sequence;
            # else (several, one in the middle, or none) a composite of them all
            return_composite = count != 1 or not _is_probabilistic(sequence[-1])
        self.return_composite = return_composite

    def _with_modules(self, modules: list) -> TensorDictSequential:
        members = (
            list(modules[0].values())
            if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict)
            else modules
        )
        # probabilistic when it ends with a probabilistic module, or (a composite
        # sequence) holds one
        if members and (
            _is_probabilistic(members[-1])
            or (self.return_composite and any(map(_is_probabilistic, members)))
        ):
            return ProbabilisticTensorDictSequential(
                *modules, partial_tolerant=self.partial_tolerant, inplace=self.inplace
            )
        return TensorDictSequential(
            *modules, partial_tolerant=self.partial_tolerant, inplace=self.inplace
        )

    @property
    def _last(self):
        """The last probabilistic module (modules after it only read its sample);
        None when the sequence has none (then it is a plain sequence)."""
        for module in reversed(self._sequence):
            if _is_probabilistic(module):
                return module
        return None

    def _last_or_raise(self, what: str):
        last = self._last
        if last is None:
            raise RuntimeError(
                f"ProbabilisticTensorDictSequential.{what}: the sequence has no "
                f"probabilistic module (it runs as a plain TensorDictSequential)"
            )
        return last

    @property
    def _requires_sample(self) -> bool:
        """Whether the sequence draws a sample: it has a probabilistic module, and the
        modules before the last one do not already write all of its sample keys (then
        the sequence only computes the distribution and, with ``return_log_prob``,
        the log-probability of the value written; as 0.15.3: TorchRL's gSDE actors
        write their action before the distribution module)."""
        last = self._last
        if last is None:
            return False
        sequence = self._sequence
        before = sequence[: sequence.index(last)]
        if not before:
            return True
        written = set(self._compute_in_and_out_keys(before)[1])
        return any(key not in written for key in last.dist_sample_keys)

    def _run_modules(self, td: TensorDictBase, kwargs: dict) -> TensorDictBase:
        """As :class:`TensorDictSequential`; where the sample is already written
        (``_requires_sample`` False), the probabilistic modules (the last one, or all
        of them with ``return_composite``) run with ``_requires_sample=False``."""
        if self._last is None or self._requires_sample:
            return super()._run_modules(td, kwargs)
        composite = self.return_composite
        last = self._last
        for module in self._sequence:
            if module is last or (composite and _is_probabilistic(module)):
                module_kwargs = {**kwargs, "_requires_sample": False}
            else:
                module_kwargs = kwargs
            if self.partial_tolerant:
                td = self._run_tolerant(module, td, module_kwargs)
            else:
                td = module(td, **module_kwargs)
        return td

    @property
    def det_part(self) -> TensorDictSequential:
        """The modules before the last probabilistic one."""
        sequence = self._sequence
        return TensorDictSequential(*sequence[: sequence.index(self._last)])

    @property
    def _det_part(self) -> TensorDictSequential | None:
        return None if self._last is None else self.det_part

    @property
    def default_interaction_type(self) -> InteractionType | None:
        last = self._last
        return None if last is None else last.default_interaction_type

    def _dist_sample(self, dist, interaction_type=None) -> Any:
        """The draw of the sequence's last (probabilistic) module."""
        last = self._last_or_raise("_dist_sample")
        return last._dist_sample(dist, interaction_type=interaction_type)

    def forward(self, tensordict=None, *args, **kwargs):
        """Run the modules in order; with no :class:`set_interaction_type` block
        around the call, the whole sequence runs under the last module's
        ``default_interaction_type``, so that the modules before it see it too (as
        in 0.15.3: TorchRL's gSDE noise module reads it)."""
        if interaction_type() is None and self._last is not None:
            with set_interaction_type(self.default_interaction_type):
                return super().forward(tensordict, *args, **kwargs)
        return super().forward(tensordict, *args, **kwargs)

    forward._handles_calls = True

    @property
    def log_prob_key(self) -> NestedKey:
        return self._last_or_raise("log_prob_key").log_prob_key

    @property
    def log_prob_keys(self) -> list:
        if self.return_composite:
            return [
                key
                for m in self._sequence
                if _is_probabilistic(m)
                for key in m.log_prob_keys
            ]
        return self._last_or_raise("log_prob_keys").log_prob_keys

    @property
    def dist_params_keys(self) -> list:
        return self._last_or_raise("dist_params_keys").dist_params_keys

    @property
    def dist_sample_keys(self) -> list:
        if self.return_composite:
            return [
                key
                for m in self._sequence
                if _is_probabilistic(m)
                for key in m.dist_sample_keys
            ]
        return self._last_or_raise("dist_sample_keys").dist_sample_keys

    @property
    def num_samples(self):
        return self._last_or_raise("num_samples").num_samples

    def get_dist_params(
        self,
        tensordict: TensorDictBase,
        tensordict_out: TensorDictBase | None = None,
        **kwargs,
    ) -> TensorDictBase:
        """Run the modules before the last one: the tensordict holding the
        distribution's parameters."""
        td = tensordict
        sequence = self._sequence
        for module in sequence[
            : sequence.index(self._last_or_raise("get_dist_params"))
        ]:
            td = module(td, **kwargs)
        if tensordict_out is not None:
            return tensordict_out.update(td)
        return td

    def get_dist(
        self,
        tensordict: TensorDictBase,
        tensordict_out: TensorDictBase | None = None,
        **kwargs,
    ) -> D.Distribution:
        """The distribution the sequence draws from, computed from ``tensordict``
        (the intermediate outputs are written into it)."""
        last = self._last_or_raise("get_dist")
        if not self.return_composite:
            params = self.get_dist_params(tensordict, tensordict_out, **kwargs)
            return last.get_dist(params)
        td = tensordict if tensordict_out is None else tensordict_out.update(tensordict)
        dists = {}
        sequence = self._sequence
        for module in sequence[: sequence.index(last) + 1]:
            if not _is_probabilistic(module):
                td = module(td, **kwargs)
                continue
            dist = module.get_dist(td)
            if isinstance(dist, CompositeDistribution):
                for key, part in dist.dists.items():
                    dists[dist.name_map[key]] = part
            else:
                for key in module.dist_sample_keys:
                    dists[key] = dist
            if module is not last:
                td = module(td, **kwargs)  # later modules may read its sample
        keys = last.log_prob_keys
        return CompositeDistribution.from_distributions(
            td, dists, log_prob_key=keys[0] if len(keys) == 1 else None
        )

    def build_dist_from_params(self, tensordict: TensorDictBase) -> D.Distribution:
        """The last module's distribution from parameters already in
        ``tensordict``."""
        return self._last_or_raise("build_dist_from_params").get_dist(tensordict)

    def log_prob(
        self,
        tensordict: TensorDictBase,
        tensordict_out: TensorDictBase | None = None,
        *,
        dist: D.Distribution | None = None,
        **kwargs,
    ):
        """The log-probability of the sample(s) stored in ``tensordict`` under the
        sequence's distribution."""
        if dist is None:
            dist = self.get_dist(tensordict, tensordict_out, **kwargs)
        if isinstance(dist, CompositeDistribution):
            names = list(dist.name_map.values())
            return dist.log_prob(tensordict.select(*names, strict=False))
        sample_key = self._last_or_raise("log_prob").dist_sample_keys[0]
        return dist.log_prob(tensordict.get(sample_key))
