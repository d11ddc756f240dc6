"""tensordict.to_arrow / tensordict.from_arrow (tensordict/_arrow.py)."""

import pytest
import torch

import tensordict
from tensordict import LazyStackedTensorDict, NonTensorStack, TensorDict

pa = pytest.importorskip("pyarrow")


def _td():
    td = TensorDict(
        x=torch.arange(4.0),
        img=torch.arange(24, dtype=torch.int32).reshape(4, 2, 3),
        flag=torch.tensor([True, False, True, True]),
        obs=TensorDict(y=torch.arange(4) * 10, batch_size=[4]),
        batch_size=[4],
    )
    td["words"] = ["a", "bb", "ccc", "d"]
    return td


def test_schema_names_the_entries():
    table = tensordict.to_arrow(_td())
    assert table.num_rows == 4
    assert set(table.column_names) == {"x", "img", "flag", "obs", "words"}
    assert table.schema.field("x").type == pa.float32()
    assert pa.types.is_struct(table.schema.field("obs").type)
    assert table.schema.field("obs").type.field("y").type == pa.int64()
    assert isinstance(table.schema.field("img").type, pa.FixedShapeTensorType)
    assert table.schema.field("img").type.shape == [2, 3]
    assert table.column("words").to_pylist() == ["a", "bb", "ccc", "d"]


def test_round_trip_values():
    td = _td()
    back = tensordict.from_arrow(tensordict.to_arrow(td))
    assert back.batch_size == torch.Size([4])
    for key in ("x", "img", "flag", ("obs", "y")):
        assert torch.equal(back[key], td[key]), key
        assert back[key].dtype == td[key].dtype
    assert back.get("words").tolist() == ["a", "bb", "ccc", "d"]


def test_numeric_columns_share_memory_both_ways():
    td = _td()
    table = tensordict.to_arrow(td)
    # to_arrow: the Arrow buffer is the tensor's memory
    assert table.column("x").chunk(0).buffers()[1].address == td["x"].data_ptr()
    back = tensordict.from_arrow(table)
    # from_arrow: the tensors view the Arrow buffers
    assert back["x"].data_ptr() == td["x"].data_ptr()
    assert back["img"].data_ptr() == td["img"].data_ptr()
    assert back["obs", "y"].data_ptr() == td["obs", "y"].data_ptr()
    # a write through the view is seen by the original
    back["x"][0] = 100.0
    assert td["x"][0] == 100.0
    copied = tensordict.from_arrow(table, copy=True)
    assert copied["x"].data_ptr() != td["x"].data_ptr()
    assert torch.equal(copied["x"], td["x"])


def test_read_only_buffers_are_copied_by_default(tmp_path):
    path = str(tmp_path / "x.arrow")
    table = pa.table({"a": pa.array([1.0, 2.0, 3.0])})
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    with pa.memory_map(path) as source:
        mapped = pa.ipc.open_file(source).read_all()
        assert not mapped.column("a").chunk(0).buffers()[1].is_mutable
        td = tensordict.from_arrow(mapped)
        address = mapped.column("a").chunk(0).buffers()[1].address
        assert td["a"].data_ptr() != address
        td["a"][0] = -1.0  # a copy: writing is safe
        assert tensordict.from_arrow(mapped, copy=False)["a"].data_ptr() == address


def test_sliced_and_chunked_tables():
    table = pa.table(
        {
            "a": pa.array(range(10)),
            "f": pa.array([[i, i] for i in range(10)], pa.list_(pa.int64(), 2)),
        }
    )
    part = tensordict.from_arrow(table.slice(3, 4))
    assert part["a"].tolist() == [3, 4, 5, 6]
    assert part["f"].tolist() == [[i, i] for i in range(3, 7)]
    chunked = pa.concat_tables([table.slice(0, 5), table.slice(5)])
    assert chunked.column("a").num_chunks == 2
    assert tensordict.from_arrow(chunked)["a"].tolist() == list(range(10))


def test_lists_become_jagged_and_back():
    table = pa.table({"ids": pa.array([[1, 2], [3], []])})
    td = tensordict.from_arrow(table)
    assert td["ids"].is_nested
    assert [t.tolist() for t in td["ids"].unbind(0)] == [[1, 2], [3], []]
    again = tensordict.to_arrow(td)
    assert pa.types.is_large_list(again.schema.field("ids").type)
    assert again.column("ids").to_pylist() == [[1, 2], [3], []]


def test_lazy_stack_of_different_shapes_is_jagged():
    lazy = LazyStackedTensorDict(
        TensorDict(a=torch.ones(2)), TensorDict(a=torch.zeros(3)), stack_dim=0
    )
    table = tensordict.to_arrow(lazy)
    assert table.column("a").to_pylist() == [[1.0, 1.0], [0.0, 0.0, 0.0]]


def test_other_columns_are_non_tensor_stacks():
    table = pa.table(
        {"s": pa.array(["x", "y"]), "nested": pa.array([["a"], ["b", "c"]])}
    )
    td = tensordict.from_arrow(table)
    assert isinstance(td.get("s"), NonTensorStack)
    assert td.get("s").tolist() == ["x", "y"]
    assert td.get("nested").tolist() == [["a"], ["b", "c"]]


def test_nulls():
    table = pa.table(
        {"a": pa.array([1.0, None]), "i": pa.array([None, 4], pa.uint32())}
    )
    with pytest.raises(ValueError, match="null value"):
        tensordict.from_arrow(table)
    filled = tensordict.from_arrow(table, nulls="fill")
    assert filled["a"][0] == 1.0 and torch.isnan(filled["a"][1])
    assert filled["i"].tolist() == [0, 4]
    masked = tensordict.from_arrow(table, nulls="mask")
    assert masked["_mask", "a"].tolist() == [True, False]
    assert masked["_mask", "i"].tolist() == [False, True]
    custom = tensordict.from_arrow(
        pa.table({"n": pa.array([{"q": 1.0}, {"q": None}])}),
        nulls="mask",
        mask_key=("m", "k"),
    )
    assert custom["m", "k", "n", "q"].tolist() == [True, False]
    with pytest.raises(ValueError, match="mask_key"):
        tensordict.from_arrow(table, mask_key="m")
    with pytest.raises(ValueError, match="nulls must be one of"):
        tensordict.from_arrow(table, nulls="drop")
    with pytest.raises(ValueError, match="null value"):
        tensordict.from_arrow(pa.table({"l": pa.array([["a", None]])}))


def test_errors():
    with pytest.raises(ValueError, match="one batch dimension"):
        tensordict.to_arrow(TensorDict(a=torch.zeros(2, 3), batch_size=[2, 3]))
    with pytest.raises(TypeError, match="bfloat16"):
        tensordict.to_arrow(
            TensorDict(a=torch.zeros(2, dtype=torch.bfloat16), batch_size=[2])
        )


def test_other_inputs_and_device():
    td = tensordict.from_arrow({"a": [1, 2, 3]}, device="cpu")
    assert td.device == torch.device("cpu")
    assert td["a"].tolist() == [1, 2, 3]
    batch = pa.record_batch({"a": pa.array([1.5])})
    assert tensordict.from_arrow(batch)["a"].tolist() == [1.5]


def test_tensorclass_converts():
    from tensordict import tensorclass

    @tensorclass
    class Point:
        x: torch.Tensor
        y: torch.Tensor

    p = Point(x=torch.zeros(3), y=torch.ones(3), batch_size=[3])
    table = tensordict.to_arrow(p)
    assert set(table.column_names) == {"x", "y"}
