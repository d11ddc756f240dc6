"""Consolidation depth: nested jagged tensors stay consolidated through pickling,
lazy stacks of unbound rows consolidate into a file, and assert_close compares
jagged tensors built apart."""

import pickle

import torch

from tensordict import LazyStackedTensorDict, TensorDict, assert_close
from tensordict._reductions import _reduce_td


def _jagged():
    return torch.nested.nested_tensor_from_jagged(
        torch.arange(10), offsets=torch.tensor([0, 2, 5, 8, 10])
    )


def _with_njt():
    return TensorDict(
        a=torch.arange(3).expand(4, 3).clone(),
        njt=_jagged(),
        lengths=torch.nested.nested_tensor_from_jagged(
            torch.arange(10),
            offsets=torch.tensor([0, 2, 5, 8, 10]),
            lengths=torch.tensor([2, 3, 3, 2]),
        ),
        batch_size=[4],
    )


def test_consolidated_jagged_tensors_are_consolidated_and_pickle_as_such():
    td_c = _with_njt().consolidate()
    assert td_c.is_consolidated()
    back = pickle.loads(pickle.dumps(td_c))
    assert back.is_consolidated()
    assert back["lengths"]._lengths is not None
    rebuild, args = _reduce_td(td_c)
    again = rebuild(*args)
    assert again.is_consolidated()
    assert (again["a"] == td_c["a"]).all()


def test_reduce_td_of_a_plain_tensordict():
    td = TensorDict(a=torch.arange(3), b={"c": torch.ones(3)}, batch_size=[3])
    rebuild, args = _reduce_td(td)
    out = rebuild(*args)
    assert (out == td).all()


def test_assert_close_compares_jagged_tensors_built_apart():
    assert assert_close(_with_njt(), _with_njt())
    other = _with_njt()
    other["njt"] = torch.nested.nested_tensor_from_jagged(
        torch.arange(10) + 1, offsets=torch.tensor([0, 2, 5, 8, 10])
    )
    try:
        assert_close(_with_njt(), other)
    except AssertionError as err:
        assert "does not match" in str(err)
    else:
        raise AssertionError("different jagged values compared equal")


def test_consolidate_to_a_file_a_lazy_stack_of_unbound_rows(tmp_path):
    td = TensorDict(
        a=torch.arange(3).expand(1, 3).clone(),
        b={"c": torch.arange(3, dtype=torch.double).expand(1, 3).clone()},
        batch_size=[1, 3],
    )
    lazy = LazyStackedTensorDict(*td.unbind(1), stack_dim=1)
    td_c = lazy.consolidate(filename=tmp_path / "td.bin")
    assert (td_c == lazy).all()
    assert (TensorDict.from_consolidated(tmp_path / "td.bin") == td_c).all()
