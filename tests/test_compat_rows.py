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
    NonTensorStack,
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
    assert isinstance(meta, MetaData) and meta.data == "meta"  # (a MetaData[str])
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


def test_row14_unknown_tensorclass_keyword_is_type_and_attribute_error():
    from tensordict import tensorclass

    @tensorclass
    class Point:
        x: torch.Tensor

    for error in (TypeError, AttributeError):  # Python's type, and 0.15.3's
        with pytest.raises(error, match="'y'.*fields are \\['x'\\]"):
            Point(x=torch.zeros(2), y=torch.zeros(2), batch_size=[2])


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


# ------------------------------------------------------------------------ row 5
@pytest.mark.parametrize("kind", KINDS)
def test_row5_apply_writes_into_out(kind):
    td = make(kind)
    out = td.empty()
    result = td.apply(lambda x: x + 1, out=out)
    assert result is out
    assert out["a"].eq(1).all() and out["nested", "b"].eq(1).all()
    target = td.clone()
    assert td.apply(lambda x: x + 2, out=target) is target
    assert target["a"].eq(2).all()


# ------------------------------------------------------------------------ row 7
def test_row7_a_non_tensor_leaf_is_not_empty():
    assert not TensorDict(n="text").is_empty()
    assert TensorDict(s={}).is_empty()
    assert not TensorDict(s={"n": "text"}).is_empty()


# ----------------------------------------------------------------------- row 10
def test_row10_update_with_keywords_and_set_at_with_numpy():
    import numpy as np

    td = make("dense")
    td.update(c=torch.zeros(3))
    assert td["c"].shape == (3,)
    td.set_at_("a", np.ones(2), 0)
    assert td["a"][0].tolist() == [1.0, 1.0] and td["a"][1].tolist() == [0.0, 0.0]
    assert TensorDict.from_dict({"x": torch.zeros(3, 4)}, batch_dims=1).batch_size == (
        3,
    )


# ----------------------------------------------------------------------- row 11
@pytest.mark.parametrize("kind", KINDS)
def test_row11_apply_dropping_everything_returns_none(kind):
    td = make(kind)
    assert td.apply(lambda x: None, filter_empty=True) is None
    assert td.apply(lambda x: None) is None
    kept = td.apply(lambda x: None, filter_empty=False)
    assert kept is not None and "nested" in kept.keys()


# ----------------------------------------------------------------------- row 13
def test_row13_missing_public_helpers():
    import collections

    import numpy as np

    from tensordict.utils import assert_allclose_td, convert_ellipsis_to_idx

    full = slice(None)
    assert convert_ellipsis_to_idx((Ellipsis, 0), [3, 4, 5]) == (full, full, 0)
    assert convert_ellipsis_to_idx(Ellipsis, [3, 4]) == (full, full)
    assert convert_ellipsis_to_idx((0, Ellipsis), [3, 4, 5]) == (0, full, full)
    td = make("dense")
    named = td.to_namedtuple()
    assert named._fields == ("a", "nested") and named.nested.b.shape == (3,)
    Point = collections.namedtuple("Point", ["x", "y"])
    from_nt = TensorDict.from_any(Point(torch.zeros(2), torch.ones(2)))
    assert set(from_nt.keys()) == {"x", "y"}
    assert TensorDict.from_any(td) is td
    arr = np.zeros(3, dtype=[("x", "f4"), ("y", "i8", (2,))])
    structured = TensorDict.from_struct_array(arr)
    assert structured.batch_size == (3,) and structured["y"].shape == (3, 2)
    padded = td.pad([0, 2], value=1.0)
    assert padded.batch_size == (5,) and padded["a"][3:].eq(1).all()
    stack = td.to_lazystack(0)
    assert isinstance(stack, LazyStackedTensorDict) and stack.batch_size == (3,)
    assert_allclose_td(stack.to_tensordict(), td)


@pytest.mark.parametrize("storage", [None, "memmap", "shared", "h5"])
def test_row13_from_schema_allocates_zeros(storage, tmp_path):
    if storage == "h5":
        pytest.importorskip("h5py")
    schema = {"a": ([3], torch.float32), ("n", "b"): (torch.Size([]), torch.int64)}
    where = {"memmap": {"prefix": tmp_path}, "h5": {"filename": tmp_path / "x.h5"}}
    td = TensorDict.from_schema(
        schema, batch_size=[2], storage=storage, **where.get(storage, {})
    )
    assert td.batch_size == (2,)
    assert (
        td["a"].shape == (2, 3) and td["a"].dtype == torch.float32 and not td["a"].any()
    )
    assert td["n", "b"].shape == (2,) and td["n", "b"].dtype == torch.int64
    if storage == "memmap":
        assert td.is_memmap() and td.is_locked
    if storage == "shared":
        assert td.is_shared()
    with pytest.raises(ValueError, match="bogus"):
        TensorDict.from_schema(schema, storage="bogus")
    with pytest.raises(TypeError, match="'a'"):
        TensorDict.from_schema({"a": ([3], "float32")})


def test_row7_unsqueeze_of_a_non_tensor_value_then_writes_stay_per_element():
    # unsqueeze/expand give the value a batch (a NonTensorStack of one value, not
    # copied per element); a write afterwards changes that element only, and the
    # source keeps its value
    td = TensorDict(a=torch.zeros(300, 400), s="x", batch_size=[300, 400])
    wide = td.unsqueeze(0)
    stack = wide.get("s")
    assert isinstance(stack, NonTensorStack) and stack.batch_size == (1, 300, 400)
    assert stack.data == "x" and wide[0, 7, 9]["s"] == "x"
    wide[0, 1, 2] = TensorDict(a=torch.ones(()), s="y", batch_size=[])
    assert wide[0, 1, 2]["s"] == "y" and wide[0, 1, 3]["s"] == "x"
    assert td["s"] == "x" and td.expand(2, 300, 400).get("s").data == "x"
    with pytest.raises(AttributeError, match="tolist"):
        wide.get("s").data
