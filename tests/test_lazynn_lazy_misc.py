"""Lazy stacks: an empty stack built with the members' batch size and device, a
tensordict ``in`` a stack, nested lists written one part per member, and
``update(update_batch_size=True)``."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, lazy_stack


def test_empty_stack_with_the_members_batch_size_and_device():
    td = LazyStackedTensorDict(stack_dim=1, batch_size=[1, 2], device="cpu")
    assert td.batch_size == (1, 0, 2)
    assert td.device == torch.device("cpu")
    assert LazyStackedTensorDict(stack_dim=0).batch_size == (0,)


def test_a_tensordict_is_in_the_stack_that_holds_it():
    td = TensorDict(a=torch.zeros(1), batch_size=[1])
    stack = lazy_stack([td, td.clone()])
    assert td in stack
    assert td.clone() not in stack
    assert "a" in stack and "b" not in stack


def test_a_list_of_tensors_of_different_shapes_goes_one_per_member():
    td = LazyStackedTensorDict(TensorDict(), TensorDict())
    td["b"] = [torch.ones(2) * 2, torch.ones(1)]
    assert td[1]["b"].shape == (1,)
    assert td.get("b", as_padded_tensor=True).tolist() == [[2.0, 2.0], [1.0, 0.0]]


def test_a_nested_list_follows_the_batch_dims_of_a_stack_of_stacks():
    td = lazy_stack([lazy_stack([TensorDict(), TensorDict()]) for _ in range(3)], 1)
    assert td.batch_size == (2, 3)
    td["a"] = [[torch.ones(n) for n in row] for row in ([1, 2, 3], [4, 5, 6])]
    assert [td[i, j]["a"].shape[0] for i in range(2) for j in range(3)] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]


@pytest.mark.parametrize("lazy_source", [True, False])
def test_update_batch_size(lazy_source):
    td = TensorDict(
        a=torch.zeros(3, 4), b=torch.zeros(3, 4), batch_size=[3, 4]
    ).to_lazystack(0)
    src = TensorDict(a=torch.ones(2, 4), b=torch.ones(2, 4), batch_size=[2, 4])
    if lazy_source:
        src = src.to_lazystack(0)
    td.update(src, update_batch_size=True)
    assert td.batch_size == (2, 4)
    assert (td["a"] == 1).all()
    dense = TensorDict(a=torch.zeros(3), batch_size=[3])
    dense.update(TensorDict(a=torch.ones(2), batch_size=[2]), update_batch_size=True)
    assert dense.batch_size == (2,) and (dense["a"] == 1).all()


def test_update_batch_size_needs_every_key_in_the_source():
    td = TensorDict(a=torch.zeros(3), c=torch.zeros(3), batch_size=[3])
    with pytest.raises(
        RuntimeError, match="Some keys of the dest tensordict are not present"
    ):
        td.update(TensorDict(a=torch.ones(2), batch_size=[2]), update_batch_size=True)
    assert td.batch_size == (3,)


@pytest.mark.parametrize("stack_dim", [0, 1])
def test_view_splitting_the_stack_dim_gives_lazy_stacks_of_lazy_stacks(stack_dim):
    if stack_dim == 0:
        stack = LazyStackedTensorDict(
            *[TensorDict(a=i) for i in range(60)], stack_dim=0
        )
        shape, split = (3, 4, 5), (3, 4, 5)
    else:
        stack = LazyStackedTensorDict(
            *[TensorDict(a=a, batch_size=[2]) for a in torch.arange(120).chunk(60)],
            stack_dim=1,
        )
        shape, split = (2, 3, 4, 5), (3, 4, 5)
    view = stack.view(*shape)
    assert view.batch_size == shape
    assert isinstance(view, LazyStackedTensorDict) and view.stack_dim == stack_dim
    inner = view.tensordicts[0]
    assert isinstance(inner, LazyStackedTensorDict)
    assert isinstance(inner.tensordicts[0], LazyStackedTensorDict)
    assert inner.tensordicts[0].tensordicts[0] is stack.tensordicts[0]  # no copy
    assert (view == stack.unflatten(stack_dim, split)).all()
    assert (view.view(stack.shape) == stack).all()
