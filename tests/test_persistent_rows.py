"""What both PersistentTensorDict backends (HDF5, zarr) share through
tensordict/persistent.py: row writes, nested keys, non-tensor reads, renames."""

import importlib.util

import pytest
import torch

import tensordict
from tensordict import NonTensorData, PersistentTensorDict, TensorDict


def _zarr_ok():
    if importlib.util.find_spec("zarr") is None:
        return False
    import zarr

    return int(zarr.__version__.split(".")[0]) >= 3


BACKENDS = [
    pytest.param(
        "h5",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("h5py") is None, reason="h5py missing"
        ),
    ),
    pytest.param(
        "zarr", marks=pytest.mark.skipif(not _zarr_ok(), reason="zarr 3 missing")
    ),
]


def _write(backend, td, tmp_path):
    if backend == "h5":
        return td.to_h5(str(tmp_path / "x.h5"))
    return td.to_zarr(tmp_path / "x.zarr")


def _reopen(backend, tmp_path):
    if backend == "h5":
        return tensordict.from_h5(str(tmp_path / "x.h5"))
    return tensordict.from_zarr(tmp_path / "x.zarr")


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_written_in_place(backend, tmp_path):
    p = _write(
        backend,
        TensorDict(
            a=torch.zeros(6),
            b={"c": torch.zeros(6, 2, dtype=torch.int32)},
            batch_size=[6],
        ),
        tmp_path,
    )
    p[1:3] = TensorDict(a=torch.ones(2), b={"c": torch.full((2, 2), 5)}, batch_size=[2])
    p[torch.tensor([0, 5])] = TensorDict(a=torch.full((2,), 7.0), batch_size=[2])
    p[torch.tensor([4, 3])] = TensorDict(a=torch.tensor([4.0, 3.0]), batch_size=[2])
    mask = torch.tensor([False, False, False, False, True, False])
    p[mask] = 9.0
    p[3] = TensorDict(
        a=torch.tensor(-3.0), b={"c": torch.tensor([1, 1])}, batch_size=[]
    )
    if backend == "h5":
        p.close()
    back = _reopen(backend, tmp_path)
    assert back["a"].tolist() == [7.0, 1.0, 1.0, -3.0, 9.0, 7.0]
    assert back["b", "c"][:, 0].tolist() == [0, 5, 5, 1, 9, 0]
    assert back["b", "c"].dtype == torch.int32


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_key_goes_to_the_file(backend, tmp_path):
    p = _write(backend, TensorDict(a=torch.zeros(3), batch_size=[3]), tmp_path)
    p["new", "deep"] = torch.arange(3)
    assert p["new", "deep"].tolist() == [0, 1, 2]
    if backend == "h5":
        p.close()
    assert _reopen(backend, tmp_path)["new", "deep"].tolist() == [0, 1, 2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_non_tensor_get_is_non_tensor_data(backend, tmp_path):
    td = TensorDict(a=torch.zeros(3), batch_size=[3])
    td["s"] = "text"
    p = _write(backend, td, tmp_path)
    text = b"text" if backend == "h5" else "text"  # HDF5 reads bytes, as 0.15.3
    assert p["s"] == text
    got = p.get("s")
    assert isinstance(got, NonTensorData) and got.data == text
    assert got.batch_size == (3,)
    assert p.get("missing", 1) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_rename_refuses_to_overwrite(backend, tmp_path):
    p = _write(
        backend, TensorDict(a=torch.zeros(3), b=torch.ones(3), batch_size=[3]), tmp_path
    )
    assert isinstance(p, PersistentTensorDict)
    with pytest.raises(KeyError, match="already present"):
        p.rename_key_("a", "b")
    assert p["b"].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.skipif(importlib.util.find_spec("h5py") is None, reason="h5py missing")
def test_h5_dataset_options_reach_every_leaf(tmp_path):
    import h5py

    td = TensorDict(a=torch.zeros(8, 3), b={"c": {"d": torch.zeros(8)}}, batch_size=[8])
    td["s"] = torch.tensor(1.0).expand(8).clone()
    p = td.to_h5(str(tmp_path / "x.h5"), compression="gzip", compression_opts=4)
    p["new"] = torch.ones(8)  # created later by the same handle: the same options
    p.close()
    with h5py.File(tmp_path / "x.h5", "r") as f:
        for key in ("a", "b/c/d", "new"):
            assert f[key].compression == "gzip" and f[key].compression_opts == 4, key
