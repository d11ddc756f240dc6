"""consolidate / is_consolidated / from_consolidated, and shared memory across processes."""

from __future__ import annotations

import io
import pickle

import sys

import pytest
import torch
import torch.multiprocessing as mp
from multiprocessing.reduction import ForkingPickler

import torch.multiprocessing.reductions  # noqa: F401  (torch registers its reductions)

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass
from tensordict._consolidate import from_consolidated


@tensorclass
class Pair:
    x: torch.Tensor
    y: torch.Tensor
    note: str


def _nested() -> TensorDict:
    return TensorDict(
        a=torch.arange(6, dtype=torch.float32).reshape(3, 2),
        b={"c": torch.arange(3), "d": torch.ones(3, 4, dtype=torch.float64)},
        flag=torch.tensor([True, False, True]),
        text="kept",
        batch_size=[3],
    )


def _storages(td) -> set:
    return {leaf.untyped_storage().data_ptr() for leaf in td._leaves()}


def _same_values(a, b) -> None:
    assert set(a.keys(True, True)) == set(b.keys(True, True))
    for key in a.keys(True, True):
        assert torch.equal(a[key], b[key]), key


def test_consolidate_packs_every_leaf_into_one_storage():
    td = _nested()
    c = td.consolidate()
    assert c.is_consolidated() and not td.is_consolidated()
    assert c.is_locked
    assert len(_storages(c)) == 1
    _same_values(c, td)
    assert c["text"] == "kept" and c.batch_size == td.batch_size
    assert c.consolidate() is c  # already consolidated


def test_in_place_writes_keep_it_consolidated_replacing_an_entry_does_not():
    c = _nested().consolidate()
    c["a"].add_(1)
    assert c.is_consolidated()
    c.unlock_()
    c["a"] = torch.zeros(3, 2)
    assert not c.is_consolidated()


def test_the_structure_cache_never_outlives_a_structural_change():
    from tensordict._consolidate import consolidated_memo, consolidated_parts
    from tensordict._distributed import _Plan

    c = _nested().consolidate()
    plan = _Plan.of(c)
    assert _Plan.of(c) is plan  # kept beside the block while c stays locked
    assert consolidated_parts(c)[2] is plan.leaves
    # a rename keeps every leaf a view at its place (still consolidated) but changes
    # the structure: the cached signature must not survive it. (The public unlock_()
    # ends the consolidated state, as in 0.15.3; the lock primitive, which the
    # library's own writes use, keeps it and only drops the caches.)
    c._set_lock(False)
    c.rename_key_("a", "a2")
    c._set_lock(True)
    assert c.is_consolidated()
    renamed = _Plan.of(c)
    assert (
        renamed is not plan and b'"a2"' in renamed.sig and b'["a"]' not in renamed.sig
    )
    assert renamed.fp != plan.fp
    # any unlock of any TensorDict drops the caches; an unlocked one is never cached
    TensorDict(x=torch.zeros(1)).lock_().unlock_()
    assert _Plan.of(c) is not renamed and _Plan.of(c).fp == renamed.fp
    c._set_lock(False)
    assert consolidated_memo(c) is None and _Plan.of(c) is not _Plan.of(c)
    # through a parent and a tensorclass too
    c._set_lock(True)
    outer = TensorDict(inner=c).lock_()
    cached = _Plan.of(c)
    outer.unlock_()
    outer["inner"].rename_key_("flag", "flag2")
    outer.lock_()
    assert b"flag2" in _Plan.of(c).sig and _Plan.of(c) is not cached
    pair = Pair(x=torch.zeros(2), y=torch.ones(2), note="n", batch_size=[2])
    pc = pair.consolidate()
    cached = _Plan.of(pc)
    pc.unlock_()
    pc.lock_()
    assert _Plan.of(pc) is not cached


def test_views_and_copies_of_a_consolidated_tensordict_are_not_consolidated():
    c = _nested().consolidate()
    assert not c[0].is_consolidated()
    assert not c.clone().is_consolidated()
    assert not c.to(torch.float64).is_consolidated()


def test_consolidate_lazy_stack_and_tensorclass():
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(3)),
        TensorDict(a=torch.ones(3), b=torch.ones(2)),
        stack_dim=0,
    )
    lc = lazy.consolidate()
    assert isinstance(lc, LazyStackedTensorDict) and lc.is_consolidated()
    assert len(_storages(lc)) == 1
    assert torch.equal(lc.tensordicts[1]["b"], torch.ones(2))
    pair = Pair(x=torch.zeros(2, 3), y=torch.arange(2), note="n", batch_size=[2])
    pc = pair.consolidate()
    assert isinstance(pc, Pair) and pc.is_consolidated() and pc.note == "n"
    assert len(_storages(pc)) == 1


def test_consolidate_inplace_share_memory_and_grad():
    td = _nested()
    assert td.consolidate(inplace=True) is td
    assert td.is_consolidated() and td.is_locked and len(_storages(td)) == 1
    shared = _nested().consolidate(share_memory=True)
    assert shared.is_shared() and shared["b", "c"].is_shared()
    grad = TensorDict(w=torch.ones(2, requires_grad=True)).consolidate()
    assert not grad["w"].requires_grad


def test_consolidate_return_early_gives_a_future():
    future = _nested().consolidate(num_threads=2, return_early=True)
    assert future.result().is_consolidated()


def test_pickle_of_a_consolidated_tensordict_is_one_block():
    td = TensorDict({f"k{i}": torch.full((10,), float(i)) for i in range(50)}, [10])
    c = td.consolidate()
    restored = pickle.loads(pickle.dumps(c))
    assert restored.is_consolidated() and restored.is_locked
    _same_values(restored, td)
    # one storage is pickled, not fifty
    assert pickle.dumps(c).count(b"torch._utils") <= 2
    pair = Pair(x=torch.zeros(2, 3), y=torch.arange(2), note="n", batch_size=[2])
    back = pickle.loads(pickle.dumps(pair.consolidate()))
    assert isinstance(back, Pair) and back.is_consolidated() and back.note == "n"


def test_consolidated_file_round_trip(tmp_path):
    td = _nested()
    path = tmp_path / "td.bin"
    c = td.consolidate(filename=path)
    assert c.is_consolidated() and path.exists()
    c["a"].fill_(7.0)  # the storage is the file: writes reach it
    loaded = from_consolidated(path)
    assert loaded.is_consolidated() and not loaded.is_locked
    assert (loaded["a"] == 7).all() and loaded["text"] == "kept"
    assert torch.equal(loaded["b", "d"], td["b", "d"])
    loaded["a"].zero_()  # a private map: the file keeps its data
    assert (TensorDict.from_consolidated(path)["a"] == 7).all()
    assert not list(tmp_path.glob("*.tmp"))


def test_consolidated_file_holds_every_kind_of_leaf(tmp_path):
    # the file is written leaf by leaf: odd sizes between dtype groups, views that are
    # not contiguous, lazy conjugates and leaves that need grad must all land intact
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    td = TensorDict(
        odd=torch.tensor([1, 2, 3], dtype=torch.int8),
        strided=base[:, ::2],
        conj=torch.tensor([1 + 2j, 3 - 1j, 0 + 1j, 2j]).conj(),
        grad=torch.ones(4, 2, requires_grad=True),
        half=torch.arange(4, dtype=torch.bfloat16),
        flag=torch.tensor([True, False, True, True]),
    )
    path = tmp_path / "td.bin"
    c = td.consolidate(filename=path)
    loaded = from_consolidated(path)
    for got in (c, loaded):
        assert got.is_consolidated()
        for key, value in td.items():
            assert torch.equal(got[key], value.detach().resolve_conj()), key
    c["strided"].fill_(-1.0)  # the returned leaves map the file
    assert (from_consolidated(path)["strided"] == -1).all()


@pytest.mark.parametrize("piece", [1 << 12, 1 << 15])
def test_consolidated_file_leaves_across_write_pieces(tmp_path, monkeypatch, piece):
    # the file is written in pieces cut at multiples of the piece size in the file: a
    # leaf that starts between two cuts and spans several must land byte for byte
    pieces = sys.modules["tensordict.memmap"]._PieceSize
    monkeypatch.setattr(pieces, "size", piece)
    monkeypatch.setattr(pieces, "judge", lambda *args: None)  # the size stays put
    gen = torch.Generator().manual_seed(1)
    td = TensorDict(
        head=torch.randint(-100, 100, (5,), dtype=torch.int8, generator=gen),
        body=torch.randn(piece // 2 + 1001, dtype=torch.float64, generator=gen),
        tail=torch.randint(0, 1000, (3 * piece + 7,), dtype=torch.int16, generator=gen),
    )
    c = td.consolidate(filename=tmp_path / "td.bin")
    block = c._consolidated.block
    starts = {
        key: c[key].data_ptr() - block.data_ptr() for key in ("head", "body", "tail")
    }
    assert any(start % piece for start in starts.values())
    loaded = from_consolidated(tmp_path / "td.bin")
    for key, value in td.items():
        assert torch.equal(c[key], value) and torch.equal(loaded[key], value), key


@pytest.mark.parametrize("num_threads", [0, 3, 8])
@pytest.mark.parametrize("to_file", [False, True])
def test_consolidate_with_threads_of_large_and_many_small_leaves(
    tmp_path, num_threads, to_file
):
    # 12 MB in all (a storage large enough to be asked for huge pages), leaves of
    # 1 MiB and more (copied one memmove each), a run of 50 same-shaped leaves (stacked
    # in as many pieces as threads), a strided leaf and an odd-sized dtype group
    gen = torch.Generator().manual_seed(0)
    base = torch.randn(64, 8, generator=gen)
    td = TensorDict(
        big={f"b{i}": torch.randn(1 << 18, generator=gen) for i in range(11)},
        small={f"s{i}": torch.randn(64, 4, generator=gen) for i in range(50)},
        strided=base[:, ::2],
        odd=torch.arange(7, dtype=torch.int8),
    )
    filename = tmp_path / "td.bin" if to_file else None
    c = td.consolidate(filename=filename, num_threads=num_threads)
    assert c.is_consolidated() and len(_storages(c)) == 1
    _same_values(c, td)
    if to_file:
        _same_values(from_consolidated(filename), td)


def test_from_consolidated_refuses_other_files(tmp_path):
    path = tmp_path / "other.bin"
    path.write_bytes(b"not a tensordict file at all")
    with pytest.raises(ValueError, match="not a consolidated tensordict file"):
        from_consolidated(path)


def test_non_json_non_tensor_data_cannot_travel_in_the_description(tmp_path):
    td = TensorDict(a=torch.zeros(2), obj=object(), batch_size=[2])
    with pytest.raises(TypeError, match="'obj'"):
        td.consolidate(filename=tmp_path / "x.bin")


def test_moved_whole_copies_the_storage_once():
    c = _nested().consolidate()
    moved = c._moved_whole("cpu")
    assert moved.is_consolidated() and moved.device == torch.device("cpu")
    assert moved["b"].device == torch.device("cpu")
    assert len(_storages(moved)) == 1  # CPU to CPU: no copy, as Tensor.to
    _same_values(moved, c)
    assert _nested()._moved_whole("cpu") is None


def _count_tensor_to(monkeypatch) -> list:
    """Record every ``Tensor.to`` call (its tensor's number of bytes)."""
    calls = []
    real = torch.Tensor.to

    def counting(self, *args, **kwargs):
        calls.append(self.numel() * self.element_size())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", counting)
    return calls


@pytest.mark.parametrize("how", ["to", "cpu", "to_device_kw"])
def test_to_of_a_consolidated_tensordict_is_one_copy(monkeypatch, how):
    c = _nested().consolidate()
    calls = _count_tensor_to(monkeypatch)
    moved = {
        "to": lambda: c.to("cpu"),
        "cpu": c.cpu,
        "to_device_kw": lambda: c.to(device="cpu", non_blocking=True),
    }[how]()
    assert len(calls) == 1  # the one storage, not one call per leaf
    assert moved.is_consolidated() and moved.is_locked
    assert moved.device == torch.device("cpu") and moved["text"] == "kept"
    assert len(_storages(moved)) == 1
    _same_values(moved, c)


def test_to_meta_of_a_consolidated_tensordict_moves_the_block(monkeypatch):
    c = _nested().consolidate()
    calls = _count_tensor_to(monkeypatch)
    moved = c.to("meta")
    assert len(calls) == 1
    assert moved.device == torch.device("meta") and moved["b", "d"].is_meta
    assert moved["b", "d"].shape == (3, 4) and moved["b", "d"].dtype == torch.float64
    assert moved.is_locked


def test_to_with_a_cast_or_of_a_plain_tensordict_goes_leaf_by_leaf(monkeypatch):
    c = _nested().consolidate()
    calls = _count_tensor_to(monkeypatch)
    cast = c.to(torch.float64)
    assert len(calls) == 4 and not cast.is_consolidated()
    assert cast["b", "c"].dtype == torch.float64
    calls.clear()
    plain = _nested().to("cpu")
    assert len(calls) == 4 and not plain.is_consolidated()


def test_to_of_a_consolidated_tensorclass_is_one_copy(monkeypatch):
    from tensordict import tensorclass

    @tensorclass
    class Obs:
        x: torch.Tensor
        y: torch.Tensor

    c = Obs(x=torch.zeros(3, 2), y=torch.ones(3), batch_size=[3]).consolidate()
    calls = _count_tensor_to(monkeypatch)
    moved = c.to("cpu")
    assert len(calls) == 1 and isinstance(moved, Obs) and moved.is_consolidated()
    assert torch.equal(moved.y, torch.ones(3))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_to_cuda_of_a_consolidated_tensordict_is_one_copy_and_consolidated():
    c = _nested().consolidate()
    on_gpu = c.to("cuda")
    assert on_gpu.is_consolidated() and on_gpu["b", "c"].is_cuda
    assert on_gpu.cuda() is on_gpu or on_gpu.cuda().is_consolidated()
    _same_values(on_gpu.to("cpu"), c)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_moved_whole_to_cuda_and_back():
    c = _nested().consolidate()
    on_gpu = c._moved_whole("cuda")
    assert on_gpu.is_consolidated() and on_gpu["b", "c"].is_cuda
    _same_values(on_gpu._moved_whole("cpu"), c)


# ----------------------------------------------------------------------------- shared
def test_share_memory_marks_the_repr_and_pickles_handles_not_bytes():
    td = TensorDict(
        a=torch.zeros(1000, 256), b={"c": torch.ones(1000, 256)}, batch_size=[1000]
    )
    assert not td.is_shared()
    td.share_memory_()
    assert td.is_shared() and td.is_locked
    assert "is_shared=True" in repr(td)
    buf = io.BytesIO()
    ForkingPickler(buf).dump(td)
    assert len(buf.getvalue()) < 10_000  # 2 MB of data; the pickle holds handles


def _child_writes(queue, done):
    td = queue.get()
    td["a"].add_(1)
    td["b", "c"].fill_(7)
    lazy = queue.get()
    lazy.tensordicts[1]["x"].fill_(3)
    done.put((td.is_shared(), td.is_locked))


def test_writes_in_a_child_process_are_seen_by_the_parent():
    td = TensorDict(
        a=torch.zeros(3), b={"c": torch.zeros(3)}, batch_size=[3]
    ).share_memory_()
    lazy = LazyStackedTensorDict(
        TensorDict(x=torch.zeros(2)), TensorDict(x=torch.zeros(2))
    )
    lazy.share_memory_()
    ctx = mp.get_context("spawn")
    queue, done = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_child_writes, args=(queue, done))
    child.start()
    queue.put(td)
    queue.put(lazy)
    shared, locked = done.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert shared and locked
    assert (td["a"] == 1).all() and (td["b", "c"] == 7).all()
    assert (lazy.tensordicts[1]["x"] == 3).all()
