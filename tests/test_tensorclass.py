"""@tensorclass, TensorClass, NonTensorData, NonTensorStack and MetaData.

The spec-generated ops on tensorclasses are checked entry by entry in
``tests/test_spec_tensorclass.py``; this module checks everything else: construction,
fields, attribute access, indexing, stacking, conversion, repr, pickling, the seed
example and the type stubs (mypy).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

import tensordict
from tensordict import (
    MetaData,
    NonTensorData,
    NonTensorStack,
    TensorClass,
    TensorDict,
    TensorDictBase,
    from_dataclass,
    is_tensor_collection,
    is_tensorclass,
    tensorclass,
)

ROOT = Path(__file__).resolve().parent.parent


# Module-level classes (pickling needs to find them by name).
@tensorclass
class Inner:
    x: torch.Tensor


@tensorclass
class Data:
    a: torch.Tensor
    s: str
    n: int = 3
    inner: Inner = None
    td: TensorDict = None
    obj: Any = None

    def total(self):
        return self.a.sum() + self.inner.x.sum()

    def doubled(self):
        return self * 2


class Dest(TensorClass):
    x: torch.Tensor
    label: str


class Based(TensorClass):
    x: torch.Tensor
    y: torch.Tensor = None

    def norm(self):
        return (self.x**2).sum()


def make(batch=4, s="hello"):
    return Data(
        torch.arange(batch * 2, dtype=torch.float32).reshape(batch, 2),
        s,
        inner=Inner(torch.ones(batch, 3), batch_size=[batch]),
        td=TensorDict(y=torch.zeros(batch, 1), batch_size=[batch]),
        batch_size=[batch],
    )


def has_op(name: str) -> bool:
    return hasattr(TensorDict, name)


# --------------------------------------------------------------------------------------
# Construction and fields.
# --------------------------------------------------------------------------------------


def test_decorator_and_base_class_forms():
    data = make()
    assert is_tensorclass(data) and is_tensorclass(Data)
    assert isinstance(data, TensorClass) and is_tensor_collection(data)
    assert not is_tensorclass(TensorDict()) and not is_tensorclass(torch.zeros(1))
    assert type(data).__name__ == "Data" and Data.__qualname__ == "Data"
    b = Based(torch.ones(3, 2), batch_size=[3])
    assert b.y is None and b.norm() == 6
    assert isinstance(b, Based) and is_tensorclass(b)


def test_positional_keyword_defaults_and_signature():
    data = Data(torch.zeros(2), "s", batch_size=[2])
    assert data.n == 3 and data.inner is None and data.obj is None
    data = Data(a=torch.zeros(2), s="t", n=5, batch_size=2)
    assert data.n == 5 and data.batch_size == torch.Size([2])
    sig = inspect.signature(Data)
    assert list(sig.parameters) == [
        "a",
        "s",
        "n",
        "inner",
        "td",
        "obj",
        "batch_size",
        "device",
        "names",
    ]
    with pytest.raises(TypeError, match="s"):
        Data(torch.zeros(2), batch_size=[2])


def test_default_factory_and_post_init():
    @tensorclass
    class WithFactory:
        x: torch.Tensor
        tags: list = dataclasses.field(default_factory=list)

        def __post_init__(self):
            self.tags.append("init")

    a = WithFactory(torch.zeros(2), batch_size=[2])
    b = WithFactory(torch.zeros(2), batch_size=[2])
    assert a.tags == ["init"] and b.tags == ["init"] and a.tags is not b.tags


def test_batch_size_device_names():
    data = Data(torch.zeros(3, 4), "s", batch_size=[3, 4], names=["b", "t"])
    assert data.names == ["b", "t"]
    assert data.device is None
    data = Data(torch.zeros(3), "s", batch_size=[3], device="cpu")
    assert data.device == torch.device("cpu") and data.a.device == torch.device("cpu")
    data.batch_size = []
    assert data.batch_size == torch.Size([])
    assert data.shape == torch.Size([]) and data.batch_dims == 0


def test_batch_mismatch_errors_name_the_field():
    with pytest.raises(RuntimeError, match="'a'.*\\(5,\\).*\\(4,\\)"):
        Data(torch.zeros(5), "s", batch_size=[4])
    data = make()
    with pytest.raises(RuntimeError, match="'a'"):
        data.a = torch.zeros(3)
    with pytest.raises(RuntimeError, match="'inner'"):
        data.inner = Inner(torch.zeros(2), batch_size=[2])


def test_field_types_and_storage():
    data = make()
    assert isinstance(data.a, torch.Tensor)
    assert type(data.inner) is Inner and type(data.td) is TensorDict
    assert data.s == "hello" and data.n == 3  # Python values stay Python values
    assert isinstance(data._tensordict, TensorDict)
    assert data._tensordict["s"] == "hello"
    assert "obj" not in data._tensordict.keys()  # None fields are absent
    # a tensor-annotated field converts numbers and lists
    b = Based([1.0, 2.0], batch_size=[2])
    assert torch.equal(b.x, torch.tensor([1.0, 2.0]))


def test_attribute_get_set_delete():
    data = make()
    data.a = torch.ones(4, 7)
    assert data.a.shape == (4, 7)
    data.s = "bye"
    data.obj = {"any": "object"}
    assert data.s == "bye" and data.obj == {"any": "object"}
    data.inner = None
    assert data.inner is None and "inner" not in data._tensordict.keys()
    del data.obj
    assert data.obj is None
    data.td = {"z": torch.zeros(4)}  # a dict becomes a tensordict
    assert type(data.td) is TensorDict
    with pytest.raises(AttributeError, match="no such field"):
        data.not_a_field = 1
    data._private = 1  # private attributes are allowed
    assert data._private == 1


def test_nested_writes_go_through():
    data = make()
    data.inner.x = torch.full((4, 3), 2.0)
    assert (data.inner.x == 2).all()
    data.td["y"] = torch.ones(4, 1)
    assert (data.td["y"] == 1).all()


def test_reserved_field_names_and_shadow():
    with pytest.raises(AttributeError, match="shadow=True"):

        @tensorclass
        class Bad:
            reshape: torch.Tensor

    @tensorclass(shadow=True)
    class Shadowed:
        reshape: torch.Tensor

    assert isinstance(Shadowed(torch.zeros(2), batch_size=[2]).reshape, torch.Tensor)
    with pytest.raises(AttributeError, match="constructor"):

        @tensorclass
        class Bad2:
            batch_size: torch.Tensor


def test_user_methods_and_super():
    @tensorclass
    class Base:
        x: torch.Tensor

        def describe(self):
            return "base"

    @tensorclass
    class Child(Base):
        y: torch.Tensor = None

        def describe(self):
            return "child of " + super().describe()

    child = Child(torch.zeros(2), torch.ones(2), batch_size=[2])
    assert child.describe() == "child of base"
    assert [f.name for f in dataclasses.fields(child)] == ["x", "y"]
    data = make()
    assert data.total() == data.a.sum() + 12
    assert type(data.doubled()) is Data and torch.equal(data.doubled().a, data.a * 2)


# --------------------------------------------------------------------------------------
# Ops.
# --------------------------------------------------------------------------------------


def check_same(tc, expected: TensorDict):
    assert isinstance(tc, TensorClass)
    plain = tc.to_tensordict()
    assert plain.batch_size == expected.batch_size
    assert set(plain.keys(True, True)) == set(expected.keys(True, True))
    for key in expected.keys(True, True):
        assert torch.equal(plain.get(key), expected.get(key)), key


@pytest.mark.parametrize(
    "index",
    [
        1,
        slice(1, 3),
        torch.tensor([0, 2]),
        torch.tensor([True, False, True, True]),
        ...,
        (None, 0),
    ],
    ids=["int", "slice", "long", "mask", "ellipsis", "none"],
)
def test_indexing(index):
    data = make()
    result = data[index]
    assert type(result) is Data and type(result.inner) is Inner
    assert result.s == "hello"
    check_same(result, data.to_tensordict()[index])


def test_string_keys_and_nested_keys():
    data = make()
    assert data["a"] is data.a
    assert data["inner", "x"] is data.inner.x
    assert data.get(("td", "y")) is data.td["y"]
    data["s"] = "via item"
    assert data.s == "via item"
    assert type(data.get("td")) is TensorDict  # entries are not re-wrapped


def test_setitem_at_index():
    data = make()
    value = make(batch=2)
    value.a = torch.full((2, 2), -1.0)
    data[1:3] = value
    assert (data.a[1:3] == -1).all() and (data.a[0] != -1).all()
    data[0] = Data(torch.full((2,), 9.0), "hello", batch_size=[])
    assert (data.a[0] == 9).all()
    data[:] = 0
    assert (data.a == 0).all() and (data.inner.x == 0).all()


def test_non_tensor_field_written_at_an_index():
    data = make()
    data[1] = make(batch=1)[0].set("s", "other")
    assert isinstance(data._tensordict.get("s"), NonTensorStack)
    assert data.s == ["hello", "other", "hello", "hello"]  # read as a list (0.15.3)
    assert data[1].s == "other" and data[0].s == "hello"


def test_pointwise_binary_comparison_cast():
    data = make()
    td = data.to_tensordict()
    check_same(data.abs(), td.abs())
    check_same(data + 1, td + 1)
    check_same(1 + data, 1 + td)
    check_same(data * data, td * td)
    check_same(data.float(), td.float())
    eq = data == data.clone()
    assert type(eq) is Data and eq.all()
    assert not (data != data).any()
    out = data.add_(1)
    assert out is data
    data += 1
    check_same(data, td + 2)


def test_apply_clone_select_exclude_update():
    data = make()
    result = data.apply(lambda x: x + 1)
    assert type(result) is Data and type(result.inner) is Inner and result.s == "hello"
    assert torch.equal(result.a, data.a + 1)
    clone = data.clone()
    assert (
        type(clone) is Data and clone.a is not data.a and torch.equal(clone.a, data.a)
    )
    assert clone.s == "hello" and type(clone.inner) is Inner
    selected = data.select("a")
    assert type(selected) is Data and selected.s is None and selected.inner is None
    excluded = data.exclude("a")
    assert excluded.a is None and excluded.s == "hello"
    data.update({"a": torch.zeros(4, 2)})
    assert (data.a == 0).all()
    data.apply_(lambda x: x + 1)
    assert (data.a == 1).all()


def test_locking():
    data = make()
    data.lock_()
    assert data.is_locked
    with pytest.raises(RuntimeError, match="locked"):
        data.obj = "x"
    data.set_("a", torch.zeros(4, 2))  # in place: allowed
    assert (data.a == 0).all()
    data.unlock_()
    data.obj = "x"
    with data.lock_():
        assert data.is_locked
    assert not data.is_locked


@pytest.mark.skipif(not has_op("stack"), reason="stacking ops are not in the spec yet")
def test_stack_and_cat():
    a, b = make(), make(s="hello")
    b.a = b.a + 100
    stacked = torch.stack([a, b], 0)
    assert type(stacked) is Data and stacked.batch_size == (2, 4)
    assert type(stacked.inner) is Inner
    assert stacked.s == "hello"  # equal values stay one value
    check_same(stacked, torch.stack([a.to_tensordict(), b.to_tensordict()], 0))
    cat = torch.cat([a, b], 0)
    assert type(cat) is Data and cat.batch_size == (8,)
    check_same(cat, torch.cat([a.to_tensordict(), b.to_tensordict()], 0))


@pytest.mark.skipif(not has_op("stack"), reason="stacking ops are not in the spec yet")
def test_stack_of_differing_strings_gives_a_non_tensor_stack():
    stacked = torch.stack([make(s="x"), make(s="y")], 0)
    assert isinstance(stacked._tensordict.get("s"), NonTensorStack)
    assert stacked._tensordict.get("s").batch_size == (2, 4)
    assert stacked[0].s == "x" and stacked[1, 2].s == "y"
    # the field reads as the values, nested lists for two batch dims (0.15.3)
    assert stacked[:, 0].s == ["x", "y"]
    assert stacked.s[1][2] == "y"
    tds = [TensorDict(x=torch.zeros(2), s=v, batch_size=[2]) for v in "ab"]
    td = torch.stack(tds, 1)
    assert td["s"].tolist() == [["a", "b"], ["a", "b"]]
    assert torch.stack(tds[:1] * 2, 0)["s"] == "a"


@pytest.mark.skipif(not has_op("unbind"), reason="unbind is not in the spec yet")
def test_unbind_and_split():
    data = make()
    parts = data.unbind(0)
    assert len(parts) == 4 and all(type(p) is Data for p in parts)
    assert torch.equal(parts[2].a, data.a[2])
    if has_op("split"):
        pieces = data.split(2, 0)
        assert [type(p) for p in pieces] == [Data, Data]
        assert pieces[1].batch_size == (2,)


@pytest.mark.skipif(not has_op("reshape"), reason="shape ops are not in the spec yet")
def test_shape_ops_keep_the_class():
    data = make()
    reshaped = data.reshape(2, 2)
    assert type(reshaped) is Data and reshaped.batch_size == (2, 2)
    assert type(reshaped.inner) is Inner and reshaped.inner.x.shape == (2, 2, 3)
    assert reshaped.s == "hello"
    assert data.unsqueeze(0).batch_size == (1, 4)


@pytest.mark.skipif(not has_op("to"), reason="device ops are not in the spec yet")
def test_to():
    data = make()
    moved = data.to(torch.float64)
    assert type(moved) is Data and moved.a.dtype == torch.float64
    assert type(data.to("cpu")) is Data


# --------------------------------------------------------------------------------------
# Conversions, equality, repr, pickling.
# --------------------------------------------------------------------------------------


def test_to_tensordict_and_from_tensordict():
    data = make()
    td = data.to_tensordict()
    assert type(td) is TensorDict and type(td["inner"]) is TensorDict
    assert td["s"] == "hello" and td["a"] is not data.a
    back = Data.from_tensordict(td)
    assert type(back) is Data and type(back.inner) is Inner
    assert torch.equal(back.a, data.a) and back.s == "hello"
    same = Data.from_tensordict(data._tensordict)
    assert same._tensordict is data._tensordict  # wrapped, not copied
    with_none = data.to_tensordict(retain_none=True)
    assert "obj" in with_none.keys()


def test_from_dict():
    data = Data.from_dict({"a": torch.zeros(3, 1), "s": "x"}, batch_size=[3])
    assert type(data) is Data and data.s == "x"
    auto = Based.from_dict({"x": torch.zeros(3, 2)}, auto_batch_size=True)
    assert auto.batch_size == (3, 2)


def test_from_dataclass():
    @dataclasses.dataclass
    class Plain:
        x: torch.Tensor
        label: str

    result = from_dataclass(Plain(torch.zeros(3, 2), "l"))
    assert is_tensorclass(result) and type(result).__name__ == "Plain_tc"
    assert result.label == "l" and result.batch_size == ()
    auto = from_dataclass(Plain(torch.zeros(3, 2), "l"), auto_batch_size=True)
    assert auto.batch_size == (3, 2)
    sized = from_dataclass(Plain(torch.zeros(3, 2), "l"), batch_size=[3])
    assert sized.batch_size == (3,)
    into = from_dataclass(Plain(torch.zeros(3, 2), "l"), dest_cls=Dest, batch_size=[3])
    assert type(into) is Dest and into.label == "l"
    # a dataclass type gives the tensorclass type (0.15.3), with the class options
    assert from_dataclass(Plain) is type(result)
    assert from_dataclass(Plain, autocast=True)._autocast
    with pytest.raises(TypeError):
        from_dataclass(object())


def test_equality():
    data = make()
    other = data.clone()
    assert (data == other).all()
    other.a[0, 0] = -5
    eq = data == other
    assert type(eq) is Data and not eq.all() and eq.a[1:].all()
    assert data != None  # noqa: E711 - NotImplemented -> identity comparison


def test_dataclasses_fields():
    names = [f.name for f in dataclasses.fields(Data)]
    assert names == ["a", "s", "n", "inner", "td", "obj"]
    assert dataclasses.is_dataclass(Data) and dataclasses.is_dataclass(make())
    assert Data.n == 3  # defaults read on the class, as dataclasses do


class _TensorOnly(TensorClass["tensor_only"]):
    a: torch.Tensor
    b: torch.Tensor | None = None


class _Plain(TensorClass):
    a: torch.Tensor
    b: torch.Tensor | None = None


@pytest.mark.parametrize("cls", [_TensorOnly, _Plain])
def test_field_reads_follow_every_write_path(cls):
    # a field read goes to the live storage: no write path can leave it stale
    data = cls(a=torch.zeros(2), batch_size=[2])
    data.a = torch.ones(2)  # attribute set
    assert torch.equal(data.a, torch.ones(2)) and data.b is None
    data._tensordict.set("a", torch.full((2,), 2.0))  # the wrapped tensordict's ops
    assert torch.equal(data.a, torch.full((2,), 2.0))
    data._tensordict["b"] = torch.full((2,), 3.0)
    assert torch.equal(data.b, torch.full((2,), 3.0))
    data._tensordict.update({"a": torch.full((2,), 4.0)})
    assert torch.equal(data.a, torch.full((2,), 4.0))
    data._tensordict.del_("b")
    assert data.b is None
    data.a.add_(1)  # in-place on the entry, and in-place ops of the instance
    data.mul_(2)
    assert torch.equal(data.a, torch.full((2,), 10.0))
    data.zero_()
    assert torch.equal(data.a, torch.zeros(2))
    data[0] = cls(a=torch.full((2,), 7.0), batch_size=[2])[0]  # a write at an index
    assert data.a.tolist() == [7.0, 0.0]
    assert data[1].a.item() == 0.0 and data[1:].a.shape == (1,)  # indexing results
    object.__setattr__(data, "a", torch.full((2,), 5.0))  # the descriptor's setter
    assert torch.equal(data.a, torch.full((2,), 5.0))
    object.__delattr__(data, "a")
    assert data.a is None and "a" not in data._tensordict.keys()
    data._tensordict = TensorDict(a=torch.full((2,), 6.0), batch_size=[2])  # rewrapped
    assert torch.equal(data.a, torch.full((2,), 6.0))
    data.b = torch.ones(2)
    storage = data._tensordict._tensordict
    data.select("a", inplace=True)  # the wrapped tensordict takes a new storage dict
    assert data._tensordict._tensordict is not storage
    assert data.b is None and torch.equal(data.a, torch.full((2,), 6.0))
    # wrapping a lazy stack (not a TensorDict): the read goes through its ``get``
    lazy = TensorDict.lazy_stack([TensorDict(a=torch.ones(2))] * 2)
    assert torch.equal(cls.from_tensordict(lazy).a, torch.ones(2, 2))


def test_field_descriptors_on_the_class():
    # as 0.15.3: a field without a default reads, on the class, as its property; one
    # with a default reads as the default (as on a dataclass)
    assert isinstance(_TensorOnly.a, property) and isinstance(_Plain.a, property)
    assert _TensorOnly.b is None and Data.n == 3

    class Sub(_Plain):  # annotated again: still no default, so still required
        a: torch.Tensor
        c: int = 1

    defaults = [f.default for f in dataclasses.fields(Sub)]
    assert defaults == [dataclasses.MISSING, None, 1]
    with pytest.raises(TypeError):
        Sub()
    assert torch.equal(Sub(torch.ones(1)).a, torch.ones(1))


def test_pickle():
    data = make()
    data.obj = {"k": [1, 2]}
    back = pickle.loads(pickle.dumps(data))
    assert type(back) is Data and type(back.inner) is Inner
    assert (back == data).all() and back.s == "hello" and back.obj == {"k": [1, 2]}
    b = pickle.loads(pickle.dumps(Based(torch.ones(2), batch_size=[2])))
    assert type(b) is Based and torch.equal(b.x, torch.ones(2))


def test_repr_format():
    data = Data(
        torch.zeros(4, 2),
        "hello",
        inner=Inner(torch.zeros(4), batch_size=[4]),
        batch_size=[4],
    )
    assert repr(data) == textwrap.dedent("""\
        Data(
            a=Tensor(torch.Size([4, 2]), dtype=torch.float32),
            inner=Inner(
                x=Tensor(torch.Size([4]), dtype=torch.float32),
                batch_size=torch.Size([4]),
                device=None,
                is_shared=False),
            n=3,
            obj=None,
            s='hello',
            td=None,
            batch_size=torch.Size([4]),
            device=None,
            is_shared=False)""")


def test_tensordict_holding_a_tensorclass():
    inner = Inner(torch.zeros(3, 2), batch_size=[3])
    td = TensorDict(inner=inner, y=torch.ones(3), batch_size=[3])
    assert td["inner"] is inner
    text = repr(td)
    assert "inner: Inner(\n" in text and "x=Tensor(torch.Size([3, 2])" in text
    assert set(td.keys(True, True)) == {("inner", "x"), "y"}
    assert type(td[0]["inner"]) is Inner and td[0]["inner"].x.shape == (2,)
    assert type(td.clone()["inner"]) is Inner
    assert type((td + 1)["inner"]) is Inner
    assert type(td.apply(lambda x: x * 2)["inner"]) is Inner
    assert torch.equal(td.get(("inner", "x")), inner.x)


def test_iteration_and_len():
    data = make()
    assert len(data) == 4
    rows = list(data)
    assert len(rows) == 4 and all(type(r) is Data for r in rows)


def test_torch_functions_keep_the_class():
    data = make()
    if torch.abs in _registered_torch_functions():
        assert type(torch.abs(data)) is Data


def _registered_torch_functions():
    from tensordict import _torch_function

    table = getattr(_torch_function, "TORCH_FUNCTIONS", {})
    try:
        from tensordict._generated.torch_functions import TORCH_FUNCTIONS

        table = {**table, **TORCH_FUNCTIONS}
    except ImportError:
        pass
    return table


# --------------------------------------------------------------------------------------
# Non-tensor data.
# --------------------------------------------------------------------------------------


def test_non_tensor_data():
    nd = NonTensorData("hi", batch_size=[3])
    assert nd.data == "hi" and nd.batch_size == (3,)
    assert (
        nd[0].data == "hi" and type(nd[0]) is NonTensorData and nd[0].batch_size == ()
    )
    assert nd.tolist() == ["hi", "hi", "hi"]
    assert (nd == NonTensorData("hi", batch_size=[3])).all()
    assert not (nd == "other").any()
    assert repr(nd) == "NonTensorData(data=hi, batch_size=torch.Size([3]), device=None)"
    assert nd.clone().data == "hi"
    td = TensorDict(x=torch.zeros(3), batch_size=[3])
    td["label"] = nd  # stored as its value
    assert td["label"] == "hi"
    assert pickle.loads(pickle.dumps(nd)).data == "hi"


def test_metadata():
    md = MetaData({"config": 1}, batch_size=[2])
    assert isinstance(md, NonTensorData) and md[1].data == {"config": 1}
    assert type(md[0]) is MetaData
    assert repr(md).startswith("MetaData(data={'config': 1}")
    stacked = torch.stack([md, MetaData({"config": 1}, batch_size=[2])], 0)
    assert type(stacked) is MetaData and stacked.batch_size == (2, 2)


def test_stacking_non_tensor_data():
    same = torch.stack([NonTensorData("a"), NonTensorData("a")])
    assert type(same) is NonTensorData and same.data == "a" and same.batch_size == (2,)
    different = torch.stack([NonTensorData("a"), NonTensorData("b")])
    assert isinstance(different, NonTensorStack) and different.tolist() == ["a", "b"]
    cat = torch.cat(
        [NonTensorData("a", batch_size=[2]), NonTensorData("b", batch_size=[1])]
    )
    assert cat.tolist() == ["a", "a", "b"]


def test_non_tensor_stack():
    stack = NonTensorStack("x", "y", "z")
    assert isinstance(stack, TensorDictBase) and stack.batch_size == (3,)
    assert stack[0] == "x" and stack[-1] == "z"
    assert stack[1:].tolist() == ["y", "z"] and stack == ["x", "y", "z"]
    assert stack[torch.tensor([True, False, True])].tolist() == ["x", "z"]
    assert list(stack) == ["x", "y", "z"] and len(stack) == 3
    stack[0] = ["a", "list"]  # a list is one value
    assert stack[0] == ["a", "list"]
    grid = NonTensorStack.from_list([["a", "b"], ["c", "d"]])
    assert grid.batch_size == (2, 2) and grid[1, 0] == "c"
    assert grid[:, 1].tolist() == ["b", "d"]
    assert [s.tolist() for s in grid.unbind(1)] == [["a", "c"], ["b", "d"]]
    assert grid.clone().tolist() == grid.tolist()
    assert "NonTensorStack(\n    [['a', 'b'], ['c', 'd']]," in repr(grid)
    assert NonTensorStack.from_nontensordata(NonTensorData(1, batch_size=[2])) == [1, 1]


def test_non_tensor_stack_inside_a_tensordict():
    td = TensorDict(x=torch.zeros(3), batch_size=[3])
    td["s"] = NonTensorStack("a", "b", "c")
    assert td[1]["s"] == "b"
    assert td[1:]["s"].tolist() == ["b", "c"]
    assert td.clone()["s"].tolist() == ["a", "b", "c"]
    assert td.apply(lambda x: x + 1)["s"].tolist() == ["a", "b", "c"]
    assert (td + 1)["s"].tolist() == ["a", "b", "c"]
    assert (td == td).all()
    assert td.to_dict()["s"] == ["a", "b", "c"]
    assert "s" in td.flatten_keys().keys()
    assert set(td.keys(True, True)) == {"x"}
    with pytest.raises(RuntimeError, match="'t'"):
        td["t"] = NonTensorStack("a", "b")
    td.update(TensorDict(s=NonTensorStack("q", "r", "s"), batch_size=[3]))
    assert td["s"].tolist() == ["q", "r", "s"]
    if has_op("reshape"):
        td2 = TensorDict(x=torch.zeros(4), s=NonTensorStack(*"abcd"), batch_size=[4])
        assert td2.reshape(2, 2)["s"].tolist() == [["a", "b"], ["c", "d"]]


def test_stack_non_tensor_helpers():
    from tensordict.tensorclass import cat_non_tensor, stack_non_tensor

    assert stack_non_tensor(["a", "a"], 0, []) == "a"
    stack = stack_non_tensor(["a", "b"], 1, [2])
    assert stack.tolist() == [["a", "b"], ["a", "b"]]
    assert cat_non_tensor(["a", "a"], 0, [[1], [2]]) == "a"
    assert cat_non_tensor(["a", "b"], 0, [[1], [2]]).tolist() == ["a", "b", "b"]


# --------------------------------------------------------------------------------------
# The seed example (001, "TensorClass"), as written.
# --------------------------------------------------------------------------------------


def _seed_code() -> str:
    """The seed 001 TensorClass sample, as the demo holds it (its one copy here)."""
    import importlib.util

    demo = Path(__file__).resolve().parent.parent / "demo" / "quickstart.py"
    spec = importlib.util.spec_from_file_location("tensordict_quickstart_demo", demo)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while it loads
    spec.loader.exec_module(module)
    code = module._code_of(module.seed001_tensorclass)
    assert "from tensordict.prototype import tensorclass" in code
    return code


SEED = _seed_code().replace(
    "from tensordict.prototype import tensorclass", "from {module} import tensorclass"
)

SEED_OUTPUT = """\
MyData(
    image=Tensor(torch.Size([{n}, 3, 64, 64]), dtype=torch.float32),
    label=Tensor(torch.Size([{n}]), dtype=torch.int64),
    mask=Tensor(torch.Size([{n}, 1, 64, 64]), dtype=torch.bool),
    batch_size=torch.Size([{n}]),
    device=None,
    is_shared=False)
torch.Size([100, {m}])
MyData(
    image=Tensor(torch.Size([10, 10, 3, 64, 64]), dtype=torch.float32),
    label=Tensor(torch.Size([10, 10]), dtype=torch.int64),
    mask=Tensor(torch.Size([10, 10, 1, 64, 64]), dtype=torch.bool),
    batch_size=torch.Size([10, 10]),
    device=None,
    is_shared=False)
"""


@pytest.mark.skipif(not has_op("reshape"), reason="reshape is not in the spec yet")
@pytest.mark.parametrize("module", ["tensordict", "tensordict.prototype"])
def test_seed_example(module, capsys):
    torch.manual_seed(0)
    namespace: dict = {"__name__": "seed_example"}
    exec(
        SEED.replace("{module}", module), namespace
    )  # noqa: S102 - the seed's own code
    out = capsys.readouterr().out
    label, mask = namespace["label"], namespace["mask"]
    n = int((label == 1).sum())
    m = int(mask[0].sum()) * 3
    assert out == SEED_OUTPUT.format(n=n, m=m)


# --------------------------------------------------------------------------------------
# Type stubs: mypy sees every generated op on a tensorclass.
# --------------------------------------------------------------------------------------

MYPY_EXAMPLE = """
import torch
from tensordict import TensorClass


class MyData(TensorClass):
    image: torch.Tensor
    label: torch.Tensor


data = MyData(torch.zeros(4, 3), torch.zeros(4), batch_size=[4])
doubled: MyData = (data * 2).abs().float()
image: torch.Tensor = doubled.image
same: MyData = data.add(data, alpha=2).clamp_min(torch.tensor(0.0))
mask: MyData = data.isnan()
reveal_type(data.exp())
"""

MYPY_ERROR = """
import torch
from tensordict import TensorClass


class MyData(TensorClass):
    image: torch.Tensor


data = MyData(torch.zeros(4, 3), batch_size=[4])
data.add(data, alpha="two")
data.not_an_op()
"""


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    path = tmp_path / "example.py"
    path.write_text(source)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy absent")
def test_mypy_sees_the_generated_ops(tmp_path):
    result = _mypy(tmp_path, MYPY_EXAMPLE)
    # only the example's own lines (not notes mypy may have on the package itself)
    lines = [l for l in result.stdout.splitlines() if "example.py:" in l]
    errors = [l for l in lines if ": error:" in l]
    assert not errors, result.stdout
    assert any('Revealed type is "example.MyData"' in l for l in lines), result.stdout
    result = _mypy(tmp_path, MYPY_ERROR)
    assert 'Argument "alpha" to "add"' in result.stdout, result.stdout
    assert '"MyData" has no attribute "not_an_op"' in result.stdout, result.stdout


@pytest.mark.skipif(not has_op("sum"), reason="reductions are not in the spec yet")
def test_reductions_carry_non_tensor_stacks():
    td = TensorDict(
        x=torch.rand(2, 3),
        s=NonTensorStack.from_list([["a", "b", "c"], ["d", "e", "f"]]),
        t="same",
        batch_size=[2, 3],
    )
    reduced = td.sum(0)
    assert reduced.batch_size == (3,) and reduced["t"] == "same"
    assert "s" in reduced.keys()  # carried (its values no longer fit one per element)
    assert td.reshape(-1)["s"].tolist() == list("abcdef")


@pytest.mark.skipif(not has_op("cat"), reason="stacking ops are not in the spec yet")
def test_cat_of_differing_strings():
    a = TensorDict(x=torch.zeros(2), s="a", batch_size=[2])
    b = TensorDict(x=torch.zeros(1), s="b", batch_size=[1])
    joined = torch.cat([a, b], 0)
    assert joined["s"].tolist() == ["a", "a", "b"]
    assert joined[2]["s"] == "b" and joined[:2]["s"] == "a"
    assert torch.cat([a, a], 0)["s"] == "a"


def test_module_docstring_examples():
    import doctest

    module = sys.modules["tensordict.tensorclass"]
    result = doctest.testmod(module, extraglobs={"torch": torch}, verbose=False)
    assert result.failed == 0 and result.attempted >= 5


@pytest.mark.skipif(not has_op("unbind"), reason="unbind is not in the spec yet")
def test_unbind_and_split_cut_non_tensor_stacks():
    stacked = torch.stack([make(s="u"), make(s="v")], 0)
    assert [part.s for part in stacked.unbind(0)] == ["u", "v"]
    assert stacked.unbind(1)[0].s.tolist() == ["u", "v"]
    assert stacked.split(1, 0)[1].s == "v"
    td = TensorDict(
        x=torch.rand(2, 3),
        s=NonTensorStack.from_list([["a", "b", "c"], ["d", "e", "f"]]),
        batch_size=[2, 3],
    )
    assert td.unbind(1)[2]["s"].tolist() == ["c", "f"]
    assert td.split([1, 2], 1)[1]["s"].tolist() == [["b", "c"], ["e", "f"]]
    assert td.chunk(2, 0)[0]["s"].tolist() == [["a", "b", "c"]]


@pytest.mark.parametrize(
    "op",
    [
        lambda td: td.permute(1, 0),
        lambda td: td.transpose(0, 1),
        lambda td: td.movedim(0, 1),
        lambda td: td.flip(0),
        lambda td: td.flip(1),
        lambda td: td.roll(1, 1),
        lambda td: td.reshape(-1),
        lambda td: td.unsqueeze(1),
    ],
    ids=[
        "permute",
        "transpose",
        "movedim",
        "flip0",
        "flip1",
        "roll",
        "reshape",
        "unsqueeze",
    ],
)
def test_shape_ops_move_non_tensor_stack_values_with_the_tensors(op):
    # each element's string names its position; after any shape op the string must
    # still sit where the tensor element of the same position went
    pos = torch.tensor([[10 * i + j for j in range(3)] for i in range(2)])
    td = TensorDict({"pos": pos}, [2, 3])
    td.set(
        "s", NonTensorStack.from_list([[f"{i}{j}" for j in range(3)] for i in range(2)])
    )
    out = op(td)
    positions = out["pos"].reshape(-1).tolist()
    values = out.get("s").tolist()
    flat = list(_flatten(values))
    assert flat == [f"{p // 10}{p % 10}" for p in positions]


def _flatten(values):
    for value in values:
        if isinstance(value, list):
            yield from _flatten(value)
        else:
            yield value


def test_attribute_properties_forward_to_the_tensordict():
    # the spec-driven walk calls methods; the attributes family's properties are
    # checked here: same value as on the wrapped tensordict
    class Pair(TensorClass):
        x: torch.Tensor
        y: torch.Tensor

    pair = Pair(
        x=torch.zeros(3, requires_grad=True), y=torch.ones(3, 2), batch_size=[3]
    )
    td = pair.to_tensordict()
    for name in ("dtype", "requires_grad", "is_cpu", "is_cuda", "is_meta"):
        assert getattr(pair, name) == getattr(td, name), name
    assert isinstance(pair.data, Pair) and not pair.data.requires_grad
    pair.x.sum().backward()
    assert isinstance(pair.grad, Pair) and pair.grad.x.tolist() == [1.0, 1.0, 1.0]


def test_cat_of_non_tensor_data_checks_the_dim():
    assert torch.cat(
        [NonTensorData("a", batch_size=[2]), NonTensorData("a", batch_size=[3])], 0
    ).batch_size == (5,)
    with pytest.raises(IndexError, match="dim=0"):
        torch.cat([NonTensorData("a"), NonTensorData("a")], 0)


def test_none_removes_a_field_whichever_way_it_is_written():
    class Leaf(TensorClass):
        s: str
        x: torch.Tensor

    class Outer(TensorClass):
        a: Leaf

    for write in (
        lambda o: o.set(("a", "s"), None),
        lambda o: o.a.set("s", None),
        lambda o: setattr(o.a, "s", None),
    ):
        outer = Outer(a=Leaf(s="q", x=torch.zeros(2), batch_size=[2]), batch_size=[2])
        write(outer)
        assert "s" not in outer.a.to_tensordict().keys() and outer.a.s is None
