"""Tensorclasses on small tensors, where per-call Python overhead dominates.

Each benchmark runs as ``[td]`` (a ``@tensorclass`` through the public API only) and
``[floor]`` (the same job written by hand on a plain dict of tensors, a nested dict for
the nested tensorclass). Outside the timed call, ``[td]`` results are checked against
the floor, so a fast wrong answer fails.

Data: batch size [32]; a tensorclass with three float32 tensor fields and a nested
tensorclass field holding one more.
"""

import pytest
import torch
from _floor import floor_construct, floor_index, floor_map
from tensordict import tensorclass

B = 32
BATCH = torch.Size([B])


@tensorclass
class Info:
    value: torch.Tensor


@tensorclass
class Sample:
    obs: torch.Tensor
    reward: torch.Tensor
    action: torch.Tensor
    info: Info


def make_fields(seed=0, batch=B):
    gen = torch.Generator().manual_seed(seed)
    return {
        "obs": torch.randn(batch, 4, generator=gen),
        "reward": torch.randn(batch, 1, generator=gen),
        "action": torch.randn(batch, 2, generator=gen),
        "info": {"value": torch.randn(batch, 3, generator=gen)},
    }


def make_sample(fields, batch=B):
    return Sample(
        obs=fields["obs"],
        reward=fields["reward"],
        action=fields["action"],
        info=Info(value=fields["info"]["value"], batch_size=[batch]),
        batch_size=[batch],
    )


# ---------------------------------------------------------------------------------------
# The floor: what a careful user writes by hand on dicts of tensors (the shared
# helpers are in _floor.py).
# ---------------------------------------------------------------------------------------


def floor_stack(ds, dim):
    first = ds[0]
    return {
        k: (
            floor_stack([d[k] for d in ds], dim)
            if isinstance(v, dict)
            else torch.stack([d[k] for d in ds], dim)
        )
        for k, v in first.items()
    }


def as_dict(sample):
    return {
        "obs": sample.obs,
        "reward": sample.reward,
        "action": sample.action,
        "info": {"value": sample.info.value},
    }


def check_same(result, expected, batch):
    """``result`` (a Sample or a dict) holds exactly the leaves of ``expected``."""
    if not isinstance(result, dict):
        assert type(result).__name__ == "Sample"
        assert type(result.info).__name__ == "Info"
        assert tuple(result.batch_size) == tuple(batch)
        result = as_dict(result)
    for key in ("obs", "reward", "action"):
        assert torch.equal(result[key], expected[key]), key
    assert torch.equal(result["info"]["value"], expected["info"]["value"])


@pytest.fixture
def data(impl):
    fields = make_fields()
    if impl == "td":
        return make_sample(fields)
    return floor_construct(fields, BATCH)


# ---------------------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------------------


def test_tc_construct(benchmark, impl):
    fields = make_fields()
    if impl == "td":
        info = fields["info"]["value"]
        out = benchmark(
            lambda: Sample(
                obs=fields["obs"],
                reward=fields["reward"],
                action=fields["action"],
                info=Info(value=info, batch_size=[B]),
                batch_size=[B],
            )
        )
    else:
        out = benchmark(lambda: floor_construct(fields, BATCH))
    check_same(out, fields, BATCH)


def test_tc_getattr(benchmark, impl, data):
    if impl == "td":
        out = benchmark(lambda: data.obs)
    else:
        out = benchmark(lambda: data["obs"])
    assert torch.equal(out, make_fields()["obs"])


def test_tc_getattr_nested(benchmark, impl, data):
    if impl == "td":
        out = benchmark(lambda: data.info.value)
    else:
        out = benchmark(lambda: data["info"]["value"])
    assert torch.equal(out, make_fields()["info"]["value"])


def _floor_set(d, value):
    if value.shape[:1] != BATCH:
        raise ValueError(f"bad shape {value.shape}")
    d["obs"] = value


def test_tc_setattr(benchmark, impl, data):
    value = torch.ones(B, 4)
    if impl == "td":

        def run():
            data.obs = value

    else:

        def run():
            _floor_set(data, value)

    benchmark(run)
    got = data.obs if impl == "td" else data["obs"]
    assert got is value


_gen = torch.Generator().manual_seed(123)
INDICES = {
    "int": 3,
    "slice": slice(4, 20),
    "mask": torch.rand(B, generator=_gen) > 0.5,
}


@pytest.mark.parametrize("kind", list(INDICES))
def test_tc_index(benchmark, impl, data, kind):
    idx = INDICES[kind]
    if impl == "td":
        out = benchmark(lambda: data[idx])
    else:
        out = benchmark(lambda: floor_index(data, idx))
    expected = floor_index(make_fields(), idx)
    check_same(out, expected, expected["obs"].shape[:-1])


def test_tc_stack(benchmark, impl):
    parts = [make_fields(seed=i) for i in range(4)]
    if impl == "td":
        items = [make_sample(p) for p in parts]
        out = benchmark(lambda: torch.stack(items, 0))
    else:
        items = [floor_construct(p, BATCH) for p in parts]
        out = benchmark(lambda: floor_stack(items, 0))
    check_same(out, floor_stack(parts, 0), (4, B))


def test_tc_abs(benchmark, impl, data):
    if impl == "td":
        out = benchmark(lambda: data.abs())
    else:
        out = benchmark(lambda: floor_map(data, torch.abs))
    check_same(out, floor_map(make_fields(), torch.abs), BATCH)


def test_tc_add_scalar(benchmark, impl, data):
    if impl == "td":
        out = benchmark(lambda: data + 1)
    else:
        out = benchmark(lambda: floor_map(data, lambda x: x + 1))
    check_same(out, floor_map(make_fields(), lambda x: x + 1), BATCH)
