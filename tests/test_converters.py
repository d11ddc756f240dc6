"""Converters to and from other containers, tables and files (docs/ecosystem.md,
"Converters"): each one round-trips, and a missing optional package is an ImportError
naming the extra that installs it."""

from __future__ import annotations

import collections
import dataclasses
import io
import json
import sys

import numpy as np
import pytest
import torch

import tensordict
from tensordict import LazyStackedTensorDict, TensorDict, tensorclass


def _table_td():
    return TensorDict(
        a=torch.arange(3.0),
        flag=torch.tensor([True, False, True]),
        nested={"c": torch.arange(3), "d": torch.arange(6.0).reshape(3, 2)},
        text="hi",
        batch_size=[3],
    )


# ----------------------------------------------------------------- namedtuple / tuple


def test_namedtuple_round_trip():
    td = TensorDict(
        a=torch.arange(6.0).reshape(3, 2), b={"c": torch.arange(3)}, batch_size=[3]
    )
    nt = td.to_namedtuple()
    assert type(nt).__name__ == "GenericDict" and nt._fields == ("a", "b")
    assert torch.equal(nt.b.c, torch.arange(3))
    back = TensorDict.from_namedtuple(nt, auto_batch_size=True)
    assert back.batch_size == (3,)
    assert (back == td).all()
    assert tensordict.from_namedtuple(nt).batch_size == ()
    assert tensordict.from_namedtuple(nt, batch_dims=1)["b"].batch_size == (3,)


def test_to_namedtuple_dest_cls():
    Point = collections.namedtuple("Point", ["x", "y"])
    p = TensorDict(x=torch.zeros(2), y=torch.ones(2)).to_namedtuple(Point)
    assert type(p) is Point and torch.equal(p.y, torch.ones(2))


def test_from_tuple_keys_and_nesting():
    td = tensordict.from_tuple(
        (
            torch.zeros(3),
            torch.ones(3, 2),
            (torch.full((3,), 2.0), {"k": torch.ones(3)}),
        )
    )
    assert set(td.keys()) == {"0", "1", "2"}
    assert torch.equal(td["2", "0"], torch.full((3,), 2.0))
    assert torch.equal(td["2", "1", "k"], torch.ones(3))
    assert td.batch_size == ()
    auto = TensorDict.from_tuple(
        (torch.zeros(3), torch.ones(3, 2)), auto_batch_size=True
    )
    assert auto.batch_size == (3,)
    # the round trip: the values in key order give the tuple back
    assert all(
        torch.equal(x, y)
        for x, y in zip(auto.values(), (torch.zeros(3), torch.ones(3, 2)))
    )


# ------------------------------------------------------------------ structured arrays


def test_struct_array_round_trip():
    td = TensorDict(
        a=torch.arange(6.0).reshape(3, 2), b={"c": torch.arange(3)}, batch_size=[3]
    )
    arr = td.to_struct_array()
    assert arr.shape == (3,)
    assert arr.dtype.names == ("a", "b")
    assert arr.dtype["a"].shape == (2,) and arr.dtype["b"].names == ("c",)
    np.testing.assert_array_equal(arr["a"], td["a"].numpy())
    back = TensorDict.from_struct_array(arr)
    assert back.batch_size == (3,) and back["b"].batch_size == (3,)
    assert (back == td).all()


def test_struct_array_strings_and_shapes():
    x = np.array(
        [("Rex", 9, 81.0), ("Fido", 3, 27.0)],
        dtype=[("name", "U10"), ("age", "i4"), ("weight", "f4")],
    )
    td = tensordict.from_struct_array(x)
    assert td.batch_size == (2,)
    assert td["age"].dtype == torch.int32
    assert list(td["name"]) == ["Rex", "Fido"]
    again = td.to_struct_array()
    assert again.tolist() == x.tolist()
    # a repeated string is a field too
    assert TensorDict(a=torch.zeros(2), s="hi", batch_size=[2]).to_struct_array()[
        "s"
    ].tolist() == ["hi", "hi"]
    grid = np.zeros((2, 3), dtype=[("a", "f4", (4,))])
    assert tensordict.from_struct_array(grid).batch_size == (2, 3)
    assert tensordict.from_struct_array(grid, batch_size=[2]).batch_size == (2,)
    assert tensordict.from_struct_array(grid, auto_batch_size=True).batch_size == (
        2,
        3,
        4,
    )


def test_struct_array_refuses_bfloat16():
    td = TensorDict(a=torch.zeros(3, dtype=torch.bfloat16), batch_size=[3])
    with pytest.raises(TypeError, match="'a'.*bfloat16"):
        td.to_struct_array()


# ---------------------------------------------------------------------- dataclasses


@dataclasses.dataclass
class _Inner:
    z: torch.Tensor


@dataclasses.dataclass
class _Sample:
    x: torch.Tensor
    inner: _Inner


def test_from_dataclass_tensordict_and_tensorclass():
    obj = _Sample(torch.zeros(3, 2), _Inner(torch.ones(3)))
    td = TensorDict.from_dataclass(obj, auto_batch_size=True)
    assert type(td) is TensorDict and td.batch_size == (3,)
    assert torch.equal(td["inner", "z"], torch.ones(3))
    tc = TensorDict.from_dataclass(obj, as_tensorclass=True, batch_size=[3])
    assert tensordict.is_tensorclass(tc) and type(tc).__name__ == "_Sample_tc"
    assert tc.batch_size == (3,)
    # back to the dataclass: the fields hold the same tensors
    again = _Sample(x=td["x"], inner=_Inner(**td["inner"].to_dict()))
    assert torch.equal(again.x, obj.x) and torch.equal(again.inner.z, obj.inner.z)
    with pytest.raises(TypeError, match="dataclass instance"):
        TensorDict.from_dataclass(_Sample)


# --------------------------------------------------------------------------- from_any


def test_from_any_dispatches_on_what_it_gets():
    td = TensorDict(a=torch.zeros(3))
    assert tensordict.from_any(td) is td
    t = torch.zeros(2)
    assert tensordict.from_any(t) is t
    assert tensordict.from_any(
        {"a": torch.zeros(3, 2)}, auto_batch_size=True
    ).batch_size == (3, 2)
    nt = TensorDict(a=torch.zeros(2), b={"c": torch.ones(2)}).to_namedtuple()
    assert torch.equal(tensordict.from_any(nt)["b", "c"], torch.ones(2))
    assert set(tensordict.from_any((torch.zeros(1), torch.ones(1))).keys()) == {
        "0",
        "1",
    }
    got = tensordict.from_any(_Sample(torch.zeros(2), _Inner(torch.ones(2))))
    assert type(got) is TensorDict and torch.equal(got["inner", "z"], torch.ones(2))
    arr = np.zeros(4, dtype=[("a", "f8")])
    assert tensordict.from_any(arr).batch_size == (4,)
    stack = tensordict.from_any(["a", "b"])
    assert type(stack).__name__ == "NonTensorStack" and stack.tolist() == ["a", "b"]
    assert tensordict.from_any(3) == 3


def test_from_any_dataframe():
    pd = pytest.importorskip("pandas")
    td = tensordict.from_any(pd.DataFrame({"x": [1, 2]}))
    assert td.batch_size == (2,) and torch.equal(td["x"], torch.tensor([1, 2]))


# --------------------------------------------------------- from_dict / auto_* methods


def test_from_dict_auto_batch_size_and_batch_dims():
    d = {"a": torch.zeros(3, 4, 5), "b": {"c": torch.zeros(3, 4, 6)}}
    assert TensorDict.from_dict(d).batch_size == ()
    td = TensorDict.from_dict(d, auto_batch_size=True)
    assert td.batch_size == (3, 4) and td["b"].batch_size == (3, 4, 6)
    td = tensordict.from_dict(d, batch_dims=1)
    assert td.batch_size == (3,) and td["b"].batch_size == (3,)
    assert (td.to_dict()["a"] == d["a"]).all()


def test_auto_batch_size_batch_dims_reaches_nested():
    td = TensorDict(a=torch.zeros(3, 4, 5), b={"c": torch.zeros(3, 4, 6)})
    assert td.auto_batch_size_() is td
    assert td.batch_size == (3, 4) and td["b"].batch_size == (3, 4, 6)
    td.auto_batch_size_(batch_dims=1)
    assert td.batch_size == (3,) and td["b"].batch_size == (3,)


def test_auto_batch_size_keep_compliant_size():
    for keep, nested in ((True, (3, 4)), (False, (3,))):
        td = TensorDict(
            a=torch.zeros(3, 4), b=TensorDict(c=torch.zeros(3, 4, 5), batch_size=[3, 4])
        )
        td.auto_batch_size_(batch_dims=1, keep_compliant_size=keep)
        assert td.batch_size == (3,) and td["b"].batch_size == nested


def test_auto_device():
    td = TensorDict(a=torch.zeros(3), b={"c": torch.zeros(2)})
    assert td.device is None
    assert td.auto_device_() is td
    assert td.device == torch.device("cpu") and td["b"].device == torch.device("cpu")
    mixed = TensorDict(
        a=torch.zeros(3),
        b={"c": torch.zeros(3, device="meta")},
        device="cpu" if False else None,
    )
    mixed.auto_device_()
    assert mixed.device is None and mixed["b"].device is None
    assert TensorDict().auto_device_().device is None
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))
    )
    assert lazy.auto_device_().device == torch.device("cpu")


# ------------------------------------------------------------------------------- JSON


def test_json_round_trip_records(tmp_path):
    td = _table_td()
    path = tmp_path / "t.json"
    assert td.to_json(path) is None
    records = json.loads(path.read_text())
    assert records[1] == {
        "a": 1.0,
        "flag": False,
        "nested": {"c": 1, "d": [2.0, 3.0]},
        "text": "hi",
    }
    back = tensordict.from_json(path)
    assert back.batch_size == (3,)
    assert (back.exclude("text") == td.exclude("text")).all()
    assert back["a"].dtype == torch.float32 and back["flag"].dtype == torch.bool
    assert back[2]["text"] == "hi"
    assert TensorDict.from_json(path, dtype=torch.float64)["a"].dtype == torch.float64


def test_json_separator_lines_and_text(tmp_path):
    td = _table_td().exclude("text")
    path = tmp_path / "t.jsonl"
    td.to_json(path, separator=".", lines=True)
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["nested.c"] == 0
    back = tensordict.from_json(path, lines=True, separator=".")
    assert (back == td).all()
    text = td.to_json()
    assert (tensordict.from_json(io.StringIO(text)) == td).all()
    # batch size [] is one object
    single = TensorDict(a=torch.zeros(2, 2), s="x")
    one = tensordict.from_json(io.StringIO(single.to_json()))
    assert (
        one.batch_size == () and torch.equal(one["a"], single["a"]) and one["s"] == "x"
    )
    assert tensordict.from_json(io.StringIO(text), batch_size=[]).batch_size == ()


def test_json_errors(tmp_path):
    with pytest.raises(ValueError, match=r"batch_size \(2, 2\)"):
        TensorDict(a=torch.zeros(2, 2), batch_size=[2, 2]).to_json()
    with pytest.raises(TypeError, match="JSON"):
        TensorDict(o=object(), a=torch.zeros(2), batch_size=[2]).to_json()
    with pytest.raises(ValueError, match="row 1 has no key 'b'"):
        tensordict.from_json(io.StringIO('[{"a": 1, "b": 2}, {"a": 3}]'))


def test_json_write_is_atomic(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("old")
    with pytest.raises(TypeError):
        TensorDict(o=object(), a=torch.zeros(2), batch_size=[2]).to_json(path)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


# ----------------------------------------------------------------------------- pandas


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    td = _table_td().exclude(("nested", "d"))
    df = td.to_pandas(separator=".")
    assert list(df.columns) == ["a", "flag", "nested.c", "text"]
    assert df["text"].tolist() == ["hi"] * 3 and df["a"].dtype == np.float32
    back = tensordict.from_pandas(df, separator=".")
    assert back.batch_size == (3,)
    assert (back.exclude("text") == td.exclude("text")).all()
    assert back["nested", "c"].dtype == torch.int64
    assert TensorDict.from_pandas(df)["nested.c"].shape == (3,)
    frame = pd.DataFrame({"x": [1, 2], "name": ["a", "b"], "f": [1.5, None]})
    got = tensordict.from_pandas(frame, dtype=torch.float64)
    assert got["x"].dtype == torch.float64 and torch.isnan(got["f"][1])
    assert got["name"].tolist() == ["a", "b"]


def test_pandas_errors_name_the_key():
    pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="'nested'.*separator"):
        _table_td().to_pandas()
    with pytest.raises(ValueError, match="'nested.d'.*shape \\(3, 2\\)"):
        _table_td().to_pandas(separator=".")


# ---------------------------------------------------------------------------- parquet


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    td = _table_td()
    path = tmp_path / "t.parquet"
    td.to_parquet(path, separator=".")
    back = tensordict.from_parquet(path, separator=".")
    assert back.batch_size == (3,)
    assert (back.exclude("text") == td.exclude("text")).all()
    assert back["nested", "d"].shape == (3, 2)  # feature dims kept
    assert back["a"].dtype == torch.float32 and back["text"].tolist() == ["hi"] * 3
    only = TensorDict.from_parquet(path, columns=["a"])
    assert list(only.keys()) == ["a"]
    lazy = LazyStackedTensorDict(*td.exclude("text").unbind(0))
    lazy.to_parquet(path, separator="_")
    assert (tensordict.from_parquet(path, separator="_") == td.exclude("text")).all()


# ------------------------------------------------------------------------ safetensors


@tensorclass
class _Obs:
    x: torch.Tensor
    label: str = "a"


def test_safetensors_round_trip(tmp_path):
    pytest.importorskip("safetensors")
    td = TensorDict(
        w=torch.ones(2, 3),
        sub={"b": torch.zeros(2)},
        obs=_Obs(x=torch.arange(2.0), label="z", batch_size=[2]),
        meta="a note",
        batch_size=[2],
        names=["env"],
    )
    path = tmp_path / "t.safetensors"
    tensordict.to_safetensors(td, path)
    back = tensordict.from_safetensors(path)
    assert back.batch_size == (2,) and back.names == ["env"]
    assert torch.equal(back["w"], td["w"]) and torch.equal(
        back["sub", "b"], td["sub", "b"]
    )
    assert type(back["obs"]) is _Obs and back["obs"].label == "z"
    assert back["meta"] == "a note"
    # a plain checkpoint (a state_dict) loads nested on "."
    from safetensors.torch import save_file

    save_file(
        {"0.weight": torch.ones(2), "0.bias": torch.zeros(2)},
        str(tmp_path / "m.safetensors"),
    )
    model = tensordict.from_safetensors(tmp_path / "m.safetensors")
    assert model.batch_size == () and torch.equal(model["0", "weight"], torch.ones(2))


def test_safetensors_lazy_stack_and_tensorclass_root(tmp_path):
    pytest.importorskip("safetensors")
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2)), stack_dim=0
    )
    tensordict.to_safetensors(lazy, tmp_path / "l.safetensors")
    back = tensordict.from_safetensors(tmp_path / "l.safetensors")
    assert isinstance(back, LazyStackedTensorDict) and back.stack_dim == 0
    assert torch.equal(back["a"], lazy["a"])
    obs = _Obs(x=torch.arange(3.0), batch_size=[3])
    tensordict.to_safetensors(obs, tmp_path / "o.safetensors")
    assert (tensordict.from_safetensors(tmp_path / "o.safetensors") == obs).all()


def test_safetensors_refuses_what_it_cannot_hold(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "t.safetensors"
    with pytest.raises(TypeError, match="'o'"):
        tensordict.to_safetensors(TensorDict(o=object()), path)
    with pytest.raises(ValueError, match="'a.b'"):
        tensordict.to_safetensors(
            TensorDict({"a.b": torch.zeros(1), "a": {"b": torch.zeros(1)}}), path
        )
    assert not path.exists()


# ------------------------------------------------------------------- optional extras


@pytest.mark.parametrize(
    "module, extra, call",
    [
        ("pandas", "pandas", lambda tmp: _table_td().to_pandas(separator=".")),
        ("pandas", "pandas", lambda tmp: tensordict.from_pandas(None)),
        ("pyarrow", "parquet", lambda tmp: _table_td().to_parquet(tmp / "x.parquet")),
        ("pyarrow", "parquet", lambda tmp: tensordict.from_parquet(tmp / "x.parquet")),
        (
            "safetensors",
            "safetensors",
            lambda tmp: tensordict.to_safetensors(TensorDict(), tmp / "x"),
        ),
        (
            "safetensors",
            "safetensors",
            lambda tmp: tensordict.from_safetensors(tmp / "x"),
        ),
    ],
)
def test_missing_extra_is_named(monkeypatch, tmp_path, module, extra, call):
    monkeypatch.setitem(sys.modules, module, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match=rf"tensordict\[{extra}\]"):
        call(tmp_path)
