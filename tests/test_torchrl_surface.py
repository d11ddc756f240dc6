"""Behaviour TorchRL relies on, found by running its own tests (issue 16), checked
here without TorchRL: each test names the TorchRL code that needs it."""

from __future__ import annotations

import pytest
import torch
from torch import distributions as D

from tensordict import TensorDict
from tensordict.nn import ProbabilisticTensorDictModule


def test_probabilistic_module_private_out_keys_are_the_sample_keys():
    # torchrl.modules.SafeProbabilisticModule compares its spec's keys with `_out_keys`
    module = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=D.Normal,
        return_log_prob=True,
    )
    assert module._out_keys == ["action"]
    assert module.out_keys == ["action", "action_log_prob"]


def _split(values: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """A strided nested tensor viewing ``values`` cut into ``lengths`` (as TorchRL's
    ``split_trajectories(as_nested=True)`` builds it)."""
    return torch.nested.nested_tensor(list(values.split(lengths)))


def test_ragged_batch_dim_holds_nested_tensors_and_pads_back():
    # torchrl.collectors.utils.split_trajectories(as_nested=True):
    # `_fast_apply(nest, batch_size=[n_trajectories, -1])`, then `to_padded_tensor`
    td = TensorDict(
        obs=torch.arange(5.0).unsqueeze(-1),
        next=TensorDict(done=torch.tensor([0, 1, 0, 0, 1]).bool(), batch_size=[5]),
        batch_size=[5],
    )
    ragged = td._fast_apply(lambda x: _split(x, [2, 3]), batch_size=[2, -1])
    assert ragged.batch_size == torch.Size([2, -1])
    assert ragged["next"].batch_size == torch.Size([2, -1])
    assert ragged["next", "done"].is_nested
    padded = ragged.to_padded_tensor(padding=-1.0, mask_key=("collector", "mask"))
    assert padded.batch_size == torch.Size([2, 3])
    assert padded["obs"].squeeze(-1).tolist() == [[0.0, 1.0, -1.0], [2.0, 3.0, 4.0]]
    assert padded["collector", "mask"].tolist() == [[True, True, False], [True] * 3]


def test_ragged_batch_dim_refuses_dense_values_and_other_negatives():
    with pytest.raises(RuntimeError, match="'obs'"):
        TensorDict(obs=torch.zeros(2, 3), batch_size=[2, -1])
    with pytest.raises(TypeError, match="batch_size"):
        TensorDict(batch_size=[2, -2])
