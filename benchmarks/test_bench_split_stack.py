"""Splitting, unbinding, casting, stacking and concatenating small nested tensordicts.

Each benchmark runs as ``[td]`` (public tensordict API only) and ``[floor]`` (the same
job written by hand on nested dicts of tensors). Outside the timed call, ``[td]`` results
are checked against the floor, so a fast wrong answer fails.

Data: batch size [32]; a nested dict 3 levels deep (root -> "n1" -> "n2") with 3 float32
leaves per level (small trailing dims); stacking and concatenation take 4 of them.
"""

import pytest
import torch
from tensordict import TensorDict

B = 32
N = 4  # tensordicts stacked / concatenated


def make_nested(seed=0):
    gen = torch.Generator().manual_seed(seed)

    def level(depth):
        out = {
            "a": torch.randn(B, 4, generator=gen),
            "b": torch.randn(B, 1, generator=gen),
            "c": torch.randn(B, 3, 2, generator=gen),
        }
        if depth < 3:
            out[f"n{depth}"] = level(depth + 1)
        return out

    return level(1)


# ---------------------------------------------------------------------------------------
# The floor: what a careful user writes by hand on nested dicts of tensors.
# ---------------------------------------------------------------------------------------


def floor_leaves(d, prefix=()):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from floor_leaves(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def floor_map(d, fn):
    return {k: floor_map(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


def floor_pieces(d, fn, count):
    """``fn`` gives a tuple of pieces per leaf; ``count`` dicts, one per piece."""
    out = [{} for _ in range(count)]
    for key, value in d.items():
        parts = floor_pieces(value, fn, count) if isinstance(value, dict) else fn(value)
        for i in range(count):
            out[i][key] = parts[i]
    return out


def floor_combine(ds, fn):
    first = ds[0]
    return {
        k: (
            floor_combine([d[k] for d in ds], fn)
            if isinstance(v, dict)
            else fn([d[k] for d in ds])
        )
        for k, v in first.items()
    }


def _get(obj, key):
    for part in key:
        obj = obj[part]
    return obj


def check_same(result, expected, batch=None):
    """``result`` (TensorDict or dict) holds exactly the leaves of ``expected`` (dict)."""
    if batch is not None and not isinstance(result, dict):
        assert tuple(result.batch_size) == tuple(batch)
    keys = [k for k, _ in floor_leaves(expected)]
    if not isinstance(result, dict):
        got = sorted(map(str, result.keys(include_nested=True, leaves_only=True)))
        assert got == sorted(str(k if len(k) > 1 else k[0]) for k in keys)
    for key in keys:
        got = _get(result, key) if isinstance(result, dict) else result[key]
        want = _get(expected, key)
        assert got.dtype == want.dtype and torch.equal(got, want), key


@pytest.fixture
def nested(impl):
    src = make_nested()
    return TensorDict(src, batch_size=[B]) if impl == "td" else src


@pytest.fixture
def many(impl):
    srcs = [make_nested(seed) for seed in range(N)]
    if impl == "td":
        return [TensorDict(src, batch_size=[B]) for src in srcs]
    return srcs


# ---------------------------------------------------------------------------------------
# Splitting and unbinding
# ---------------------------------------------------------------------------------------


def test_split(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.split(8))
    else:
        out = benchmark(lambda: floor_pieces(nested, lambda x: x.split(8), B // 8))
    expected = floor_pieces(make_nested(), lambda x: x.split(8), B // 8)
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        check_same(got, want, [8])


def test_unbind(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.unbind(0))
    else:
        out = benchmark(lambda: floor_pieces(nested, lambda x: x.unbind(0), B))
    expected = floor_pieces(make_nested(), lambda x: x.unbind(0), B)
    assert len(out) == B
    for got, want in zip(out, expected):
        check_same(got, want, [])


# ---------------------------------------------------------------------------------------
# Casting
# ---------------------------------------------------------------------------------------


def test_to_dtype(benchmark, impl, nested):
    if impl == "td":
        out = benchmark(lambda: nested.to(torch.float64))
    else:
        out = benchmark(lambda: floor_map(nested, lambda x: x.to(torch.float64)))
    check_same(out, floor_map(make_nested(), lambda x: x.to(torch.float64)), [B])


# ---------------------------------------------------------------------------------------
# Stacking and concatenation
# ---------------------------------------------------------------------------------------


def test_stack(benchmark, impl, many):
    if impl == "td":
        out = benchmark(lambda: torch.stack(many, 0))
    else:
        out = benchmark(lambda: floor_combine(many, lambda xs: torch.stack(xs, 0)))
    srcs = [make_nested(seed) for seed in range(N)]
    check_same(out, floor_combine(srcs, lambda xs: torch.stack(xs, 0)), [N, B])


def test_cat(benchmark, impl, many):
    if impl == "td":
        out = benchmark(lambda: torch.cat(many, 0))
    else:
        out = benchmark(lambda: floor_combine(many, lambda xs: torch.cat(xs, 0)))
    srcs = [make_nested(seed) for seed in range(N)]
    check_same(out, floor_combine(srcs, lambda xs: torch.cat(xs, 0)), [N * B])
