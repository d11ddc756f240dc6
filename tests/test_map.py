"""``map`` / ``map_iter``: results equal ``fn`` applied chunk by chunk by hand, and a
failing worker (an exception, a kill) leaves no process and no temporary folder behind.

Two workers and small data throughout; the pools start under ``fork`` where the platform
has it (one test under ``spawn``), so the file runs in seconds.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import textwrap
import subprocess
import time
from pathlib import Path

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass
from tensordict import _map

FORK = "fork" in torch.multiprocessing.get_all_start_methods()
START = "fork" if FORK else None


@tensorclass
class Pair:
    x: torch.Tensor
    y: torch.Tensor


def double(td):
    return td.empty().set("y", td["x"] * 2)


def add_one_inplace(td):
    td.set_("x", td["x"] + 1)


def row_sums(td):
    return td["x"].sum(-1)


def first_row(td):
    return td[:1]


def pair_double(p):
    return Pair(x=p.x * 2, y=p.y + 1, batch_size=p.batch_size)


def raise_on_seven(td):
    if (td["x"] == 7).any():
        raise KeyError("chunk with a seven")
    return td.empty().set("y", td["x"])


def record_pid_then_die(td):
    Path(os.environ["TD_MAP_PIDS"], str(os.getpid())).touch()
    if (td["x"] == 0).any():
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.2)
    return td.empty().set("y", td["x"])


def record_pid_then_raise(td):
    Path(os.environ["TD_MAP_PIDS"], str(os.getpid())).touch()
    raise ValueError("no")


def _data(n=10, width=3):
    return TensorDict(
        x=torch.arange(n * width, dtype=torch.float32).view(n, width),
        nested=TensorDict(z=torch.arange(n, dtype=torch.int64), batch_size=[n]),
        batch_size=[n],
    )


def _by_hand(fn, td, chunks, dim=0, join=torch.cat):
    return join([fn(c) for c in td.split(chunks, dim)] if join is torch.cat
                else [fn(c) for c in td.unbind(dim)], dim)


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    """The folder map puts its output in, watched: it must be empty afterwards."""
    made = []
    root = tmp_path / "scratch"
    root.mkdir()
    monkeypatch.setattr(_map, "_scratch_root", lambda: str(root))
    real = tempfile.mkdtemp

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(_map.tempfile, "mkdtemp", spy)
    yield made
    assert list(root.iterdir()) == [], "map left a temporary folder behind"


def _children() -> set[int]:
    """The live child processes of this process (Linux: read from /proc)."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").exists() and " Z " in Path(f"/proc/{pid}/stat").read_text()


# ---------------------------------------------------------------------------- results


@pytest.mark.parametrize("chunksize", [None, 3])
def test_map_equals_fn_by_hand(chunksize, scratch):
    td = _data()
    result = td.map(double, num_workers=2, chunksize=chunksize, mp_start_method=START)
    sizes = chunksize or 5
    expected = _by_hand(double, td, sizes)
    assert isinstance(result, TensorDict) and result.batch_size == td.batch_size
    assert (result == expected).all()
    assert not result.is_memmap()
    if chunksize == 3:  # 4 chunks, 4 queued at once: the output was allocated...
        assert len(scratch) <= 1
    # the source is untouched
    assert (td == _data()).all()


def test_map_many_chunks_writes_into_one_output(scratch):
    td = _data(n=40)
    result = td.map(double, num_workers=2, chunksize=2, mp_start_method=START)
    assert len(scratch) == 1  # one memory-mapped output, removed before map returned
    assert (result["y"] == td["x"] * 2).all()


def test_map_dim1_and_num_chunks(scratch):
    td = TensorDict(x=torch.arange(40.0).view(4, 10), batch_size=[4, 10])
    result = td.map(double, dim=1, num_workers=2, num_chunks=4, mp_start_method=START)
    assert result.batch_size == (4, 10)
    assert torch.equal(result["y"], td["x"] * 2)
    result = td.map(double, dim=-1, num_workers=2, chunksize=1, mp_start_method=START)
    assert torch.equal(result["y"], td["x"] * 2)


def test_map_chunksize_zero_stacks(scratch):
    td = _data(n=6)
    result = td.map(row_sums, num_workers=2, chunksize=0, mp_start_method=START)
    assert torch.equal(result, td["x"].sum(-1))
    result = td.map(double, num_workers=2, chunksize=0, mp_start_method=START)
    assert result.batch_size == (6,) and torch.equal(result["y"], td["x"] * 2)


def test_map_results_of_other_sizes_are_concatenated(scratch):
    td = _data(n=10)
    result = td.map(first_row, num_workers=2, chunksize=3, mp_start_method=START)
    assert result.batch_size == (4,)
    assert torch.equal(result["x"], td["x"][[0, 3, 6, 9]])


def test_map_in_place_fn_returns_none_and_writes_through(tmp_path, scratch):
    td = _data()
    assert td.map(add_one_inplace, num_workers=2, mp_start_method=START) is None
    assert torch.equal(td["x"], _data()["x"] + 1)
    mm = _data().memmap_(tmp_path / "data")
    assert mm.map(add_one_inplace, num_workers=2, chunksize=3, mp_start_method=START) is None
    assert torch.equal(TensorDict.load_memmap(tmp_path / "data")["x"], _data()["x"] + 1)


@pytest.mark.parametrize("kind", ["plain", "shared", "memmap"])
def test_map_out(kind, tmp_path, scratch):
    td = _data()
    out = TensorDict(y=torch.zeros(10, 3), batch_size=[10])
    if kind == "shared":
        out.share_memory_()
    elif kind == "memmap":
        out = out.memmap_(tmp_path / "out")
    result = td.map(double, num_workers=2, chunksize=3, out=out, mp_start_method=START)
    assert result is out
    assert torch.equal(out["y"], td["x"] * 2)
    assert scratch == []  # out= given: no temporary output


def test_map_out_that_does_not_fit_names_the_chunk(scratch):
    out = TensorDict(y=torch.zeros(10, 4), batch_size=[10])
    # chunks finish in any order: whichever reaches the parent first is named
    with pytest.raises(ValueError, match=r"chunk \d+ does not fit out: key 'y': expected shape \(5, 4\)"):
        _data().map(double, num_workers=2, out=out, mp_start_method=START)


def test_map_lazy_stack_and_tensorclass(scratch):
    members = [TensorDict(x=torch.full((3,), float(i))) for i in range(6)]
    lazy = LazyStackedTensorDict(*members, stack_dim=0)
    result = lazy.map(double, num_workers=2, chunksize=2, mp_start_method=START)
    assert torch.equal(result["y"], torch.stack([m["x"] for m in members]) * 2)
    pairs = Pair(x=torch.arange(8.0), y=torch.zeros(8), batch_size=[8])
    result = pairs.map(pair_double, num_workers=2, chunksize=3, mp_start_method=START)
    assert isinstance(result, Pair)
    assert torch.equal(result.x, pairs.x * 2) and torch.equal(result.y, pairs.y + 1)


def test_map_lambda_under_fork(scratch):
    if not FORK:
        pytest.skip("fork is needed for an unpicklable fn")
    result = _data().map(lambda td: td["x"] + 1, num_workers=2, mp_start_method="fork")
    assert torch.equal(result, _data()["x"] + 1)


def test_map_spawn(scratch):
    td = _data()
    result = td.map(double, num_workers=2, chunksize=4, mp_start_method="spawn")
    assert torch.equal(result["y"], td["x"] * 2)


def test_map_with_a_callers_pool(scratch):
    ctx = torch.multiprocessing.get_context(START)
    with ctx.Pool(2) as pool:
        result = _data().map(double, chunksize=3, pool=pool)
    assert torch.equal(result["y"], _data()["x"] * 2)


def test_map_iter_in_order_and_shuffled(scratch):
    td = _data()
    got = list(td.map_iter(double, num_workers=2, chunksize=3, mp_start_method=START))
    assert [r.batch_size[0] for r in got] == [3, 3, 3, 1]
    assert torch.equal(torch.cat([r["y"] for r in got]), td["x"] * 2)
    got = list(td.map_iter(double, num_workers=2, chunksize=3, shuffle=True,
                           generator=torch.Generator().manual_seed(0),
                           mp_start_method=START))
    values = torch.cat([r["y"] for r in got]).flatten().sort().values
    assert torch.equal(values, (td["x"] * 2).flatten().sort().values)
    with pytest.raises(RuntimeError, match="index_with_generator"):
        td.map_iter(double, shuffle=True, index_with_generator=False)


def test_map_iter_closed_early_stops_the_workers(scratch):
    before = _children()
    iterator = _data(n=40).map_iter(double, num_workers=2, chunksize=1,
                                    mp_start_method=START)
    next(iterator)
    iterator.close()
    assert _children() - before == set()


def test_map_pbar_without_tqdm_writes_a_line(capsys, monkeypatch, scratch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    _data().map(double, num_workers=2, chunksize=5, pbar=True, mp_start_method=START)
    assert "map: 2/2 chunks" in capsys.readouterr().err


def test_map_argument_errors():
    with pytest.raises(ValueError, match="exclusive"):
        _data().map(double, chunksize=2, num_chunks=2)
    with pytest.raises(ValueError, match="dim=2 is out of range"):
        _data().map(double, dim=2)


# ---------------------------------------------------------------------------- failures


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_raising_worker_surfaces_its_error_and_leaves_nothing(monkeypatch, tmp_path,
                                                                scratch):
    before = _children()
    with pytest.raises(KeyError, match="chunk with a seven") as info:
        _data().map(raise_on_seven, num_workers=2, chunksize=2, mp_start_method=START)
    # the worker's traceback comes with it, naming the function that raised
    assert "raise_on_seven" in str(info.value.__cause__)
    assert _children() - before == set()
    monkeypatch.setenv("TD_MAP_PIDS", str(tmp_path))
    with pytest.raises(ValueError, match="no"):
        _data().map(record_pid_then_raise, num_workers=2, mp_start_method=START)
    pids = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
    assert pids and all(_gone(pid) for pid in pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_worker_gives_a_clear_error_and_no_orphan(monkeypatch, tmp_path, scratch):
    monkeypatch.setenv("TD_MAP_PIDS", str(tmp_path))
    before = _children()
    with pytest.raises(RuntimeError, match="worker process died.*SIGKILL"):
        _data(n=20).map(record_pid_then_die, num_workers=2, chunksize=2,
                        mp_start_method=START)
    pids = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
    assert len(pids) >= 1 and all(_gone(pid) for pid in pids)
    assert _children() - before == set()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_worker_of_a_callers_pool_is_noticed(monkeypatch, tmp_path, scratch):
    monkeypatch.setenv("TD_MAP_PIDS", str(tmp_path))
    ctx = torch.multiprocessing.get_context(START)
    with ctx.Pool(2) as pool:
        with pytest.raises(RuntimeError, match="worker process of the pool died"):
            _data(n=20).map(record_pid_then_die, chunksize=2, pool=pool)


@pytest.mark.skipif(not FORK or not sys.platform.startswith("linux"),
                    reason="sends SIGINT to a script; reads /proc")
def test_ctrl_c_stops_the_pool(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys, time, torch
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from tensordict import TensorDict

        # a plain interpreter's Ctrl-C, whatever the test runner's process (whose
        # signal mask and handlers a child inherits) had set
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {{signal.SIGINT}})
        signal.signal(signal.SIGINT, signal.default_int_handler)

        def slow(td):
            open(os.path.join({str(tmp_path)!r}, str(os.getpid())), "w").close()
            time.sleep(60)

        if __name__ == "__main__":
            td = TensorDict(x=torch.zeros(4), batch_size=[4])
            try:
                td.map(slow, num_workers=2, mp_start_method="fork")
            except KeyboardInterrupt:
                print("interrupted", flush=True)
    """))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 120
    while len([p for p in tmp_path.iterdir() if p.name.isdigit()]) < 2:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert "interrupted" in out and process.returncode == 0
    pids = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
    assert all(_gone(pid) for pid in pids)
