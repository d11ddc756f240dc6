"""Indexing a TensorDict by a 1-D tensor of row numbers (what samplers do) takes a
faster path (``index_select``) than torch's general indexing; it must give exactly what
indexing each leaf gives: values, dtype, memory format, negative rows, errors."""

import pytest
import torch

from tensordict import MemoryMappedTensor, TensorDict


def _td():
    gen = torch.Generator().manual_seed(0)
    return TensorDict(
        {
            "obs": torch.randn(10, 3, generator=gen),
            "action": torch.randint(5, (10,), generator=gen),
            "done": torch.rand(10, 1, generator=gen) > 0.5,
            "image": torch.randn(10, 2, 4, 4, generator=gen).to(
                memory_format=torch.channels_last
            ),
            "transposed": torch.randn(4, 10, generator=gen).t(),
            "next": {"obs": torch.randn(10, 3, generator=gen)},
        },
        batch_size=[10],
    )


def _check_like_leaves(td, index):
    got = td[index]
    assert got.batch_size == torch.Size([len(index)])
    for key in td.keys(True, True):
        expected = td[key][index]
        value = got[key]
        assert type(value) is torch.Tensor, key
        assert value.dtype == expected.dtype and torch.equal(value, expected), key
        assert value.stride() == expected.stride(), key  # memory format kept


@pytest.mark.parametrize(
    "index",
    [
        torch.tensor([3, 0, 3, 9]),
        torch.tensor([3, 0, 9], dtype=torch.int32),
        torch.tensor([-1, 0, -10]),  # negative rows count from the end
        torch.tensor([], dtype=torch.long),
    ],
    ids=["rows", "int32", "negative", "empty"],
)
def test_rows_by_number_give_what_each_leaf_gives(index, tmp_path):
    td = _td()
    _check_like_leaves(td, index)
    mm = td.exclude("image", "transposed").memmap(tmp_path / "m")
    _check_like_leaves(mm, index)


@pytest.mark.parametrize("index", [torch.tensor([0, 10]), torch.tensor([-11])])
def test_rows_out_of_range_raise_index_error(index):
    with pytest.raises(IndexError):
        _td()[index]


def test_rows_keep_autograd():
    x = torch.randn(5, 2, requires_grad=True)
    td = TensorDict({"x": x}, batch_size=[5])
    td[torch.tensor([4, 4, 1])]["x"].sum().backward()
    assert x.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 0.0, 2.0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_rows_by_a_cpu_index_of_a_cuda_tensordict():
    td = _td().to("cuda")
    got = td[torch.tensor([2, -1])]
    assert torch.equal(got["obs"].cpu(), td["obs"].cpu()[torch.tensor([2, -1])])


def test_memory_mapped_rows_are_read_from_the_file(tmp_path):
    td = TensorDict({"a": torch.arange(6.0)}, batch_size=[6]).memmap(tmp_path / "m")
    td["a"][2] = 42.0  # written through the map
    back = TensorDict.load_memmap(tmp_path / "m")
    assert isinstance(back["a"], MemoryMappedTensor)
    assert back[torch.tensor([2, 5])]["a"].tolist() == [42.0, 5.0]
