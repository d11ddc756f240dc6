"""torch.distributed calls on real process groups (gloo on the CPU).

Each test spawns one group (2 or 3 processes) and runs many checks in it, so that the
whole file spawns five groups: process start-up, not the checks, is what costs time.
A check that fails raises in its process; ``mp.spawn`` re-raises it here with the
worker's traceback. Every rank asserts what it received against values computed from
the rank numbers, never against what the code under test returned elsewhere.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import socket
import types

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass

pytestmark = pytest.mark.skipif(
    not dist.is_available() or not dist.is_gloo_available(),
    reason="torch.distributed with gloo is needed",
)


@tensorclass
class Frame:
    obs: torch.Tensor
    reward: torch.Tensor
    label: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, world, init_method, scenario):
    dist.init_process_group(
        "gloo",
        init_method=init_method,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        globals()[scenario](rank, world)
    finally:
        dist.destroy_process_group()


def _spawn(world: int, scenario: str, init_method: str) -> None:
    mp.spawn(_entry, args=(world, init_method, scenario), nprocs=world, join=True)


def _nested(value: float, n: int = 4) -> TensorDict:
    return TensorDict(
        obs=torch.full((n, 3), value),
        next={
            "obs": torch.full((n, 3), value + 1),
            "done": torch.zeros(n, 1, dtype=torch.bool),
        },
        step=torch.arange(n) + int(value),
        batch_size=[n],
    )


def _zeros_like_nested(n: int = 4) -> TensorDict:
    # the same structure built in another insertion order: keys travel sorted
    return TensorDict(
        step=torch.zeros(n, dtype=torch.int64),
        next={"done": torch.ones(n, 1, dtype=torch.bool), "obs": torch.zeros(n, 3)},
        obs=torch.zeros(n, 3),
        batch_size=[n],
    )


def _lazy(value: float) -> LazyStackedTensorDict:
    return LazyStackedTensorDict(
        TensorDict(a=torch.full((3,), value), b={"c": torch.full((2,), value)}),
        TensorDict(a=torch.full((3,), value + 1), b={"c": torch.full((5,), value)}),
        stack_dim=0,
    )


def _frame(value: float) -> Frame:
    return Frame(
        obs=torch.full((2, 4), value),
        reward=torch.full((2,), -value),
        label="ignored",
        batch_size=[2],
    )


def _expect_error(fn, *words):
    try:
        fn()
    except RuntimeError as err:
        for word in words:
            assert word in str(err), (word, str(err))
        return str(err)
    raise AssertionError(f"no error; expected one naming {words}")


# ----------------------------------------------------------------------------- p2p
def point_to_point(rank, world):
    peer = 1 - rank
    if rank == 0:
        td = _nested(5.0)
        assert td.send(dst=1) is None
        assert td.isend(dst=1) == 2  # the last tag used: a transfer uses 3 tags here
        works = td.isend(dst=1, init_tag=10, return_early=True)
        for w in works:
            w.wait()
        td.send(dst=1, init_tag=7, pseudo_rand=True)
        _lazy(2.0).send(dst=1)
        _frame(3.0).send(dst=1)
        # larger than the first message: header + first MiB, then the rest
        big = TensorDict(x=torch.arange(600_000, dtype=torch.float32), batch_size=[])
        big.send(dst=1)
        big.consolidate().send(dst=1, init_tag=20)
        # large and small leaves together; a large one into a non-contiguous leaf
        mixed = TensorDict(
            x=torch.arange(300_000, dtype=torch.float32).reshape(600, 500),
            s=torch.ones(3),
        )
        mixed.send(dst=1, init_tag=30)
        # consolidated on both sides: init_remote, then sends into the same storage
        c = _nested(1.0).consolidate()
        c.init_remote(dst=1)
        c["obs"].fill_(9.0)
        c.send(dst=1, consolidated=True)
        # plain sender into a consolidated receiver
        _nested(11.0).send(dst=1)
        # mismatches: the receiver names the key; the channel stays usable after
        _nested(1.0).send(dst=1)  # receiver lacks a key
        _nested(1.0).send(dst=1)  # receiver has another shape
        _nested(1.0).send(dst=1)  # receiver has another dtype
        big.send(dst=1)  # two-message stream, receiver too small
        _nested(4.0).send(dst=1)
        asyncio.run(_nested(8.0).asend(1))
        _frame(6.0).init_remote(dst=1)
        # a consolidated sender's structure is cached between sends; a change of
        # structure that keeps it consolidated (a rename) must still be seen
        c = _nested(2.0).consolidate()
        c.send(dst=1)
        c["obs"].fill_(3.0)
        c.send(dst=1)
        # (through the lock primitive: the public unlock_() ends the consolidated
        # state, as in 0.15.3)
        c._set_lock(False)
        c.rename_key_("obs", "obs2")
        c._set_lock(True)
        assert c.is_consolidated()
        c.send(dst=1)
    else:
        td = _zeros_like_nested()
        assert td.recv(src=peer) == 2
        assert (td["obs"] == 5).all() and (td["next", "obs"] == 6).all()
        assert (td["step"] == torch.arange(4) + 5).all() and not td[
            "next", "done"
        ].any()
        td.zero_()
        assert td.irecv(src=peer) is None
        assert (td["next", "obs"] == 6).all()
        td.zero_()
        works = td.irecv(src=peer, init_tag=10, return_premature=True)
        for w in works:
            w.wait()
        assert (td["obs"] == 5).all()
        td.zero_()
        td.recv(src=peer, init_tag=7, pseudo_rand=True)
        assert (td["obs"] == 5).all()
        lazy = _lazy(0.0)
        lazy.recv(src=peer)
        assert (lazy.tensordicts[1]["a"] == 3).all() and (
            lazy.tensordicts[1]["b", "c"] == 2
        ).all()
        assert lazy.tensordicts[1]["b", "c"].shape == (5,)
        frame = _frame(0.0)
        frame.recv(src=peer)
        assert (frame.obs == 3).all() and (frame.reward == -3).all()
        assert frame.label == "ignored"  # non-tensor entries do not travel by send
        big = TensorDict(x=torch.zeros(600_000), batch_size=[])
        big.recv(src=peer)
        assert torch.equal(big["x"], torch.arange(600_000, dtype=torch.float32))
        big_c = TensorDict(x=torch.zeros(600_000), batch_size=[]).consolidate()
        big_c.recv(src=peer, init_tag=20)
        assert torch.equal(big_c["x"], torch.arange(600_000, dtype=torch.float32))
        mixed = TensorDict(x=torch.zeros(500, 600).t(), s=torch.zeros(3))
        mixed.recv(src=peer, init_tag=30)
        expected = torch.arange(300_000, dtype=torch.float32).reshape(600, 500)
        assert torch.equal(mixed["x"], expected) and (mixed["s"] == 1).all()
        remote = TensorDict.from_remote_init(src=peer)
        assert remote.is_consolidated() and remote.batch_size == (4,)
        assert (remote["obs"] == 1).all() and (
            remote["step"] == torch.arange(4) + 1
        ).all()
        before = remote["obs"].untyped_storage().nbytes()
        remote.recv(src=peer, consolidated=True)
        assert (remote["obs"] == 9).all()
        # it keeps room in front of its block, as consolidate does: the first receive
        # landed in place (its storage grew once), the next ones take no new memory
        storage = remote["obs"].untyped_storage()
        address, size = storage.data_ptr(), storage.nbytes()
        if hasattr(torch.UntypedStorage, "_swap_data_ptr_"):  # else it copied
            assert size > before
        remote.recv(src=peer)
        assert (remote["obs"] == 11).all() and (remote["next", "obs"] == 12).all()
        assert remote.is_consolidated()
        assert (storage.data_ptr(), storage.nbytes()) == (address, size)
        missing = _zeros_like_nested().exclude(("next", "done"))
        _expect_error(
            lambda: missing.recv(src=peer), "('next', 'done')", "missing here"
        )
        assert (missing["obs"] == 0).all()  # nothing written
        shaped = _zeros_like_nested()
        shaped["next", "obs"] = torch.zeros(4, 2)
        _expect_error(
            lambda: shaped.recv(src=peer), "('next', 'obs')", "(4, 2)", "(4, 3)"
        )
        typed = _zeros_like_nested()
        typed["step"] = torch.zeros(4, dtype=torch.int32)
        _expect_error(lambda: typed.recv(src=peer), "'step'", "int32", "int64")
        small = TensorDict(x=torch.zeros(10), batch_size=[])
        _expect_error(lambda: small.recv(src=peer), "'x'", "(10,)", "(600000,)")
        after = _zeros_like_nested()
        after.recv(src=peer)
        assert (after["obs"] == 4).all()
        got = asyncio.run(after.arecv(peer))
        assert got is after and (after["obs"] == 8).all()
        frame = TensorDict.from_remote_init(src=peer)
        assert isinstance(frame, Frame) and frame.is_consolidated()
        assert (frame.obs == 6).all() and frame.label == "ignored"
        into = _zeros_like_nested().consolidate()
        into.recv(src=peer)
        assert (into["obs"] == 2).all()
        into.recv(src=peer)  # both sides' structures come from their caches now
        assert (into["obs"] == 3).all() and (into["next", "obs"] == 3).all()
        _expect_error(
            lambda: into.recv(src=peer), "'obs'", "other side has no such leaf"
        )


def test_point_to_point_two_ranks(tmp_path):
    _spawn(2, "point_to_point", f"file://{tmp_path / 'init'}")


# ----------------------------------------------------------------------------- seed
def seed_sample(rank, world):
    # Seed 001 ("Distributed capabilities"), as written there
    # on all workers
    data = TensorDict({"a": torch.zeros(()), ("b", "c"): torch.ones(())}, [])
    if rank == 1:
        # on worker 1
        data.isend(dst=0)
    if rank == 0:
        # on worker 0
        data.irecv(src=1)
        assert data["a"] == 0 and data["b", "c"] == 1


def test_seed_001_distributed_sample():
    _spawn(2, "seed_sample", f"tcp://127.0.0.1:{_free_port()}")


# ----------------------------------------------------------------------------- collectives
def collectives(rank, world):
    # broadcast to ranks that do not know the structure
    source = _nested(7.0) if rank == 0 else TensorDict()
    got = source.broadcast(src=0)
    assert got.is_consolidated() and (got["next", "obs"] == 8).all()
    assert (got["step"] == torch.arange(4) + 7).all()
    lazy = _lazy(1.0) if rank == world - 1 else TensorDict()
    lazy_got = lazy.broadcast(src=world - 1)
    assert isinstance(lazy_got, LazyStackedTensorDict)
    assert lazy_got.tensordicts[1]["b", "c"].shape == (5,)
    frame = (_frame(2.0) if rank == 0 else TensorDict()).broadcast(src=0)
    assert (
        isinstance(frame, Frame) and frame.label == "ignored" and (frame.obs == 2).all()
    )
    # all_reduce: every rank gets the sum / max, in place
    td = _nested(float(rank))
    assert td.all_reduce() is None
    total = sum(range(world))
    assert (td["obs"] == total).all() and (td["next", "obs"] == total + world).all()
    assert (td["step"] == world * torch.arange(4) + total).all()
    td = _nested(float(rank))
    td.all_reduce(op=dist.ReduceOp.MAX)
    assert (td["obs"] == world - 1).all()
    consolidated = _nested(float(rank)).consolidate()
    works = consolidated.all_reduce(async_op=True)
    for w in works:
        w.wait()
    assert (consolidated["obs"] == total).all()
    lazy = _lazy(float(rank))
    lazy.all_reduce()
    assert (lazy.tensordicts[1]["a"] == total + world).all()
    frame = _frame(float(rank))
    frame.all_reduce()
    assert (frame.reward == -total).all()
    # reduce: only dst holds the result; the others keep their values
    td = _nested(float(rank))
    td.reduce(dst=1)
    expected = total if rank == 1 else rank
    assert (td["obs"] == expected).all()
    # all_gather: structures may differ per rank
    mine = TensorDict(v=torch.full((rank + 1,), float(rank)), batch_size=[rank + 1])
    every = mine.all_gather()
    assert [t.batch_size[0] for t in every] == list(range(1, world + 1))
    assert all((t["v"] == r).all() for r, t in enumerate(every))
    frames = _frame(float(rank)).all_gather()
    assert all(
        isinstance(f, Frame) and (f.obs == r).all() for r, f in enumerate(frames)
    )
    # scatter: rank 0 deals one tensordict per rank
    parts = [TensorDict(v=torch.full((2,), float(10 + r))) for r in range(world)]
    got = TensorDict().scatter(src=0, tensordicts=parts if rank == 0 else None)
    assert (got["v"] == 10 + rank).all()
    # gather_and_stack: rank 0 holds one row per other rank
    if rank == 0:
        out = TensorDict(
            obs=torch.zeros(world - 1, 4, 3),
            next={
                "obs": torch.zeros(world - 1, 4, 3),
                "done": torch.ones(world - 1, 4, 1, dtype=torch.bool),
            },
            step=torch.zeros(world - 1, 4, dtype=torch.int64),
            batch_size=[world - 1, 4],
        )
        assert out.gather_and_stack(dst=0) is out
        for row, r in enumerate(range(1, world)):
            assert (out["obs"][row] == r).all() and (
                out["step"][row] == torch.arange(4) + r
            ).all()
            assert not out["next", "done"][row].any()
    else:
        assert _nested(float(rank)).gather_and_stack(dst=0) is None
    # the same with a lazy stack on dst (one member per other rank) and tensorclasses
    if rank == 0:
        rows = LazyStackedTensorDict(
            *[TensorDict(v=torch.zeros(3)) for _ in range(world - 1)]
        )
        rows.gather_and_stack(dst=0)
        assert [float(m["v"][0]) for m in rows.tensordicts] == list(range(1, world))
    else:
        TensorDict(v=torch.full((3,), float(rank))).gather_and_stack(dst=0)
    frames = [_frame(float(r)) for r in range(world)] if rank == 0 else None
    mine = TensorDict().scatter(src=0, tensordicts=frames)
    assert isinstance(mine, Frame) and (mine.obs == rank).all()
    lazy = _lazy(float(rank))
    lazy.reduce(dst=0)
    assert (lazy.tensordicts[0]["a"] == (total if rank == 0 else rank)).all()
    # a mismatch raises on every rank, naming the key, instead of hanging
    odd = _nested(float(rank))
    if rank == world - 1:
        odd["next", "obs"] = torch.zeros(4, 5)
    message = _expect_error(odd.all_reduce, "('next', 'obs')")
    assert "(4, 5)" in message and "(4, 3)" in message


def test_collectives_two_ranks():
    _spawn(2, "collectives", f"tcp://127.0.0.1:{_free_port()}")


def three_ranks(rank, world):
    collectives(rank, world)
    # a subgroup: ranks 0 and 2 only (every rank creates it)
    group = dist.new_group([0, 2])
    if rank == 0:
        _nested(3.0).send(dst=2, group=group)
        _nested(1.0).send(group=group, group_dst=1)
    elif rank == 2:
        td = _zeros_like_nested()
        td.recv(src=0, group=group)
        assert (td["obs"] == 3).all()
        td.recv(group=group, group_src=0)
        assert (td["obs"] == 1).all()
    if rank in (0, 2):
        td = _nested(float(rank))
        td.all_reduce(group=group)
        assert (td["obs"] == 2).all()
        got = (_nested(6.0) if rank == 2 else TensorDict()).broadcast(
            src=2, group=group
        )
        assert (got["obs"] == 6).all()
    memmap_collectives(rank, world)


def test_three_ranks_and_a_subgroup(tmp_path, monkeypatch):
    monkeypatch.setenv("TD_TEST_MEMMAP_FOLDER", str(tmp_path / "shared"))
    _spawn(3, "three_ranks", f"file://{tmp_path / 'init'}")


# ------------------------------------------------------- memory-mapped: a path, no data
def _count_wire(counts: dict) -> None:
    """Count the messages and bytes this process hands to torch.distributed: every
    point-to-point message goes through a process group's ``send`` (``dist.send`` and
    ``dist.isend`` too), broadcasts through ``dist.broadcast``."""
    real_send = dist.ProcessGroup.send

    def send(group, tensors, *args, **kwargs):
        counts["messages"] += 1
        counts["bytes"] += sum(t.numel() * t.element_size() for t in tensors)
        return real_send(group, tensors, *args, **kwargs)

    dist.ProcessGroup.send = send
    real_broadcast = dist.broadcast

    def broadcast(tensor, *args, **kwargs):
        counts["messages"] += 1
        counts["bytes"] += tensor.numel() * tensor.element_size()
        return real_broadcast(tensor, *args, **kwargs)

    dist.broadcast = broadcast


def _memmapped_rows(rows: int, folder: str) -> TensorDict:
    return TensorDict(
        obs=torch.arange(rows * 64, dtype=torch.float32).view(rows, 64),
        nested=TensorDict(step=torch.arange(rows), batch_size=[rows]),
        batch_size=[rows],
    ).memmap_(folder)


def _zeros_rows(rows: int) -> TensorDict:
    return TensorDict(
        obs=torch.zeros(rows, 64),
        nested=TensorDict(step=torch.zeros(rows, dtype=torch.int64), batch_size=[rows]),
        batch_size=[rows],
    )


def _count_collectives(counts: dict) -> None:
    """Count the collectives of this process and the bytes it gives them."""
    given = {"all_gather": 1, "gather": 0, "scatter": 1}  # the argument with its data
    for name, arg in given.items():
        real = getattr(dist, name)

        def counting(*args, _real=real, _name=name, _arg=arg, **kwargs):
            data = args[_arg] if len(args) > _arg else None
            data = [data] if isinstance(data, torch.Tensor) else data or []
            counts[_name] = counts.get(_name, 0) + 1
            counts["bytes"] += sum(t.numel() * t.element_size() for t in data)
            return _real(*args, **kwargs)

        setattr(dist, name, counting)


def _rank_rows(rank: int, rows: int = 1000) -> TensorDict:
    return TensorDict(
        obs=torch.full((rows, 64), float(rank)),
        nested=TensorDict(step=torch.arange(rows) + rank, batch_size=[rows]),
        batch_size=[rows],
    )


def _is_rank_rows(td, rank: int, rows: int = 1000) -> bool:
    return (td["obs"] == rank).all() and torch.equal(
        td["nested", "step"], torch.arange(rows) + rank
    )


def memmap_collectives(rank, world):
    """all_gather, scatter and gather_and_stack of memory-mapped tensordicts: the
    folders' paths travel, each rank maps the others' folders; no leaf on the wire."""
    folder = os.environ["TD_TEST_MEMMAP_FOLDER"] + f"-collectives{world}"
    data_bytes = 4 * 1000 * 64
    counts = {"bytes": 0}
    _count_collectives(counts)
    mine = _rank_rows(rank).memmap_(f"{folder}/gathered{rank}")
    every = mine.all_gather()
    assert counts == {"all_gather": 2, "bytes": counts["bytes"]}, counts  # no storages
    assert counts["bytes"] < 1024 < data_bytes, counts
    for r, got in enumerate(every):
        assert got.is_memmap() and str(got.saved_path) == f"{folder}/gathered{r}"
        assert _is_rank_rows(got, r)
    # a group where one rank is memory-mapped and the others not: their data moves
    mixed = (mine if rank == 0 else _rank_rows(rank)).all_gather()
    assert mixed[0].is_memmap() and not mixed[world - 1].is_memmap()
    assert all(_is_rank_rows(got, r) for r, got in enumerate(mixed))
    # scatter from memory-mapped parts: each rank maps its part's folder
    counts.clear()
    counts["bytes"] = 0
    parts = None
    if rank == world - 1:
        parts = [_rank_rows(10 + r).memmap_(f"{folder}/part{r}") for r in range(world)]
    got = TensorDict().scatter(world - 1, parts)
    assert got.is_memmap() and _is_rank_rows(got, 10 + rank)
    assert counts["scatter"] == 2 and counts["bytes"] < 1024 * world, counts
    # gather_and_stack: the rows of rank 0 are read from the other ranks' folders
    counts.clear()
    counts["bytes"] = 0
    if rank == 0:
        rows = torch.stack([_rank_rows(0).zero_() for _ in range(world - 1)])
        assert rows.gather_and_stack(0) is rows
        for r in range(1, world):
            assert _is_rank_rows(rows[r - 1], r)
    else:
        assert (
            _rank_rows(rank).memmap_(f"{folder}/row{rank}").gather_and_stack(0) is None
        )
        assert counts["bytes"] < 1024, counts
    assert counts == {"all_gather": 1, "gather": 1, "bytes": counts["bytes"]}, counts
    # as_path=False: the data moves
    counts.clear()
    counts["bytes"] = 0
    every = mine.all_gather(as_path=False)
    assert counts["bytes"] > data_bytes and not every[world - 1 - rank].is_memmap()
    assert all(_is_rank_rows(got, r) for r, got in enumerate(every))
    dist.barrier()


def memmap_as_path(rank, world):
    memmap_collectives(rank, world)
    folder = os.environ["TD_TEST_MEMMAP_FOLDER"]
    counts = {"messages": 0, "bytes": 0}
    _count_wire(counts)
    data_bytes = 4 * 1000 * 64 + 8 * 1000
    if rank == 0:
        td = _memmapped_rows(1000, folder)
        td.init_remote(dst=1)
        assert counts["messages"] == 2 and counts["bytes"] < 1024, counts
        sent = dict(counts)
        got = td.broadcast(src=0)
        assert got is td
        # only the sizes and the path (+ signature): no leaf bytes
        assert counts["messages"] - sent["messages"] == 2
        assert counts["bytes"] - sent["bytes"] < 1024 < data_bytes
        # as_path=False: the data moves (as before)
        before = counts["bytes"]
        td.init_remote(dst=1, as_path=False)
        assert counts["bytes"] - before > data_bytes
        # a folder the receiver cannot read / another folder under the same name
        # (isend: the folder is described before the receiver changes it)
        for tag, name in ((50, "-gone"), (60, "-replaced")):
            other = TensorDict(x=torch.zeros(3), batch_size=[3]).memmap_(folder + name)
            works = other.isend(dst=1, init_tag=tag, return_early=True)
            dist.barrier()
            for work in works:
                work.wait()
        # send / isend: the path, whatever the data's size (50x more rows here)
        small = _memmapped_rows(1000, folder + "-small")
        large = _memmapped_rows(50_000, folder + "-large")
        wire = []
        for source in (small, large):
            before = dict(counts)
            source.send(dst=1)
            wire.append({k: counts[k] - before[k] for k in counts})
        assert wire[0]["messages"] == wire[1]["messages"] == 1, wire
        # the signature holds the shapes: 1000 -> 50000 adds 2 digits per leaf
        assert wire[1]["bytes"] - wire[0]["bytes"] <= 4, wire
        assert wire[1]["bytes"] < 1024 < 4 * 50_000 * 64, wire
        large["obs"][7] = -1.0  # written to the files: the receiver reads it there
        works = large.isend(dst=1, init_tag=40, return_early=True)
        for work in works:
            work.wait()
        large.send(dst=1)  # to a receiver of another shape
        large.send(dst=1, as_path=False)  # the data, as for any tensordict
        with pytest.raises(ValueError, match="as_path=True needs"):
            _nested(1.0).send(dst=1, as_path=True)
    else:
        got = TensorDict.from_remote_init(src=0)
        assert got.is_memmap() and str(got.saved_path) == folder
        assert torch.equal(got["obs"][3], torch.arange(192, 256, dtype=torch.float32))
        assert torch.equal(got["nested", "step"], torch.arange(1000))
        got = TensorDict().broadcast(src=0)
        # the receiving side of the broadcasts: the sizes and the path, no data
        assert counts["messages"] == 2 and counts["bytes"] < 1024, counts
        assert got.is_memmap() and torch.equal(
            got["nested", "step"], torch.arange(1000)
        )
        moved = TensorDict.from_remote_init(src=0)
        assert not moved.is_memmap() and torch.equal(moved["obs"], got["obs"])
        into = TensorDict(x=torch.zeros(3), batch_size=[3])
        dist.barrier()
        os.rename(folder + "-gone", folder + "-elsewhere")
        with pytest.raises(FileNotFoundError, match="cannot read.*as_path=False"):
            into.recv(src=0, init_tag=50)
        # a folder of the same name and structure that is not the sender's
        dist.barrier()
        os.rename(folder + "-replaced", folder + "-old")
        TensorDict(x=torch.ones(3), batch_size=[3]).memmap_(folder + "-replaced")
        _expect_error(
            lambda: into.recv(src=0, init_tag=60), "another one", "as_path=False"
        )
        assert not into["x"].any()  # nothing written
        # recv into an existing tensordict: the leaves are read from the sender's files
        small = _zeros_rows(1000)
        small.recv(src=0)
        assert torch.equal(small["obs"][3], torch.arange(192, 256, dtype=torch.float32))
        assert torch.equal(small["nested", "step"], torch.arange(1000))
        large = _memmapped_rows(50_000, folder + "-mine")  # a memory-mapped receiver
        large.recv(src=0)
        assert torch.equal(large["nested", "step"], torch.arange(50_000))
        into = _zeros_rows(50_000)
        for work in into.irecv(src=0, init_tag=40, return_premature=True):
            work.wait()
        assert (into["obs"][7] == -1).all() and into["obs"][8, 0] == 8 * 64
        shaped = _zeros_rows(50_000)
        shaped["obs"] = torch.zeros(50_000, 32)
        _expect_error(lambda: shaped.recv(src=0), "'obs'", "(50000, 32)", "(50000, 64)")
        assert not shaped["nested", "step"].any()  # nothing written
        plain = _zeros_rows(50_000)
        plain.recv(src=0)
        assert (plain["obs"][7] == -1).all() and plain["nested", "step"][-1] == 49_999


def test_memmap_tensordict_travels_as_its_path(tmp_path, monkeypatch):
    monkeypatch.setenv("TD_TEST_MEMMAP_FOLDER", str(tmp_path / "shared"))
    _spawn(2, "memmap_as_path", f"tcp://127.0.0.1:{_free_port()}")


# ------------------------------------------------ the wire format, without a process group
class _Loopback:
    """Stands in for ``torch.distributed`` in ``tensordict._distributed`` and for its
    default process group: a message sent is kept; a receive copies the next kept
    message into the buffer it is given (as gloo does: a shorter message into a
    longer buffer)."""

    def __init__(self):
        self.sent = []
        self.group = types.SimpleNamespace(WORLD=self)
        self.GroupMember = dist.GroupMember

    def send(self, tensors, rank, tag):
        self.sent.append(tensors[0])
        return self

    def recv(self, tensors, rank, tag):
        message = self.sent.pop(0)
        tensors[0][: message.numel()].copy_(message)
        return self

    def wait(self, *args):
        return True

    def get_backend(self, group=None):
        return "gloo"


def test_consolidated_send_is_one_message_straight_from_its_storage(monkeypatch):
    import tensordict._distributed as td_dist

    wire = _Loopback()
    monkeypatch.setattr(td_dist, "dist", wire)
    sent = _nested(2.0).consolidate()
    sent.send(dst=1)
    assert len(wire.sent) == 1
    message = wire.sent[0]
    # the header sits in the room in front of the block: no copy of the data
    storage = sent["obs"].untyped_storage()
    assert message.untyped_storage().data_ptr() == storage.data_ptr()
    received = _zeros_like_nested().consolidate()
    received.recv(src=0)
    assert (received == _nested(2.0)).all()
    sent["obs"].add_(1)  # the next send carries the new values
    sent.send(dst=1)
    received.recv(src=0)
    assert (received["obs"] == 3.0).all()
    # a receiver of another structure: an error naming the key (its values are
    # not kept: the message landed in its storage, see the next test)
    sent.send(dst=1)
    other = (
        _zeros_like_nested()
        .exclude("step")
        .set("step", torch.zeros(4, 2, dtype=torch.int64))
        .consolidate()
    )
    _expect_error(lambda: other.recv(src=0), "'step'", "(4, 2)", "(4,)")


def test_point_to_point_needs_one_peer_and_a_process_group():
    td = _nested(1.0)
    with pytest.raises(ValueError, match="exactly one of dst and group_dst"):
        td.send()
    with pytest.raises(ValueError, match="exactly one of src and group_src"):
        td.recv(src=0, group_src=0)
    with pytest.raises(ValueError, match="group_dst needs the group"):
        td.isend(group_dst=1)
    if not dist.is_initialized():
        with pytest.raises(RuntimeError, match="init_process_group"):
            td.send(dst=1)
        with pytest.raises(RuntimeError, match="init_process_group"):
            td.irecv(src=1, return_premature=True)


def test_consolidated_receiver_copies_only_a_consolidated_sender_of_its_structure(
    monkeypatch,
):
    import tensordict._distributed as td_dist

    wire = _Loopback()
    monkeypatch.setattr(td_dist, "dist", wire)
    into = _zeros_like_nested().consolidate()
    # a plain sender of the same structure: its leaves packed in key order, not the
    # consolidated block's layout, so not the one-copy path; the values still land
    last = _nested(2.0).isend(dst=1, pseudo_rand=True, init_tag=7)
    assert into.recv(src=0, pseudo_rand=True, init_tag=7) == last
    assert (into == _nested(2.0)).all()
    # a consolidated sender: the one copy, and the same last tag as the sender's
    last = _nested(5.0).consolidate().isend(dst=1, pseudo_rand=True, init_tag=7)
    assert into.recv(src=0, pseudo_rand=True, init_tag=7) == last
    assert (into == _nested(5.0)).all()
    # the same bytes in another shape: an error naming the key
    other = (
        _nested(9.0).exclude("step").set("step", torch.zeros(4, 1, dtype=torch.int64))
    )
    other.consolidate().send(dst=1)
    _expect_error(lambda: into.recv(src=0), "'step'", "(4,)", "(4, 1)")
    # (the message landed in the storage: the values are the sender's bytes now);
    # the next receive of the right structure is whole again
    _nested(5.0).consolidate().send(dst=1)
    into.recv(src=0)
    assert (into == _nested(5.0)).all()
    # the receiver's storage moved (into shared memory) between the post and wait()
    _nested(7.0).consolidate().send(dst=1)
    (pending,) = into.irecv(src=0, return_premature=True)
    before = into["obs"].data_ptr()
    into.share_memory_()
    assert into["obs"].data_ptr() != before
    pending.wait()
    assert (into == _nested(7.0)).all()
    # a consolidated sender into a plain receiver of the same structure
    plain = _zeros_like_nested()
    _nested(6.0).consolidate().send(dst=1)
    plain.recv(src=0)
    assert (plain == _nested(6.0)).all()


class _Recording(_Loopback):
    """A loopback that also keeps the buffer each receive was posted on."""

    def __init__(self):
        super().__init__()
        self.posted = []

    def recv(self, tensors, rank, tag):
        self.posted.append(tensors[0])
        return super().recv(tensors, rank, tag)


# A consolidated receiver grows its storage with torch's private
# ``UntypedStorage._swap_data_ptr_`` (tensordict/_consolidate.py: grow_storage); a torch
# without it makes the receiver copy, which the other receive tests cover.
GROWS_IN_PLACE = pytest.mark.skipif(
    not hasattr(torch.UntypedStorage, "_swap_data_ptr_"),
    reason="this torch has no UntypedStorage._swap_data_ptr_: the receiver copies",
)


def _landed_in(wire: _Recording, leaf: torch.Tensor) -> bool:
    """Whether the last receive was posted on the storage of ``leaf`` (a leaf of a
    consolidated tensordict: its storage is the tensordict's)."""
    storage = leaf.untyped_storage()
    return wire.posted[-1].untyped_storage().data_ptr() == storage.data_ptr()


@GROWS_IN_PLACE
def test_consolidated_receiver_takes_the_message_in_its_own_storage(monkeypatch):
    import tensordict._distributed as td_dist
    from tensordict._distributed import FIRST_MESSAGE_BYTES

    wire = _Recording()
    monkeypatch.setattr(td_dist, "dist", wire)
    into = _zeros_like_nested().consolidate()
    room = into._consolidated.block.storage_offset()
    _nested(2.0).consolidate().send(dst=1)
    into.recv(src=0)
    assert (into == _nested(2.0)).all() and into.is_consolidated()
    assert _landed_in(wire, into["obs"])
    storage = into["obs"].untyped_storage()
    # the storage grew once, to at most its header room and the first message
    grown, address = storage.nbytes(), storage.data_ptr()
    assert grown <= room + FIRST_MESSAGE_BYTES
    # the next receives take recv's shortest path: the same tags and last tag
    assert _nested(3.0).consolidate().isend(dst=1, init_tag=5) == 7
    assert into.recv(src=0, init_tag=5) == 7
    assert (into == _nested(3.0)).all() and _landed_in(wire, into["obs"])
    storage = into["obs"].untyped_storage()
    assert (storage.nbytes(), storage.data_ptr()) == (grown, address)
    # the receiver still sends from its storage (its header room holds a header of
    # its own structure), and a plain sender's message is copied out, then unpacked
    probe = _zeros_like_nested().consolidate()
    into.send(dst=1)
    probe.recv(src=0)
    assert (probe == _nested(3.0)).all()
    _nested(4.0).send(dst=1)
    into.recv(src=0)
    assert (into == _nested(4.0)).all()
    # another structure: the error names the key; the header room, which the
    # sender's bytes overwrote, is written again by the receiver's next send
    other = _nested(1.0).exclude("step")
    other.set("step", torch.zeros(4, 2, dtype=torch.int64)).consolidate().send(dst=1)
    _expect_error(
        lambda: into.recv(src=0), "'step'", "(4,)", "(4, 2)", "were overwritten"
    )
    _nested(5.0).consolidate().send(dst=1)
    into.recv(src=0)
    into.send(dst=1)
    probe.recv(src=0)
    assert (probe == _nested(5.0)).all()
    # a receive left pending (return_premature) does not hold the storage
    _nested(6.0).consolidate().send(dst=1)
    (pending,) = into.irecv(src=0, return_premature=True)
    assert not _landed_in(wire, into["obs"])
    pending.wait()
    assert (into == _nested(6.0)).all()


@GROWS_IN_PLACE
def test_consolidated_receivers_of_every_kind_take_the_message_in_place(monkeypatch):
    import tensordict._distributed as td_dist

    wire = _Recording()
    monkeypatch.setattr(td_dist, "dist", wire)
    lazy = _lazy(0.0).consolidate()
    _lazy(2.0).consolidate().send(dst=1)
    lazy.recv(src=0)
    assert _landed_in(wire, lazy.tensordicts[0]["a"])
    assert (lazy.tensordicts[1]["a"] == 3).all()
    assert (lazy.tensordicts[1]["b", "c"] == 2).all()
    frame = _frame(0.0).consolidate()
    _frame(3.0).consolidate().send(dst=1)
    frame.recv(src=0)
    assert _landed_in(wire, frame.obs)
    assert (frame.obs == 3).all() and (frame.reward == -3).all()
    # a raw pointer into the storage taken before its first receive (DLPack) keeps
    # the memory it points to (never freed under it), which no longer holds the leaf
    into = _zeros_like_nested().consolidate()
    raw = torch.from_dlpack(torch.utils.dlpack.to_dlpack(into["obs"]))
    _nested(2.0).consolidate().send(dst=1)
    into.recv(src=0)
    assert (into["obs"] == 2).all() and _landed_in(wire, into["obs"])
    assert not raw.any() and raw.data_ptr() != into["obs"].data_ptr()


def test_consolidated_receiver_whose_storage_cannot_grow_copies(monkeypatch, tmp_path):
    import tensordict._distributed as td_dist

    wire = _Recording()
    monkeypatch.setattr(td_dist, "dist", wire)
    shared = _zeros_like_nested().consolidate(share_memory=True)
    mapped = _zeros_like_nested().consolidate(filename=tmp_path / "into.bin")
    viewed = _zeros_like_nested().consolidate()
    array = viewed["obs"].numpy()  # torch marks the storage not resizable
    for into in (shared, mapped, viewed):
        storage = into["obs"].untyped_storage()
        size, address = storage.nbytes(), storage.data_ptr()
        _nested(2.0).consolidate().send(dst=1)
        into.recv(src=0)
        assert (into == _nested(2.0)).all() and not _landed_in(wire, into["obs"])
        storage = into["obs"].untyped_storage()
        assert (storage.nbytes(), storage.data_ptr()) == (size, address)
        # a mismatch writes nothing into a receiver that copies
        other = _nested(1.0).exclude("step")
        other.set("step", torch.zeros(4, 2, dtype=torch.int64))
        other.consolidate().send(dst=1)
        _expect_error(
            lambda: into.recv(src=0), "'step'", "(4,)", "(4, 2)", "Nothing was written"
        )
        assert (into == _nested(2.0)).all()
    assert (array == 2).all()  # a NumPy view sees what was received
    assert shared.is_shared()
