"""Issue 14's table, row by row: behaviours of 0.15.3 that existing code relies on.

Each test is named after its row; the rows not here are listed in
docs/compatibility.md with what they still need.
"""

from __future__ import annotations

import pytest
import torch

from tensordict import (
    LazyStackedTensorDict,
    MetaData,
    NonTensorData,
    TensorClass,
    TensorDict,
)
from tensordict._td import _SubTensorDict


class Obs(TensorClass):
    a: torch.Tensor
    nested: TensorDict = None


def make(kind: str):
    """A container with ``a`` (shape [3, 2]) and ``("nested", "b")`` (shape [3])."""
    nested = TensorDict(b=torch.zeros(3), batch_size=[3])
    if kind == "dense":
        return TensorDict(a=torch.zeros(3, 2), nested=nested, batch_size=[3])
    if kind == "lazy":
        members = [
            TensorDict(
                a=torch.zeros(2), nested=TensorDict(b=torch.zeros(())), batch_size=[]
            )
            for _ in range(3)
        ]
        return LazyStackedTensorDict(*members, stack_dim=0)
    if kind == "tensorclass":
        return Obs(a=torch.zeros(3, 2), nested=nested, batch_size=[3])
    raise ValueError(kind)


KINDS = ["dense", "lazy", "tensorclass"]


# ------------------------------------------------------------------------ row 1
def test_row1_generic_aliases_of_non_tensor_classes():
    meta = MetaData[str]("meta", batch_size=[2])
    assert type(meta) is MetaData and meta.data == "meta"
    assert meta.batch_size == (2,)
    assert NonTensorData[int](3, batch_size=[2]).data == 3


# ------------------------------------------------------------------------ row 3
@pytest.mark.parametrize("kind", KINDS)
class TestRow3SubTensorDict:
    def test_reads_are_the_entries_at_idx(self, kind):
        td = make(kind)
        td["a"] = torch.arange(6.0).reshape(3, 2)
        sub = td._get_sub_tensordict(1)
        assert isinstance(sub, _SubTensorDict)
        assert sub.batch_size == torch.Size([])
        assert (sub["a"] == torch.tensor([2.0, 3.0])).all()

    def test_set_and_set_write_into_the_parent(self, kind):
        td = make(kind)
        sub = td._get_sub_tensordict(1)
        sub.set("a", torch.ones(2))
        assert (td["a"][1] == 1).all() and (td["a"][0] == 0).all()
        sub.set_("a", torch.full((2,), 2.0))
        assert (td["a"][1] == 2).all()
        sub["nested", "b"] = torch.tensor(5.0)
        assert td["nested", "b"].tolist() == [0.0, 5.0, 0.0]

    def test_new_keys_and_update_write_into_the_parent(self, kind):
        td = make(kind)
        sub = td._get_sub_tensordict(slice(0, 2))
        sub.set("new", torch.ones(2, 4))
        assert td["new"].shape == (3, 4)
        assert td["new"][:2].eq(1).all() and td["new"][2].eq(0).all()
        sub.update({"a": torch.full((2, 2), 7.0), "x": {"y": torch.ones(2)}})
        assert td["a"][:2].eq(7).all() and td["a"][2].eq(0).all()
        assert td["x", "y"].tolist() == [1.0, 1.0, 0.0]

    def test_advanced_index(self, kind):
        td = make(kind)
        sub = td._get_sub_tensordict(torch.tensor([0, 2]))
        sub.set_("a", torch.full((2, 2), -1.0))
        assert td["a"][:, 0].tolist() == [-1.0, 0.0, -1.0]

    def test_bad_writes_raise_naming_the_key(self, kind):
        td = make(kind)
        sub = td._get_sub_tensordict(0)
        with pytest.raises(RuntimeError, match="'a'"):
            sub.set("a", torch.ones(3, 3))
        td.lock_()
        with pytest.raises(RuntimeError, match="locked"):
            td._get_sub_tensordict(0).set("brand_new", torch.ones(()))


# ----------------------------------------------------------------------- row 9
@pytest.mark.parametrize("kind", KINDS)
def test_row9_get_missing_returns_none(kind):
    td = make(kind)
    assert td.get("missing") is None
    assert td.get(("nested", "missing")) is None
    with pytest.raises(KeyError, match="missing"):
        td["missing"]


# ----------------------------------------------------------------------- row 14
@pytest.mark.parametrize("kind", ["dense", "lazy"])
def test_row14_key_through_a_leaf_is_key_and_value_error(kind):
    td = make(kind)
    for call in (lambda: td.get(("a", "b")), lambda: td.set(("a", "b"), 1)):
        with pytest.raises(KeyError, match="'a'"):
            call()
        with pytest.raises(ValueError, match="'a'"):
            call()


def test_row14_invalid_key_is_key_and_type_error():
    td = make("dense")
    with pytest.raises(KeyError, match="1"):
        td.set(1, torch.zeros(3))
    with pytest.raises(TypeError, match="1"):
        td.set(1, torch.zeros(3))


def test_row14_bad_in_place_write_is_runtime_and_value_error():
    td = make("dense")
    with pytest.raises(ValueError, match="'a'"):
        td.set_("a", torch.zeros(3, 5))
    with pytest.raises(RuntimeError, match="'a'"):
        td.set_("a", torch.zeros(3, 5))


@pytest.mark.parametrize("kind", ["dense", "tensorclass"])
def test_row14_flatten_keys_collision_raises(kind):
    td = make(kind)
    td["nested.b"] = torch.ones(3)
    with pytest.raises(KeyError, match="nested.b"):
        td.flatten_keys()


def test_row14_unflatten_keys_collision_raises():
    td = TensorDict({"a.b": torch.zeros(1), "a": torch.ones(1)})
    with pytest.raises(KeyError, match="'a'"):
        td.unflatten_keys()


# ----------------------------------------------------------------------- row 15
def test_row15_backward_with_a_tensor_gradient_says_what_it_needs():
    x = torch.ones(2, requires_grad=True)
    td = TensorDict(a=x * 2)
    with pytest.raises(TypeError, match="gradient must be a tensordict"):
        td.backward(gradient=torch.ones(2))
    td.backward(gradient=TensorDict(a=torch.ones(2)))
    assert x.grad.tolist() == [2.0, 2.0]
