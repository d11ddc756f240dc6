"""Locks seen through views: a sub-tensordict neither locks nor unlocks its source
(0.15.3's refusal), and a nested view read from a lazy view does not keep its parents
(and so their locks) alive."""

import gc
import weakref

import pytest
import torch

from tensordict import TensorDict, set_lazy_legacy


def _td():
    return TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])


def test_sub_tensordict_refuses_lock():
    td = _td()
    sub = td._get_sub_tensordict(1)
    with pytest.raises(RuntimeError, match="Lock the parent tensordict instead"):
        sub.lock_()
    with pytest.raises(RuntimeError, match="the parent tensordict instead"):
        sub.is_locked = True
    assert not td.is_locked
    sub.unlock_()  # already unlocked: nothing to do
    assert not sub.is_locked


def test_sub_tensordict_refuses_unlock():
    td = _td().lock_()
    sub = td._get_sub_tensordict(1)
    assert sub.is_locked
    with pytest.raises(RuntimeError, match="Cannot unlock a _SubTensorDict"):
        sub.unlock_()
    with pytest.raises(RuntimeError, match="the parent tensordict instead"):
        sub.is_locked = False
    assert td.is_locked
    sub.lock_()  # already locked: nothing to do


def test_nested_entry_of_lazy_view_does_not_keep_view_alive():
    source = TensorDict(a=torch.zeros(3, 1, 4, 2), batch_size=[3, 1, 4, 2])
    with set_lazy_legacy(True):
        view = source.permute(2, 0, 3, 1)
    del source
    view.set(("some", "nested"), torch.zeros(view.shape))
    view.lock_()
    some = view.get("some")
    assert some.is_locked
    with pytest.raises(RuntimeError, match="Cannot unlock"):
        some.unlock_()  # its root is locked and alive
    ref = weakref.ref(view)
    del view
    gc.collect()
    assert ref() is None
    some.unlock_()  # the root is gone: nothing holds its lock any more
    assert not some.is_locked


@pytest.mark.parametrize("locked", [False, True])
def test_unlock_context_relocks_only_what_it_unlocked(locked):
    td = _td()
    if locked:
        td.lock_()
    with td.unlock_():
        assert not td.is_locked
    assert td.is_locked == locked


def test_sub_tensordict_lock_context_is_a_no_op():
    td = _td()
    sub = td._get_sub_tensordict(1)
    with sub.unlock_():
        pass
    assert not td.is_locked
    with sub.unlock_():  # again: the source was not locked by the first exit
        pass
    td.lock_()
    with td._get_sub_tensordict(0).lock_():
        pass
    assert td.is_locked
