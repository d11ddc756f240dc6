"""Modules wrapping a lambda or a local function pickle (TorchRL's multiprocess
collectors send the policy to spawn-ed workers this way)."""

import copy
import pickle

import pytest
import torch

from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential, WrapModule

pytest.importorskip("cloudpickle")


def _local_policy(scale):
    return TensorDictModule(lambda x: x * scale, in_keys=["obs"], out_keys=["act"])


def test_module_wrapping_a_lambda_pickles_by_value():
    module = _local_policy(3.0)
    loaded = pickle.loads(pickle.dumps(module))
    out = loaded(TensorDict(obs=torch.ones(2), batch_size=[2]))
    assert out["act"].tolist() == [3.0, 3.0]
    assert loaded.in_keys == ["obs"] and loaded.out_keys == ["act"]


def test_sequence_with_a_lambda_and_a_plain_function_pickles():
    seq = TensorDictSequential(
        _local_policy(2.0), lambda td: td.set("next_obs", td["act"] + 1)
    )
    loaded = pickle.loads(pickle.dumps(seq))
    out = loaded(TensorDict(obs=torch.ones(2), batch_size=[2]))
    assert out["next_obs"].tolist() == [3.0, 3.0]


def test_wrap_module_with_a_lambda_pickles():
    module = WrapModule(lambda td: td.set("y", td["x"] * 2), in_keys=["x"])
    loaded = pickle.loads(pickle.dumps(module))
    assert loaded(TensorDict(x=torch.ones(1)))["y"].tolist() == [2.0]


def test_copies_keep_the_callable_itself():
    module = _local_policy(1.0)
    fn = module.module
    assert copy.deepcopy(module).module is fn
    assert copy.copy(module).module is fn


def test_wrapped_nn_module_pickles_as_a_module():
    module = TensorDictModule(torch.nn.Linear(2, 3), in_keys=["x"], out_keys=["y"])
    loaded = pickle.loads(pickle.dumps(module))
    assert isinstance(loaded.module, torch.nn.Linear)
    torch.testing.assert_close(loaded.module.weight, module.module.weight)
