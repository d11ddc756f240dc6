"""to(..., inplace=True) on kinds that cannot replace their tensors, and the private
class test ``tensordict.base._is_tensor_collection`` existing code imports."""

import pytest
import torch

from tensordict import TensorDict, set_lazy_legacy, tensorclass
from tensordict import base as td_base


def _td():
    return TensorDict(
        a=torch.zeros(3, 4), b=torch.zeros(3, 4, dtype=torch.int64), batch_size=[3, 4]
    )


@pytest.mark.parametrize("target", [torch.float64, "cpu"])
def test_sub_tensordict_refuses_inplace_move(target):
    sub = _td()._get_sub_tensordict(1)
    with pytest.raises(
        TypeError, match="Cannot send a _SubTensorDict instance to device/dtype inplace"
    ):
        sub.to(target, inplace=True)


@pytest.mark.parametrize("op", ["permute", "unsqueeze"])
@pytest.mark.parametrize("target", [torch.float64, "cpu"])
def test_lazy_view_refuses_inplace_move(op, target):
    td = _td()
    with set_lazy_legacy(True):
        view = td.permute(1, 0) if op == "permute" else td.unsqueeze(0)
    with pytest.raises(TypeError, match="Cannot use inplace=True with"):
        view.to(target, inplace=True)
    assert td["a"].dtype == torch.float32


def test_dense_inplace_move_still_works():
    td = _td()
    assert td.to(torch.float64, inplace=True) is td
    assert td["b"].dtype == torch.float64


def test_is_tensor_collection_private_name():
    @tensorclass
    class _Point:
        x: torch.Tensor

    assert td_base._is_tensor_collection(TensorDict)
    assert td_base._is_tensor_collection(_Point)
    assert not td_base._is_tensor_collection(torch.Tensor)
    td = TensorDict(a=torch.zeros(2), n=TensorDict(b=torch.zeros(2), batch_size=[2]),
                    batch_size=[2])
    # as an is_leaf: tensordicts are the leaves
    keys = list(td.keys(True, True, is_leaf=td_base._is_tensor_collection))
    assert keys == ["n"]


def test_persistent_refuses_inplace_move(tmp_path):
    pytest.importorskip("h5py")
    from tensordict.persistent import PersistentTensorDict

    h5 = PersistentTensorDict.from_dict(
        TensorDict(a=torch.zeros(3), batch_size=[3]), filename=tmp_path / "f.h5"
    )
    with pytest.raises(TypeError, match="Cannot use inplace=True with"):
        h5.to(torch.float64, inplace=True)
    assert h5.to(torch.float64)["a"].dtype == torch.float64
