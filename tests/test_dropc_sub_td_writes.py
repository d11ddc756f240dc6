"""A write through a sub-tensordict cannot turn a nested tensordict into a tensor:
0.15.3's ValueError "Tried to replace a tensordict with ..." (here also a
RuntimeError)."""

import pytest
import torch

from tensordict import TensorDict


def _source():
    return TensorDict(
        a=torch.zeros(2, 3),
        n=TensorDict(b=torch.zeros(2, 3), batch_size=[2, 3]),
        batch_size=[2, 3],
    )


@pytest.mark.parametrize("how", ["update", "set"])
def test_sub_tensordict_refuses_tensor_over_tensordict(how):
    source = _source()
    sub = source._get_sub_tensordict(1)
    with pytest.raises(ValueError, match="Tried to replace a tensordict with"):
        if how == "update":
            sub.update({"n": torch.ones(3)})
        else:
            sub.set("n", torch.ones(3))
    assert isinstance(source["n"], TensorDict)
    assert (source["n", "b"] == 0).all()


def test_sub_tensordict_still_writes_into_nested():
    source = _source()
    sub = source._get_sub_tensordict(1)
    sub.update({"n": {"b": torch.ones(3)}})
    assert (source["n", "b"][1] == 1).all()
    assert (source["n", "b"][0] == 0).all()


def test_new_nested_tensordict_keeps_extra_batch_dims_through_views():
    from tensordict import set_lazy_legacy

    source = TensorDict(a=torch.zeros(2, 4, 3), batch_size=[2, 4])
    sub = source._get_sub_tensordict(1)
    sub.set("t", TensorDict({}, [4, 5]))
    assert sub["t"].batch_size == torch.Size([4, 5])
    assert source["t"].batch_size == torch.Size([2, 4, 5])

    with set_lazy_legacy(True):
        view = TensorDict(a=torch.zeros(2, 4), batch_size=[2, 4]).permute(1, 0)
    view.set("t", TensorDict({"x": torch.ones(4, 2, 5, 7)}, [4, 2, 5]))
    assert view["t"].batch_size == torch.Size([4, 2, 5])
    assert view["t", "x"].shape == torch.Size([4, 2, 5, 7])
    assert view._source["t"].batch_size == torch.Size([2, 4, 5])
