"""PersistentTensorDict over a zarr store: td.to_zarr, tensordict.from_zarr
(tensordict/_zarr.py, tensordict/persistent.py)."""

import json
import pickle

import numpy as np
import pytest
import torch

import tensordict
from tensordict import NonTensorData, NonTensorStack, PersistentTensorDict, TensorDict

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip("the zarr backend needs zarr 3", allow_module_level=True)


def _td(n=10):
    td = TensorDict(
        a=torch.arange(float(n)),
        b={"c": torch.arange(2 * n).reshape(n, 2)},
        batch_size=[n],
        names=["row"],
    )
    td["note"] = "hello"
    td["meta"] = NonTensorData({"x": 1}, batch_size=[n])
    td["words"] = [f"w{i}" for i in range(n)]
    return td


class _CountingStore(zarr.storage.WrapperStore):
    """Records the keys read from the wrapped store."""

    def __init__(self, store):
        super().__init__(store)
        self.reads = []

    async def get(self, key, prototype, byte_range=None):
        self.reads.append(key)
        return await self._store.get(key, prototype, byte_range)

    def _with_store(self, store):
        other = type(self)(store)
        other.reads = self.reads
        return other


def _chunk_reads(store, array_path):
    prefix = f"{array_path}/c/"
    return sorted(k[len(prefix) :] for k in store.reads if k.startswith(prefix))


def test_to_zarr_round_trip(tmp_path):
    td = _td()
    path = tmp_path / "data.zarr"
    z = td.to_zarr(path)
    assert isinstance(z, PersistentTensorDict) and z.backend == "zarr"
    assert z.batch_size == torch.Size([10])
    for opened in (
        tensordict.from_zarr(path),
        TensorDict.from_zarr(path),
        PersistentTensorDict.from_zarr(path),
    ):
        assert isinstance(opened, PersistentTensorDict)
        assert opened.batch_size == torch.Size([10])
        assert opened.names == ["row"]
        assert torch.equal(opened["a"], td["a"])
        assert torch.equal(opened["b", "c"], td["b", "c"])
        assert opened["note"] == "hello"
        assert opened["meta"] == {"x": 1}
        assert isinstance(opened.get("words"), NonTensorStack)
        assert opened.get("words").tolist() == td.get("words").tolist()
        assert (
            opened.to_tensordict().exclude("note", "meta", "words")
            == td.exclude("note", "meta", "words")
        ).all()
        assert set(opened.keys(True, True)) == set(td.keys(True, True))


def test_layout_is_0153s(tmp_path):
    path = tmp_path / "data.zarr"
    _td().to_zarr(path, chunks=(4,))
    root = json.loads((path / "zarr.json").read_text())
    assert root["attributes"]["__tensordict__"] == {
        "batch_size": [10],
        "version": 1,
        "names": ["row"],
    }
    a = json.loads((path / "a" / "zarr.json").read_text())
    assert a["chunk_grid"]["configuration"]["chunk_shape"] == [4]
    c = json.loads((path / "b" / "c" / "zarr.json").read_text())
    assert c["chunk_grid"]["configuration"]["chunk_shape"] == [
        4,
        2,
    ]  # trailing dims whole
    note = json.loads((path / "note" / "zarr.json").read_text())
    assert note["attributes"]["__tensordict_non_tensor__"] == {"encoding": "json"}
    words = json.loads((path / "words" / "zarr.json").read_text())
    assert words["attributes"]["__tensordict_stack__"] == [10]
    # a reader of plain zarr sees the arrays
    group = zarr.open_group(str(path), mode="r")
    assert group["b"]["c"][3].tolist() == [6, 7]
    assert bytes(group["note"][...]).decode() == '"hello"'


def test_indexed_reads_read_only_their_chunks(tmp_path):
    path = str(tmp_path / "rows.zarr")
    TensorDict(
        x=torch.arange(100.0),
        y={"z": torch.arange(300).reshape(100, 3)},
        batch_size=[100],
    ).to_zarr(path, chunks=(10,))
    store = _CountingStore(zarr.storage.LocalStore(path, read_only=True))
    z = tensordict.from_zarr(store)
    store.reads.clear()
    rows = z[25:32]
    assert rows["x"].tolist() == list(range(25, 32))
    assert rows["y", "z"][0].tolist() == [75, 76, 77]
    assert _chunk_reads(store, "x") == ["2", "3"]
    assert _chunk_reads(store, "y/z") == ["2/0", "3/0"]
    store.reads.clear()
    picked = z[torch.tensor([3, 95])]
    assert picked["x"].tolist() == [3.0, 95.0]
    assert _chunk_reads(store, "x") == ["0", "9"]
    store.reads.clear()
    assert z.get_at("x", slice(50, 52)).tolist() == [50.0, 51.0]
    assert _chunk_reads(store, "x") == ["5"]
    mask = torch.zeros(100, dtype=torch.bool)
    mask[[1, 2, 41]] = True
    assert z[mask]["x"].tolist() == [1.0, 2.0, 41.0]


def test_indexed_writes_write_only_their_chunks(tmp_path):
    path = tmp_path / "rows.zarr"
    z = TensorDict(
        x=torch.full((100,), -1.0),  # not the fill value: every chunk is a file
        y={"z": torch.ones(100, 3, dtype=torch.int64)},
        batch_size=[100],
    ).to_zarr(path, chunks=(10,))
    chunk_files = sorted((path / "x" / "c").iterdir())
    before = {f.name: f.stat().st_mtime_ns for f in chunk_files}
    z[40:42] = TensorDict(
        x=torch.ones(2), y={"z": torch.full((2, 3), 7)}, batch_size=[2]
    )
    z[torch.tensor([5, 99])] = TensorDict(x=torch.full((2,), 2.0), batch_size=[2])
    after = {f.name: f.stat().st_mtime_ns for f in sorted((path / "x" / "c").iterdir())}
    changed = sorted(name for name in before if after[name] != before[name])
    assert changed == ["0", "4", "9"]
    back = tensordict.from_zarr(path)
    assert back["x"][[5, 40, 41, 99]].tolist() == [2.0, 1.0, 1.0, 2.0]
    assert back["x"].sum() == 6.0 - 96
    assert back["y", "z"][40].tolist() == [7, 7, 7] and back["y", "z"][42].sum() == 3
    # an index out of order, or a new key, takes the whole-content path: still right
    z[torch.tensor([8, 3])] = TensorDict(x=torch.tensor([8.0, 3.0]), batch_size=[2])
    assert z["x"][[3, 8]].tolist() == [3.0, 8.0]
    z[0] = 9.0
    assert z["x"][0] == 9.0 and z["y", "z"][0].tolist() == [9, 9, 9]


def test_writes_go_to_the_store(tmp_path):
    path = tmp_path / "w.zarr"
    z = _td().to_zarr(path)
    z["new"] = torch.ones(10, 4)
    z["a"][0] = 100.0  # a tensor read from a writable store writes itself back
    z.set_("b", {"c": torch.zeros(10, 2, dtype=torch.int64)})
    z["nested", "deep"] = torch.arange(10)
    z["text"] = "again"
    del z["note"]
    back = tensordict.from_zarr(path)
    assert back["new"].shape == (10, 4)
    assert back["a"][0] == 100.0
    assert back["b", "c"].sum() == 0
    assert back["nested", "deep"].tolist() == list(range(10))
    assert back["text"] == "again"
    assert "note" not in back.keys()
    with pytest.raises(RuntimeError, match="read-only"):
        back["a"] = torch.zeros(10)


def test_ops_give_tensordicts_in_ram(tmp_path):
    z = _td().to_zarr(tmp_path / "o.zarr")
    out = z.exclude("note", "meta", "words") + 1
    assert type(out) is TensorDict
    assert out["a"][0] == 1.0
    assert torch.equal(z.to_tensordict()["a"], torch.arange(10.0))
    assert z.unbind(0)[3]["a"] == 3.0


def test_store_objects_and_pickling(tmp_path):
    store = zarr.storage.MemoryStore()
    z = TensorDict(x=torch.arange(3), batch_size=[3]).to_zarr(store)
    assert tensordict.from_zarr(store)["x"].tolist() == [0, 1, 2]
    path = tmp_path / "p.zarr"
    z = TensorDict(x=torch.arange(3), batch_size=[3]).to_zarr(path)
    again = pickle.loads(pickle.dumps(z))
    assert again.backend == "zarr" and again["x"].tolist() == [0, 1, 2]
    assert pickle.loads(pickle.dumps(z["x"])).tolist() == [0, 1, 2]


def test_foreign_store_batch_size_and_strings(tmp_path):
    path = str(tmp_path / "foreign.zarr")
    group = zarr.open_group(path, mode="w")
    group.create_array("x", shape=(6, 2), dtype="float32")[...] = np.ones((6, 2))
    sub = group.create_group("sub")
    sub.create_array("y", shape=(6,), dtype="int32")[...] = np.arange(6)
    group.create_array("label", shape=(6,), dtype=str)[...] = np.array(list("abcdef"))
    z = tensordict.from_zarr(path)
    assert z.batch_size == torch.Size([6])
    assert z["sub", "y"].tolist() == list(range(6))
    assert list(z["label"]) == list("abcdef")  # one value: the whole array
    assert z.get("label").batch_size == torch.Size([6])
    stacked = tensordict.from_zarr(path, non_tensor_as_stack=True)
    assert isinstance(stacked.get("label"), NonTensorStack)
    assert tensordict.from_zarr(path, batch_size=[6, 2], mode="r").batch_size == (6, 2)
    assert tensordict.from_zarr(
        path, auto_batch_size=True, batch_dims=1
    ).batch_size == (6,)
    with pytest.raises(TypeError, match="not both"):
        tensordict.from_zarr(path, auto_batch_size=True, batch_size=[6])


def test_pickled_values_need_allow_pickle(tmp_path):
    path = str(tmp_path / "pk.zarr")
    group = zarr.open_group(
        path, mode="w", attributes={"__tensordict__": {"batch_size": [], "version": 1}}
    )
    payload = np.frombuffer(pickle.dumps({1, 2}), dtype=np.uint8)
    node = group.create_array(
        "obj",
        shape=payload.shape,
        dtype="uint8",
        attributes={"__tensordict_non_tensor__": {"encoding": "pickle"}},
    )
    node[...] = payload
    with pytest.raises(RuntimeError, match="allow_pickle=True"):
        tensordict.from_zarr(path)["obj"]
    assert tensordict.from_zarr(path, allow_pickle=True)["obj"] == {1, 2}


def test_refusals(tmp_path):
    with pytest.raises(TypeError, match="JSON"):
        TensorDict(o=NonTensorData(object()), batch_size=[]).to_zarr(
            tmp_path / "x.zarr"
        )
    assert not (tmp_path / "x.zarr").exists()  # nothing half-written
    with pytest.raises(TypeError, match="bfloat16"):
        TensorDict(a=torch.zeros(2, dtype=torch.bfloat16), batch_size=[2]).to_zarr(
            tmp_path / "y.zarr"
        )


def test_rewrite_replaces_and_failure_keeps_old(tmp_path):
    path = tmp_path / "r.zarr"
    TensorDict(a=torch.zeros(3), batch_size=[3]).to_zarr(path)
    TensorDict(b=torch.ones(2), batch_size=[2]).to_zarr(path)
    assert set(tensordict.from_zarr(path).keys()) == {"b"}
    with pytest.raises(TypeError):
        TensorDict(c=NonTensorData(object()), batch_size=[]).to_zarr(path)
    assert set(tensordict.from_zarr(path).keys()) == {"b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.zarr"]


def test_every_kind_writes_zarr(tmp_path):
    td = TensorDict(a=torch.arange(4), batch_size=[4])
    for i, kind in enumerate((td, td[1:3], TensorDict.lazy_stack([td[0], td[1]]))):
        z = kind.to_zarr(tmp_path / f"k{i}.zarr")
        assert torch.equal(z["a"], kind["a"])


def test_tensorclass_to_and_from_zarr(tmp_path):
    from tensordict import tensorclass

    @tensorclass
    class Rows:
        a: torch.Tensor

    data = Rows(a=torch.arange(3.0), batch_size=[3])
    out = data.to_zarr(tmp_path / "tc.zarr")
    assert type(out) is Rows and isinstance(out._tensordict, PersistentTensorDict)
    assert out.a.tolist() == [0.0, 1.0, 2.0]
    again = Rows.from_zarr(tmp_path / "tc.zarr")
    assert type(again) is Rows and again[1].a == 1.0


def test_listing_written_and_kept_fresh(tmp_path):
    path = tmp_path / "c.zarr"
    z = TensorDict(a=torch.zeros(3), batch_size=[3]).to_zarr(path)
    listing = zarr.open_group(str(path), mode="r").metadata.consolidated_metadata
    assert listing is not None and "a" in listing.metadata
    z["b"] = torch.ones(3)
    del z["a"]
    reopened = tensordict.from_zarr(path)  # mode="r" trusts the listing
    assert set(reopened.keys()) == {"b"}


def test_rename_does_not_overwrite(tmp_path):
    z = TensorDict(a=torch.zeros(3), b=torch.ones(3), batch_size=[3]).to_zarr(
        tmp_path / "n.zarr"
    )
    with pytest.raises(KeyError, match="already present"):
        z.rename_key_("a", "b")
    z.rename_key_("a", "c")
    assert set(tensordict.from_zarr(tmp_path / "n.zarr").keys()) == {"b", "c"}


def test_from_schema_zarr(tmp_path):
    z = TensorDict.from_schema(
        {"obs": ([4], torch.float32), "reward": ([], torch.int64)},
        batch_size=[8],
        storage="zarr",
        filename=str(tmp_path / "s.zarr"),
    )
    assert isinstance(z, PersistentTensorDict) and z.backend == "zarr"
    assert z["obs"].shape == (8, 4) and z["reward"].dtype == torch.int64


def test_foreign_nested_group_gets_its_arrays_batch(tmp_path):
    path = str(tmp_path / "f.zarr")
    root = zarr.open_group(path, mode="w")
    root.create_array("x", shape=(3, 4), dtype="float32")[...] = np.ones((3, 4))
    root.create_group("sub").create_array("y", shape=(3, 4, 5), dtype="int64")[...] = 1
    z = tensordict.from_zarr(path)
    assert z.batch_size == (3, 4) and z["sub"].batch_size == (3, 4, 5)


def test_expanded_value_is_stored_once(tmp_path):
    td = TensorDict({"c": "same"}, []).expand(10)
    z = td.to_zarr(tmp_path / "e.zarr")
    assert z["c"] == "same"
    assert z.get("c").batch_size == (10,)
    assert (
        "__tensordict_stack__"
        not in zarr.open_group(str(tmp_path / "e.zarr"))["c"].attrs
    )
