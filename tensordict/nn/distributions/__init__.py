"""Distributions for the probabilistic modules: ``Delta``, ``TanhNormal``,
``TruncatedNormal``, ``OneHotCategorical``, ``CompositeDistribution``, and the modules
that shape their parameters (``NormalParamExtractor``,
``AddStateIndependentNormalScale``)."""

from tensordict.nn.distributions import continuous, discrete
from tensordict.nn.distributions.composite import CompositeDistribution
from tensordict.nn.distributions.continuous import (
    AddStateIndependentNormalScale,
    Delta,
    NormalParamExtractor,
    TanhNormal,
)
from tensordict.nn.distributions.discrete import (
    OneHotCategorical,
    ReparamGradientStrategy,
    rand_one_hot,
)
from tensordict.nn.distributions.truncated_normal import TruncatedNormal
from tensordict.nn.utils import add_custom_mapping, mappings

__all__ = [
    "AddStateIndependentNormalScale",
    "CompositeDistribution",
    "Delta",
    "NormalParamExtractor",
    "OneHotCategorical",
    "ReparamGradientStrategy",
    "TanhNormal",
    "TruncatedNormal",
    "add_custom_mapping",
    "continuous",
    "discrete",
    "mappings",
    "rand_one_hot",
]

# the names 0.15.3 also offers here
from tensordict.nn._interaction import (
    InteractionType,
    set_interaction_type,
)  # noqa: E402

__all__ += ["InteractionType", "set_interaction_type"]
