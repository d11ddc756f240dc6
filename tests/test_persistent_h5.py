"""PersistentTensorDict: an HDF5 file as a tensordict (lazy reads, writes to the file)."""

from __future__ import annotations

import pickle
import sys

import h5py
import numpy as np
import pytest
import torch

import tensordict
from tensordict import PersistentTensorDict, TensorDict


def data():
    return TensorDict(
        {
            "a": torch.arange(24.0).reshape(6, 4),
            "i": torch.arange(6),
            "flag": torch.tensor([True, False] * 3),
            "n": {"b": torch.ones(6, 2, dtype=torch.int32), "deep": {"c": torch.zeros(6)}},
            "s": "hello",
        },
        batch_size=[6],
    )


def data_as_read():
    """``data()`` as read back from the file: HDF5 gives strings as bytes (as 0.15.3)."""
    td = data()
    td.set_non_tensor("s", b"hello")
    return td


@pytest.fixture
def h5(tmp_path):
    td = PersistentTensorDict.from_dict(data(), tmp_path / "x.h5")
    yield td
    td.close()


def test_import_paths_and_constructors(tmp_path):
    import tensordict.persistent

    assert tensordict.PersistentTensorDict is tensordict.persistent.PersistentTensorDict
    data().to_h5(tmp_path / "y.h5").close()
    for opened in (
        tensordict.from_h5(tmp_path / "y.h5"),
        TensorDict.from_h5(tmp_path / "y.h5"),
        PersistentTensorDict.from_h5(tmp_path / "y.h5", mode="r"),
    ):
        assert type(opened) is PersistentTensorDict and opened.batch_size == (6,)
        assert (opened.to_tensordict() == data_as_read()).all()
        opened.close()


def test_reads_keys_and_nested_groups(h5):
    assert set(h5.keys()) == {"a", "i", "flag", "n", "s"}
    assert set(h5.keys(True, True)) == {"a", "i", "flag", ("n", "b"), ("n", "deep", "c")}
    assert type(h5["n"]) is PersistentTensorDict and h5["n"].batch_size == (6,)
    # HDF5 reads strings as bytes, as 0.15.3
    assert h5["s"] == b"hello" and h5["n", "b"].dtype == torch.int32
    assert torch.equal(h5.get(("n", "deep", "c")), torch.zeros(6))
    ram = h5.to_tensordict()
    assert type(ram) is TensorDict and (ram == data_as_read()).all()


@pytest.mark.parametrize(
    "index",
    [1, slice(1, 4), torch.tensor([4, 0, 4]), torch.tensor([True, False, True, False, False, True]), (slice(None), )],
    ids=["int", "slice", "tensor", "mask", "tuple"],
)
def test_indexing_reads_only_the_rows_asked_for(h5, index, monkeypatch):
    selections = []
    original = h5py.Dataset.__getitem__

    def spy(self, selection):
        selections.append((self.name, selection))
        return original(self, selection)

    monkeypatch.setattr(h5py.Dataset, "__getitem__", spy)
    got = h5[index]
    want = data()[index]
    assert type(got) is TensorDict and got.batch_size == want.batch_size
    assert (got.exclude("s") == want.exclude("s")).all()
    for name, selection in selections:
        if name.endswith("/s"):
            continue
        assert selection != () and selection is not Ellipsis, f"{name} was read whole"
    assert torch.equal(h5.get_at("a", torch.tensor([5, 1])), data()["a"][[5, 1]])


def test_indexing_sees_entries_written_after_a_read(h5):
    # reads keep the group's layout between calls; writes must show in the next read
    assert set(h5[0].keys()) == {"a", "i", "flag", "n", "s"}
    h5["new"] = torch.full((6,), 3.0)
    h5["a"] = torch.zeros(6, 4, dtype=torch.int64)  # same key, another dtype
    h5["n", "e"] = torch.ones(6)
    del h5["flag"]
    row = h5[1]
    assert set(row.keys()) == {"a", "i", "new", "n", "s"}
    assert row["new"] == 3.0 and row["a"].dtype == torch.int64 and row["n", "e"] == 1
    h5.file.create_dataset("by_hand", data=np.arange(6))  # written behind its back
    assert h5[2]["by_hand"] == 2


def test_whole_reads_see_entries_written_after_a_read(h5):
    # get and to_tensordict keep the h5py objects they looked up; writes must show
    assert h5["a"].dtype == torch.float32 and "new" not in h5.to_tensordict().keys()
    h5["a"] = torch.zeros(6, 4, dtype=torch.int64)  # same key, another dtype
    h5["new"] = torch.full((6,), 3.0)
    h5["n", "e"] = torch.ones(6)
    del h5["flag"]
    assert h5["a"].dtype == torch.int64 and h5["n", "e"].tolist() == [1.0] * 6
    ram = h5.to_tensordict()
    assert set(ram.keys()) == {"a", "i", "new", "n", "s"} and ram["a"].dtype == torch.int64
    with pytest.raises(KeyError, match="flag"):
        h5["flag"]
    h5.file.create_dataset("by_hand", data=np.arange(6))  # written behind its back
    assert h5["by_hand"].tolist() == list(range(6))
    assert h5.to_tensordict()["by_hand"].tolist() == list(range(6))


def test_writes_go_to_the_file(h5, tmp_path):
    h5["a"][0] = 100.0  # the form users write: into the tensor `get` returns
    h5["i"].add_(1)
    h5.set_("flag", torch.ones(6, dtype=torch.bool))
    h5.update_({"n": {"b": torch.full((6, 2), 7, dtype=torch.int32)}})
    h5[2] = TensorDict(a=torch.full((4,), -1.0), i=torch.tensor(-1), batch_size=[])
    h5["new"] = torch.ones(6, 3)
    h5["note"] = "a new string"
    h5.close()
    with PersistentTensorDict.from_h5(tmp_path / "x.h5") as back:
        assert (back["a"][0] == 100).all() and (back["a"][2] == -1).all()
        assert back["i"].tolist() == [1, 2, -1, 4, 5, 6]
        assert back["flag"].all() and (back["n", "b"] == 7).all()
        assert back["new"].shape == (6, 3) and back["note"] == b"a new string"


def test_in_place_ops_write_and_other_ops_give_ram_results(h5, tmp_path):
    result = h5 + 1
    assert type(result) is TensorDict and torch.equal(result["a"], data()["a"] + 1)
    numbers = PersistentTensorDict.from_dict(data().exclude("flag"), tmp_path / "n.h5")
    assert numbers.mul_(2) is numbers
    numbers.close()
    with PersistentTensorDict.from_h5(tmp_path / "n.h5") as back:
        assert torch.equal(back["a"], data()["a"] * 2)
        assert torch.equal(back["n", "b"], data()["n", "b"] * 2)


def test_batch_size_errors_and_read_only(tmp_path, h5):
    with pytest.raises(RuntimeError, match="batch"):
        h5["bad"] = torch.zeros(5)
    h5.close()
    with PersistentTensorDict.from_h5(tmp_path / "x.h5", mode="r") as ro:
        with pytest.raises(RuntimeError, match="read-only"):
            ro["x"] = torch.zeros(6)
    with h5py.File(tmp_path / "foreign.h5", "w") as f:  # a file written without us
        f["obs"] = np.zeros((10, 3), dtype=np.float32)
        f["act"] = np.zeros((10,), dtype=np.int64)
    foreign = PersistentTensorDict.from_h5(tmp_path / "foreign.h5")
    assert foreign.batch_size == (10,)
    assert PersistentTensorDict.from_h5(tmp_path / "foreign.h5", batch_size=[]).batch_size == ()
    foreign.close()


def test_pickle_sends_the_file_and_group(h5):
    h5["big"] = torch.zeros(6, 100_000)
    payload = pickle.dumps(h5["n"])
    assert len(payload) < 2000
    back = pickle.loads(payload)
    assert type(back) is PersistentTensorDict and back.batch_size == (6,)
    assert set(back.keys()) == {"b", "deep"}
    back.close()


def test_memmap_of_an_h5_file(h5, tmp_path):
    saved = h5.memmap(tmp_path / "mm")
    assert type(saved) is TensorDict and saved.is_memmap()
    assert (TensorDict.load_memmap(tmp_path / "mm") == data_as_read()).all()
    with pytest.raises(RuntimeError, match="memmap\\(\\)"):
        h5.memmap_(tmp_path / "nope")


def test_missing_h5py_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"tensordict\[h5\]"):
        PersistentTensorDict.from_h5(tmp_path / "x.h5")
