"""``to_h5`` / ``PersistentTensorDict.from_dict`` pass h5py dataset options to every
tensor, nested ones included (0.15.3's behaviour)."""

import pytest
import torch

from tensordict import PersistentTensorDict, TensorDict

h5py = pytest.importorskip("h5py")


def test_to_h5_dataset_options_reach_nested_tensors(tmp_path):
    td = TensorDict(
        {
            "a": torch.zeros(8, 3),
            "b": {"c": torch.zeros(8, 5), "d": {"e": torch.ones(8)}},
        },
        batch_size=[8],
    )
    td.to_h5(tmp_path / "file.h5", compression="gzip", compression_opts=9)
    with h5py.File(tmp_path / "file.h5", "r") as f:
        for key in ("a", "b/c", "b/d/e"):
            assert f[key].compression == "gzip", key
            assert f[key].compression_opts == 9, key
    back = TensorDict.from_h5(tmp_path / "file.h5")
    assert (back["b", "d", "e"] == 1).all()


def test_from_dict_dataset_options_skip_non_tensor_values(tmp_path):
    td = TensorDict({"a": torch.zeros(8, 3), "s": "a string"}, batch_size=[8])
    out = PersistentTensorDict.from_dict(td, tmp_path / "f.h5", compression="gzip")
    assert out.file["a"].compression == "gzip"
    assert out["s"] == b"a string"  # HDF5 reads strings as bytes (0.15.3)
    out.close()


def test_unknown_dataset_option_raises(tmp_path):
    td = TensorDict({"a": torch.zeros(8, 3)}, batch_size=[8])
    with pytest.raises(TypeError, match="bogus"):
        td.to_h5(tmp_path / "f.h5", bogus=1)
