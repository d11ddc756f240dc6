"""Tensorclass options as 0.15.3 has them: autocast through annotations written as
text, autocast to arrays and under ``Any``, fields set through a class's own
``__setattr__`` at construction, ``from_dict`` with fields left out, and the option
flags on ``TensorClass`` itself."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pytest
import torch

from tensordict import TensorClass, TensorDict, tensorclass


@tensorclass(autocast=True)
class _Node:
    x: torch.Tensor
    td: TensorDict
    child: _Node
    later: _Later


@tensorclass(autocast=True)
class _Optional:
    x: torch.Tensor
    child: Optional[_Node] = None
    either: _Node | None = None


@tensorclass
class _Later:
    y: torch.Tensor


def test_autocast_resolves_annotations_written_as_text():
    node = _Node(
        x=torch.zeros(()),
        td={"a": 0.0},
        child={"x": torch.ones(()), "td": {"b": 1.0}, "child": None, "later": None},
        later={"y": torch.ones(())},
    )
    assert isinstance(node.td, TensorDict)
    assert isinstance(node.child, _Node)
    assert node.child.child is None
    assert isinstance(node.child.td, TensorDict)
    assert isinstance(node.later, _Later)


def test_autocast_leaves_optional_tensorclass_fields_as_given():
    value = {"x": torch.zeros(()), "td": None, "child": None, "later": None}
    obj = _Optional(x=torch.zeros(()), child=dict(value), either=dict(value))
    assert isinstance(obj.child, dict) and isinstance(obj.either, dict)


def test_autocast_in_a_function_names_its_own_class():
    @tensorclass(autocast=True)
    class Local:
        x: torch.Tensor
        child: Local

    obj = Local(x=torch.zeros(()), child={"x": torch.ones(()), "child": None})
    assert isinstance(obj.child, Local)


def test_autocast_to_arrays_and_under_any():
    @tensorclass(autocast=True)
    class Casts:
        tensor: torch.Tensor
        array: np.ndarray
        anything: Any

    obj = Casts(tensor=1, array=1, anything=1)
    assert isinstance(obj.tensor, torch.Tensor)
    assert isinstance(obj.array, np.ndarray)
    assert isinstance(obj.anything, torch.Tensor)
    obj.anything = "a string"  # what makes no tensor stays as given
    assert obj.anything == "a string"
    with pytest.raises(TypeError, match="torch.Tensor"):
        obj.tensor = "a string"


def test_from_dict_sets_fields_left_out_to_none():
    @tensorclass
    class Pair:
        x: torch.Tensor
        y: torch.Tensor
        z: int = 3

    pair = Pair.from_dict({"x": torch.zeros(())})
    assert pair.y is None and pair.z == 3


def test_construction_goes_through_the_class_setattr():
    seen = []

    class Shifted(TensorClass, nocast=True):
        a: int
        b: int

        def __setattr__(self, key, value):
            seen.append(key)
            super().__setattr__(key, value + 1 if key == "b" else value)

    obj = Shifted(a=1, b=1)
    assert seen == ["a", "b"]
    assert obj.a == 1 and obj.b == 2


def test_option_flags_on_the_base_class():
    for flag in ("_autocast", "_nocast", "_frozen", "_tensor_only", "_shadow"):
        assert getattr(TensorClass, flag) is False

    class Frozen(TensorClass["nocast", "frozen"]):
        a: int

    assert Frozen._nocast and Frozen._frozen
    assert not TensorClass._nocast and not TensorClass._frozen


@tensorclass
class _Data:
    x: torch.Tensor
    s: str = "a"


@tensorclass
class _Other:
    y: torch.Tensor
    s: str = "a"


def test_setting_an_unknown_attribute_names_it_in_0153_words():
    data = _Data(x=torch.zeros(3), batch_size=[3])
    with pytest.raises(AttributeError, match="Cannot set the attribute"):
        data.unknown = 1


def test_non_tensordict_is_empty_everything_lives_in_the_tensordict():
    data = _Data(x=torch.zeros(3), s="b", batch_size=[3])
    assert not data._non_tensordict
    data.s = "c"
    assert "s" not in data._non_tensordict.keys()
    assert "s" in data._tensordict.keys()
    with pytest.raises(TypeError):
        data._non_tensordict["s"] = "d"


def test_setitem_refuses_a_tensorclass_with_other_fields():
    data = _Data(x=torch.zeros(3), batch_size=[3])
    with pytest.raises(ValueError, match="same-class or compatible class"):
        data[0] = _Other(y=torch.ones(3), batch_size=[3])[0]
    data[1] = _Data(x=torch.ones(3), batch_size=[3])[1]
    assert data.x[1] == 1
