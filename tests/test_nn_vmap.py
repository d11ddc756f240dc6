"""torch.vmap / torch.func with tensordicts: over a TensorDict, over a TensorDictModule,
over ``to_module`` inside the function (seed 001's ensemble), with gradients.

``torch.vmap`` accepting a TensorDict comes from ``tensordict/_vmap.py``.
"""

import pytest
import torch
from torch import nn

from tensordict import LazyStackedTensorDict, TensorDict
from tensordict.nn import EnsembleModule, TensorDictModule, make_functional

def test_vmap_over_a_tensordict():
    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2])
    out = torch.vmap(lambda t: t.set("b", t["a"] * 2), (0,))(td)
    assert out.batch_size == (2,) and torch.equal(out["b"], td["a"] * 2)


def test_vmap_over_another_batch_dim():
    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2, 3])
    out = torch.vmap(lambda t: t.apply(lambda x: x + 1), (1,), (1,))(td)
    assert out.batch_size == (2, 3) and torch.equal(out["a"], td["a"] + 1)


def test_vmap_over_a_tensordict_module():
    module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    td = TensorDict(x=torch.randn(4, 5, 3), batch_size=[4, 5])
    out = torch.vmap(module, (0,))(td)
    torch.testing.assert_close(out["y"], module.module(td["x"]))


def _ensemble():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 4))
    params = TensorDict.from_module(model)
    stacked = torch.stack([params.detach().clone(), params.detach().clone().zero_()], 0)
    return model, stacked


def test_vmap_with_to_module_inside():
    model, stacked = _ensemble()
    x = torch.randn(10, 3)

    def func(x, params):
        with params.to_module(model):
            return model(x)

    y = torch.vmap(func, (None, 0))(x, stacked)
    assert y.shape == (2, 10, 4)
    with stacked[0].to_module(model):
        torch.testing.assert_close(y[0], model(x))
    assert (y[1] == 0).all()


def test_vmap_gradients_reach_the_parameters():
    model, stacked = _ensemble()
    stacked = stacked.requires_grad_()

    def func(x, params):
        with params.to_module(model):
            return model(x)

    torch.vmap(func, (None, 0))(torch.randn(10, 3), stacked).sum().backward()
    assert stacked["0", "weight"].grad is not None


def test_func_grad_with_a_tensordict_of_params():
    model = nn.Linear(3, 1)
    params = TensorDict.from_module(model).detach()
    x = torch.randn(5, 3)

    def loss(params):
        with params.to_module(model):
            return model(x).sum()

    grads = torch.func.grad(loss)(params)
    torch.testing.assert_close(grads["weight"], x.sum(0, keepdim=True))


def test_vmap_over_a_lazy_stack_of_parameters():
    modules = [nn.Linear(3, 2) for _ in range(3)]
    stacked = TensorDict.from_modules(*modules, lazy_stack=True)
    assert isinstance(stacked, LazyStackedTensorDict)
    model = nn.Linear(3, 2)
    x = torch.randn(4, 3)

    def func(params):
        with params.to_module(model):
            return model(x)

    y = torch.vmap(func, (0,))(stacked)
    for i, module in enumerate(modules):
        torch.testing.assert_close(y[i], module(x))


def test_make_functional_under_vmap():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 4))
    params = make_functional(model)
    stacked = torch.stack([params, params], 0)
    y = torch.vmap(model, (None, 0))(torch.randn(10, 3), stacked)
    assert y.shape == (2, 10, 4)


def test_functional_call_with_a_flat_tensordict_of_params():
    # torch.func.functional_call takes a dict of "a.b" names (a dict instance, as with
    # 0.15.3): flatten_keys(".") gives the names
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    params = TensorDict.from_module(model).detach().clone().requires_grad_()
    x = torch.randn(5, 3)
    out = torch.func.functional_call(
        model, dict(params.flatten_keys(".").items()), (x,)
    )
    with params.to_module(model):
        torch.testing.assert_close(out, model(x))
    out.sum().backward()
    assert params["0", "weight"].grad is not None


def test_func_grad_over_the_leaves_with_to_module():
    # gradients through to_module inside a torch.func transform (the leaves as a dict)
    model = nn.Linear(3, 1)
    params = TensorDict.from_module(model).detach()
    x = torch.randn(5, 3)

    def loss(leaves):
        with TensorDict(leaves).to_module(model):
            return model(x).sum()

    grads = torch.func.grad(loss)(dict(params.items()))
    torch.testing.assert_close(grads["weight"], x.sum(0, keepdim=True))


def test_vmap_over_the_leaves_with_to_module():
    # what EnsembleModule does: vmap over the parameters' leaves, to_module inside
    model, stacked = _ensemble()
    x = torch.randn(10, 3)

    def func(leaves):
        with TensorDict(leaves).unflatten_keys(".").to_module(model):
            return model(x)

    y = torch.vmap(func)(dict(stacked.flatten_keys(".").items()))
    assert y.shape == (2, 10, 4) and (y[1] == 0).all()


def test_ensemble_module_vmaps_copies():
    module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    ensemble = EnsembleModule(module, num_copies=4)
    out = ensemble(TensorDict(x=torch.randn(6, 3), batch_size=[6]))
    assert out["y"].shape == (4, 6, 2)
    assert not torch.equal(out["y"][0], out["y"][1])


@pytest.mark.parametrize("out_dim", [0, 1, -1])
def test_vmap_with_to_module_returns_tensors_at_the_out_dim(out_dim):
    # one tensor returned with an int out_dim: the vmapped dim lands where torch puts it
    model, stacked = _ensemble()
    x = torch.randn(10, 3)

    def func(x, params):
        with params.to_module(model):
            return model(x)

    y = torch.vmap(func, (None, 0), out_dims=out_dim)(x, stacked)
    expected = torch.vmap(func, (None, 0))(x, stacked).movedim(0, out_dim)
    assert torch.equal(y, expected)
    # an input passed through unbatched comes back expanded along the vmapped dim
    same = torch.vmap(lambda x, p: x, (None, 0))(x, stacked)
    assert torch.equal(same, x.expand(2, 10, 3))
    with pytest.raises(ValueError, match="BatchedTensor when out_dim is None"):
        torch.vmap(func, (None, 0), out_dims=None)(x, stacked)


def test_vmap_to_module_restores_the_module_after_each_call():
    model, stacked = _ensemble()
    weight = model[0].weight
    x = torch.randn(10, 3)

    def failing(x, params):
        with params.to_module(model):
            raise RuntimeError("inside the vmapped block")

    with pytest.raises(RuntimeError, match="inside the vmapped block"):
        torch.vmap(failing, (None, 0))(x, stacked)
    assert model[0].weight is weight
    assert isinstance(model[0].weight, nn.Parameter)


def test_vmap_leaves_an_unmapped_tensordict_of_the_caller_unchanged():
    # in_dims=None: the function gets a shallow copy (as with 0.15.3), so the batched
    # tensors it writes (dead once vmap returns) never reach the caller's tensordict
    module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    params = TensorDict.from_modules(module, module).lock_()
    data = TensorDict(x=torch.randn(4, 3), nested={"z": torch.zeros(4)}, batch_size=[4])
    x = data["x"]

    def func(data, params):
        with params.to_module(module):
            data["nested", "w"] = data["x"].sum(-1)
            return module(data)

    out = torch.vmap(func, (None, 0))(data, params)
    assert out.batch_size == (2, 4) and out["y"].shape == (2, 4, 2)
    assert out["nested", "w"].shape == (2, 4)
    assert set(data.keys(True, True)) == {"x", ("nested", "z")}
    assert data["x"] is x
