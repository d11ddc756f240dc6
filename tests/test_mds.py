"""TensorDict.to_mds (tensordict/_mds.py). mosaicml-streaming cannot be installed
beside this project's torch and numpy (docs/compatibility.md), so these tests pass the
``writer`` argument 0.15.3's signature has: an object with MDSWriter's interface that
records the samples. With the library installed, the last test writes a real dataset."""

import importlib.util
import sys

import numpy as np
import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict


class _Writer:
    """What to_mds uses of streaming.MDSWriter: write, a context manager that finishes
    it, and (optionally) its column names."""

    def __init__(self, column_names=None, **config):
        self.samples = []
        self.finished = 0
        self.config = config
        if column_names is not None:
            self.column_names = column_names

    def write(self, sample):
        assert not self.finished, "written after finish"
        self.samples.append(sample)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finished += 1


def _rows():
    td = TensorDict(
        a=torch.arange(3),
        x=torch.arange(6.0).reshape(3, 2),
        r=torch.tensor([0.5, 1.5, 2.5]),
        batch_size=[3],
    )
    td["name"] = ["p", "q", "r"]
    return td


def test_one_sample_per_row_finished():
    writer = _Writer()
    _rows().to_mds(out="unused", writer=writer, finish_writer=True)
    assert writer.finished == 1
    assert len(writer.samples) == 3
    first = writer.samples[1]
    assert first["a"] == 1 and isinstance(first["a"], int)
    assert first["r"] == 1.5 and isinstance(first["r"], float)
    assert isinstance(first["x"], np.ndarray) and first["x"].tolist() == [2.0, 3.0]
    assert first["name"] == "q"


def test_finish_writer_defaults():
    writer = _Writer()
    with pytest.warns(FutureWarning, match="finish_writer"):
        _rows().to_mds(out="unused", writer=writer)
    assert writer.finished == 1
    open_writer = _Writer()
    _rows()[0].to_mds(out="unused", writer=open_writer)  # no batch dims: left open
    _rows()[1].to_mds(out="unused", writer=open_writer, finish_writer=False)
    assert open_writer.finished == 0 and len(open_writer.samples) == 2


def test_writer_columns_select_the_entries():
    writer = _Writer(column_names=["a", "name"])
    _rows().to_mds(out="unused", writer=writer, finish_writer=True)
    assert set(writer.samples[0]) == {"a", "name"}


def test_lazy_stack_of_different_shapes():
    lazy = LazyStackedTensorDict(
        TensorDict(a=0, c=torch.zeros(2)), TensorDict(a=1, c=torch.zeros(3))
    )
    writer = _Writer()
    lazy.to_mds(out="unused", writer=writer, finish_writer=True)
    assert [s["c"].shape for s in writer.samples] == [(2,), (3,)]


def test_errors(monkeypatch):
    with pytest.raises(ValueError, match="empty"):
        TensorDict(a=torch.zeros(0), batch_size=[0]).to_mds(out="x", writer=_Writer())
    monkeypatch.setitem(sys.modules, "streaming", None)
    with pytest.raises(ImportError, match="mosaicml-streaming"):
        _rows().to_mds(out="x")
    nested = TensorDict(n=TensorDict(a=torch.zeros(2), batch_size=[2]), batch_size=[2])
    from tensordict import _mds

    monkeypatch.setattr(_mds, "_mds_writer_class", lambda: _Writer)
    with pytest.raises(ValueError, match="flatten_keys"):
        nested.to_mds(out="x")


def test_inferred_columns_reach_the_writer(monkeypatch):
    from tensordict import _mds

    made = []

    def writer_class():
        def make(**config):
            made.append(_Writer(**config))
            return made[-1]

        return make

    monkeypatch.setattr(_mds, "_mds_writer_class", writer_class)
    _rows().to_mds(out="folder", size_limit=None)
    (writer,) = made
    assert writer.config["columns"] == {
        "a": "int",
        "x": "ndarray",
        "r": "float32",
        "name": "str",
    }
    assert writer.config["out"] == "folder" and writer.config["size_limit"] is None
    assert writer.finished == 1 and len(writer.samples) == 3


@pytest.mark.skipif(
    importlib.util.find_spec("streaming") is None, reason="mosaicml-streaming missing"
)
def test_real_dataset(tmp_path):
    from streaming import StreamingDataset

    _rows().to_mds(out=str(tmp_path))
    dataset = StreamingDataset(local=str(tmp_path), remote=None, batch_size=1)
    assert dataset[2]["name"] == "r"
