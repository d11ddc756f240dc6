"""Lazy views: under ``set_lazy_legacy(True)``, unsqueeze, squeeze, permute and view
return views whose writes (new keys included) go through to the original, as the
overview's lazy-evaluation section describes; without it they return TensorDicts."""

from __future__ import annotations

import pytest
import torch

from tensordict import TensorDict, set_lazy_legacy
from tensordict._lazy_view import LazyViewTensorDict


def make():
    return TensorDict({"a": torch.zeros(3, 4, 2), "n": {"b": torch.zeros(3, 4)}}, [3, 4])


OPS = {
    "unsqueeze": (lambda t: t.unsqueeze(0), (1, 3, 4)),
    # (squeezing what a view unsqueezed gives the tensordict back: tests/test_compat_lazy_rows.py)
    "squeeze": (lambda t: t.unsqueeze(1).unsqueeze(0).squeeze(2), (1, 3, 4)),
    "permute": (lambda t: t.permute(1, 0), (4, 3)),
    "view": (lambda t: t.view(12), (12,)),
    "view_tuple": (lambda t: t.view((2, 6)), (2, 6)),
}


@pytest.mark.parametrize("name", OPS)
def test_reads_match_the_eager_op(name):
    op, batch = OPS[name]
    td = make()
    td["a"].copy_(torch.randn(3, 4, 2))
    with set_lazy_legacy(True):
        view = op(td)
    assert isinstance(view, LazyViewTensorDict)
    assert view.batch_size == torch.Size(batch)
    eager = op(td)
    assert type(eager) is TensorDict
    assert torch.equal(view["a"], eager["a"])
    assert view["n", "b"].shape == eager["n", "b"].shape


@pytest.mark.parametrize("name", OPS)
def test_new_keys_go_through_in_the_sources_layout(name):
    op, batch = OPS[name]
    td = make()
    with set_lazy_legacy(True):
        view = op(td)
        value = torch.randn(*batch, 5)
        view["c"] = value
        view["n", "new"] = value[..., 0]
    assert td["c"].shape == (3, 4, 5) and td["n", "new"].shape == (3, 4)
    # read back through the eager op: the same values where they were written
    assert torch.equal(op(td)["c"], value)
    assert torch.equal(op(td)["n", "new"], value[..., 0])


def test_writes_to_existing_entries_in_place_and_at_an_index():
    td = make()
    with set_lazy_legacy(True):
        view = td.permute(1, 0)
        view.zero_()
        view += 1
        view[2, 1] = TensorDict({"a": torch.full((2,), 7.0), "n": {"b": torch.tensor(7.0)}}, [])
    assert td["a"].sum() == 24 + 2 * 6  # every element 1, then two of them 7
    assert td["a"][1, 2].tolist() == [7.0, 7.0] and td["n", "b"][1, 2] == 7


def test_the_original_is_not_copied():
    td = make()
    with set_lazy_legacy(True):
        view = td.unsqueeze(0)
    view["a"][0, 0, 0, 0] = 5.0  # a read gives a view of the stored tensor
    assert td["a"][0, 0, 0] == 5.0
    dense = view.to_tensordict()
    assert type(dense) is TensorDict and dense.batch_size == (1, 3, 4)
    dense["a"].zero_()
    assert td["a"][0, 0, 0] == 5.0  # a dense copy is a copy


def test_a_view_of_a_view_writes_through_both():
    td = make()
    with set_lazy_legacy(True):
        view = td.unsqueeze(0).permute(2, 1, 0)
        assert view.batch_size == (4, 3, 1)
        view["c"] = torch.ones(4, 3, 1)
    assert td["c"].shape == (3, 4) and td["c"].sum() == 12


def test_locking_and_batch_checks_hold_on_the_view():
    td = make()
    with set_lazy_legacy(True):
        view = td.permute(1, 0)
    with pytest.raises(RuntimeError, match="batch"):
        view["bad"] = torch.zeros(3, 4)  # the view's batch is [4, 3]
    td.lock_()
    with pytest.raises(RuntimeError, match="locked"):
        view["c"] = torch.zeros(4, 3)


def test_empty_takes_an_int_batch_size_and_contiguous_in_place_is_refused():
    with set_lazy_legacy(True):
        view = make().permute(1, 0)
    assert view.empty(batch_size=5).batch_size == torch.Size([5])
    with pytest.raises(RuntimeError, match="inplace"):
        view.contiguous(inplace=True)
