"""Memory-mapped tensordicts and save/load: round trips of every container kind, the
on-disk format's safety (bad inputs, unsafe keys, crashes), sharing between processes,
torch.save / torch.load(weights_only=True)."""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    MemoryMappedTensor,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    tensorclass,
)
from tensordict._disk import PickledValueWarning, SavedDataError, finish_removals
from tensordict import _disk

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_memmap_tensor import ALL_DTYPES, random_of, same_bits  # noqa: E402


@tensorclass
class Inner:
    z: torch.Tensor


@tensorclass
class Sample:
    image: torch.Tensor
    label: str
    inner: Inner


def dense():
    return TensorDict(
        {
            "a": torch.randn(3, 4),
            "b": torch.arange(3),
            "flag": torch.tensor([True, False, True]),
            "nested": {"c": torch.randn(3, 2, 2), "deeper": {"d": torch.ones(3)}},
            "text": "hello",
        },
        batch_size=[3],
        names=["time"],
    ).set_non_tensor("number", 3.5)


def lazy():
    return LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2), s="x"),
        TensorDict(a=torch.ones(3), s="y", extra=torch.ones(1)),
        stack_dim=0,
    )


def tensorclass_data():
    return Sample(
        image=torch.randn(4, 2),
        label="cat",
        inner=Inner(z=torch.arange(4), batch_size=[4]),
        batch_size=[4],
    )


def non_tensor():
    td = TensorDict(x=torch.zeros(2), batch_size=[2])
    td["stack"] = NonTensorStack("a", "b")
    td.set_non_tensor("config", {"lr": 0.1, "layers": [1, 2]})
    td.set_non_tensor("count", 3)
    return td


def holding_a_lazy_stack():
    td = TensorDict(x=torch.zeros(2, 3), batch_size=[2])
    td["stack"] = lazy()
    td["tc"] = tensorclass_data()[:2]
    return td


KINDS = {
    "dense": dense,
    "holding_lazy_stack_and_tensorclass": holding_a_lazy_stack,
    "lazy_stack": lazy,
    "tensorclass": tensorclass_data,
    "non_tensor": non_tensor,
    "non_tensor_data": lambda: NonTensorData("hi", batch_size=[3]),
}


def assert_same(got, want):
    """Class, batch size, names, device, lock state, keys, values (bits), non-tensor
    data, recursively."""
    assert type(got) is type(want), (type(got), type(want))
    assert got.batch_size == want.batch_size
    assert got.device == want.device
    assert got.is_locked == want.is_locked
    if isinstance(want, LazyStackedTensorDict):
        assert got.stack_dim == want.stack_dim and len(got.tensordicts) == len(want.tensordicts)
        for g, w in zip(got.tensordicts, want.tensordicts):
            assert_same(g, w)
        return
    if isinstance(want, NonTensorStack):
        assert got.tolist() == want.tolist()
        return
    assert got.names == want.names
    assert sorted(got.keys()) == sorted(want.keys())
    stored = dict(got.items())  # the entries as stored (td[key] reads a stack as a list)
    for key, value in want.items():
        other = stored[key]
        if isinstance(value, torch.Tensor):
            assert same_bits(other, value), key
        elif isinstance(value, tensordict.TensorDictBase):
            assert_same(other, value)
        else:
            assert other == value and type(other) is type(value), key


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("locked", [False, True], ids=["unlocked", "locked"])
def test_every_container_kind_round_trips(kind, locked, tmp_path):
    data = KINDS[kind]()
    if locked:
        data.lock_()
    saved = data.save(tmp_path / "saved")
    assert saved.is_memmap() and saved.is_locked
    loaded = TensorDict.load_memmap(tmp_path / "saved")
    assert_same(loaded, data)
    assert_same(tensordict.load(tmp_path / "saved"), data)
    assert_same(tensordict.load_memmap(str(tmp_path / "saved")), data)
    # through torch.save with torch's default weights_only=True
    buffer = io.BytesIO()
    torch.save(data, buffer)
    buffer.seek(0)
    assert_same(torch.load(buffer), data)
    assert_same(pickle.loads(pickle.dumps(data)), data)


def test_class_comes_back_as_saved(tmp_path):
    tensorclass_data().memmap(tmp_path / "tc")
    loaded = TensorDict.load_memmap(tmp_path / "tc")
    assert type(loaded) is Sample and type(loaded.inner) is Inner
    assert loaded.label == "cat" and type(loaded.image) is MemoryMappedTensor
    assert type(Sample.load_memmap(tmp_path / "tc")) is Sample
    lazy().memmap(tmp_path / "lazy")
    stack = TensorDict.load_memmap(tmp_path / "lazy")
    assert type(stack) is LazyStackedTensorDict
    assert stack[1]["extra"].shape == (1,) and stack[0]["s"] == "x"
    # each member in its own folder, loadable alone
    assert sorted(p.name for p in (tmp_path / "lazy").iterdir()) == ["0", "1", "meta.json"]
    assert TensorDict.load_memmap(tmp_path / "lazy" / "1")["a"].tolist() == [1, 1, 1]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_round_trips_in_a_tensordict(dtype, tmp_path):
    td = TensorDict(x=random_of(dtype, (4, 3)), n={"y": random_of(dtype, (4,), 1)}, batch_size=[4])
    td.memmap(tmp_path / "td")
    back = TensorDict.load_memmap(tmp_path / "td")
    assert same_bits(back["x"], td["x"]) and same_bits(back["n", "y"], td["n", "y"])


# ----------------------------------------------------------------------------- semantics


def test_memmap_in_place_and_copy(tmp_path):
    td = dense()
    out = td.memmap_(tmp_path / "p")
    assert out is td and td.is_memmap() and td.is_locked
    assert td.saved_path == tmp_path / "p" and td["nested"].saved_path == tmp_path / "p" / "nested"
    assert type(td["a"]) is MemoryMappedTensor and td["a"].filename.startswith(str(tmp_path))
    with pytest.raises(RuntimeError, match="locked"):
        td["new"] = torch.zeros(3)
    td["a"][0] = 42.0  # writes reach the file
    assert (TensorDict.load_memmap(tmp_path / "p")["a"][0] == 42.0).all()
    copy = td.memmap(tmp_path / "q", copy_existing=True)
    assert copy is not td and copy.saved_path == tmp_path / "q"
    with pytest.raises(RuntimeError, match="copy_existing=True"):
        td.memmap(tmp_path / "r")
    td.memmap_(tmp_path / "p")  # again at its own folder: nothing to copy
    assert td["a"][0, 0] == 42.0
    td.unlock_()
    assert not td.is_memmap()
    with pytest.raises(AttributeError):
        td.saved_path


@pytest.mark.parametrize(
    "index,stays_memmap",
    [
        (0, True),
        (-1, True),
        (slice(None, 2), True),
        (Ellipsis, True),
        (slice(1, 3), False),  # as in 0.15.3: a slice from the start only
        (slice(None, None, 2), False),
        (torch.tensor([0, 2]), False),
        (torch.tensor([True, False, True]), False),
    ],
    ids=["int", "negative", "head", "ellipsis", "middle", "step", "tensor", "mask"],
)
def test_indexed_memmap_is_locked_like_its_parent(tmp_path, index, stays_memmap):
    td = dense().memmap_(tmp_path / "p")
    view = td[index]
    assert view.is_locked is stays_memmap and view.is_memmap() is stays_memmap
    assert view["nested"].is_locked is stays_memmap
    if stays_memmap:
        assert view.saved_path is None  # no folder of its own
        with pytest.raises(RuntimeError, match="locked"):
            view["new"] = torch.zeros(view.batch_size)
        view["a"].fill_(7.0)  # a view: the write reaches the file
        assert (TensorDict.load_memmap(tmp_path / "p")[index]["a"] == 7.0).all()
    else:
        view["new"] = torch.zeros(view.batch_size)  # results in memory, writable
    td.unlock_()
    assert not td[0].is_locked  # an unlocked parent gives unlocked views


@pytest.mark.parametrize(
    "index",
    [
        torch.tensor([2, 0, 2]),
        torch.tensor([-1, 0]),
        torch.tensor([[0, 1], [2, 2]]),
        torch.tensor([True, False, True]),
        [0, 2],
    ],
    ids=["rows", "negative", "2d", "mask", "list"],
)
def test_rows_of_memmap_by_tensor_are_copies_in_ram(tmp_path, index):
    ram = dense()
    td = ram.clone().memmap_(tmp_path / "p")
    rows = td[index]
    expected = ram[index]
    assert rows.batch_size == expected.batch_size
    for key in expected.keys(True, True):
        if key in ("text", "number"):
            continue
        value = rows[key]
        assert type(value) is torch.Tensor, key  # a copy, not a mapped view
        assert torch.equal(value, expected[key]), key
    rows["a"].fill_(7.0)
    rows["nested", "deeper", "d"].fill_(7.0)
    back = TensorDict.load_memmap(tmp_path / "p")
    assert torch.equal(back["a"], ram["a"])
    assert torch.equal(back["nested", "deeper", "d"], ram["nested", "deeper", "d"])


def test_indexed_memmap_tensorclass_and_lazy_stack_are_locked():
    inner = Inner(z=torch.zeros(4, 2), batch_size=[4]).memmap_()
    assert inner[0].is_locked and inner[:2].is_locked and not inner[1:].is_locked
    stack = LazyStackedTensorDict.lazy_stack([dense(), dense()]).memmap_()
    assert stack[0].is_locked and stack[:1].is_locked
    # a new stack of locked members is locked (0.15.3), though not through itself
    assert stack[1:].is_locked and stack[1:]._is_locked is None


def test_anonymous_memmap():
    td = dense().memmap_()
    assert td.is_memmap() and td.saved_path is None
    assert all(type(v) is MemoryMappedTensor for v in td.values(True, True))
    like = dense().memmap_like()
    assert like.is_memmap() and (like["a"] == 0).all()


def test_memmap_like_preallocates_zero_sparse_files(tmp_path):
    td = TensorDict(x=torch.zeros(8, 1024, dtype=torch.float64), batch_size=[]).expand(10_000)
    buffer = td.memmap_like(tmp_path / "buf")
    assert buffer.batch_size == (10_000,) and buffer.is_memmap()
    path = tmp_path / "buf" / "x.memmap"
    assert os.path.getsize(path) == 10_000 * 8 * 1024 * 8
    assert os.stat(path).st_blocks * 512 < 1 << 20  # sparse: nothing written yet
    buffer[5] = TensorDict(x=torch.ones(8, 1024, dtype=torch.float64))
    # reopening keeps the content of files of the right size
    again = td.memmap_like(tmp_path / "buf")
    assert again["x"][5].sum() == 8 * 1024 and again["x"][4].sum() == 0


def test_memmap_refresh_and_load_into(tmp_path):
    td = TensorDict(a=torch.zeros(3), batch_size=[3]).memmap(tmp_path / "p")
    TensorDict(a=torch.ones(3), b=torch.ones(3), batch_size=[3]).memmap(tmp_path / "p")
    assert td.memmap_refresh_() is td
    assert sorted(td.keys()) == ["a", "b"] and td.is_memmap() and (td["a"] == 1).all()
    target = TensorDict(a=torch.zeros(3), old=torch.zeros(3), n={"x": torch.zeros(3)}, batch_size=[3])
    nested = target["n"]
    TensorDict(a=torch.full((3,), 2.0), n={"x": torch.ones(3)}, batch_size=[3]).memmap(tmp_path / "q")
    assert target.load_memmap_(tmp_path / "q") is target
    assert sorted(target.keys()) == ["a", "n"] and target["n"] is nested
    assert (nested["x"] == 1).all()
    with pytest.raises(RuntimeError, match="memory-mapped in a folder"):
        TensorDict(a=torch.zeros(3), batch_size=[3]).memmap_refresh_()


def test_make_memmap_entries(tmp_path):
    td = TensorDict(a=torch.zeros(3), batch_size=[3]).memmap_(tmp_path / "p")
    m = td.make_memmap("b", (3, 2), dtype=torch.int64)
    assert type(m) is MemoryMappedTensor and m.shape == (3, 2) and td["b"] is m
    t = td.make_memmap_from_tensor(("n", "c"), torch.ones(3))
    assert (td["n", "c"] == 1).all() and t.filename.startswith(str(tmp_path / "p"))
    s = td.make_memmap_from_storage("s", torch.arange(3.0).untyped_storage(), (3,), dtype=torch.float32)
    assert s.tolist() == [0.0, 1.0, 2.0]
    back = TensorDict.load_memmap(tmp_path / "p")
    assert set(back.keys(True, True)) == {"a", "b", ("n", "c"), "s"}
    with pytest.raises(RuntimeError, match="not memory-mapped"):
        TensorDict(a=torch.zeros(3), batch_size=[3]).make_memmap("x", (3,))


def test_threads_and_return_early(tmp_path):
    td = TensorDict({f"k{i}": torch.randn(16, 8) for i in range(20)}, batch_size=[16])
    saved = td.memmap(tmp_path / "t", num_threads=4)
    assert (saved == td).all()
    future = td.memmap(tmp_path / "u", num_threads=4, return_early=True)
    assert (future.result() == td).all()


def test_return_early_saves_run_in_order_and_queue_boundedly(tmp_path, monkeypatch):
    """Saves that return early run one after another in call order (the last one wins
    on a shared folder), and a caller saving faster than the disk waits instead of
    queueing without bound: the unfinished saves hold at most the backlog's bytes
    besides the oldest one."""
    td = TensorDict({f"k{i}": torch.zeros(64, 256) for i in range(8)}, batch_size=[64])
    nbytes = 8 * 64 * 256 * 4
    monkeypatch.setattr(_disk, "_BACKLOG_BYTES", 2 * nbytes)  # two saves
    futures = []
    for step in range(12):
        futures.append(
            td.apply(lambda x: x + step).memmap(
                tmp_path / "t", num_threads=4, return_early=True
            )
        )
        assert sum(not f.done() for f in futures) <= 2
    results = [f.result() for f in futures]
    assert all((r["k0"] == step).all() for step, r in enumerate(results))
    back = TensorDict.load_memmap(tmp_path / "t")
    assert all((v == 11).all() for v in back.values())


def test_replacing_with_threads_leaves_only_the_new_tree(tmp_path):
    leaves = {f"k{i}": torch.full((4, 8), 1.0) for i in range(12)}
    td = TensorDict({**leaves, "n": {"x": torch.ones(4)}}, batch_size=[4])
    td.memmap(tmp_path / "t", num_threads=4)
    td.apply(lambda x: x + 1).memmap(tmp_path / "t", num_threads=4)
    finish_removals()  # a replaced tree is removed in a background thread
    _disk.release_spares()  # ... or kept, for the next save, until the process exits
    assert [p.name for p in tmp_path.iterdir()] == ["t"]
    back = TensorDict.load_memmap(tmp_path / "t")
    assert all((v == 2.0).all() for v in back.values(True, True))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_saves_with_threads_after_its_parent(tmp_path):
    """The write and removal threads are kept for the process; a forked child has none
    of its parent's and must start its own (not wait for threads that do not exist)."""
    td = TensorDict({f"k{i}": torch.full((4,), 1.0) for i in range(8)}, batch_size=[4])
    td.memmap(tmp_path / "p", num_threads=4)
    td.memmap(tmp_path / "p", num_threads=4)  # the removal thread exists now
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            td.apply(lambda x: x * 3).memmap(tmp_path / "p", num_threads=4)
            finish_removals()
            code = 0
        finally:
            os._exit(code)
    for _ in range(600):  # a child waiting for its parent's threads would hang
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child did not finish saving within 60 s")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert TensorDict.load_memmap(tmp_path / "p")["k3"].tolist() == [3.0] * 4


def test_existsok_and_what_is_never_replaced(tmp_path):
    TensorDict(a=torch.zeros(2), batch_size=[2]).memmap(tmp_path / "p")
    with pytest.raises(RuntimeError, match="existsok=True"):
        TensorDict(a=torch.ones(2), batch_size=[2]).memmap(tmp_path / "p", existsok=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.txt").write_text("precious")
    with pytest.raises(RuntimeError, match="not a saved tensordict"):
        TensorDict(a=torch.ones(2), batch_size=[2]).memmap(home)
    assert (home / "thesis.txt").read_text() == "precious"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError):
        TensorDict(a=torch.ones(2), batch_size=[2]).memmap(tmp_path / "afile")


def test_subpath_and_nested_folder(tmp_path):
    dense().memmap(tmp_path / "p")
    nested = TensorDict.load_memmap(tmp_path / "p", subpath=("nested", "deeper"))
    assert nested["d"].tolist() == [1.0, 1.0, 1.0]
    assert TensorDict.load_memmap(tmp_path / "p" / "nested")["deeper", "d"].shape == (3,)


def test_device_argument_loads_into_ram(tmp_path):
    dense().memmap(tmp_path / "p")
    loaded = TensorDict.load_memmap(tmp_path / "p", device="cpu")
    assert loaded.device == torch.device("cpu")


def test_seed001_parameter_serialization_calls(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 3))
    params = TensorDict(model.state_dict(), []).unflatten_keys(".")
    params.memmap(tmp_path / "folder", num_threads=16)
    params = TensorDict.load_memmap(tmp_path / "folder", num_threads=16)
    params0 = TensorDict.load_memmap(tmp_path / "folder" / "0", num_threads=16)
    assert torch.equal(params0["weight"], model[0].weight.detach())
    assert torch.equal(params["1", "bias"], model[1].bias.detach())


# ----------------------------------------------------------------------------- keys


UNSAFE_KEYS = ["a/b", "..", ".", "nul\x00byte", "x" * 400, "éé中文", "meta.json", "A", "a", "b.memmap", "-lead", " sp ace "]


def test_unsafe_keys_are_stored_safely_and_restored_exactly(tmp_path):
    td = TensorDict({k: torch.full((2,), float(i)) for i, k in enumerate(UNSAFE_KEYS)}, batch_size=[2])
    td["sub/dir"] = TensorDict({"..": torch.ones(2)}, batch_size=[2])
    td.memmap(tmp_path / "p")
    files = {p.relative_to(tmp_path / "p") for p in (tmp_path / "p").rglob("*")}
    for path in files:
        assert ".." not in path.parts and len(path.name.encode()) <= 255
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    back = TensorDict.load_memmap(tmp_path / "p")
    assert sorted(back.keys()) == sorted(td.keys())
    for i, key in enumerate(UNSAFE_KEYS):
        assert (back[key] == float(i)).all(), key
    assert (back["sub/dir", ".."] == 1).all()


# ----------------------------------------------------------------------------- bad input


@pytest.fixture
def saved(tmp_path):
    TensorDict(a=torch.arange(12.0).reshape(3, 4), n={"b": torch.ones(3)}, batch_size=[3]).memmap(
        tmp_path / "p"
    )
    return tmp_path / "p"


def _edit_meta(folder: Path, fn):
    meta = json.loads((folder / "meta.json").read_text())
    fn(meta)
    (folder / "meta.json").write_text(json.dumps(meta))


def test_truncated_data_file_names_the_key_and_file(saved):
    with open(saved / "a.memmap", "r+b") as f:
        f.truncate(3)
    with pytest.raises(SavedDataError) as info:
        TensorDict.load_memmap(saved)
    message = str(info.value)
    assert "'a'" in message and str(saved / "a.memmap") in message and "3 bytes" in message


def test_missing_data_file(saved):
    os.unlink(saved / "n" / "b.memmap")
    with pytest.raises(SavedDataError, match=r"b\.memmap of the entry 'b' is missing"):
        TensorDict.load_memmap(saved)


def test_shape_or_dtype_that_does_not_match_the_file(saved):
    _edit_meta(saved, lambda m: m["entries"][0].update(shape=[3, 5]))
    with pytest.raises(SavedDataError, match=r"'a'.*holds 48 bytes.*need 60"):
        TensorDict.load_memmap(saved)
    _edit_meta(saved, lambda m: m["entries"][0].update(shape=[3, 4], dtype="torch.float64"))
    with pytest.raises(SavedDataError, match=r"'a'.*need 96"):
        TensorDict.load_memmap(saved)
    _edit_meta(saved, lambda m: m["entries"][0].update(dtype="torch.notatype"))
    with pytest.raises(SavedDataError, match="not a torch dtype"):
        TensorDict.load_memmap(saved)
    _edit_meta(saved, lambda m: m["entries"][0].update(dtype="torch.float32", shape=[4, 3]))
    with pytest.raises(SavedDataError, match="batch size"):
        TensorDict.load_memmap(saved)


def test_metadata_from_another_version(saved):
    _edit_meta(saved, lambda m: m.update(version=2))
    with pytest.raises(SavedDataError, match="version 2"):
        TensorDict.load_memmap(saved)
    (saved / "meta.json").write_text(json.dumps({"shape": [3], "_format_version": 1, "_type": "x"}))
    with pytest.raises(SavedDataError, match="another tensordict layout"):
        TensorDict.load_memmap(saved)
    (saved / "meta.json").write_text("{not json")
    with pytest.raises(SavedDataError, match="not valid JSON"):
        TensorDict.load_memmap(saved)


def test_folder_that_holds_no_saved_tensordict(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        TensorDict.load_memmap(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SavedDataError, match="no meta.json"):
        TensorDict.load_memmap(tmp_path / "empty")


def test_a_crafted_file_name_cannot_leave_the_folder(saved, tmp_path):
    (tmp_path / "secret").write_bytes(b"\x00" * 48)
    _edit_meta(saved, lambda m: m["entries"][0].update(file="../secret"))
    with pytest.raises(SavedDataError, match="not a plain file name"):
        TensorDict.load_memmap(saved)


def test_loading_never_unpickles_without_opt_in(tmp_path):
    td = TensorDict(obj={1, 2}, fine="text", batch_size=[])
    td.save(tmp_path / "p")  # silent, as in 0.15.3 (see test_pickle_warning_...)
    with pytest.raises(SavedDataError, match=r"'obj'.*obj\.pickle.*allow_pickle=True"):
        TensorDict.load_memmap(tmp_path / "p")
    assert TensorDict.load_memmap(tmp_path / "p", allow_pickle=True)["obj"] == {1, 2}
    # a pickle file is not even opened without the opt-in
    (tmp_path / "p" / "obj.pickle").write_bytes(b"cos\nsystem\n(S'exit 1'\ntR.")
    with pytest.raises(SavedDataError, match="allow_pickle"):
        TensorDict.load_memmap(tmp_path / "p")


@pytest.mark.parametrize("return_early", [False, True])
def test_pickle_warning_points_at_the_users_line(tmp_path, return_early, monkeypatch):
    # the warning (opt-in: tensordict._disk.WARN_WHEN_PICKLING) names the user's
    # call, also when a background thread did the save
    import inspect
    import warnings

    from tensordict import _disk

    monkeypatch.setattr(_disk, "WARN_WHEN_PICKLING", True)

    td = TensorDict(obj={1, 2}, batch_size=[])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        out = td.memmap(tmp_path / "p", num_threads=2, return_early=return_early)
        if return_early:
            out = out.result()
    (warning,) = [w for w in caught if w.category is PickledValueWarning]
    assert (warning.filename, warning.lineno) == (__file__, line)
    assert out["obj"] == {1, 2}


def test_weights_only_load_runs_no_arbitrary_code():
    class Evil:
        def __reduce__(self):
            return (os.system, ("exit 1",))

    td = TensorDict(x=torch.zeros(1), bad=Evil(), batch_size=[])
    buffer = io.BytesIO()
    torch.save(td, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(buffer)


# ----------------------------------------------------------------------------- crashes

def _new():
    leaves = {f"k{i}": torch.full((4, 256), 2.0) for i in range(8)}
    leaves["n"] = {"x": torch.full((4,), 2.0)}
    return TensorDict(leaves, batch_size=[4])


def _killer(original, count):
    calls = [0]

    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] >= count:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    return wrapped


def _write_in_child_killed_at(prefix, point, count, how) -> int:
    """Fork a child that writes the new version to ``prefix`` and SIGKILLs itself at
    the ``count``-th call of the step named ``point``; return its exit status."""
    import tensordict._disk as disk
    import tensordict.memmap  # noqa: F401
    memmap_module = sys.modules["tensordict.memmap"]

    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        try:
            if point == "leaf":
                memmap_module.write_tensor_file = _killer(memmap_module.write_tensor_file, count)
            elif point == "meta":
                disk.json.dumps = _killer(disk.json.dumps, count)
            elif point == "commit":
                disk._commit = _killer(disk._commit, count)
            elif point == "cleanup":  # the old tree is swapped out, not yet let go
                disk._keep_or_remove = _killer(disk._keep_or_remove, count)
            new = _new()
            new.memmap_(prefix) if how == "memmap_" else new.save(prefix)
            disk.finish_removals()  # the replaced tree is removed in a thread
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return status


def _old():
    leaves = {f"k{i}": torch.full((4, 256), 1.0) for i in range(8)}
    leaves["n"] = {"x": torch.full((4,), 1.0)}
    return TensorDict(leaves, batch_size=[4])


def _state(prefix: Path) -> str:
    """"old", "new" or "missing": a loaded folder must be entirely one of them."""
    try:
        td = TensorDict.load_memmap(prefix)
    except FileNotFoundError:
        return "missing"
    values = {float(v.unique().item()) for v in td.values(True, True) if v.numel()}
    assert len(values) == 1, f"torn folder: values {values}"
    assert sorted(td.keys(True, True), key=str) == sorted(_old().keys(True, True), key=str)
    return {1.0: "old", 2.0: "new"}[values.pop()]


@pytest.mark.parametrize("how", ["memmap_", "save"])
@pytest.mark.parametrize(
    "point, count",
    [("leaf", 1), ("leaf", 5), ("meta", 1), ("meta", 2), ("commit", 1), ("cleanup", 1)],
)
@pytest.mark.parametrize("had_old", [True, False], ids=["replacing", "fresh"])
def test_a_killed_writer_leaves_old_or_new(how, point, count, had_old, tmp_path):
    if point == "cleanup" and not had_old:
        pytest.skip("a fresh folder is put in place by one rename: nothing to clean up")
    prefix = tmp_path / "data"
    if had_old:
        _old().memmap(prefix)
    status = _write_in_child_killed_at(prefix, point, count, how)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    state = _state(prefix)
    if point == "cleanup":
        assert state == "new"  # the swap happened; only the old tree was left to remove
    else:
        assert state == ("old" if had_old else "missing")
    # the next writer cleans up what the killed one left beside the folder
    _old().memmap(prefix)
    finish_removals()  # the tree it replaced is removed in a thread
    _disk.release_spares()  # ... or kept for the next save until the process exits
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "data"]
    assert leftovers == []


@pytest.mark.parametrize(
    "point, count", [("overwrite", 1), ("overwrite", 5), ("meta", 3), ("commit", 2)]
)
def test_a_killed_writer_reusing_the_spare_leaves_old_or_new(point, count, tmp_path):
    """A re-save writes into the tree the previous save replaced (the spare); killed
    mid-way, it leaves the live tree untouched. "overwrite" is reached only if the
    files of the spare are written over, so the child dying there shows that they are."""
    prefix = tmp_path / "data"
    _old().memmap(prefix)
    pid = os.fork()
    if pid == 0:  # the child saves twice: the second save reuses the first's spare
        try:
            memmap_module = sys.modules["tensordict.memmap"]
            _old().memmap(prefix)
            if point == "overwrite":
                memmap_module.overwrite_tensor_file = _killer(
                    memmap_module.overwrite_tensor_file, count
                )
            elif point == "meta":
                _disk.json.dumps = _killer(_disk.json.dumps, count - 2)
            else:
                _disk._commit = _killer(_disk._commit, count - 1)
            _new().memmap(prefix)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert _state(prefix) == "old"
    _new().memmap(prefix)  # the next writer removes the killed one's trees
    finish_removals()
    _disk.release_spares()
    assert [p.name for p in tmp_path.iterdir()] == ["data"]
    assert _state(prefix) == "new"


def test_a_resave_does_not_write_over_what_a_reader_maps(tmp_path):
    """The spare tree's files are written over only when nobody holds them: a tensor
    loaded from the replaced tree, here or in another process, keeps its values."""
    prefix = tmp_path / "data"
    _old().memmap(prefix)
    held = TensorDict.load_memmap(prefix)  # maps the tree that the next save replaces
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(
            """
            import sys, time
            from tensordict import TensorDict
            td = TensorDict.load_memmap(sys.argv[1])
            print("loaded", flush=True)
            sys.stdin.readline()
            print(float(td["k0"].sum()), float(td["n", "x"].sum()), flush=True)
            """
        ), str(prefix)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout.readline().strip() == "loaded"
        del held  # this process lets go of it: only the child holds the old tree now
        _new().memmap(prefix)  # replaces the child's tree, which becomes the spare
        _new().apply(lambda x: x * 3).memmap(prefix)  # writes into the spare (6.0)
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().split() == [str(4.0 * 256), str(4.0)]
    finally:
        child.kill()
        child.wait()
    held = TensorDict.load_memmap(prefix)
    assert all((v == 6.0).all() for v in held.values(True, True))
    # and the same within this process
    _new().memmap(prefix)  # `held`'s tree becomes the spare
    _old().memmap(prefix)
    assert all((v == 6.0).all() for v in held.values(True, True))
    assert _state(prefix) == "old"


def test_writers_killed_at_random_times(tmp_path):
    """A child saving two versions in turn, killed at random moments."""
    prefix = tmp_path / "data"
    _old().memmap(prefix)
    script = textwrap.dedent(
        """
        import sys, torch
        from tensordict import TensorDict
        prefix = sys.argv[1]
        for i in range(1000):
            v = 1.0 + (i % 2)
            leaves = {f"k{j}": torch.full((4, 256), v) for j in range(8)}
            leaves["n"] = {"x": torch.full((4,), v)}
            TensorDict(leaves, batch_size=[4]).memmap(prefix)
        """
    )
    gen = torch.Generator().manual_seed(0)
    seen = set()
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", script, str(prefix)])
        delay = 1.5 + float(torch.rand((), generator=gen)) * 1.5
        try:
            proc.wait(delay)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.wait()
        seen.add(_state(prefix))
    assert seen <= {"old", "new"}


# ----------------------------------------------------------------------------- processes


def _child_writes_and_reads(td, ready, parent_wrote, result):
    td["a"][0] = 7.0
    ready.set()
    parent_wrote.wait(60)
    result.value = float(td["n", "b"][1])


def test_two_processes_see_each_others_writes(tmp_path):
    td = TensorDict(a=torch.zeros(3), n={"b": torch.zeros(3)}, batch_size=[3]).memmap_(tmp_path / "p")
    ctx = mp.get_context("spawn")
    ready, parent_wrote = ctx.Event(), ctx.Event()
    result = ctx.Value("d", 0.0)
    proc = ctx.Process(target=_child_writes_and_reads, args=(td, ready, parent_wrote, result))
    proc.start()
    assert ready.wait(60)
    assert td["a"][0] == 7.0  # the child's write, seen here
    td["n", "b"][1] = 3.0
    parent_wrote.set()
    proc.join(60)
    assert proc.exitcode == 0 and result.value == 3.0  # ours, seen there
    # a tensordict pickles as file names, not data
    assert len(pickle.dumps(TensorDict(x=MemoryMappedTensor.zeros(100_000, filename=tmp_path / "x"), batch_size=[]))) < 2000


def test_seed001_dataset_filled_in_a_loop_reloaded_in_another_process(tmp_path):
    data = TensorDict(
        {"images": torch.zeros((8, 8, 3), dtype=torch.uint8), "labels": torch.zeros((), dtype=torch.int)},
        batch_size=[],
    )
    data = data.expand(1000000)
    data = data.memmap_like(tmp_path / "dataset")
    rows = range(0, 1_000_000, 997)
    for i in rows:
        data[i] = TensorDict(
            images=torch.full((8, 8, 3), i % 251, dtype=torch.uint8),
            labels=torch.tensor(i, dtype=torch.int),
        )
    expected = int(data["labels"].sum()), int(data["images"].to(torch.int64).sum())
    script = textwrap.dedent(
        """
        import sys, torch
        from tensordict import TensorDict
        data = TensorDict.load_memmap(sys.argv[1])
        print(int(data["labels"].sum()), int(data["images"].to(torch.int64).sum()),
              int(data["labels"][997 * 3]), int(data["images"][1].sum()))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "dataset")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    assert [int(v) for v in out] == [*expected, 997 * 3, 0]


def test_load_memmap_of_4_gib_does_not_read_the_data(tmp_path):
    """RSS grows by less than 50 MiB when 4 GiB are loaded (sparse files on disk)."""
    leaves = {f"k{i}": torch.zeros(1024, dtype=torch.float32) for i in range(16)}
    leaves["n"] = {"x": torch.zeros(1024, 8, dtype=torch.float64)}
    td = TensorDict(leaves, batch_size=[]).expand(65536)
    td.memmap_like(tmp_path / "big")
    total = sum(p.stat().st_size for p in (tmp_path / "big").rglob("*.memmap"))
    assert total >= 4 * 1024**3
    script = textwrap.dedent(
        """
        import sys, torch
        from tensordict import TensorDict
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        TensorDict(a=torch.zeros(2), batch_size=[2]).memmap_like()  # warm the code paths
        before = rss()
        td = TensorDict.load_memmap(sys.argv[1])
        first = td[100]  # one row of every leaf
        after = rss()
        print(after - before, td.batch_size[0])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "big")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    grown, rows = int(out[0]), int(out[1])
    assert rows == 65536
    assert grown < 50 * 1024**2, f"RSS grew by {grown / 2**20:.1f} MiB"


@pytest.mark.parametrize(
    "module",
    ["tensordict._persistence", "tensordict.memmap", "tensordict.persistent"],
)
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    import doctest
    import importlib

    monkeypatch.chdir(tmp_path)  # the examples write files where they run

    from conftest import missing_optional

    found = importlib.import_module(module)
    globs = {"TensorDict": TensorDict, "torch": torch, "MemoryMappedTensor": MemoryMappedTensor}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(found, extraglobs=globs):
        if test.examples and not missing_optional(test.docstring or ""):
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, "".join(report)


def test_dumps_is_save(tmp_path):
    td = TensorDict(a=torch.arange(3.0), b={"c": torch.ones(3, 2)}, batch_size=[3])
    out = td.dumps(tmp_path / "saved")
    assert out.is_memmap()
    loaded = TensorDict.load_memmap(tmp_path / "saved")
    assert (loaded == td).all()
    assert TensorDict.dumps is TensorDict.save


def test_spare_trees_are_capped_and_the_latest_kept(tmp_path, monkeypatch):
    """Replaced trees kept for the next save hold at most _SPARE_BYTES in all: a new
    one pushes out those kept longest, and a tree larger than the cap is not kept."""
    _disk.release_spares()
    small = TensorDict(a=torch.zeros(256), batch_size=[])  # 1 KiB of data
    monkeypatch.setattr(_disk, "_SPARE_BYTES", 2600)  # two small trees and their metadata
    for name in ("a", "b", "c"):
        small.memmap(tmp_path / name)
        small.memmap(tmp_path / name)  # replaces the first save: kept as the spare
    assert sorted(str(Path(k).name) for k in _disk._spares) == ["b", "c"]
    big = TensorDict(a=torch.zeros(4096), batch_size=[])
    big.memmap(tmp_path / "d")
    big.memmap(tmp_path / "d")
    assert "d" not in {Path(k).name for k in _disk._spares}
    _disk.release_spares()
    finish_removals()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c", "d"]
