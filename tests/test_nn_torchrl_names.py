"""Private names of tensordict.nn that TorchRL imports, with the behaviour it relies on."""

from __future__ import annotations

import torch

from tensordict import TensorDict
from tensordict.nn import TensorDictModule, set_skip_existing
from tensordict.nn.probabilistic import _use_generator
from tensordict.nn.utils import _set_dispatch_td_nn_modules, _set_skip_existing_None


def test_use_generator_draws_from_the_generator_and_restores_the_global_state():
    gen = torch.Generator().manual_seed(7)
    expected = torch.randn(3, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(0)
    global_next = torch.randn(3)
    torch.manual_seed(0)
    with _use_generator(gen):
        drawn = torch.randn(3)
    assert torch.equal(drawn, expected)
    assert torch.equal(torch.randn(3), global_next)  # global stream untouched
    # the generator advanced: its next draw is the one after `expected`
    again = torch.Generator().manual_seed(7)
    torch.randn(3, generator=again)
    assert torch.equal(torch.randn(3, generator=gen), torch.randn(3, generator=again))
    with _use_generator(None):
        torch.randn(1)


def test_set_skip_existing_none_follows_the_enclosing_mode():
    class Add(torch.nn.Module):
        in_keys = ["x"]
        out_keys = ["y"]

        @_set_skip_existing_None()
        def forward(self, tensordict):
            return tensordict.set("y", tensordict["x"] + 1)

    td = TensorDict(x=torch.zeros(()), y=torch.zeros(()))
    assert Add()(td.clone())["y"] == 1
    with set_skip_existing(True):
        assert Add()(td.clone())["y"] == 0


def test_set_dispatch_td_nn_modules_false_passes_tensors_through():
    module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    assert module(x=torch.zeros(2))["y"].tolist() == [1.0, 1.0]
    seen = []

    class Plain(TensorDictModule):
        def forward(self, tensordict, *args, **kwargs):
            seen.append(tensordict)
            return tensordict

    plain = Plain(lambda x: x, in_keys=["x"], out_keys=["x"])
    with _set_dispatch_td_nn_modules(False):
        value = torch.ones(2)
        assert plain(value) is value
    assert seen == [value]
