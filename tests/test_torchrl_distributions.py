"""What TorchRL's distributions read from tensordict.nn: a CompositeDistribution's
parts are known by the names their samples go to (``name_map``'s values), and an
unknown scale mapping is refused with 0.15.3's phrase."""

import pytest
import torch

from tensordict import TensorDict
from tensordict.nn import CompositeDistribution
from tensordict.nn.utils import mappings


def _composite():
    part = {"loc": torch.zeros(2), "scale": torch.ones(2)}
    params = TensorDict(
        a=TensorDict(part, [2]), b=TensorDict(part, [2]), batch_size=[2]
    )
    return CompositeDistribution(
        params,
        distribution_map={
            "a": torch.distributions.Normal,
            "b": torch.distributions.Normal,
        },
        name_map={"a": ("agent", "action")},
    )


def test_composite_parts_are_keyed_by_their_sample_names():
    dist = _composite()
    assert list(dist.dists) == [("agent", "action"), "b"]
    assert isinstance(dist["agent", "action"], torch.distributions.Normal)
    with pytest.raises(KeyError):
        dist["a"]
    sample = dist.sample()
    assert set(sample.keys(True, True)) == {("agent", "action"), "b"}
    # TorchRL's sample_and_log_prob walks dists and samples each part by its name
    parts = {name: part.sample() for name, part in dist.dists.items()}
    assert TensorDict(parts, batch_size=[2])["agent", "action"].shape == (2,)


def test_unknown_mapping_leads_with_the_phrase_code_matches():
    with pytest.raises(NotImplementedError, match="Unknown mapping raise_error"):
        mappings("raise_error")
