"""MemoryMappedTensor: construction in torch's argument forms, files, views, pickling,
every dtype bit-exact."""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import pickle

import pytest
import torch

import tensordict
from tensordict import MemoryMappedTensor

ALL_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex32,
    torch.complex64,
    torch.complex128,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]


def random_of(dtype, shape, seed=0) -> torch.Tensor:
    """Random bytes viewed as ``dtype``: every bit pattern (NaNs included) round-trips."""
    gen = torch.Generator().manual_seed(seed)
    numel = 1
    for d in shape:
        numel *= d
    raw = torch.randint(0, 256, (numel * dtype.itemsize,), dtype=torch.uint8, generator=gen)
    if dtype is torch.bool:
        return (raw % 2).view(torch.bool).view(shape)
    return raw.view(dtype).view(shape)


def same_bits(a, b) -> bool:
    a = a.as_subclass(torch.Tensor).contiguous()
    b = b.as_subclass(torch.Tensor).contiguous()
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(
        a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)
    )


def test_import_paths():
    from tensordict.memmap import MemoryMappedTensor as from_module

    assert tensordict.MemoryMappedTensor is from_module
    assert issubclass(MemoryMappedTensor, torch.Tensor)
    # as in 0.15.3, the name `tensordict.memmap` is the function; the module imports
    assert callable(tensordict.memmap)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_round_trips_bit_exactly(dtype, tmp_path):
    data = random_of(dtype, (5, 3))
    path = tmp_path / "x.memmap"
    mm = MemoryMappedTensor.from_tensor(data, filename=path)
    assert mm.dtype == dtype and same_bits(mm, data)
    assert os.path.getsize(path) == data.numel() * dtype.itemsize
    back = MemoryMappedTensor.from_filename(path, dtype, (5, 3))
    assert same_bits(back, data)
    anon = MemoryMappedTensor.from_tensor(data)
    assert same_bits(anon, data)
    assert same_bits(pickle.loads(pickle.dumps(mm)), data)


def test_constructors_in_torchs_forms(tmp_path):
    for make in (
        lambda **kw: MemoryMappedTensor.empty(2, 3, **kw),
        lambda **kw: MemoryMappedTensor.zeros((2, 3), **kw),
        lambda **kw: MemoryMappedTensor.ones(torch.Size([2, 3]), **kw),
        lambda **kw: MemoryMappedTensor.zeros([2, 3], **kw),
        lambda **kw: MemoryMappedTensor.zeros(size=(2, 3), **kw),
    ):
        assert make().shape == (2, 3) and make().dtype == torch.float32
        assert make(dtype=torch.int16).dtype == torch.int16
    assert (MemoryMappedTensor.zeros(4) == 0).all()
    assert (MemoryMappedTensor.ones(4, dtype=torch.bool)).all()
    full = MemoryMappedTensor.full((2, 2), 1.5)
    assert full.dtype == torch.float32 and (full == 1.5).all()
    assert MemoryMappedTensor.full((2,), 3).dtype == torch.int64  # as torch.full
    assert (MemoryMappedTensor.full(2, 3, fill_value=7) == 7).all()
    ref = torch.zeros(3, 2, dtype=torch.float64)
    for like in (
        MemoryMappedTensor.empty_like(ref),
        MemoryMappedTensor.zeros_like(ref, filename=tmp_path / "z"),
        MemoryMappedTensor.ones_like(ref),
        MemoryMappedTensor.full_like(ref, 2.0),
    ):
        assert like.shape == ref.shape and like.dtype == ref.dtype
    assert MemoryMappedTensor.zeros_like(ref, filename=tmp_path / "z2").filename == str(
        tmp_path / "z2"
    )
    with pytest.raises(ValueError, match="CPU"):
        MemoryMappedTensor.zeros(2, device="meta")


def test_filename_and_anonymous(tmp_path):
    mm = MemoryMappedTensor.zeros(3, filename=tmp_path / "a.memmap")
    assert mm.filename == str(tmp_path / "a.memmap")
    mm[1] = 5
    assert MemoryMappedTensor.from_filename(mm.filename, torch.float32, [3])[1] == 5
    anon = MemoryMappedTensor.zeros(3)
    with pytest.raises(RuntimeError, match="no file"):
        anon.filename
    with pytest.raises(RuntimeError, match="already exists"):
        MemoryMappedTensor.zeros(3, filename=tmp_path / "a.memmap")
    assert MemoryMappedTensor.zeros(3, filename=tmp_path / "a.memmap", existsok=True)[1] == 0


def test_from_tensor_rules(tmp_path):
    mm = MemoryMappedTensor.from_tensor(torch.arange(4.0), filename=tmp_path / "a")
    assert MemoryMappedTensor.from_tensor(mm, filename=tmp_path / "a") is mm
    with pytest.raises(RuntimeError, match="copy_existing"):
        MemoryMappedTensor.from_tensor(mm, filename=tmp_path / "b")
    copy = MemoryMappedTensor.from_tensor(mm, filename=tmp_path / "b", copy_existing=True)
    assert copy.filename == str(tmp_path / "b") and torch.equal(copy, mm)
    anon = MemoryMappedTensor.from_tensor(torch.ones(2))
    assert MemoryMappedTensor.from_tensor(anon) is anon
    zeros = MemoryMappedTensor.from_tensor(torch.ones(2, 2), copy_data=False)
    assert zeros.shape == (2, 2) and (zeros == 0).all()
    assert MemoryMappedTensor.from_tensor(torch.arange(6), shape=(2, 3)).shape == (2, 3)


def test_from_filename_index_and_errors(tmp_path):
    path = tmp_path / "x"
    MemoryMappedTensor.from_tensor(torch.arange(12.0).reshape(3, 4), filename=path)
    assert MemoryMappedTensor.from_filename(path, torch.float32, (3, 4), index=1).tolist() == [
        4.0,
        5.0,
        6.0,
        7.0,
    ]
    assert MemoryMappedTensor(str(path), dtype=torch.float32, shape=(3, 4), index=(2, 0)) == 8
    with pytest.raises(ValueError, match="holds 48 bytes.*needs 480"):
        MemoryMappedTensor.from_filename(path, torch.float32, (30, 4))
    with pytest.raises(ValueError, match="needs 96"):
        MemoryMappedTensor.from_filename(path, torch.float64, (3, 4))
    with pytest.raises(FileNotFoundError, match="no file"):
        MemoryMappedTensor.from_filename(tmp_path / "missing", torch.float32, (3,))
    ro = MemoryMappedTensor.from_filename(path, torch.float32, (3, 4), mode="r")
    ro[0, 0] = 100  # copy-on-write: the file is unchanged
    assert MemoryMappedTensor.from_filename(path, torch.float32, (3, 4))[0, 0] == 0


def test_views_stay_mapped_and_write_through(tmp_path):
    mm = MemoryMappedTensor.from_tensor(torch.zeros(4, 3), filename=tmp_path / "x")
    for view in (mm[1], mm[1:3], mm[:, 0], mm[None], mm[..., 1]):
        assert type(view) is MemoryMappedTensor and view.filename == mm.filename
    for part in (*mm.unbind(0), *mm.chunk(2), *mm.split(1)):
        assert type(part) is MemoryMappedTensor
    assert type(mm[torch.tensor([0, 2])]) is torch.Tensor  # a copy: in RAM
    assert type(mm[mm[:, 0] > 0]) is torch.Tensor
    assert type(mm + 1) is torch.Tensor and type(mm.sum()) is torch.Tensor
    mm[1:3][0, 2] = 7.0
    mm.unbind(0)[3].fill_(2.0)
    back = MemoryMappedTensor.from_filename(mm.filename, torch.float32, (4, 3))
    assert back[1, 2] == 7.0 and (back[3] == 2).all()


def test_from_storage(tmp_path):
    storage = torch.arange(6, dtype=torch.float32).untyped_storage()
    mm = MemoryMappedTensor.from_storage(storage, shape=(2, 3), dtype=torch.float32)
    assert mm.tolist() == [[0, 1, 2], [3, 4, 5]]
    mm[0, 0] = 9  # a view: the storage sees it
    assert torch.empty(0).set_(storage)[0] == 9


def test_pickle_sends_the_file_not_the_data(tmp_path):
    big = MemoryMappedTensor.zeros(1000, 1000, filename=tmp_path / "big")
    payload = pickle.dumps(big)
    assert len(payload) < 1000  # 4 MB of data, a few hundred bytes pickled
    view = big[10:20, 5]
    back = pickle.loads(pickle.dumps(view))
    back[0] = 3.0
    assert big[10, 5] == 3.0  # the same bytes


def _write_one(mm, value):
    mm[0] = value


@pytest.mark.parametrize("filename", [True, False], ids=["file", "anonymous"])
def test_another_process_maps_the_same_bytes(filename, tmp_path):
    mm = (
        MemoryMappedTensor.zeros(4, filename=tmp_path / "x")
        if filename
        else MemoryMappedTensor.zeros(4)
    )
    ctx = mp.get_context("spawn")
    proc = ctx.Process(target=_write_one, args=(mm, 42.0))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    assert mm[0] == 42.0


def test_huge_sparse_tensor_costs_nothing():
    # the seed 002 example: 691 GB of uint8, of which only what is touched is real
    images = MemoryMappedTensor.empty((1_000_000, 3, 480, 480), dtype=torch.uint8)
    assert images[:10].shape == (10, 3, 480, 480) and int(images[:2].sum()) == 0


@pytest.mark.parametrize("resize", [False, True])
def test_files_written_in_pieces_land_byte_for_byte(tmp_path, monkeypatch, resize):
    # files are written in pieces cut at multiples of the piece size in the file; a
    # tensor that is not contiguous is written a chunk of rows at a time, so its
    # chunks start between two cuts; with resize, the size changes after every piece
    # (as the adaptation may, between any two writes)
    memmap = importlib.import_module("tensordict.memmap")  # the module, not the function
    pieces, piece = memmap._PieceSize, 1 << 15
    monkeypatch.setattr(pieces, "size", piece)
    sizes = iter([1 << 12, 1 << 16, 1 << 13, 1 << 18] * 10_000)
    judge = (lambda *args: setattr(pieces, "size", next(sizes))) if resize else (lambda *args: None)
    monkeypatch.setattr(pieces, "judge", judge)
    monkeypatch.setattr(memmap, "_CHUNK_BYTES", 3 * piece + 12)
    gen = torch.Generator().manual_seed(0)
    size = 5 * piece // 4 + 3
    flat = torch.randint(-(2**31), 2**31 - 1, (size,), dtype=torch.int32, generator=gen)
    rows = torch.randn(400, 70, generator=gen, dtype=torch.float64)[:, ::2]
    for name, tensor in (("flat", flat), ("rows", rows)):
        mm = MemoryMappedTensor.from_tensor(tensor, filename=tmp_path / name)
        assert os.path.getsize(tmp_path / name) == tensor.numel() * tensor.element_size()
        back = MemoryMappedTensor.from_filename(
            tmp_path / name, dtype=tensor.dtype, shape=tensor.shape
        )
        assert torch.equal(mm, tensor) and torch.equal(back, tensor), name


def test_piece_size_halves_on_slow_writes_and_retries_the_double(monkeypatch):
    # the rule behind write_pieces: several slow pieces in a row halve the size (one
    # preempted write does not), bytes written at speed try the double again, writes
    # too short to time are not judged, and the size stays within its bounds
    memmap = importlib.import_module("tensordict.memmap")
    pieces = memmap._PieceSize
    for name, value in (("size", 1 << 15), ("slow_in_a_row", 0), ("fast_bytes", 0)):
        monkeypatch.setattr(pieces, name, value)
    size = 1 << 15
    slow, fast = 10 * size, size // 10  # nanoseconds for one piece
    pieces.judge(size, size, slow)
    pieces.judge(size, size, fast)  # the run of slow pieces is broken
    for _ in range(memmap._SLOW_PIECES - 1):
        pieces.judge(size, size, slow)
    assert pieces.size == size
    pieces.judge(size, 100, 10**9)  # a leaf's short end: not judged
    pieces.judge(size, size, slow)
    assert pieces.size == size // 2
    pieces.judge(size, size, slow)  # judged at the old size: ignored
    half = size // 2
    for _ in range(memmap._RETRY_BYTES // half):
        pieces.judge(half, half, half // 10)
    assert pieces.size == size
    for _ in range(40 * memmap._SLOW_PIECES):
        pieces.judge(pieces.size, pieces.size, 10**9)
    assert pieces.size == memmap.WRITE_PIECE_MIN
    for _ in range(memmap._RETRY_BYTES // pieces.size):  # the smallest size retries too
        pieces.judge(pieces.size, pieces.size, 100)
    assert pieces.size == 2 * memmap.WRITE_PIECE_MIN
    # many small leaves, each written whole in one piece shorter than the size: judged
    monkeypatch.setattr(pieces, "size", memmap.WRITE_PIECE_MAX)
    for _ in range(memmap._SLOW_PIECES):
        pieces.judge(memmap.WRITE_PIECE_MAX, 1 << 16, 10**9)
    assert pieces.size == memmap.WRITE_PIECE_MAX // 2
