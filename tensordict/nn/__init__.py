"""``tensordict.nn``: modules that read and write tensordicts by key.

- :mod:`tensordict.nn.common`: ``TensorDictModuleBase``, ``TensorDictModule``,
  ``dispatch``, ``WrapModule``, ``TensorDictModuleWrapper``, ``as_tensordict_module``;
- :mod:`tensordict.nn.sequence`: ``TensorDictSequential``;
- :mod:`tensordict.nn.probabilistic`: ``ProbabilisticTensorDictModule`` /
  ``Sequential``, ``InteractionType``, ``set_interaction_type``;
- :mod:`tensordict.nn.distributions`: ``Delta``, ``TanhNormal``, ``TruncatedNormal``,
  ``OneHotCategorical``, ``CompositeDistribution``, ``NormalParamExtractor``, ...;
- :mod:`tensordict.nn.params`: ``TensorDictParams``;
- :mod:`tensordict.nn.functional_modules`: ``make_functional``;
- :mod:`tensordict.nn.ensemble`: ``EnsembleModule``;
- :mod:`tensordict.nn.cudagraphs`: ``CudaGraphModule``;
- :mod:`tensordict.nn.utils`: ``set_skip_existing``, ``composite_lp_aggregate``,
  ``mappings``, ``biased_softplus``, ...

See ``docs/nn.md``.
"""

from tensordict.nn.common import (
    TensorDictModule,
    TensorDictModuleBase,
    TensorDictModuleWrapper,
    WrapModule,
    as_tensordict_module,
    dispatch,
    make_tensordict,
)
from tensordict.nn.sequence import TensorDictSequential
from tensordict.nn.utils import (
    add_custom_mapping,
    biased_softplus,
    composite_lp_aggregate,
    inv_softplus,
    mappings,
    set_composite_lp_aggregate,
    set_skip_existing,
    skip_existing,
)
from tensordict.nn._interaction import (
    InteractionType,
    interaction_type,
    set_interaction_type,
)
from tensordict.nn.distributions import (
    AddStateIndependentNormalScale,
    CompositeDistribution,
    Delta,
    NormalParamExtractor,
    OneHotCategorical,
    TanhNormal,
    TruncatedNormal,
    rand_one_hot,
)
from tensordict.nn.probabilistic import (
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
)
from tensordict.nn.params import TensorDictParams
from tensordict.nn.functional_modules import make_functional
from tensordict.nn.ensemble import EnsembleModule
from tensordict.nn.cudagraphs import CudaGraphModule
from tensordict.nn.tensorclass_module import (
    TensorClassModuleBase,
    TensorClassModuleWrapper,
)

__all__ = [
    "AddStateIndependentNormalScale",
    "CompositeDistribution",
    "CudaGraphModule",
    "Delta",
    "EnsembleModule",
    "InteractionType",
    "NormalParamExtractor",
    "OneHotCategorical",
    "ProbabilisticTensorDictModule",
    "ProbabilisticTensorDictSequential",
    "TanhNormal",
    "TensorClassModuleBase",
    "TensorClassModuleWrapper",
    "TensorDictModule",
    "TensorDictModuleBase",
    "TensorDictModuleWrapper",
    "TensorDictParams",
    "TensorDictSequential",
    "TruncatedNormal",
    "WrapModule",
    "add_custom_mapping",
    "as_tensordict_module",
    "biased_softplus",
    "composite_lp_aggregate",
    "dispatch",
    "interaction_type",
    "inv_softplus",
    "make_functional",
    "make_tensordict",
    "mappings",
    "rand_one_hot",
    "set_composite_lp_aggregate",
    "set_interaction_type",
    "set_skip_existing",
    "skip_existing",
]
