"""Parameters as tensordicts: from_module / from_modules / to_module, state_dict,
TensorDictParams, make_functional, EnsembleModule."""

import copy
import io
import pickle

import pytest
import torch
from torch import nn

import tensordict
from tensordict import LazyStackedTensorDict, TensorClass, TensorDict
from tensordict.nn import (
    EnsembleModule,
    TensorDictModule,
    TensorDictParams,
    make_functional,
)


def make_model():
    return nn.Sequential(
        nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2))
    )


# ---------------------------------------------------------------------------- from_module
def test_from_module_mirrors_the_module_tree():
    model = make_model()
    params = TensorDict.from_module(model)
    assert params["0", "weight"] is model[0].weight  # the tensors themselves
    assert params["1", "running_mean"] is model[1].running_mean  # buffers too
    assert "2" not in params.keys()  # ReLU holds nothing
    assert params["3", "0", "bias"] is model[3][0].bias
    assert not params.is_locked
    keys = {".".join(k) for k in params.keys(True, True)}
    assert keys == set(model.state_dict())
    kept = TensorDict.from_module(model, filter_empty=False)
    assert kept["2"].is_empty()
    assert tensordict.from_module(model).is_locked  # the function locks by default


def test_from_module_options():
    model = make_model()
    as_module = TensorDict.from_module(model, as_module=True)
    assert isinstance(as_module, TensorDictParams)
    assert as_module["0", "weight"] is model[0].weight
    state = TensorDict.from_module(model, use_state_dict=True)
    assert type(state["0", "weight"]) is torch.Tensor
    assert state["0", "weight"].data_ptr() == model[0].weight.data_ptr()


def test_from_modules_stacks():
    modules = [nn.Linear(3, 4) for _ in range(3)]
    stacked = TensorDict.from_modules(*modules)
    assert stacked.batch_size == (3,)
    assert isinstance(stacked["weight"], nn.Parameter) and stacked["weight"].is_leaf
    for i, module in enumerate(modules):
        assert torch.equal(stacked["weight"][i], module.weight)
    assert stacked["weight"].data_ptr() != modules[0].weight.data_ptr()  # copies
    lazy = TensorDict.from_modules(*modules, lazy_stack=True)
    assert (
        isinstance(lazy, LazyStackedTensorDict)
        and lazy[0]["weight"] is modules[0].weight
    )
    assert isinstance(
        TensorDict.from_modules(*modules, as_module=True), TensorDictParams
    )
    with pytest.raises(RuntimeError, match="'weight'.*different shapes.*lazy_stack"):
        TensorDict.from_modules(nn.Linear(3, 4), nn.Linear(3, 5))
    ragged = TensorDict.from_modules(nn.Linear(3, 4), nn.Linear(3, 5), lazy_stack=True)
    assert ragged[1]["weight"].shape == (5, 3)


def test_from_modules_expand_identical():
    shared = nn.Parameter(torch.randn(4))
    a, b = nn.Linear(3, 4), nn.Linear(3, 4)
    a.bias = b.bias = shared
    stacked = TensorDict.from_modules(a, b, expand_identical=True)
    assert stacked["bias"].stride()[0] == 0  # expanded, not copied
    assert stacked["weight"].stride()[0] != 0
    # a view of the shared parameter (not a new one): gradients reach it, as in 0.15.3
    as_module = TensorDict.from_modules(a, b, as_module=True, expand_identical=True)
    assert not isinstance(as_module["bias"], nn.Parameter)
    assert isinstance(as_module["weight"], nn.Parameter)
    as_module["bias"].sum().backward()
    assert (shared.grad == 2).all()


# ---------------------------------------------------------------------------- to_module
def test_to_module_swaps_and_returns_the_old_tensors():
    model = make_model()
    old_weight = model[0].weight
    params = TensorDict.from_module(model)
    zeros = params.detach().clone().zero_()
    swap = zeros.to_module(model)
    assert swap["0", "weight"] is old_weight
    assert (model[0].weight == 0).all()
    assert isinstance(model[0].weight, nn.Parameter)  # preserve_module_state
    assert len(list(model.parameters())) == len(list(params.values(True, True))) - 3
    swap.to_module(model)
    assert model[0].weight is old_weight


def test_to_module_context_manager_restores():
    model = make_model()
    old = TensorDict.from_module(model).copy()
    zeros = old.detach().clone().zero_()
    x = torch.randn(5, 3)
    model.eval()
    with zeros.to_module(model):
        assert (model[0].weight == 0).all()
        model(x)
    assert model[0].weight is old["0", "weight"]
    assert model[1].running_mean is old["1", "running_mean"]


def test_to_module_context_manager_restores_after_an_exception():
    model = make_model()
    weight, running_mean = model[0].weight, model[1].running_mean
    zeros = TensorDict.from_module(model).detach().clone().zero_()
    with pytest.raises(ValueError, match="inside"):
        with zeros.to_module(model):
            assert (model[0].weight == 0).all()
            raise ValueError("inside")
    assert model[0].weight is weight and model[1].running_mean is running_mean


def test_to_module_inplace_copies_into_the_module_tensors():
    model = nn.Linear(3, 4)
    weight = model.weight
    before = weight.detach().clone()
    zeros = TensorDict.from_module(model).detach().clone().zero_()
    swap = zeros.to_module(model, inplace=True)
    assert model.weight is weight and (weight == 0).all()
    assert torch.equal(swap["weight"], before)  # a copy of the old values
    assert zeros.to_module(model, inplace=True, return_swap=False) is None
    with zeros.to_module(model, inplace=True):
        pass


def test_to_module_gradients_reach_the_tensordict():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    params = TensorDict.from_module(model).detach().clone().requires_grad_()
    with params.to_module(model):
        assert model[0].weight is params["0", "weight"]  # kept as it is: it has a graph
        model(torch.randn(5, 3)).sum().backward()
    assert params["0", "weight"].grad is not None
    assert model[0].weight.grad is None


def test_to_module_errors_and_options():
    model = nn.Sequential(nn.Linear(3, 4))
    bad = TensorDict({"1": {"weight": torch.zeros(4, 3)}})
    with pytest.raises(KeyError, match=r"no submodule '1'"):
        bad.to_module(model)
    with pytest.raises(TypeError, match="nn.Module"):
        bad.to_module(lambda x: x)
    params = TensorDict.from_module(model).detach().clone()
    plain = params.to_module(model, preserve_module_state=False)
    assert type(model[0].weight) is torch.Tensor
    plain.to_module(model)
    dest = TensorDict()
    swap = params.to_module(model, swap_dest=dest)
    assert swap is dest and "0" in dest.keys()
    # through load_state_dict (its hooks), in place
    weight = model[0].weight
    zeros = params.clone().zero_()
    zeros.to_module(model, use_state_dict=True, inplace=True)
    assert model[0].weight is weight and (weight == 0).all()


def test_to_module_from_lazy_stack_and_tensorclass_and_params():
    module = nn.Linear(2, 2)
    members = [
        TensorDict.from_module(module).detach().clone().zero_() for _ in range(2)
    ]
    lazy = LazyStackedTensorDict.lazy_stack(members)[0]
    with lazy.to_module(module):
        assert (module.weight == 0).all()

    class Weights(TensorClass):
        weight: torch.Tensor
        bias: torch.Tensor

    tc = Weights(weight=torch.ones(2, 2), bias=torch.ones(2))
    with tc.to_module(module):
        assert (module.weight == 1).all()
    assert not (module.weight == 1).all()
    params = TensorDictParams(
        TensorDict(weight=torch.full((2, 2), 2.0), bias=torch.zeros(2))
    )
    with params.to_module(module):
        assert module.weight is params["weight"]


# ---------------------------------------------------------------------------- state_dict
def test_state_dict_round_trip_through_torch_save_weights_only():
    td = TensorDict(
        {
            "a": torch.randn(2, 3),
            "n": {"b": torch.ones(2, requires_grad=True)},
            "s": "text",
        },
        batch_size=[2],
    )
    state = td.state_dict()
    assert list(state) == ["a", "n.b"] and not state["n.b"].requires_grad
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    target = td.exclude("s").clone().zero_()
    target.load_state_dict(loaded)
    assert torch.equal(target["a"], td["a"]) and torch.equal(
        target["n", "b"], td["n", "b"]
    )
    nested = td.state_dict(flatten=False)
    assert torch.equal(nested["n"]["b"], td["n", "b"])
    buffer = io.BytesIO()
    torch.save(nested, buffer)
    buffer.seek(0)
    again = (
        td.exclude("s")
        .clone()
        .zero_()
        .load_state_dict(torch.load(buffer, weights_only=True))
    )
    assert torch.equal(again["a"], td["a"])
    assert list(td.state_dict(prefix="p.")) == ["p.a", "p.n.b"]
    assert td.state_dict(keep_vars=True)["n.b"] is td["n", "b"]


def test_load_state_dict_strict_and_assign():
    td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.zeros(2)}})
    with pytest.raises(
        RuntimeError, match=r"missing.*'n', 'b'.*not in the tensordict.*'c'"
    ):
        td.load_state_dict({"a": torch.ones(2), "c": torch.ones(2)})
    a = td["a"]
    td.load_state_dict({"a": torch.ones(2)}, strict=False)
    assert td["a"] is a and (a == 1).all()  # copied in place
    new = torch.full((2,), 5.0)
    td.load_state_dict({"a": new, "n.b": new}, assign=True)
    assert td["a"] is new
    empty = TensorDict().load_state_dict({"x.y": torch.ones(1)}, strict=False)
    assert empty["x", "y"].item() == 1


def test_state_dict_of_a_module_equals_the_tensordicts():
    model = make_model()
    flat = TensorDict.from_module(model).state_dict()
    module_state = model.state_dict()
    assert list(flat) == list(module_state)
    for key in flat:
        assert torch.equal(flat[key], module_state[key])


# ---------------------------------------------------------------------------- TensorDictParams
def make_params():
    return TensorDictParams(
        TensorDict(
            {
                "w": torch.randn(3),
                "n": {"b": torch.zeros(2)},
                "step": torch.zeros((), dtype=torch.long),
            },
            [],
        )
    )


def test_params_registers_parameters_and_buffers():
    params = make_params()
    assert [n for n, _ in params.named_parameters()] == ["w", "n.b"]
    assert [n for n, _ in params.named_buffers()] == ["step"]
    assert isinstance(params["w"], nn.Parameter) and isinstance(params["n"], TensorDict)
    params["new"] = torch.ones(1)
    assert isinstance(params["new"], nn.Parameter)
    params["n", "c"] = torch.ones(2)
    assert "n.c" in dict(params.named_parameters())
    raw = TensorDictParams(TensorDict(w=torch.ones(1)), no_convert=True)
    assert [n for n, _ in raw.named_buffers()] == ["w"]
    assert TensorDictParams(TensorDict(w=torch.ones(1)), lock=True).is_locked


def test_params_optimizer_step():
    params = make_params()
    optimizer = torch.optim.SGD(params.parameters(), lr=1.0)
    before = params["w"].detach().clone()
    (params["w"].sum() + params["n", "b"].sum()).backward()
    optimizer.step()
    torch.testing.assert_close(params["w"], before - 1)


def test_params_in_a_module():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.params = make_params()
            self.lin = nn.Linear(2, 2)

    model = Model()
    assert list(dict(model.named_parameters())) == [
        "params.w",
        "params.n.b",
        "lin.weight",
        "lin.bias",
    ]
    state = model.state_dict()
    assert list(state) == [
        "params.w",
        "params.n.b",
        "params.step",
        "lin.weight",
        "lin.bias",
    ]
    other = Model()
    other.load_state_dict({k: v + 1 for k, v in state.items()})
    torch.testing.assert_close(other.params["w"], model.params["w"] + 1)
    with pytest.raises(RuntimeError, match="Unexpected key.*params.zz"):
        other.load_state_dict({**state, "params.zz": torch.zeros(1)})
    weight = model.params["w"]
    model.to(torch.float64)  # a module's .to(): in place, same parameter objects
    assert model.params["w"] is weight and weight.dtype == torch.float64
    assert model.lin.weight.dtype == torch.float64
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["TensorDictParams", "Linear", "Model"]
    model.requires_grad_(False)
    assert not model.params["w"].requires_grad
    clone = copy.deepcopy(model)
    assert clone.params["w"] is not model.params["w"]
    assert torch.equal(clone.params["w"], model.params["w"])


def test_params_tensordict_ops():
    params = make_params()
    moved = params.to(torch.float64)
    assert isinstance(moved, TensorDictParams) and moved is not params
    assert moved["w"].dtype == torch.float64 and isinstance(moved["w"], nn.Parameter)
    cloned = params.clone()
    assert isinstance(cloned, TensorDictParams) and isinstance(
        cloned["w"], nn.Parameter
    )
    assert cloned["w"] is not params["w"]
    assert (
        type(params.detach()) is TensorDict and type(params.data["w"]) is torch.Tensor
    )
    assert type(params.apply(lambda x: x * 2)) is TensorDict
    assert params.update({"w": torch.zeros(3)}) is params
    assert params.batch_size == () and params.requires_grad
    restored = pickle.loads(pickle.dumps(params))
    assert list(dict(restored.named_parameters())) == ["w", "n.b"]
    with pytest.raises(RuntimeError, match="not a computation"):
        params()


# ---------------------------------------------------------------------------- make_functional
def test_make_functional():
    layer1, layer2 = nn.Linear(3, 4), nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    weight = layer1.weight
    params = make_functional(model)
    assert params["0", "weight"] is weight
    assert list(model.parameters()) == []  # taken out: the module is stateless
    x = torch.randn(10, 3)
    out = model(x, params=params)
    same = model(x, params)  # params as the last positional argument
    assert out.shape == (10, 4) and torch.equal(out, same)
    with pytest.raises(RuntimeError, match="pass them"):
        model(x)
    zeros = params.detach().clone().zero_()
    assert (model(x, zeros) == 0).all()
    out.sum().backward()
    assert weight.grad is not None  # gradients reach the parameters passed in


def test_make_functional_keep_params():
    model = nn.Linear(3, 2)
    params = make_functional(model, keep_params=True)
    x = torch.randn(4, 3)
    assert torch.equal(model(x), model(x, params=params))
    assert (model(x, params=params.detach().clone().zero_()) == 0).all()
    assert model.weight is params["weight"]


# ---------------------------------------------------------------------------- EnsembleModule
def test_ensemble_module():
    module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    ensemble = EnsembleModule(module, num_copies=3)
    assert ensemble.in_keys == ["x"] and ensemble.out_keys == ["y"]
    weights = ensemble.params_td["module", "weight"]
    assert weights.shape == (3, 2, 3) and not torch.equal(weights[0], weights[1])
    x = torch.randn(5, 3)
    out = ensemble(TensorDict(x=x, batch_size=[5]))
    assert out.batch_size == (3, 5)
    for i in range(3):
        expected = torch.nn.functional.linear(
            x, weights[i], ensemble.params_td["module", "bias"][i]
        )
        torch.testing.assert_close(out["y"][i], expected)
    out["y"].sum().backward()
    assert ensemble.params_td["module", "weight"].grad is not None
    per_copy = EnsembleModule(module, num_copies=3, expand_input=False)
    assert per_copy(TensorDict(x=torch.randn(3, 5, 3), batch_size=[3, 5]))[
        "y"
    ].shape == (3, 5, 2)
    with pytest.raises(ValueError, match="first batch dim is 3"):
        per_copy(TensorDict(x=torch.randn(5, 3), batch_size=[5]))


def test_to_module_context_manager_restores_shared_and_nested():
    # a submodule held twice, and nested swaps of the same module, unwind in order
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    weight = shared.weight
    params = TensorDict.from_module(model)
    ones = params.detach().clone().zero_() + 1
    twos = ones + 1
    with ones.to_module(model):
        with twos.to_module(model):
            assert (model[2].weight == 2).all()
        assert (model[0].weight == 1).all()
    assert model[0].weight is weight and model[2].weight is weight


def test_to_module_restores_what_the_swap_holds_on_exit():
    # the swap tensordict is what is written back, also when the block changed it
    model = nn.Linear(2, 2)
    zeros = TensorDict.from_module(model).detach().clone().zero_()
    replacement = nn.Parameter(torch.full((2,), 5.0))
    with zeros.to_module(model) as swap:
        swap["bias"] = replacement
    assert model.bias is replacement


def test_from_module_and_to_module_through_a_tensordictparams_submodule():
    # TorchRL's MultiAgentMLP keeps its stacked weights in a TensorDictParams
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.params = TensorDictParams(
                TensorDict.from_modules(nn.Linear(2, 3), nn.Linear(2, 3))
            )

    outer = nn.Sequential(Holder())
    params = TensorDict.from_module(outer, as_module=True)
    assert ("0", "params", "weight") in params.keys(True, True)
    assert [name for name, _ in params.named_parameters()] == [
        "0.params.weight",
        "0.params.bias",
    ]
    original = outer[0].params["weight"]
    zeros = params.detach().clone().zero_()
    with zeros.to_module(outer):
        assert (outer[0].params["weight"] == 0).all()
    assert outer[0].params["weight"] is original
