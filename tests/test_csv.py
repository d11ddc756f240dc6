"""TensorDict.to_csv / TensorDict.from_csv / tensordict.from_csv (_interchange.py)."""

import sys

import pytest
import torch

import tensordict
from tensordict import NonTensorStack, TensorDict

pd = pytest.importorskip("pandas")


def _rows():
    td = TensorDict(
        step=torch.arange(4),
        reward=torch.tensor([0.5, -1.0, 2.25, 0.0]),
        obs=TensorDict(
            done=torch.tensor([False, False, True, False]),
            x=torch.tensor([1.0, 2.0, 3.0, 4.0]),
            batch_size=[4],
        ),
        batch_size=[4],
    )
    td["name"] = ["a", "b", "c", "d"]
    return td


def test_header_names_nested_keys_with_the_separator(tmp_path):
    path = tmp_path / "rows.csv"
    _rows().to_csv(path, separator=".")
    lines = path.read_text().splitlines()
    assert lines[0] == "step,reward,obs.done,obs.x,name"
    assert lines[1] == "0,0.5,False,1.0,a"
    assert len(lines) == 5  # a header and one line per row, no index column


def test_round_trip(tmp_path):
    td = _rows()
    path = tmp_path / "rows.csv"
    td.to_csv(path, separator=".")
    for back in (
        TensorDict.from_csv(path, separator="."),
        tensordict.from_csv(path, separator="."),
    ):
        assert back.batch_size == torch.Size([4])
        assert torch.equal(back["step"], td["step"])
        assert torch.allclose(back["reward"].float(), td["reward"])
        assert torch.equal(back["obs", "done"], td["obs", "done"])
        assert isinstance(back.get("name"), NonTensorStack)
        assert back.get("name").tolist() == ["a", "b", "c", "d"]
    cast = tensordict.from_csv(path, separator=".", dtype=torch.float32)
    assert cast["reward"].dtype == torch.float32
    flat = tensordict.from_csv(path)
    assert "obs.x" in flat.keys()


def test_nested_needs_a_separator_and_features_are_refused(tmp_path):
    with pytest.raises(ValueError, match="separator"):
        _rows().to_csv(tmp_path / "x.csv")
    wide = TensorDict(a=torch.zeros(3, 2), batch_size=[3])
    with pytest.raises(ValueError, match="'a'"):
        wide.to_csv(tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


def test_kwargs_reach_pandas(tmp_path):
    path = tmp_path / "rows.tsv"
    TensorDict(a=torch.arange(2), batch_size=[2]).to_csv(path, sep="\t")
    assert path.read_text().splitlines()[0] == "a"
    back = tensordict.from_csv(path, sep="\t", batch_size=[2], device="cpu")
    assert back["a"].tolist() == [0, 1] and back.device == torch.device("cpu")


def test_read_through_pyarrow_without_pandas(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    path = tmp_path / "rows.csv"
    _rows().to_csv(path, separator=".")
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    back = tensordict.from_csv(path, separator=".")
    assert back["step"].tolist() == [0, 1, 2, 3]
    assert back["obs", "done"].tolist() == [False, False, True, False]
    assert back.get("name").tolist() == ["a", "b", "c", "d"]


def test_every_kind_writes_csv(tmp_path):
    td = TensorDict(a=torch.arange(4), batch_size=[4])
    lazy = TensorDict.lazy_stack([td[0], td[1]])
    lazy.to_csv(tmp_path / "lazy.csv")
    assert tensordict.from_csv(tmp_path / "lazy.csv")["a"].tolist() == [0, 1]
    td[1:3].to_csv(tmp_path / "view.csv")
    assert tensordict.from_csv(tmp_path / "view.csv")["a"].tolist() == [1, 2]


def test_tensorclass_from_csv_gives_the_class(tmp_path):
    from tensordict import tensorclass

    @tensorclass
    class Row:
        x: torch.Tensor
        y: torch.Tensor

    rows = Row(x=torch.arange(3), y=torch.tensor([0.5, 1.0, 1.5]), batch_size=[3])
    rows.to_csv(tmp_path / "r.csv")
    back = Row.from_csv(tmp_path / "r.csv")
    assert type(back) is Row and back.x.tolist() == [0, 1, 2]


def test_conflicting_batch_arguments(tmp_path):
    path = tmp_path / "c.csv"
    TensorDict(a=torch.arange(2), batch_size=[2]).to_csv(path)
    with pytest.raises(TypeError, match="Conflicting batch sizes"):
        tensordict.from_csv(path, auto_batch_size=True, batch_size=[2])


def test_feature_dims_error_leads_with_0153s_phrase(tmp_path):
    with pytest.raises(ValueError, match="Cannot convert tensor at key 'm'"):
        TensorDict(m=torch.ones(3, 4), batch_size=[3]).to_csv(tmp_path / "m.csv")


def test_categorical_columns_are_their_codes():
    frame = pd.DataFrame({"cat": pd.Categorical(["a", "b", "a", "c"])})
    td = tensordict.from_pandas(frame)
    assert td["cat"].tolist() == [0, 1, 0, 2]
    assert not td["cat"].is_floating_point()
