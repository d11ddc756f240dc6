"""``@dispatch`` under ``_set_dispatch_td_nn_modules(False)``: the decorated function
takes its arguments as given (TorchRL's replay buffers turn dispatch off to pass a
transform's ``inv`` plain data, a dict of tensors, with no keys to gather)."""

from __future__ import annotations

import torch
from torch import nn

from tensordict import TensorDict
from tensordict.nn import dispatch
from tensordict.nn.utils import _set_dispatch_td_nn_modules


class _Identity(nn.Module):
    in_keys: list = []
    out_keys: list = []

    @dispatch(source="in_keys", dest="out_keys")
    def inv(self, tensordict):
        return tensordict


class _Double(nn.Module):
    in_keys = ["x"]
    out_keys = ["y"]

    @dispatch
    def forward(self, tensordict):
        return tensordict.set("y", tensordict["x"] * 2)


def test_plain_data_passes_through_when_off():
    data = {"a": torch.randn(3), 30: -torch.ones(())}
    with _set_dispatch_td_nn_modules(False):
        assert _Identity().inv(data) is data


def test_positional_tensor_passes_through_when_off():
    x = torch.ones(2)
    with _set_dispatch_td_nn_modules(False):
        assert _Identity().inv(x) is x


def test_dispatch_on_again_after_the_block():
    module = _Double()
    with _set_dispatch_td_nn_modules(False):
        pass
    assert module(torch.ones(2)).tolist() == [2.0, 2.0]


def test_tensordict_call_unchanged_when_off():
    td = TensorDict(x=torch.ones(2), batch_size=[2])
    with _set_dispatch_td_nn_modules(False):
        out = _Double()(td)
    assert out is td and td["y"].tolist() == [2.0, 2.0]
