"""Lazy stacks of tensordicts whose batch sizes differ (as 0.15.3: the dims that differ
are ``-1`` in the stack's batch size), and ``torch.stack`` of lazy stacks.

TorchRL relies on them: trajectories of different lengths stacked with
``lazy_stack`` (``torchrl.data.replay_buffers.query.Trajectory``), MCTS trees whose
subtrees hold rollouts of different lengths (reading ``subtree.rollout`` gives a lazy
stack), and collectors stacking the lazy stacks heterogeneous environments return.
"""

from __future__ import annotations

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack


def _member(n, width=2):
    return TensorDict(
        x=torch.arange(float(n * width)).reshape(n, width),
        sub=TensorDict(y=torch.ones(n, 1), batch_size=[n]),
        batch_size=[n],
    )


def _ragged():
    return LazyStackedTensorDict(_member(3), _member(5))


class TestBatchSize:
    def test_differing_dim_is_minus_one(self):
        stack = _ragged()
        assert stack.batch_size == torch.Size([2, -1])
        assert stack.shape == (2, -1) and stack.batch_dims == 2

    @pytest.mark.parametrize(
        "build",
        [
            lambda tds: TensorDict.lazy_stack(tds),
            lambda tds: lazy_stack(tds),
            lambda tds: LazyStackedTensorDict(*tds),
            lambda tds: LazyStackedTensorDict.maybe_dense_stack(tds),
        ],
    )
    def test_entry_points(self, build):
        assert build([_member(3), _member(5)]).batch_size == (2, -1)

    def test_stack_dim_1(self):
        a = TensorDict(x=torch.zeros(4, 3), batch_size=[4, 3])
        b = TensorDict(x=torch.zeros(4, 6), batch_size=[4, 6])
        stack = LazyStackedTensorDict(a, b, stack_dim=1)
        assert stack.batch_size == (4, 2, -1)
        assert stack[:, 1] is b

    def test_different_number_of_batch_dims_raises(self):
        with pytest.raises(RuntimeError, match="congruent batch sizes"):
            LazyStackedTensorDict(_member(3), TensorDict(batch_size=[3, 1]))

    def test_dense_stack_still_raises(self):
        with pytest.raises(RuntimeError, match="requires them to have congruent"):
            torch.stack([_member(3), _member(5)])

    def test_strict_shape_refuses_them(self):
        with pytest.raises(RuntimeError, match="congruent batch sizes"):
            LazyStackedTensorDict.lazy_stack(
                [_member(3), _member(5)], strict_shape=True
            )

    def test_numel_counts_every_element(self):
        assert _ragged().numel() == 8

    def test_append_follows_the_minus_one(self):
        stack = _ragged()
        stack.append(_member(7))
        assert stack.batch_size == (3, -1)
        homogeneous = LazyStackedTensorDict(_member(3), _member(3))
        with pytest.raises(ValueError, match="Batch sizes in tensordicts differs"):
            homogeneous.append(_member(5))


class TestReading:
    def test_index_stack_dim_gives_the_member(self):
        stack = _ragged()
        assert stack[1] is stack.tensordicts[1]
        assert stack[1].batch_size == (5,)

    def test_index_other_dims(self):
        stack = _ragged()
        first = stack[..., 0]
        assert first.batch_size == (2,)
        assert first["x"].tolist() == [[0.0, 1.0], [0.0, 1.0]]
        last = stack[..., -1]
        assert last["x"][:, 0].tolist() == [4.0, 8.0]
        assert stack[:, 1:].batch_size == (2, -1)
        assert stack[:, :2].batch_size == (2, 2)

    def test_nested_tensordicts_stack_lazily(self):
        outer = LazyStackedTensorDict(
            TensorDict(r=_member(3)), TensorDict(r=_member(5))
        )
        nested = outer["r"]
        assert isinstance(nested, LazyStackedTensorDict)
        assert nested.batch_size == (2, -1)
        assert nested[..., 0]["x"].shape == (2, 2)

    def test_tensor_read_names_the_shapes(self):
        with pytest.raises(RuntimeError, match="Failed to stack tensors"):
            _ragged()["x"]
        assert [t.shape[0] for t in _ragged().get("x", as_list=True)] == [3, 5]

    def test_member_wise_ops_keep_the_layout(self):
        stack = _ragged()
        for result in (stack + 1, stack.clone(), stack.apply(lambda t: t * 2)):
            assert isinstance(result, LazyStackedTensorDict)
            assert result.batch_size == (2, -1)
        assert [td.batch_size for td in stack.unbind(0)] == [(3,), (5,)]

    def test_unbind_of_a_minus_one_dim_raises(self):
        with pytest.raises(RuntimeError, match="cannot unbind dim 1"):
            _ragged().unbind(1)

    def test_is_empty_stacks_nothing(self):
        assert not _ragged().is_empty()
        assert LazyStackedTensorDict(TensorDict(), TensorDict()).is_empty()


class TestWriting:
    @pytest.mark.parametrize("index", [slice(0, 2), [0, 1], slice(None)])
    def test_write_along_the_stack_dim(self, index):
        stack = _ragged()
        stack[index] = _ragged() + 1
        assert stack.tensordicts[1]["x"][0].tolist() == [1.0, 2.0]

    def test_update_at_(self):
        stack = _ragged()
        stack.update_at_(_ragged() * 0, slice(None))
        assert stack.tensordicts[1]["x"].sum().item() == 0

    def test_write_at_a_column(self):
        stack = _ragged()
        stack[:, 0] = TensorDict(x=-torch.ones(2, 2), batch_size=[2])
        assert stack.tensordicts[1]["x"][0].tolist() == [-1.0, -1.0]

    def test_empty_selection(self):
        empty = _ragged()[torch.tensor([], dtype=torch.long)]
        assert empty.batch_size[0] == 0


class _Trajectory(TensorClass["nocast"]):
    data: TensorDict

    @property
    def length(self):
        return self.batch_size[0]


class TestTensorclass:
    def test_lazy_stack_of_tensorclasses_of_different_lengths(self):
        first = _Trajectory(data=_member(5), batch_size=[5])
        second = _Trajectory(data=_member(3), batch_size=[3])
        stacked = lazy_stack([first, second])
        assert isinstance(stacked, _Trajectory)
        assert stacked.batch_size == (2, -1)
        assert isinstance(stacked[1], _Trajectory) and stacked[1].length == 3
        assert torch.equal(stacked[0].data["x"], first.data["x"])

    def test_nested_field_of_different_batch_sizes(self):
        class _Node(TensorClass["nocast"]):
            rollout: TensorDict = None

        nodes = lazy_stack(
            [
                _Node(rollout=_member(3), batch_size=[]),
                _Node(rollout=_member(5), batch_size=[]),
            ]
        )
        rollout = nodes.rollout
        assert rollout.batch_size == (2, -1)
        assert rollout[..., 0]["x"].shape == (2, 2)


class TestStackOfLazyStacks:
    def _pair(self):
        a = LazyStackedTensorDict(_member(3), _member(3, width=4))
        b = LazyStackedTensorDict(_member(3), _member(3, width=4))
        return a, b

    def test_lazy_result_members_stacked_one_by_one(self):
        a, b = self._pair()
        out = torch.stack([a, b])
        assert isinstance(out, LazyStackedTensorDict)
        assert out.stack_dim == 1 and out.batch_size == (2, 2, 3)
        assert [td.batch_size for td in out.tensordicts] == [(2, 3), (2, 3)]
        assert torch.equal(out.tensordicts[1]["x"][0], a.tensordicts[1]["x"])

    def test_after_the_stack_dim(self):
        a, b = self._pair()
        out = torch.stack([a, b], 1)
        assert out.stack_dim == 0 and out.batch_size == (2, 2, 3)
        assert torch.equal(out[1, 0]["x"], a.tensordicts[1]["x"])

    def test_classmethod(self):
        a, b = self._pair()
        assert isinstance(LazyStackedTensorDict.stack([a, b]), LazyStackedTensorDict)

    def test_with_a_dense_input_is_dense(self):
        h = LazyStackedTensorDict(_member(3), _member(3))
        out = torch.stack([h, h.to_tensordict()])
        assert type(out) is TensorDict and out.batch_size == (2, 2, 3)
