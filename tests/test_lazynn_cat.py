"""torch.cat with lazy stacks among its inputs gives a lazy stack along their stack
dim (dense inputs are unbound along it), keeps entries that differ in shape between
the stacked tensordicts, and writes into a lazy ``out`` in place."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, lazy_stack


def _lazy(n=2):
    return lazy_stack(
        [TensorDict(a=torch.full((2, 3), float(i)), batch_size=[2]) for i in range(n)]
    )


@pytest.mark.parametrize("dense_first", [False, True])
def test_cat_along_the_stack_dim_with_a_dense_input(dense_first):
    lazy = _lazy()
    dense = TensorDict(a=torch.arange(12.0).reshape(2, 2, 3), batch_size=[2, 2])
    inputs = [dense, lazy] if dense_first else [lazy, dense]
    res = torch.cat(inputs, 0)
    assert isinstance(res, LazyStackedTensorDict)
    assert res.stack_dim == 0 and len(res.tensordicts) == 4
    assert res.batch_size == (4, 2)
    assert (res["a"] == torch.cat([x["a"] for x in inputs], 0)).all()


def test_cat_along_another_dim_with_a_dense_input():
    lazy = _lazy()
    dense = TensorDict(a=torch.arange(18.0).reshape(2, 3, 3), batch_size=[2, 3])
    res = torch.cat([lazy, dense], 1)
    assert isinstance(res, LazyStackedTensorDict) and res.stack_dim == 0
    assert res.batch_size == (2, 5)
    assert (res["a"] == torch.cat([lazy["a"], dense["a"]], 1)).all()


def test_cat_keeps_heterogeneous_entries():
    lazy = lazy_stack(
        [TensorDict(a=torch.ones(1), x=torch.zeros(1)), TensorDict(a=torch.ones(2))]
    )
    dense = TensorDict(a=torch.full((1, 3), 3.0), batch_size=[1])
    res = torch.cat([lazy, dense], 0)
    assert [t.shape[-1] for t in res.get("a", as_list=True)] == [1, 2, 3]
    assert "x" in res.tensordicts[0].keys()


def test_cat_of_heterogeneous_stacks_and_out():
    def make(v):
        return lazy_stack(
            [
                TensorDict(h=torch.full((2, 3), v), batch_size=[2]),
                TensorDict(h=torch.full((2, 2), v), batch_size=[2]),
            ],
            dim=1,
        )

    a, b = make(0.0), make(1.0)
    res = torch.cat([a, b], 0)
    assert isinstance(res, LazyStackedTensorDict) and res.stack_dim == 1
    assert res.batch_size == (4, 2)
    assert (res[2:].tensordicts[1]["h"] == 1).all()
    dest = lazy_stack(
        [
            TensorDict(h=torch.zeros(4, 3), batch_size=[4]),
            TensorDict(h=torch.zeros(4, 2), batch_size=[4]),
        ],
        dim=1,
    )
    ptrs = [m["h"].data_ptr() for m in dest.tensordicts]
    out = torch.cat([a, b], 0, out=dest)
    assert out is dest
    assert [m["h"].data_ptr() for m in dest.tensordicts] == ptrs
    assert (dest.tensordicts[1]["h"][2:] == 1).all() and (
        dest.tensordicts[1]["h"][:2] == 0
    ).all()
