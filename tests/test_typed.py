"""Issue 14, row 2: ``TypedTensorDict`` (a class-annotated tensordict schema) as code
written for 0.15.3 uses it (tensordict/typedtensordict.py)."""

from __future__ import annotations

import pickle

import pytest
import torch
from torch import Tensor

import tensordict
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase, TypedTensorDict


class State(TypedTensorDict):
    eta: Tensor
    X: Tensor


class Extended(State):
    extra: Tensor
    optional: Tensor = None


class Holder(TypedTensorDict):
    inner: State
    y: Tensor


def state(n: int = 5) -> State:
    return State(eta=torch.arange(n * 3.0).view(n, 3), X=torch.zeros(n, 4), batch_size=[n])


def test_row2_typed_is_exported_where_0_15_3_has_it():
    assert tensordict.TypedTensorDict is TypedTensorDict
    assert tensordict.typedtensordict.TypedTensorDict is TypedTensorDict


def test_row2_construction_and_access():
    s = state()
    assert isinstance(s, State) and isinstance(s, TensorDictBase)
    assert not isinstance(s, TensorDict)
    assert s.batch_size == (5,)
    assert s.eta.shape == (5, 3) and s["X"].shape == (5, 4)
    assert s.eta is s["eta"]
    assert sorted(dict(**s)) == ["X", "eta"]
    from_mapping = State({"eta": torch.zeros(2, 3), "X": torch.zeros(2)}, batch_size=[2])
    assert from_mapping.X.shape == (2,)
    assert State(eta=torch.zeros(5), X=torch.zeros(5), batch_size=[5], names=["n"]).names == ["n"]
    assert State(eta=torch.zeros(5), X=torch.zeros(5), batch_size=[5], lock=True).is_locked


def test_row2_construction_checks_the_fields():
    with pytest.raises(TypeError, match="missing required field.*X"):
        State(eta=torch.zeros(5, 3), batch_size=[5])
    with pytest.raises(TypeError, match="unexpected field.*Z"):
        State(eta=torch.zeros(5), X=torch.zeros(5), Z=torch.zeros(5), batch_size=[5])
    with pytest.raises(RuntimeError, match="eta"):
        State(eta=torch.zeros(4, 3), X=torch.zeros(5), batch_size=[5])


def test_row2_inheritance_and_defaults():
    e = Extended(eta=torch.zeros(2), X=torch.zeros(2), extra=torch.ones(2), batch_size=[2])
    assert list(e.keys()) == ["eta", "X", "extra"]
    assert e.optional is None
    assert isinstance(e, State)
    with pytest.raises(TypeError, match="extra"):
        Extended(eta=torch.zeros(2), X=torch.zeros(2), batch_size=[2])


def test_row2_nested_typed_fields():
    h = Holder(inner=state(2), y=torch.zeros(2), batch_size=[2])
    assert type(h.inner) is State
    assert type(h[0].inner) is State


@pytest.mark.parametrize(
    "op",
    [
        lambda s: s[0],
        lambda s: s[:2],
        lambda s: s + 1,
        lambda s: s.clone(),
        lambda s: s.reshape(5, 1),
        lambda s: s.unsqueeze(0),
        lambda s: s.to("cpu"),
        lambda s: s.float(),
        lambda s: torch.stack([s, s]),
        lambda s: torch.cat([s, s]),
        lambda s: s.unbind(0)[0],
        lambda s: s.split(2)[0],
        lambda s: s.select("eta"),
        lambda s: s.exclude("eta"),
        lambda s: s.apply(lambda x: x + 1),
        lambda s: s.empty(),
    ],
)
def test_row2_ops_return_the_typed_class(op):
    assert type(op(state())) is State


def test_row2_ops_leaving_the_schema():
    s = state()
    assert type(s.to_tensordict()) is TensorDict
    assert type(LazyStackedTensorDict.lazy_stack([s, s])) is LazyStackedTensorDict


def test_row2_writes():
    s = state()
    s.eta = torch.ones(5, 3)
    assert s["eta"].sum() == 15
    s.set("new", torch.ones(5))  # keys beyond the fields are allowed
    assert "new" in s.keys()
    with pytest.raises(RuntimeError, match="batch"):
        s.X = torch.zeros(4)


def test_row2_from_tensordict_wraps_without_copying():
    td = TensorDict(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), batch_size=[5])
    s = State.from_tensordict(td)
    assert type(s) is State and s.eta is td["eta"]
    s.set("eta", torch.ones(5, 3))
    assert td["eta"].sum() == 15  # writes go through
    with pytest.raises(TypeError, match="missing required field.*X"):
        State.from_tensordict(TensorDict(eta=torch.zeros(5, 3), batch_size=[5]))
    lazy = LazyStackedTensorDict(*td.unbind(0))
    assert State.from_tensordict(lazy).eta.shape == (5, 3)


def test_row2_class_options():
    class Frozen(TypedTensorDict, frozen=True):
        a: Tensor

    assert Frozen(a=torch.zeros(2), batch_size=[2]).is_locked

    class FrozenToo(TypedTensorDict["frozen"]):
        a: Tensor

    assert FrozenToo(a=torch.zeros(2), batch_size=[2]).is_locked
    with pytest.raises(AttributeError, match="batch_size"):

        class Clash(TypedTensorDict):
            batch_size: Tensor


def test_row2_pickles_and_memmaps(tmp_path):
    s = state()
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is State and torch.equal(back.eta, s.eta)
    mm = s.memmap(tmp_path)
    assert type(mm) is State and torch.equal(mm.eta, s.eta)
