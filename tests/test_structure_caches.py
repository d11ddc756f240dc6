"""Caches derived from a tensordict's structure never outlive it.

The one such cache is the consolidated layout (``tensordict/_consolidate.py``): the
leaves of a consolidated container, in block order, with their paths, kept while the
container stays locked. After every structural change (a key set, deleted or renamed,
at the root or through a nested tensordict, a lock/unlock cycle, a member of a lazy
stack changed), what it returns describes the container as it is now: the leaves at
their current paths, or None (the leaves no longer all live in the block).
"""

import pytest
import torch
from tensordict import LazyStackedTensorDict, TensorDict
from tensordict._consolidate import consolidated_parts


def leaf_paths(td):
    if isinstance(td, LazyStackedTensorDict):
        return {
            (i,) + (k if isinstance(k, tuple) else (k,)): v
            for i, member in enumerate(td.tensordicts)
            for k, v in leaf_paths(member).items()
        }
    return {
        (k if isinstance(k, tuple) else (k,)): v
        for k, v in td.items(include_nested=True, leaves_only=True)
    }


def assert_fresh(td):
    parts = consolidated_parts(td)
    if parts is None:
        return
    _, paths, leaves, _ = parts
    current = leaf_paths(td)
    assert {tuple(p) for p in paths} == set(current)
    for path, leaf in zip(paths, leaves):
        assert current[tuple(path)] is leaf, path


def cached_dense():
    td = TensorDict(
        {"a": torch.zeros(3), "n": {"b": torch.ones(3), "m": {"c": torch.ones(3)}}},
        batch_size=[3],
    ).consolidate()
    td.lock_()
    assert consolidated_parts(td) is consolidated_parts(td)  # cached while locked
    return td


def relocked(td, change):
    # through the lock primitive, as the library's own writes unlock: the public
    # unlock_() also ends the consolidated state (as in 0.15.3), which would leave
    # no cache to check
    td._set_lock(False)
    change(td)
    td._set_lock(True)
    return td


CHANGES = {
    "set_new_key": lambda td: td.set("z", torch.zeros(3)),
    "replace_leaf": lambda td: td.set("a", torch.full((3,), 7.0)),
    "delete": lambda td: td.del_("a"),
    "rename": lambda td: td.rename_key_("a", "a2"),
    "nested_set": lambda td: td.set(("n", "m", "d"), torch.zeros(3)),
    "nested_delete": lambda td: td.del_(("n", "m", "c")),
    "select_inplace": lambda td: td.select("a", inplace=True),
    "update": lambda td: td.update({"n": {"b": torch.zeros(3)}}),
    "unflatten_inplace": lambda td: td.flatten_keys(inplace=True),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_dense_change_after_unlock(change):
    td = relocked(cached_dense(), CHANGES[change])
    assert_fresh(td)


def test_lock_unlock_cycle_without_change():
    td = relocked(cached_dense(), lambda td: None)
    assert_fresh(td)
    assert consolidated_parts(td) is not None


def test_set_through_a_sub_tensordict():
    # a nested tensordict of a locked one can neither be written nor unlocked on its
    # own: the structure cannot change behind the cache
    td = cached_dense()
    sub = td["n", "m"]
    with pytest.raises(RuntimeError, match="locked"):
        sub["new"] = torch.zeros(3)
    with pytest.raises(RuntimeError, match="unlock"):
        sub.unlock_()
    assert_fresh(td)
    td.unlock_()
    sub["new"] = torch.zeros(3)
    del sub["c"]
    td.lock_()
    assert_fresh(td)


def test_set_through_a_sub_tensordict_held_before_lock():
    td = TensorDict({"a": torch.zeros(3), "n": {"b": torch.ones(3)}}, [3]).consolidate()
    sub = td["n"]
    td.lock_()
    consolidated_parts(td)
    td.unlock_()
    sub["x"] = torch.zeros(3)
    td.lock_()
    assert_fresh(td)


def cached_stack():
    stack = LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2), n=TensorDict(b=torch.ones(2))),
        TensorDict(a=torch.ones(2), n=TensorDict(b=torch.zeros(2))),
    ).consolidate()
    stack.lock_()
    assert consolidated_parts(stack) is consolidated_parts(stack)
    return stack


def test_lazy_stack_member_changed_after_unlock():
    stack = cached_stack()
    stack.unlock_()
    stack.tensordicts[0]["z"] = torch.zeros(2)
    stack.tensordicts[1].del_(("n", "b"))
    stack.lock_()
    assert_fresh(stack)


def test_lazy_stack_member_unlocked_on_its_own():
    stack = cached_stack()
    member = stack.tensordicts[1]
    with pytest.raises(RuntimeError, match="locked"):
        member["z"] = torch.zeros(2)
    with pytest.raises(RuntimeError, match="unlock"):
        member.unlock_()
    assert_fresh(stack)


def test_lazy_stack_member_replaced():
    stack = cached_stack()
    stack.unlock_()
    stack.tensordicts[0] = TensorDict(
        a=torch.full((2,), 5.0), n=TensorDict(b=torch.ones(2))
    )
    stack.lock_()
    assert_fresh(stack)


def test_lazy_stack_member_list_changed_while_locked():
    stack = cached_stack()
    stack.tensordicts[0] = TensorDict(
        a=torch.full((2,), 5.0), n=TensorDict(b=torch.ones(2))
    )
    assert_fresh(stack)
