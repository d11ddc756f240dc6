"""TensorDictModule as existing code uses it: the wrapped module's attributes read
through, non-tensor entries reach the callable as values, nested-tuple keys are
unravelled wherever they are set, and misuse raises with 0.15.3's phrases."""

import copy

import pytest
import torch
from torch import nn

from tensordict import NonTensorData, NonTensorStack, TensorDict
from tensordict.nn import TensorDictModule, TensorDictModuleBase


def test_the_wrapped_module_attributes_read_through():
    class Net(nn.Linear):
        flavour = "plain"

        def describe(self):
            return f"{self.in_features}->{self.out_features}"

        def __deepcopy__(self, memo=None):
            return Net(self.in_features, self.out_features)

    module = TensorDictModule(Net(1, 2), in_keys=["a"], out_keys=["b"])
    assert module.flavour == "plain"
    assert module.describe() == "1->2"
    with pytest.raises(AttributeError):
        module.__deepcopy__  # dunder names do not read through
    with pytest.raises(AttributeError):
        module.no_such_thing
    assert isinstance(copy.deepcopy(module), TensorDictModule)


def test_non_tensor_entries_reach_the_callable_as_values():
    module = TensorDictModule(
        lambda s: s + " is a string!", in_keys=["s"], out_keys=["out"]
    )
    assert module(TensorDict(s="this"))["out"] == "this is a string!"
    module = TensorDictModule(
        lambda text: text.upper(),
        in_keys={"text": "key"},
        out_keys=["out"],
        out_to_in_map=True,
    )
    assert module(TensorDict(key="abc"))["out"] == "ABC"
    module = TensorDictModule(
        lambda: NonTensorStack(NonTensorData(1), NonTensorData(2)),
        in_keys=[],
        out_keys=["out"],
    )
    assert module(TensorDict())["out"] == [1, 2]


def test_nested_tuple_keys_are_unravelled_where_they_are_set():
    module = TensorDictModule(
        lambda x: x,
        in_keys=["a", ("b",), ("c", ("d",))],
        out_keys=["e", ("f",), ("g", ("h",))],
    )
    assert module.in_keys == ["a", "b", ("c", "d")]
    assert module.out_keys == ["e", "f", ("g", "h")]

    class ByInit(TensorDictModuleBase):
        def __init__(self):
            self.in_keys = [("b",), ("c", ("d",))]
            self.out_keys = [("f",)]
            super().__init__()

    class ByClass(TensorDictModuleBase):
        in_keys = [("b",), ("c", ("d",))]
        out_keys = [("f",)]

    for m in (ByInit(), ByClass()):
        assert m.in_keys == ["b", ("c", "d")] and m.out_keys == ["f"]
    m = ByInit()
    m.in_keys = [("x", ("y",))]
    assert m.in_keys == [("x", "y")]


def test_misuse_raises_with_the_phrases_code_matches():
    for wrong in (nn.Linear, int, [1], 1, torch.zeros(2)):
        with pytest.raises(ValueError, match=r"Module .* is not callable"):
            TensorDictModule(wrong, in_keys=["a"], out_keys=["b"])
    for wrong_keys in (None, 123, [123]):
        with pytest.raises(
            ValueError, match="out_keys must be of type list, str or tuples of str"
        ):
            TensorDictModule(nn.Identity(), in_keys=["a"], out_keys=wrong_keys)
        with pytest.raises(
            TypeError, match="in_keys must be of type list, str or tuples of str"
        ):
            TensorDictModule(nn.Identity(), in_keys=wrong_keys, out_keys=["b"])
    with pytest.warns(UserWarning, match='key "_"'):
        TensorDictModule(nn.Identity(), in_keys=["_"], out_keys=["b"])
    with pytest.warns(UserWarning, match="out_to_in_map is not None but is only used"):
        TensorDictModule(
            nn.Identity(), in_keys=["a"], out_keys=["b"], out_to_in_map=False
        )


def test_an_in_keys_dict_naming_arguments_the_callable_lacks():
    def fn(x, y):
        return x + y

    module = TensorDictModule(
        fn, in_keys={"1": "x", "2": "y"}, out_keys=["a"], out_to_in_map=True
    )
    with pytest.raises(TypeError, match="got an unexpected keyword argument '1'"):
        module(TensorDict({"1": torch.ones(1), "2": torch.ones(1)}, []))


def test_a_sequence_of_named_modules_from_a_dict():
    from tensordict.nn import TensorDictSequential

    class Net(nn.Module):
        def add(self, tensor, *, amount):
            return tensor + amount

    seq = TensorDictSequential(
        {
            "inc": lambda td: td + 1,
            "twice": lambda td: td * 2,
            "net": TensorDictModule(
                Net(),
                in_keys=["a"],
                out_keys=["b"],
                method="add",
                method_kwargs={"amount": 2},
            ),
        }
    )
    assert list(dict(seq.module.named_children())) == ["inc", "twice", "net"]
    assert seq(TensorDict(a=0))["b"] == 4


def test_device_and_is_functional_are_deprecated():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["a"], out_keys=["b"])
    with pytest.warns(DeprecationWarning, match=r"removed in TensorDict 0\.17"):
        assert module.device == torch.device("cpu")
    with pytest.warns(DeprecationWarning, match=r"removed in TensorDict 0\.17"):
        assert module.is_functional is False


def test_composite_icdf_reads_what_cdf_wrote():
    from torch import distributions

    from tensordict.nn import CompositeDistribution

    params = TensorDict(
        {
            "cont": {"loc": torch.zeros(3), "scale": torch.ones(3)},
            ("n", "c"): {"loc": torch.ones(3), "scale": torch.ones(3)},
        },
        [3],
    )
    dist = CompositeDistribution(
        params,
        distribution_map={
            "cont": distributions.Normal,
            ("n", "c"): distributions.Normal,
        },
    )
    sample = dist.sample()
    out = dist.cdf(sample)
    assert out is sample and ("n", "c_cdf") in sample.keys(True)
    dist.icdf(sample)
    torch.testing.assert_close(sample["cont_icdf"], sample["cont"])
    torch.testing.assert_close(sample["n", "c_icdf"], sample["n", "c"])


def test_deterministic_interaction_of_awkward_distributions():
    import functools

    from torch import distributions

    from tensordict.nn import ProbabilisticTensorDictModule, set_interaction_type

    lkj = functools.partial(distributions.LKJCholesky, dim=3, concentration=1.0)
    module = ProbabilisticTensorDictModule(
        in_keys=[], out_keys=["out"], distribution_class=lkj
    )
    for kind in ("DETERMINISTIC", "MEAN", "MODE"):
        with (
            set_interaction_type(kind),
            pytest.raises(RuntimeError, match="DETERMINISTIC, MEAN and MODE"),
        ):
            module(TensorDict())
    wishart = functools.partial(
        distributions.Wishart, df=torch.tensor([2]), covariance_matrix=torch.eye(2)
    )
    module = ProbabilisticTensorDictModule(
        in_keys=[], out_keys=["out"], distribution_class=wishart
    )
    with set_interaction_type("DETERMINISTIC"):  # its mode overflows: the mean
        assert (module(TensorDict())["out"] == 2 * torch.eye(2)).all()


def test_as_td_module_needs_two_tensorclasses():
    from tensordict.nn import TensorClassModuleBase

    class Plain(TensorClassModuleBase[torch.Tensor, torch.Tensor]):
        def forward(self, x):
            return x + 1

    with pytest.raises(
        ValueError,
        match="Only TensorClassModuleBase implementations with both input and output type as TensorClass",
    ):
        Plain().as_td_module()


@pytest.mark.parametrize("built_with", [True, False])
def test_composite_log_prob_keys_follow_the_setting_they_were_built_with(built_with):
    import functools

    from torch import distributions

    from tensordict.nn import (
        CompositeDistribution,
        ProbabilisticTensorDictModule,
        set_composite_lp_aggregate,
    )

    maker = functools.partial(
        CompositeDistribution,
        distribution_map={
            "cont": distributions.Normal,
            ("n", "disc"): distributions.Categorical,
        },
    )
    with set_composite_lp_aggregate(built_with):
        module = ProbabilisticTensorDictModule(
            in_keys=["params"],
            out_keys=["cont", ("n", "disc")],
            distribution_class=maker,
            return_log_prob=True,
        )
    with set_composite_lp_aggregate(built_with):
        if built_with:
            assert module.out_keys == ["cont", ("n", "disc"), "sample_log_prob"]
            assert module.log_prob_key == "sample_log_prob"
        else:
            assert module.log_prob_keys == ["cont_log_prob", ("n", "disc_log_prob")]
    with set_composite_lp_aggregate(not built_with):
        for name in ("out_keys", "log_prob_keys", "log_prob_key"):
            with pytest.raises(RuntimeError, match="composite_lp_aggregate"):
                getattr(module, name)


def test_repr_lists_the_submodules_and_keys():
    class Custom(TensorDictModuleBase):
        in_keys = ["a"]
        out_keys = ["b"]

        def __init__(self):
            super().__init__()
            self.net = nn.Linear(3, 4)

        def forward(self, tensordict):
            return tensordict

    text = repr(Custom())
    assert text.startswith("Custom(")
    assert "net=Linear(in_features=3, out_features=4" in text
    assert "in_keys=['a']" in text and "out_keys=['b']" in text
    text = repr(TensorDictModule(nn.Linear(3, 4), in_keys=["a"], out_keys=["b"]))
    assert text.count("module=") == 1 and "module=Linear(in_features=3" in text
    text = repr(TensorDictModule(lambda x: x, in_keys=["a"], out_keys=["b"]))
    assert text.count("module=") == 1 and "module=<function" in text
