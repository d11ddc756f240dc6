"""TensorDictParams and to_module as existing code uses them: read hooks, tied
parameters kept tied through clone and moves, a buffer stays a buffer."""

import torch
from torch import nn

from tensordict import TensorDict
from tensordict.nn import TensorDictParams


def _grad_td():
    return TensorDict(
        a={
            "b": {"c": torch.zeros((), requires_grad=True)},
            "d": torch.zeros((), requires_grad=True),
        },
        e=torch.zeros((), requires_grad=True),
    )


def test_get_post_hook_applies_to_every_read():
    td = _grad_td()
    params = TensorDictParams(td)
    params.register_get_post_hook(lambda owner, x: x.data)
    assert all(p.requires_grad for p in td.values(True, True))
    assert not any(p.requires_grad for p in params.values(True, True))
    assert not any(v.requires_grad for _, v in params.items(True, True))
    assert not params["e"].requires_grad
    assert not params["a", "b", "c"].requires_grad
    assert not params.get(("a", "b", "c")).requires_grad
    ptrs = {p.data_ptr() for p in td.values(True, True)}
    assert {p.data_ptr() for p in params.values(True, True)} == ptrs


def test_clone_keeps_tied_parameters_tied():
    c = nn.Parameter(torch.zeros(()))
    params = TensorDictParams(TensorDict(a={"b": {"c": c}}, c=c), no_convert=True)
    clone = params.clone()
    assert clone["c"] is clone["a", "b", "c"]
    assert clone["c"] is not c
    assert isinstance(clone["c"], nn.Parameter)


def test_to_module_keeps_a_buffer_a_buffer():
    module = nn.Module()
    module.register_buffer("buffer", torch.ones(3))
    TensorDict(buffer=nn.Parameter(torch.zeros(3))).to_module(
        module, preserve_module_state=True
    )
    assert "buffer" in dict(module.named_buffers())
    assert "buffer" not in dict(module.named_parameters())
    assert not isinstance(module.buffer, nn.Parameter)
    assert (module.buffer == 0).all()
