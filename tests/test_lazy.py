"""Behaviour tests of LazyStackedTensorDict and the stacking helpers.

What users rely on: a lazy stack keeps the original tensordicts (indexing along the
stack dim returns them, writes go through to them), members may differ in shapes and
keys, every index gives what the dense stack would give, ``densify`` builds nested
tensors, and ``set_lazy_legacy`` switches ``torch.stack`` to lazy stacking.

Checked against the reference implementation (tensordict 0.15.3, run from its own venv).
Tests marked ``DIVERGENCE`` differ from it on purpose:
- ``TestRepr``: DESIGN.md settles on the verbose repr the seeds print (with
  ``exclusive_fields`` and ``stack_dim``); 0.15.3 prints a compact one.
- ``test_exclusive_key_read_raises``: 0.15.3 returns ``None`` for a key only some
  members hold; here it is a ``KeyError`` naming the members that hold it.
- ``test_set_lazy_legacy_as_function``: 0.15.3's ``set_lazy_legacy(True)`` only acts
  inside ``with`` or as a decorator; DESIGN.md makes the plain call set the mode too.
"""

from __future__ import annotations

import pytest
import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    TensorDict,
    TensorDictBase,
    dense_stack_tds,
    lazy_legacy,
    lazy_stack,
    maybe_dense_stack,
    merge_tensordicts,
    pad,
    pad_sequence,
    set_lazy_legacy,
)

# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def member(seed, batch=(2, 4)):
    gen = torch.Generator().manual_seed(seed)
    return TensorDict(
        {
            "a": torch.randn(*batch, 2, generator=gen),
            "n": {"b": torch.randn(*batch, generator=gen)},
        },
        batch_size=batch,
    )


def members(count=3, batch=(2, 4)):
    return [member(i, batch) for i in range(count)]


def dense_of(td):
    return td.to_tensordict() if isinstance(td, LazyStackedTensorDict) else td


def assert_same(a, b):
    a, b = dense_of(a), dense_of(b)
    assert a.batch_size == b.batch_size
    assert set(a.keys(True, True)) == set(b.keys(True, True))
    for key in b.keys(True, True):
        assert torch.equal(a.get(key), b.get(key)), key


def streams():
    bucket0 = TensorDict(stream0=torch.randn(5), stream1=torch.randn(4))
    bucket1 = TensorDict(stream0=torch.randn(4), stream1=torch.randn(5))
    return bucket0, bucket1


# ---------------------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------------------


class TestConstruction:
    @pytest.mark.parametrize(
        "stack_dim, expected",
        [
            (0, (3, 2, 4)),
            (1, (2, 3, 4)),
            (2, (2, 4, 3)),
            (-1, (2, 4, 3)),
            (-3, (3, 2, 4)),
        ],
    )
    def test_batch_size_and_stack_dim(self, stack_dim, expected):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=stack_dim)
        assert stack.batch_size == torch.Size(expected)
        assert stack.stack_dim == stack_dim % 3
        assert stack.tensordicts == tds
        assert all(a is b for a, b in zip(stack.tensordicts, tds))

    def test_stack_dim_out_of_range(self):
        with pytest.raises(IndexError, match="stack_dim 3"):
            LazyStackedTensorDict(*members(), stack_dim=3)

    def test_members_of_different_batch_sizes(self):
        # as 0.15.3: a dim whose size differs between the members is -1
        stack = LazyStackedTensorDict(member(0), member(1, (2, 3)))
        assert stack.batch_size == (2, 2, -1)
        assert stack[1].batch_size == (2, 3)

    def test_members_must_share_batch_dims(self):
        with pytest.raises(RuntimeError, match=r"index 1 .*\(2,\).*\(2, 4\)"):
            LazyStackedTensorDict(member(0), member(1, (2,)))

    def test_members_must_be_tensordicts(self):
        with pytest.raises(TypeError, match="index 1 is a Tensor"):
            LazyStackedTensorDict(member(0), torch.zeros(2, 4))

    def test_lazy_stack_entry_points(self):
        tds = members()
        for stack in (
            TensorDict.lazy_stack(tds, dim=1),
            LazyStackedTensorDict.lazy_stack(tds, 1),
            lazy_stack(tds, 1),
            tensordict.lazy_stack(tds, dim=1),
        ):
            assert type(stack) is LazyStackedTensorDict
            assert stack.stack_dim == 1 and stack.batch_size == (2, 3, 4)
            assert stack[:, 2] is tds[2]

    def test_lazy_stack_of_tensors_is_torch_stack(self):
        out = lazy_stack([torch.zeros(2), torch.ones(2)], 0)
        assert torch.equal(out, torch.tensor([[0.0, 0.0], [1.0, 1.0]]))

    def test_lazy_stack_is_lazy_whatever_the_legacy_mode(self):
        with set_lazy_legacy(False):
            assert isinstance(TensorDict.lazy_stack(members()), LazyStackedTensorDict)

    def test_lazy_stack_out(self):
        tds = members()
        out = TensorDict(
            {"a": torch.zeros(3, 2, 4, 2), "n": {"b": torch.zeros(3, 2, 4)}}, [3, 2, 4]
        )
        kept = out["a"]
        assert lazy_stack(tds, 0, out=out) is out
        assert out["a"] is kept
        assert torch.equal(out["a"][1], tds[1]["a"])

    def test_empty_then_append_insert_extend(self):
        stack = LazyStackedTensorDict(stack_dim=0)
        assert stack.batch_size == (0,)
        a, b, c, d = (
            TensorDict(x=torch.full((3,), float(i)), batch_size=[3]) for i in range(4)
        )
        stack.append(a)
        assert stack.batch_size == (1, 3)
        stack.insert(0, b)
        stack.extend([c, d])
        assert stack.batch_size == (4, 3)
        assert [td is t for td, t in zip(stack.tensordicts, (b, a, c, d))] == [True] * 4
        assert stack["x"][:, 0].tolist() == [1.0, 0.0, 2.0, 3.0]

    def test_empty_stack_on_dim_1(self):
        stack = LazyStackedTensorDict(stack_dim=1)
        stack.append(TensorDict(x=torch.zeros(3), batch_size=[3]))
        stack.append(TensorDict(x=torch.ones(3), batch_size=[3]))
        assert stack.batch_size == (3, 2)
        assert torch.equal(stack["x"][:, 1], torch.ones(3))

    def test_append_checks_batch_size(self):
        stack = LazyStackedTensorDict(*members())
        with pytest.raises(RuntimeError, match=r"\(2, 3\)"):
            stack.append(member(9, (2, 3)))
        assert len(stack.tensordicts) == 3

    def test_extend_with_a_stack(self):
        stack = LazyStackedTensorDict(*members(2))
        more = members(2)
        stack.extend(LazyStackedTensorDict(*more))
        assert stack.batch_size == (4, 2, 4) and stack[3] is more[1]
        dense = TensorDict(x=torch.zeros(2, 2, 4), batch_size=[2, 2, 4])
        other = LazyStackedTensorDict(TensorDict(x=torch.ones(2, 4), batch_size=[2, 4]))
        other.extend(dense)
        assert other.batch_size == (3, 2, 4)

    def test_locked_stack_refuses_append(self):
        stack = LazyStackedTensorDict(*members()).lock_()
        with pytest.raises(RuntimeError, match="locked"):
            stack.append(member(5))

    def test_device_and_names(self):
        stack = LazyStackedTensorDict(
            *members(), stack_dim=1, stack_dim_name="env", device="cpu"
        )
        assert stack.device == torch.device("cpu")
        assert stack.names == [None, "env", None]
        mixed = LazyStackedTensorDict(
            TensorDict(batch_size=[2], device="cpu"), TensorDict(batch_size=[2])
        )
        assert mixed.device is None

    def test_batch_size_setter_reaches_members(self):
        tds = [TensorDict(x=torch.zeros(2, 3), batch_size=[2, 3]) for _ in range(2)]
        stack = LazyStackedTensorDict(*tds, stack_dim=0)
        stack.batch_size = [2, 2]
        assert tds[0].batch_size == (2,)
        with pytest.raises(RuntimeError, match="stack dim"):
            stack.batch_size = [3, 2]


def _mappings():
    return [
        {"a": torch.zeros(3), "n": {"c": torch.ones(3, 2)}},
        {"a": torch.ones(3), "n": {"c": torch.full((3, 2), 2.0)}},
    ]


def test_from_dict_stacks_one_tensordict_per_mapping():
    stack = LazyStackedTensorDict.from_dict(_mappings())
    assert type(stack) is LazyStackedTensorDict and stack.batch_size == (2,)
    assert [td.batch_size for td in stack.tensordicts] == [(), ()]
    assert torch.equal(stack["n", "c"][1], torch.full((3, 2), 2.0))
    # the options describe the stack, stack dim included
    stack = LazyStackedTensorDict.from_dict(
        _mappings(), auto_batch_size=True, stack_dim=1, stack_dim_name="env"
    )
    assert stack.batch_size == (3, 2) and stack.stack_dim == 1
    assert stack.names == [None, "env"]
    assert torch.equal(stack["a"], torch.stack([torch.zeros(3), torch.ones(3)], 1))
    stack = LazyStackedTensorDict.from_dict(
        *_mappings(), batch_size=[2, 3], names=["e", "t"]
    )
    assert [td.batch_size for td in stack.tensordicts] == [(3,), (3,)]
    assert stack.names == ["e", "t"]
    assert LazyStackedTensorDict.from_dict(_mappings(), batch_dims=2).batch_size == (
        2,
        3,
    )


def test_from_dict_and_from_list_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="2 mappings are given"):
        LazyStackedTensorDict.from_dict(_mappings(), batch_size=[3, 3])
    with pytest.raises(ValueError, match="at least one mapping"):
        TensorDict.from_list([])
    with pytest.raises(TypeError, match="item 1 is a int"):
        LazyStackedTensorDict.from_list([{"a": torch.zeros(1)}, 3])
    # batch sizes that differ give a -1 (as 0.15.3)
    ragged = LazyStackedTensorDict.from_list(
        [{"a": torch.zeros(3)}, {"a": torch.zeros(2)}], auto_batch_size=True
    )
    assert ragged.batch_size == (2, -1)


def test_from_list_is_dense_where_it_can_be():
    dense = TensorDict.from_list(_mappings(), auto_batch_size=True, names=["e", "t"])
    assert type(dense) is TensorDict and dense.batch_size == (2, 3)
    assert dense.names == ["e", "t"]
    assert torch.equal(dense["n", "c"][1], torch.full((3, 2), 2.0))
    ragged = [{"a": torch.zeros(3)}, {"a": torch.ones(2), "b": torch.ones(1)}]
    lazy = TensorDict.from_list(ragged)
    assert type(lazy) is LazyStackedTensorDict and lazy.batch_size == (2,)
    assert list(lazy.valid_keys()) == list(lazy.keys()) == ["a"]
    assert "b" in lazy.tensordicts[1].keys()
    assert type(TensorDict.from_list(_mappings(), lazy=True)) is LazyStackedTensorDict
    with pytest.raises((RuntimeError, KeyError)):
        TensorDict.from_list(ragged, lazy=False)
    stack = LazyStackedTensorDict.from_list(_mappings(), batch_size=[2, 3])
    assert type(stack) is LazyStackedTensorDict and stack.batch_size == (2, 3)


# ---------------------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------------------

INDICES = [
    0,
    -1,
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    (0, 1),
    (slice(None), 0),
    (..., 0),
    (..., 1, slice(None)),
    (None, 0),
    (0, None),
    (None, ..., None),
    (),
    (Ellipsis,),
    torch.tensor(1),
    torch.tensor([0, 2]),
    [0, 1],
    (slice(None), [1]),
    torch.tensor([True, False, True]),
    (slice(None), slice(None), torch.tensor([True, False, True, True])),
    (slice(None), torch.tensor([1, 0])),
    (slice(None), torch.tensor([[0, 1], [1, 0]])),
    torch.tensor([[0, 1], [2, 0]]),
    (torch.tensor([0, 1]), torch.tensor([1, 0])),
    (torch.tensor([0, 1]), slice(None), 0),
    (0, slice(None), torch.tensor([0, 1])),
    (torch.tensor([0, 1]), 0, torch.tensor([1, 2])),
    torch.zeros(3, 2, 4, dtype=torch.bool),
]


def _ids(index):
    return repr(index).replace("\n", "")


class TestIndexing:
    def test_stack_dim_index_returns_the_member(self):
        bucket0, bucket1 = streams()
        data = TensorDict.lazy_stack([bucket0, bucket1], dim=0)
        assert data[0] is bucket0 and data[1] is bucket1 and data[-1] is bucket1
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=1)
        assert stack[:, 0] is tds[0]
        assert stack[..., 2, :] is tds[2]
        stack2 = LazyStackedTensorDict(*tds, stack_dim=-1)
        assert stack2[..., 1] is tds[1]

    def test_slice_keeps_the_members(self):
        tds = members(4)
        stack = LazyStackedTensorDict(*tds, stack_dim=0)
        part = stack[1:3]
        assert isinstance(part, LazyStackedTensorDict)
        assert part.tensordicts[0] is tds[1] and part.tensordicts[1] is tds[2]
        picked = stack[torch.tensor([3, 0])]
        assert picked.tensordicts[0] is tds[3] and picked.tensordicts[1] is tds[0]

    def test_other_dims_index_every_member(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=0)
        sub = stack[:, 1]
        assert isinstance(sub, LazyStackedTensorDict)
        assert sub.batch_size == (3, 4) and sub.stack_dim == 0
        assert torch.equal(sub["a"][2], tds[2]["a"][1])

    def test_out_of_range(self):
        stack = LazyStackedTensorDict(*members())
        with pytest.raises(IndexError, match="out of range"):
            stack[3]
        with pytest.raises(IndexError, match="out of range"):
            stack[torch.tensor([0, 5])]
        with pytest.raises(IndexError):
            stack[0, 0, 0, 0]

    @pytest.mark.parametrize("stack_dim", [0, 1, 2, -1, -2])
    @pytest.mark.parametrize("index", INDICES, ids=_ids)
    def test_index_matches_dense(self, stack_dim, index):
        stack = LazyStackedTensorDict(*members(), stack_dim=stack_dim)
        dense = stack.to_tensordict()
        try:
            expected = dense[index]
        except IndexError:
            with pytest.raises(IndexError):
                stack[index]
            return
        assert_same(stack[index], expected)

    @pytest.mark.parametrize("stack_dim", [0, 1, -1])
    @pytest.mark.parametrize("index", INDICES, ids=_ids)
    @pytest.mark.parametrize("kind", ["number", "tensordict"])
    def test_set_at_index_matches_dense(self, stack_dim, index, kind):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=stack_dim)
        dense = stack.to_tensordict()
        try:
            shape = dense[index].batch_size
        except IndexError:  # an index the dense stack refuses: so must the lazy one
            with pytest.raises(IndexError):
                stack[index] = 7.0
            return
        if kind == "number":
            value = 7.0
        else:
            value = TensorDict(
                {"a": torch.full((*shape, 2), 3.0), "n": {"b": torch.full(shape, 4.0)}},
                batch_size=shape,
            )
        dense[index] = value
        stack[index] = value
        # written into the original members
        assert_same(LazyStackedTensorDict(*tds, stack_dim=stack_dim), dense)

    def test_set_member_by_index(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        kept = tds[1]["a"]
        stack[1] = TensorDict(
            {"a": torch.ones(2, 4, 2), "n": {"b": torch.ones(2, 4)}}, [2, 4]
        )
        assert stack[1] is tds[1] and tds[1]["a"] is kept
        assert (kept == 1).all()

    def test_iteration_yields_members(self):
        tds = members()
        assert all(a is b for a, b in zip(LazyStackedTensorDict(*tds), tds))

    def test_unbind(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=1)
        assert all(a is b for a, b in zip(stack.unbind(1), tds))
        parts = stack.unbind(0)
        assert len(parts) == 2 and parts[0].batch_size == (3, 4)
        assert_same(parts[1], stack.to_tensordict()[1])


# ---------------------------------------------------------------------------------------
# reading and writing keys
# ---------------------------------------------------------------------------------------


class TestKeys:
    def test_read_stacks_on_demand(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=1)
        assert torch.equal(stack["a"], torch.stack([td["a"] for td in tds], 1))
        assert torch.equal(
            stack["n", "b"], torch.stack([td["n", "b"] for td in tds], 1)
        )
        assert torch.equal(stack.get(("n", "b")), stack["n"]["b"])
        assert isinstance(stack["n"], LazyStackedTensorDict)
        assert stack["n"][:, 0] is tds[0]["n"]

    def test_write_goes_through(self):
        tds = [
            TensorDict({"a": torch.rand(10), "b": torch.rand(10, 5)}, [10])
            for _ in range(3)
        ]
        stacked = LazyStackedTensorDict(*tds)
        stacked["a"] = torch.zeros_like(stacked["a"])
        assert all((td["a"] == 0).all() for td in tds)
        stacked["c", "d"] = torch.ones(3, 10, 2)
        assert torch.equal(tds[2]["c", "d"], torch.ones(10, 2))
        kept = tds[0]["b"]
        stacked.set_("b", torch.full((3, 10, 5), 2.0))
        assert tds[0]["b"] is kept and (kept == 2).all()
        stacked.set("b", torch.full((3, 10, 5), 3.0), inplace=True)
        assert (kept == 3).all()

    def test_write_checks_batch_size(self):
        stack = LazyStackedTensorDict(*members())
        with pytest.raises(RuntimeError, match=r"'z'.*\(3, 2\)"):
            stack["z"] = torch.zeros(3, 2)

    def test_write_a_tensordict(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        stack["sub"] = TensorDict(
            x=torch.arange(24.0).reshape(3, 2, 4), batch_size=[3, 2, 4]
        )
        assert torch.equal(tds[1]["sub", "x"], torch.arange(8.0, 16.0).reshape(2, 4))
        stack["d"] = {"y": torch.zeros(3, 2, 4)}
        assert tds[0]["d", "y"].shape == (2, 4)

    def test_non_tensor_entries(self):
        tds = [TensorDict(x=torch.zeros(2), batch_size=[2]) for _ in range(2)]
        stack = LazyStackedTensorDict(*tds)
        stack["name"] = "robot"
        assert tds[0]["name"] == "robot" and stack["name"] == "robot"
        tds[1]["name"] = "car"
        # as a dense stack holds them: a NonTensorStack with one value per element
        assert stack["name"].tolist() == torch.stack(tds)["name"].tolist()
        assert stack["name"].tolist() == [["robot"] * 2, ["car"] * 2]
        assert "name" in repr(stack)

    def test_delete(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        del stack["a"]
        assert "a" not in tds[0].keys()
        with pytest.raises(KeyError):
            del stack["zz"]

    def test_keys_items_values(self):
        stack = LazyStackedTensorDict(*members())
        assert list(stack.keys()) == ["a", "n"]
        assert list(stack.keys(True)) == ["a", ("n", "b"), "n"]
        assert list(stack.keys(True, True)) == ["a", ("n", "b")]
        assert len(stack.keys(True, True)) == 2
        assert ("n", "b") in stack.keys(True) and "n" in stack
        assert "n" not in stack.keys(True, True)
        items = dict(stack.items(True, True))
        assert torch.equal(items["n", "b"], stack["n", "b"])
        assert len(list(stack.values())) == 2

    def test_pop_and_rename(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        kept = tds[0]["a"]
        stack.rename_key_("a", "z")
        assert tds[0]["z"] is kept and "a" not in tds[0].keys()
        popped = stack.pop("z")
        assert popped.shape == (3, 2, 4, 2) and "z" not in tds[1].keys()


class TestExclusiveKeys:
    def make(self):
        b0 = TensorDict(a=torch.zeros(3, 4), b=torch.ones(3), batch_size=[3])
        b1 = TensorDict(a=torch.ones(3, 4), c=torch.ones(3, 2), batch_size=[3])
        return b0, b1, LazyStackedTensorDict(b0, b1)

    def test_keys_are_the_common_ones(self):
        _, _, stack = self.make()
        assert list(stack.keys()) == ["a"]
        assert "b" not in stack and "c" not in stack.keys(True)

    def test_exclusive_key_read_raises(self):  # DIVERGENCE (see module doc)
        _, _, stack = self.make()
        with pytest.raises(KeyError, match=r"'b' is exclusive .* indices \[0\]"):
            stack["b"]
        assert stack.get("b", None) is None
        assert stack.get("c", "missing") == "missing"

    def test_missing_key_raises(self):
        _, _, stack = self.make()
        with pytest.raises(KeyError, match='key "zz" not found'):
            stack["zz"]

    def test_ops_keep_exclusive_keys(self):
        b0, b1, stack = self.make()
        out = stack + 1
        assert torch.equal(out[0]["b"], b0["b"] + 1)
        assert torch.equal(out[1]["c"], b1["c"] + 1)
        assert list(stack.to_tensordict().keys()) == ["a"]

    def test_delete_exclusive(self):
        b0, _, stack = self.make()
        del stack["b"]
        assert "b" not in b0.keys()


class TestHeterogeneousShapes:
    def test_read_names_key_and_shapes(self):
        data = TensorDict.lazy_stack(list(streams()), dim=0)
        with pytest.raises(RuntimeError, match=r"'stream0'.*\[\(5,\), \(4,\)\]"):
            data["stream0"]

    def test_alternative_reads(self):
        b0, b1 = streams()
        data = TensorDict.lazy_stack([b0, b1], dim=0)
        assert [
            t is s
            for t, s in zip(
                data.get("stream0", as_list=True), (b0["stream0"], b1["stream0"])
            )
        ] == [True, True]
        padded = data.get("stream0", as_padded_tensor=True, padding_value=-1.0)
        assert padded.shape == (2, 5) and padded[1, 4] == -1
        nested = data.get_nestedtensor("stream0")
        assert nested.is_nested and torch.equal(nested.unbind()[1], b1["stream0"])
        assert data.get("stream1", as_nested_tensor=True).is_nested
        assert data.get_item_shape("stream0") == torch.Size([2, -1])

    def test_ops_run_per_member(self):
        b0, b1 = streams()
        data = TensorDict.lazy_stack([b0, b1], dim=0)
        plus = data + 1
        assert isinstance(plus, LazyStackedTensorDict)
        assert torch.equal(plus[1]["stream1"], b1["stream1"] + 1)
        applied = data.apply(lambda x: x * 2)
        assert torch.equal(applied[0]["stream0"], b0["stream0"] * 2)
        selected = data.select("stream0")
        assert (
            list(selected.keys()) == ["stream0"]
            and selected[0]["stream0"] is b0["stream0"]
        )
        assert torch.equal(
            (data == data)[1]["stream0"], torch.ones(4, dtype=torch.bool)
        )
        data.mul_(0)
        assert (b0["stream0"] == 0).all()
        assert data.clone()[0]["stream0"] is not b0["stream0"]


# ---------------------------------------------------------------------------------------
# repr
# ---------------------------------------------------------------------------------------


SEED_REPR = """LazyStackedTensorDict(
    fields={
        stream0: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False),
        stream1: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32, is_shared=False)},
    exclusive_fields={
    },
    batch_size=torch.Size([2]),
    device=None,
    is_shared=False,
    stack_dim=0)"""


class TestRepr:  # DIVERGENCE (see module doc)
    def test_seed_000(self):
        data = TensorDict.lazy_stack(list(streams()), dim=0)
        assert repr(data) == SEED_REPR

    def test_exclusive_and_nested(self):
        b0 = TensorDict(
            a=torch.zeros(3),
            n={"x": torch.zeros(3, 2)},
            b=torch.ones(3),
            batch_size=[3],
        )
        b1 = TensorDict(a=torch.zeros(3), n={"x": torch.zeros(3, 2)}, batch_size=[3])
        text = repr(LazyStackedTensorDict(b0, b1, stack_dim=1))
        assert text == """LazyStackedTensorDict(
    fields={
        a: Tensor(shape=torch.Size([3, 2]), device=cpu, dtype=torch.float32, is_shared=False),
        n: LazyStackedTensorDict(
            fields={
                x: Tensor(shape=torch.Size([3, 2, 2]), device=cpu, dtype=torch.float32, is_shared=False)},
            exclusive_fields={
            },
            batch_size=torch.Size([3, 2]),
            device=None,
            is_shared=False,
            stack_dim=1)},
    exclusive_fields={
        0 ->
            b: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, is_shared=False)},
    batch_size=torch.Size([3, 2]),
    device=None,
    is_shared=False,
    stack_dim=1)"""

    def test_densified_nested_tensor(self):
        dense = TensorDict.lazy_stack(list(streams()), dim=0).densify()
        assert (
            "stream0: Tensor(shape=torch.Size([2, -1]), device=cpu, dtype=torch.float32"
            in repr(dense)
        )
        jagged = TensorDict.lazy_stack(list(streams()), dim=0).densify(
            layout=torch.jagged
        )
        assert "shape=torch.Size([2, -1])" in repr(jagged)


# ---------------------------------------------------------------------------------------
# dense forms
# ---------------------------------------------------------------------------------------


class TestDensify:
    def test_strided(self):
        b0 = TensorDict(s=torch.arange(3), same=torch.zeros(2))
        b1 = TensorDict(s=torch.arange(5), same=torch.ones(2))
        dense = TensorDict.lazy_stack([b0, b1]).densify(layout=torch.strided)
        assert type(dense) is TensorDict and dense.batch_size == (2,)
        nested = dense["s"]
        assert nested.is_nested and nested.layout == torch.strided
        assert torch.equal(
            nested.values(), torch.cat([torch.arange(3), torch.arange(5)])
        )
        assert nested._nested_tensor_size().tolist() == [[3], [5]]
        assert not dense["same"].is_nested
        assert torch.equal(dense["same"], torch.tensor([[0.0, 0.0], [1.0, 1.0]]))

    def test_jagged(self):
        b0 = TensorDict(s=torch.arange(3.0))
        b1 = TensorDict(s=torch.arange(5.0))
        dense = TensorDict.lazy_stack([b0, b1]).densify(layout=torch.jagged)
        nested = dense["s"]
        assert nested.is_nested and nested.layout == torch.jagged
        assert nested.offsets().tolist() == [0, 3, 8]
        assert torch.equal(nested.values(), torch.cat([b0["s"], b1["s"]]))

    def test_nested_keys_and_dtype_promotion(self):
        b0 = TensorDict(n={"s": torch.arange(3)})
        b1 = TensorDict(n={"s": torch.arange(2.0)})
        dense = LazyStackedTensorDict(b0, b1).densify()
        assert dense["n", "s"].dtype == torch.float32 and dense["n"].batch_size == (2,)

    def test_stack_dim_not_first(self):
        b0 = TensorDict(s=torch.zeros(2, 3), batch_size=[2])
        b1 = TensorDict(s=torch.zeros(2, 4), batch_size=[2])
        with pytest.raises(RuntimeError, match="'s'.*stack dim is 1"):
            LazyStackedTensorDict(b0, b1, stack_dim=1).densify()
        same = LazyStackedTensorDict(b0, b0.clone(), stack_dim=1).densify()
        assert same["s"].shape == (2, 2, 3)

    def test_bad_layout(self):
        with pytest.raises(ValueError, match="layout"):
            LazyStackedTensorDict(*members()).densify(layout=torch.sparse_coo)

    def test_to_tensordict_and_contiguous_copy(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=2)
        for dense in (stack.to_tensordict(), stack.contiguous()):
            assert type(dense) is TensorDict and dense.batch_size == (2, 4, 3)
            assert torch.equal(dense["n", "b"][..., 1], tds[1]["n", "b"])
            dense["a"].zero_()
            assert not (tds[0]["a"] == 0).all()

    def test_to_padded_tensor(self):
        b0, b1 = TensorDict(s=torch.ones(3)), TensorDict(s=torch.ones(5))
        out = TensorDict.lazy_stack([b0, b1]).to_padded_tensor(
            padding=-1.0, mask_key="mask"
        )
        assert out["s"].tolist()[0] == [1.0, 1.0, 1.0, -1.0, -1.0]
        assert out["mask", "s"].sum().item() == 8

    def test_dense_densify_is_a_copy_of_the_structure(self):
        td = TensorDict(a=torch.zeros(2), batch_size=[2])
        td["lazy"] = TensorDict.lazy_stack(
            [TensorDict(s=torch.ones(3)), TensorDict(s=torch.ones(2))]
        )
        dense = td.densify()
        assert type(dense["lazy"]) is TensorDict and dense["lazy", "s"].is_nested


# ---------------------------------------------------------------------------------------
# nesting: members with nested tensordicts, stacks of stacks, negative dims
# ---------------------------------------------------------------------------------------


class TestNesting:
    def test_nested_members(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=-1)
        nested = stack["n"]
        assert isinstance(nested, LazyStackedTensorDict) and nested.stack_dim == 2
        nested["new"] = torch.ones(2, 4, 3)
        assert torch.equal(tds[0]["n", "new"], torch.ones(2, 4))
        stack["n", "b"] = torch.zeros(2, 4, 3)
        assert (tds[2]["n", "b"] == 0).all()

    def test_nested_heterogeneous_batch_dims(self):
        b0 = TensorDict(
            n=TensorDict(x=torch.zeros(2, 3, 5), batch_size=[2, 3]), batch_size=[2]
        )
        b1 = TensorDict(
            n=TensorDict(x=torch.ones(2, 3, 5), batch_size=[2, 3]), batch_size=[2]
        )
        stack = LazyStackedTensorDict(b0, b1, stack_dim=1)
        assert stack["n"].batch_size == (2, 2, 3)
        assert stack["n", "x"].shape == (2, 2, 3, 5)

    @pytest.mark.parametrize("outer_dim", [0, 1, 2, -1])
    @pytest.mark.parametrize("inner_dim", [0, 1, -1])
    def test_stack_of_stacks(self, outer_dim, inner_dim):
        inner = [
            LazyStackedTensorDict(*members(2, (4,)), stack_dim=inner_dim)
            for _ in range(3)
        ]
        outer = LazyStackedTensorDict(*inner, stack_dim=outer_dim)
        expected = torch.stack([i.to_tensordict()["a"] for i in inner], outer_dim % 3)
        assert torch.equal(outer["a"], expected)
        index = (slice(None),) * (outer_dim % 3) + (1,)
        assert outer[index] is inner[1]
        assert_same(outer + 1, outer.to_tensordict() + 1)
        assert_same(outer[:, 1], outer.to_tensordict()[:, 1])
        outer["a"] = torch.zeros_like(expected)
        assert (inner[2].tensordicts[0]["a"] == 0).all()

    def test_negative_stack_dim_equals_positive(self):
        tds = members()
        neg = LazyStackedTensorDict(*tds, stack_dim=-2)
        pos = LazyStackedTensorDict(*tds, stack_dim=1)
        assert neg.stack_dim == 1
        assert_same(neg, pos)


# ---------------------------------------------------------------------------------------
# shared behaviour: leaf-wise ops, apply, structure ops, locking
# ---------------------------------------------------------------------------------------


class TestOps:
    def test_pointwise_and_binary(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=1)
        dense = stack.to_tensordict()
        assert_same(stack.abs(), dense.abs())
        assert_same(stack + 1, dense + 1)
        assert_same(stack * stack, dense * dense)
        assert_same(stack.add(dense, alpha=2), dense.add(dense, alpha=2))
        assert_same(stack.float64(), dense.float64())
        assert_same(stack > 0, dense > 0)

    def test_inplace_ops_write_through(self):
        tds = members()
        kept = tds[0]["a"]
        stack = LazyStackedTensorDict(*tds)
        expected = kept.abs()
        assert stack.abs_() is stack
        assert tds[0]["a"] is kept and torch.equal(kept, expected)
        stack += 1
        assert torch.equal(kept, expected + 1)

    def test_apply(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds, stack_dim=1)
        out = stack.apply(lambda x, y: x + y, stack.to_tensordict())
        assert_same(out, stack.to_tensordict() * 2)
        named = stack.named_apply(lambda k, x: x * 0 if k == "a" else x)
        assert (named["a"] == 0).all()
        stack.apply_(lambda x: x.zero_())
        assert (tds[1]["n", "b"] == 0).all()
        reduced = stack.apply(lambda x: x.sum(0), batch_size=[3, 4])
        assert reduced.batch_size == (3, 4)

    def test_update_select_exclude(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        stack.update({"a": torch.zeros(3, 2, 4, 2), "n": {"c": torch.ones(3, 2, 4)}})
        assert (tds[0]["a"] == 0).all() and tds[2]["n", "c"].shape == (2, 4)
        selected = stack.select("a", ("n", "c"))
        assert list(selected.keys(True, True)) == ["a", ("n", "c")]
        excluded = stack.exclude("a")
        assert "a" not in excluded.keys() and "a" in tds[0].keys()
        stack.exclude("a", inplace=True)
        assert "a" not in tds[0].keys()
        flat = stack.flatten_keys()
        assert "n.b" in flat.keys()
        assert ("n", "b") in flat.unflatten_keys().keys(True)

    def test_copies(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds)
        clone = stack.clone()
        assert clone[0] is not tds[0] and clone[0]["a"] is not tds[0]["a"]
        copy = stack.copy()
        assert copy[0]["a"] is tds[0]["a"]
        empty = stack.empty(recurse=True)
        assert list(empty.keys(True)) == ["n"] and empty.batch_size == stack.batch_size

    def test_lock(self):
        tds = members()
        stack = LazyStackedTensorDict(*tds).lock_()
        assert tds[0].is_locked
        with pytest.raises(RuntimeError, match="locked"):
            stack["new"] = torch.zeros(3, 2, 4)
        stack.set_("a", torch.zeros(3, 2, 4, 2))  # in-place updates stay allowed
        stack.unlock_()
        stack["new"] = torch.zeros(3, 2, 4)

    def test_reductions_of_truth(self):
        stack = LazyStackedTensorDict(*members())
        assert (stack == stack).all() and not (stack != stack).any()


# ---------------------------------------------------------------------------------------
# lazy legacy mode
# ---------------------------------------------------------------------------------------


def _torch_stack_supported():
    try:
        torch.stack([TensorDict(batch_size=[1]), TensorDict(batch_size=[1])], 0)
    except TypeError:
        return False
    return True


class TestLazyLegacy:
    def test_default_is_dense(self, restore_modes):
        assert lazy_legacy() is False

    def test_set_lazy_legacy_as_function(self, restore_modes):  # DIVERGENCE
        set_lazy_legacy(True)
        assert lazy_legacy() is True
        set_lazy_legacy(False)
        assert lazy_legacy() is False

    def test_set_lazy_legacy_as_context_manager(self, restore_modes):
        with set_lazy_legacy(True):
            assert lazy_legacy()
            with set_lazy_legacy(False):
                assert not lazy_legacy()
            assert lazy_legacy()
        assert not lazy_legacy()

    def test_set_lazy_legacy_as_decorator(self, restore_modes):
        @set_lazy_legacy(True)
        def inside():
            return lazy_legacy()

        assert not lazy_legacy()
        assert inside() is True
        assert not lazy_legacy()

    def test_torch_stack_follows_the_mode(self, restore_modes):
        if not _torch_stack_supported():
            pytest.skip("torch.stack of tensordicts is not implemented yet")
        tensordicts = [
            TensorDict({"a": torch.rand(10), "b": torch.rand(10, 100)}, [10])
            for _ in range(3)
        ]
        dense = torch.stack(tensordicts, 0)
        assert type(dense) is TensorDict
        with set_lazy_legacy(True):
            stacked = torch.stack(tensordicts, 0)  # no stacking happens here
        assert isinstance(stacked, LazyStackedTensorDict)
        stacked["a"] = torch.zeros_like(stacked["a"])
        assert (tensordicts[0]["a"] == 0).all()
        assert type(stacked.contiguous()) is TensorDict


# ---------------------------------------------------------------------------------------
# functions: maybe_dense_stack, dense_stack_tds, merge_tensordicts, pad, pad_sequence
# ---------------------------------------------------------------------------------------


class TestFunctions:
    def test_maybe_dense_stack(self):
        tds = members()
        dense = maybe_dense_stack(tds, 1)
        assert type(dense) is TensorDict and dense.batch_size == (2, 3, 4)
        lazy = maybe_dense_stack(list(streams()), 0)
        assert isinstance(lazy, LazyStackedTensorDict)
        assert type(TensorDict.maybe_dense_stack(tds)) is TensorDict
        other_keys = [TensorDict(a=torch.zeros(2)), TensorDict(b=torch.zeros(2))]
        assert isinstance(
            LazyStackedTensorDict.maybe_dense_stack(other_keys), LazyStackedTensorDict
        )

    def test_dense_stack_tds(self):
        tds = members()
        out = dense_stack_tds(tds, 1)
        assert type(out) is TensorDict and out.batch_size == (2, 3, 4)
        stack = LazyStackedTensorDict(*tds, stack_dim=2)
        assert dense_stack_tds(stack).batch_size == (2, 4, 3)
        assert dense_stack_tds(stack, 0).batch_size == (3, 2, 4)

    def test_merge_tensordicts(self):
        a = TensorDict(a=torch.zeros(2), n={"x": torch.zeros(2)}, batch_size=[2])
        b = TensorDict(
            b=torch.ones(2), n={"y": torch.ones(2)}, a=torch.ones(2), batch_size=[2]
        )
        merged = merge_tensordicts(a, b)
        assert set(merged.keys(True, True)) == {"a", "b", ("n", "x"), ("n", "y")}
        assert (merged["a"] == 0).all()
        summed = merge_tensordicts(a, b, callback_exist=lambda old, new: old - new)
        assert (summed["a"] == -1).all()
        wide = TensorDict(c=torch.zeros(2, 3), batch_size=[2, 3])
        assert merge_tensordicts(wide, a).batch_size == (2,)

    def test_pad(self):
        td = TensorDict(
            a=torch.arange(6.0).reshape(2, 3), b=torch.zeros(2, 3, 4), batch_size=[2, 3]
        )
        out = pad(td, [1, 0, 0, 2], value=-1)
        assert out.batch_size == (3, 5) and out["b"].shape == (3, 5, 4)
        assert out["a"].tolist() == [
            [-1, -1, -1, -1, -1],
            [0, 1, 2, -1, -1],
            [3, 4, 5, -1, -1],
        ]
        with pytest.raises(ValueError, match="pairs"):
            pad(td, [1])
        with pytest.raises(ValueError, match="batch dims"):
            pad(td, [1] * 6)
        same = pad(td, [0, 1], inplace=True)
        assert same is td and td.batch_size == (3, 3)
        stack = LazyStackedTensorDict(*members(), stack_dim=1)
        assert_same(pad(stack, [0, 1, 1, 0]), pad(stack.to_tensordict(), [0, 1, 1, 0]))

    def test_pad_sequence(self):
        x = TensorDict(a=torch.ones(2, 3), b=torch.ones(2), batch_size=[2])
        y = TensorDict(a=torch.ones(4, 3), b=torch.ones(4), batch_size=[4])
        out = pad_sequence([x, y])
        assert out.batch_size == (2, 4) and out["a"].shape == (2, 4, 3)
        assert out["b"].tolist() == [[1, 1, 0, 0], [1, 1, 1, 1]]
        masked = pad_sequence([x, y], return_mask=True)
        assert masked["masks", "a"].tolist() == [[True, True, False, False], [True] * 4]
        left = pad_sequence(
            [x, y], padding_value=2.0, padding_side="left", return_mask="m"
        )
        assert left["b"].tolist()[0] == [2, 2, 1, 1]
        assert left["m", "b"].tolist()[0] == [False, False, True, True]
        unbatched = pad_sequence(
            [TensorDict(a=torch.ones(3)), TensorDict(a=torch.ones(5))]
        )
        assert unbatched.batch_size == (2,) and unbatched["a"].shape == (2, 5)
        z = TensorDict(a=torch.ones(4, 2), b=torch.ones(4), batch_size=[4])
        with pytest.raises(RuntimeError, match="key 'a'"):
            pad_sequence([x, z])


def test_public_names():
    for name in (
        "LazyStackedTensorDict",
        "lazy_stack",
        "maybe_dense_stack",
        "dense_stack_tds",
        "merge_tensordicts",
        "pad",
        "pad_sequence",
        "set_lazy_legacy",
        "lazy_legacy",
    ):
        assert hasattr(tensordict, name), name
    assert issubclass(LazyStackedTensorDict, TensorDictBase)
    from tensordict.utils import lazy_legacy as util_lazy_legacy  # noqa: F401
    from tensordict.functional import pad_sequence as fn_pad_sequence  # noqa: F401


@pytest.mark.parametrize("stack_dim", [0, 1, 2])
@pytest.mark.parametrize("nested_stack", [False, True])
def test_tensor_operands_broadcast_like_the_dense_stack(stack_dim, nested_stack):
    tds = [
        TensorDict(
            a=torch.rand(2, 4, 5), n={"b": torch.rand(2, 4, 5)}, batch_size=[2, 4]
        )
        for _ in range(3)
    ]
    if nested_stack:
        members = [LazyStackedTensorDict(*tds[:2]) for _ in range(3)]
    else:
        members = tds
    stack = LazyStackedTensorDict(*members, stack_dim=stack_dim)
    dense = stack.to_tensordict()
    # a tensor operand lines up with the batch dims (0.15.3), and may widen them
    bs = dense.batch_size
    for tensor in (
        torch.rand(bs[-1]),
        torch.rand(*bs),
        torch.rand(bs[0], *[1] * (len(bs) - 1)),
        torch.rand(2, *bs),
    ):
        assert_same(stack * tensor, dense * tensor)
        assert_same(stack.add(tensor, alpha=2), dense.add(tensor, alpha=2))


def _holder():
    """A dense TensorDict [3, 4] holding a lazy stack (stack dim 1) next to a tensor,
    and the same data with the stack dense."""
    stack = LazyStackedTensorDict(*members(4, (3,)), stack_dim=1)
    holder = TensorDict(x=torch.randn(3, 4, 2), batch_size=[3, 4])
    holder["s"] = stack
    dense = holder.clone()
    dense["s"] = stack.to_tensordict()
    return holder, dense


def test_leafwise_ops_keep_a_held_lazy_stack_lazy():
    holder, dense = _holder()
    assert isinstance((holder + 1)["s"], LazyStackedTensorDict)
    assert_same((holder + 1)["s"], (dense + 1)["s"])
    assert isinstance(holder.abs()["s"], LazyStackedTensorDict)
    assert_same(holder[1]["s"], dense[1]["s"])


MASK = torch.tensor([[True, False, True, False]] * 3)

# Ops that read the batch dims of every leaf, or join the leaves along one: on a
# TensorDict holding a lazy stack they give what they give on the dense copy (the
# stack's leaves lack its stack dim, so it is made dense for them).
BATCH_DIM_OPS = {
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "flip": lambda t: t.flip((1,)),
    "roll": lambda t: t.roll(1, 1),
    "reshape": lambda t: t.reshape(-1),
    "view": lambda t: t.view(12),
    "flatten": lambda t: t.flatten(),
    "unflatten": lambda t: t.unflatten(1, (2, 2)),
    "unsqueeze": lambda t: t.unsqueeze(-1),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(0),
    "expand": lambda t: t.expand(2, 3, 4),
    "repeat": lambda t: t.repeat(1, 2),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "split": lambda t: t.split(2, 1)[1],
    "unbind": lambda t: t.unbind(1)[2],
    "gather": lambda t: t.gather(1, torch.tensor([[3, 0]] * 3)),
    "masked_fill": lambda t: t.masked_fill(MASK, 0.5),
    "masked_select": lambda t: t.masked_select(MASK),
    "where": lambda t: t.where(MASK, 0.0),
    "sum": lambda t: t.sum(1),
    "mean": lambda t: t.mean(),
    "max": lambda t: t.max(dim=1),
    "std": lambda t: t.std(dim=0),
    "softmax": lambda t: t.softmax(1),
    "cummax": lambda t: t.cummax(1),
    "new_zeros": lambda t: t.new_zeros(5),
    "stack_from_tensordict": lambda t: t.select(("s", "n", "b")).stack_from_tensordict(
        0
    ),
    "cat_from_tensordict": lambda t: t.select(("s", "n", "b")).cat_from_tensordict(1),
}


@pytest.mark.parametrize("op", list(BATCH_DIM_OPS.values()), ids=list(BATCH_DIM_OPS))
def test_batch_dim_ops_on_a_held_lazy_stack_match_the_dense_copy(op):
    holder, dense = _holder()
    got, want = op(holder), op(dense)
    if isinstance(want, tuple):  # (values, indices)
        got, want = got[0], want[0]
    if isinstance(want, torch.Tensor):
        assert torch.equal(got, want)
    else:
        assert_same(got, want)
    assert_same(holder["s"], dense["s"])  # the source is untouched


def test_numpy_and_tolist_of_a_held_lazy_stack_match_the_dense_copy():
    holder, dense = _holder()
    got, want = holder.numpy(), dense.numpy()
    assert got["s"]["a"].shape == (3, 4, 2)
    assert (got["s"]["a"] == want["s"]["a"]).all()
    assert (got["s"]["n"]["b"] == want["s"]["n"]["b"]).all()
    assert holder.tolist(convert_tensors=True) == dense.tolist(convert_tensors=True)


def test_data_ptr_of_a_lazy_stack_is_keyed_by_member():
    holder, _ = _holder()
    stack = holder["s"]
    got = holder.data_ptr()
    assert got["x"].item() == holder["x"].data_ptr()
    for i, td in enumerate(stack.tensordicts):
        assert got["s", str(i), "a"].item() == td["a"].data_ptr()
        assert got["s", str(i), "n", "b"].item() == td["n", "b"].data_ptr()
    assert stack.data_ptr()["3", "a"].item() == stack.tensordicts[3]["a"].data_ptr()


def test_apply_on_a_holder_applies_member_by_member_and_keeps_the_rest():
    holder, dense = _holder()
    holder["text"] = "kept"
    holder["empty"] = TensorDict(batch_size=[3, 4])
    out = holder.apply(lambda x: x * 2)
    assert isinstance(out["s"], LazyStackedTensorDict)
    assert_same(out["s"], dense["s"] * 2)
    assert torch.equal(out["x"], dense["x"] * 2)
    assert out["text"] == "kept"
    # a nested tensordict empty to begin with is kept (as in 0.15.3); only
    # filter_empty=True drops it
    assert "empty" in out.keys()
    assert "empty" not in holder.apply(lambda x: x, filter_empty=True).keys()
    dropped = holder.apply(lambda x: None if x.ndim == 3 else x)  # None drops a leaf
    assert "x" not in dropped.keys() and ("s", "n", "b") in dropped.keys(True)


def test_in_place_forms_write_into_the_held_lazy_stack():
    holder, dense = _holder()
    stack = holder["s"]
    assert holder.masked_fill_(MASK, 0.5) is holder
    assert holder["s"] is stack  # still the same lazy stack, its members written
    assert_same(holder, dense.masked_fill(MASK, 0.5))
    assert torch.equal(
        stack.tensordicts[0]["a"], torch.full_like(stack.tensordicts[0]["a"], 0.5)
    )
    # inplace=True gives the holder the result (the stack comes back dense)
    holder, dense = _holder()
    assert holder.flatten(inplace=True) is holder
    assert_same(holder, dense.flatten())


def test_a_ragged_held_lazy_stack_names_the_entry():
    ragged = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(3, 2), batch_size=[3]),
        TensorDict(a=torch.zeros(3, 5), batch_size=[3]),
        stack_dim=1,
    )
    holder = TensorDict(s=ragged, batch_size=[3, 2])
    with pytest.raises(RuntimeError, match=r"sum\(\): the entry 's', a lazy stack"):
        holder.sum(1)
    with pytest.raises(RuntimeError, match=r"transpose\(\): the entry 's'"):
        holder.transpose(0, 1)
    assert isinstance((holder * 2)["s"], LazyStackedTensorDict)  # leaf-wise ops work


def test_contiguous_in_place_makes_the_members_contiguous():
    members = [TensorDict({"x": torch.zeros(4, 3).t()}, [3]) for _ in range(2)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    assert stack.contiguous(inplace=True) is stack
    assert all(td["x"].is_contiguous() for td in stack.tensordicts)
    assert type(stack.contiguous()) is TensorDict


def test_per_member_ops_keep_the_stack_dim_name():
    members = [TensorDict({"x": torch.zeros(3)}, [3]) for _ in range(2)]
    stack = LazyStackedTensorDict.lazy_stack(members, 0, stack_dim_name="t")
    assert stack.transpose(0, 1).names == [None, "t"]
    assert stack.flip(0).names == ["t", None]


def test_tensor_subclass_operands_are_sliced_like_tensors():
    members = [TensorDict({"x": torch.zeros(3)}, [3]) for _ in range(2)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    operand = torch.arange(6.0).reshape(2, 3)
    as_param = torch.nn.Parameter(operand.clone())
    assert torch.equal(stack.add(as_param)["x"], stack.add(operand)["x"])
