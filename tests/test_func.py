"""Tensordicts in torch's machinery: pytrees, torch.vmap and torch.func.

Oracles come from outside the code under test: the same computation on plain tensors
(vmap of the leaves, autograd on the leaves, the module called as is).
"""

from __future__ import annotations

import collections
import warnings

import pytest
import torch
import torch.utils._pytree as pytree
from torch import nn

from tensordict import (
    LazyStackedTensorDict,
    NonTensorData,
    TensorClass,
    TensorDict,
    from_pytree,
    tensorclass,
)


@tensorclass
class Pair:
    x: torch.Tensor
    y: torch.Tensor


class Tagged(TensorClass):
    obs: torch.Tensor
    tag: str = "none"


def make_td():
    return TensorDict(
        a=torch.randn(3, 2, 4),
        nested={"b": torch.randn(3, 2)},
        text="hello",
        batch_size=[3, 2],
        names=["x", "y"],
    )


# ---------------------------------------------------------------------------- pytree


def test_flatten_gives_the_tensors_and_keeps_the_rest():
    td = make_td()
    leaves, spec = pytree.tree_flatten(td)
    assert len(leaves) == 2
    assert leaves[0] is td["a"] and leaves[1] is td["nested", "b"]
    back = pytree.tree_unflatten(leaves, spec)
    assert type(back) is TensorDict
    assert back.batch_size == td.batch_size
    assert back.names == ["x", "y"]
    assert back["text"] == "hello"
    assert back["a"] is td["a"]
    assert list(back.keys(True)) == list(td.keys(True))


def test_tree_map_keeps_structure_batch_device_and_names():
    td = make_td()
    out = pytree.tree_map(lambda x: x * 2, td)
    torch.testing.assert_close(out["a"], td["a"] * 2)
    torch.testing.assert_close(out["nested", "b"], td["nested", "b"] * 2)
    assert out.batch_size == (3, 2) and out.names == ["x", "y"]
    assert out["text"] == "hello"


def test_tree_map_that_changes_batch_dims_refits_the_batch_size():
    td = TensorDict(a=torch.randn(3, 4), b=torch.randn(3), batch_size=[3])
    assert pytree.tree_map(lambda x: x[0], td).batch_size == ()
    assert pytree.tree_map(lambda x: x.unsqueeze(-1), td).batch_size == (3,)
    assert pytree.tree_map(lambda x: x.unsqueeze(0), td).batch_size == (1, 3)


def test_flatten_sorts_entries_of_every_type_each_time():
    # which entries are leaves is decided per type and remembered: a tensor subclass
    # and a nested tensordict are children, any other object stays in the spec, on the
    # first flatten of its type and on later ones
    class Marker:
        pass

    marker = Marker()
    for _ in range(2):
        td = TensorDict(
            p=torch.nn.Parameter(torch.zeros(2)),
            m=marker,
            sub={"x": torch.ones(2)},
            batch_size=[2],
        )
        leaves, spec = pytree.tree_flatten(td)
        assert len(leaves) == 2 and leaves[0] is td["p"] and leaves[1] is td["sub", "x"]
        back = pytree.tree_unflatten([leaf + 1 for leaf in leaves], spec)
        assert list(back.keys()) == ["p", "m", "sub"]
        assert back["m"] is marker
        torch.testing.assert_close(back["sub", "x"], torch.full((2,), 2.0))


def test_tree_map_over_several_tensordicts():
    a, b = make_td(), make_td()
    out = pytree.tree_map(torch.add, a, b)
    torch.testing.assert_close(out["a"], a["a"] + b["a"])


def test_specs_compare_on_keys_batch_size_and_data():
    a, b = make_td(), make_td()
    assert pytree.tree_structure(a) == pytree.tree_structure(b)
    b["text"] = "other"
    assert pytree.tree_structure(a) != pytree.tree_structure(b)
    c = make_td()
    c.batch_size = [3]
    assert pytree.tree_structure(a) != pytree.tree_structure(c)


def test_tensorclasses_are_nodes_even_when_defined_later():
    p = Pair(x=torch.zeros(3, 2), y=torch.ones(3), batch_size=[3])
    out = pytree.tree_map(lambda t: t + 1, p)
    assert type(out) is Pair
    torch.testing.assert_close(out.y, torch.full((3,), 2.0))

    @tensorclass
    class Late:
        z: torch.Tensor

    late = Late(z=torch.zeros(2), batch_size=[2])
    assert pytree.tree_leaves(late) == [late.z]
    assert type(pytree.tree_map(lambda t: t, late)) is Late
    tagged = Tagged(obs=torch.zeros(2, 3), tag="t", batch_size=[2])
    out = pytree.tree_map(lambda t: t - 1, tagged)
    assert out.tag == "t" and (out.obs == -1).all()


def test_non_tensor_data_is_kept_not_mapped():
    nd = NonTensorData("hello", batch_size=[2])
    assert pytree.tree_leaves(nd) == []
    assert pytree.tree_map(lambda x: x, nd).data == "hello"


@pytest.mark.parametrize("same_shapes", [True, False])
def test_lazy_stack_round_trip(same_shapes):
    members = [
        TensorDict(a=torch.randn(3, 4), batch_size=[3]),
        TensorDict(a=torch.randn(3, 4 if same_shapes else 5), batch_size=[3]),
    ]
    stack = LazyStackedTensorDict(*members, stack_dim=1)
    leaves = pytree.tree_leaves(stack)
    # the leaves carry every batch dim of the stack, in place
    assert all(leaf.shape[:2] == (3, 2 if same_shapes else 1) for leaf in leaves)
    out = pytree.tree_map(lambda x: x + 1, stack)
    assert isinstance(out, LazyStackedTensorDict)
    assert out.stack_dim == 1 and out.batch_size == (3, 2)
    for member, new in zip(members, out.tensordicts):
        torch.testing.assert_close(new["a"], member["a"] + 1)


def test_export_takes_tensordict_inputs_and_outputs():
    class Scale(nn.Module):
        def forward(self, td):
            return td * 2, td["a"] + td["nested", "b"].unsqueeze(-1)

    td = make_td().exclude("text")
    exported = torch.export.export(Scale(), (td,))
    out_td, out = exported.module()(td)
    assert isinstance(out_td, TensorDict) and out_td.batch_size == (3, 2)
    torch.testing.assert_close(out_td["a"], td["a"] * 2)
    torch.testing.assert_close(out, td["a"] + td["nested", "b"].unsqueeze(-1))


def test_spec_serializes_for_export():
    td = make_td()
    spec = pytree.tree_structure(td)
    loaded = pytree.treespec_loads(pytree.treespec_dumps(spec))
    assert loaded == spec
    rebuilt = pytree.tree_unflatten(pytree.tree_leaves(td), loaded)
    assert rebuilt.batch_size == td.batch_size and rebuilt["text"] == "hello"


# ----------------------------------------------------------------- to_pytree / from_pytree


def test_from_pytree_round_trip():
    nt = collections.namedtuple("NT", ["p", "q"])
    tree = {
        "a": [torch.zeros(3), (torch.ones(3, 2), nt(torch.zeros(3), torch.ones(3)))],
        "b": torch.arange(3),
        7: torch.ones(3),
        "n": 2.0,
    }
    td = TensorDict.from_pytree(tree)
    assert isinstance(td, TensorDict)
    assert (td["a", "1", "0"] == 1).all()
    back = td.to_pytree()
    assert type(back) is dict and list(back) == ["a", "b", 7, "n"]
    assert type(back["a"]) is list and type(back["a"][1]) is tuple
    assert type(back["a"][1][1]) is nt
    torch.testing.assert_close(back["a"][1][0], tree["a"][1][0])
    torch.testing.assert_close(back[7], tree[7])
    assert back["n"] == torch.tensor(2.0)


def test_from_pytree_batch_size_and_types():
    td = from_pytree({"x": torch.zeros(3, 2), "y": [torch.zeros(3)]}, batch_size=[3])
    assert td.batch_size == (3,) and td["y"].batch_size == (3,)
    auto = from_pytree({"x": torch.zeros(3, 2), "y": torch.zeros(3)}, auto_batch_size=True)
    assert auto.batch_size == (3,)
    od = collections.OrderedDict(z=torch.zeros(1), a=torch.ones(1))
    assert type(from_pytree(od).to_pytree()) is collections.OrderedDict
    dd = collections.defaultdict(list, z=torch.zeros(1))
    assert type(from_pytree(dd).to_pytree()) is collections.defaultdict
    result = torch.max(torch.randn(3, 2), 1)
    assert type(from_pytree(result).to_pytree()) is type(result)
    tensor = torch.zeros(2)
    assert from_pytree(tensor) is tensor
    with pytest.raises(NotImplementedError, match="str"):
        from_pytree({"a": "text"})


def test_to_pytree_of_a_plain_tensordict_stays_a_tensordict():
    td = TensorDict(a=torch.zeros(2), b={"c": torch.ones(2)}, batch_size=[2])
    out = td.to_pytree()
    assert isinstance(out, TensorDict) and isinstance(out["b"], TensorDict)


# ---------------------------------------------------------------------------- vmap


def test_vmap_sees_the_per_sample_batch_size():
    td = make_td()
    seen = []

    def fn(t):
        seen.append((t.batch_size, t.names, t["a"].shape, t["text"]))
        return t

    out = torch.vmap(fn)(td)
    assert seen == [(torch.Size([2]), ["y"], torch.Size([2, 4]), "hello")]
    assert out.batch_size == (3, 2)
    torch.testing.assert_close(out["a"], td["a"])
    assert out["text"] == "hello"


@pytest.mark.parametrize("in_dim", [0, 1, -1, -2])
def test_vmap_in_dims_count_batch_dims(in_dim):
    td = make_td()
    dim = in_dim % 2
    out = torch.vmap(lambda t: t["a"].sum(-1) + t["nested", "b"], (in_dim,))(td)
    expected = td["a"].sum(-1) + td["nested", "b"]
    torch.testing.assert_close(out, expected.movedim(dim, 0))
    same = torch.vmap(lambda t: t, (in_dim,))(td)  # the vmapped dim comes back first
    assert same.batch_size == (td.batch_size[dim], td.batch_size[1 - dim])
    torch.testing.assert_close(same["a"], td["a"].movedim(dim, 0))


@pytest.mark.parametrize("out_dim", [0, 1, -1])
def test_vmap_out_dims_place_the_vmapped_dim(out_dim):
    td = TensorDict(a=torch.randn(5, 3, 2), batch_size=[5, 3])
    out = torch.vmap(lambda t: t * 2, out_dims=out_dim)(td)
    position = {0: 0, 1: 1, -1: 1}[out_dim]
    assert out.batch_size == ((5, 3) if position == 0 else (3, 5))
    torch.testing.assert_close(out["a"], (td["a"] * 2).movedim(0, position))


def test_vmap_with_other_arguments_and_outputs():
    td = TensorDict(w=torch.randn(4, 3, 2), batch_size=[4])
    x = torch.randn(5, 3)
    y, aux = torch.vmap(lambda t, x: (x @ t["w"], t.apply(torch.neg)), (0, None))(td, x)
    torch.testing.assert_close(y, torch.stack([x @ w for w in td["w"]]))
    torch.testing.assert_close(aux["w"], -td["w"])
    assert aux.batch_size == (4,)


def test_vmap_nested():
    td = TensorDict(a=torch.randn(2, 3, 4), batch_size=[2, 3])
    sizes = []

    def inner(t):
        sizes.append(t.batch_size)
        return t["a"].sum()

    out = torch.vmap(torch.vmap(inner))(td)
    assert sizes == [torch.Size([])]
    torch.testing.assert_close(out, td["a"].sum(-1))


def test_vmap_returns_new_tensordicts():
    x = torch.randn(4, 2)
    out = torch.vmap(lambda v: TensorDict(y=v * 2, z=v.sum(), batch_size=[]))(x)
    assert out.batch_size == (4,)
    torch.testing.assert_close(out["y"], x * 2)
    # entries that do not depend on the input are expanded, as for tensors
    out = torch.vmap(lambda v: TensorDict(c=torch.zeros(2), batch_size=[2]))(x)
    assert out.batch_size == (4, 2)


def test_vmap_tensorclass():
    p = Pair(x=torch.randn(3, 2), y=torch.randn(3), batch_size=[3])
    seen = []

    def fn(pair):
        seen.append(type(pair))
        return pair.x.sum(-1) * pair.y

    torch.testing.assert_close(torch.vmap(fn)(p), p.x.sum(-1) * p.y)
    assert seen == [Pair]
    out = torch.vmap(lambda pair: pair * 2)(p)
    assert type(out) is Pair and out.batch_size == (3,)


def test_vmap_lazy_stack_along_another_dim_stays_lazy():
    members = [
        TensorDict(a=torch.randn(3, 4), batch_size=[3]),
        TensorDict(a=torch.randn(3, 5), batch_size=[3]),
    ]
    stack = LazyStackedTensorDict(*members, stack_dim=1)
    seen = []

    def fn(t):
        seen.append((type(t), t.batch_size, t.stack_dim))
        return t.apply(lambda x: x * 2)

    out = torch.vmap(fn)(stack)
    assert seen == [(LazyStackedTensorDict, torch.Size([2]), 0)]
    assert isinstance(out, LazyStackedTensorDict) and out.stack_dim == 1
    for member, new in zip(members, out.tensordicts):
        torch.testing.assert_close(new["a"], member["a"] * 2)


def test_vmap_lazy_stack_along_its_stack_dim():
    members = [TensorDict(a=torch.randn(4), batch_size=[]) for _ in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    out = torch.vmap(lambda t: t["a"].sum())(stack)
    torch.testing.assert_close(out, torch.stack([m["a"].sum() for m in members]))
    ragged = LazyStackedTensorDict(
        TensorDict(a=torch.randn(4)), TensorDict(a=torch.randn(5)), stack_dim=0
    )
    with pytest.raises(ValueError, match="stack dim"):
        torch.vmap(lambda t: t)(ragged)


@pytest.mark.parametrize("randomness", ["different", "same"])
def test_vmap_randomness(randomness):
    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4])
    out = torch.vmap(lambda t: t.apply(torch.rand_like), randomness=randomness)(td)
    rows_equal = all(torch.equal(out["a"][0], row) for row in out["a"])
    assert rows_equal == (randomness == "same")


def test_vmap_randomness_error():
    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4])
    with pytest.raises(RuntimeError, match="randomness"):
        torch.vmap(lambda t: t.apply(torch.rand_like))(td)


def test_vmap_chunk_size():
    td = TensorDict(a=torch.randn(5, 3), batch_size=[5])
    out = torch.vmap(lambda t: t * 2, chunk_size=2)(td)
    assert out.batch_size == (5,)
    torch.testing.assert_close(out["a"], td["a"] * 2)


def test_vmap_errors_name_the_problem():
    td = TensorDict(a=torch.randn(3, 2), batch_size=[3])
    with pytest.raises(ValueError, match="same size"):
        torch.vmap(lambda t, x: t, (0, 0))(td, torch.zeros(4))
    with pytest.raises(ValueError, match="at least -1"):
        torch.vmap(lambda t: t, (-2,))(td)


def test_vmap_ensemble_with_functional_call():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    params = TensorDict(
        {k: v.detach() for k, v in model.named_parameters()}, batch_size=[]
    ).unflatten_keys(".")
    zeros = params.apply(torch.zeros_like)
    stack = torch.stack([params, zeros], 0)
    x = torch.randn(5, 3)
    y = torch.vmap(lambda p, x: torch.func.functional_call(model, p, (x,)), (0, None))(
        stack, x
    )
    assert y.shape == (2, 5, 2)
    torch.testing.assert_close(y[0], model(x))
    torch.testing.assert_close(y[1], torch.zeros(5, 2))


def _swap_parameters(module, params):
    """What ``params.to_module(module)`` does, written by hand: the module's
    parameters replaced by the tensordict's tensors; the old ones returned."""
    old = {}
    for key, value in params.items(True, True):
        *path, name = key
        owner = module
        for part in path:
            owner = getattr(owner, part)
        old[key] = owner._parameters[name]
        owner._parameters[name] = value
    return old


def test_vmap_ensemble_swapping_parameters_inside_the_function():
    # the design seeds 001 and 004 rely on: to_module(model) inside torch.vmap
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 4))
    params = TensorDict(
        {k: v.detach() for k, v in model.named_parameters()}, batch_size=[]
    ).unflatten_keys(".")
    stack = torch.stack([params, params.apply(lambda p: p * 2)], 0)
    x = torch.randn(10, 3)

    def func(x, params):
        assert params.batch_size == ()
        old = _swap_parameters(model, params)
        try:
            return model(x)
        finally:
            _swap_parameters(model, TensorDict(old).unflatten_keys("."))

    y = torch.vmap(func, (None, 0))(x, stack)
    assert y.shape == (2, 10, 4)
    torch.testing.assert_close(y[0], model(x))
    expected = torch.func.functional_call(model, stack[1], (x,))
    torch.testing.assert_close(y[1], expected)


# ------------------------------------------------------------------------- torch.func


def test_functional_call_with_nested_tensordict():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    params = TensorDict(
        {k: torch.zeros_like(v) for k, v in model.named_parameters()}, batch_size=[]
    ).unflatten_keys(".")
    params["2", "bias"] = torch.ones(2)
    x = torch.randn(5, 3)
    out = torch.func.functional_call(model, params, (x,))
    torch.testing.assert_close(out, torch.ones(5, 2))
    # a sequence mixing a tensordict and a dict
    weights = params.exclude(("2", "bias"))
    out = torch.func.functional_call(model, (weights, {"2.bias": torch.full((2,), 3.0)}), x)
    torch.testing.assert_close(out, torch.full((5, 2), 3.0))


def test_grad_with_tensordict_input():
    td = TensorDict(a=torch.randn(3, 4), nested={"b": torch.randn(3)}, batch_size=[3])

    def loss(t):
        return (t["a"] ** 2).sum() + t["nested", "b"].sum()

    g = torch.func.grad(loss)(td)
    assert isinstance(g, TensorDict) and g.batch_size == (3,)
    torch.testing.assert_close(g["a"], 2 * td["a"])
    torch.testing.assert_close(g["nested", "b"], torch.ones(3))


def test_grad_of_parameters_through_functional_call():
    model = nn.Linear(3, 2)
    params = TensorDict(
        {k: v.detach() for k, v in model.named_parameters()}, batch_size=[]
    )
    x = torch.randn(4, 3)
    g = torch.func.grad(
        lambda p: torch.func.functional_call(model, p, (x,)).pow(2).sum()
    )(params)
    model(x).pow(2).sum().backward()
    torch.testing.assert_close(g["weight"], model.weight.grad)
    torch.testing.assert_close(g["bias"], model.bias.grad)


@pytest.mark.parametrize("jac", [torch.func.jacrev, torch.func.jacfwd])
def test_jacobians_with_respect_to_a_tensordict(jac):
    td = TensorDict(a=torch.randn(3, 4), batch_size=[3])
    weights = torch.randn(5, 12)

    def f(t):
        return weights @ t["a"].reshape(-1)

    j = jac(f)(td)
    assert isinstance(j, TensorDict)
    torch.testing.assert_close(j["a"], weights.reshape(5, 3, 4))
    assert j.batch_size == (5, 3)  # the output's dims, then the input's batch


@pytest.mark.parametrize("jac", [torch.func.jacrev, torch.func.jacfwd])
def test_jacobians_of_a_tensordict_output(jac):
    x = torch.randn(3, 2)

    def f(x):
        return TensorDict(y=x * 2, z=x.sum(-1), batch_size=[3])

    j = jac(f)(x)
    assert isinstance(j, TensorDict) and j.batch_size == (3,)
    torch.testing.assert_close(j["y"], torch.func.jacrev(lambda x: x * 2)(x))
    torch.testing.assert_close(j["z"], torch.func.jacrev(lambda x: x.sum(-1))(x))


def test_hessian_of_tensordict_input():
    td = TensorDict(a=torch.randn(2, 3), batch_size=[2])
    h = torch.func.hessian(lambda t: (t["a"] ** 3).sum())(td)
    expected = torch.func.hessian(lambda a: (a**3).sum())(td["a"])
    torch.testing.assert_close(h["a", "a"], expected)


def test_vmap_of_grad_per_sample():
    model = nn.Linear(3, 1)
    params = TensorDict(
        {k: v.detach() for k, v in model.named_parameters()}, batch_size=[]
    )
    x = torch.randn(6, 3)

    def loss(p, xi):
        return torch.func.functional_call(model, p, (xi,)).sum()

    grads = torch.vmap(torch.func.grad(loss), (None, 0))(params, x)
    assert grads.batch_size == (6,)
    torch.testing.assert_close(grads["weight"], x.unsqueeze(1))


def test_no_warning_from_the_vmap_wrappers_on_plain_tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = torch.vmap(lambda x, y: (x * y, {"s": x.sum()}))(
            torch.ones(3, 2), torch.ones(3, 2)
        )
    assert out[0].shape == (3, 2) and out[1]["s"].shape == (3,)
