"""Core TensorDict operations on small tensors, where per-call Python overhead dominates.

Each benchmark runs as ``[td]`` (public tensordict API only) and ``[floor]`` (the same job
written by hand on a plain dict of tensors, nested dicts for nested data). Outside the
timed call, ``[td]`` results are checked against the floor, so a fast wrong answer fails.

Data: batch size [32]; a flat dict of 10 leaves; a nested dict 3 levels deep
(root -> "n1" -> "n2") with 3 leaves per level. All leaves are float32 with small trailing
dims.
"""

import pytest
import torch
from _floor import (
    floor_construct,
    floor_index,
    floor_leaf_items,
    floor_leaf_keys,
    floor_map,
    floor_map2,
)
from tensordict import TensorDict

B = 32
BATCH = torch.Size([B])
NESTED_KEY = ("n1", "n2", "c")
LEAF_DIMS = [(4,), (), (3, 3), (8,), (1,)]


def _rand(gen, *shape):
    return torch.randn(*shape, generator=gen)


def make_flat(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return {f"k{i}": _rand(gen, B, *LEAF_DIMS[i % len(LEAF_DIMS)]) for i in range(10)}


def make_nested(seed=0, batch=B):
    gen = torch.Generator().manual_seed(seed)

    def level(depth):
        out = {
            "a": _rand(gen, batch, 4),
            "b": _rand(gen, batch, 1),
            "c": _rand(gen, batch, 3, 2),
        }
        if depth < 3:
            out[f"n{depth}"] = level(depth + 1)
        return out

    return level(1)


# ---------------------------------------------------------------------------------------
# The floor: what a careful user writes by hand on dicts of tensors (the shared
# helpers are in _floor.py).
# ---------------------------------------------------------------------------------------


def floor_setitem(d, idx, src):
    for key, value in d.items():
        if isinstance(value, dict):
            floor_setitem(value, idx, src[key])
        else:
            value[idx] = src[key]


def plus_one(x):
    return x + 1


# ---------------------------------------------------------------------------------------
# Fixtures and checks
# ---------------------------------------------------------------------------------------


@pytest.fixture
def nested(impl):
    """The nested data as the implementation under test holds it."""
    src = make_nested()
    if impl == "td":
        return TensorDict(src, batch_size=[B])
    return floor_construct(src, BATCH)


@pytest.fixture
def other(impl):
    src = make_nested(seed=1)
    if impl == "td":
        return TensorDict(src, batch_size=[B])
    return src


def _leaf(obj, key):
    if isinstance(obj, dict):
        for k in key if isinstance(key, tuple) else (key,):
            obj = obj[k]
        return obj
    return obj[key]


def check_same(result, expected, batch=None):
    """``result`` (a TensorDict or dict) holds exactly the leaves of ``expected`` (dict)."""
    if batch is not None and not isinstance(result, dict):
        assert tuple(result.batch_size) == tuple(batch)
    keys = list(floor_leaf_keys(expected))
    if not isinstance(result, dict):
        got = sorted(map(str, result.keys(include_nested=True, leaves_only=True)))
        assert got == sorted(map(str, keys))
    for key in keys:
        assert torch.equal(_leaf(result, key), _leaf(expected, key)), key


# ---------------------------------------------------------------------------------------
# Construction
# ---------------------------------------------------------------------------------------


def test_construct_flat(benchmark, impl):
    src = make_flat()
    if impl == "td":
        out = benchmark(lambda: TensorDict(src, batch_size=[B]))
    else:
        out = benchmark(lambda: floor_construct(src, BATCH))
    check_same(out, src, BATCH)


def test_construct_nested(benchmark, impl):
    src = make_nested()
    if impl == "td":
        out = benchmark(lambda: TensorDict(src, batch_size=[B]))
    else:
        out = benchmark(lambda: floor_construct(src, BATCH))
    check_same(out, src, BATCH)


# ---------------------------------------------------------------------------------------
# Nested get / set with tuple keys
# ---------------------------------------------------------------------------------------


def test_get_nested(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested["n1", "n2", "c"])
    else:
        out = benchmark(lambda: nested["n1"]["n2"]["c"])
    assert torch.equal(out, make_nested()["n1"]["n2"]["c"])


def test_get_nested_method(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.get(NESTED_KEY))
    else:
        out = benchmark(lambda: nested["n1"]["n2"]["c"])
    assert torch.equal(out, make_nested()["n1"]["n2"]["c"])


def _floor_set_nested(d, value):
    if value.shape[:1] != BATCH:
        raise ValueError(f"bad shape {value.shape}")
    d["n1"]["n2"]["c"] = value


def test_set_nested(benchmark, impl, nested):
    value = torch.ones(B, 3, 2)
    if impl == "td":

        def run():
            nested["n1", "n2", "c"] = value

    else:

        def run():
            _floor_set_nested(nested, value)

    benchmark(run)
    assert torch.equal(_leaf(nested, NESTED_KEY), value)


def test_set_nested_method(benchmark, impl, nested):
    value = torch.ones(B, 3, 2)
    if impl == "td":
        benchmark(lambda: nested.set(NESTED_KEY, value))
    else:
        benchmark(lambda: _floor_set_nested(nested, value))
    assert torch.equal(_leaf(nested, NESTED_KEY), value)


# ---------------------------------------------------------------------------------------
# Iteration over nested leaves
# ---------------------------------------------------------------------------------------


def test_keys_nested_leaves(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(
            lambda: list(nested.keys(include_nested=True, leaves_only=True))
        )
    else:
        out = benchmark(lambda: list(floor_leaf_keys(nested)))
    assert sorted(map(str, out)) == sorted(map(str, floor_leaf_keys(make_nested())))


def test_items_nested_leaves(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(
            lambda: list(nested.items(include_nested=True, leaves_only=True))
        )
    else:
        out = benchmark(lambda: list(floor_leaf_items(nested)))
    expected = dict(floor_leaf_items(make_nested()))
    assert len(out) == len(expected)
    for key, value in out:
        assert torch.equal(value, expected[key]), key


# ---------------------------------------------------------------------------------------
# Indexing along the batch dimension
# ---------------------------------------------------------------------------------------

_gen = torch.Generator().manual_seed(123)
INDICES = {
    "int": 3,
    "slice": slice(4, 20),
    "mask": torch.rand(B, generator=_gen) > 0.5,
    "long": torch.randperm(B, generator=_gen)[:8],
}


@pytest.mark.parametrize("kind", list(INDICES))
def test_index(benchmark, impl, nested, kind):
    idx = INDICES[kind]
    if impl == "td":
        out = benchmark(lambda: nested[idx])
    else:
        out = benchmark(lambda: floor_index(nested, idx))
    expected = floor_index(make_nested(), idx)
    check_same(out, expected, expected["a"].shape[:-1])


@pytest.mark.parametrize("kind", ["slice", "long"])
def test_setitem_td(benchmark, impl, nested, kind):
    idx = INDICES[kind]
    n = len(range(B)[idx]) if isinstance(idx, slice) else len(idx)
    src = make_nested(seed=7, batch=n)
    value = TensorDict(src, batch_size=[n]) if impl == "td" else src
    if impl == "td":

        def run():
            nested[idx] = value

    else:

        def run():
            floor_setitem(nested, idx, value)

    benchmark(run)
    expected = make_nested()
    floor_setitem(expected, idx, src)
    check_same(nested, expected, BATCH)


# ---------------------------------------------------------------------------------------
# Whole-structure transforms on the nested data
# ---------------------------------------------------------------------------------------


def test_apply_nested(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.apply(lambda x: x + 1))
    else:
        out = benchmark(lambda: floor_map(nested, lambda x: x + 1))
    check_same(out, floor_map(make_nested(), plus_one), BATCH)


def test_abs(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.abs())
    else:
        out = benchmark(lambda: floor_map(nested, torch.abs))
    check_same(out, floor_map(make_nested(), torch.abs), BATCH)


def test_add_scalar(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested + 1)
    else:
        out = benchmark(lambda: floor_map(nested, plus_one))
    check_same(out, floor_map(make_nested(), plus_one), BATCH)


def test_add_td(benchmark, impl, nested, other):
    if impl == "td":
        out = benchmark(lambda: nested.add(other))
    else:
        out = benchmark(lambda: floor_map2(nested, other, torch.add))
    check_same(out, floor_map2(make_nested(), make_nested(seed=1), torch.add), BATCH)


def test_clone(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.clone())
    else:
        out = benchmark(lambda: floor_map(nested, torch.clone))
    check_same(out, make_nested(), BATCH)
    assert _leaf(out, NESTED_KEY) is not _leaf(nested, NESTED_KEY)
