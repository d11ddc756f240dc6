"""Under set_lazy_legacy(True), permute/transpose/view of a lazy stack are lazy views
that the inverse op undoes (the stack itself back); a no-op gives the stack itself."""

import torch

from tensordict import LazyStackedTensorDict, TensorDict, set_lazy_legacy


def _stack():
    return LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.randn(4, 3, 1, 5), batch_size=[4, 3, 1]) for _ in range(2)],
        2,
    )


def test_legacy_inverse_ops_give_the_stack_back():
    stack = _stack()
    with set_lazy_legacy(True):
        t = stack.transpose(-1, -2)
        assert t.batch_size == (4, 3, 1, 2)
        assert t.transpose(-1, -2) is stack
        p = stack.permute(1, 0, 2, 3)
        assert p.batch_size == (3, 4, 2, 1)
        assert p.permute(1, 0, 2, 3) is stack
        v = stack.view(-1)
        assert v.batch_size == (24,)
        assert v.view(stack.shape) is stack
        assert (v["a"] == stack["a"].reshape(24, 5)).all()
        # writes go through to the stacked tensordicts
        t["a"] = torch.zeros(4, 3, 1, 2, 5)
        assert (stack.tensordicts[0]["a"] == 0).all()


def test_no_op_permute_and_transpose_return_the_stack():
    stack = _stack()
    assert stack.transpose(0, 0) is stack
    assert stack.permute(0, 1, 2, 3) is stack
    with set_lazy_legacy(True):
        assert stack.transpose(1, 1) is stack


def test_without_legacy_the_ops_stay_lazy_stacks():
    stack = _stack()
    out = stack.transpose(-1, -2)
    assert isinstance(out, LazyStackedTensorDict)
    assert out.batch_size == (4, 3, 1, 2)


def test_atleast_nd_of_a_lazy_stack_with_enough_dims_is_the_stack():
    stack = _stack()
    assert stack.atleast_1d() is stack
    assert stack.atleast_2d() is stack
    assert stack.atleast_3d() is stack
    assert torch.atleast_3d(stack) is stack


def test_indexed_write_broadcasts_a_value_with_fewer_batch_dims():
    stack = _stack()  # batch [4, 3, 2, 1], stacked at dim 2
    value = stack[0].clone().zero_()  # batch [3, 2, 1]
    stack[:1] = value  # broadcast over the leading dim, as a tensor would
    assert (stack[:1] == 0).all()
    assert not (stack[1:] == 0).all()
    one = (
        stack[0, :, :1].clone().fill_("a", 7.0)
    )  # batch [3, 1, 1]: size 1 at the stack dim
    stack[1:2] = one
    assert (stack[1]["a"] == 7).all()


def test_flatten_keys_block_over_a_locked_tensordict(tmp_path):
    td = TensorDict(
        a=torch.zeros(4, 3), n=TensorDict(b=torch.zeros(4, 3)), batch_size=[4, 3]
    ).memmap_(tmp_path / "td")
    assert td.is_locked
    with td.flatten_keys(",") as flat:
        with flat.unflatten_keys(",") as orig:
            assert (orig == td).all()
        flat["n,b"] += 1  # written back in place on exit
    assert (td["n", "b"] == 1).all()
    assert td.is_locked
