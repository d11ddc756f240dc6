"""torch.func jacobians of a function of a tensordict without batch dims keep the
batch size empty (as 0.15.3); vmap still gives its output the mapped dim."""

import pytest
import torch
from torch.func import hessian, jacfwd, jacrev, vmap

from tensordict import TensorDict


def _f(td):
    return TensorDict(x=td["a"] ** 2, y=td["b"] ** 3, batch_size=td.batch_size)


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobian_without_batch_keeps_the_empty_batch(transform):
    td = TensorDict(a=torch.randn(3), b=torch.randn(3))
    jac = transform(_f)(td)
    assert jac.batch_size == ()
    assert jac["x", "a"].shape == (3, 3)
    torch.testing.assert_close(jac["x", "a"], torch.diag(2 * td["a"]))
    assert (jac["x", "b"] == 0).all()


def test_hessian_without_batch():
    td = TensorDict(a=torch.randn(3))
    h = hessian(lambda t: (t["a"] ** 3).sum())(td)
    assert h.batch_size == ()
    torch.testing.assert_close(h["a", "a"], torch.diag(6 * td["a"]))


def test_jacobian_with_batch_keeps_the_batch():
    td = TensorDict(a=torch.randn(4, 2), b=torch.randn(4, 2), batch_size=[4])
    jac = jacrev(_f)(td)
    assert jac.batch_size == (4,)
    assert jac["x", "a"].shape == (4, 2, 4, 2)


def test_vmap_output_still_gets_the_mapped_dim():
    out = vmap(lambda x: TensorDict(a=x * 2))(torch.randn(5, 3))
    assert out.batch_size == (5,)
