"""``td[index] = value`` with a tuple of ints and slices (``td[2, 1] = ...``,
``td[:, 1] = ...``): the batch shape the index leaves is worked out without torch, so
it must be the one torch's indexing gives, and the errors must stay the same."""

from __future__ import annotations

import itertools

import pytest
import torch

from tensordict import TensorDict
from tensordict._atomic import _indexed_shape
from tensordict._compat import _getitem_batch_size

BATCH = (3, 4, 2)
PARTS = [0, 2, -1, -3, slice(None), slice(1, None), slice(None, None, 2), slice(5, 9)]
TUPLES = [
    parts
    for n in (1, 2, 3)
    for parts in itertools.product(PARTS, repeat=n)
    if all(type(p) is slice or -size <= p < size for p, size in zip(parts, BATCH))
]


@pytest.mark.parametrize("index", TUPLES, ids=repr)
def test_the_batch_shape_of_a_tuple_index_is_torchs(index):
    expected = tuple(torch.zeros(BATCH)[index].shape)
    assert _indexed_shape(torch.Size(BATCH), index, _getitem_batch_size) == expected


@pytest.mark.parametrize("index", [(0, 1), (slice(None), 1), (-1, slice(1, 3)), (2,)])
def test_writing_at_a_tuple_index_writes_what_each_leaf_would(index):
    td = TensorDict(
        {"a": torch.zeros(3, 4, 5), "b": {"c": torch.zeros(3, 4, 2, 6)}}, [3, 4]
    )
    value = td[index].clone().apply(lambda t: torch.rand_like(t))
    td[index] = value
    assert torch.equal(td["a"][index], value["a"])
    assert torch.equal(td["b", "c"][index], value["b", "c"])
    expected_a = torch.zeros(3, 4, 5)
    expected_a[index] = value["a"]
    assert torch.equal(td["a"], expected_a)


def test_a_tuple_index_out_of_range_raises_index_error():
    td = TensorDict({"a": torch.zeros(3, 4)}, [3, 4])
    with pytest.raises(IndexError):
        td[1, 4] = TensorDict({"a": torch.ones(())}, [])
    assert torch.equal(td["a"], torch.zeros(3, 4))


def test_a_value_of_the_wrong_shape_at_a_tuple_index_names_the_key():
    td = TensorDict({"a": torch.zeros(3, 4, 5), "b": torch.zeros(3, 4)}, [3, 4])
    with pytest.raises(RuntimeError, match="'a'"):
        td[:, 1] = {"a": torch.ones(3, 2), "b": torch.ones(3)}
    assert not td["b"].any()  # nothing written
