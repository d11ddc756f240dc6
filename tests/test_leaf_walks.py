"""The one-walk leaf primitives (docs/architecture.md): ``_map_leaves(fn)`` must give
exactly what ``rebuild([fn(x) for x in leaves])`` gives, and ``_iter_leaves()`` the
leaves of ``_leaves()`` in the same order, on every container a tensordict can hold
(nested tensordicts, lazy stacks, tensorclasses, non-tensor data, subclassed tensors).
Neither keeps anything between calls: a structural change is seen by the next op."""

from __future__ import annotations

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass


@tensorclass
class _Point:
    x: torch.Tensor
    label: str


def _mixed():
    lazy = LazyStackedTensorDict.lazy_stack(
        [TensorDict(c=torch.zeros(3), batch_size=[]), TensorDict(c=torch.ones(3), batch_size=[])],
        0,
    )
    return TensorDict(
        {
            "a": torch.arange(4.0).reshape(2, 2),
            "text": "kept as it is",
            "sub": {"b": torch.ones(2, 5), "deeper": {"d": torch.full((2,), 3.0)}},
            "lazy": lazy,
            "point": _Point(x=torch.ones(2, 2), label="p", batch_size=[2]),
            "param": torch.nn.Parameter(torch.zeros(2, 1)),
        },
        batch_size=[2],
        names=["n"],
    )


def _same(a, b):
    assert type(a) is type(b)
    assert list(a.keys(True)) == list(b.keys(True))
    for key in a.keys(True, True):
        va, vb = a.get(key), b.get(key)
        if isinstance(va, torch.Tensor):
            assert type(va) is type(vb) and torch.equal(va, vb), key
        else:
            assert va == vb, key
    assert a.batch_size == b.batch_size and a.names == b.names and a.device == b.device


def test_map_leaves_is_rebuild_of_the_comprehension():
    td = _mixed()
    leaves, rebuild = td._leaves_and_rebuild()
    expected = rebuild([x.double() * 2 for x in leaves])
    out = td._map_leaves(lambda x: x.double() * 2)
    _same(out, expected)
    assert isinstance(out["lazy"], LazyStackedTensorDict)
    assert isinstance(out["point"], _Point) and out["point"].label == "p"
    assert out["text"] == "kept as it is"
    assert out["sub"] is not td["sub"]  # new containers; the source is untouched
    assert td["a"].dtype is torch.float32


def test_iter_leaves_is_leaves_in_order():
    td = _mixed()
    assert [id(x) for x in td._iter_leaves()] == [id(x) for x in td._leaves()]
    lazy = td["lazy"]
    assert [id(x) for x in lazy._iter_leaves()] == [id(x) for x in lazy._leaves()]


def test_casts_keep_the_lock_and_the_names():
    td = _mixed().lock_()
    out = td.double()
    assert out.is_locked and out.names == ["n"]
    assert out["sub", "deeper", "d"].dtype is torch.float64
    assert out.float(cast_filter=lambda x: x.ndim == 1)["sub", "deeper", "d"].dtype is torch.float32


@pytest.mark.parametrize("op", ["float", "double", "data", "isnan", "abs"])
def test_structural_changes_are_seen_by_the_next_call(op):
    # nothing of the walk is cached: the next call sees keys added, replaced, removed
    td = TensorDict(a=torch.ones(2), sub={"b": torch.ones(2)}, batch_size=[2])
    call = (lambda t: t.data) if op == "data" else (lambda t: getattr(t, op)())
    assert set(call(td).keys(True, True)) == {"a", ("sub", "b")}
    td["sub", "c"] = torch.zeros(2, 3)
    td["a"] = torch.full((2, 4), 2.0)
    del td["sub", "b"]
    out = call(td)
    assert set(out.keys(True, True)) == {"a", ("sub", "c")}
    assert out["a"].shape == (2, 4) and out["sub", "c"].shape == (2, 3)
    td["sub"]["e"] = torch.zeros(2)  # through the nested tensordict itself
    assert ("sub", "e") in call(td).keys(True, True)
    assert td.any() and not td["sub"].all()
    td["sub"] = TensorDict(e=torch.ones(2), batch_size=[2])
    assert td.all()


def test_any_all_stop_at_the_deciding_leaf():
    # a meta tensor cannot give a bool: the walk must not reach it once decided
    decided = TensorDict(a=torch.ones(1), b=torch.zeros(1, device="meta"), batch_size=[1])
    assert decided.any() is True
    decided["a"] = torch.zeros(1)
    assert decided.all() is False
    with pytest.raises(Exception):
        decided.any()  # undecided at "a": "b" is asked


@pytest.mark.parametrize("values,any_,all_", [
    ([], False, True),
    ([0.0, 0.0], False, False),
    ([0.0, 2.0], True, False),
    ([1.0, 2.0], True, True),
])
def test_any_all_over_nested_and_lazy_leaves(values, any_, all_):
    td = TensorDict({}, batch_size=[])
    for i, v in enumerate(values):  # the last one inside a lazy stack
        if i == len(values) - 1:
            td["lazy"] = LazyStackedTensorDict.lazy_stack(
                [TensorDict(v=torch.tensor([v]), batch_size=[]), TensorDict(v=torch.tensor([v, v]), batch_size=[])], 0
            )
        else:
            td["n", str(i)] = torch.tensor(v)
    assert td.any() is any_
    assert td.all() is all_


@pytest.mark.parametrize("value", [
    0.0, 1.0, -0.0, float("nan"), float("inf"), 0, 3, False, True, 0j, 1j, 1 + 0j,
])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_any_all_of_one_element_leaves_agree_with_torch(value, shape):
    # one-element leaves are read with bool(): the answer must be torch's any()/all()
    leaf = torch.tensor(value).reshape(shape)
    td = TensorDict(x=leaf, big=torch.ones(3, dtype=torch.bool), batch_size=[])
    assert td.all() is bool(leaf.all())
    td["big"] = torch.zeros(3, dtype=torch.bool)
    assert td.any() is bool(leaf.any())
    sparse = TensorDict(x=leaf.reshape(1).to_sparse(), batch_size=[])
    assert sparse.any() is bool(leaf.any()) and sparse.all() is bool(leaf.all())
