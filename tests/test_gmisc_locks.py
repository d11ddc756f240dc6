"""Lock graphs as 0.15.3 code reads them: ``_lock_parents_weakrefs`` lists every
locked tensordict above a nested one (not only its direct parent), a lazy stack
answers for its members, and a lazy stack's own ``_is_locked`` is ``None`` until it is
locked itself (``is_locked`` then tells whether all its members are)."""

import gc

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict


def _alive_locked(refs):
    seen = set()
    for ref in refs:
        obj = ref()
        if obj is not None and obj.is_locked:
            seen.add(id(obj))
    return seen


def _nested():
    return TensorDict({("a", "b", "c", "d"): 1.0}, [])


def test_every_locked_ancestor_is_listed():
    td = _nested().lock_()
    a, b, c = td["a"], td["a", "b"], td["a", "b", "c"]
    assert _alive_locked(td._lock_parents_weakrefs) == set()
    assert _alive_locked(a._lock_parents_weakrefs) == {id(td)}
    assert _alive_locked(b._lock_parents_weakrefs) == {id(td), id(a)}
    assert _alive_locked(c._lock_parents_weakrefs) == {id(td), id(a), id(b)}
    td.unlock_()
    assert _alive_locked(c._lock_parents_weakrefs) == set()


def test_ancestors_stay_listed_after_the_root_is_gone():
    td = _nested().lock_()
    a, b = td["a"], td["a", "b"]
    del td
    gc.collect()
    assert _alive_locked(b._lock_parents_weakrefs) == {id(a)}
    a.unlock_()  # nothing alive above it
    a.lock_()
    with pytest.raises(RuntimeError, match="part of a locked graph"):
        b.unlock_()


def test_lazy_stack_answers_for_its_members():
    td0 = _nested()
    td1 = td0.clone()
    stack = LazyStackedTensorDict.lazy_stack([td0, td1]).lock_()
    a = stack["a"]
    assert _alive_locked(a._lock_parents_weakrefs) == {id(stack), id(td0), id(td1)}
    b = stack["a", "b"]
    assert len(_alive_locked(b._lock_parents_weakrefs)) == 5


def test_lazy_stack_lock_flag_follows_its_members():
    td0 = _nested()
    td1 = td0.clone()
    stack = LazyStackedTensorDict.lazy_stack([td0, td1])
    assert stack._is_locked is None and not stack.is_locked
    stack.lock_()
    assert stack._is_locked is True
    stack.unlock_()
    assert stack._is_locked is None
    td0.lock_()
    assert not stack.is_locked
    td1.lock_()
    assert stack.is_locked and stack._is_locked is None
    stack.unlock_()
    assert not td0.is_locked and not td1.is_locked
    holder = TensorDict(s=stack).lock_()
    assert stack._is_locked is True
    holder.unlock_()
    assert stack._is_locked is None


def test_shared_nested_blocks_both_roots():
    td = _nested().lock_()
    other = TensorDict(a=td["a"]).lock_()
    with pytest.raises(RuntimeError, match="part of a locked graph"):
        other.unlock_()
    with pytest.raises(RuntimeError, match="part of a locked graph"):
        td.unlock_()
    assert td.is_locked and other.is_locked
