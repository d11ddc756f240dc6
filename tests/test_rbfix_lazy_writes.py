"""Writing into lazy stacks the way TorchRL's replay buffers and MCTS trees do.

- a tensorclass whose data is a lazy stack (``TensorDict.lazy_stack`` of
  tensorclass instances) takes field assignments: each stacked instance gets its
  part of the value, as with a dense tensorclass;
- ``assert_close`` compares two tensorclasses over lazy stacks member by member, so
  members whose tensors differ in shape compare too;
- ``update_at_`` on a lazy stack writes member by member, so a storage built from a
  lazy stack whose members differ in shape (``torch.empty_like`` of it) takes such
  stacks (``ReplayBuffer.extend``).
"""

from __future__ import annotations

import weakref

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict
from tensordict.utils import assert_close


class _Node(TensorClass["nocast"]):
    value: torch.Tensor = None
    parents: list | None = None
    payload: TensorDict | None = None


def _node_stack(n=2):
    return TensorDict.lazy_stack(
        [_Node(value=torch.zeros(()), batch_size=[]) for _ in range(n)]
    )


class TestTensorclassOverLazyStack:
    def test_is_lazy(self):
        stack = _node_stack()
        assert isinstance(stack, _Node)
        assert isinstance(stack._tensordict, LazyStackedTensorDict)

    def test_tensor_field_is_split_over_members(self):
        stack = _node_stack(3)
        stack.value = torch.tensor([1.0, 2.0, 3.0])
        assert stack[1].value.item() == 2.0
        assert stack.value.tolist() == [1.0, 2.0, 3.0]

    def test_tensor_field_batch_mismatch_raises(self):
        stack = _node_stack(3)
        with pytest.raises(RuntimeError, match="batch dimension mismatch"):
            stack.value = torch.ones(4)

    def test_list_field_one_item_per_member(self):
        stack = _node_stack(2)
        owner = TensorDict()
        ref = weakref.ref(owner)
        stack.parents = [None, ref]
        assert stack[1].parents is ref

    def test_nondata_field_shared_by_members(self):
        stack = _node_stack(2)
        owner = TensorDict()
        ref = weakref.ref(owner)
        stack.parents = ref
        assert stack[0].parents is ref and stack[1].parents is ref

    def test_nested_tensordict_field(self):
        stack = _node_stack(2)
        stack.payload = TensorDict(x=torch.arange(2.0), batch_size=[2])
        assert stack[1].payload["x"].item() == 1.0


class TestAssertCloseTensorclassLazy:
    def _pair(self, offset=0.0):
        a = _Node(value=torch.zeros(2) + offset, batch_size=[])
        b = _Node(value=torch.zeros(3) + offset, batch_size=[])
        return TensorDict.lazy_stack([a, b])

    def test_members_of_different_shapes(self):
        assert assert_close(self._pair(), self._pair())

    def test_values_differ(self):
        with pytest.raises(AssertionError, match="does not match"):
            assert_close(self._pair(), self._pair(1.0))


class TestUpdateAtHeterogeneous:
    def _storage(self, size=6):
        a = TensorDict(x=torch.zeros(size, 4, 8), batch_size=[size])
        b = TensorDict(x=torch.zeros(size, 3, 8), batch_size=[size])
        return LazyStackedTensorDict(a, b, stack_dim=1)

    def _data(self, size=5):
        a = TensorDict(x=torch.rand(size, 4, 8), batch_size=[size])
        b = TensorDict(x=torch.rand(size, 3, 8), batch_size=[size])
        return LazyStackedTensorDict(a, b, stack_dim=1)

    def test_tensor_index(self):
        storage, data = self._storage(), self._data()
        storage.update_at_(data, torch.arange(1, 6))
        assert torch.equal(storage.tensordicts[0]["x"][1:], data.tensordicts[0]["x"])
        assert torch.equal(storage.tensordicts[1]["x"][1:], data.tensordicts[1]["x"])
        assert (storage.tensordicts[1]["x"][0] == 0).all()

    def test_storage_from_empty_like(self):
        data = self._data()
        storage = torch.empty_like(data[0].expand(6, 2))
        assert isinstance(storage, LazyStackedTensorDict)
        out = storage.update_at_(data, torch.arange(5))
        assert out is storage
        assert torch.equal(storage[:5].tensordicts[1]["x"], data.tensordicts[1]["x"])

    def test_homogeneous_still_written(self):
        a = TensorDict(x=torch.zeros(4, 2), batch_size=[4])
        b = TensorDict(x=torch.zeros(4, 2), batch_size=[4])
        storage = LazyStackedTensorDict(a, b, stack_dim=1)
        storage.update_at_(TensorDict(x=torch.ones(2, 2, 2), batch_size=[2, 2]), [0, 3])
        assert a["x"][:, 0].tolist() == [1.0, 0.0, 0.0, 1.0]
        assert b["x"][:, 1].tolist() == [1.0, 0.0, 0.0, 1.0]

    def test_keys_to_update(self):
        a = TensorDict(x=torch.zeros(3), y=torch.zeros(3), batch_size=[3])
        b = a.clone()
        storage = LazyStackedTensorDict(a, b)
        value = TensorDict(x=torch.ones(2), y=torch.ones(2), batch_size=[2])
        storage.update_at_(value, (slice(None), 1), keys_to_update=["x"])
        assert a["x"].tolist() == [0.0, 1.0, 0.0]
        assert a["y"].tolist() == [0.0, 0.0, 0.0]
