"""``make_tensordict`` given a tensordict infers the batch sizes as for a dict."""

import torch

from tensordict import TensorDict, make_tensordict


def test_make_tensordict_from_a_tensordict_infers_nested_batch_sizes():
    source = TensorDict(
        {"a": {"b": torch.randn(3, 4), "c": torch.randn(3, 4, 5)}, "d": torch.randn(3)},
        [],
    )
    td = make_tensordict(source, auto_batch_size=True)
    assert td.batch_size == torch.Size([3])
    assert td["a"].batch_size == torch.Size([3, 4])
    assert (td["a", "c"] == source["a", "c"]).all()


def test_make_tensordict_from_a_tensordict_with_a_batch_size():
    source = TensorDict({"a": {"b": torch.randn(3, 4)}, "d": torch.randn(3)}, [])
    td = make_tensordict(source, batch_size=[3])
    assert td.batch_size == torch.Size([3])
    assert td["a"].batch_size == torch.Size([3])
