"""``_apply_nest``: the walk behind ``apply``, under the name and with the options that
code written for 0.15.3 calls directly (TorchRL's ``LossModule`` expands its
parameters with it). Every container kind has it, and it agrees with ``apply``."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tensordict import (
    LazyStackedTensorDict,
    NonTensorData,
    TensorClass,
    TensorDict,
    TensorDictBase,
)
from tensordict.nn import TensorDictParams


class Pair(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


def dense():
    return TensorDict(
        a=torch.zeros(3, 4),
        b=TensorDict(c=torch.ones(3, 4, 5), batch_size=[3, 4]),
        batch_size=[3],
    )


def lazy():
    return LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2), n=TensorDict(c=torch.ones(2))),
        TensorDict(a=torch.ones(2), n=TensorDict(c=torch.ones(2)), only=torch.ones(2)),
        stack_dim=0,
    )


def tensorclass():
    return Pair(x=torch.zeros(3, 2), y=torch.ones(3), batch_size=[3])


KINDS = {"dense": dense, "lazy": lazy, "tensorclass": tensorclass}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_has_it_and_it_matches_apply(kind):
    td = KINDS[kind]()
    out = td._apply_nest(lambda x: x + 1)
    assert type(out) is type(td)
    expected = td.apply(lambda x: x + 1)
    for key in expected.keys(True, True):
        assert (out.get(key) == expected.get(key)).all()
        assert (out.get(key) == td.get(key) + 1).all()


def test_named_keys_and_prefix():
    td = dense()
    seen = []
    td._apply_nest(lambda k, x: seen.append(k), named=True, nested_keys=True)
    assert seen == ["a", ("b", "c")]
    seen.clear()
    td._apply_nest(
        lambda k, x: seen.append(k), named=True, nested_keys=True, prefix=("p",)
    )
    assert seen == [("p", "a"), ("p", "b", "c")]
    seen.clear()
    td._apply_nest(lambda k, x: seen.append(k), named=True, prefix=("p",))
    assert seen == ["a", "c"]


def test_call_on_nested_expands_every_level_as_torchrl_does():
    # TorchRL's LossModule._compare_and_expand: a new leading dim at every level
    def expand(value):
        if isinstance(value, TensorDictBase):
            return value._apply_nest(
                expand,
                batch_size=[2, *value.shape],
                filter_empty=False,
                call_on_nested=True,
            )
        return value.expand(2, *value.shape).clone()

    td = dense()
    out = td._apply_nest(
        expand, batch_size=[2, 3], filter_empty=False, call_on_nested=True
    )
    assert out.batch_size == torch.Size([2, 3])
    assert out["b"].batch_size == torch.Size([2, 3, 4])
    assert out["b", "c"].shape == torch.Size([2, 3, 4, 5])


def test_on_module_parameters():
    module = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    params = TensorDict.from_module(module, as_module=True)
    assert isinstance(params, TensorDictParams)
    out = params._apply_nest(lambda p: p.data.expand(2, *p.shape), batch_size=[2])
    assert out["0", "weight"].shape == torch.Size([2, 4, 3])
    assert out.batch_size == torch.Size([2])


def test_filter_empty_and_none_results():
    td = dense()
    assert td._apply_nest(lambda x: None) is None
    kept = td._apply_nest(lambda x: None, filter_empty=False)
    assert list(kept.keys()) == ["b"] and kept["b"].is_empty()


def test_others_default_and_missing():
    td = dense()
    other = TensorDict(a=torch.ones(3, 4), batch_size=[3])
    out = td._apply_nest(lambda x, y: x + y, other, default=2.0)
    assert (out["a"] == 1).all() and (out["b", "c"] == 3).all()
    with pytest.raises(KeyError, match="not found"):
        td._apply_nest(lambda x, y: x + y, other)


def test_out_inplace_checked_device_and_lock():
    td = dense()
    out = td.empty(recurse=True)
    assert td._apply_nest(lambda x: x * 2, out=out) is out
    assert out["b", "c"].shape == torch.Size([3, 4, 5])
    with pytest.raises(RuntimeError, match="batch_size and out.batch_size"):
        td._apply_nest(lambda x: x, out=td.empty(), batch_size=[1])
    assert td._apply_nest(lambda x: x.add_(1), inplace=True) is td
    assert (td["a"] == 1).all()
    assert td._apply_nest(lambda x: x.double(), checked=True)["a"].dtype == (
        torch.float64
    )
    assert td._apply_nest(lambda x: x, device="cpu")["b"].device == torch.device("cpu")
    td.lock_()
    assert td._apply_nest(lambda x: x, propagate_lock=True).is_locked
    assert not td._apply_nest(lambda x: x).is_locked


def test_is_leaf_hands_non_tensor_data_to_fn():
    td = dense()
    td["s"] = "hello"
    seen = []
    out = td._apply_nest(lambda x: seen.append(type(x)) or x)
    assert NonTensorData not in seen and out["s"] == "hello"
    seen.clear()
    out = td._apply_nest(
        lambda x: seen.append(type(x)) or x,
        is_leaf=lambda cls: issubclass(cls, (torch.Tensor, NonTensorData)),
    )
    assert NonTensorData in seen and out["s"] == "hello"
    # a nested class taken as a leaf is handed whole
    got = []
    td._apply_nest(
        lambda x: got.append(type(x)) or x,
        is_leaf=lambda cls: issubclass(cls, (torch.Tensor, TensorDictBase)),
    )
    assert TensorDict in got


def test_lazy_stack_keeps_exclusive_keys():
    ls = lazy()
    out = ls._apply_nest(lambda x: x + 1)
    assert isinstance(out, LazyStackedTensorDict)
    assert (out.tensordicts[1]["only"] == 2).all()
    assert (out.tensordicts[0]["n", "c"] == 2).all()
