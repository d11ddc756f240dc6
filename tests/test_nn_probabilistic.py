"""Probabilistic modules, interaction types and the distributions of tensordict.nn."""

import pytest
import torch
from torch import distributions as D, nn

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict
from tensordict.nn import (
    AddStateIndependentNormalScale,
    CompositeDistribution,
    InteractionType,
    NormalParamExtractor,
    OneHotCategorical,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TanhNormal,
    TensorDictModule,
    TruncatedNormal,
    biased_softplus,
    composite_lp_aggregate,
    interaction_type,
    inv_softplus,
    mappings,
    set_composite_lp_aggregate,
    set_interaction_type,
)
from tensordict.nn.distributions import Delta


def normal_module(**kwargs):
    return ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=D.Normal,
        **kwargs,
    )


class Params(TensorClass):
    loc: torch.Tensor
    scale: torch.Tensor
    action: torch.Tensor = None
    action_log_prob: torch.Tensor = None


def make_params(kind):
    loc, scale = torch.arange(4.0).reshape(2, 2), torch.ones(2, 2)
    if kind == "dense":
        return TensorDict(loc=loc, scale=scale, batch_size=[2])
    if kind == "lazy":
        return LazyStackedTensorDict.lazy_stack(
            [TensorDict(loc=l, scale=s) for l, s in zip(loc, scale)]
        )
    return Params(loc=loc, scale=scale, batch_size=[2])


@pytest.mark.parametrize("kind", ["dense", "lazy", "tensorclass"])
def test_probabilistic_module_on_every_container(kind):
    module = normal_module(return_log_prob=True)
    data = make_params(kind)
    out = module(data)
    assert type(out) is type(data)
    torch.testing.assert_close(out.get("action"), data.get("loc"))  # deterministic
    expected = D.Normal(data.get("loc"), data.get("scale")).log_prob(data.get("loc"))
    torch.testing.assert_close(out.get("action_log_prob"), expected)


def test_interaction_types():
    module = normal_module()
    td = TensorDict(loc=torch.zeros(1000), scale=torch.ones(1000), batch_size=[1000])
    assert interaction_type() is None
    assert module.default_interaction_type is InteractionType.DETERMINISTIC
    assert (module(td.clone())["action"] == 0).all()
    with set_interaction_type(InteractionType.RANDOM):
        assert interaction_type() is InteractionType.RANDOM
        sample = module(td.clone())["action"]
    assert sample.std() > 0.5
    with set_interaction_type("mode"):
        assert (module(td.clone())["action"] == 0).all()
    with set_interaction_type("mean"):
        assert (module(td.clone())["action"] == 0).all()
    assert interaction_type() is None
    assert (
        InteractionType("random") is InteractionType.RANDOM
        and str(InteractionType.MODE) == "mode"
    )
    with pytest.raises(ValueError, match="unknown interaction type"):
        set_interaction_type("sometimes")

    @set_interaction_type("random")
    def inside():
        return interaction_type()

    assert inside() is InteractionType.RANDOM and interaction_type() is None


def test_deterministic_falls_back_to_mean_and_mode():
    trunc = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale", "a", "b"],
        out_keys=["x"],
        distribution_class=TruncatedNormal,
    )
    td = TensorDict(
        loc=torch.ones(2),
        scale=torch.ones(2),
        a=-torch.ones(2),
        b=torch.ones(2),
        batch_size=[2],
    )
    torch.testing.assert_close(
        trunc(td)["x"], TruncatedNormal(1.0, 1.0, -1.0, 1.0).mean.expand(2)
    )
    cat = ProbabilisticTensorDictModule(
        in_keys=["logits"], out_keys=["a"], distribution_class=D.Categorical
    )
    assert (
        cat(TensorDict(logits=torch.tensor([[0.1, 2.0, 0.3]]), batch_size=[1]))[
            "a"
        ].item()
        == 1
    )


def test_log_prob_keys_and_dict_in_keys():
    module = ProbabilisticTensorDictModule(
        in_keys={"loc": ("p", "mu"), "scale": ("p", "sigma")},
        out_keys=[("n", "action")],
        distribution_class=D.Normal,
        return_log_prob=True,
    )
    assert module.in_keys == [("p", "mu"), ("p", "sigma")]
    assert module.log_prob_key == ("n", "action_log_prob")
    assert module.out_keys == [("n", "action"), ("n", "action_log_prob")]
    td = TensorDict({"p": {"mu": torch.zeros(3), "sigma": torch.ones(3)}}, [3])
    out = module(td)
    torch.testing.assert_close(module.log_prob(out), out["n", "action_log_prob"])
    with set_composite_lp_aggregate(True):
        assert normal_module(return_log_prob=True).log_prob_key == "sample_log_prob"
    assert normal_module(return_log_prob=True, log_prob_key="lp").out_keys == [
        "action",
        "lp",
    ]


def test_missing_parameter_names_module_and_key():
    with pytest.raises(KeyError, match=r"ProbabilisticTensorDictModule.*'scale'"):
        normal_module()(TensorDict(loc=torch.zeros(2), batch_size=[2]))


def test_delta_default_and_num_samples_and_cache():
    module = ProbabilisticTensorDictModule(in_keys=["param"], out_keys=["action"])
    td = TensorDict(param=torch.randn(5, 4), batch_size=[5])
    assert torch.equal(module(td)["action"], td["param"])
    sampler = normal_module(
        num_samples=4, default_interaction_type="random", cache_dist=True
    )
    out = sampler(TensorDict(loc=torch.zeros(3), scale=torch.ones(3), batch_size=[3]))
    assert out.batch_size == (4, 3) and out["action"].shape == (4, 3)
    assert isinstance(sampler._dist, D.Normal)


def test_probabilistic_sequence():
    torch.manual_seed(0)
    net = TensorDictModule(
        nn.Sequential(nn.Linear(3, 4), NormalParamExtractor()),
        in_keys=["obs"],
        out_keys=["loc", "scale"],
    )
    policy = ProbabilisticTensorDictSequential(net, normal_module(return_log_prob=True))
    assert policy.in_keys == ["obs"]
    assert policy.out_keys == ["loc", "scale", "action", "action_log_prob"]
    td = TensorDict(obs=torch.randn(5, 3), batch_size=[5])
    dist = policy.get_dist(td.clone())
    assert isinstance(dist, D.Normal) and dist.batch_shape == (5, 2)
    out = policy(td.clone())
    torch.testing.assert_close(policy.log_prob(out), out["action_log_prob"])
    assert isinstance(policy.det_part, type(policy).__mro__[1])
    assert policy.default_interaction_type is InteractionType.DETERMINISTIC
    params = policy.get_dist_params(td.clone())
    assert "loc" in params.keys() and "action" not in params.keys()
    assert isinstance(policy.build_dist_from_params(params), D.Normal)
    out["action_log_prob"].sum().backward()
    assert net.module[0].weight.grad is not None
    # no probabilistic module: a plain sequence (as 0.15.3)
    plain = ProbabilisticTensorDictSequential(net)
    assert plain._requires_sample is False and plain._det_part is None
    assert "loc" in plain(td.clone()).keys()
    with pytest.raises(RuntimeError, match="no probabilistic module"):
        plain.get_dist(td.clone())


def test_composite_distribution():
    params = TensorDict(
        {
            "cont": {"loc": torch.zeros(3, 4), "scale": torch.ones(3, 4)},
            ("nested", "disc"): {"logits": torch.zeros(3, 10)},
        },
        [3],
    )
    dist = CompositeDistribution(
        params, {"cont": D.Normal, ("nested", "disc"): D.Categorical}
    )
    sample = dist.sample()
    assert sample.batch_size == (3,) and sample["nested", "disc"].dtype == torch.int64
    assert dist.sample((2,)).batch_size == (2, 3)
    assert composite_lp_aggregate() is False
    lp = dist.log_prob(sample)
    torch.testing.assert_close(
        lp["cont_log_prob"], D.Normal(0.0, 1.0).log_prob(sample["cont"])
    )
    entropy = dist.entropy()
    assert set(entropy.keys(True, True)) == {"cont_entropy", ("nested", "disc_entropy")}
    with set_composite_lp_aggregate(True):
        total = dist.log_prob(sample)
        expected = lp["cont_log_prob"].sum(-1) + lp["nested", "disc_log_prob"]
        torch.testing.assert_close(total, expected)
        assert dist.entropy().shape == (3,)
    with_sum = dist.log_prob_composite(sample, include_sum=True)
    torch.testing.assert_close(with_sum["sample_log_prob"], expected)
    assert torch.equal(dist.mode["cont"], torch.zeros(3, 4))
    assert list(dist.keys()) == ["cont", ("nested", "disc")] and len(dist) == 2
    renamed = CompositeDistribution(
        params,
        {"cont": D.Normal, ("nested", "disc"): D.Categorical},
        name_map={"cont": "action_c"},
    )
    assert "action_c" in renamed.sample().keys()


def test_probabilistic_module_with_composite():
    module = ProbabilisticTensorDictModule(
        in_keys=["params"],
        out_keys=["cont", ("nested", "disc")],
        distribution_class=CompositeDistribution,
        distribution_kwargs={
            "distribution_map": {"cont": D.Normal, ("nested", "disc"): D.Categorical}
        },
        return_log_prob=True,
        default_interaction_type="random",
    )
    assert module.log_prob_keys == ["cont_log_prob", ("nested", "disc_log_prob")]
    td = TensorDict(
        {
            "params": {
                "cont": {"loc": torch.zeros(3, 4), "scale": torch.ones(3, 4)},
                ("nested", "disc"): {"logits": torch.zeros(3, 10)},
            }
        },
        [3],
    )
    out = module(td)
    assert out["cont"].shape == (3, 4) and out["nested", "disc_log_prob"].shape == (3,)
    assert isinstance(module.log_prob(out), TensorDict)


def test_distributions():
    delta = Delta(torch.ones(3))
    assert delta.log_prob(torch.ones(3)) == float("inf")
    assert delta.log_prob(torch.zeros(3)) == float("-inf")
    assert delta.sample((2,)).shape == (2, 3) and torch.equal(delta.mode, torch.ones(3))
    one_hot = OneHotCategorical(logits=torch.tensor([[0.0, 9.0, 0.0]]))
    assert one_hot.mode.tolist() == [[0, 1, 0]] and one_hot.sample((4,)).shape == (
        4,
        1,
        3,
    )
    logits = torch.zeros(3, requires_grad=True)
    OneHotCategorical(logits=logits).rsample().sum().backward()
    assert logits.grad is not None
    trunc = TruncatedNormal(torch.zeros(3), torch.ones(3), -1.0, 1.0)
    torch.testing.assert_close(
        trunc.log_prob(torch.zeros(3)), torch.full((3,), -0.5372), atol=1e-4, rtol=0
    )
    torch.testing.assert_close(
        trunc.entropy(), torch.full((3,), 0.6828), atol=1e-4, rtol=0
    )
    samples = trunc.rsample((2000,))
    assert samples.abs().max() <= 1
    tanh = TanhNormal(torch.zeros(4, 2), torch.ones(4, 2), low=-3.0, high=3.0)
    draw = tanh.rsample()
    assert draw.abs().max() < 3 and tanh.log_prob(draw).shape == (4,)
    assert torch.equal(tanh.deterministic_sample, torch.zeros(4, 2))


def test_param_extractors_and_mappings():
    loc, scale = NormalParamExtractor()(torch.tensor([[0.0, 1.0, 0.0, -50.0]]))
    assert loc.tolist() == [[0.0, 1.0]]
    torch.testing.assert_close(scale[0, 0], torch.tensor(1.0))
    assert scale.min() >= 1e-4
    with pytest.raises(ValueError, match="odd last dim"):
        NormalParamExtractor()(torch.zeros(3))
    add = AddStateIndependentNormalScale(3)
    loc, scale = add(torch.zeros(2, 3))
    assert scale.shape == (2, 3) and [n for n, _ in add.named_parameters()] == [
        "state_independent_scale"
    ]
    assert not list(AddStateIndependentNormalScale(3, make_param=False).parameters())
    torch.testing.assert_close(
        biased_softplus(2.0)(torch.zeros(1)), torch.tensor([2.0])
    )
    assert (
        abs(torch.nn.functional.softplus(torch.tensor(inv_softplus(1.5))).item() - 1.5)
        < 1e-6
    )
    torch.testing.assert_close(
        mappings("biased_softplus_2.0_0.1")(torch.zeros(1)), torch.tensor([2.0])
    )
    assert mappings("exp") is torch.exp
    with pytest.raises(NotImplementedError, match="no scale mapping"):
        mappings("nope")


@pytest.mark.parametrize("kind", ["dense", "lazy", "tensorclass"])
def test_probabilistic_sequence_on_every_container(kind):
    shift = TensorDictModule(lambda loc: loc + 1, in_keys=["loc"], out_keys=["loc"])
    policy = ProbabilisticTensorDictSequential(
        shift, normal_module(return_log_prob=True)
    )
    data = make_params(kind)
    loc = data.get("loc").clone()
    out = policy(data)
    torch.testing.assert_close(out.get("action"), loc + 1)
    assert out.get("action_log_prob").shape == loc.shape
