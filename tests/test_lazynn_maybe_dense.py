"""maybe_dense_stack stacks densely wherever it can: a dense tensordict at the levels
whose keys and shapes agree, lazy stacks below where they do not, and lazy stacks
alike member by member."""

import torch

from tensordict import LazyStackedTensorDict, TensorDict


def test_dense_on_top_lazy_where_nested_keys_differ():
    td0 = TensorDict(a=1, b=TensorDict(c=2))
    td1 = TensorDict(a=1, b=TensorDict(d=2))
    out = TensorDict.maybe_dense_stack([td0, td1])
    assert type(out) is TensorDict
    assert out["a"].tolist() == [1, 1]
    assert isinstance(out.get("b"), LazyStackedTensorDict)
    assert out.get("b").tensordicts[0]["c"] == 2


def test_dense_on_top_lazy_where_nested_shapes_differ():
    td0 = TensorDict(a=1, b=TensorDict(c=2))
    td1 = TensorDict(a=1, b=TensorDict(c=torch.tensor([2])))
    out = LazyStackedTensorDict.maybe_dense_stack([td0, td1])
    assert type(out) is TensorDict
    assert isinstance(out.get("b"), LazyStackedTensorDict)


def test_lazy_where_top_level_shapes_differ_and_member_wise_for_lazy_stacks():
    td0 = TensorDict(a=torch.zeros(3), b=torch.zeros(4), f="x")
    td1 = TensorDict(b=torch.zeros(5), f="x", a=torch.zeros(3))
    td_a = TensorDict.maybe_dense_stack([td0, td1])
    assert isinstance(td_a, LazyStackedTensorDict)
    td = TensorDict.maybe_dense_stack([td_a, td_a.clone()])
    assert isinstance(td, LazyStackedTensorDict)
    assert td.stack_dim == 1 and td.batch_size == (2, 2)
    assert all(type(m) is TensorDict for m in td.tensordicts)
    assert td.tensordicts[1]["b"].shape == (2, 5)
    del td0["a"]  # member 0 of td_a now lacks "a": every member stays lazy
    td = TensorDict.maybe_dense_stack(
        [td_a, td_a.clone().update({"a": torch.zeros(2, 3)})]
    )
    assert all(isinstance(m, LazyStackedTensorDict) for m in td.tensordicts)
