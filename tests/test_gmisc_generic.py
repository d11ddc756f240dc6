"""Small behaviours of 0.15.3 that code relies on: depth ignores empty nested
tensordicts, bytes counts gradients and jagged tensors' parts, gather's argument
checks, the error type of source-and-keywords construction, ``in`` with a non-key,
renaming onto an enclosing key, split_keys(inplace=True) dropping emptied levels,
movedim without a move."""

import pytest
import torch

from tensordict import TensorDict


def test_depth_ignores_empty_nested():
    td = TensorDict({"a": {"b": {"c": {"d": 0}, "e": 0}, "f": 0}, "g": 0})
    assert td.depth == 3
    del td["a", "b", "c", "d"]
    assert td.depth == 2
    assert TensorDict(a=TensorDict()).depth == 0
    assert TensorDict(a={"s": "text"}).depth == 1


def test_bytes_counts_grad_and_jagged_parts():
    w = torch.ones(3, requires_grad=True)
    w.sum().backward()
    values = torch.ones(3)
    offsets = torch.tensor([0, 1, 3])
    njt = torch.nested.nested_tensor_from_jagged(values, offsets)
    td = TensorDict(w=w, njt=njt, v=values)
    assert td.bytes() == 24 + (12 + 24) + 12
    # the jagged tensor's values are the tensor stored under "v": counted once
    assert td.bytes(count_duplicates=False) == 24 + 24 + 12


def test_gather_argument_checks():
    td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
    index = torch.zeros(3, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="mutually exclusive"):
        td.gather(0, index, out=td.clone(), inplace=True)
    with pytest.raises(NotImplementedError, match="index.ndim"):
        td.gather(0, torch.tensor([0, 1]), inplace=True)


def test_source_and_keywords_is_a_value_error():
    with pytest.raises(ValueError, match="not both"):
        TensorDict(a=1, source={"b": 2})


def test_in_with_a_non_key_raises():
    td = TensorDict(a=0)
    with pytest.raises(RuntimeError, match="NestedKey"):
        0 in td  # noqa: B015
    assert "a" in td and ("a",) in td and "b" not in td


def test_rename_onto_an_enclosing_key():
    td = TensorDict(a={"b": {"c": 0}, "x": 1})
    td.rename_key_(("a", "b", "c"), ("a", "b"))
    assert td["a", "b"] == 0 and td["a", "x"] == 1


def test_split_keys_inplace_drops_emptied_levels():
    td = TensorDict({"a": 0, "b": {"c": 1, "z": 2}, "d": {"e": 1, "f": 2}})
    first, second, rest = td.split_keys(
        [("b", "c")], [("d", "e"), ("d", "f")], inplace=True
    )
    assert rest is td
    assert "d" not in td and ("b", "z") in td
    assert ("d", "e") in second and ("b", "c") in first


def test_movedim_without_a_move_is_the_tensordict():
    td = TensorDict(a=torch.zeros(2, 3, 4), batch_size=[2, 3])
    assert td.movedim(1, 1) is td
    assert td.moveaxis((0, 1), (0, 1)) is td
    assert td.movedim(0, 1).batch_size == (3, 2)


def test_stack_keeps_names_only_when_every_input_has_them():
    td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4], names=["first", "second"])
    other = td.clone()
    other.names = ["first", "third"]
    assert torch.stack([td, td], 1).names == ["first", None, "second"]
    assert torch.stack([td, other], 0).names == [None, None, None]
    assert torch.cat([td, other], 0).names == ["first", "second"]
