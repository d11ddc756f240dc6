"""PersistentTensorDict: in-place restructuring refused with 0.15.3's error types and
phrases, a locked file takes in-place writes only, a nested group of a locked file
cannot be unlocked on its own."""

import gc

import pytest
import torch

pytest.importorskip("h5py")

from tensordict import PersistentTensorDict, TensorDict  # noqa: E402


@pytest.fixture
def h5(tmp_path):
    td = TensorDict(
        a=torch.zeros(4, 3),
        nested=TensorDict(b=torch.zeros(4, 3, 2), batch_size=[4, 3]),
        batch_size=[4, 3],
    )
    return PersistentTensorDict.from_dict(td, filename=tmp_path / "f.h5")


def test_inplace_restructuring_raises_015_types(h5):
    with pytest.raises(NotImplementedError, match="Cannot call select"):
        h5.select("a", inplace=True)
    with pytest.raises(ValueError, match="Cannot call flatten_keys in_place"):
        h5.flatten_keys(inplace=True)
    with pytest.raises(ValueError, match="Cannot call unflatten_keys in_place"):
        h5.unflatten_keys(inplace=True)
    with pytest.raises(RuntimeError):  # NotImplementedError is a RuntimeError
        h5.flatten_keys(inplace=True)
    # out of place: results in RAM
    assert set(h5.flatten_keys().keys()) == {"a", "nested.b"}
    assert list(h5.select("a").keys()) == ["a"]
    assert set(h5.keys()) == {"a", "nested"}


def test_locked_file_takes_in_place_writes_only(h5):
    h5.lock_()
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        h5.set("a", torch.ones(4, 3))
    h5.set_("a", torch.ones(4, 3))
    assert (h5["a"] == 1).all()
    h5.unlock_()
    h5.set("a", torch.zeros(4, 3))
    assert (h5["a"] == 0).all()


def test_nested_group_of_locked_file_cannot_unlock_alone(h5):
    h5.lock_()
    nested = h5.get("nested")
    assert nested.is_locked
    with pytest.raises(RuntimeError, match="part of a locked graph"):
        nested.unlock_()
    h5.unlock_()
    assert not nested.is_locked


def test_nested_group_unlocks_once_its_locked_parent_is_gone(tmp_path):
    td = TensorDict(nested=TensorDict(b=torch.zeros(3), batch_size=[3]), batch_size=[3])
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "g.h5")
    h5.lock_()
    nested = h5.get("nested")
    del h5
    gc.collect()
    nested.unlock_()
    assert not nested.is_locked


def test_numpy_arrays_are_set_as_tensors(h5):
    import numpy as np

    h5.set("arr", np.ones((4, 3, 2)))
    assert isinstance(h5["arr"], torch.Tensor)
    assert (h5["arr"] == 1).all()


def test_lazy_stack_set_at_takes_numpy():
    import numpy as np

    from tensordict import LazyStackedTensorDict

    stack = LazyStackedTensorDict.lazy_stack(
        [TensorDict(x=torch.zeros(3, 5), batch_size=[3]) for _ in range(2)], 0
    )
    stack.set_at_("x", np.ones(5) * 42, (1, 2))
    assert (stack["x"][1, 2] == 42).all()
    assert (stack["x"][0] == 0).all()
