"""torch.compile over tensordicts: the common ops compile with ``fullgraph=True`` (no
graph break) and give the eager result.

Compilation is slow on small machines, so each case compiles once, with the cheap
``"eager"`` backend; a representative few also run under ``"aot_eager"`` (AOTAutograd:
the tensors go through a real functional graph). Graph breaks are read from
``torch._dynamo``'s counters, reset before each case.
"""

from __future__ import annotations

import operator

import pytest
import torch
import torch.utils._pytree as pytree

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass

torch_dynamo = pytest.importorskip("torch._dynamo")
from torch._dynamo.utils import counters  # noqa: E402


@tensorclass
class Particles:
    pos: torch.Tensor
    vel: torch.Tensor


def make_td():
    return TensorDict(
        a=torch.randn(4, 3), nested={"b": torch.randn(4)}, batch_size=[4]
    )


def make_tc():
    return Particles(pos=torch.randn(4, 3), vel=torch.randn(4, 3), batch_size=[4])


def make_lazy():
    return LazyStackedTensorDict(
        TensorDict(a=torch.randn(3)), TensorDict(a=torch.randn(3)), stack_dim=0
    )


def _set(td):
    td["c"] = td["a"] * 2
    td.set(("nested", "d"), td["nested", "b"] + 1)
    return td


CASES = {
    # construction, get/set
    "construct": (lambda t: TensorDict({"x": t["a"], "y": {"z": t["a"]}}, [4]), make_td),
    "get_nested": (lambda t: t["nested", "b"] * 2 + t.get("a").sum(-1), make_td),
    "set": (_set, make_td),
    # indexing
    "index_int": (lambda t: t[0], make_td),
    "index_slice": (lambda t: t[1:3], make_td),
    "index_tensor": (lambda t: t[torch.tensor([0, 2])], make_td),
    "index_mask": (lambda t: t[t["nested", "b"] > 0], make_td),
    # arithmetic
    "add_number": (lambda t: t + 1, make_td),
    "add_self": (lambda t: t + t, make_td),
    "sub_self": (lambda t: (t - t * 2).abs(), make_td),
    "tensor_first": (lambda t: torch.ones(()) - t, make_td),
    "compare": (lambda t: t > 0, make_td),
    # reductions
    "sum_dim": (lambda t: t.sum(0), make_td),
    "mean_all": (lambda t: t.mean(), make_td),
    # shape ops
    "reshape": (lambda t: t.reshape(2, 2), make_td),
    "unsqueeze_permute": (lambda t: t.unsqueeze(0).permute(1, 0), make_td),
    "expand": (lambda t: t.expand(2, 4), make_td),
    "unbind": (lambda t: t.unbind(0)[1], make_td),
    "split": (lambda t: t.split([1, 3], 0)[1], make_td),
    # apply, stack, cat
    "apply": (lambda t: t.apply(lambda x: x * 2 + 1), make_td),
    "apply_two": (lambda t: t.apply(torch.mul, t), make_td),
    "stack": (lambda t: torch.stack([t, t], 0), make_td),
    "cat": (lambda t: torch.cat([t, t], 0), make_td),
    "select_exclude": (lambda t: t.select("a").update(t.exclude("a")), make_td),
    # tensorclasses
    "tc_fields": (lambda p: p.pos + p.vel, make_tc),
    "tc_ops": (lambda p: (p * 2)[1:], make_tc),
    "tc_construct": (lambda p: Particles(pos=p.pos, vel=-p.vel, batch_size=[4]), make_tc),
    # lazy stacks, pytree, functorch inside the compiled function
    "lazy_get": (lambda s: s["a"] + 1, make_lazy),
    "lazy_add": (lambda s: s + 1, make_lazy),
    "tree_map": (lambda t: pytree.tree_map(lambda x: x * 3, t), make_td),
    "vmap": (lambda t: torch.vmap(lambda s: s["a"].sum() * s["nested", "b"])(t), make_td),
    "grad": (
        lambda t: torch.func.grad(lambda s: (s["a"] ** 2).sum())(t),
        make_td,
    ),
}

AOT_EAGER = ["add_self", "sum_dim", "index_int", "apply", "construct", "tc_ops"]

def _run(name: str, backend: str):
    fn, make = CASES[name]
    torch._dynamo.reset()
    counters.clear()
    arg = make()
    compiled = torch.compile(fn, backend=backend, fullgraph=True)
    torch.manual_seed(0)
    eager = fn(arg.clone() if name == "set" else arg)
    out = compiled(arg)
    assert sum(counters["graph_break"].values()) == 0, dict(counters["graph_break"])
    torch.testing.assert_close(out, eager)
    assert type(out) is type(eager)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_without_graph_break(name):
    _run(name, "eager")


@pytest.mark.parametrize("name", AOT_EAGER)
def test_compiles_with_aot_eager(name):
    _run(name, "aot_eager")


@pytest.mark.parametrize("op", ["mul", "add", "truediv"])
def test_td_op_tensor_compiles_without_graph_break(op):
    # A tensor operand reaches torch._foreach_* once per leaf; it must be a plain list
    # there (torch.compile cannot pass a list subclass into its graph).
    torch._dynamo.reset()
    f = getattr(operator, op)
    fn = torch.compile(lambda t, x: f(t, x), backend="eager", fullgraph=True)
    td, x = make_td(), torch.randn(()) + 2.0
    torch.testing.assert_close(fn(td, x), f(td, x))


def test_compiled_function_taking_and_returning_tensordicts_matches_eager():
    def step(state, action):
        nxt = state.clone()
        nxt["pos"] = state["pos"] + action["vel"]
        nxt["reward"] = -(nxt["pos"] ** 2).sum(-1)
        return nxt, nxt["reward"].mean()

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(step, backend="eager", fullgraph=True)
    state = TensorDict(pos=torch.randn(8, 2), batch_size=[8])
    action = TensorDict(vel=torch.randn(8, 2), batch_size=[8])
    for _ in range(2):  # the second call runs the cached graph
        out, mean = compiled(state, action)
        ref, ref_mean = step(state, action)
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close(mean, ref_mean)
        state = out
    assert sum(counters["graph_break"].values()) == 0


def _same_shape_td():
    # five leaves of one shape and dtype, one of them nested
    gen = torch.Generator().manual_seed(0)
    leaves = {f"k{i}": torch.randn(4, 3, 2, generator=gen) for i in range(4)}
    leaves["nested"] = {"a": torch.randn(4, 3, 2, generator=gen)}
    return TensorDict(leaves, batch_size=[4, 3])


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.sum(0),
        lambda t: t.sum(-1, keepdim=True),
        lambda t: t.mean((0, 1)),
        lambda t: t.std(1, correction=0),
        lambda t: t.amax(-2),
        lambda t: t.logsumexp(0),
        lambda t: t.sum("feature"),
        lambda t: t.set("other", torch.arange(12).reshape(4, 3)).prod(1),
        lambda t: (t > 0).any(0),
    ],
)
def test_compiled_reduction_of_same_shape_leaves_matches_eager(op):
    # under compile, leaves of one shape/dtype are reduced as one stacked tensor
    # (_ops.reduce_leaves); the leaves' values, shapes and the batch size stay eager's
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(op, backend="aot_eager", fullgraph=True)
    out, eager = compiled(_same_shape_td()), op(_same_shape_td())
    assert sum(counters["graph_break"].values()) == 0, dict(counters["graph_break"])
    assert out.batch_size == eager.batch_size
    torch.testing.assert_close(out, eager)


def test_compiled_sum_of_same_shape_leaves_is_one_stacked_reduction():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    out = torch.compile(lambda t: t.sum(0), backend=backend, fullgraph=True)(_same_shape_td())
    torch.testing.assert_close(out, _same_shape_td().sum(0))
    targets = [n.target for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert targets.count(torch.sum) == 1 and targets.count(torch.stack) == 1, targets
