"""Ensembles of lazy modules: ``from_modules`` of modules holding uninitialized
parameters (``nn.LazyLinear`` before its first call), run under ``torch.vmap``, as
TorchRL's multi-agent networks with unshared parameters and lazy layers do."""

import copy
import pickle

import pytest
import torch
from torch import nn

from tensordict import TensorDict


def _net(device=None):
    return nn.Sequential(
        nn.LazyLinear(4, device=device), nn.Tanh(), nn.Linear(4, 2, device=device)
    )


def _template():
    """A parameter-free copy of the network (meta tensors standing for them)."""
    with torch.device("meta"):
        template = _net(device="meta")
    TensorDict.from_module(template).data.to("meta").to_module(
        template, preserve_module_state=False
    )
    return template


def _run(template, params, x):
    def call(p, inputs):
        with p.to_module(template, preserve_module_state=False):
            return template(inputs)

    # an uninitialized stack has nothing to draw different values for per call
    return torch.vmap(call, in_dims=(0, 1), out_dims=1, randomness="same")(params, x)


def _expected(params, x):
    outs = []
    for i in range(params.batch_size[0]):
        p = params[i]
        hidden = torch.tanh(x[:, i] @ p["0", "weight"].T + p["0", "bias"])
        outs.append(hidden @ p["2", "weight"].T + p["2", "bias"])
    return torch.stack(outs, 1)


@pytest.mark.parametrize("as_module", [False, True])
def test_stacked_lazy_parameters_stay_uninitialized(as_module):
    params = TensorDict.from_modules(*[_net() for _ in range(3)], as_module=as_module)
    weight = params["0", "weight"]
    assert isinstance(weight, nn.UninitializedParameter)
    assert params["2", "weight"].shape == (3, 2, 4)
    # materialized with one module's shape, it takes the stack's dim in front
    weight.materialize((4, 6))
    assert type(weight) is nn.Parameter
    assert weight.shape == (3, 4, 6)
    assert params["0", "weight"] is weight


@pytest.mark.parametrize("as_module", [False, True])
def test_vmap_over_a_lazy_ensemble_materializes_its_parameters(as_module):
    torch.manual_seed(0)
    params = TensorDict.from_modules(*[_net() for _ in range(3)], as_module=as_module)
    lazy = [params["0", "weight"], params["0", "bias"]]
    template = _template()
    x = torch.randn(5, 3, 6)

    out = _run(template, params, x)

    assert out.shape == (5, 3, 2)
    # the very tensors the tensordict held (an optimizer may hold them) got the data
    assert params["0", "weight"] is lazy[0] and params["0", "bias"] is lazy[1]
    assert type(lazy[0]) is nn.Parameter
    assert lazy[0].shape == (3, 4, 6) and lazy[1].shape == (3, 4)
    # one set of parameters per member, each initialized on its own
    assert not torch.allclose(lazy[0][0], lazy[0][1])
    torch.testing.assert_close(out, _expected(params, x))
    # the template is back to its meta tensors, and runs again with the parameters
    assert template[0].weight.device == torch.device("meta")
    torch.testing.assert_close(_run(template, params, x), out)


def test_gradients_of_a_lazy_ensemble_reach_the_stacked_parameters():
    params = TensorDict.from_modules(*[_net() for _ in range(2)], as_module=True)
    weight = params["0", "weight"]
    optim = torch.optim.SGD(params.parameters(), lr=0.1)
    template = _template()
    out = _run(template, params, torch.randn(5, 2, 6))
    out.sum().backward()
    assert weight.grad is not None and weight.grad.shape == (2, 4, 6)
    before = weight.detach().clone()
    optim.step()
    assert not torch.equal(weight.detach(), before)


def test_stacked_lazy_buffers():
    params = TensorDict.from_modules(nn.LazyBatchNorm1d(), nn.LazyBatchNorm1d())
    mean = params["running_mean"]
    assert isinstance(mean, nn.UninitializedBuffer)
    mean.materialize((5,))
    assert type(mean) is torch.Tensor and mean.shape == (2, 5)


def test_stacked_lazy_parameters_copy_and_pickle_with_their_stack_shape():
    params = TensorDict.from_modules(*[_net() for _ in range(3)])
    for copied in (
        copy.deepcopy(params["0", "weight"]),
        pickle.loads(pickle.dumps(params["0", "weight"])),
    ):
        assert isinstance(copied, nn.UninitializedParameter)
        copied.materialize((4, 6))
        assert copied.shape == (3, 4, 6)


def test_modules_that_ran_and_lazy_ones_do_not_stack():
    ran = _net()
    ran(torch.zeros(1, 6))
    with pytest.raises(RuntimeError, match="from_modules: .* uninitialized"):
        TensorDict.from_modules(_net(), ran)


def test_lazy_stack_of_lazy_modules_still_raises():
    with pytest.raises(RuntimeError, match="not compatible with lazy modules"):
        TensorDict.from_modules(_net(), _net(), lazy_stack=True)
