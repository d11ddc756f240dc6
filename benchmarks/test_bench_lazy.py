"""Lazy stacks (LazyStackedTensorDict) on small tensors, where per-call Python overhead
dominates.

Each benchmark runs as ``[td]`` (public tensordict API only) and ``[floor]`` (the same
job written by hand on a list of plain dicts of tensors). Outside the timed call, ``[td]``
results are checked against the floor, so a fast wrong answer fails.

Data: 8 members, each a nested tensordict of batch size [32] (a flat level of 5 leaves
and one nested level of 3), float32 leaves with small trailing dims; for ``densify``, 8
members of batch size [] whose 4 leaves differ in length from member to member.
"""

import pytest
import torch
from tensordict import LazyStackedTensorDict, TensorDict

B = 32
N = 8


def make_member(seed):
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=gen)

    return {
        "a": rand(B, 4),
        "b": rand(B),
        "c": rand(B, 3, 3),
        "d": rand(B, 8),
        "e": rand(B, 1),
        "n": {"x": rand(B, 4), "y": rand(B), "z": rand(B, 2)},
    }


def make_ragged(seed):
    gen = torch.Generator().manual_seed(seed)
    return {f"s{i}": torch.randn(3 + (seed + i) % 5, generator=gen) for i in range(4)}


# ---------------------------------------------------------------------------------------
# The floor: a list of (nested) dicts, worked on by hand.
# ---------------------------------------------------------------------------------------


def floor_map(d, fn):
    return {k: floor_map(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


def floor_build(dicts):
    first = dicts[0]["a"].shape[:1]
    for d in dicts:
        if d["a"].shape[:1] != first:
            raise ValueError("members differ in batch size")
    return list(dicts)


def floor_stack(dicts, dim=0):
    out = {}
    for key, value in dicts[0].items():
        parts = [d[key] for d in dicts]
        out[key] = (
            floor_stack(parts, dim)
            if isinstance(value, dict)
            else torch.stack(parts, dim)
        )
    return out


def floor_leaves(d, prefix=()):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from floor_leaves(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def check_dense(result, expected):
    """``result`` (a tensordict) holds exactly the leaves of ``expected`` (a dict)."""
    keys = sorted(k for k, _ in floor_leaves(expected))
    got = sorted(k if isinstance(k, tuple) else (k,) for k in result.keys(True, True))
    assert got == keys
    for key, value in floor_leaves(expected):
        assert torch.equal(result.get(key), value), key


# ---------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------


@pytest.fixture
def dicts():
    return [make_member(i) for i in range(N)]


@pytest.fixture
def members(dicts):
    return [TensorDict(d, batch_size=[B]) for d in dicts]


@pytest.fixture
def stack(impl, members, dicts):
    if impl == "td":
        return TensorDict.lazy_stack(members, dim=0)
    return floor_build(dicts)


# ---------------------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------------------


def test_lazy_build(benchmark, impl, members, dicts):
    if impl == "td":
        out = benchmark(lambda: TensorDict.lazy_stack(members, dim=0))
        assert isinstance(out, LazyStackedTensorDict)
        assert out.batch_size == (N, B) and out[3] is members[3]
    else:
        out = benchmark(lambda: floor_build(dicts))
        assert out[3] is dicts[3]


def test_lazy_get(benchmark, impl, stack, dicts):
    expected = torch.stack([d["c"] for d in dicts], 0)
    if impl == "td":
        out = benchmark(lambda: stack["c"])
    else:
        out = benchmark(lambda: torch.stack([d["c"] for d in stack], 0))
    assert torch.equal(out, expected)


def test_lazy_get_nested(benchmark, impl, stack, dicts):
    expected = torch.stack([d["n"]["z"] for d in dicts], 0)
    if impl == "td":
        out = benchmark(lambda: stack["n", "z"])
    else:
        out = benchmark(lambda: torch.stack([d["n"]["z"] for d in stack], 0))
    assert torch.equal(out, expected)


def test_lazy_index_member(benchmark, impl, stack, members, dicts):
    if impl == "td":
        out = benchmark(lambda: stack[3])
        assert out is members[3]
    else:
        out = benchmark(lambda: stack[3])
        assert out is dicts[3]


def test_lazy_index_batch(benchmark, impl, stack, dicts):
    def floor():
        return [floor_map(d, lambda x: x[2:10]) for d in stack]

    expected = floor_stack([floor_map(d, lambda x: x[2:10]) for d in dicts])
    if impl == "td":
        out = benchmark(lambda: stack[:, 2:10])
        assert out.batch_size == (N, 8)
        check_dense(out.to_tensordict(), expected)
    else:
        out = benchmark(floor)
        check_dense(TensorDict(floor_stack(out), batch_size=[N, 8]), expected)


def test_lazy_add_scalar(benchmark, impl, stack, dicts):
    def floor():
        return [floor_map(d, lambda x: x + 1) for d in stack]

    expected = floor_stack([floor_map(d, lambda x: x + 1) for d in dicts])
    if impl == "td":
        out = benchmark(lambda: stack + 1)
        check_dense(out.to_tensordict(), expected)
    else:
        out = benchmark(floor)
        check_dense(TensorDict(floor_stack(out), batch_size=[N, B]), expected)


def test_lazy_to_tensordict(benchmark, impl, stack, dicts):
    expected = floor_stack(dicts)
    if impl == "td":
        out = benchmark(lambda: stack.to_tensordict())
        assert type(out) is TensorDict and out.batch_size == (N, B)
        check_dense(out, expected)
    else:
        out = benchmark(lambda: floor_stack(stack))
        check_dense(TensorDict(out, batch_size=[N, B]), expected)


def test_lazy_densify(benchmark, impl):
    ragged = [make_ragged(i) for i in range(N)]

    def floor():
        out = {}
        for key in ragged[0]:
            out[key] = torch.nested.nested_tensor([d[key] for d in ragged])
        return out

    expected = floor()
    if impl == "td":
        stack = TensorDict.lazy_stack([TensorDict(d) for d in ragged], dim=0)
        out = benchmark(lambda: stack.densify(layout=torch.strided))
        assert type(out) is TensorDict
    else:
        out = benchmark(floor)
    for key, value in expected.items():
        got = out[key]
        assert got.is_nested
        assert all(torch.equal(a, b) for a, b in zip(got.unbind(), value.unbind())), key
