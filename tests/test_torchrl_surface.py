"""Behaviour TorchRL relies on, found by running its own tests (issue 16), checked
here without TorchRL: each test names the TorchRL code that needs it."""

from __future__ import annotations

import pytest
import torch
from torch import distributions as D

from tensordict import LazyStackedTensorDict, TensorDict
from tensordict.nn import (
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
)
from tensordict.utils import expand_right, unravel_key, unravel_key_list


def test_probabilistic_module_private_out_keys_are_the_sample_keys():
    # torchrl.modules.SafeProbabilisticModule compares its spec's keys with `_out_keys`
    module = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=D.Normal,
        return_log_prob=True,
    )
    assert module._out_keys == ["action"]
    assert module.out_keys == ["action", "action_log_prob"]


def _split(values: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """A strided nested tensor viewing ``values`` cut into ``lengths`` (as TorchRL's
    ``split_trajectories(as_nested=True)`` builds it)."""
    return torch.nested.nested_tensor(list(values.split(lengths)))


def test_ragged_batch_dim_holds_nested_tensors_and_pads_back():
    # torchrl.collectors.utils.split_trajectories(as_nested=True):
    # `_fast_apply(nest, batch_size=[n_trajectories, -1])`, then `to_padded_tensor`
    td = TensorDict(
        obs=torch.arange(5.0).unsqueeze(-1),
        next=TensorDict(done=torch.tensor([0, 1, 0, 0, 1]).bool(), batch_size=[5]),
        batch_size=[5],
    )
    ragged = td._fast_apply(lambda x: _split(x, [2, 3]), batch_size=[2, -1])
    assert ragged.batch_size == torch.Size([2, -1])
    assert ragged["next"].batch_size == torch.Size([2, -1])
    assert ragged["next", "done"].is_nested
    padded = ragged.to_padded_tensor(padding=-1.0, mask_key=("collector", "mask"))
    assert padded.batch_size == torch.Size([2, 3])
    assert padded["obs"].squeeze(-1).tolist() == [[0.0, 1.0, -1.0], [2.0, 3.0, 4.0]]
    assert padded["collector", "mask"].tolist() == [[True, True, False], [True] * 3]


def test_ragged_batch_dim_refuses_dense_values_and_other_negatives():
    with pytest.raises(RuntimeError, match="'obs'"):
        TensorDict(obs=torch.zeros(2, 3), batch_size=[2, -1])
    with pytest.raises(TypeError, match="batch_size"):
        TensorDict(batch_size=[2, -2])


def test_unravel_key_tells_keys_from_indices():
    # torchrl.data.Composite.__getitem__: `unravel_key(idx)` is () for an index tuple
    assert unravel_key(("a", ("b", "c"))) == ("a", "b", "c")
    assert unravel_key((0, slice(None))) == ()
    assert unravel_key(("a", 0)) == ()
    # Composite.__setitem__(0, ...) and TorchRL's tests expect 0.15.3's RuntimeError
    with pytest.raises(RuntimeError, match="key should be a Sequence<NestedKey>"):
        unravel_key(0)
    with pytest.raises(KeyError):  # the list form stays strict
        unravel_key_list([("a", 0)])


def test_expand_right_expands_dims_of_size_one():
    # torchrl.testing's HeterogeneousCountingEnv: expand_right(count[1], x.shape)
    count = torch.tensor([2.0])
    out = expand_right(count, (7, 7, 3))
    assert out.shape == (7, 7, 3) and bool((out == 2).all())
    with pytest.raises(RuntimeError, match="prefix"):
        expand_right(torch.zeros(2), (7, 7, 3))


def test_apply_named_passes_the_keys():
    # torchrl.collectors: td.apply(fn, other, default=None, named=True, filter_empty=True)
    td = TensorDict(a=torch.zeros(2), b={"c": torch.ones(2)}, batch_size=[2])
    other = TensorDict(a=torch.ones(2), batch_size=[2])
    seen = []

    def keep_changed(name, value, other_value):
        seen.append(name)
        return value if other_value is None else None

    out = td.apply(keep_changed, other, default=None, named=True, nested_keys=True)
    assert sorted(map(str, seen)) == ["('b', 'c')", "a"]
    assert list(out.keys(True, True)) == [("b", "c")]


def test_clear_device_forgets_the_device_everywhere():
    # torchrl.collectors.Collector._make_carrier
    td = TensorDict(
        a=torch.zeros(2), b={"c": torch.ones(2)}, batch_size=[2], device="cpu"
    )
    assert td.clear_device_() is td
    assert td.device is None and td["b"].device is None
    assert td["a"].device == torch.device("cpu")
    stack = LazyStackedTensorDict.lazy_stack([td.to("cpu"), td.to("cpu")])
    assert stack.device == torch.device("cpu")
    assert stack.clear_device_().device is None
    assert all(member.device is None for member in stack.tensordicts)


def test_lazy_stack_exclusive_keys_can_be_found_and_deleted():
    # torchrl.envs.batched_envs._stackable reads `_has_exclusive_keys`;
    # torchrl.data.StackedComposite deletes keys held by some members only
    a = TensorDict(x=torch.zeros(2), n={"y": torch.ones(2)}, batch_size=[2])
    b = TensorDict(x=torch.zeros(2), batch_size=[2])
    same = LazyStackedTensorDict.lazy_stack([a.clone(), a.clone()])
    assert not same._has_exclusive_keys
    stack = LazyStackedTensorDict.lazy_stack([a, b])
    assert stack._has_exclusive_keys
    del stack["n", "y"]
    assert ("n", "y") not in a.keys(True)
    with pytest.raises(KeyError):
        del stack["n", "y"]


class _SequenceBuiltLikeTorchRL(TensorDictSequential):
    """TorchRL's SafeSequential: keys from `_compute_in_and_out_keys` (called before
    nn.Module.__init__), then TensorDictModule.__init__ with the ModuleList."""

    def __init__(self, *modules, inplace=None):
        in_keys, out_keys = self._compute_in_and_out_keys(modules)
        TensorDictModule.__init__(
            self, torch.nn.ModuleList(modules), in_keys, out_keys, inplace=inplace
        )


def test_sequence_subclass_that_skips_the_sequence_init_still_runs():
    add = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    mul = TensorDictModule(lambda y, z: y * z, in_keys=["y", "z"], out_keys=["w"])
    seq = _SequenceBuiltLikeTorchRL(add, mul)
    assert seq.in_keys == ["x", "z"] and seq.out_keys == ["y", "w"]
    td = TensorDict(x=torch.ones(2), z=torch.full((2,), 3.0), batch_size=[2])
    assert seq(td) is td  # inplace=None: the sequence writes into its input
    assert td["w"].tolist() == [6.0, 6.0]
    assert len(seq) == 2 and seq[1] is mul


def test_module_inplace_none_writes_a_new_tensordict():
    # SafeSequential passes inplace=None on to TensorDictModule.__init__ (as False)
    module = TensorDictModule(
        lambda x: x + 1, in_keys=["x"], out_keys=["y"], inplace=None
    )
    td = TensorDict(x=torch.zeros(2), batch_size=[2])
    out = module(td)
    assert out is not td and list(out.keys()) == ["y"]


def test_probabilistic_sequence_passes_on_only_the_options_given():
    # TorchRL's SafeProbabilisticTensorDictSequential puts SafeSequential (which
    # takes no `selected_out_keys`) between this class and TensorDictSequential
    class NoSelection(TensorDictSequential):
        def __init__(self, *modules, partial_tolerant=False, inplace=None):
            super().__init__(
                *modules, partial_tolerant=partial_tolerant, inplace=inplace
            )

    class Both(ProbabilisticTensorDictSequential, NoSelection):
        pass

    params = TensorDictModule(
        lambda obs: (obs, obs.exp()), in_keys=["obs"], out_keys=["loc", "scale"]
    )
    prob = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["action"], distribution_class=D.Normal
    )
    seq = Both(params, prob)
    out = seq(TensorDict(obs=torch.zeros(3), batch_size=[3]))
    assert out["action"].shape == (3,)


def test_accepted_classes_cover_tensors_and_every_container():
    # torchrl.data.ListStorage.set: isinstance(data, (..., *_ACCEPTED_CLASSES))
    from tensordict import NonTensorData, tensorclass
    from tensordict.base import _ACCEPTED_CLASSES

    @tensorclass
    class Pair:
        x: torch.Tensor

    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    values = [torch.zeros(1), td, LazyStackedTensorDict.lazy_stack([td, td])]
    values += [Pair(x=torch.zeros(2), batch_size=[2]), NonTensorData("a")]
    assert all(isinstance(value, _ACCEPTED_CLASSES) for value in values)
    assert not isinstance([1, 2], _ACCEPTED_CLASSES)


def test_state_dict_loaded_into_an_empty_tensordict_keeps_the_batch_sizes(tmp_path):
    # torchrl.data.TensorStorage.load_state_dict: TensorDict().load_state_dict(sd,
    # strict=False), after torch.save / torch.load of the storage's state dict
    td = TensorDict(a=torch.zeros(3, 2), n={"b": torch.ones(3, 4)}, batch_size=[3])
    td["n"].batch_size = [3, 4]
    torch.save(td.state_dict(), tmp_path / "sd.pt")
    state = torch.load(tmp_path / "sd.pt", weights_only=True)
    loaded = TensorDict().load_state_dict(state, strict=False)
    assert loaded.batch_size == (3,)
    assert loaded["n"].batch_size == (3, 4)
    assert (loaded == td).all()


def test_tensorclass_field_named_data_is_a_required_field():
    # torchrl.testing.make_tc: a tensorclass with a field per key ("data" among them)
    from tensordict import tensorclass

    class Fields:
        pass

    Fields.__annotations__ = {"data": torch.Tensor, "nested": torch.Tensor}
    cls = tensorclass(Fields)
    obj = cls(data=torch.ones(2), nested=torch.zeros(2), batch_size=[2])
    assert obj.data.tolist() == [1.0, 1.0] and obj[0].data.item() == 1.0
    with pytest.raises(TypeError, match="data"):
        cls(nested=torch.zeros(2), batch_size=[2])


def test_probabilistic_sequence_runs_under_its_default_interaction_type():
    # torchrl.modules.gSDEModule, before the distribution, reads interaction_type()
    from tensordict.nn import InteractionType, interaction_type, set_interaction_type

    seen = []

    def params(obs):
        seen.append(interaction_type())
        return obs, obs.exp()

    seq = ProbabilisticTensorDictSequential(
        TensorDictModule(params, in_keys=["obs"], out_keys=["loc", "scale"]),
        ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"],
            out_keys=["action"],
            distribution_class=D.Normal,
            default_interaction_type="random",
        ),
    )
    seq(TensorDict(obs=torch.zeros(3), batch_size=[3]))
    with set_interaction_type("mode"):
        seq(TensorDict(obs=torch.zeros(3), batch_size=[3]))
    assert seen == [InteractionType.RANDOM, InteractionType.MODE]
    assert interaction_type() is None


def test_the_old_c_extension_module_gives_the_key_helpers():
    # TorchRL's test/objectives/_objectives_common.py: from tensordict._C import ...
    import importlib
    import sys

    sys.modules.pop("tensordict._C", None)
    with pytest.warns(DeprecationWarning, match="tensordict._C"):
        legacy = importlib.import_module("tensordict._C")
    assert legacy.unravel_keys(("a", ("b",))) == ("a", "b")
    assert legacy.unravel_key(("a",)) == "a"
    assert legacy.unravel_key_list(["a", ("b", ("c",))]) == ["a", ("b", "c")]
    assert legacy._unravel_key_to_tuple(("a", 1)) == ()


def test_stack_into_out_writes_only_the_entries_out_holds():
    # torchrl.collectors: torch.stack(steps, dim, out=preallocated_rollout)
    steps = [
        TensorDict(a=torch.full((2,), float(i)), b=torch.ones(2), batch_size=[2])
        for i in range(3)
    ]
    out = TensorDict(a=torch.zeros(2, 3), batch_size=[2, 3])
    assert torch.stack(steps, 1, out=out) is out
    assert out["a"][0].tolist() == [0.0, 1.0, 2.0]
    assert list(out.keys()) == ["a"]


def test_module_takes_its_out_key_from_a_returned_tensordict():
    # torchrl.testing.CountingEnvCountModule returns spec.zero() + 1, a tensordict
    module = TensorDictModule(
        lambda x: TensorDict({"data": {"action": x + 1}}, batch_size=[2]),
        in_keys=["x"],
        out_keys=[("data", "action")],
    )
    out = module(TensorDict(x=torch.zeros(2, 5), batch_size=[2]))
    assert out["data", "action"].shape == (2, 5)
    assert not isinstance(out["data", "action"], TensorDict)


def test_tensordict_params_private_param_td_writes_through():
    # TorchRL's objectives tests: `params._param_td += 1000` changes the module's weights
    from tensordict.nn import TensorDictParams

    linear = torch.nn.Linear(2, 2)
    params = TensorDictParams(TensorDict.from_module(linear))
    with torch.no_grad():
        params._param_td += 1000
    assert bool((linear.weight > 500).all())
    assert params._param_td["weight"] is params["weight"]


def test_non_tensor_stacks_compare_element_by_element():
    # torchrl.data.Choice.is_in: any((choice == value).all() for choice in choices)
    from tensordict import NonTensorData, NonTensorStack

    ab = NonTensorStack(NonTensorData("a"), NonTensorData("b"))
    ac = NonTensorStack(NonTensorData("a"), NonTensorData("c"))
    assert (ab == ac).tolist() == [True, False]
    assert bool((ab == ab.clone()).all())
    with pytest.raises(RuntimeError, match="batch sizes"):
        ab == NonTensorStack(NonTensorData("a"))


def test_where_into_out_replaces_expanded_entries():
    # torchrl.envs.utils._update_during_reset: node.where(mask, other, out=node)
    # where node holds expanded tensors (a spec's zero() expanded to the batch)
    out = TensorDict(
        a=torch.zeros(1, 3).expand(4, 3), b=torch.zeros(4, 3), batch_size=[4]
    )
    b_before = out["b"]
    src = TensorDict(a=torch.ones(4, 3), b=torch.ones(4, 3), batch_size=[4])
    cond = torch.tensor([True, False, True, False])
    assert src.where(cond, 0.5, out=out) is out
    assert out["a"][:, 0].tolist() == [1.0, 0.5, 1.0, 0.5]
    # out takes the results as new entries: the tensor it held keeps its values
    # (TorchRL's rollouts keep each step's tensors, which the reset must not change)
    assert out["b"][:, 0].tolist() == [1.0, 0.5, 1.0, 0.5]
    assert out["b"] is not b_before and b_before.sum() == 0


def test_module_drops_the_outputs_at_underscore():
    # TorchRL's SafeModule tests: out_keys=["_", "_", "out_3"] keeps only out_3
    module = TensorDictModule(
        lambda x: (x, x + 1, x + 2), in_keys=["x"], out_keys=["_", "_", "z"]
    )
    out = module(TensorDict(x=torch.zeros(2), batch_size=[2]))
    assert sorted(out.keys()) == ["x", "z"] and out["z"].tolist() == [2.0, 2.0]


def test_exclude_td_from_pytree_makes_tensordicts_leaves_for_a_block():
    # torchrl.objectives.utils._pseudo_vmap
    from torch.utils._pytree import tree_flatten

    from tensordict.nn.functional_modules import _exclude_td_from_pytree

    td = TensorDict(a=torch.zeros(2), b=torch.ones(2), batch_size=[2])
    assert len(tree_flatten(td)[0]) == 2
    with _exclude_td_from_pytree():
        leaves, _ = tree_flatten([td, torch.zeros(1)])
        assert len(leaves) == 2 and leaves[0] is td
    assert len(tree_flatten(td)[0]) == 2


def test_keys_of_a_tensordict_holding_a_heterogeneous_lazy_stack():
    # torchrl.testing.HeterogeneousCountingEnv._reset: reset_td.keys(True) where
    # "agents" is a lazy stack whose members' tensors differ in shape
    agents = LazyStackedTensorDict.lazy_stack(
        [
            TensorDict(lidar=torch.zeros(8), n={"y": torch.zeros(3)}),
            TensorDict(lidar=torch.zeros(0), n={"y": torch.zeros(2)}),
        ]
    )
    td = TensorDict(agents=agents, a=torch.zeros(2), batch_size=[2])
    keys = list(td.keys(True))
    assert keys == [
        ("agents", "lidar"),
        ("agents", "n", "y"),
        ("agents", "n"),
        "agents",
        "a",
    ]
    assert len(td.keys(True)) == len(keys)
    assert list(td.keys(True, True)) == [("agents", "lidar"), ("agents", "n", "y"), "a"]


def _hetero(value: float) -> LazyStackedTensorDict:
    """A lazy stack whose members' ``action`` differ in shape (a heterogeneous env)."""
    return LazyStackedTensorDict(
        *[
            TensorDict(obs=torch.zeros(2), action=torch.full((n,), value))
            for n in (3, 2, 2)
        ],
        stack_dim=0,
    )


def test_update_of_a_heterogeneous_lazy_stack_goes_member_by_member():
    # torchrl.envs.EnvBase.rand_action: `tensordict.update(spec.rand())`, both lazy
    target, source = _hetero(0.0), _hetero(1.0)
    target.update(source)
    assert [m["action"].tolist() for m in target.tensordicts] == [
        [1.0, 1.0, 1.0],
        [1.0, 1.0],
        [1.0, 1.0],
    ]
    nested = TensorDict(agents=_hetero(0.0), batch_size=[3])
    nested.update(TensorDict(agents=_hetero(2.0), batch_size=[3]))
    assert nested["agents"].tensordicts[1]["action"].tolist() == [2.0, 2.0]
    target.update_(_hetero(3.0))
    assert target.tensordicts[0]["action"].tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(
        RuntimeError
    ):  # a wrong shape in the last member: nothing written
        bad = _hetero(4.0)
        bad.tensordicts[2]["action"] = torch.zeros(5)
        target.update_(bad)
    assert target.tensordicts[0]["action"].tolist() == [3.0, 3.0, 3.0]


def test_heterogeneous_read_error_opens_with_the_words_torchrl_matches():
    # torchrl.envs.utils._set (step_mdp) re.match()es this opening to fall back to a
    # member-by-member copy
    import re

    with pytest.raises(RuntimeError) as info:
        _hetero(0.0).get("action")
    assert re.match(r"Failed to stack tensors within a tensordict", str(info.value))
    assert "'action'" in str(info.value)


def test_all_and_any_over_every_value_read_heterogeneous_stacks_inside():
    # TorchRL's step_mdp tests: `(out_func == out_cls).all()` on a tensordict holding one
    td = TensorDict(agents=_hetero(1.0), batch_size=[3])
    assert (td == td.clone()).all() is True
    assert td.any() is True
    td["agents"].tensordicts[2]["action"][0] = 0.0
    assert td.all() is False


def test_lazy_stack_of_non_tensor_data_is_a_non_tensor_stack():
    # torchrl.data.NonTensor.rand: lazy_stack([NonTensorData...]) then `.data`, `[0]`
    from tensordict import NonTensorData, NonTensorStack, lazy_stack

    stack = lazy_stack([NonTensorData("x", batch_size=[3]) for _ in range(2)])
    assert isinstance(stack, NonTensorStack) and stack.batch_size == (2, 3)
    assert stack.data == "x"
    assert isinstance(stack[0], NonTensorStack) and isinstance(
        stack[0, 1], NonTensorData
    )
    assert stack[0, 1].data == "x"
    mixed = NonTensorStack("a", "b")
    with pytest.raises(AttributeError, match="tolist"):
        mixed.data
    td = TensorDict(a=torch.zeros(2), s=mixed, batch_size=[2])
    assert td[1]["s"] == "b"  # a tensordict's element holds the value itself


def test_sequence_out_keys_follow_the_last_writer():
    # torchrl.modules.QValueActor returns (action, action_value, chosen_action_value):
    # the value module rewrites action_value after the model wrote it
    model = TensorDictModule(lambda x: x, in_keys=["obs"], out_keys=["av"])
    pick = TensorDictModule(
        lambda x: (x.argmax(-1), x, x.max(-1, keepdim=True).values),
        in_keys=["av"],
        out_keys=["action", "av", "chosen"],
    )
    sequence = TensorDictSequential(model, pick)
    assert sequence.out_keys == ["action", "av", "chosen"]
    action, values, chosen = sequence(torch.tensor([1.0, 5.0, 2.0]))
    assert action.item() == 1 and chosen.tolist() == [5.0]


def _sampler(generator):
    return ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=D.Normal,
        default_interaction_type="random",
        generator=generator,
    )


def _params():
    return TensorDict(loc=torch.zeros(4), scale=torch.ones(4))


def test_probabilistic_module_draws_from_its_generator():
    # torchrl.modules.ProbabilisticActor(generator=...) passes it through
    torch.manual_seed(5)
    a = _sampler(torch.Generator().manual_seed(0))(_params())["action"]
    torch.manual_seed(6)
    before = torch.get_rng_state()
    b = _sampler(0)(_params())["action"]  # an int: the seed of the module's own
    assert torch.equal(torch.get_rng_state(), before)  # the global stream is untouched
    assert torch.equal(a, b)
    module = _sampler(torch.Generator().manual_seed(0))
    assert not torch.equal(module(_params())["action"], module(_params())["action"])


def test_probabilistic_module_reads_its_generator_from_a_key():
    from tensordict import NonTensorData

    module = _sampler("rng")

    def run(seed):
        td = _params()
        td["rng"] = NonTensorData(seed)
        return [module(td)["action"].clone() for _ in range(3)]

    first, again = run(42), run(42)  # an int seed at the key: reproducible, advancing
    assert all(torch.equal(x, y) for x, y in zip(first, again))
    assert not torch.equal(first[0], first[1])
    td = _params()
    td["rng"] = NonTensorData(torch.Generator().manual_seed(0))
    own = _sampler(torch.Generator().manual_seed(0))(_params())["action"]
    assert torch.equal(module(td)["action"], own)
    with pytest.raises(TypeError, match="rng"):
        bad = _params()
        bad["rng"] = NonTensorData("not a generator")
        module(bad)


def test_missing_key_error_quotes_the_key_as_0_15_3_does():
    # TorchRL's test_dqn.py::TestQMixer matches 'key "chosen_action_value" not found'
    td = TensorDict(a=torch.zeros(1), batch_size=[1])
    with pytest.raises(KeyError, match='key "chosen" not found in TensorDict'):
        td["chosen"]
    with pytest.raises(KeyError, match='key "chosen" not found in TensorDict'):
        td[("chosen",)]


def test_stacking_steps_that_hold_heterogeneous_lazy_stacks():
    # torchrl.envs.EnvBase.rollout(return_contiguous=False) then dense_stack_tds: each
    # step holds the agents as a lazy stack whose members differ in shape
    from tensordict import dense_stack_tds, maybe_dense_stack

    steps = [TensorDict(agents=_hetero(float(t)), batch_size=[]) for t in range(4)]
    stacked = maybe_dense_stack(steps, 0)
    assert type(stacked) is TensorDict and stacked.batch_size == (4,)
    agents = stacked["agents"]
    assert isinstance(agents, LazyStackedTensorDict)
    assert agents.batch_size == (4, 3) and agents.stack_dim == 1
    assert agents.tensordicts[0]["action"].shape == (4, 3)
    assert agents.tensordicts[1]["action"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    lazy = LazyStackedTensorDict(*steps, stack_dim=0)
    dense = dense_stack_tds(lazy)
    assert dense["agents"].stack_dim == 1
    assert torch.equal(
        dense["agents"].tensordicts[2]["action"], agents.tensordicts[2]["action"]
    )
    other = [TensorDict(agents=_hetero(0.0), batch_size=[]) for _ in range(2)]
    other[1]["agents"].tensordicts[0]["action"] = torch.zeros(
        5
    )  # shapes differ in time: dense where it can be, lazy below (as 0.15.3)
    stacked = maybe_dense_stack(other, 0)
    assert type(stacked) is TensorDict
    assert isinstance(stacked.get("agents"), LazyStackedTensorDict)
    actions = stacked.get("agents").tensordicts[0].get("action", as_list=True)
    assert actions[1].shape == (5,)


def test_empty_of_a_lazy_stack_at_its_own_batch_size_stays_lazy():
    # torchrl.envs.utils._StepMDP._grab_and_place: val.empty(batch_size=val.batch_size)
    # then unbind(val_out.stack_dim)
    stack = _hetero(0.0)
    empty = stack.empty(batch_size=stack.batch_size)
    assert isinstance(empty, LazyStackedTensorDict) and empty.stack_dim == 0
    assert len(empty.unbind(empty.stack_dim)) == 3 and not list(empty.keys())
    assert (
        type(stack.empty(batch_size=[])) is TensorDict
    )  # another size: one TensorDict


def test_shape_ops_of_a_tensordict_holding_a_non_tensor_stack():
    # torchrl.data.Choice over NonTensorStack entries (test_specs.py::TestExpand)
    from tensordict import NonTensorStack

    td = TensorDict(s=NonTensorStack("a", "b"), x=torch.zeros(2), batch_size=[2])
    assert td.unsqueeze(0)["s"].tolist() == [["a", "b"]]
    assert td.expand(3, 2)["s"].tolist() == [["a", "b"]] * 3


def test_dist_sample_draws_what_the_interaction_type_asks():
    # torchrl.objectives.value.advantages: actor_net._dist_sample(dist, interaction_type=...)
    from tensordict.nn import InteractionType

    sequence = ProbabilisticTensorDictSequential(
        TensorDictModule(
            lambda x: (x + 1, torch.ones_like(x)),
            in_keys=["obs"],
            out_keys=["loc", "scale"],
        ),
        _sampler(None),
    )
    dist = sequence.get_dist(TensorDict(obs=torch.zeros(3)))
    mode = sequence._dist_sample(dist, interaction_type=InteractionType.DETERMINISTIC)
    assert torch.equal(mode, torch.ones(3))
    torch.manual_seed(0)
    first = sequence._dist_sample(dist, interaction_type="random")
    torch.manual_seed(0)
    assert torch.equal(first, sequence._dist_sample(dist, interaction_type="random"))
    assert not torch.equal(first, mode)
