"""Data on disk: memory-mapping, loading, indexing memory-mapped data, HDF5 reads, and
the operations 0.15.3's own memmap benchmark suite times.

Sizes: the smoke run (``pytest benchmarks --benchmark-disable``) uses small sizes so
that it stays fast; a timed run (``benchmarks/compare.py -k persistence``, or
``pytest benchmarks -k persistence``) uses the full ones: 1 GiB in 100 leaves for
``memmap_``, a 10,000-leaf nested tensordict for ``load_memmap``, a 1,000,000-row
tensordict for indexing. Files go to the default temporary folder (``TMPDIR``).

Floors: ``memmap_`` of 1 GiB is compared with the same bytes written by hand to 100
files (``os.write``, what ``dd`` does: the disk's sequential write speed as Python sees
it); reads from a PersistentTensorDict with the same reads done with h5py by hand.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid

import pytest
import torch
from tensordict import MemoryMappedTensor, PersistentTensorDict, TensorDict
from torch import nn


@pytest.fixture(scope="module")
def full(request):
    """Full sizes in a timed run, small ones in the smoke run."""
    return not request.config.getoption("benchmark_disable", False)


@pytest.fixture(scope="module")
def scratch():
    path = tempfile.mkdtemp(prefix="tensordict-bench-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _fresh(scratch):
    return os.path.join(scratch, uuid.uuid4().hex)


# ---------------------------------------------------------------------------- memmap_ 1 GiB


def test_memmap_1gib_100_leaves(benchmark, impl, full, scratch):
    leaf_bytes = (1 << 30) // 100 if full else 1 << 14
    leaves = {f"k{i}": torch.randn(leaf_bytes // 4 // 256, 256) for i in range(100)}
    targets = []

    def setup():
        for old in targets:
            shutil.rmtree(old, ignore_errors=True)
        targets.clear()
        targets.append(_fresh(scratch))
        td = TensorDict(dict(leaves), batch_size=[])
        return (td, targets[0]), {}

    def by_hand(td, path):  # the floor: the same bytes, dd-style, to 100 files
        os.makedirs(path)
        for key, value in leaves.items():
            fd = os.open(os.path.join(path, key), os.O_WRONLY | os.O_CREAT, 0o644)
            view = memoryview(value.numpy()).cast("B")
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)

    def memmap_(td, path):
        td.memmap_(path)

    benchmark.pedantic(
        by_hand if impl == "floor" else memmap_, setup=setup, rounds=3 if full else 1
    )
    if impl == "td":
        back = TensorDict.load_memmap(targets[0])
        assert torch.equal(back["k7"], leaves["k7"])
    for old in targets:
        shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------------- load_memmap


@pytest.fixture(scope="module")
def saved_10000_leaves(full, scratch):
    outer, inner = (100, 100) if full else (10, 10)
    td = TensorDict(
        {
            f"group{i}": {f"leaf{j}": torch.full((16,), float(j)) for j in range(inner)}
            for i in range(outer)
        },
        batch_size=[16],
    )
    path = _fresh(scratch)
    td.memmap(path)
    return path, outer * inner


def test_load_memmap_10000_leaves(benchmark, saved_10000_leaves):
    path, count = saved_10000_leaves
    loaded = benchmark(TensorDict.load_memmap, path)
    assert len(list(loaded.keys(True, True))) == count
    assert loaded["group3", "leaf5"][0] == 5.0


# ---------------------------------------------------------------------------- index 64 rows


@pytest.fixture(scope="module")
def memmapped_rows(full, scratch):
    rows = 1_000_000 if full else 1_000
    gen = torch.Generator().manual_seed(0)
    td = TensorDict(
        {
            "obs": torch.randn(rows, 4, generator=gen),
            "action": torch.randint(5, (rows,), generator=gen),
            "reward": torch.randn(rows, 1, generator=gen),
            "done": torch.zeros(rows, 1, dtype=torch.bool),
            "next": {
                "obs": torch.randn(rows, 4, generator=gen),
                "reward": torch.randn(rows, 1, generator=gen),
            },
        },
        batch_size=[rows],
    )
    return td.memmap(_fresh(scratch)), td


def test_index_64_random_rows_of_memmap(benchmark, memmapped_rows):
    mm, ram = memmapped_rows
    index = torch.randint(
        mm.batch_size[0], (64,), generator=torch.Generator().manual_seed(1)
    )
    got = benchmark(lambda: mm[index])
    assert torch.equal(got["next", "obs"], ram["next", "obs"][index])


# ---------------------------------------------------------------------------- HDF5 reads


@pytest.fixture(scope="module")
def h5_file(full, scratch):
    rows = 100_000 if full else 1_000
    gen = torch.Generator().manual_seed(0)
    td = TensorDict(
        {
            "obs": torch.randn(rows, 16, generator=gen),
            "action": torch.randint(5, (rows,), generator=gen),
            "next": {"obs": torch.randn(rows, 16, generator=gen)},
        },
        batch_size=[rows],
    )
    path = os.path.join(scratch, "data.h5")
    PersistentTensorDict.from_dict(td, filename=path).close()
    return path, td


def test_h5_read_rows(benchmark, impl, h5_file):
    import h5py

    path, ram = h5_file
    index = torch.randint(
        ram.batch_size[0], (64,), generator=torch.Generator().manual_seed(2)
    )
    if (
        impl == "floor"
    ):  # h5py by hand: sorted unique rows of each dataset, then reorder
        file = h5py.File(path, "r")
        uniq, inverse = torch.unique(index, return_inverse=True)
        rows = uniq.numpy()

        def read():
            return {
                "obs": torch.from_numpy(file["obs"][rows])[inverse],
                "action": torch.from_numpy(file["action"][rows])[inverse],
                "next": {"obs": torch.from_numpy(file["next"]["obs"][rows])[inverse]},
            }

        got = benchmark(read)
        assert torch.equal(got["next"]["obs"], ram["next", "obs"][index])
        file.close()
        return
    h5 = PersistentTensorDict.from_h5(path)
    got = benchmark(lambda: h5[index])
    assert torch.equal(got["next", "obs"], ram["next", "obs"][index])
    h5.close()


def test_h5_read_key(benchmark, impl, h5_file):
    import h5py

    path, ram = h5_file
    if impl == "floor":
        file = h5py.File(path, "r")
        got = benchmark(lambda: torch.from_numpy(file["next"]["obs"][()]))
        file.close()
    else:
        h5 = PersistentTensorDict.from_h5(path)
        got = benchmark(lambda: h5["next", "obs"])
        h5.close()
    assert torch.equal(got, ram["next", "obs"])


def test_h5_read_all(benchmark, impl, h5_file):
    """Every dataset of the file into RAM: ``to_tensordict`` against h5py by hand."""
    import h5py

    path, ram = h5_file
    if impl == "floor":
        file = h5py.File(path, "r")

        def read():
            return {
                "obs": torch.from_numpy(file["obs"][()]),
                "action": torch.from_numpy(file["action"][()]),
                "next": {"obs": torch.from_numpy(file["next"]["obs"][()])},
            }

        got = benchmark(read)
        file.close()
        assert torch.equal(got["next"]["obs"], ram["next", "obs"])
        return
    h5 = PersistentTensorDict.from_h5(path)
    got = benchmark(h5.to_tensordict)
    h5.close()
    assert (got == ram).all()


# ------------------------------------------------- the operations of 0.15.3's memmap suite


@pytest.fixture
def memmap_tensor():
    return MemoryMappedTensor.zeros((3, 4, 5))


@pytest.fixture
def td_memmap():
    return TensorDict(
        {str(i): torch.zeros(3, 40) + i for i in range(30)}, [3, 40]
    ).memmap_()


def test_mmt_creation(benchmark):
    benchmark(MemoryMappedTensor.empty, (3, 4, 5))


def test_mmt_creation_from_tensor(benchmark):
    tensor = torch.zeros(3, 4, 5)
    benchmark(MemoryMappedTensor.from_tensor, tensor)


def test_mmt_add_one(benchmark, memmap_tensor):
    benchmark(lambda: memmap_tensor + 1)


def test_mmt_contiguous(benchmark, memmap_tensor):
    benchmark(lambda: memmap_tensor.contiguous())


def test_mmt_stack(benchmark, memmap_tensor):
    benchmark(torch.stack, [memmap_tensor] * 2, 0)


def test_memmaptd_index(benchmark, td_memmap):
    got = benchmark(lambda: td_memmap[0])
    assert got["7"].shape == (40,)


def test_memmaptd_index_astensor(benchmark, td_memmap):
    benchmark(lambda: td_memmap[0].as_tensor())


def test_memmaptd_index_op(benchmark, td_memmap):
    got = benchmark(lambda: td_memmap[0].apply(lambda x: x + 1))
    assert (got["3"] == 4).all()


@pytest.fixture(scope="module")
def model(full):
    return nn.Transformer() if full else nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2))


def _weights(model):
    return TensorDict(model.state_dict(), []).unflatten_keys(".")


def test_serialize_model(benchmark, model, scratch, full):
    path = _fresh(scratch)
    benchmark.pedantic(
        lambda: _weights(model).memmap(path, num_threads=32), rounds=5 if full else 1
    )


def test_serialize_weights(benchmark, model, scratch, full):
    weights = _weights(model)
    path = _fresh(scratch)
    benchmark.pedantic(
        lambda: weights.memmap(path, num_threads=32), rounds=5 if full else 1
    )


def test_serialize_weights_returnearly(benchmark, model, scratch, full):
    weights = _weights(model)
    futures = []
    benchmark.pedantic(
        lambda: futures.append(
            weights.memmap(_fresh(scratch), num_threads=32, return_early=True)
        ),
        rounds=5 if full else 1,
    )
    for future in futures:
        future.result()


def test_serialize_weights_filesystem(benchmark, model, full):
    weights = _weights(model)
    benchmark.pedantic(lambda: weights.memmap(num_threads=32), rounds=5 if full else 1)


def test_serialize_model_filesystem(benchmark, model, full):
    benchmark.pedantic(
        lambda: _weights(model).memmap(num_threads=32), rounds=5 if full else 1
    )



def test_serialize_from_module(benchmark, model, scratch, full):
    """0.15.3's own form of ``serialize_model``: ``from_module``, then a save to the
    same folder at every call (a checkpoint loop; issue 30)."""
    path = _fresh(scratch)
    benchmark.pedantic(
        lambda: TensorDict.from_module(model).memmap(path, num_threads=32),
        rounds=5 if full else 1,
    )


def test_serialize_weights_filesystem_kept(benchmark, model, full):
    """Anonymous saves whose result lives until the next one is made (a buffer
    swapped at each step): the shared-memory files still mapped are never reused, so
    half the saves allocate fresh memory (issue 30)."""
    weights = _weights(model)
    kept = [None]

    def save():
        kept[0] = weights.memmap(num_threads=32)

    benchmark.pedantic(save, rounds=5 if full else 1)
