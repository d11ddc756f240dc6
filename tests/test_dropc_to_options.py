"""to(other=tensordict) casts to the one dtype of other's leaves, and
to(..., batch_size=) gives a result of that batch size (0.15.3's forms)."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, set_lazy_legacy


def _td():
    return TensorDict(
        a=torch.zeros(3, 4),
        b=torch.zeros(3, 4, dtype=torch.int64),
        n=TensorDict(c=torch.zeros(3, 4, 2), batch_size=[3, 4, 2]),
        batch_size=[3, 4],
    )


def _dtypes(td):
    return {v.dtype for v in td.values(True, True)}


def test_to_other_with_one_dtype_casts():
    other = TensorDict({"a": torch.zeros(3, dtype=torch.half)}, [], device="cpu")
    out = _td().to(other=other)
    assert _dtypes(out) == {torch.half}
    assert out.device == torch.device("cpu")


def test_to_other_with_several_dtypes_keeps_dtypes():
    other = TensorDict(
        {"a": torch.zeros(3, dtype=torch.half), "b": torch.zeros((), dtype=torch.int64)},
        [],
        device="cpu",
    )
    out = _td().to(other=other)
    assert _dtypes(out) == {torch.float32, torch.int64}
    assert out.device == torch.device("cpu")


def test_to_batch_size():
    td = _td()
    out = td.to("cpu", torch.int32, batch_size=torch.Size([3]))
    assert out.batch_size == torch.Size([3])
    assert _dtypes(out) == {torch.int32}
    assert out["n"].batch_size == torch.Size([3, 4, 2])
    only = td.to(batch_size=[])
    assert only.batch_size == torch.Size([])
    assert td.batch_size == torch.Size([3, 4])  # the input is left as it was
    assert only["a"] is td["a"]


def test_to_batch_size_refused_by_lazy_kinds():
    stack = LazyStackedTensorDict.lazy_stack([_td(), _td()], 0)
    with pytest.raises(TypeError, match="Cannot pass batch-size to "):
        stack.to(batch_size=[2])
    with set_lazy_legacy(True):
        view = _td().unsqueeze(0)
    with pytest.raises(TypeError, match="Cannot pass batch-size to "):
        view.to(torch.int32, batch_size=[])
