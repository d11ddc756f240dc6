"""Lazy stacks whose members' entries differ in shape: reading them through a dense
parent, writing them into other tensordicts, and listing their keys, without ever
stacking the differing entries."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack


def _hetero():
    return lazy_stack([TensorDict(x=torch.ones(1)), TensorDict(x=torch.ones(2) * 2)])


def test_stacked_forms_through_a_dense_parent():
    td = TensorDict(inner=_hetero(), batch_size=[2])
    with pytest.raises(
        RuntimeError, match="Failed to stack tensors within a tensordict"
    ):
        td.get(("inner", "x"))
    assert [t.tolist() for t in td.get(("inner", "x"), as_list=True)] == [
        [1.0],
        [2.0, 2.0],
    ]
    padded = td.get(("inner", "x"), as_padded_tensor=True, padding_value=-1)
    assert padded.tolist() == [[1.0, -1.0], [2.0, 2.0]]
    left = td.get(("inner", "x"), as_padded_tensor=True, padding_side="left")
    assert left.tolist() == [[0.0, 1.0], [2.0, 2.0]]
    assert td.get(("inner", "x"), as_nested_tensor=True).is_nested


def test_stacked_forms_of_a_stack_of_stacks():
    inner = _hetero()
    outer = lazy_stack([inner, inner.clone()])
    as_list = outer.get("x", as_list=True)
    assert isinstance(as_list, list) and all(isinstance(v, list) for v in as_list)
    assert outer.get("x", as_padded_tensor=True).shape == (2, 2, 2)


def test_update_with_a_heterogeneous_lazy_stack_merges_member_wise():
    a = TensorDict({("s", "c"): torch.ones(3, 4), ("s", "d"): torch.ones(3, 4)}, [3])
    b = TensorDict({("s", "c"): torch.full((3, 5), 2.0)}, [3])
    src = TensorDict(parent=lazy_stack([a, b]), batch_size=[2])
    dst = TensorDict(
        {
            ("parent", "s", "c"): torch.zeros(2, 3, 4),
            ("parent", "s", "d"): torch.zeros(2, 3, 4),
            ("parent", "s", "e"): torch.zeros(2, 3, 4),
        },
        [2],
    )
    dst.update(src)
    sub = dst.get(("parent", "s"))
    assert isinstance(dst.get("parent"), LazyStackedTensorDict)
    assert (sub[0]["c"] == 1).all() and (sub[1]["c"] == 2).all()
    assert sub[1]["c"].shape == (3, 5)
    assert (sub[0]["d"] == 1).all() and (sub[1]["d"] == 0).all()  # b has no "d"
    assert (sub.get("e") == 0).all()


def _nested_het(batch_size):
    tds = [
        TensorDict(shared=torch.zeros(4), het=torch.zeros(3)),
        TensorDict(shared=torch.zeros(4), het=torch.zeros(2)),
    ]
    return (
        TensorDict(lazy=lazy_stack(tds), dense=torch.zeros(2, 3))
        .expand(batch_size)
        .clone()
    )


@pytest.mark.parametrize("batch_size", [(), (3,)])
def test_stack_into_out_and_setitem_with_heterogeneous_entries(batch_size):
    obs = _nested_het(batch_size)
    obs1 = obs.clone().apply_(lambda x: x + 1)
    shape = [2, *batch_size]
    out = obs.unsqueeze(0).expand(shape).clone()
    res = LazyStackedTensorDict.lazy_stack([obs, obs1], dim=0, out=out)
    assert res.batch_size == torch.Size(shape)
    assert (res[1]["lazy"][..., 1]["het"] == 1).all()
    out2 = obs.unsqueeze(0).expand(shape).clone()
    out2[1] = obs1
    assert (out2[1]["lazy"][..., 1]["het"] == 1).all()
    assert (out2[0]["lazy"][..., 1]["het"] == 0).all()


def test_keys_of_a_tensorclass_around_a_heterogeneous_stack():
    class Holder(TensorClass):
        a: torch.Tensor

    x = TensorDict(
        b=Holder.from_tensordict(
            lazy_stack([TensorDict(a=torch.randn(3)), TensorDict(a=torch.randn(5))])
        )
    )
    assert set(x.keys(True)) == {"b", ("b", "a")}
    assert set(x.keys(True, True)) == {("b", "a")}
