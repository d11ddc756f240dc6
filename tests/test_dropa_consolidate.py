"""Consolidation as 0.15.3's users rely on it: jagged nested tensors (their
components in the block), pickling such a tensordict, the padding bytes, and the
``TensorDictFuture`` of ``return_early``."""

import concurrent.futures
import io
import warnings

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass
from tensordict.utils import TensorDictFuture


def _jagged(*lengths, dtype=torch.float32, fill=1.0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor(
            [torch.full((n, 3), fill, dtype=dtype) for n in lengths],
            layout=torch.jagged,
        )


def _td():
    return TensorDict(
        {
            "a": _jagged(1, 2),
            "b": {"c": _jagged(1, 2, dtype=torch.float16, fill=2.0)},
            "d": "a string!",
            "e": torch.arange(2, dtype=torch.float64),
        },
        batch_size=[2],
    )


def _same(one, two):
    return all((x == y).all() for x, y in zip(one.unbind(0), two.unbind(0)))


@pytest.mark.parametrize("num_threads", [0, 2])
def test_consolidate_jagged_leaves_view_the_block(num_threads):
    td = _td()
    c = td.consolidate(num_threads=num_threads)
    assert _same(td, c)
    assert c["d"] == "a string!"
    c._consolidated["storage"].zero_()
    assert (c["a"].values() == 0).all() and (c["b", "c"].offsets() == 0).all()


def test_consolidated_jagged_tensordict_pickles_and_reads_from_file(tmp_path):
    td = _td()
    c = td.consolidate()
    buffer = io.BytesIO()
    torch.save(c, buffer)
    buffer.seek(0)
    assert _same(td, torch.load(buffer, weights_only=False))
    c = td.consolidate(filename=tmp_path / "td.bin")
    assert _same(td, TensorDict.from_consolidated(tmp_path / "td.bin"))


def test_consolidate_jagged_in_a_tensorclass_and_lazy_stack():
    @tensorclass
    class Ragged:
        x: torch.Tensor

    tc = Ragged(x=_jagged(1, 3), batch_size=[2])
    assert _same(tc.x, tc.consolidate().x)
    stack = LazyStackedTensorDict(
        TensorDict(x=_jagged(1, 2)), TensorDict(x=_jagged(2, 2))
    )
    c = stack.consolidate()
    assert _same(c[0]["x"], stack[0]["x"]) and _same(c[1]["x"], stack[1]["x"])


def test_consolidations_of_the_same_leaves_have_the_same_bytes():
    td = TensorDict(
        {
            f"k{i}": torch.full(
                (i % 3 + 1,),
                i,
                dtype=[torch.float16, torch.uint8, torch.float64][i % 3],
            )
            for i in range(12)
        },
        batch_size=[],
    )
    one = td.consolidate(num_threads=0)._consolidated["storage"]
    two = td.consolidate(num_threads=3)._consolidated["storage"]
    assert torch.equal(one, two)


def test_return_early_gives_a_tensordict_future(tmp_path):
    td = TensorDict(a=torch.zeros(3), s="x", batch_size=[3])
    future = td.consolidate(num_threads=2, return_early=True)
    assert isinstance(future, TensorDictFuture)
    assert isinstance(future, concurrent.futures.Future)
    assert future.result().is_consolidated()
    saved = td.memmap(tmp_path / "m", num_threads=2, return_early=True)
    assert isinstance(saved, TensorDictFuture) and saved.result().is_memmap()
    with pytest.raises(NotImplementedError, match="non_blocking"):
        td.consolidate(num_threads=2, return_early=True, non_blocking=True)
    with pytest.raises(NotImplementedError, match="use_buffer"):
        td.consolidate(num_threads=2, return_early=True, use_buffer=True)
