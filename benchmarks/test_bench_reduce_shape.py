"""Reductions and batch-shape ops on small tensors, where per-call Python overhead
dominates.

Each benchmark runs as ``[td]`` (public tensordict API only) and ``[floor]`` (the same job
written by hand on nested dicts of tensors). Outside the timed call, ``[td]`` results are
checked against the floor, so a fast wrong answer fails.

Data: batch size [4, 8] (two batch dims, so that there is something to permute); a
nested dict 3 levels deep (root -> "n1" -> "n2") with 3 float32 leaves per level, with
small trailing feature dims.
"""

import pytest
import torch
from tensordict import TensorDict

BATCH = torch.Size([4, 8])


def make_nested(seed=0):
    gen = torch.Generator().manual_seed(seed)

    def level(depth):
        out = {
            "a": torch.randn(*BATCH, 4, generator=gen),
            "b": torch.randn(*BATCH, 1, generator=gen),
            "c": torch.randn(*BATCH, 3, 2, generator=gen),
        }
        if depth < 3:
            out[f"n{depth}"] = level(depth + 1)
        return out

    return level(1)


def floor_map(d, fn):
    return {k: floor_map(v, fn) if isinstance(v, dict) else fn(v) for k, v in d.items()}


def floor_leaf_items(d, prefix=()):
    for key, value in d.items():
        if isinstance(value, dict):
            yield from floor_leaf_items(value, prefix + (key,))
        else:
            yield prefix + (key,), value


@pytest.fixture
def nested(impl):
    src = make_nested()
    if impl == "td":
        return TensorDict(src, batch_size=BATCH)
    return src


def check_same(result, expected, batch):
    """``result`` (a TensorDict or a dict) holds the leaves of ``expected`` (a dict)."""
    items = dict(floor_leaf_items(expected))
    if isinstance(result, dict):
        got = dict(floor_leaf_items(result))
    else:
        assert tuple(result.batch_size) == tuple(batch)
        got = {
            (k if isinstance(k, tuple) else (k,)): v
            for k, v in result.items(include_nested=True, leaves_only=True)
        }
    assert sorted(got) == sorted(items)
    for key, value in items.items():
        torch.testing.assert_close(got[key], value, msg=str(key))


def test_sum_dim(benchmark, impl, nested):
    """Sum over the first batch dim."""
    if impl == "td":
        out = benchmark(lambda: nested.sum(0))
    else:
        out = benchmark(lambda: floor_map(nested, lambda x: x.sum(0)))
    check_same(out, floor_map(make_nested(), lambda x: x.sum(0)), BATCH[1:])


def test_mean_no_dim(benchmark, impl, nested):
    """Mean with no dim: every value of each leaf."""
    if impl == "td":
        out = benchmark(lambda: nested.mean())
    else:
        out = benchmark(lambda: floor_map(nested, lambda x: x.mean()))
    check_same(out, floor_map(make_nested(), lambda x: x.mean()), ())


def _floor_reshape(x):
    return x.reshape((BATCH.numel(),) + x.shape[2:])


def test_reshape(benchmark, impl, nested):
    """Reshape the batch dims to one."""
    if impl == "td":
        out = benchmark(lambda: nested.reshape(-1))
    else:
        out = benchmark(lambda: floor_map(nested, _floor_reshape))
    check_same(out, floor_map(make_nested(), _floor_reshape), (BATCH.numel(),))


def _floor_permute(x):
    return x.permute(1, 0, *range(2, x.ndim))


def test_permute(benchmark, impl, nested):
    """Swap the two batch dims."""
    if impl == "td":
        out = benchmark(lambda: nested.permute(1, 0))
    else:
        out = benchmark(lambda: floor_map(nested, _floor_permute))
    check_same(out, floor_map(make_nested(), _floor_permute), BATCH[::-1])
