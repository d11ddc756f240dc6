"""apply in place when ``fn`` returns nothing, and new_tensor's copy warning."""

import warnings

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict


def _td():
    return TensorDict(
        a=torch.zeros(3, 2),
        sub=TensorDict(b=torch.zeros(3, dtype=torch.long), batch_size=[3]),
        batch_size=[3],
    )


@pytest.mark.parametrize("kind", ["dense", "lazy"])
def test_apply_inplace_all_none_returns_none(kind):
    td = _td()
    if kind == "lazy":
        td = LazyStackedTensorDict.lazy_stack([td[0], td[1]], 0)
    assert td.apply(lambda x: None, inplace=True) is None
    assert td.apply(lambda x: None, inplace=True, filter_empty=True) is None
    # filter_empty=False keeps the tensordict, as do results that are not None
    assert td.apply(lambda x: None, inplace=True, filter_empty=False) is td
    assert td.apply(lambda x: x.zero_(), inplace=True) is td
    assert td.apply(lambda x: None if x.dtype == torch.long else x, inplace=True) is td
    assert td.apply_(lambda x: None) is td


def test_apply_inplace_all_none_with_non_tensor_returns_self():
    td = _td()
    td.set_non_tensor("text", "hello")
    assert td.apply(lambda x: None, inplace=True) is td
    assert td["text"] == "hello"


def test_apply_inplace_empty_tensordict_returns_self():
    td = TensorDict(batch_size=[3])
    assert td.apply(lambda x: None, inplace=True) is td


def test_new_tensor_from_a_tensor_warns_as_torch():
    td = _td()
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        out = td.new_tensor(torch.zeros(2))
    assert out.shape == (2,)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        out = td.new_tensor(td[0] * 0)
    assert out.batch_size == td.batch_size[1:]
    assert (out == 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        td.new_tensor([1.0, 2.0])  # not a tensor: nothing to recommend
