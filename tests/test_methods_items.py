"""items()/values() with no argument read entries as get() does: non-tensor data as
NonTensorData (on the C reads and the Python ones); NonTensorData is a leaf."""

import pytest
import torch

from tensordict import NonTensorData, TensorDict, is_tensor_collection, tensorclass


def _td():
    td = TensorDict(
        a=torch.zeros(3),
        sub=TensorDict(b=torch.ones(3), batch_size=[3]),
        batch_size=[3],
    )
    td.set_non_tensor(("data", "text"), "hello")
    return td


def test_values_and_items_yield_non_tensor_data():
    td = _td()
    data = td["data"]
    (value,) = list(data.values())
    assert isinstance(value, NonTensorData) and value.data == "hello"
    assert value.batch_size == (3,)
    ((key, value),) = list(data.items())
    assert key == "text" and isinstance(value, NonTensorData)
    assert len(data.values()) == 1


def test_plain_values_stay_live_views():
    td = TensorDict(a=torch.zeros(3), batch_size=[3])
    values = td.values()
    td["b"] = torch.ones(3)
    assert len(values) == 2  # the storage's own view


def test_non_tensor_data_has_no_entries():
    nd = NonTensorData("x", batch_size=[2])
    assert list(nd.keys()) == [] and list(nd.values()) == [] and list(nd.items()) == []


def _leaves(td):
    # a walk over tensor collections as user code writes it: it must end
    for value in td.values():
        if is_tensor_collection(value):
            yield from _leaves(value)
        else:
            yield value


def test_recursive_walk_over_values_ends_at_non_tensor_data():
    td = _td()
    leaves = list(_leaves(td))
    assert len(leaves) == 2
    assert all(isinstance(leaf, torch.Tensor) for leaf in leaves)


def test_tensorclass_items_yield_non_tensor_data():
    @tensorclass
    class Sample:
        y: torch.Tensor
        z: str

    s = Sample(y=torch.zeros(3), z="a", batch_size=[3])
    items = dict(s.items())
    assert isinstance(items["z"], NonTensorData) and items["z"].data == "a"


def test_set_non_tensor_of_non_tensor_data_then_indexed_update():
    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4, 3])
    td.set_non_tensor(("data", "text"), NonTensorData("some", batch_size=[4, 3]))
    assert td["data", "text"] == "some"
    part = td[3].to_tensordict().apply(lambda x: x * 0 + 2)
    td._get_sub_tensordict(3).update(part)  # the same text: stays one value
    assert (td["a"][3] == 2).all()
    assert td["data", "text"] == "some"
    assert td.to_dict()["data"]["text"] == "some"
    td[0] = part.set_non_tensor(("data", "text"), "other")  # now one per element
    assert td[0]["data", "text"] == "other" and td[1]["data", "text"] == "some"


@pytest.mark.parametrize("kind", ["sub", "lazy", "view", "params"])
def test_get_of_non_tensor_reads_non_tensor_data_on_every_kind(kind):
    from tensordict import LazyStackedTensorDict, set_lazy_legacy
    from tensordict.nn import TensorDictParams

    base = TensorDict(a=torch.zeros(4, 3), batch_size=[4, 3])
    if kind == "sub":
        td = base._get_sub_tensordict(0)
    elif kind == "lazy":
        td = LazyStackedTensorDict.lazy_stack([base[0].clone(), base[1].clone()], 0)
    elif kind == "view":
        with set_lazy_legacy(True):
            td = base.unsqueeze(0)
    else:
        td = TensorDictParams(base)
    td.set_non_tensor(("this", "text"), "hello")
    td.set_non_tensor("top", "there")
    for key, text in ((("this", "text"), "hello"), ("top", "there")):
        value = td.get(key)
        assert isinstance(value, NonTensorData), (kind, type(value))
        assert value.data == text
        assert value.batch_size == td.batch_size
    assert td.get("missing", "default") == "default"
    assert td["top"] == "there"


def test_flatten_unflatten_round_trip_with_non_tensor_data():
    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4, 3])
    td.set_non_tensor(("data", "text"), NonTensorData("some", batch_size=[4, 3]))
    flat = td.flatten_keys(",")
    assert set(flat.keys()) == {"a", "data,text"}
    back = flat.unflatten_keys(",")
    assert set(back.keys(True)) == {"a", ("data", "text"), "data"}
    with td.flatten_keys(",") as tdflat:
        with tdflat.unflatten_keys(",") as orig:
            orig["new", "x"] = torch.zeros(4, 3)
        assert (tdflat["new,x"] == 0).all()
    assert (td["new", "x"] == 0).all()
    assert td["data", "text"] == "some"


def test_lazy_stack_filter_non_tensor_data_keeps_member_leaves():
    from tensordict import LazyStackedTensorDict

    members = [
        TensorDict(a=torch.zeros(2, requires_grad=True), label="x", batch_size=[2])
        for _ in range(2)
    ]
    stack = LazyStackedTensorDict.lazy_stack(members, 0)
    out = stack.filter_non_tensor_data()
    assert isinstance(out, LazyStackedTensorDict)
    assert list(out.keys()) == ["a"]
    assert out.tensordicts[0]["a"] is members[0]["a"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no .grad of a non-leaf (a dense stack)
        assert stack.zero_grad().filter_non_tensor_data().grad is None


def test_non_tensor_data_read_carries_the_dim_names():
    td = TensorDict(a=torch.zeros(2, 3), batch_size=[2, 3])
    td.set_non_tensor(("sub", "text"), "x")
    td.names = ["n0", "n1"]
    assert td.get(("sub", "text")).names == ["n0", "n1"]
    for value in td.values(True):
        if is_tensor_collection(value):
            assert value.names == ["n0", "n1"]
    td.names = ["m0", "m1"]
    assert dict(td.items(True))[("sub", "text")].names == ["m0", "m1"]


def test_lazy_stack_set_index_raises_type_error():
    from tensordict import LazyStackedTensorDict

    stack = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(3), batch_size=[3]) for _ in range(4)], 0
    )
    with pytest.raises(TypeError, match="Invalid index"):
        stack[{1, 2}]
    with pytest.raises(IndexError):
        stack[:, {0}]


def test_tensorclass_field_over_a_lazy_stack_reads_the_value():
    from tensordict import LazyStackedTensorDict

    @tensorclass
    class Pair:
        x: torch.Tensor
        tag: str

    stack = LazyStackedTensorDict.lazy_stack(
        [TensorDict(x=torch.zeros(2), tag="t", batch_size=[2]) for _ in range(2)], 0
    )
    pair = Pair.from_tensordict(stack)
    assert pair.tag == "t"
