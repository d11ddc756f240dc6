"""What TorchRL's environments, losses and collectors rely on beyond the core
selection (docs/torchrl.md): behaviour of tensordict 0.15.3 that TorchRL's code paths
read."""

from __future__ import annotations

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, assert_close


def _hetero():
    return LazyStackedTensorDict(
        TensorDict(action=torch.zeros(3), b=torch.zeros(1)),
        TensorDict(action=torch.zeros(2), b=torch.zeros(1)),
        stack_dim=0,
    )


def test_items_and_values_nested_are_generators_listing_a_node_before_its_entries():
    td = TensorDict(
        a=torch.zeros(2),
        n=TensorDict(b=torch.ones(2), m=TensorDict(c=torch.ones(2))),
        z=torch.zeros(2),
    )
    items = td.items(True)
    assert not isinstance(items, list) and iter(items) is items
    assert [k for k, _ in items] == [
        "a",
        "n",
        ("n", "b"),
        ("n", "m"),
        ("n", "m", "c"),
        "z",
    ]
    kinds = [type(v).__name__ for v in td.values(True)]
    assert kinds == ["Tensor", "TensorDict", "Tensor", "TensorDict", "Tensor", "Tensor"]
    # keys(True) keeps its order: a nested key after its entries
    assert list(td.keys(True)) == [
        "a",
        ("n", "b"),
        ("n", "m", "c"),
        ("n", "m"),
        "n",
        "z",
    ]
    assert [k for k, _ in td.items(True, True)] == [
        "a",
        ("n", "b"),
        ("n", "m", "c"),
        "z",
    ]


def test_values_nested_stop_early_before_stacking_members_of_different_shapes():
    # TorchRL's fake_tensordict: any(isinstance(v, LazyStackedTensorDict) for v in
    # action.values(True)) meets the lazy stack before reading its entries
    td = TensorDict(lazy=_hetero(), batch_size=[2])
    assert any(isinstance(v, LazyStackedTensorDict) for v in td.values(True))
    with pytest.raises(
        RuntimeError, match="Failed to stack tensors within a tensordict"
    ):
        list(td.values(True))


def test_items_nested_may_write_while_walking():
    td = TensorDict(a=torch.zeros(2), n=TensorDict(b=torch.ones(2)))
    for key, value in td.items(True, True):
        td.set(("copy",) + ((key,) if isinstance(key, str) else key), value.clone())
    assert ("copy", "n", "b") in td.keys(True)


def test_stack_of_different_shapes_names_the_key_with_0153s_phrase():
    a = TensorDict(obs=torch.zeros(3, 1, 2), batch_size=[3])
    b = TensorDict(obs=torch.zeros(3, 2, 2), batch_size=[3])
    # TorchRL's rollout matches this phrase to tell that the specs are dynamic
    with pytest.raises(
        RuntimeError, match="The shapes of the tensors to stack is incompatible"
    ) as info:
        torch.stack([a, b], 1)
    assert "obs" in str(info.value)
    nested_a = TensorDict(n=a, batch_size=[3])
    nested_b = TensorDict(n=b, batch_size=[3])
    with pytest.raises(RuntimeError, match="incompatible.*for key \\('n', 'obs'\\)"):
        torch.stack([nested_a, nested_b], 0)


def test_assert_close_of_lazy_stacks_along_different_dims_compares_members():
    rows = [
        LazyStackedTensorDict(
            *[TensorDict(o=torch.full((i,), float(j))) for i in (1, 2)], stack_dim=0
        )
        for j in range(3)
    ]
    by_rows = LazyStackedTensorDict(*rows, stack_dim=0)
    cols = [
        LazyStackedTensorDict(
            *[TensorDict(o=torch.full((i,), float(j))) for j in range(3)], stack_dim=0
        )
        for i in (1, 2)
    ]
    by_cols = LazyStackedTensorDict(*cols, stack_dim=1)
    assert by_rows.batch_size == by_cols.batch_size == (3, 2)
    assert assert_close(by_rows, by_cols)
    cols[1].tensordicts[2]["o"] += 1
    with pytest.raises(AssertionError, match="does not match"):
        assert_close(by_rows, by_cols)


def test_stack_of_different_keys_leads_with_0153s_phrase_unquoted():
    import re

    a = TensorDict(obs=torch.zeros(3), reward=torch.zeros(1))
    b = TensorDict(obs=torch.zeros(3))
    # TorchRL's rollout re.match-es the start of the message (a KeyError's str()
    # would start with a quote) to say which key the environment left out
    for pair in ([a, b], [b, a]):
        with pytest.raises(RuntimeError) as info:
            torch.stack(pair, 0)
        assert isinstance(info.value, KeyError)
        assert re.match(
            "The sets of keys in the tensordicts to stack are exclusive",
            str(info.value),
        )
        assert "reward" in str(info.value)


def test_comparisons_broadcast_leaves_as_other_binary_ops():
    small = TensorDict(obs=torch.zeros(1))
    large = TensorDict(obs=torch.zeros(3))
    for result in (small == large, small != large, small < large, large >= small):
        assert result["obs"].shape == (3,)
    assert (small == large).all()
    # in place, the other operand still has to broadcast to the entry
    with pytest.raises(RuntimeError, match="does not broadcast"):
        small.add_(large)


def test_module_write_to_tensordict_writes_tensors_under_out_keys():
    from tensordict.nn import TensorDictModule

    module = TensorDictModule(torch.nn.Linear(2, 3), in_keys=["x"], out_keys=["y", "z"])
    td = TensorDict(x=torch.zeros(2))
    out = module._write_to_tensordict(td, (torch.ones(3), torch.zeros(1)))
    assert out is td and set(out.keys()) == {"x", "y", "z"}
    other = TensorDict()
    assert module._write_to_tensordict(td, [torch.ones(3)], other, ["w"]) is other
    assert list(other.keys()) == ["w"]
    with pytest.raises(RuntimeError, match="There are more out_keys than tensors"):
        module._write_to_tensordict(td, (torch.ones(3),))
    with pytest.raises(RuntimeError, match="There are more tensors"):
        module._write_to_tensordict(td, (torch.ones(3),) * 3)


def test_update_copies_non_tensor_numbers_as_non_tensor_data():
    source = TensorDict(batch_size=[2])
    source.set_non_tensor("step", 0)
    dest = TensorDict(batch_size=[2])
    dest.update(source)
    assert dest.get_non_tensor("step") == 0
    assert not isinstance(dest["step"], torch.Tensor)
    # from a lazy stack whose members hold the same value (TorchRL's SerialEnv
    # writes its environments' non-tensor entries so)
    members = []
    for _ in range(2):
        member = TensorDict(obs=torch.ones(3))
        member.set_non_tensor("step", 0)
        members.append(member)
    dest = TensorDict(obs=torch.zeros(2, 3), batch_size=[2])
    dest.update(LazyStackedTensorDict(*members), keys_to_update=["step"])
    assert dest.get_non_tensor("step") == 0


def test_tensorclass_field_of_a_non_tensor_stack_reads_as_its_values():
    from tensordict import TensorClass, set_capture_non_tensor_stack

    class Message(TensorClass["nocast"]):
        role: str
        content: str

    with set_capture_non_tensor_stack(False):
        history = torch.stack(
            [Message(role="system", content="0"), Message(role="user", content="1")]
        )
        # TorchRL's history environments: int(history.content[-1]) + 1
        assert isinstance(history.content, list)
        assert history.content == ["0", "1"]
        assert int(history.content[-1]) + 1 == 2
        longer = torch.stack(
            list(history.unbind(0)) + [Message(role="user", content="2")]
        )
        assert longer.content == ["0", "1", "2"]
        assert longer[2].content == "2"


def test_stacks_keep_tensorclass_entries_typed():
    from tensordict import TensorClass, set_capture_non_tensor_stack

    class Message(TensorClass["nocast"]):
        role: str
        content: str

    with set_capture_non_tensor_stack(False):
        history = torch.stack(
            [Message(role="system", content="0"), Message(role="user", content="1")]
        )
        tds = [
            TensorDict(history=history.clone(), obs=torch.zeros(1)) for _ in range(2)
        ]
        dense = LazyStackedTensorDict.maybe_dense_stack(tds)
        assert type(dense) is TensorDict
        assert type(dense.get("history")) is Message
        assert type(dense[0]["history"]) is Message
        lazy = LazyStackedTensorDict(*tds)
        assert type(lazy.get("history")) is Message
        out = lazy.named_apply(lambda name, x: x.clone(), nested_keys=True)
        assert type(out.get("history")) is Message
        dest = TensorDict(batch_size=[2])
        dest.update(lazy, keys_to_update=["history"])
        assert type(dest.get("history")) is Message


def test_keys_of_a_lazy_stack_whose_nested_members_differ_in_batch_size():
    a = TensorDict(h=TensorDict(c=torch.zeros(2), batch_size=[2]), x=torch.zeros(1))
    b = TensorDict(h=TensorDict(c=torch.zeros(3), batch_size=[3]), x=torch.zeros(1))
    lazy = LazyStackedTensorDict(a, b)
    assert set(lazy.keys(True, True)) == {("h", "c"), "x"}
    assert lazy.select("x")["x"].shape == (2, 1)


def test_update_batch_size_takes_the_sources_batch_size_keeping_nested_identity():
    node = TensorDict(
        history=TensorDict(step=torch.zeros(3), batch_size=[3]), obs=torch.zeros(1)
    )
    nested = node["history"]
    source = TensorDict(
        history=TensorDict(step=torch.ones(2), batch_size=[2]), obs=torch.ones(1)
    )
    assert node.update(source, update_batch_size=True) is node
    assert node["history"] is nested and nested.batch_size == (2,)
    assert (nested["step"] == 1).all() and (node["obs"] == 1).all()
    short = TensorDict(a=torch.zeros(3), batch_size=[3])
    short.update(
        TensorDict(a=torch.ones(2, 4), batch_size=[2, 4]), update_batch_size=True
    )
    assert short.batch_size == (2, 4)
    with pytest.raises(RuntimeError, match="not present in the source"):
        TensorDict(a=torch.zeros(3), b=torch.zeros(3), batch_size=[3]).update(
            TensorDict(a=torch.ones(2), batch_size=[2]), update_batch_size=True
        )


def test_nested_select_and_filters_of_lazy_stacks_of_different_shapes():
    lazy = LazyStackedTensorDict(
        TensorDict(action=torch.zeros(3), lidar=torch.zeros(8), s="x"),
        TensorDict(action=torch.zeros(2), lidar=torch.zeros(0), s="y"),
    )
    root = TensorDict(lazy=lazy, obs=torch.zeros(2, 1), batch_size=[2])
    nested = TensorDict(next=root.clone(False), batch_size=[2])
    for td, prefix in ((root, ()), (nested, ("next",))):
        picked = td.select(prefix + ("lazy", "action"), prefix + ("obs",))
        sub = picked.get(prefix + ("lazy",))
        assert isinstance(sub, LazyStackedTensorDict)
        assert [list(m.keys()) for m in sub.tensordicts] == [["action"], ["action"]]
        assert [m["action"].shape[0] for m in sub.tensordicts] == [3, 2]
    filtered = lazy.filter_non_tensor_data()
    assert [sorted(m.keys()) for m in filtered.tensordicts] == [["action", "lidar"]] * 2
    # a dense stack of such tensordicts stacks their non-tensor entries without
    # reading the lazy stack's tensors
    stacked = torch.stack([root, root.clone()], 0)
    assert stacked.batch_size == (2, 2)


def test_select_keeps_the_order_of_the_keys_asked_for():
    td = TensorDict(a=torch.zeros(1), n=TensorDict(c=torch.zeros(1), d=torch.zeros(1)))
    picked = td.select("a", ("n", "c"), ("n", "d"))
    assert list(picked.keys(True, True)) == ["a", ("n", "c"), ("n", "d")]
    picked = td.select(("n", "d"), "a", ("n", "c"))
    assert list(picked.keys()) == ["n", "a"]
