"""tensordict.nn behaviours code written for 0.15.3 relies on (issue 27, group 8):
composite probabilistic modules without out_keys and their log-prob layouts,
probabilistic sequences without (or not ending with) a probabilistic module, in-place
writes into TensorDictParams, and the input/output contract of sequences."""

from __future__ import annotations

import collections

import pytest
import torch
from torch import distributions as D

from tensordict import TensorDict
from tensordict.nn import (
    CompositeDistribution,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictParams,
    TensorDictSequential,
    set_composite_lp_aggregate,
)


def _params():
    return TensorDict(
        {
            "params": {
                "cont": {"loc": torch.randn(3, 4), "scale": torch.rand(3, 4) + 0.1},
                ("nested", "cont"): {
                    "loc": torch.randn(3, 4),
                    "scale": torch.rand(3, 4) + 0.1,
                },
            }
        },
        batch_size=[3],
    )


def _composite(name_map=False, **kwargs):
    dist_kwargs = {"distribution_map": {"cont": D.Normal, ("nested", "cont"): D.Normal}}
    if name_map:
        dist_kwargs["name_map"] = {
            "cont": ("sample", "cont"),
            ("nested", "cont"): ("sample", "nested", "cont"),
        }
    return ProbabilisticTensorDictModule(
        in_keys=["params"],
        out_keys=None,
        distribution_class=CompositeDistribution,
        distribution_kwargs=dist_kwargs,
        **kwargs,
    )


@pytest.mark.parametrize("name_map", [False, True])
def test_composite_without_out_keys_samples_at_its_parts_keys(name_map):
    with set_composite_lp_aggregate(True):
        module = _composite(name_map, return_log_prob=True)
        parts = (
            [("sample", "cont"), ("sample", "nested", "cont")]
            if name_map
            else ["cont", ("nested", "cont")]
        )
        assert module.dist_sample_keys == parts
        assert module.out_keys == parts + ["sample_log_prob"]
        out = module(_params())
        lp_keys = [
            (*((p,) if isinstance(p, str) else p)[:-1], "cont_log_prob") for p in parts
        ]
        for key in parts + lp_keys + ["sample_log_prob"]:
            assert key in out.keys(True), key
        total = sum(out.get(k).sum(-1) for k in lp_keys)
        torch.testing.assert_close(out["sample_log_prob"], total)
        # log_prob under aggregation: the sum, each part's written into the input
        fresh = out.select(*parts, "params")
        lp = module.log_prob(fresh)
        assert lp.shape == (3,)
        torch.testing.assert_close(lp, total)
        assert all(k in fresh.keys(True) for k in lp_keys)


def test_log_prob_key_raises_when_there_are_several():
    with set_composite_lp_aggregate(False):
        module = _composite(return_log_prob=True)
        assert module.log_prob_keys == ["cont_log_prob", ("nested", "cont_log_prob")]
        with pytest.raises(RuntimeError, match="one and only one element"):
            module.log_prob_key
        out = module(_params())
        assert "sample_log_prob" not in out.keys()


def test_module_without_out_keys_may_return_none():
    backbone = TensorDictModule(lambda: None, in_keys=[], out_keys=[])
    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    assert backbone(td) is td
    with set_composite_lp_aggregate(True):
        seq = ProbabilisticTensorDictSequential(
            collections.OrderedDict(backbone=backbone, proba=_composite())
        )
        assert seq.dist_sample_keys == ["cont", ("nested", "cont")]
        assert isinstance(seq.get_dist(_params()), CompositeDistribution)


def test_probabilistic_sequence_without_probabilistic_module():
    m1 = TensorDictModule(lambda x, y: x + y, in_keys=["k1", "k2"], out_keys=["foo"])
    m2 = TensorDictModule(lambda x, y: x + y, in_keys=["foo", "k3"], out_keys=["res"])
    seq = ProbabilisticTensorDictSequential(m1, m2)
    assert seq._requires_sample is False and seq._det_part is None
    assert seq.return_composite is True
    td = TensorDict(k1=1, k2=2, k3=3)
    assert seq(td) is td and td["res"] == 6
    seq = ProbabilisticTensorDictSequential(m1, m2, selected_out_keys=["res"])
    td = TensorDict(k1=1, k2=2, k3=3)
    out = seq(td)
    assert out is td and "foo" not in out.keys() and out["res"] == 6


def test_probabilistic_module_in_the_middle():
    lin0 = TensorDictModule(torch.nn.Linear(3, 4), in_keys=["x"], out_keys=["loc"])
    prob = ProbabilisticTensorDictModule(
        in_keys=["loc"],
        out_keys=["y"],
        distribution_class=D.Normal,
        distribution_kwargs={"scale": 1},
        default_interaction_type="random",
    )
    lin1 = TensorDictModule(torch.nn.Linear(4, 5), in_keys=["y"], out_keys=["loc2"])
    seq = ProbabilisticTensorDictSequential(lin0, prob, lin1)
    assert seq.return_composite and seq.default_interaction_type is not None
    assert isinstance(
        seq.get_dist(TensorDict(x=torch.randn(10, 3))), CompositeDistribution
    )
    out = seq(TensorDict(x=torch.randn(10, 3)))
    assert set(out.keys()) == {"x", "loc", "y", "loc2"}
    assert isinstance(seq[:2], ProbabilisticTensorDictSequential)


def test_select_out_keys_returns_the_input():
    seq = ProbabilisticTensorDictSequential(
        TensorDictModule(lambda x: (x + 2, x), in_keys=["b"], out_keys=["d", "e"]),
        ProbabilisticTensorDictModule(
            in_keys={"loc": "d", "scale": "e"},
            out_keys=["f"],
            distribution_class=D.Normal,
            default_interaction_type="random",
        ),
    )
    assert not seq._select_before_return
    seq.select_out_keys("f")
    assert seq._select_before_return
    td = TensorDict(b=1.0)
    out = seq(td)
    assert out is td and set(td.keys()) == {"b", "f"}


def test_sequence_inplace_and_tensordict_out():
    first = TensorDictModule(lambda x: x + 1, ["a"], ["b"], inplace=False)
    second = TensorDictModule(lambda x: x * 2, ["b"], ["c"], inplace=False)
    seq = TensorDictSequential(first, second, inplace=True)
    td = TensorDict(a=torch.zeros(()))
    assert seq(td) is td and td["c"] == 2
    seq = TensorDictSequential(
        TensorDictModule(lambda x: x + 1, ["a"], ["b"]),
        TensorDictModule(lambda x: x * 2, ["b"], ["c"]),
    )
    td = TensorDict(a=torch.zeros(()))
    out = TensorDict()
    assert seq(td, tensordict_out=out) is out
    assert set(out.keys()) == {"b", "c"} and set(td.keys()) == {"a"}


def test_tensordict_params_in_place_writes_act_on_data():
    params = TensorDictParams(
        TensorDict(
            a={"b": torch.zeros((), requires_grad=True)},
            e=torch.zeros(3, requires_grad=True),
        )
    )
    weight = params["e"]
    params.copy_(params.data.apply(lambda x: x + 1))
    assert (params == 1).all()
    params.zero_()
    assert (params == 0).all()
    params.fill_("e", 2.0)
    params.update_({"e": torch.full((3,), 3.0)})
    params.clone().zero_()
    assert params["e"] is weight and (weight == 3).all()
    assert weight.requires_grad and weight.grad_fn is None


def test_vmap_keeps_a_locked_argument_locked():
    from tensordict import LazyStackedTensorDict

    def write(x, y):
        return x.set("a", y["a"] + x["a"])

    for stack_dim in (0, 1):
        td = TensorDict(a=torch.ones(1), batch_size=[1])
        x = LazyStackedTensorDict.lazy_stack([td, td.clone()], stack_dim)
        y = x.clone()
        assert (torch.vmap(write, (0, 0))(x, y)["a"] == 2).all()
        x.lock_()
        with pytest.raises(RuntimeError, match="locked"):
            torch.vmap(write, (0, 0))(x, y)
    dense = TensorDict(a=torch.ones(3), batch_size=[3]).lock_()
    with pytest.raises(RuntimeError, match="locked"):
        torch.vmap(write, (0, 0))(dense, dense.clone())


def test_is_shared_and_is_memmap_attributes(tmp_path):
    # 0.15.3's private attributes, which code reads
    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    assert td._is_shared is False and td._is_memmap is False
    td.share_memory_()
    assert td._is_shared is True
    td = TensorDict(a=torch.zeros(2), batch_size=[2]).memmap_(tmp_path)
    assert td._is_memmap is True


def test_to_module_into_tensordict_params():
    # a TensorDictParams has no submodules: to_module swaps its entries (0.15.3)
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    params = TensorDict.from_module(net, as_module=True)
    zeros = params.apply(lambda x: x.data * 0)
    with zeros.to_module(params):
        assert (params == 0).all()
    assert not (params == 0).all()

    class Holder(torch.nn.Module):
        pass

    holder = Holder()
    holder.params = params
    outer = TensorDict(params=zeros)
    with outer.to_module(holder):
        assert (holder.params == 0).all()
    assert not (holder.params == 0).all()
