"""tensordict.nn: module call overhead, sequences, and moving parameters between
modules and tensordicts (from_module / to_module).

Targets (issue 11): ``test_tdmodule_linear`` within 1.3x of its floor (calling the
``nn.Linear(64, 64)`` by hand on a dict, batch 32); ``test_tdsequential_3``,
``test_module_roundtrip`` and ``test_vmap_ensemble`` at least 1.5x faster than 0.15.3;
the cases named after 0.15.3's own ``benchmarks/nn/functional_benchmarks_test.py``
(``test_tdmodule``, ``test_tdmodule_dispatch``, ``test_tdseq``, ``test_tdseq_dispatch``,
``test_exec_td_decorator``, ``test_to_module_speed``, ``test_from_module_eager``,
``test_to_module_eager``, ``test_to_module_inplace_copy``,
``test_to_module_plain_tensor_speed``; its vmap cases are ``test_vmap_ensemble`` here)
not slower than 0.15.3. Each checks its result outside the timed call.
"""

import copy

import pytest
import torch
from torch import nn

from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictModuleBase, TensorDictSequential


def _vmap_takes_tensordicts() -> bool:
    try:
        torch.vmap(lambda td: td["a"] + 1, (0,))(
            TensorDict(a=torch.zeros(2, 1), batch_size=[2])
        )
    except Exception:
        return False
    return True


VMAP_OVER_TENSORDICTS = _vmap_takes_tensordicts()

# ---------------------------------------------------------------------------------------
# Module calls
# ---------------------------------------------------------------------------------------


def test_tdmodule_linear(benchmark, impl):
    """TensorDictModule(nn.Linear(64, 64)) on a batch of 32 vs the floor: the same
    Linear called by hand on a dict's entry."""
    torch.manual_seed(0)
    linear = nn.Linear(64, 64)
    x = torch.randn(32, 64)
    if impl == "floor":
        data = {"x": x}

        def run():
            data["y"] = linear(data["x"])
            return data

        out = benchmark(run)["y"]
    else:
        module = TensorDictModule(linear, in_keys=["x"], out_keys=["y"])
        td = TensorDict(x=x, batch_size=[32])
        out = benchmark(module, td)["y"]
    torch.testing.assert_close(out, linear(x))


def _chain():
    torch.manual_seed(0)
    return [nn.Linear(8, 8) for _ in range(3)]


def test_tdsequential_3(benchmark):
    """A TensorDictSequential of three TensorDictModules (x -> a -> b -> c)."""
    layers = _chain()
    keys = ["x", "a", "b", "c"]
    sequence = TensorDictSequential(
        *[
            TensorDictModule(layer, in_keys=[keys[i]], out_keys=[keys[i + 1]])
            for i, layer in enumerate(layers)
        ]
    )
    x = torch.randn(32, 8)
    td = TensorDict(x=x, batch_size=[32])
    out = benchmark(sequence, td)
    torch.testing.assert_close(out["c"], layers[2](layers[1](layers[0](x))))


def test_tdmodule(benchmark):
    """0.15.3's test_tdmodule: an identity TensorDictModule on a one-entry tensordict."""
    module = TensorDictModule(lambda x: x, in_keys=["x"], out_keys=["y"])
    td = TensorDict({"x": torch.zeros(())}, [])
    out = benchmark(module, td)
    assert out["y"] is td["x"]


def test_tdmodule_dispatch(benchmark):
    """0.15.3's test_tdmodule_dispatch: the same module called with a tensor."""
    module = TensorDictModule(lambda x: x, in_keys=["x"], out_keys=["y"])
    x = torch.zeros(())
    assert benchmark(module, x) is x


class _Copy(TensorDictModuleBase):
    in_keys = ["x"]
    out_keys = ["y"]

    def forward(self, tensordict):
        return tensordict.set("y", tensordict.get("x"))


def test_tdseq(benchmark):
    """0.15.3's test_tdseq: a sequence of one TensorDictModuleBase subclass."""
    sequence = TensorDictSequential(_Copy())
    td = TensorDict({"x": torch.zeros(())}, [])
    assert benchmark(sequence, td)["y"] is td["x"]


def test_tdseq_dispatch(benchmark):
    """0.15.3's test_tdseq_dispatch: the same sequence called with a tensor."""
    sequence = TensorDictSequential(_Copy())
    x = torch.zeros(())
    assert benchmark(sequence, x) is x


# ---------------------------------------------------------------------------------------
# Parameters between modules and tensordicts
# ---------------------------------------------------------------------------------------


def _net():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)),
    )


def test_exec_td_decorator(benchmark):
    """0.15.3's test_exec_td_decorator: run a module with a tensordict of parameters
    put in with ``to_module`` as a context manager."""
    net = _net()
    x = torch.randn(2, 2)
    params = TensorDict.from_module(net)
    expected = net(x)

    def run():
        with params.to_module(net):
            return net(x)

    torch.testing.assert_close(benchmark(run), expected)


def _blocks(count: int):
    torch.manual_seed(0)
    return nn.Sequential(
        *[nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8)) for _ in range(count)]
    )


def _small_transformer():
    torch.manual_seed(0)
    return nn.Transformer(
        d_model=32,
        nhead=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        dim_feedforward=64,
        dropout=0,
        batch_first=True,
    )


_MODELS = {
    "4": lambda: _blocks(4),
    "64": lambda: _blocks(64),
    "transformer": _small_transformer,
}


@pytest.fixture(scope="module", params=list(_MODELS))
def transfer_model(request):
    return _MODELS[request.param]()


def test_module_roundtrip(benchmark):
    """from_module, then to_module and back (the context manager), on 4 blocks of
    Linear + BatchNorm."""
    model = _blocks(4)
    weight = model[0][0].weight

    def run():
        params = TensorDict.from_module(model)
        with params.to_module(model):
            pass
        return params

    params = benchmark(run)
    assert params["0", "0", "weight"] is weight and model[0][0].weight is weight


@pytest.mark.parametrize("as_module", [False, True])
def test_from_module_eager(benchmark, transfer_model, as_module):
    """0.15.3's test_from_module_eager."""
    params = benchmark(TensorDict.from_module, transfer_model, as_module=as_module)
    assert len(list(params.keys(True, True))) == len(transfer_model.state_dict())


@pytest.mark.parametrize("mode", ["no_swap", "swap", "context"])
def test_to_module_eager(benchmark, transfer_model, mode):
    """0.15.3's test_to_module_eager: a tensordict of another module's parameters
    into this one, returning the swap or not, or as a context manager."""
    params = TensorDict.from_module(copy.deepcopy(transfer_model))
    original = TensorDict.from_module(transfer_model).copy()
    if mode == "context":

        def run():
            with params.to_module(transfer_model):
                pass

        benchmark(run)
    else:
        benchmark(params.to_module, transfer_model, return_swap=mode == "swap")
    original.to_module(transfer_model)  # leave the shared fixture as it was
    key = next(iter(original.keys(True, True)))
    assert TensorDict.from_module(transfer_model)[key] is original[key]


@pytest.mark.parametrize("tdparams", [True, False])
def test_to_module_speed(benchmark, tdparams):
    """0.15.3's test_to_module_speed (a smaller transformer: the same walk, less
    memory): the context manager with a TensorDict or a TensorDictParams."""
    module = _small_transformer()
    params = TensorDict.from_module(module, as_module=tdparams)
    weight = module.encoder.layers[0].linear1.weight

    def run():
        with params.to_module(module):
            pass

    benchmark(run)
    assert module.encoder.layers[0].linear1.weight is weight


@pytest.mark.parametrize(
    "num_fields,width",
    [(16, 8), (256, 8), (16, 8192)],
    ids=["small", "many_leaves", "16MiB"],
)
@pytest.mark.parametrize("return_swap", [False, True])
def test_to_module_inplace_copy(benchmark, num_fields, width, return_swap):
    """0.15.3's test_to_module_inplace_copy: ``inplace=True`` copies into the module's
    tensors."""
    module = nn.Module()
    for i in range(num_fields // 4):
        child = nn.Module()
        for j in range(3):
            child.register_parameter(f"p{j}", nn.Parameter(torch.zeros(32, width)))
        child.register_buffer("b", torch.zeros(32, width))
        module.add_module(f"g{i}", child)
    params = TensorDict.from_module(copy.deepcopy(module))
    params.data.add_(1)
    storage = module.g0.p0.data_ptr()
    swap = benchmark(params.to_module, module, inplace=True, return_swap=return_swap)
    assert module.g0.p0.data_ptr() == storage != params["g0", "p0"].data_ptr()
    torch.testing.assert_close(module.g0.p0, params["g0", "p0"])
    assert (swap is None) is (not return_swap)


@pytest.mark.parametrize("preserve_module_state", [None, False, True])
def test_to_module_plain_tensor_speed(benchmark, preserve_module_state):
    """0.15.3's test_to_module_plain_tensor_speed (a smaller transformer): plain
    tensors into a module of parameters, wrapped as parameters or not."""
    module = _small_transformer()
    params = TensorDict.from_module(module).data.detach().clone()
    kwargs = (
        {}
        if preserve_module_state is None
        else {"preserve_module_state": preserve_module_state}
    )

    def run():
        with params.to_module(module, **kwargs):
            pass

    benchmark(run)
    assert isinstance(module.encoder.layers[0].linear1.weight, nn.Parameter)


# ---------------------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------------------


@pytest.mark.skipif(
    not VMAP_OVER_TENSORDICTS,
    reason="torch.vmap does not accept a TensorDict yet (the func branch builds it)",
)
@pytest.mark.parametrize("tdmodule", [False, True])
def test_vmap_ensemble(benchmark, tdmodule, impl):
    """0.15.3's test_vmap_mlp_speed_decorator, widened to the issue's ensemble of 10
    MLPs: ``torch.vmap`` over stacked parameters put in with ``to_module``. The floor:
    ``torch.func.functional_call`` under ``torch.vmap`` with a dict of the stacked
    parameters, no tensordict (most of the time is torch's batched Linear/ReLU, the
    same on every side)."""
    torch.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64)
    )
    x = torch.randn(32, 64)
    copies = [copy.deepcopy(mlp) for _ in range(10)]
    if impl == "floor":
        stacked = {
            name: torch.stack([dict(c.named_parameters())[name] for c in copies])
            for name, _ in mlp.named_parameters()
        }

        def func(x, params):
            return torch.func.functional_call(mlp, params, (x,))

        with torch.no_grad():
            out = benchmark(torch.vmap(func, (None, 0)), x, stacked)
    else:
        module = (
            TensorDictModule(mlp, in_keys=["x"], out_keys=["y"]) if tdmodule else mlp
        )
        params = TensorDict.from_modules(
            *[
                TensorDictModule(c, in_keys=["x"], out_keys=["y"]) if tdmodule else c
                for c in copies
            ]
        ).lock_()
        data = TensorDict({"x": x}, [32]) if tdmodule else x

        def func(data, params):
            with params.to_module(module):
                return module(data)

        with torch.no_grad():
            out = benchmark(torch.vmap(func, (None, 0)), data, params)
        out = out["y"] if tdmodule else out
    assert out.shape == (10, 32, 64)
    with torch.no_grad():
        torch.testing.assert_close(out[0], mlp(x))
