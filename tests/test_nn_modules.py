"""tensordict.nn modules: TensorDictModule, TensorDictSequential, dispatch, skip_existing,
the wrappers; each on dense tensordicts, lazy stacks and tensorclasses."""

import collections

import pytest
import torch
from torch import nn

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict
from tensordict.nn import (
    TensorDictModule,
    TensorDictModuleBase,
    TensorDictModuleWrapper,
    TensorDictSequential,
    WrapModule,
    as_tensordict_module,
    dispatch,
    set_skip_existing,
    skip_existing,
)


class Data(TensorClass):
    x: torch.Tensor
    y: torch.Tensor = None
    z: torch.Tensor = None


def make_input(kind: str):
    """The same data (x of shape [4, 3]) as a dense tensordict, a lazy stack, a
    tensorclass."""
    x = torch.arange(12.0).reshape(4, 3)
    if kind == "dense":
        return TensorDict(x=x, batch_size=[4])
    if kind == "lazy":
        return LazyStackedTensorDict.lazy_stack(
            [TensorDict(x=row) for row in x.unbind(0)], 0
        )
    return Data(x=x, batch_size=[4])


KINDS = ["dense", "lazy", "tensorclass"]


@pytest.mark.parametrize("kind", KINDS)
def test_module_reads_and_writes(kind):
    linear = nn.Linear(3, 2)
    module = TensorDictModule(linear, in_keys=["x"], out_keys=["y"])
    data = make_input(kind)
    out = module(data)
    assert out is data  # written in place
    torch.testing.assert_close(out.get("y"), linear(data.get("x")))
    assert type(out) is type(data)


@pytest.mark.parametrize("kind", KINDS)
def test_sequence_on_every_container(kind):
    first = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    second = TensorDictModule(lambda x, y: x * y, in_keys=["x", "y"], out_keys=["z"])
    data = make_input(kind)
    out = TensorDictSequential(first, second)(data)
    x = data.get("x")
    torch.testing.assert_close(out.get("z"), x * (x + 1))


@pytest.mark.parametrize("kind", KINDS)
def test_subclass_of_base_on_every_container(kind):
    class Double(TensorDictModuleBase):
        in_keys = ["x"]
        out_keys = ["y"]

        def forward(self, tensordict):
            tensordict.set("y", tensordict.get("x") * 2)
            return tensordict

    data = make_input(kind)
    torch.testing.assert_close(Double()(data).get("y"), data.get("x") * 2)


def test_nested_keys_and_tensordict_out():
    module = TensorDictModule(
        lambda a: (a + 1, a - 1), in_keys=[("in", "a")], out_keys=[("out", "p"), "m"]
    )
    td = TensorDict({"in": {"a": torch.zeros(2)}}, [2])
    module(td)
    assert (td["out", "p"] == 1).all() and (td["m"] == -1).all()
    dest = TensorDict(batch_size=[2])
    result = module(TensorDict({"in": {"a": torch.zeros(2)}}, [2]), tensordict_out=dest)
    assert result is dest and set(dest.keys(True, True)) == {("out", "p"), "m"}


def test_dict_in_keys_map_argument_names():
    def f(a, b):
        return a - b

    td = TensorDict(x=torch.ones(2), z=torch.full((2,), 3.0), batch_size=[2])
    by_name = TensorDictModule(f, in_keys={"a": "z", "b": "x"}, out_keys=["d"])
    assert by_name.in_keys == ["z", "x"]
    assert (by_name(td.clone())["d"] == 2).all()
    by_key = TensorDictModule(
        f, in_keys={"z": "a", "x": "b"}, out_keys=["d"], out_to_in_map=False
    )
    assert (by_key(td.clone())["d"] == 2).all()


def test_inplace_options():
    td = TensorDict(x=torch.ones(2), batch_size=[2])
    new = TensorDictModule(lambda x: x + 1, ["x"], ["y"], inplace=False)(td)
    assert new is not td and list(new.keys()) == ["y"] and "y" not in td.keys()
    empty = TensorDictModule(lambda x: x + 1, ["x"], ["y"], inplace="empty")(td)
    assert list(empty.keys()) == ["y"] and empty.batch_size == td.batch_size


def test_missing_input_passes_none_or_raises_when_strict():
    module = TensorDictModule(
        lambda a, b=None: a if b is None else a + b, in_keys=["a", "b"], out_keys=["s"]
    )
    td = TensorDict(a=torch.ones(2), batch_size=[2])
    assert (module(td)["s"] == 1).all()
    strict = TensorDictModule(
        lambda a, b: a, in_keys=["a", "b"], out_keys=["s"], strict=True
    )
    with pytest.raises(KeyError, match=r"TensorDictModule.*\['b'\].*missing"):
        strict(td)


def test_missing_key_error_names_module_and_key():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["obs"], out_keys=["y"])
    with pytest.raises(KeyError) as info:
        module(TensorDict(other=torch.zeros(2, 3), batch_size=[2]))
    message = str(info.value)
    assert "TensorDictModule" in message and "'obs'" in message and "other" in message


def test_wrong_shape_error_names_module_key_and_shape():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["obs"], out_keys=["y"])
    with pytest.raises(RuntimeError) as info:
        module(TensorDict(obs=torch.zeros(2, 5), batch_size=[2]))
    message = str(info.value)
    assert "TensorDictModule" in message and "Linear" in message
    assert "'obs'" in message and "(2, 5)" in message
    assert isinstance(info.value.__cause__, RuntimeError)  # torch's own error kept


def test_wrong_output_count_and_batch_errors():
    module = TensorDictModule(lambda x: (x, x, x), in_keys=["x"], out_keys=["a", "b"])
    with pytest.raises(RuntimeError, match="returned 3 outputs.*2 out_keys"):
        module(TensorDict(x=torch.zeros(2), batch_size=[2]))
    bad = TensorDictModule(lambda x: x.sum(0), in_keys=["x"], out_keys=["s"])
    with pytest.raises(RuntimeError, match="TensorDictModule.*could not write.*'s'"):
        bad(TensorDict(x=torch.zeros(2, 3), batch_size=[2]))


def test_gradients_reach_parameters_through_module():
    linear = nn.Linear(3, 1)
    module = TensorDictModule(linear, in_keys=["x"], out_keys=["y"])
    out = module(TensorDict(x=torch.randn(5, 3), batch_size=[5]))
    out["y"].sum().backward()
    assert linear.weight.grad is not None and linear.weight.grad.abs().sum() > 0


def test_calls_with_tensors():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    x = torch.randn(6, 3)
    # positional tensors: the outputs
    torch.testing.assert_close(module(x), module.module(x))
    # keyword tensors: the tensordict (seed 004), its batch size the shared dims
    td = module(x=x)
    assert isinstance(td, TensorDict) and td.batch_size == (6,)
    torch.testing.assert_close(td["y"], module.module(x))
    with pytest.raises(TypeError, match="2 positional tensors.*1 in_keys"):
        module(x, x)


def test_dispatch_decorator():
    class Net(nn.Module):
        in_keys = ["x", ("n", "y")]
        out_keys = ["z", ("n", "w")]

        @dispatch
        def forward(self, tensordict):
            tensordict["z"] = tensordict["x"] + 1
            tensordict["n", "w"] = tensordict["n", "y"] * 2
            return tensordict

    net = Net()
    z, w = net(torch.zeros(2), torch.ones(2))
    assert (z == 1).all() and (w == 2).all()
    z, w = net(x=torch.zeros(2), n_y=torch.ones(2))
    assert (z == 1).all() and (w == 2).all()
    td = net(TensorDict(x=torch.zeros(2), n=TensorDict(y=torch.ones(2))))
    assert isinstance(td, TensorDict)

    class Custom(nn.Module):
        @dispatch(source=["a"], dest=["b"], separator=".", auto_batch_size=False)
        def forward(self, tensordict):
            assert tensordict.batch_size == ()
            return tensordict.set("b", tensordict["a"] + 1)

    assert (Custom()(torch.zeros(3)) == 1).all()


def test_select_and_reset_out_keys():
    module = TensorDictModule(lambda x: (x + 1, x + 2), ["x"], ["y", "z"])
    module.select_out_keys("z")
    assert module.out_keys == ["z"] and module.out_keys_source == ["y", "z"]
    out = module(TensorDict(x=torch.zeros(1)))
    assert set(out.keys()) == {"x", "z"}
    module.reset_out_keys()
    assert set(module(TensorDict(x=torch.zeros(1))).keys()) == {"x", "y", "z"}
    with pytest.raises(KeyError, match="select_out_keys"):
        module.select_out_keys("nope")

    class Both(TensorDictModuleBase):
        in_keys = ["x"]
        out_keys = ["y", "z"]

        def forward(self, tensordict):
            return tensordict.set("y", tensordict["x"]).set("z", tensordict["x"])

    both = Both().select_out_keys("y")
    assert set(both(TensorDict(x=torch.zeros(1))).keys()) == {"x", "y"}


def test_out_keys_and_in_keys_reassigned_after_construction():
    # users (and TorchRL) assign in_keys / out_keys on a built module: calls follow
    module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    td = TensorDict(x=torch.zeros(2), w=torch.ones(2), batch_size=[2])
    module(td)
    module.in_keys = ["w"]
    module.out_keys = ["z"]
    out = module(td.exclude("y"))
    assert set(out.keys()) == {"x", "w", "z"}
    assert (out["z"] == 2).all()
    module.select_out_keys("z")
    module.out_keys = [("nested", "a")]  # a new list replaces the selection
    assert (module(td.exclude("y"))["nested", "a"] == 2).all()
    assert module.out_keys_source == [("nested", "a")]


def test_forward_hooks_see_tensordicts():
    module = TensorDictModule(lambda x: x + 1, ["x"], ["y"])
    seen = []
    module.register_forward_hook(lambda mod, args, out: seen.append(out))
    td = module(TensorDict(x=torch.zeros(1)))
    assert seen == [td]


def test_hooks_fire_whenever_registered():
    # a call skips nn.Module.__call__ only while no hook could fire
    inner = nn.Linear(2, 2)
    module = TensorDictModule(inner, ["x"], ["y"])
    sequence = TensorDictSequential(module)
    td = TensorDict(x=torch.zeros(3, 2), batch_size=[3])
    sequence(td)
    events = []
    handles = [
        module.register_forward_pre_hook(lambda mod, args: events.append("pre")),
        module.register_forward_hook(lambda mod, args, out: events.append("post")),
        inner.register_forward_hook(lambda mod, args, out: events.append("inner")),
        sequence.register_forward_hook(lambda mod, args, out: events.append("seq")),
        torch.nn.modules.module.register_module_forward_hook(
            lambda mod, args, out: events.append(type(mod).__name__)
        ),
    ]
    try:
        sequence(td)
    finally:
        for handle in handles:
            handle.remove()
    assert sorted(events) == sorted(
        ["pre", "post", "inner", "seq", "Linear", "TensorDictModule"]
        + ["TensorDictSequential"]
    )
    events.clear()
    sequence(td)
    assert events == []


def test_pre_hook_can_replace_the_input():
    module = TensorDictModule(lambda x: x + 1, ["x"], ["y"])
    other = TensorDict(x=torch.ones(2), batch_size=[2])
    module.register_forward_pre_hook(lambda mod, args: (other,))
    out = module(TensorDict(x=torch.zeros(2), batch_size=[2]))
    assert out is other and (out["y"] == 2).all()


def test_forward_replaced_on_a_subclass_or_the_instance_runs():
    class Negated(TensorDictModule):
        def forward(self, tensordict):
            return super().forward(tensordict).apply(lambda t: -t)

    td = TensorDict(x=torch.ones(2), batch_size=[2])
    assert (Negated(lambda x: x + 1, ["x"], ["y"])(td.clone())["y"] == -2).all()
    module = TensorDictModule(lambda x: x + 1, ["x"], ["y"])
    module.forward = lambda tensordict: tensordict.set("y", tensordict["x"] * 10)
    assert (module(td.clone())["y"] == 10).all()


def test_output_with_other_leading_dims_is_refused():
    td = TensorDict(x=torch.zeros(3, 2), batch_size=[3])
    for bad in (lambda x: x[:2], lambda x: x.sum()):  # 2 rows, or no dim at all
        with pytest.raises(RuntimeError, match="could not write.*'y'"):
            TensorDictModule(bad, ["x"], ["y"])(td)


def test_compiled_module_and_compiled_call():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    td = TensorDict(x=torch.randn(2, 3), batch_size=[2])
    expected = module(td.clone())["y"]
    compiled = torch.compile(module, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(td.clone())["y"], expected)
    module.compile(backend="eager")
    torch.testing.assert_close(module(td.clone())["y"], expected)


def test_repr_is_readable():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    text = repr(module)
    assert "in_keys=['x']" in text and "out_keys=['y']" in text and "Linear" in text
    sequence = TensorDictSequential(module, lambda td: td)
    assert "WrapModule" in repr(sequence) and "in_keys=['x']" in repr(sequence)


def test_skip_existing():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    module = TensorDictModule(f, in_keys=["x"], out_keys=["y"])
    td = TensorDict(x=torch.zeros(()), y=torch.zeros(()))
    assert skip_existing() is False
    with set_skip_existing(True):
        assert skip_existing() is True
        assert module(td)["y"] == 0 and not calls
        with set_skip_existing(["other"]):
            module(td)  # "y" is not in the list: it runs
    assert len(calls) == 1 and skip_existing() is False
    module(td)
    assert len(calls) == 2 and td["y"] == 1
    # a module reading what it writes always runs
    inplace = TensorDictModule(lambda y: y + 1, in_keys=["y"], out_keys=["y"])
    with set_skip_existing():
        assert inplace(td)["y"] == 2
    # restored after an exception
    with pytest.raises(ValueError):
        with set_skip_existing(True):
            raise ValueError
    assert skip_existing() is False


def test_set_skip_existing_as_decorator():
    class Module(TensorDictModuleBase):
        in_keys = []
        out_keys = ["out"]

        @set_skip_existing(None)
        def forward(self, tensordict):
            return tensordict.set("out", torch.ones(()))

    td = TensorDict(out=torch.zeros(()))
    assert Module()(td)["out"] == 1
    td["out"] = torch.zeros(())
    with set_skip_existing(True):
        assert Module()(td)["out"] == 0


def test_sequence_keys_and_subsequence():
    m1 = TensorDictModule(lambda a: a + 1, in_keys=["a"], out_keys=["b"])
    m2 = TensorDictModule(lambda b, c: b + c, in_keys=["b", "c"], out_keys=["d"])
    m3 = TensorDictModule(lambda a: a * 2, in_keys=["a"], out_keys=["e"])
    seq = TensorDictSequential(m1, m2, m3)
    assert seq.in_keys == ["a", "c"]  # "b" is written before it is read
    assert seq.out_keys == ["b", "d", "e"]
    sub = seq.select_subsequence(out_keys=["d"])
    assert list(sub) == [m1, m2] and sub.in_keys == ["a", "c"]
    # in_keys: the keys that changed; the modules reading any of them (and the
    # keys these write, in turn) are kept, as 0.15.3
    sub = seq.select_subsequence(in_keys=["a"])
    assert list(sub) == [m1, m2, m3]
    sub = seq.select_subsequence(in_keys=["c"])
    assert list(sub) == [m2]
    sub = seq.select_subsequence(in_keys=["a"], out_keys=["e"])
    assert list(sub) == [m3]
    with pytest.raises(ValueError, match="no module"):
        seq.select_subsequence(in_keys=["z"])
    # a tuple is a list of keys; nested sequences are searched too
    nested = TensorDictSequential(TensorDictSequential(m1, m2), m3)
    sub = nested.select_subsequence(out_keys=("b", "e"))
    assert [m.out_keys for m in sub] == [["b"], ["e"]]
    # an OrderedDict's names are kept
    named = TensorDictSequential(collections.OrderedDict(one=m1, two=m2, three=m3))
    assert list(named.select_subsequence(out_keys=["d"]).module) == ["one", "two"]
    assert len(seq) == 3 and seq[0] is m1 and list(seq[1:]) == [m2, m3]
    assert isinstance(seq[1:], TensorDictSequential)
    del seq[2]
    assert seq.out_keys == ["b", "d"]
    seq[1] = m3
    assert seq.out_keys == ["b", "e"] and seq.in_keys == ["a"]


def test_sequence_of_functions_nested_and_selected():
    m1 = TensorDictModule(lambda a: a + 1, in_keys=["a"], out_keys=["b"])
    inner = TensorDictSequential(m1, lambda td: td.set("f", td["b"] * 10))
    outer = TensorDictSequential(inner, TensorDictModule(lambda f: -f, ["f"], ["g"]))
    td = outer(TensorDict(a=torch.zeros(1)))
    assert td["g"].item() == -10
    selected = TensorDictSequential(
        m1, TensorDictModule(lambda b: b, ["b"], ["c"]), selected_out_keys=["c"]
    )
    out = selected(TensorDict(a=torch.zeros(1)))
    assert set(out.keys()) == {"a", "c"} and selected.out_keys == ["c"]
    fresh = TensorDictSequential(m1, inplace=False)
    td = TensorDict(a=torch.zeros(1))
    out = fresh(td)
    assert list(out.keys()) == ["b"] and list(td.keys()) == ["a"]


def test_sequence_partial_tolerant_on_lazy_stack():
    m1 = TensorDictModule(lambda a: a + 1, in_keys=["a"], out_keys=["b"])
    m2 = TensorDictModule(lambda c: c * 2, in_keys=["c"], out_keys=["d"])
    with pytest.raises(KeyError, match="'c'"):
        TensorDictSequential(m1, m2)(TensorDict(a=torch.zeros(1)))
    tolerant = TensorDictSequential(m1, m2, partial_tolerant=True)
    out = tolerant(TensorDict(a=torch.zeros(1)))
    assert set(out.keys()) == {"a", "b"}
    stack = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(1), c=torch.ones(1)), TensorDict(a=torch.zeros(1))]
    )
    tolerant(stack)
    assert (
        stack.tensordicts[0]["d"].item() == 2 and "d" not in stack.tensordicts[1].keys()
    )


def test_sequence_called_with_tensors():
    seq = TensorDictSequential(
        TensorDictModule(lambda a: a + 1, ["a"], ["b"]),
        TensorDictModule(lambda b: b * 3, ["b"], ["c"]),
    )
    b, c = seq(torch.zeros(2))
    assert (c == 3).all()
    td = seq(a=torch.zeros(2))
    assert isinstance(td, TensorDict) and (td["c"] == 3).all()


def test_sequence_gradients():
    lin1, lin2 = nn.Linear(3, 3), nn.Linear(3, 1)
    seq = TensorDictSequential(
        TensorDictModule(lin1, ["x"], ["h"]), TensorDictModule(lin2, ["h"], ["y"])
    )
    seq(TensorDict(x=torch.randn(4, 3), batch_size=[4]))["y"].sum().backward()
    assert lin1.weight.grad is not None and lin2.weight.grad is not None


def test_wrappers():
    td = TensorDict(x=torch.ones(2), batch_size=[2])
    wrap = WrapModule(lambda t: t.set("y", t["x"] * 3), in_keys=["x"], out_keys=["y"])
    assert (wrap(td.clone())["y"] == 3).all() and wrap.in_keys == ["x"]
    keep = WrapModule(lambda t: t.select("x"), inplace=True)
    assert keep(td) is td
    inner = TensorDictModule(lambda x: x + 1, ["x"], ["y"])
    wrapper = TensorDictModuleWrapper(inner)
    assert wrapper.in_keys == ["x"] and wrapper.out_keys == ["y"]
    assert (wrapper(td.clone())["y"] == 2).all()

    @as_tensordict_module(in_keys=["x"], out_keys=["y"])
    def add_one(x):
        return x + 1

    assert (add_one(td.clone())["y"] == 2).all()
    assert (add_one(torch.zeros(1)) == 1).all()


def test_reset_parameters_recursive():
    module = TensorDictModule(nn.Linear(3, 3), ["x"], ["y"])
    before = module.module.weight.detach().clone()
    params = TensorDict.from_module(module).clone()
    fresh = module.reset_parameters_recursive(params)
    assert fresh is params  # re-initialised in place, as 0.15.3
    assert torch.equal(module.module.weight, before)  # untouched
    assert not torch.equal(fresh["module", "weight"], before)
    module.reset_parameters_recursive()
    assert not torch.equal(module.module.weight, before)
    # one set of parameters at a time: extra batch dims are refused
    with pytest.raises(RuntimeError, match="batch dims"):
        module.reset_parameters_recursive(params.expand(2, 3).clone())
    # nothing to re-initialise: a warning
    empty = TensorDictModule(nn.Tanh(), ["x"], ["y"])
    with pytest.warns(UserWarning, match="did not find any parameters to reset"):
        empty.reset_parameters_recursive()


def test_is_tdmodule_compatible():
    assert TensorDictModuleBase.is_tdmodule_compatible(
        TensorDictModule(lambda x: x, ["x"], ["y"])
    )
    assert not TensorDictModuleBase.is_tdmodule_compatible(nn.Linear(1, 1))


@pytest.mark.parametrize("kind", KINDS)
def test_wrappers_on_every_container(kind):
    data = make_input(kind)
    wrap = WrapModule(
        lambda t: t.set("y", t.get("x") * 3), in_keys=["x"], out_keys=["y"]
    )
    torch.testing.assert_close(wrap(data).get("y"), data.get("x") * 3)
    inner = TensorDictModule(lambda x: x - 1, ["x"], ["z"])
    out = TensorDictModuleWrapper(inner)(data)
    torch.testing.assert_close(out.get("z"), data.get("x") - 1)


@pytest.mark.parametrize("kind", KINDS)
def test_ensemble_on_every_container(kind):
    from tensordict.nn import EnsembleModule

    module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
    ensemble = EnsembleModule(module, num_copies=2)
    data = make_input(kind)
    out = ensemble(data)
    weights = ensemble.params_td["module", "weight"]
    bias = ensemble.params_td["module", "bias"]
    for i in range(2):
        expected = torch.nn.functional.linear(data.get("x"), weights[i], bias[i])
        torch.testing.assert_close(out.get("y")[i], expected)


def test_cudagraph_module_without_cuda_says_so_and_passes_through():
    from tensordict.nn import CudaGraphModule

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the module captures graphs here")
    module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    with pytest.warns(UserWarning, match="CUDA is not available"):
        graphed = CudaGraphModule(module)
    assert graphed.in_keys == ["x"] and graphed.out_keys == ["y"]
    assert (graphed(TensorDict(x=torch.zeros(2), batch_size=[2]))["y"] == 1).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cudagraph_module_replays_on_cuda():
    from tensordict.nn import CudaGraphModule

    module = TensorDictModule(nn.Linear(3, 2).cuda(), in_keys=["x"], out_keys=["y"])
    graphed = CudaGraphModule(module, warmup=2)
    for _ in range(5):
        x = torch.randn(4, 3, device="cuda")
        out = graphed(TensorDict(x=x, batch_size=[4]))
        torch.testing.assert_close(out["y"], module.module(x))


def test_tensorclass_modules():
    from tensordict.nn import TensorClassModuleBase

    class In(TensorClass):
        a: torch.Tensor
        b: torch.Tensor

    class Out(TensorClass):
        c: torch.Tensor

    class Add(TensorClassModuleBase[In, Out]):
        def forward(self, x: In) -> Out:
            return Out(c=x.a + x.b, batch_size=x.batch_size)

    add = Add()
    assert add.in_keys == ["a", "b"] and add.out_keys == ["c"]
    result = add(In(a=torch.ones(2), b=torch.ones(2), batch_size=[2]))
    assert isinstance(result, Out) and (result.c == 2).all()
    as_td = add.as_td_module()
    out = as_td(TensorDict(a=torch.ones(2), b=torch.ones(2), batch_size=[2]))
    assert isinstance(out, TensorDict) and (out["c"] == 2).all()


def test_every_name_of_the_api_surface_is_importable():
    import importlib
    from pathlib import Path

    import tensordict
    import tensordict.nn as tnn

    listing = Path(__file__).resolve().parent / "api_nn_names.txt"
    names = [
        line.strip()
        for line in listing.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(names) > 30
    missing = [name for name in names if not hasattr(tnn, name)]
    assert not missing
    for top in [
        "TensorDictParams",
        "from_module",
        "from_modules",
        "as_tensordict_module",
    ]:
        assert hasattr(tensordict, top)
    # the module paths users import from
    for path, name in [
        ("tensordict.nn.common", "TensorDictModule"),
        ("tensordict.nn.common", "dispatch"),
        ("tensordict.nn.sequence", "TensorDictSequential"),
        ("tensordict.nn.probabilistic", "InteractionType"),
        ("tensordict.nn.probabilistic", "ProbabilisticTensorDictModule"),
        ("tensordict.nn.params", "TensorDictParams"),
        ("tensordict.nn.distributions", "Delta"),
        ("tensordict.nn.distributions", "NormalParamExtractor"),
        ("tensordict.nn.distributions.continuous", "Delta"),
        ("tensordict.nn.functional_modules", "make_functional"),
        ("tensordict.nn.utils", "biased_softplus"),
        ("tensordict.nn.ensemble", "EnsembleModule"),
        ("tensordict.nn.cudagraphs", "CudaGraphModule"),
    ]:
        assert hasattr(importlib.import_module(path), name), (path, name)
