"""Tensorclass behaviours code written for 0.15.3 relies on: building from a
tensordict, reading entries with ``get``, ``select(as_tensordict=True)``, the class's
field set, and comparisons that include non-tensor fields."""

import re
from typing import ClassVar

import pytest
import torch

from tensordict import NonTensorData, TensorClass, TensorDict, tensorclass


class Pair(TensorClass):
    x: torch.Tensor
    label: str


class Checked(TensorClass):
    x: torch.Tensor

    def __post_init__(self):
        if (self.x < 0).any():
            raise ValueError("negative")


def test_from_tensordict_runs_post_init_and_private_name_exists():
    td = TensorDict(x=torch.ones(2), batch_size=[2])
    assert Checked._from_tensordict(td)._tensordict is td
    bad = TensorDict(x=-torch.ones(2), batch_size=[2])
    with pytest.raises(ValueError, match="negative"):
        Checked.from_tensordict(bad)
    with pytest.raises(ValueError, match="negative"):
        Checked._from_tensordict(bad)
    # ops that rebuild an instance do not run it again
    ok = Checked(x=torch.ones(2), batch_size=[2])
    assert type(ok * -1) is Checked


def test_from_tensordict_none_in_non_tensordict_keeps_the_entry():
    td = TensorDict(x=torch.ones(2), batch_size=[2])
    p = Pair._from_tensordict(td, {"x": None, "label": "a"})
    assert p.x.shape == (2,) and p.label == "a"


def test_expected_keys_are_the_fields_without_classvars():
    @tensorclass
    class WithConstant:
        a: torch.Tensor
        k: ClassVar[int] = 3
        b: torch.Tensor

    obj = WithConstant(torch.zeros(2), torch.ones(2), batch_size=[2])
    assert obj.__expected_keys__ == {"a", "b"}
    assert obj.k == 3


def test_too_many_positional_arguments_message():
    @tensorclass
    class Two:
        a: torch.Tensor
        b: torch.Tensor

    with pytest.raises(
        TypeError, match="takes 3 positional arguments but 4 were given"
    ):
        Two(torch.zeros(()), torch.zeros(()), torch.zeros(()), batch_size=[])


def test_get_reads_fields_as_attributes():
    nested = Pair(x=torch.zeros(2), label="inner", batch_size=[2])

    class Outer(TensorClass):
        x: torch.Tensor
        label: str
        inner: Pair
        opt: torch.Tensor = None

    o = Outer(x=torch.zeros(2, 3), label="outer", inner=nested, batch_size=[2])
    assert o.get("label") == "outer"
    assert not isinstance(o.get("label"), NonTensorData)
    assert o.get(("inner", "label")) == "inner"
    assert o.get("batch_size") == torch.Size([2])
    assert o.get("device") is None
    assert o.get("opt") is None and o.get("opt", 1) == 1
    assert o.get("missing", "default") == "default"
    assert o.is_non_tensor("label") and not o.is_non_tensor("x")


def test_get_through_a_leaf_with_a_default_gives_the_default():
    td = TensorDict(x=torch.zeros(2), s="text", batch_size=[2])
    assert td.get(("x", "y"), "d") == "d"
    assert td.get(("s", "y"), "d") == "d"
    assert td.get(("s", "y")) is None  # non-tensor data on the way: get's None
    with pytest.raises(KeyError):
        td.get(("x", "y"))  # a tensor on the way, no default: still an error
    stack = TensorDict.lazy_stack([td[0], td[1]])
    assert stack.get(("x", "y"), "d") == "d"
    with pytest.raises(KeyError):
        stack.get(("x", "y"))


def test_invalid_key_error_leads_with_the_known_phrase():
    from tensordict.base import _GENERIC_NESTED_ERR

    td = TensorDict(sub=TensorDict())
    for key in [("sub", str), 1]:
        with pytest.raises(KeyError, match=re.escape(_GENERIC_NESTED_ERR.format(key))):
            td.get(key)


def test_select_as_tensordict_gives_a_plain_tensordict():
    p = Pair(x=torch.zeros(2), label="a", batch_size=[2])
    selected = p.select("x", as_tensordict=True)
    assert type(selected) is TensorDict
    assert set(selected.keys()) == {"x"}
    assert type(p.select("x")) is Pair and p.select("x").label is None


def test_consolidated_instance_has_the_storage():
    p = Pair(x=torch.zeros(2), label="a", batch_size=[2])
    assert not hasattr(p, "_consolidated")
    c = p.consolidate()
    assert hasattr(c, "_consolidated")
    assert c._consolidated["storage"].dtype == torch.uint8


def test_comparisons_compare_non_tensor_entries():
    td = TensorDict(
        {"n": 1, "sub": {"flag": NonTensorData(True), "s": "x"}}, batch_size=[]
    )
    other = td.clone()
    eq = td == other
    assert eq["sub", "flag"].dtype == torch.bool and eq["sub", "flag"]
    assert eq["sub", "s"]
    assert not (td != other)["sub", "s"]
    plain = td.exclude(("sub", "s"))
    assert not (plain ^ plain)["sub", "flag"]
    assert (plain | plain)["sub", "flag"]
    other["sub", "s"] = "y"
    assert not (td == other)["sub", "s"]


def test_nested_tensorclass_comparisons_give_booleans_for_text():
    a = Pair(x=torch.zeros(3), label="a", batch_size=[3])
    outer_a = TensorDict(p=a, batch_size=[3])
    outer_b = TensorDict(p=a.clone(), batch_size=[3])
    result = outer_a == outer_b
    assert result["p"].label.shape == (3,) and result["p"].label.all()
    assert not (a != a.clone()).label.any()


def test_non_tensor_data_xor_or():
    assert not (NonTensorData(3) ^ NonTensorData(3))
    assert NonTensorData(3) | NonTensorData(0)
    with pytest.raises(TypeError):
        NonTensorData("a") ^ NonTensorData("b")


def test_from_dict_of_to_dict_compares_equal():
    td = TensorDict(
        {"1": 1, "sub": {"i": NonTensorData(3), "s": NonTensorData("text")}},
        batch_size=[],
    )
    back = TensorDict.from_dict(td.to_dict(), auto_batch_size=True)
    assert (back == td).all()


class Labelled(TensorClass):
    x: torch.Tensor
    labels: list


def test_list_field_holds_one_value_per_batch_element():
    obj = Labelled(x=torch.zeros(2, 3), labels=["a", "b"], batch_size=[2])
    assert obj[0].labels == "a" and obj[1].labels == "b"
    assert obj.labels == ["a", "b"]  # read as a list, as td[key] reads a stack
    with pytest.raises(RuntimeError, match="batch dimension mismatch"):
        Labelled(x=torch.zeros(3, 4), labels=["a", "b", "c"], batch_size=[3, 4])
    numbers = Labelled(x=torch.zeros(3), labels=[1, 2, 3], batch_size=[3])
    assert isinstance(numbers.labels, torch.Tensor)


def test_list_of_tensors_is_stacked():
    td = TensorDict(batch_size=[2])
    td["x"] = [torch.ones(3), torch.zeros(3)]
    assert isinstance(td.get("x"), torch.Tensor) and td["x"].shape == (2, 3)
    obj = Labelled(x=[torch.ones(3), torch.zeros(3)], labels=None, batch_size=[2])
    assert obj.x.shape == (2, 3)


def test_in_place_write_of_another_type_raises():
    td = TensorDict(v=torch.zeros(3), s="text", batch_size=[3])
    with pytest.raises(RuntimeError, match="Cannot update an existing"):
        td.set("v", "text", inplace=True)
    with pytest.raises(ValueError, match="Failed to update 's'"):
        td.set("s", torch.ones(3), inplace=True)
    td.set("s", "other", inplace=True)
    assert td["s"] == "other" and (td["v"] == 0).all()


def test_lazy_stacks_of_a_tensorclass_keep_the_class():
    a = Pair(x=torch.zeros(2, 3), label="a", batch_size=[2])
    b = Pair(x=torch.ones(2, 4), label="a", batch_size=[2])
    from tensordict import LazyStackedTensorDict

    stacked = LazyStackedTensorDict.lazy_stack([a, b], 0)
    assert type(stacked) is Pair
    assert isinstance(stacked._tensordict, LazyStackedTensorDict)
    assert stacked[1].x.shape == (2, 4)
    assert type(LazyStackedTensorDict.maybe_dense_stack([a, a], 0)) is Pair
    lazy = a.to_lazystack(0)
    assert type(lazy) is Pair and isinstance(lazy._tensordict, LazyStackedTensorDict)
    outer = LazyStackedTensorDict.lazy_stack(
        [TensorDict(p=a, batch_size=[2]), TensorDict(p=b, batch_size=[2])], 0
    )
    assert type(outer.get("p")) is Pair


def test_forwarded_method_lists():
    import importlib

    module = importlib.import_module("tensordict.tensorclass")
    lists = [
        module._FALLBACK_METHOD_FROM_TD,
        module._FALLBACK_METHOD_FROM_TD_NOWRAP,
        module._FALLBACK_METHOD_FROM_TD_FORCE,
        module._METHOD_FROM_TD,
    ]
    for names in lists:
        assert names == sorted(set(names))
    assert sum(len(n) for n in lists) == len(set().union(*map(set, lists)))
    assert "keys" in module._FALLBACK_METHOD_FROM_TD_NOWRAP
    assert "lazy_stack" in module._FALLBACK_METHOD_FROM_TD_FORCE


def test_numpy_array_field_becomes_a_tensor_unless_nocast():
    @tensorclass
    class Any1:
        a: int

    @tensorclass(nocast=True)
    class Kept:
        a: int

    import numpy as np

    assert isinstance(Any1(np.array([1])).a, torch.Tensor)
    assert isinstance(Kept(np.array([1])).a, np.ndarray)


def test_print_directory_tree(tmp_path):
    from tensordict.utils import print_directory_tree

    p = Pair(x=torch.zeros(2), label="a", batch_size=[2])
    p.memmap(tmp_path)
    tree = print_directory_tree(tmp_path)
    assert tree.startswith("Directory size:")
    assert "x.memmap" in tree


def test_parameterized_tensordict_annotation_converts_mappings():
    from collections import UserDict

    @tensorclass(tensor_only=True)
    class Holder:
        a: torch.Tensor
        b: TensorDict[str, torch.Tensor]
        c: "TensorDict[str, torch.Tensor] | None" = None

    h = Holder(
        a=torch.zeros(()), b=UserDict({"t": torch.ones(())}), c={"t": torch.ones(())}
    )
    assert isinstance(h.b, TensorDict) and isinstance(h.c, TensorDict)


def test_tensordict_classes_take_type_parameters():
    from tensordict import LazyStackedTensorDict

    alias = TensorDict[str, torch.Tensor]
    assert alias.__origin__ is TensorDict
    assert LazyStackedTensorDict[str, torch.Tensor].__origin__ is LazyStackedTensorDict


class Nest(TensorClass):
    x: torch.Tensor
    z: str
    y: "Nest" = None


def _nest():
    inner = Nest(x=torch.randn(3), z="inner", batch_size=[])
    return Nest(x=torch.randn(3), z="outer", y=inner, batch_size=[])


def test_state_dict_records_the_class_and_non_tensor_fields():
    tc = _nest()
    sd = tc.state_dict()
    assert set(sd.keys()) == {"x", "y.x"}
    assert sd._metadata[""]["_type"] == "Nest"
    assert sd._metadata[""]["_non_tensor"]["z"] == "outer"
    assert sd._metadata["y"]["_non_tensor"]["z"] == "inner"
    other = _nest()
    other.z, other.y.z = "changed", "changed"
    other.load_state_dict(sd)
    assert torch.equal(other.x, tc.x) and torch.equal(other.y.x, tc.y.x)
    assert other.z == "outer" and other.y.z == "inner"


def test_state_dict_unexpected_keys_raise_key_errors():
    tc = _nest()
    sd = tc.state_dict()
    sd["a"] = torch.zeros(())
    with pytest.raises(KeyError, match="Key 'a' wasn't expected in the state-dict"):
        tc.load_state_dict(sd)
    del sd["a"]
    sd._metadata[""]["_non_tensor"]["b"] = None
    with pytest.raises(KeyError, match="Key 'b' wasn't expected in the state-dict"):
        tc.load_state_dict(sd)
    with pytest.raises(RuntimeError):  # (it is a RuntimeError too, as nn.Module's)
        TensorDict(x=torch.zeros(3)).load_state_dict({"x": torch.ones(3), "q": 1})


def test_legacy_tensorclass_state_dict_loads():
    import collections

    tc = Pair(x=torch.zeros(3), label="a", batch_size=[])
    legacy = collections.OrderedDict(
        _tensordict=collections.OrderedDict(
            x=torch.ones(3), __batch_size=torch.Size([]), __device=None
        ),
        _non_tensordict={"label": "b"},
    )
    tc.load_state_dict(legacy)
    assert (tc.x == 1).all() and tc.label == "b"


class Outer:
    @tensorclass
    class Inner:
        a: str
        b: torch.Tensor


def test_a_tensorclass_defined_in_a_class_pickles():
    import pickle

    assert Outer.Inner.__qualname__ == "Outer.Inner"
    obj = Outer.Inner(a="text", b=torch.zeros(2), batch_size=[2])
    back = pickle.loads(pickle.dumps(obj))
    assert type(back) is Outer.Inner and back.a == "text"
    td = TensorDict.lazy_stack([TensorDict(x=obj[0]), TensorDict(x=obj[1])])
    back = pickle.loads(pickle.dumps(td.consolidate()))
    assert (back == td).all()


def test_comparisons_of_views_and_typed_stacks():
    from tensordict import LazyStackedTensorDict, TypedTensorDict

    td = TensorDict(a=torch.zeros(3, 2), s="x", batch_size=[3, 2])
    view = td._get_sub_tensordict((slice(None), 0))
    assert (view == view.clone()).all()

    class State(TypedTensorDict):
        a: torch.Tensor

    stack = LazyStackedTensorDict.lazy_stack(
        [
            State(a=torch.zeros(2, 1), batch_size=[2]),
            State(a=torch.ones(2, 3), batch_size=[2]),
        ]
    )
    assert type(stack) is LazyStackedTensorDict  # (a TypedTensorDict stacks as 0.15.3)
