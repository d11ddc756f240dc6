"""A tensorclass op called with ``out=`` returns ``out`` itself (0.15.3), not
``out`` wrapped in the tensorclass."""

import torch

from tensordict import TensorDict, tensorclass
from tensordict.typedtensordict import TypedTensorDict


@tensorclass
class _Pair:
    a: torch.Tensor
    b: torch.Tensor


class _Typed(TypedTensorDict):
    a: torch.Tensor
    b: torch.Tensor


def _pair(cls):
    return cls(a=torch.randn(4, 3, 2), b=torch.randn(4, 3), batch_size=[4, 3])


def test_tensorclass_reduction_out_is_returned():
    for cls in (_Pair, _Typed):
        obj = _pair(cls)
        out = obj.to_tensordict().logsumexp(dim=1)
        result = obj.logsumexp(dim=1, out=out)
        assert result is out
        assert type(result) is TensorDict
        torch.testing.assert_close(out["a"], obj.a.logsumexp(1))


def test_tensorclass_reduction_out_empty_is_returned():
    obj = _pair(_Typed)
    out = obj.to_tensordict().logsumexp(dim=1, keepdim=True).empty()
    assert obj.logsumexp(dim=1, keepdim=True, out=out) is out


def test_tensorclass_reduction_without_out_is_wrapped():
    obj = _pair(_Pair)
    assert isinstance(obj.logsumexp(dim=1), _Pair)
