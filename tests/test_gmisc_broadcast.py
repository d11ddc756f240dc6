"""A tensor operand of a binary op lines up with the batch dims (as in 0.15.3), and
the batch size broadcasts with the operand's shape."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict


def _td():
    return TensorDict(
        a=torch.randn(3, 4),
        b=torch.randn(3, 4, 5),
        n={"c": torch.randn(3, 4, 2, 6)},
        batch_size=[3, 4],
    )


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (3, 1)])
def test_tensor_operand_follows_the_batch_dims(shape):
    td = _td()
    t = torch.randn(shape)
    out = td * t
    batch = torch.broadcast_shapes(shape, (3, 4))
    assert out.batch_size == batch
    for key in ("a", "b", ("n", "c")):
        leaf = td.get(key)
        aligned = t.reshape(t.shape + (1,) * (leaf.ndim - 2))
        torch.testing.assert_close(out.get(key), leaf * aligned)


def test_batchless_tensordict_takes_the_operand_shape():
    td = TensorDict(a=torch.ones(5))
    out = td * torch.arange(5.0)
    assert out.batch_size == (5,)
    assert out["a"].shape == (5, 5)


def test_operand_matching_only_trailing_dims_raises():
    td = TensorDict(a=torch.rand(2, 4, 5), batch_size=[2, 4])
    with pytest.raises(RuntimeError, match="broadcast"):
        td * torch.rand(5)


@pytest.mark.parametrize("op", ["add", "sub", "maximum", "clamp_min", "pow", "__eq__"])
def test_every_binary_op_aligns_with_the_batch(op):
    td = _td().abs() + 1
    t = torch.full((2, 1, 4), 2.0)
    out = getattr(td, op)(t)
    assert out.batch_size == (2, 3, 4)
    assert out["b"].shape == (2, 3, 4, 5)


def test_inplace_aligns_with_the_batch():
    td = _td()
    expected = td["b"] * torch.arange(4.0)[:, None]
    td.mul_(torch.arange(4.0))
    torch.testing.assert_close(td["b"], expected)


def test_tensordict_operand_batch_broadcasts():
    td = _td()
    other = td.new_ones((2, 3, 4))
    out = td * other
    assert out.batch_size == (2, 3, 4)
    torch.testing.assert_close(out["b"][1], td["b"])


@pytest.mark.parametrize("stack_dim", [0, 1])
def test_lazy_stack_matches_dense(stack_dim):
    tds = [_td()[0] for _ in range(3)]  # batch [4]
    stack = LazyStackedTensorDict(*tds, stack_dim=stack_dim)
    dense = stack.to_tensordict()
    t = torch.randn(dense.batch_size[-1])
    torch.testing.assert_close((stack * t)["b"], (dense * t)["b"])
