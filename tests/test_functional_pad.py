"""``pad``: the error types code written for 0.15.3 catches, and leaves without batch
dims left as they are."""

import pytest
import torch

from tensordict import TensorDict, UnbatchedTensor
from tensordict.functional import pad


def _td() -> TensorDict:
    return TensorDict(a=torch.ones(4, 3, 5), n={"b": torch.zeros(4, 3)}, batch_size=[4, 3])


@pytest.mark.parametrize("pad_size", [[0] * 100, [0], [1, 2, 3]])
def test_a_bad_pad_size_raises_runtime_error_as_0153_and_value_error(pad_size) -> None:
    with pytest.raises(RuntimeError, match="pad_size"):
        pad(_td(), pad_size)
    with pytest.raises(ValueError, match="pad_size"):
        pad(_td(), pad_size)


def test_fewer_pairs_than_batch_dims_pad_the_first_dims() -> None:
    padded = pad(_td(), [1, 2], value=7.0)
    assert padded.batch_size == (7, 3) and padded["a"].shape == (7, 3, 5)
    assert (padded["a"][0] == 7).all() and (padded["a"][1:5] == 1).all()
    assert padded["n", "b"].shape == (7, 3)


def test_an_unbatched_leaf_is_kept_as_it_is() -> None:
    td = _td()
    kept = UnbatchedTensor(torch.randn(2, 2))
    td["u"] = kept
    padded = pad(td, [0, 1, 0, 2])
    assert padded.get("u") is kept
    assert padded.batch_size == (5, 5)


def test_pad_in_place_keeps_the_tensordict_and_its_nested_ones() -> None:
    td = _td()
    nested = td["n"]
    out = td.pad([0, 1, 0, 2], value=0.0, inplace=True)
    assert out is td and td["n"] is nested
    assert td.batch_size == (5, 5) and nested.batch_size == (5, 5)
    assert td["a"].shape == (5, 5, 5) and nested["b"].shape == (5, 5)
    assert torch.equal(td["a"], pad(_td(), [0, 1, 0, 2])["a"])
    assert pad(_td(), [1, 1], inplace=True).batch_size == (6, 3)


def test_pad_in_place_of_a_locked_tensordict_is_refused() -> None:
    td = _td().lock_()
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        td.pad([1, 1], inplace=True)
    assert td.batch_size == (4, 3)


def test_the_method_and_the_function_agree_on_a_lazy_stack_and_a_tensorclass() -> None:
    from tensordict import LazyStackedTensorDict, tensorclass

    lazy = LazyStackedTensorDict.lazy_stack([_td(), _td()], 0)
    assert lazy.pad([0, 1]).batch_size == (3, 4, 3) == pad(lazy, [0, 1]).batch_size

    @tensorclass
    class Pair:
        x: torch.Tensor

    pair = Pair(x=torch.ones(2, 3), batch_size=[2])
    assert pad(pair, [1, 0]).x.shape == (3, 3) and isinstance(pad(pair, [1, 0]), Pair)
