"""Non-tensor data behaviours code written for 0.15.3 relies on: typed MetaData,
lists linked to a NonTensorStack, element-wise writes into a stack, and shape ops on
NonTensorData."""

import pytest
import torch

from tensordict import MetaData, NonTensorData, NonTensorStack, TensorDict
from tensordict.utils import LinkedList


def test_typed_metadata_checks_the_type():
    d = MetaData[int](0, batch_size=(3,))
    assert d.data == 0
    assert isinstance(d, MetaData[int]) and isinstance(d, MetaData)
    assert issubclass(MetaData[int], MetaData)
    assert MetaData[int] is MetaData[int]
    with pytest.raises(TypeError, match="Expected data of type int, got str"):
        MetaData[int]("a string")


def test_linked_list_writes_into_its_stack_until_its_length_changes():
    td = TensorDict(a=["foo", "bar"], batch_size=(2,))
    values = td["a"]
    assert isinstance(values, LinkedList)
    values[:2] = ["baz", "qux"]
    assert td["a"] == ["baz", "qux"]
    assert values._td() is td.get("a")
    values.append("more")
    assert values._td() is None
    values[0] = "not written"
    assert td["a"] == ["baz", "qux"]


def test_a_list_written_into_a_stack_gives_one_value_per_element():
    stack = NonTensorStack("a", "b", "c")
    stack[:2] = ["x", "y"]
    assert stack.tolist() == ["x", "y", "c"]
    stack[:2] = "z"
    assert stack.tolist() == ["z", "z", "c"]
    stack[1] = ["one", "value"]
    assert stack.tolist() == ["z", ["one", "value"], "c"]


def test_expand_of_non_tensor_data_gives_a_stack():
    expanded = NonTensorData(0, batch_size=(3,)).expand((2, 3))
    assert isinstance(expanded, NonTensorStack)
    assert expanded.tolist() == [[0, 0, 0], [0, 0, 0]]
    meta = MetaData(0, batch_size=(1,)).expand((2, 3))
    assert isinstance(meta, MetaData) and meta.data == 0 and meta.shape == (2, 3)


def test_squeeze_of_a_one_element_stack_stores_the_value():
    td = TensorDict(foo=NonTensorData(3))
    unsqueezed = td.unsqueeze(0)
    assert isinstance(unsqueezed.get("foo"), NonTensorStack)
    assert unsqueezed["foo"] == [3]
    squeezed = unsqueezed.squeeze(0)
    assert squeezed["foo"] == 3 and isinstance(squeezed["foo"], int)
    assert isinstance(squeezed.get("foo"), NonTensorData)


def test_stack_and_cat_into_out_with_unbatched_entries():
    from tensordict import UnbatchedTensor

    data = torch.tensor(1)
    items = [
        TensorDict(x=torch.zeros(2), ub=UnbatchedTensor(data), batch_size=[2])
        for _ in range(3)
    ]
    out = TensorDict(x=torch.empty(3, 2), ub=UnbatchedTensor(data), batch_size=[3, 2])
    assert torch.stack(items, 0, out=out) is out
    assert (out["x"] == 0).all() and out["ub"].batch_size == (3, 2)
    flat = TensorDict(x=torch.ones(6), ub=UnbatchedTensor(data), batch_size=[6])
    assert torch.cat(items, 0, out=flat) is flat
    assert (flat["x"] == 0).all()
