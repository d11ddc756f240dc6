"""Dict-like reads of a flat tensordict of 100 keys (batch [3, 4]), beside the same call
on a plain dict of the same tensors (the ``[floor]`` rows). Issue 15's target: each within
1.5x of the dict.
"""

import pytest
import torch
from tensordict import TensorDict

N_KEYS = 100
KEY = "k50"


@pytest.fixture
def data(impl):
    src = {f"k{i}": torch.zeros(3, 4) for i in range(N_KEYS)}
    return TensorDict(src, batch_size=[3, 4]) if impl == "td" else src


def test_keys_list(benchmark, data):
    assert benchmark(lambda: list(data.keys()))[-1] == f"k{N_KEYS - 1}"


def test_values_list(benchmark, data):
    assert len(benchmark(lambda: list(data.values()))) == N_KEYS


def test_items_list(benchmark, data):
    assert len(benchmark(lambda: list(data.items()))) == N_KEYS


def test_in_keys(benchmark, data):
    assert benchmark(lambda: KEY in data.keys())


def test_get(benchmark, data):
    assert benchmark(lambda: data.get(KEY)).shape == (3, 4)


def test_getitem(benchmark, data):
    assert benchmark(lambda: data[KEY]).shape == (3, 4)


def test_len_keys(benchmark, data):
    assert benchmark(lambda: len(data.keys())) == N_KEYS


def test_iterate_keys(benchmark, data):
    def walk():
        n = 0
        for _ in data.keys():
            n += 1
        return n

    assert benchmark(walk) == N_KEYS
