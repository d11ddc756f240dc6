"""A TensorDictModule whose module returns a dict keyed by its out_keys writes the
dict's entries (as 0.15.3), not the dict as a nested tensordict."""

import torch
from torch import nn

from tensordict import TensorDict
from tensordict.nn import TensorDictModule


class _DictOut(nn.Module):
    def forward(self, x):
        return {"b": x * 2, "c": {"d": x + 1}}


def test_dict_output_gives_its_entries():
    module = TensorDictModule(_DictOut(), in_keys=["a"], out_keys=["b", ("c", "d")])
    out = module(TensorDict(a=torch.ones(3)))
    assert isinstance(out["b"], torch.Tensor)
    assert (out["b"] == 2).all() and (out["c", "d"] == 2).all()


def test_dict_output_without_the_out_keys_is_one_value():
    module = TensorDictModule(_DictOut(), in_keys=["a"], out_keys=["z"])
    out = module(TensorDict(a=torch.ones(3)))
    assert (out["z", "b"] == 2).all()
