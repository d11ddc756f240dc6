"""Issue 14, row 2 (part): ``UnbatchedTensor``, a leaf exempt from the batch-dim ops,
as 0.15.3 has it: the ops on the batch dims leave it as it is, the elementwise ops
apply to it; on dense, nested, lazy-stacked and tensorclass containers."""

from __future__ import annotations

import re

import pytest
import torch

import tensordict
from tensordict import LazyStackedTensorDict, TensorClass, TensorDict, UnbatchedTensor


class Obs(TensorClass):
    a: torch.Tensor
    table: torch.Tensor


TABLE = torch.arange(35.0).view(5, 7)


def make(kind: str):
    """A container of batch [3, 4] with ``a`` (a batched leaf) and ``table`` (an
    UnbatchedTensor of shape [5, 7]); ``nested``: both one level down."""
    a = torch.arange(12.0).view(3, 4)
    if kind == "tensorclass":
        return Obs(a=a, table=UnbatchedTensor(TABLE.clone()), batch_size=[3, 4])
    td = TensorDict(a=a, table=UnbatchedTensor(TABLE.clone()), batch_size=[3, 4])
    if kind == "nested":
        return TensorDict(inner=td, batch_size=[3, 4])
    if kind == "lazy":
        return LazyStackedTensorDict(*td.unbind(0), stack_dim=0)
    return td


def table(td, kind):
    return td["inner", "table"] if kind == "nested" else td["table"]


KINDS = ["dense", "nested", "lazy", "tensorclass"]

BATCH_OPS = {
    "td[0]": (lambda t: t[0], (4,)),
    "td[:, 1:3]": (lambda t: t[:, 1:3], (3, 2)),
    "td[mask]": (lambda t: t[torch.tensor([True, False, True])], (2, 4)),
    "reshape(-1)": (lambda t: t.reshape(-1), (12,)),
    "view(12)": (lambda t: t.view(12), (12,)),
    "unsqueeze(0)": (lambda t: t.unsqueeze(0), (1, 3, 4)),
    "unsqueeze then squeeze": (lambda t: t.unsqueeze(1).squeeze(1), (3, 4)),
    "permute(1, 0)": (lambda t: t.permute(1, 0), (4, 3)),
    "transpose(0, 1)": (lambda t: t.transpose(0, 1), (4, 3)),
    "flatten(0, 1)": (lambda t: t.flatten(0, 1), (12,)),
    "unflatten": (lambda t: t.unflatten(1, (2, 2)), (3, 2, 2)),
    "expand": (lambda t: t.expand(2, 3, 4), (2, 3, 4)),
    "repeat": (lambda t: t.repeat(2, 1), (6, 4)),
    "split": (lambda t: t.split(1, 0)[0], (1, 4)),
    "unbind": (lambda t: t.unbind(1)[0], (3,)),
    "torch.stack": (lambda t: torch.stack([t, t], 0), (2, 3, 4)),
    "torch.cat": (lambda t: torch.cat([t, t], 0), (6, 4)),
    "sum(0)": (lambda t: t.sum(0), (4,)),
    "mean()": (lambda t: t.mean(), ()),
    "gather": (lambda t: t.gather(0, torch.zeros(2, 4, dtype=torch.long)), (2, 4)),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", sorted(BATCH_OPS))
def test_row2_batch_dim_ops_leave_an_unbatched_tensor_as_it_is(kind, op):
    fn, batch = BATCH_OPS[op]
    out = fn(make(kind))
    assert out.batch_size == batch
    got = table(out, kind)
    assert isinstance(got, UnbatchedTensor)
    torch.testing.assert_close(got.as_subclass(torch.Tensor), TABLE)


ELEMENTWISE = {
    "td + 1": (lambda t: t + 1, TABLE + 1),
    "td * 2": (lambda t: t * 2, TABLE * 2),
    "exp": (lambda t: t.exp(), TABLE.exp()),
    "apply": (lambda t: t.apply(lambda x: x - 1), TABLE - 1),
    "clone": (lambda t: t.clone(), TABLE),
    "to(float64)": (lambda t: t.to(torch.float64), TABLE.double()),
    "zero_": (lambda t: t.clone().zero_(), torch.zeros(5, 7)),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", sorted(ELEMENTWISE))
def test_row2_elementwise_ops_apply_to_an_unbatched_tensor(kind, op):
    fn, expected = ELEMENTWISE[op]
    got = table(fn(make(kind)), kind)
    assert isinstance(got, UnbatchedTensor)
    torch.testing.assert_close(got.as_subclass(torch.Tensor), expected)


def test_row2_unbatched_tensor_itself_is_a_tensor():
    assert tensordict.UnbatchedTensor is UnbatchedTensor
    from tensordict._unbatched import UnbatchedTensor as same  # 0.15.3's module path

    assert same is UnbatchedTensor
    u = UnbatchedTensor(TABLE)
    assert isinstance(u, torch.Tensor) and u.batch_size == torch.Size([])
    assert type(u * 2) is UnbatchedTensor and (u * 2).shape == (5, 7)
    assert u[0].shape == (7,) and u.reshape(35).shape == (35,)  # on its own: a tensor
    assert repr(u).startswith("UnbatchedTensor(tensor(")


def test_row2_set_accepts_any_shape_for_an_unbatched_tensor_only():
    td = TensorDict(a=torch.zeros(3), batch_size=[3])
    td["u"] = UnbatchedTensor(torch.zeros(2))
    assert td["u"].shape == (2,)
    with pytest.raises(RuntimeError, match="'v'"):
        td["v"] = torch.zeros(2)


def test_row2_memmap_refuses_an_unbatched_tensor_naming_it(tmp_path):
    td = make("dense")
    with pytest.raises(NotImplementedError, match="'table'"):
        td.memmap(tmp_path)
    assert td.exclude("table").memmap(tmp_path)["a"].shape == (3, 4)


@pytest.mark.parametrize(
    "data",
    [torch.tensor(3), torch.tensor([3]), torch.tensor(1.25), torch.tensor([1, 2])],
)
def test_python_conversions_match_the_tensor(data):
    # str/format/round/trunc/floor/ceil give what the wrapped tensor gives (its
    # value or its error), not the subclass's repr
    import math

    wrapped = UnbatchedTensor(data)
    assert repr(wrapped) == f"UnbatchedTensor({data!r})"
    for convert in (str, format, round, math.trunc, math.floor, math.ceil):
        try:
            expected = convert(data)
        except Exception as err:  # noqa: BLE001 - the same error is expected
            with pytest.raises(type(err), match=re.escape(str(err))):
                convert(wrapped)
        else:
            assert convert(wrapped) == expected
