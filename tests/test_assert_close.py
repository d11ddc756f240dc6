"""``tensordict.assert_close`` (also ``tensordict.utils.assert_close`` and the older
name ``assert_allclose_td``): what test suites written for 0.15.3 (TorchRL's among
them) import and match on."""

from __future__ import annotations

import pytest
import torch

import tensordict
import tensordict.utils
from tensordict import LazyStackedTensorDict, TensorClass, TensorDict, assert_close


class Pair(TensorClass):
    x: torch.Tensor
    label: str = None


def dense():
    return TensorDict(
        a=torch.zeros(3), b=TensorDict(c=torch.ones(3), batch_size=[3]), batch_size=[3]
    )


def test_the_names():
    assert tensordict.utils.assert_close is assert_close
    assert tensordict.assert_allclose_td is assert_close
    assert tensordict.utils.assert_allclose_td is assert_close
    assert "assert_close" in tensordict.__all__


def test_equal_dense_nested_lazy_and_tensorclass():
    td = dense()
    assert assert_close(td, td.clone()) is True
    ls = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2), b=torch.ones(2))
    )
    assert assert_close(ls, ls.clone())
    tc = Pair(x=torch.zeros(3), label="a", batch_size=[3])
    assert assert_close(tc, tc.clone())
    assert assert_close(tc, tc._tensordict)
    # non-tensor data and batch sizes are not compared
    assert assert_close(tc, Pair(x=torch.zeros(3), label="b"))


def test_not_close_names_the_key_and_the_rms():
    td = dense()
    other = td.apply(lambda x: x + 1)
    with pytest.raises(AssertionError, match=r"key \('a',\) does not match, got mse = 1\.0000"):
        assert_close(td, other)
    with pytest.raises(AssertionError, match=r"got mse = 1\.0000,\tMYMSG\n"):
        assert_close(td, other, msg="MYMSG")
    with pytest.raises(AssertionError, match=r"key \('p', 'a'\)"):
        assert_close(td, other, prefix=("p",))
    nested = td.clone()
    nested["b", "c"] += 1
    with pytest.raises(AssertionError, match=r"key \('b', 'c'\) does not match"):
        assert_close(td, nested)
    ints = TensorDict(a=torch.tensor([1, 2]))
    with pytest.raises(AssertionError, match="got mse = 0.7071"):
        assert_close(ints, TensorDict(a=torch.tensor([1, 3])))
    with pytest.raises(AssertionError, match="got mse = 1.0000"):
        assert_close(TensorDict(a=torch.tensor([True])), TensorDict(a=torch.tensor([False])))


def test_tolerances_and_nan():
    td = dense()
    assert assert_close(td, td.apply(lambda x: x + 1e-3), atol=1e-2, rtol=0)
    with pytest.raises(AssertionError, match="does not match"):
        assert_close(td, td.apply(lambda x: x + 1e-3), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="rtol"):
        assert_close(td, td, rtol=1e-3)
    nan = td.clone()
    nan["a"][0] = float("nan")
    assert assert_close(nan, nan.clone())
    with pytest.raises(AssertionError, match=r"mse =  nan"):
        assert_close(nan, nan.clone(), equal_nan=False)


def test_dtype_shape_and_type_mismatches():
    td = dense()
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(td, td.apply(lambda x: x.double()))
    with pytest.raises(AssertionError, match="shape"):
        assert_close(TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(3, 1)))
    with pytest.raises(RuntimeError, match=r"Failed to compare key \('a',\)"):
        assert_close(TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(4)))
    for a, b in ((td, torch.zeros(3)), (torch.zeros(3), td), (td, {"a": 1})):
        with pytest.raises(TypeError, match="assert_allclose inputs must be of TensorDict type"):
            assert_close(a, b)


def test_key_mismatch():
    td = dense()
    with pytest.raises(KeyError, match=r"The first TD has keys \{'a'\}"):
        assert_close(td, td.exclude("a"))
    with pytest.raises(KeyError, match=r"The second TD has keys \{'c'\}"):
        assert_close(td.exclude(("b", "c")), td)
    assert assert_close(td, td.exclude("a"), intersection=True)
