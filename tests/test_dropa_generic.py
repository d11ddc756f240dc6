"""update/update_ keyword entries and nested key selection, lazy-stack ops refused in
place, and padding non-tensor data and lazy stacks, as 0.15.3's users rely on them."""

import pytest
import torch

from tensordict import (
    LazyStackedTensorDict,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    lazy_stack,
    pad,
    pad_sequence,
    tensorclass,
)


def _nested(val):
    return TensorDict({"a": {"b": val, "c": {}}, "d": {"e": val, "f": val}}, [])


# ------------------------------------------------------------------ update
def test_update_keyword_entries_win_over_the_source():
    td = TensorDict({"a": torch.zeros(3)}, batch_size=[3])
    td.update({"a": torch.ones(3) * 2, "b": torch.ones(3) * 3}, a=torch.ones(3) * 7)
    assert (td["a"] == 7).all() and (td["b"] == 3).all()
    assert td.update() is td


def test_update_inplace_keywords_and_missing_key():
    td = TensorDict({"a": torch.zeros(3), "b": torch.zeros(3)}, batch_size=[3])
    ref = td["a"]
    td.update_({"a": torch.ones(3)}, b=torch.ones(3) * 2)
    assert td["a"] is ref and (td["a"] == 1).all() and (td["b"] == 2).all()
    assert td.update_() is td
    with pytest.raises(KeyError, match="was not found"):
        td.update_(c=torch.ones(3))


@pytest.mark.parametrize("stack", [False, True])
@pytest.mark.parametrize("key", ["a", ("a",)])
def test_update_inplace_keys_to_update_selects_nested_entries(stack, key):
    def make(val):
        if stack:
            return LazyStackedTensorDict.lazy_stack([_nested(val), _nested(val)])
        return _nested(val)

    td = make(1)
    td.update_(make(2), keys_to_update=[key])
    assert (td.select("a") == 2).all()
    assert (td.exclude("a") == 1).all()


def test_update_kwargs_on_a_lazy_stack():
    td = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(())) for _ in range(3)]
    )
    td.update(b=torch.ones(3))
    td.update_(a=torch.ones(3))
    assert (td["a"] == 1).all() and (td["b"] == 1).all()


# ------------------------------------------------------------------ lazy in place
@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.flatten(0, 1, inplace=True),
        lambda s: s.unflatten(0, (2, 1), inplace=True),
        lambda s: s.repeat(2, 1, inplace=True),
    ],
)
def test_lazy_stack_refuses_shape_ops_in_place_with_not_implemented(call):
    stack = lazy_stack([TensorDict(x=torch.zeros(4), batch_size=[4]) for _ in range(2)])
    with pytest.raises(NotImplementedError):
        call(stack)


# ------------------------------------------------------------------ pad
def test_pad_non_tensor_entries_hold_none():
    td = TensorDict(
        {"x": torch.arange(3), "instr": NonTensorStack("a", "b", "c"), "m": "m"},
        batch_size=[3],
    )
    out = pad(td, [1, 1])
    assert out.get("instr").tolist() == [None, "a", "b", "c", None]
    assert out.get("m").tolist() == [None, "m", "m", "m", None]
    assert pad(td, [-1, 1]).get("instr").tolist() == ["b", "c", None]
    nested = TensorDict(sub=td, batch_size=[3])
    assert pad(nested, [0, 1]).get(("sub", "instr")).tolist() == ["a", "b", "c", None]


def test_pad_in_place_keeps_the_stack_and_refuses_bad_sizes_first():
    td = TensorDict({"x": torch.ones(3), "instr": NonTensorStack("a", "b", "c")}, [3])
    instr, x = td.get("instr"), td["x"]
    with pytest.raises(RuntimeError, match="negative output size"):
        td.pad([-10, 0], inplace=True)
    assert td["x"] is x and td.batch_size == (3,)
    assert pad(td, [0, 2], inplace=True) is td
    assert td.get("instr") is instr and instr.tolist() == ["a", "b", "c", None, None]


def test_pad_a_non_tensor_stack_itself():
    stack = NonTensorStack("a", "b")
    assert pad(stack, [1, 1]).tolist() == [None, "a", "b", None]
    assert pad(stack, [0, 1], inplace=True) is stack
    assert stack.tolist() == ["a", "b", None]
    with pytest.raises(RuntimeError, match="cannot preserve the identity"):
        pad(NonTensorData("a", batch_size=[2]), [0, 1], inplace=True)


def test_pad_lazy_stack_in_place():
    members = [TensorDict(x=torch.ones(4) * i, batch_size=[4]) for i in (1, 2)]
    stack = lazy_stack(members)
    ref = pad(lazy_stack([m.clone() for m in members]), [1, 0, 0, 2], value=3.0)
    assert pad(stack, [1, 0, 0, 2], value=3.0, inplace=True) is stack
    assert stack.batch_size == ref.batch_size == (3, 6)
    assert stack.tensordicts[1] is members[0]
    assert torch.equal(stack["x"], ref["x"])


def test_pad_sequence_non_tensor_and_tensorclass():
    one = TensorDict({"a": torch.tensor([1, 1]), "b": "asd"})
    two = TensorDict({"a": torch.tensor([2]), "b": "efg"})
    out = pad_sequence([one, two])
    assert out["b"] == ["asd", "efg"]
    assert isinstance(out.get("b"), NonTensorStack)

    @tensorclass
    class Sample:
        a: torch.Tensor
        b: str

    out = pad_sequence(
        [Sample(a=torch.tensor([1, 1]), b="asd"), Sample(a=torch.tensor([2]), b="efg")]
    )
    assert isinstance(out, Sample)
    assert (out.a == torch.tensor([[1, 1], [2, 0]])).all()


# ------------------------------------------------------------------ keys, memmap
def test_items_nested_lists_non_tensor_values_as_non_tensor_data():
    td = TensorDict(
        a=torch.zeros(3, 2), s="x", b=TensorDict(t="y", batch_size=[3]), batch_size=[3]
    )
    items = dict(td.items(True))
    assert isinstance(items["s"], NonTensorData) and items["s"].data == "x"
    assert items["s"].batch_size == (3,)
    assert items[("b", "t")].data == "y"
    # items() with no argument too (a snapshot: the storage's own view only where
    # every entry reads as stored)
    assert dict(td.items())["s"].data == "x"


def test_unflatten_keys_refuses_a_leaf_over_a_tensordict():
    td = TensorDict({"a.b.c.d": torch.zeros(3), "a": {"b": {"c": torch.zeros(3)}}}, [])
    with pytest.raises(
        KeyError, match=r"Unflattening key\(s\) in tensordict will override"
    ):
        td.unflatten_keys(".")


def test_memmap_again_without_prefix_keeps_the_folder(tmp_path):
    TensorDict(a=torch.zeros(3)).memmap_(tmp_path)
    loaded = TensorDict.load_memmap(tmp_path)
    assert loaded.memmap_().saved_path == tmp_path


def test_make_memmap_refuses_an_existing_key(tmp_path):
    td = TensorDict().memmap_(tmp_path)
    td.make_memmap("a", shape=[3], dtype=torch.float32)
    with pytest.raises(
        RuntimeError, match="already exists within the target tensordict"
    ):
        td.make_memmap("a", shape=[3], dtype=torch.float32)


def test_merge_tensordicts_calls_back_with_every_value():
    from tensordict import merge_tensordicts

    td0 = TensorDict({"a": {"b0": 0}, "c": {"d": {"e": 0}}, "common": 0, "s": "x"})
    td1 = TensorDict({"a": {"b1": 1}, "f": {"g": {"h": 1}}, "common": 1})
    td2 = TensorDict({"a": {"b2": 2}, "f": {"g": {"h": 2}}, "common": 2})
    td = merge_tensordicts(td0, td1, td2, callback_exist=lambda *v: torch.stack(v))
    assert (td["common"] == torch.arange(3)).all()
    assert td["f", "g", "h"] == 1  # held by some inputs only: the first value
    assert td["a", "b2"] == 2 and td["s"] == "x"


def test_two_ellipses_raise_index_and_runtime_error():
    from tensordict.utils import convert_ellipsis_to_idx

    for error in (IndexError, RuntimeError):
        with pytest.raises(error):
            convert_ellipsis_to_idx((..., 0, ...), [3, 4, 5])


@pytest.mark.parametrize("kind", ["view", "unsqueeze", "squeeze"])
def test_filling_an_empty_tensordict_through_a_legacy_view(kind):
    from tensordict import set_lazy_legacy

    with set_lazy_legacy(True):
        if kind == "view":
            td = TensorDict(batch_size=[4, 4]).view(-1)
        elif kind == "unsqueeze":
            td = TensorDict(batch_size=[16]).unsqueeze(-1)
        else:
            td = TensorDict(batch_size=[16, 1]).squeeze(-1)
        for i in range(16):
            other = TensorDict(
                {"a": torch.full((10,), float(i)), "b": {"c": torch.ones(1)}}, []
            )
            if kind == "unsqueeze":
                other = other.unsqueeze(-1)
            td[i] = other
        assert (td.get(("b", "c")) == 1).all()
        assert td.get("a")[3].flatten()[0] == 3
        assert "a" in td._source.keys()


def test_repeated_or_mismatched_dims_raise_runtime_error_in_torch_words():
    td = TensorDict(a=torch.zeros(4, 5, 6, 7), batch_size=(4, 5, 6))
    with pytest.raises(RuntimeError, match="repeated dim in source"):
        td.movedim((0, 0), (1, 2))
    with pytest.raises(RuntimeError, match="repeated dim in destination"):
        td.movedim((0, 1), (2, 2))
    with pytest.raises(RuntimeError, match="same number of elements"):
        td.movedim((0,), (1, 2))
    with pytest.raises(ValueError):  # still a ValueError, as before
        td.permute(1, 1, 0)
    with pytest.raises(RuntimeError):
        td.permute(1, 1, 0)
