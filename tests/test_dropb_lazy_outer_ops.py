"""A lazy stack of tensordicts of different shapes, held in a tensordict, stays lazy
through ``expand`` / ``broadcast_to`` / ``unsqueeze`` of the holder's batch dims (0.15.3
runs them; they raised here, asking for a dense stack)."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict


def _holder(batch_size=()):
    members = [
        TensorDict({"h": torch.zeros(3), "t": {"u": torch.zeros(1)}}),
        TensorDict(
            {"h": torch.ones(2), "t": {"u": torch.zeros(1)}, "x": torch.ones(1)}
        ),
    ]
    held = LazyStackedTensorDict.lazy_stack(members, 0)
    holder = TensorDict({"lazy": held, "dense": torch.zeros(2, 4)}, [])
    return holder.expand(batch_size).clone() if batch_size else holder


@pytest.mark.parametrize("batch_size", [(2,), (1, 2)])
def test_expand_keeps_a_heterogeneous_stack_lazy(batch_size):
    out = _holder().expand(batch_size)
    lazy = out["lazy"]
    assert isinstance(lazy, LazyStackedTensorDict)
    assert lazy.batch_size == torch.Size([*batch_size, 2])
    assert lazy.stack_dim == len(batch_size)
    assert lazy.tensordicts[1]["h"].shape == torch.Size([*batch_size, 2])
    assert (lazy.tensordicts[1]["h"] == 1).all()
    assert lazy.tensordicts[0]["t", "u"].shape == torch.Size([*batch_size, 1])
    assert out.broadcast_to(batch_size)["lazy"].batch_size == lazy.batch_size


def test_expand_grows_size_one_dims_before_the_stack_dim():
    holder = _holder((1,))
    out = holder.expand(4)
    assert out["lazy"].batch_size == torch.Size([4, 2])
    assert out["lazy"].stack_dim == 1


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_unsqueeze_of_the_holder_moves_the_stack_dim(dim):
    holder = _holder((4, 5))
    out = holder.unsqueeze(dim)
    lazy = out["lazy"]
    assert isinstance(lazy, LazyStackedTensorDict)
    assert lazy.stack_dim == 3
    assert lazy.batch_size == torch.Size([*out.batch_size, 2])
    assert lazy.tensordicts[1]["h"].shape == torch.Size([*out.batch_size, 2])


def test_an_op_across_the_stack_dim_still_needs_a_dense_stack():
    holder = _holder((2,))
    with pytest.raises(RuntimeError, match="densely"):
        holder["lazy"].reshape(-1)
