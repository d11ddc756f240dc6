"""Non-tensor and unbatched data as 0.15.3's users rely on it: a NonTensorData read
from a tensordict writes through to it and shares its state (locked, shared,
memory-mapped); saving pickled values is silent, loading them needs a real bool;
UnbatchedTensor's batch_size follows the tensordict it is read from."""

import warnings

import pytest
import torch

from tensordict import (
    LazyStackedTensorDict,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    UnbatchedTensor,
    tensorclass,
)


@tensorclass
class _Holder:
    obs: torch.Tensor
    label: str


def _nested(value):
    return TensorDict({"sub": TensorDict({"val": value}, [])}, [])


# ------------------------------------------------------------------ share_memory_
def test_share_memory_without_tensors_is_shared_while_locked():
    td = TensorDict({"a": "x", "b": {"c": "y"}}, [])
    assert not td.is_shared()
    td.share_memory_()
    assert td.is_shared() and td._is_shared
    assert td["b"].is_shared()
    assert td.get("a")._is_shared and td.get("a")._tensordict._is_shared
    td.unlock_()
    assert not td.is_shared()


def test_plain_tensordict_without_tensors_is_not_shared():
    td = TensorDict({"a": "x"}, []).lock_()
    assert not td.is_shared()


# ------------------------------------------------------------------ write-through
@pytest.mark.parametrize("how", ["update_", "update-inplace", "set_"])
@pytest.mark.parametrize("nested", [False, True])
def test_nontensor_read_from_a_tensordict_writes_through(how, nested):
    td = _nested("before") if nested else TensorDict({"val": "before"}, [])
    key = ("sub", "val") if nested else "val"
    data = td.get(key)
    if how == "update_":
        data.update_(NonTensorData("after"))
    elif how == "update-inplace":
        data.update(NonTensorData("after"), inplace=True)
    else:
        data.set_("data", "after")
    assert data.data == "after"
    assert td[key] == "after"


@pytest.mark.parametrize("value", [1, "s", [0, "x"], {"k": 1, 2: 3}])
def test_nontensor_of_a_shared_tensordict_updates_in_place(value):
    td = TensorDict({"val": NonTensorData(0)}, []).share_memory_()
    data = td.get("val")
    assert data.is_locked and data._is_shared
    data.update_(NonTensorData(value))
    assert td["val"] == value
    with pytest.raises(RuntimeError, match="lock"):
        td.get("val").update(NonTensorData("other"))


@pytest.mark.parametrize("value", [1, "s", {"k": 1, 2: 3}])
def test_nontensor_of_a_memmapped_tensordict_updates_its_folder(tmp_path, value):
    td = TensorDict({"val": NonTensorData(0), "t": torch.zeros(2)}, [])
    td.memmap_(tmp_path)
    data = td.get("val")
    assert data._is_memmap and data._tensordict._is_memmap
    data.update_(NonTensorData(value))
    assert td["val"] == value
    loaded = TensorDict.load_memmap(tmp_path, allow_pickle=True)
    assert loaded["val"] == value


def test_update_inplace_replaces_nontensor_values_of_a_locked_tensordict():
    td = TensorDict(a="x", b=torch.zeros(())).lock_()
    td.update_(TensorDict(a="w"))
    assert td["a"] == "w"
    td.set_("a", 3)
    assert td["a"] == 3  # a number stays a value, not a tensor


def test_nontensor_in_a_tensorclass_and_lazy_stack_reads_unchanged():
    tc = _Holder(obs=torch.zeros(2), label="x", batch_size=[2])
    assert tc.label == "x"
    stack = LazyStackedTensorDict(TensorDict(a="x"), TensorDict(a="x"))
    assert stack[0]["a"] == "x"


# ------------------------------------------------------------------ pickle policy
def test_saving_pickled_values_is_silent_and_loading_needs_a_bool(tmp_path):
    td = TensorDict({"value": NonTensorData(1 + 2j)}, [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        td.memmap(tmp_path)
    for bad in (0, 1):
        with pytest.raises(TypeError, match="allow_pickle must be a bool or None"):
            TensorDict.load_memmap(tmp_path, allow_pickle=bad)
    with pytest.raises(RuntimeError, match="allow_pickle=True"):
        TensorDict.load_memmap(tmp_path, allow_pickle=False)
    assert TensorDict.load_memmap(tmp_path, allow_pickle=True)["value"] == 1 + 2j


# ------------------------------------------------------------------ UnbatchedTensor
def _with_unbatched(batch_size=(3,)):
    return TensorDict(
        a=UnbatchedTensor(torch.randn(10)),
        b=torch.randn(*batch_size),
        batch_size=batch_size,
    )


def test_unbatched_batch_size_follows_the_shape_ops():
    td = _with_unbatched()
    ptr = td["a"].data_ptr()
    for result in (
        td[0],
        td[:2],
        td.reshape(1, 3),
        td.unsqueeze(0),
        td.unflatten(0, (1, 3)),
        torch.stack([td, td], 0),
        torch.cat([td, td], 0),
        td.split(1)[0],
    ):
        assert result["a"].batch_size == result.batch_size
        assert result.get("a").batch_size == result.batch_size
        assert result["a"].data_ptr() == ptr
    nested = TensorDict(sub=td, batch_size=[3])
    assert nested["sub", "a"].batch_size == torch.Size([3])
    assert nested[0]["sub", "a"].batch_size == torch.Size([])


def test_unbatched_in_a_lazy_stack_has_the_stack_batch_size():
    stack = LazyStackedTensorDict(_with_unbatched((2,)), _with_unbatched((2,)))
    assert stack["a"].batch_size == torch.Size([2, 2])


def test_auto_batch_size_leaves_unbatched_tensors_out():
    td = TensorDict(a=UnbatchedTensor(0), b=torch.randn(2, 3)).auto_batch_size_(
        batch_dims=2
    )
    assert td.batch_size == (2, 3)
    assert td["a"] == 0


def test_stacking_different_unbatched_tensors_warns():
    one = TensorDict(
        a=torch.ones(3), ub=UnbatchedTensor(torch.zeros(5)), batch_size=[3]
    )
    two = TensorDict(a=torch.ones(3), ub=UnbatchedTensor(torch.ones(5)), batch_size=[3])
    with pytest.warns(UserWarning, match="different data storage"):
        torch.stack([one, two])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.stack([one, one.clone(recurse=False)])


def test_non_tensor_stack_is_its_own_contiguous_form():
    stack = NonTensorStack("a", "b")
    assert stack.contiguous() is stack
    assert stack.contiguous(canonical=True) is stack


def test_non_tensor_stack_where_picks_element_by_element():
    condition = torch.tensor([True, False])
    mine = NonTensorStack(NonTensorData(["a"]), NonTensorData(["a"]))
    other = NonTensorStack(NonTensorData(["b"]), NonTensorData(["b"]))
    out = NonTensorStack(NonTensorData(["n"]), NonTensorData(["n"]))
    result = mine.where(condition=condition, other=other, out=out, pad=0)
    assert result is out and result.tolist() == [["a"], ["b"]]
    assert mine.where(condition, "z").tolist() == [["a"], "z"]
