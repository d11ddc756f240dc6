"""consolidate() of a 1,000-leaf tensordict (10 groups of 100 leaves, mixed dtypes).

``[td]`` times ``td.consolidate()``; ``[floor]`` is the same packing written by hand: one
``torch.cat`` of the flattened leaves into one byte buffer, and the views cut back out of
it (what any consolidation must at least do). The result is checked outside the timed
call. The two-process benchmarks (send/recv) are in ``benchmarks/bench_distributed.py``.
"""

import pytest
import torch
from tensordict import TensorDict

GROUPS, PER_GROUP = 10, 100


def make_source():
    gen = torch.Generator().manual_seed(0)
    out = {}
    for g in range(GROUPS):
        level = {}
        for i in range(PER_GROUP):
            if i % 4 == 3:
                level[f"l{i}"] = torch.randint(0, 9, (8, 3), generator=gen)
            else:
                level[f"l{i}"] = torch.randn(8, 5, generator=gen)
        out[f"g{g}"] = level
    return out


def floor_consolidate(src):
    leaves = [leaf for level in src.values() for leaf in level.values()]
    flat = torch.cat([leaf.reshape(-1).view(torch.uint8) for leaf in leaves])
    out, start = {}, 0
    for name, level in src.items():
        out[name] = {}
        for key, leaf in level.items():
            n = leaf.numel() * leaf.element_size()
            out[name][key] = flat[start : start + n].view(leaf.dtype).view(leaf.shape)
            start += n
    return out


@pytest.fixture
def source():
    return make_source()


def test_consolidate_1000_leaves(benchmark, impl, source):
    if impl == "td":
        td = TensorDict(source, batch_size=[8])
        result = benchmark(td.consolidate)
        assert result.is_consolidated()
        got = result
    else:
        got = benchmark(floor_consolidate, source)
    for name, level in source.items():
        for key, leaf in level.items():
            assert torch.equal(got[name][key], leaf)
