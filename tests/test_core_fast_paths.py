"""The fast paths of the core (update/update_ without a snapshot, unflatten_keys on
plain dicts, the dict-like reads of TensorDict) give what the general paths give, and
leave the tensordict unchanged when a write fails."""

import pytest
import torch
from tensordict import LazyStackedTensorDict, TensorDict


def nested(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return TensorDict(
        {
            "a": torch.randn(3, 4, generator=gen),
            "n": {"b": torch.randn(3, 2, generator=gen)},
        },
        batch_size=[3],
    )


class TestUpdateInPlace:
    def test_writes_every_leaf_into_the_same_tensors(self):
        td, other = nested(), nested(1)
        a, b = td["a"], td["n", "b"]
        assert td.update_(other) is td
        assert td["a"] is a and td["n", "b"] is b
        assert torch.equal(a, other["a"]) and torch.equal(b, other["n", "b"])

    def test_from_a_nested_dict(self):
        td = nested()
        td.update_({"n": {"b": torch.ones(3, 2)}})
        assert torch.equal(td["n", "b"], torch.ones(3, 2))

    def test_broadcast_value_takes_the_general_path(self):
        td = nested()
        td.update_({"a": torch.ones(3, 1)})  # broadcasts to (3, 4)
        assert torch.equal(td["a"], torch.ones(3, 4))

    def test_leaf_requiring_grad_refuses_and_nothing_changes(self):
        td = nested()
        before = td.clone()
        td.set("n", TensorDict(b=torch.zeros(3, 2, requires_grad=True), batch_size=[3]))
        before["n", "b"] = torch.zeros(3, 2)
        with pytest.raises(RuntimeError):
            td.update_(nested(1))
        assert torch.equal(td["a"], before["a"])  # the first leaf was not written

    def test_overlapping_value_refuses_and_nothing_changes(self):
        base = torch.arange(8.0)
        td = TensorDict({"a": torch.zeros(3), "b": base[:4]}, batch_size=[])
        with pytest.raises(RuntimeError):
            td.update_({"a": torch.ones(3), "b": base[2:6]})
        assert torch.equal(td["a"], torch.zeros(3))
        assert torch.equal(base, torch.arange(8.0))

    def test_same_tensor_is_a_no_op(self):
        td = nested()
        expected = td.clone()
        td.update_(td.copy())
        assert (td == expected).all()


class TestUpdate:
    def test_sets_and_merges_nested(self):
        td = nested()
        n = td["n"]
        td.update({"c": torch.ones(3), "n": {"d": torch.ones(3, 1)}})
        assert td["n"] is n and set(n.keys()) == {"b", "d"}
        assert torch.equal(td["c"], torch.ones(3))

    def test_clone(self):
        td, value = nested(), torch.ones(3)
        td.update({"c": value}, clone=True)
        assert td["c"] is not value and torch.equal(td["c"], value)

    def test_bad_shape_last_changes_nothing(self):
        td = nested()
        keys = set(td.keys(True))
        with pytest.raises(RuntimeError, match="bad"):
            td.update({"c": torch.ones(3), "n": {"bad": torch.ones(4)}})
        assert set(td.keys(True)) == keys

    def test_locked_level_changes_nothing(self):
        td = nested()
        td["n"].lock_()
        with pytest.raises(RuntimeError, match="locked"):
            td.update({"c": torch.ones(3), "n": {"d": torch.ones(3)}})
        assert "c" not in td.keys()

    def test_device_of_the_level_is_kept(self):
        td = TensorDict({"a": torch.zeros(2)}, batch_size=[2], device="cpu")
        td.update({"b": torch.ones(2)})
        assert td["b"].device == torch.device("cpu")


class TestUnflattenKeys:
    def test_round_trip_deep(self):
        src = {
            ".".join([str(j) for j in range(i)] + ["t"]): torch.full((3,), float(i))
            for i in range(1, 8)
        }
        flat = TensorDict(src, batch_size=[3])
        out = flat.unflatten_keys(".")
        for key, value in src.items():
            assert out[tuple(key.split("."))] is value
        assert out.flatten_keys(".").keys() == flat.keys()

    def test_levels_share_batch_size_device_and_names(self):
        flat = TensorDict({"a.b.c": torch.zeros(3, 2)}, batch_size=[3], names=["t"])
        out = flat.unflatten_keys()
        assert out["a"].batch_size == out["a", "b"].batch_size == torch.Size([3])
        assert out["a", "b"].names == ["t"]

    @pytest.mark.parametrize("key", [".a", "a.", "a..b"])
    def test_empty_parts_as_the_general_path(self, key):
        out = TensorDict({key: torch.zeros(2)}, batch_size=[2]).unflatten_keys()
        assert tuple(key.split(".")) in out.keys(True, True)

    def test_entry_and_nested_keys_merge(self):
        flat = TensorDict(
            {"a.b": torch.zeros(2), "a": TensorDict(c=torch.ones(2), batch_size=[2])},
            batch_size=[2],
        )
        out = flat.unflatten_keys()
        assert set(out["a"].keys()) == {"b", "c"}

    def test_collision_raises(self):
        flat = TensorDict({"a.b": torch.zeros(2), "a": torch.ones(2)}, batch_size=[2])
        with pytest.raises(Exception, match="a"):
            flat.unflatten_keys()

    def test_nested_tensordicts_are_unflattened_and_left_alone(self):
        inner = TensorDict({"x.y": torch.zeros(2)}, batch_size=[2])
        flat = TensorDict({"n": inner, "m.k": torch.ones(2)}, batch_size=[2])
        out = flat.unflatten_keys()
        assert ("n", "x", "y") in out.keys(True, True)
        assert list(inner.keys()) == ["x.y"]

    def test_inplace(self):
        flat = TensorDict({"a.b": torch.zeros(2)}, batch_size=[2])
        assert flat.unflatten_keys(inplace=True) is flat
        assert ("a", "b") in flat.keys(True)


class TestDictReads:
    def test_views_are_live_and_nested_membership_works(self):
        td = nested()
        keys, values, items = td.keys(), td.values(), td.items()
        td["z"] = torch.zeros(3)
        assert "z" in keys and len(values) == 3 and ("z", td["z"]) in list(items)
        assert ("n", "b") in td.keys(True) and ("n", "b") not in td.keys()
        assert ("n", "b") in td.keys(include_nested=True, leaves_only=True)
        assert list(td.keys(sort=True)) == ["a", "n", "z"]

    def test_nested_membership_as_the_general_view(self):
        # `key in td.keys(...)` reads the storage dicts of dense levels directly; every
        # answer must be the general view's, through other containers and odd keys too
        from tensordict import LazyStackedTensorDict
        from tensordict.base import _KeysView

        td = nested()
        td["s"] = "text"
        td["n", "deep"] = TensorDict({"x": torch.zeros(3)}, [3])
        td["lazy"] = LazyStackedTensorDict(
            *[TensorDict({"y": torch.zeros(())}, []) for _ in range(3)], stack_dim=0
        )
        keys = [
            "a",
            "n",
            "s",
            "missing",
            ("a",),
            ("n", "b"),
            ("n", "missing"),
            ("a", "b"),
            ("s", "x"),
            ("missing", "b"),
            ("n", "deep", "x"),
            ("n", ("deep", "x")),
            ("lazy", "y"),
            ("lazy", "z"),
            (),
            3,
            ("n", 3),
        ]
        is_tensor = lambda cls: issubclass(cls, torch.Tensor)  # noqa: E731
        for options in [
            (True, False, None),
            (True, True, None),
            (False, True, None),
            (True, True, is_tensor),
            (False, False, None),
        ]:
            view = td.keys(*options, sort=True)
            general = _KeysView(td, *options, True)
            for key in keys:
                assert (key in view) == (key in general), (options, key)
        assert ("n", "b") in td.keys(True) and ("n", "deep") not in td.keys(True, True)

    def test_tuple_reads_keys_and_indices_as_before(self):
        # td[tuple] tries the storage dicts first (unrolled for three levels): keys of
        # any depth read their entry, other tuples index the batch dims
        td = TensorDict(
            {
                "a": torch.arange(6).reshape(3, 2),
                "s": "text",
                "n": {"m": {"k": {"deep": torch.ones(3)}, "x": torch.zeros(3)}},
            },
            batch_size=[3],
        )
        assert td["a",] is td["a"] and td["n", "m", "x"] is td["n"]["m"]["x"]
        assert td["n", "m", "k", "deep"] is td["n"]["m"]["k"]["deep"]
        assert td["n", ("m", "x")] is td["n", "m", "x"] and td["s",] == "text"
        assert td[()].batch_size == (3,) and td[0, ...].batch_size == ()
        assert torch.equal(td[(slice(0, 2),)]["a"], td["a"][:2])
        assert torch.equal(td[(torch.tensor([2, 0]),)]["a"], td["a"][[2, 0]])
        for missing in (("zz",), ("n", "zz"), ("n", "m", "zz"), ("n", "m", "k", "zz")):
            with pytest.raises(KeyError, match="zz"):
                td[missing]
        with pytest.raises(KeyError):
            td["a", "b"]  # a tensor on the way

    def test_get_default(self):
        td = nested()
        assert td.get("missing") is None
        assert td.get("missing", 3) == 3
        assert td.get("missing", default=4) == 4
        assert td.get(("n", "missing"), 5) == 5
        with pytest.raises(KeyError):
            td["missing"]

    def test_get_takes_the_lazy_stack_options(self):
        # code written for lazy stacks and dense tensordicts alike (TorchRL's LLM
        # wrappers call get(key, as_list=True)) gets the stored tensor, as in 0.15.3
        td = nested()
        for options in (
            {"as_list": True},
            {"as_padded_tensor": True, "padding_value": -1.0, "padding_side": "left"},
            {"as_nested_tensor": True, "layout": torch.jagged},
        ):
            assert td.get("a", **options) is td["a"]
            assert td.get(("n", "b"), None, **options) is td["n", "b"]
            assert td.get("missing", None, **options) is None


class TestSetUnderNewLevels:
    def test_levels_are_made_with_the_batch_size_device_and_names(self):
        td = TensorDict({"a": torch.zeros(3, 2)}, batch_size=[3], names=["t"])
        td["x", "y", "z"] = torch.ones(3, 5)
        td.set(("a2", "b"), torch.ones(3))
        assert td["x", "y"].batch_size == torch.Size([3]) and td["x", "y"].names == [
            "t"
        ]
        assert torch.equal(td["x", "y", "z"], torch.ones(3, 5))
        assert torch.equal(td["a2", "b"], torch.ones(3))

    def test_a_bad_value_makes_no_level(self):
        td = nested()
        with pytest.raises(RuntimeError, match="z"):
            td["n", "new", "z"] = torch.ones(4)
        assert set(td.keys(True)) == {"a", "n", ("n", "b")}

    def test_locked_level_refuses_and_makes_no_level(self):
        td = nested()
        td["n"].lock_()
        with pytest.raises(RuntimeError, match="locked"):
            td["n", "new", "z"] = torch.ones(3)
        assert "new" not in td["n"].keys()

    def test_a_tensor_on_the_way_raises(self):
        td = nested()
        with pytest.raises(Exception):
            td["a", "x", "y"] = torch.ones(3)
        assert set(td.keys(True)) == {"a", "n", ("n", "b")}


def test_share_memory_shares_every_leaf_and_again_is_a_no_op():
    # leaves already shared are skipped; new and subclass (Parameter) leaves are shared
    td = nested()
    td["p"] = torch.nn.Parameter(torch.zeros(3))
    assert td.share_memory_() is td and td.is_locked
    leaves = list(td.values(True, True))
    assert all(x.is_shared() for x in leaves)
    storages = [x.untyped_storage().data_ptr() for x in leaves]
    td.unlock_()
    td["new"] = torch.zeros(3)
    assert not td["new"].is_shared()
    td.share_memory_()
    assert td["new"].is_shared()
    assert [x.untyped_storage().data_ptr() for x in leaves] == storages


class TestKnownBatchSizes:
    """A batch size of one or two ints given as a list or tuple is looked up among the
    ones already checked: the answer is the one the full check gives, and what the full
    check refuses stays refused after equal-looking valid sizes were seen."""

    @pytest.mark.parametrize("given", [[3, 4], (3, 4), [5], (5,), [-1, 2], [0]])
    def test_the_same_size_on_first_and_later_calls(self, given):
        first = TensorDict({}, given).batch_size
        again = TensorDict({}, list(given)).batch_size
        assert first == again == torch.Size(given)
        assert type(again) is torch.Size

    @pytest.mark.parametrize("bad", [[3.0, 4.0], [3.0], (3, 4.0), [-2, 4], [3, -2]])
    def test_refused_after_an_equal_valid_size(self, bad):
        TensorDict({}, [3, 4]), TensorDict({}, [3]), TensorDict({}, [4])
        with pytest.raises(TypeError, match="batch_size"):
            TensorDict({}, bad)

    def test_entries_are_still_checked_against_a_known_size(self):
        TensorDict({"a": torch.zeros(3, 4)}, [3, 4])
        with pytest.raises(Exception, match="'a'"):
            TensorDict({"a": torch.zeros(3, 5)}, [3, 4])


class TestAnyAllOverEveryLeaf:
    """any()/all() with no dim walk the stored entries: non-tensor data is skipped,
    a nested tensordict or lazy stack answers for its own leaves, at any depth."""

    def make(self, deep_value):
        return TensorDict(
            {
                "a": torch.zeros(2),
                "text": "not a tensor",
                "n": {"b": torch.zeros(2), "m": {"c": torch.full((2,), deep_value)}},
            },
            [2],
        )

    def test_a_true_value_three_levels_down_decides_any(self):
        assert self.make(0.0).any() is False
        assert self.make(1.0).any() is True

    def test_all_needs_every_leaf_at_every_depth(self):
        ones = TensorDict(
            {"a": torch.ones(2), "text": "x", "n": {"b": torch.ones(2)}}, [2]
        )
        assert ones.all() is True
        ones["n", "m", "c"] = torch.tensor([1.0, 0.0])
        assert ones.all() is False

    def test_a_lazy_stack_inside_answers_with_its_members(self):
        members = [
            TensorDict({"x": torch.zeros(3)}, []),
            TensorDict({"x": torch.zeros(4)}, []),
        ]
        stack = LazyStackedTensorDict.lazy_stack(members)
        outer = TensorDict({"l": stack, "a": torch.zeros(2)}, [2])
        assert outer.any() is False
        members[1]["x"][2] = 5.0
        assert outer.any() is True
        assert outer.all() is False
