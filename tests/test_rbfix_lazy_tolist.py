"""``tolist()`` on a lazy stack: each stacked tensordict gives its own lists, so
members whose tensors differ in shape are fine and the tensors are the members' own
(memory-mapped ones stay memory-mapped: TorchRL's compressed replay-buffer
checkpoints reload this way)."""

from __future__ import annotations

import torch

from tensordict import LazyStackedTensorDict, MemoryMappedTensor, TensorDict


def _ragged():
    return LazyStackedTensorDict(
        TensorDict(data=torch.arange(3)), TensorDict(data=torch.arange(5))
    )


def test_members_of_different_shapes():
    out = _ragged().tolist()
    assert [len(item["data"]) for item in out] == [3, 5]


def test_convert_tensors():
    assert _ragged().tolist(convert_tensors=True) == [
        {"data": [0, 1, 2]},
        {"data": [0, 1, 2, 3, 4]},
    ]


def test_tensors_are_the_members_own():
    stack = _ragged()
    out = stack.tolist()
    out[1]["data"][0] = 7
    assert stack.tensordicts[1]["data"][0].item() == 7


def test_same_as_dense_stack_dim_1():
    members = [
        TensorDict(a=torch.randn(2, 3), batch_size=[2]),
        TensorDict(a=torch.randn(2, 3), batch_size=[2]),
    ]
    lazy = LazyStackedTensorDict(*members, stack_dim=1)
    dense = torch.stack(members, 1)
    got = lazy.tolist(convert_tensors=True)
    assert got == dense.tolist(convert_tensors=True)
    assert len(got) == 2 and len(got[0]) == 2


def test_convert_nodes_false():
    out = _ragged().tolist(convert_nodes=False)
    assert [item["data"].shape[0] for item in out] == [3, 5]


def test_memmap_reload(tmp_path):
    stack = _ragged()
    stack.memmap_(tmp_path / "stack")
    loaded = TensorDict.load_memmap(tmp_path / "stack")
    out = loaded.tolist()
    assert [item["data"].tolist() for item in out] == [[0, 1, 2], [0, 1, 2, 3, 4]]
    assert all(isinstance(item["data"], MemoryMappedTensor) for item in out)
