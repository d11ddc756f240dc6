"""Tensorclass options code written for 0.15.3 relies on (issue 27, group 7):
tensor_only with tensordict fields and mappings, from_dataclass on a type and with class
options, the ``_autocast``/``_nocast``/... class flags, shadowing the constructor's
arguments, and assigning ``device``."""

from __future__ import annotations

import dataclasses
from collections import UserDict
from typing import Any, Optional

import pytest
import torch

from tensordict import TensorClass, TensorDict, from_dataclass, tensorclass


class _Leaf(TensorClass):
    x: torch.Tensor


def test_tensor_only_takes_tensordict_fields_and_mappings():
    @tensorclass(tensor_only=True)
    class Holder:
        data: TensorDict
        leaf: Optional[_Leaf] = None
        count: torch.IntTensor | None = None

    holder = Holder(data=UserDict({"t": torch.ones(()), "n": UserDict({"u": 1.0})}))
    assert isinstance(holder.data, TensorDict) and holder.data["t"] == 1
    assert isinstance(holder.data["n"], TensorDict) and holder.data["n", "u"] == 1
    holder.data = {"t": torch.zeros(())}
    assert isinstance(holder.data, TensorDict) and holder.data["t"] == 0
    locked = TensorDict(t=torch.ones(())).lock_()
    holder.set("data", locked)
    assert holder.data is locked and holder.data.is_locked


def test_tensor_only_refuses_other_annotations():
    with pytest.raises(TypeError, match="tensor_only requires types to be Tensor"):

        class Bad(TensorClass["tensor_only"]):
            a: torch.Tensor
            b: torch.Tensor | str

    with pytest.raises(TypeError, match="tensor_only"):

        @tensorclass(tensor_only=True, nocast=True)
        class Both:
            a: torch.Tensor


def test_a_mapping_in_an_any_field_is_kept():
    class Loose(TensorClass):
        data: Any

    value = UserDict({"meta": "value"})
    assert Loose(data=value).data is value


def test_from_dataclass_type_and_options():
    @dataclasses.dataclass
    class Data:
        a: int
        data: TensorDict

    cls = from_dataclass(Data, autocast=True)
    assert isinstance(cls, type) and cls._autocast and not cls._nocast
    assert from_dataclass(Data, autocast=True) is cls
    assert from_dataclass(Data, nocast=True)._nocast

    @dataclasses.dataclass
    class Tensors:
        data: TensorDict

    only = from_dataclass(
        Tensors(data=UserDict({"t": torch.ones(())})), tensor_only=True
    )
    assert isinstance(only.data, TensorDict) and type(only)._tensor_only


def test_class_flags_are_inherited():
    class Base(TensorClass, autocast=True):
        a: int

    class Sub(Base):
        pass

    assert Base._autocast and Sub._autocast and not Sub._nocast and not Sub._frozen
    assert isinstance(Sub(torch.ones(())).a, int)


def test_shadow_lets_fields_take_the_constructor_names():
    @tensorclass(shadow=True)
    class Shadowing:
        batch_size: Any
        names: Any
        device: Any

    obj = Shadowing(batch_size="b", names="n", device="d")
    assert (obj.batch_size, obj.names, obj.device) == ("b", "n", "d")
    obj.batch_size = "c"
    assert obj.batch_size == "c"
    assert obj._tensordict.batch_size == ()
    with pytest.raises(AttributeError, match="constructor"):

        @tensorclass
        class NoShadow:
            batch_size: Any


def test_assigning_device_raises():
    obj = _Leaf(x=torch.zeros(2), batch_size=[2])
    with pytest.raises(
        RuntimeError, match="device cannot be set using tensorclass.device = device"
    ):
        obj.device = torch.device("cpu")
