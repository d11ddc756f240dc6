"""clone(recurse=False) of a sub-tensordict keeps the view; PersistentTensorDict's
clone(newfile=...) writes a new file."""

import pytest
import torch

from tensordict import TensorDict
from tensordict._sub_td import _SubTensorDict


def test_sub_tensordict_shallow_clone_is_a_view_of_a_shallow_copy():
    td = TensorDict(
        a=torch.zeros(4, 3), sub=TensorDict(c=torch.zeros(4, 3)), batch_size=[4, 3]
    )
    view = td._get_sub_tensordict(1)
    copy = view.clone(recurse=False)
    assert type(copy) is _SubTensorDict
    assert copy.batch_size == view.batch_size
    copy["a"] += 1  # the tensors are shared
    assert (td["a"][1] == 1).all() and (td["a"][0] == 0).all()
    copy["new"] = torch.ones(3)  # the keys are the copy's own
    assert "new" not in td.keys()
    deep = view.clone()
    assert type(deep) is TensorDict
    deep["a"] += 1
    assert (td["a"][1] == 1).all()


def test_persistent_clone_newfile(tmp_path):
    pytest.importorskip("h5py")
    from tensordict import PersistentTensorDict

    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2])
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "a.h5")
    copy = h5.clone(newfile=tmp_path / "b.h5")
    assert isinstance(copy, PersistentTensorDict)
    assert (tmp_path / "b.h5").exists()
    assert (copy["a"] == td["a"]).all()
    copy["a"] += 1
    assert (h5["a"] == td["a"]).all()
    assert type(h5.clone()) is TensorDict


def test_persistent_shallow_clone_is_persistent(tmp_path):
    pytest.importorskip("h5py")
    from tensordict import PersistentTensorDict

    td = TensorDict(
        a=torch.zeros(2, 3), sub=TensorDict(b=torch.zeros(2)), batch_size=[2]
    )
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "a.h5")
    h5.lock_()
    copy = h5.clone(recurse=False)
    assert type(copy) is PersistentTensorDict and not copy.is_locked
    assert copy.batch_size == h5.batch_size
    copy["a"] += 1  # the same file
    assert (h5["a"] == 1).all()
    assert (copy["sub", "b"] == 0).all()
