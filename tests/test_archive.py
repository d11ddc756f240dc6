"""Single-file archives (``save("x.tdz")``, ``pack_memmap`` ...): round trips, leaves
that map the archive without a copy, CRC checks, crash safety, ``unzip``."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    TensorDict,
    append_memmap,
    is_memmap_archive,
    pack_memmap,
    refresh_archive_checksums,
    tensorclass,
    unpack_memmap,
)
from tensordict._disk import SavedDataError


@tensorclass
class Sample:
    obs: torch.Tensor
    label: str


def _td():
    return TensorDict(
        a=torch.arange(12.0).reshape(3, 4),
        nested=TensorDict(
            b=torch.arange(3), flags=torch.tensor([True, False, True]), batch_size=[3]
        ),
        text="hello",
        half=torch.ones(3, 2, dtype=torch.bfloat16),
        batch_size=[3],
    )


def _mappings(path: Path) -> list[tuple[int, int]]:
    """The address ranges where this process maps ``path``."""
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == str(path):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                out.append((start, end))
    return out


def test_save_tdz_round_trips(tmp_path):
    td = _td()
    saved = td.save(tmp_path / "x.tdz")
    assert (tmp_path / "x.tdz").is_file()
    assert is_memmap_archive(tmp_path / "x.tdz")
    loaded = TensorDict.load_memmap(tmp_path / "x.tdz")
    for out in (saved, loaded, tensordict.load(tmp_path / "x.tdz")):
        assert out.batch_size == td.batch_size
        assert (out == td).all()
        assert out["text"] == "hello"
        assert out["half"].dtype == torch.bfloat16
    # lock state as saved (unlocked here, as 0.15.3 gives it)
    assert not loaded.is_locked


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")
def test_loaded_leaves_are_views_of_the_archive_mapping(tmp_path):
    path = tmp_path / "x.tdz"
    TensorDict(a=torch.randn(1000, 16), b=torch.arange(1000), batch_size=[1000]).save(
        path
    )
    loaded = TensorDict.load_memmap(path)
    ranges = _mappings(path)
    assert ranges, "the archive is not mapped"
    for key in ("a", "b"):
        ptr = loaded[key].untyped_storage().data_ptr()
        data = loaded[key].data_ptr()
        assert any(start <= ptr and data < end for start, end in ranges), key
    # both leaves share one mapping of the file: no per-leaf copy
    assert (
        loaded["a"].untyped_storage().data_ptr()
        == loaded["b"].untyped_storage().data_ptr()
    )


def test_payloads_are_stored_and_aligned(tmp_path):
    path = tmp_path / "x.tdz"
    _td().save(path)
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
    assert {i.filename for i in infos} >= {
        "meta.json",
        "a.memmap",
        "nested/meta.json",
        "nested/b.memmap",
    }
    for info in infos:
        assert info.compress_type == zipfile.ZIP_STORED
        start = info.header_offset
        n = int.from_bytes(raw[start + 26 : start + 28], "little")
        e = int.from_bytes(raw[start + 28 : start + 30], "little")
        assert (start + 30 + n + e) % 64 == 0, info.filename


def test_archive_flag_and_suffix(tmp_path):
    td = _td()
    td.save(tmp_path / "plain", archive=True)  # no suffix needed
    assert is_memmap_archive(tmp_path / "plain")
    td.save(tmp_path / "folder.tdz", archive=False)  # a folder despite the suffix
    assert (tmp_path / "folder.tdz").is_dir()
    assert not is_memmap_archive(tmp_path / "folder.tdz")
    out = td.memmap(tmp_path / "m.tdz")
    assert is_memmap_archive(tmp_path / "m.tdz") and (out == td).all()
    out = tensordict.save(td, tmp_path / "f.tdz")
    assert is_memmap_archive(tmp_path / "f.tdz") and (out == td).all()
    assert not is_memmap_archive(tmp_path / "missing.tdz")
    (tmp_path / "junk").write_bytes(b"not a zip")
    assert not is_memmap_archive(tmp_path / "junk")


def test_compression(tmp_path):
    td = TensorDict(a=torch.zeros(1000), batch_size=[1000])
    out = td.save(tmp_path / "c.tdz", compression="deflate")
    with zipfile.ZipFile(tmp_path / "c.tdz") as zf:
        kinds = {i.filename: i.compress_type for i in zf.infolist()}
    assert kinds == {"meta.json": zipfile.ZIP_STORED, "a.memmap": zipfile.ZIP_DEFLATED}
    assert (out == td).all()
    assert (TensorDict.load(tmp_path / "c.tdz") == td).all()
    with pytest.raises(
        ValueError, match="compression is only supported when writing a memmap archive"
    ):
        td.save(tmp_path / "folder", compression="deflate")
    with pytest.raises(ValueError, match="not a zip compression"):
        td.save(tmp_path / "d.tdz", compression="snappy")


def test_kinds_round_trip(tmp_path):
    lazy = LazyStackedTensorDict(
        TensorDict(x=torch.zeros(2)),
        TensorDict(x=torch.ones(2), y=torch.ones(1)),
        stack_dim=0,
    )
    lazy.save(tmp_path / "lazy.tdz")
    back = TensorDict.load(tmp_path / "lazy.tdz")
    assert isinstance(back, LazyStackedTensorDict)
    assert (back[1]["y"] == 1).all()
    sample = Sample(obs=torch.ones(4, 3), label="cat", batch_size=[4])
    sample.save(tmp_path / "tc.tdz")
    back = TensorDict.load(tmp_path / "tc.tdz")
    assert isinstance(back, Sample) and back.label == "cat" and (back.obs == 1).all()
    locked = _td().lock_()
    locked.save(tmp_path / "locked.tdz")
    assert TensorDict.load(tmp_path / "locked.tdz").is_locked


def test_subpath_and_load_into(tmp_path):
    _td().save(tmp_path / "x.tdz")
    nested = TensorDict.load_memmap(tmp_path / "x.tdz", subpath="nested")
    assert nested["b"].tolist() == [0, 1, 2]
    target = TensorDict()
    target.load_memmap_(tmp_path / "x.tdz")
    assert target["nested", "b"].tolist() == [0, 1, 2]


def test_a_flipped_byte_is_reported(tmp_path):
    path = tmp_path / "x.tdz"
    TensorDict(a=torch.arange(100.0), batch_size=[100]).save(path)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("a.memmap")
    raw = bytearray(path.read_bytes())
    n = int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
    e = int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
    raw[info.header_offset + 30 + n + e + 17] ^= 0x10
    path.write_bytes(bytes(raw))
    with pytest.raises(SavedDataError, match=r"'a.memmap' fails its CRC-32 check"):
        TensorDict.load_memmap(path, verify=True)
    with pytest.raises(SavedDataError, match=r"'a.memmap' fails its CRC-32 check"):
        tensordict.load_memmap(path, verify=True)
    # a plain load maps the payload unread (as 0.15.3, which checks nothing)
    assert TensorDict.load_memmap(path)["a"][4].item() != 4.0
    with pytest.raises(SavedDataError, match="damaged"):
        unpack_memmap(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # damaged metadata too
    raw = bytearray(path.read_bytes())
    raw[30 + len("meta.json") + 64] ^= 0x01  # inside the first member (meta.json)
    path.write_bytes(bytes(raw))
    with pytest.raises(SavedDataError, match="CRC-32|damaged|JSON"):
        TensorDict.load_memmap(path)


def test_truncated_archive_is_reported(tmp_path):
    path = tmp_path / "x.tdz"
    TensorDict(a=torch.arange(100.0), batch_size=[100]).save(path)
    path.write_bytes(path.read_bytes()[:200])
    assert not is_memmap_archive(path)
    with pytest.raises((SavedDataError, FileNotFoundError, ValueError)):
        TensorDict.load_memmap(path)


def test_crash_while_writing_leaves_the_old_archive(tmp_path, monkeypatch):
    path = tmp_path / "x.tdz"
    TensorDict(a=torch.zeros(10), batch_size=[10]).save(path)
    before = path.read_bytes()
    from tensordict import _archive

    calls = []

    def failing_chunks(tensor, nbytes):
        calls.append(1)
        yield b"\x00" * 8
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(_archive, "tensor_chunks", failing_chunks)
    with pytest.raises(OSError, match="simulated"):
        TensorDict(a=torch.ones(10), batch_size=[10]).save(path)
    assert calls
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.tdz"]  # no partial file


def test_refuses_to_replace_what_is_not_an_archive(tmp_path):
    other = tmp_path / "notes.tdz"
    other.write_text("keep me")
    with pytest.raises(RuntimeError, match="not a tensordict archive"):
        _td().save(other)
    assert other.read_text() == "keep me"
    _td().save(tmp_path / "x.tdz")
    with pytest.raises(RuntimeError, match="existsok"):
        _td().save(tmp_path / "x.tdz", existsok=False)


def test_pickled_values_need_allow_pickle(tmp_path):
    td = TensorDict(a=torch.zeros(2), obj={1, 2}, batch_size=[2])
    with pytest.warns(UserWarning, match="pickle"):
        td.save(tmp_path / "p.tdz")
    with pytest.raises(SavedDataError, match="allow_pickle=True"):
        TensorDict.load(tmp_path / "p.tdz")
    assert TensorDict.load(tmp_path / "p.tdz", allow_pickle=True)["obj"] == {1, 2}


def test_pack_unpack_round_trip(tmp_path):
    td = _td()
    td.memmap(tmp_path / "folder")
    archive = pack_memmap(tmp_path / "folder", tmp_path / "packed.tdz")
    assert archive == tmp_path / "packed.tdz" and is_memmap_archive(archive)
    assert (TensorDict.load(archive) == td).all()
    folder = unpack_memmap(archive, tmp_path / "again")
    assert folder == tmp_path / "again"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        p.name for p in (tmp_path / "folder").iterdir()
    )
    assert (TensorDict.load(folder) == td).all()
    with pytest.raises(ValueError, match="not a tensordict archive"):
        unpack_memmap(tmp_path / "folder", tmp_path / "x")
    with pytest.raises(ValueError, match="outside"):
        pack_memmap(tmp_path / "folder", tmp_path / "folder" / "in.tdz")


def test_python_zipfile_and_unzip_read_it(tmp_path):
    path = tmp_path / "x.tdz"
    _td().save(path)
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert torch.frombuffer(
            bytearray(zf.read("a.memmap")), dtype=torch.float32
        ).tolist() == list(map(float, range(12)))
    if shutil.which("unzip") is None:
        pytest.skip("unzip is not installed")
    result = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    subprocess.run(
        ["unzip", "-q", str(path), "-d", str(tmp_path / "unzipped")], check=True
    )
    assert (TensorDict.load(tmp_path / "unzipped") == _td()).all()


def test_r_plus_writes_into_the_archive_then_refresh(tmp_path):
    path = tmp_path / "x.tdz"
    TensorDict(a=torch.zeros(4), batch_size=[4]).save(path)
    copy_on_write = TensorDict.load(path)
    copy_on_write["a"] += 5  # not written to the file
    assert TensorDict.load(path)["a"].tolist() == [0.0] * 4
    shared = TensorDict.load(path, mode="r+")
    shared["a"] += 1
    del shared
    assert (
        TensorDict.load(path)["a"].tolist() == [1.0] * 4
    )  # marked: payload not checked
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() == "a.memmap"
    assert refresh_archive_checksums(path) == path
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
    assert TensorDict.load(path)["a"].tolist() == [1.0] * 4


def test_memmap_like_archive_is_writable(tmp_path):
    td = TensorDict(a=torch.ones(5, 2), batch_size=[5])
    buffer = td.memmap_like(tmp_path / "buf.tdz")
    assert (buffer["a"] == 0).all()
    buffer[2] = TensorDict(a=torch.full((2,), 3.0))
    assert TensorDict.load(tmp_path / "buf.tdz")["a"][2].tolist() == [3.0, 3.0]


def test_append_memmap(tmp_path):
    td = TensorDict(
        a=torch.arange(6.0).reshape(3, 2),
        nested=TensorDict(c=torch.ones(3), batch_size=[3]),
        s="same",
        batch_size=[3],
    )
    td.memmap(tmp_path / "d")
    rows = TensorDict(
        a=torch.full((2, 2), 9.0),
        nested=TensorDict(c=torch.zeros(2), batch_size=[2]),
        s="same",
        batch_size=[2],
    )
    assert append_memmap(tmp_path / "d", rows) is None
    out = TensorDict.load(tmp_path / "d")
    assert out.batch_size == torch.Size([5])
    assert out["a"][3:].tolist() == [[9.0, 9.0]] * 2
    assert out["nested", "c"].tolist() == [1, 1, 1, 0, 0]
    sizes = {p: p.stat().st_size for p in (tmp_path / "d").rglob("*.memmap")}
    bad = [
        TensorDict(a=torch.ones(2, 3), nested=rows["nested"], s="same", batch_size=[2]),
        TensorDict(a=torch.ones(2, 2), batch_size=[2]),
        TensorDict(
            a=torch.ones(2, 2, dtype=torch.int64),
            nested=rows["nested"],
            s="same",
            batch_size=[2],
        ),
        TensorDict(
            a=torch.ones(2, 2), nested=rows["nested"], s="other", batch_size=[2]
        ),
    ]
    for rows_bad in bad:
        with pytest.raises(ValueError, match="Cannot append rows"):
            append_memmap(tmp_path / "d", rows_bad)
    # nothing was written by the refused appends
    assert {p: p.stat().st_size for p in (tmp_path / "d").rglob("*.memmap")} == sizes
    assert TensorDict.load(tmp_path / "d").batch_size == torch.Size([5])
    td.save(tmp_path / "x.tdz")
    with pytest.raises(ValueError, match="An archive cannot grow"):
        append_memmap(tmp_path / "x.tdz", rows)


def test_nothing_is_unpickled_unless_asked(tmp_path, monkeypatch):
    import pickle

    td = TensorDict(a=torch.zeros(2), obj=frozenset({3}), batch_size=[2])
    with pytest.warns(UserWarning):
        td.save(tmp_path / "p.tdz")

    def no_unpickling(*args, **kwargs):
        raise AssertionError("unpickled without allow_pickle")

    monkeypatch.setattr(pickle, "loads", no_unpickling)
    with pytest.raises(SavedDataError):
        TensorDict.load(tmp_path / "p.tdz")
    # the save itself gives the value back without unpickling it
    assert td.save(tmp_path / "q.tdz")["obj"] == frozenset({3})


def _foreign_zip(folder: Path, path: Path) -> Path:
    """The files of ``folder`` zipped by Python's zipfile (no alignment)."""
    with zipfile.ZipFile(path, "w") as zf:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                zf.write(file, file.relative_to(folder).as_posix())
    return path


def test_a_zip_made_by_another_tool_loads_by_copy(tmp_path):
    td = _td()
    td.memmap(tmp_path / "plain")
    foreign = _foreign_zip(tmp_path / "plain", tmp_path / "foreign.zip")
    assert is_memmap_archive(foreign)
    assert (TensorDict.load_memmap(foreign) == td).all()
    with pytest.raises(RuntimeError, match="is not aligned"):
        TensorDict.load_memmap(foreign, mode="r+")
    with zipfile.ZipFile(foreign) as zf:
        assert zf.comment == b""  # nothing was marked


def test_mode_r_plus_refuses_compressed_payloads(tmp_path):
    path = tmp_path / "c.tdz"
    _td().save(path, compression="deflate")
    with pytest.raises(RuntimeError, match="is compressed"):
        TensorDict.load_memmap(path, mode="r+")
    with pytest.raises(ValueError, match="mode must be"):
        TensorDict.load_memmap(path, mode="w")


def test_meta_device_reads_no_payload(tmp_path, monkeypatch):
    path = tmp_path / "x.tdz"
    _td().save(path, compression="deflate")
    from tensordict import _archive

    def no_reading(*args, **kwargs):
        raise AssertionError("a payload was read for a meta load")

    monkeypatch.setattr(_archive._ArchiveReader, "_inflate", no_reading)
    monkeypatch.setattr(_archive._ArchiveReader, "prefetch_compressed", no_reading)
    meta = TensorDict.load_memmap(path, device="meta", num_threads=4)
    assert meta["a"].device.type == "meta" and meta["a"].shape == (3, 4)
    assert meta["nested", "b"].dtype == torch.int64


def test_compressed_payloads_load_with_threads(tmp_path):
    td = TensorDict(
        a=torch.randn(100, 10),
        b=TensorDict({f"t{i}": torch.randn(100) for i in range(8)}, batch_size=[100]),
        batch_size=[100],
    )
    td.save(tmp_path / "c.tdz", compression="deflate")
    assert (TensorDict.load_memmap(tmp_path / "c.tdz", num_threads=4) == td).all()
    part = TensorDict.load_memmap(tmp_path / "c.tdz", subpath="b", num_threads=4)
    assert (part == td["b"]).all()


@pytest.mark.parametrize("archive", [True, False])
def test_subpath_forms(tmp_path, archive):
    td = tensordict.lazy_stack(
        [
            TensorDict(
                x=torch.full((2,), float(i)),
                sub=TensorDict(y=torch.ones(2) * i, batch_size=[2]),
                batch_size=[2],
            )
            for i in range(3)
        ]
    )
    prefix = tmp_path / ("saved.tdz" if archive else "saved")
    td.save(prefix)
    for subpath in ("1/sub", ("1", "sub"), ("1", ("sub",))):
        assert (TensorDict.load_memmap(prefix, subpath=subpath)["y"] == 1).all()
    for error in (ValueError, KeyError):
        with pytest.raises(error, match="No tensordict found under subpath"):
            TensorDict.load_memmap(prefix, subpath="does/not/exist")


def test_views_are_resolved_and_bad_files_named(tmp_path):
    conj = torch.tensor([1 + 2j, 3 + 4j]).conj()
    loaded = TensorDict(x=conj).save(tmp_path / "c.tdz")
    assert torch.equal(loaded["x"], conj.resolve_conj())
    neg = torch.tensor([1.0, 2.0])._neg_view()
    loaded = TensorDict(x=neg).save(tmp_path / "n.tdz")
    assert loaded["x"].tolist() == [-1.0, -2.0]
    bad = tmp_path / "bad.tdz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="not a memory-mapped tensordict"):
        TensorDict.load_memmap(bad)


def test_memmap_like_archive_refuses_return_early(tmp_path):
    td = TensorDict(a=torch.randn(3))
    td.memmap_like(tmp_path / "buf.tdz")
    with pytest.raises(RuntimeError, match="already exists"):
        td.memmap_like(tmp_path / "buf.tdz", existsok=False)
    with pytest.raises(NotImplementedError, match="return_early"):
        td.memmap_like(tmp_path / "buf.tdz", num_threads=2, return_early=True)
