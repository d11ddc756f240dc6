"""A probabilistic sequence whose first modules already write the sample key only
computes the distribution (and the log-probability of the value written); it draws
nothing over it, as 0.15.3 (TorchRL's gSDE actors write their action before the
distribution module)."""

import torch
from torch import distributions

from tensordict import TensorDict
from tensordict.nn import (
    InteractionType,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
)


def _params(td_out_keys):
    def fn(obs):
        loc = obs * 2
        outs = {"loc": loc, "scale": torch.ones_like(obs), "action": loc + 10}
        return tuple(outs[key] for key in td_out_keys)

    return TensorDictModule(fn, in_keys=["obs"], out_keys=td_out_keys)


def _prob(return_log_prob=False):
    return ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=distributions.Normal,
        default_interaction_type=InteractionType.RANDOM,
        return_log_prob=return_log_prob,
    )


def test_sample_written_before_is_kept():
    seq = ProbabilisticTensorDictSequential(
        _params(["loc", "scale", "action"]), _prob()
    )
    assert not seq._requires_sample
    td = seq(TensorDict(obs=torch.arange(4.0), batch_size=[4]))
    assert td["action"].tolist() == [10.0, 12.0, 14.0, 16.0]


def test_log_prob_of_the_written_sample():
    seq = ProbabilisticTensorDictSequential(
        _params(["loc", "scale", "action"]), _prob(return_log_prob=True)
    )
    td = seq(TensorDict(obs=torch.arange(4.0), batch_size=[4]))
    expected = distributions.Normal(td["loc"], td["scale"]).log_prob(td["action"])
    torch.testing.assert_close(td[seq.log_prob_key], expected)


def test_sample_drawn_when_not_written_before():
    seq = ProbabilisticTensorDictSequential(_params(["loc", "scale"]), _prob())
    assert seq._requires_sample
    torch.manual_seed(0)
    td = seq(TensorDict(obs=torch.zeros(1000), batch_size=[1000]))
    assert td["action"].std() > 0.5  # drawn from Normal(0, 1)


def test_composite_parts_are_keyed_by_their_sample_keys():
    from tensordict.nn import CompositeDistribution

    params = TensorDict(
        {
            "a": TensorDict({"loc": torch.zeros(2), "scale": torch.ones(2)}, [2]),
            "b": TensorDict({"loc": torch.zeros(2), "scale": torch.ones(2)}, [2]),
        },
        [2],
    )
    dist = CompositeDistribution(
        params,
        distribution_map={"a": distributions.Normal, "b": distributions.Normal},
        name_map={"a": ("agent", "action"), "b": ("agent", "aux")},
    )
    assert list(dist.dists) == [("agent", "action"), ("agent", "aux")]
    sample = dist.sample()
    for key, part in dist.dists.items():  # TorchRL scores each part at its key
        assert part.log_prob(sample[key]).shape == (2,)


def test_unknown_mapping_leads_with_the_phrase_of_0_15_3():
    import pytest

    from tensordict.nn.utils import mappings

    with pytest.raises(NotImplementedError, match="Unknown mapping raise_error"):
        mappings("raise_error")
