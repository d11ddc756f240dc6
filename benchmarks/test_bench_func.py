"""Tensordicts in torch's machinery: pytree walks, compiled ops, torch.vmap.

- ``tree_flatten`` / ``tree_map`` of a 100-leaf tensordict (flat, and nested 10 x 10);
  the floor is the same call on the plain (nested) dict of the same tensors.
- compiled ``td + td``, ``td.sum(0)``, ``td[idx]`` (``torch.compile(fullgraph=True)``
  with the ``"aot_eager"`` backend, the same for both implementations: inductor takes a
  minute a function to compile on this machine); the timed call is the compiled one.
- eager ``torch.vmap`` over a tensordict (floor: the same on a dict of its tensors): the
  identity, reads of a 10-leaf batch-8 one, ``td["a"] * 2 + td["b"]`` over a batch-64
  one (flat and nested), an ensemble of MLPs.
- the cases of tensordict 0.15.3's ``benchmarks/common/pytree_benchmarks_test.py``:
  ``reshape``, ``view``, ``unbind``, ``split`` and ``apply(x + 1)`` on a nested
  tensordict, the floor being ``tree_map`` on the nested dict, as there.

Results are checked against the floor outside the timed call.
"""

import pytest
import torch
import torch.utils._pytree as pytree
from tensordict import TensorDict


def flat_dict(n=100, batch=3):
    gen = torch.Generator().manual_seed(0)
    return {f"k{i}": torch.randn(batch, 2, generator=gen) for i in range(n)}


def nested_dict(groups=10, per_group=10, batch=3):
    gen = torch.Generator().manual_seed(1)
    return {
        f"g{j}": {
            f"k{i}": torch.randn(batch, 2, generator=gen) for i in range(per_group)
        }
        for j in range(groups)
    }


def same_leaves(result, expected):
    got = result.to_dict() if hasattr(result, "to_dict") else result
    torch.testing.assert_close(got, expected)


# ---------------------------------------------------------------------------- pytree

SHAPES = {"flat100": flat_dict, "nested10x10": nested_dict}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_tree_flatten(benchmark, impl, shape):
    data = SHAPES[shape]()
    obj = data if impl == "floor" else TensorDict(data, batch_size=[3])
    leaves, _ = benchmark(pytree.tree_flatten, obj)
    assert len(leaves) == 100
    assert all(a is b for a, b in zip(leaves, pytree.tree_leaves(data)))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_tree_map(benchmark, impl, shape):
    data = SHAPES[shape]()
    obj = data if impl == "floor" else TensorDict(data, batch_size=[3])
    out = benchmark(pytree.tree_map, torch.neg, obj)
    same_leaves(out, pytree.tree_map(torch.neg, data))


# ---------------------------------------------------------------------------- compile


def add_self(td):
    return td + td


def sum0(td):
    return td.sum(0)


def index(td, idx):
    return td[idx]


def _floor_add_self(d):
    return {k: v + v for k, v in d.items()}


def _floor_sum0(d):
    return {k: v.sum(0) for k, v in d.items()}


def _floor_index(d, idx):
    return {k: v[idx] for k, v in d.items()}


COMPILED = {
    "add_self": (add_self, _floor_add_self, ()),
    "sum0": (sum0, _floor_sum0, ()),
    "index": (index, _floor_index, (slice(0, 32, 2),)),
}


@pytest.mark.parametrize("op", sorted(COMPILED))
def test_compiled(benchmark, impl, op):
    td_fn, floor_fn, args = COMPILED[op]
    data = flat_dict(n=50, batch=32)
    torch._dynamo.reset()
    if impl == "floor":
        fn, obj = floor_fn, data
    else:
        fn, obj = td_fn, TensorDict(data, batch_size=[32])
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager")
    compiled(obj, *args)
    compiled(obj, *args)
    out = benchmark(compiled, obj, *args)
    same_leaves(out, floor_fn(data, *args))


# ---------------------------------------------------------------------------- vmap


def _per_sample(t):
    return t["k0"] * t["k1"] + t["k2"].sum()


VMAPPED = {
    "identity": (lambda t: t, lambda d: d),
    "read": (_per_sample, _per_sample),
}


@pytest.mark.parametrize("fn", sorted(VMAPPED))
def test_vmap(benchmark, impl, fn):
    td_fn, floor_fn = VMAPPED[fn]
    data = flat_dict(n=10, batch=8)
    obj = data if impl == "floor" else TensorDict(data, batch_size=[8])
    vmapped = torch.vmap(td_fn if impl == "td" else floor_fn)
    out = benchmark(vmapped, obj)
    expected = torch.vmap(floor_fn)(data)
    if isinstance(expected, dict):
        same_leaves(out, expected)
    else:
        torch.testing.assert_close(out, expected)


def _scale_and_add(t):
    return t["a"] * 2 + t["b"]


def _scale_and_add_nested(t):
    return t["inner"]["a"] * 2 + t["inner"]["b"] + t["c"]


def _batch64(nested: bool) -> dict:
    gen = torch.Generator().manual_seed(4)
    leaves = {k: torch.randn(64, 5, generator=gen) for k in ("a", "b", "c", "d")}
    if not nested:
        return leaves
    return {
        "inner": {k: leaves[k] for k in ("a", "b")},
        "c": leaves["c"],
        "more": {"d": leaves["d"]},
    }


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_vmap_batch64(benchmark, impl, nested):
    # vmap of ``td["a"] * 2 + td["b"]`` over a batch-64 tensordict of four leaves, flat
    # or nested in two levels: vmap's own cost on a tensordict argument
    data = _batch64(nested)
    fn = _scale_and_add_nested if nested else _scale_and_add
    obj = data if impl == "floor" else TensorDict(data, batch_size=[64])
    out = benchmark(torch.vmap(fn), obj)
    torch.testing.assert_close(out, torch.vmap(fn)(data))


def test_vmap_ensemble(benchmark, impl):
    # an ensemble of two-layer MLPs: parameters stacked along dim 0, vmapped over
    gen = torch.Generator().manual_seed(2)
    params = {
        "0": {"weight": torch.randn(4, 8, 3, generator=gen), "bias": torch.randn(4, 8)},
        "1": {"weight": torch.randn(4, 2, 8, generator=gen), "bias": torch.randn(4, 2)},
    }
    x = torch.randn(16, 3, generator=gen)

    def mlp(p, x):
        h = torch.relu(x @ p["0"]["weight"].T + p["0"]["bias"])
        return h @ p["1"]["weight"].T + p["1"]["bias"]

    obj = params if impl == "floor" else TensorDict(params, batch_size=[4])
    out = benchmark(torch.vmap(mlp, (0, None)), obj, x)
    torch.testing.assert_close(out, torch.vmap(mlp, (0, None))(params, x))


# ------------------------------------------- 0.15.3's pytree_benchmarks_test.py cases


def pytree_case_dict():
    gen = torch.Generator().manual_seed(3)
    return {
        "a": {
            "b": torch.randn(3, 4, 1, generator=gen),
            "c": {"d": torch.rand(3, 4, 5, 6, generator=gen)},
        },
        "c": torch.rand(3, 4, 1, generator=gen),
    }


PYTREE_CASES = {
    "reshape": (
        lambda td: td.reshape(12),
        lambda x: x.reshape(12, *x.shape[2:]),
    ),
    "view": (lambda td: td.view(12), lambda x: x.view(12, *x.shape[2:])),
    "unbind": (lambda td: td.unbind(0), lambda x: x.unbind(0)),
    "split": (lambda td: td.split([1, 2], 0), lambda x: x.split([1, 2], 0)),
    "add": (lambda td: td.apply(lambda x: x + 1), lambda x: x + 1),
}


@pytest.mark.parametrize("case", sorted(PYTREE_CASES))
def test_pytree_case(benchmark, impl, case):
    td_op, leaf_op = PYTREE_CASES[case]
    data = pytree_case_dict()
    if impl == "floor":
        out = benchmark(pytree.tree_map, leaf_op, data)
        return
    td = TensorDict(data, batch_size=[3, 4])
    out = benchmark(td_op, td)
    expected = pytree.tree_map(leaf_op, data)
    if isinstance(out, (tuple, list)):
        for i, part in enumerate(out):
            same_leaves(
                part,
                pytree.tree_map(
                    lambda parts: parts[i],
                    expected,
                    is_leaf=lambda v: isinstance(v, tuple),
                ),
            )
    else:
        same_leaves(out, expected)
