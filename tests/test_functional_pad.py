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
