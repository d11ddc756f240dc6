"""What TorchRL's heterogeneous and growing (dynamic-spec) environments rely on: a walk
of a lazy stack's keys reads no stacked values, ``is_leaf`` sees a non-tensor entry as
``NonTensorData`` on a lazy stack as on a TensorDict, and ``where(out=)`` gives ``out``
new entries (a lazy stack's member with a uniform condition takes one side whole)."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, NonTensorData, TensorDict
from tensordict.base import _default_is_leaf, _is_leaf_nontensor


def _heterogeneous():
    a = LazyStackedTensorDict.lazy_stack(
        [TensorDict(action=torch.zeros(3)), TensorDict(action=torch.zeros(2))]
    )
    b = LazyStackedTensorDict.lazy_stack(
        [TensorDict(action=torch.zeros(2)), TensorDict(action=torch.zeros(2))]
    )
    return LazyStackedTensorDict.lazy_stack(
        [TensorDict(n=a, batch_size=[2]), TensorDict(n=b, batch_size=[2])]
    )


def test_keys_of_nested_heterogeneous_stacks():
    td = _heterogeneous()
    assert set(td.keys(True, True)) == {("n", "action")}
    assert set(td.keys(True)) == {"n", ("n", "action")}
    assert ("n", "action") in td.keys(True, True)
    # reading the value still refuses to stack the ragged leaves
    with pytest.raises(RuntimeError, match="as_list=True"):
        td.get(("n", "action"))


@pytest.mark.parametrize("stack_dim", [0, -1])
def test_is_leaf_sees_non_tensor_entries_as_on_a_tensordict(stack_dim):
    td = TensorDict(
        a=torch.zeros(3), s=NonTensorData("x", batch_size=[3]), batch_size=[3]
    )
    lazy = LazyStackedTensorDict.lazy_stack([td.clone(), td.clone()], stack_dim)
    for kind in (td, lazy):
        assert set(kind.keys(True, True, is_leaf=_default_is_leaf)) == {"a"}
        assert set(kind.keys(True, True, is_leaf=_is_leaf_nontensor)) == {"a", "s"}


def test_where_out_gives_new_entries_and_keeps_shared_tensors():
    # torchrl.envs.utils._update_during_reset: node.where(~reset, reset_td, out=node)
    kept = torch.full((3,), 7.0)
    out = TensorDict(obs=kept, batch_size=[3])
    src = TensorDict(obs=torch.full((3,), 4.0), batch_size=[3])
    other = TensorDict(obs=torch.zeros(3), batch_size=[3])
    assert src.where(torch.tensor([False, True, False]), other, out=out) is out
    assert out["obs"].tolist() == [0.0, 4.0, 0.0]
    assert kept.tolist() == [7.0, 7.0, 7.0]


def test_where_on_a_lazy_stack_takes_whole_members_of_other_shapes():
    # a reset member takes the reset's (shorter) observation; the others keep theirs
    grown = torch.full((3, 5, 2), 4.0)
    node = LazyStackedTensorDict.lazy_stack(
        [TensorDict(obs=grown), TensorDict(obs=torch.full((3, 2, 2), 1.0))]
    )
    reset = LazyStackedTensorDict.lazy_stack(
        [TensorDict(obs=torch.zeros(3, 1, 2)), TensorDict(obs=torch.zeros(3, 0, 2))]
    )
    keep = torch.tensor([False, True])
    result = node.where(keep, other=reset, pad=0)
    assert [t.shape for t in result.get("obs", as_list=True)] == [(3, 1, 2), (3, 2, 2)]
    assert node.where(keep, other=reset, out=node, pad=0) is node
    obs = node.get("obs", as_list=True)
    assert [t.shape for t in obs] == [(3, 1, 2), (3, 2, 2)]
    assert obs[0].sum() == 0 and obs[1].unique().tolist() == [1.0]
    assert grown.unique().tolist() == [4.0]  # the step that held it keeps it
    with pytest.raises(KeyError, match="not found and no pad value provided"):
        node.where(keep, other=reset.exclude("obs"))


def test_where_on_a_lazy_stack_takes_non_tensor_entries_of_whole_members():
    # TorchRL's partial resets of batched environments whose observations hold text
    node = LazyStackedTensorDict.lazy_stack(
        [TensorDict(s="6", x=torch.zeros(())) for _ in range(2)]
    )
    reset = LazyStackedTensorDict.lazy_stack(
        [TensorDict(s="0", x=torch.ones(())), TensorDict(s="7", x=torch.ones(()))]
    )
    keep = torch.tensor([False, True])
    assert node.where(keep, reset)["s"] == ["0", "6"]
    assert node.where(keep, reset, out=node, pad=0) is node
    assert node["s"] == ["0", "6"] and node["x"].tolist() == [1.0, 0.0]


def _holding_heterogeneous_stacks():
    inner = LazyStackedTensorDict.lazy_stack(
        [
            LazyStackedTensorDict.lazy_stack(
                [TensorDict(lidar=torch.zeros(8)), TensorDict(lidar=torch.zeros(0))]
            )
            for _ in range(3)
        ],
        1,
    )
    return TensorDict(lazy=inner, a=torch.arange(6).view(2, 3), batch_size=[2, 3])


def _lidar_shapes(td):
    def flat(values):
        if isinstance(values, list):
            return [shape for v in values for shape in flat(v)]
        return [values.shape]

    return flat(td["lazy"].get("lidar", as_list=True))


@pytest.mark.parametrize("unbind", [lambda td, d: td.unbind(d), torch.unbind])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind_of_a_tensordict_holding_heterogeneous_lazy_stacks(unbind, dim):
    # torchrl.envs.utils.check_env_specs unbinds rollouts of heterogeneous envs
    td = _holding_heterogeneous_stacks()
    parts = unbind(td, dim)
    assert len(parts) == td.batch_size[dim]
    for i, part in enumerate(parts):
        expected = td[(slice(None),) * (dim % 2) + (i,)]
        assert part.batch_size == expected.batch_size
        assert (part["a"] == expected["a"]).all()
        assert isinstance(part["lazy"], LazyStackedTensorDict)
        assert _lidar_shapes(part) == _lidar_shapes(expected)


@pytest.mark.parametrize(
    "cut, sizes",
    [
        (lambda td: td.split(2, 1), [2, 1]),
        (lambda td: td.chunk(3, 1), [1, 1, 1]),
        (lambda td: td.tensor_split([1], 1), [1, 2]),
    ],
)
def test_pieces_of_a_tensordict_holding_heterogeneous_lazy_stacks(cut, sizes):
    td = _holding_heterogeneous_stacks()
    parts = cut(td)
    assert [p.batch_size[1] for p in parts] == sizes
    start = 0
    for part, size in zip(parts, sizes):
        expected = td[:, start : start + size]
        assert (part["a"] == expected["a"]).all()
        assert _lidar_shapes(part) == _lidar_shapes(expected)
        start += size


def test_where_out_takes_results_that_require_grad():
    # TorchRL's ConsistentDropout primer resets masks with where(..., out=td)
    w = torch.ones(3, requires_grad=True)
    out = TensorDict(m=torch.zeros(3), batch_size=[3])
    src = TensorDict(m=w * 2, batch_size=[3])
    src.where(torch.tensor([True, False, True]), 0.0, out=out)
    assert out["m"].requires_grad and out["m"].tolist() == [2.0, 0.0, 2.0]
