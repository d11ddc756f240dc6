"""Issue 14, row 8: locks propagate as in 0.15.3.

The results of ops that keep a tensordict's keys (shape ops, arithmetic, casts, ``to``,
``detach``, ``split``, ``where``, ``*_like``) are locked when the input is; what an op
builds anew (``clone``, reductions, ``unbind``, comparisons, ``new_*``) is not. A
tensordict held by a locked one cannot be unlocked on its own (``RuntimeError``).
Which op does which was read off 0.15.3 (docs/compatibility.md).
"""

from __future__ import annotations

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict


class Obs(TensorClass):
    a: torch.Tensor
    nested: TensorDict = None


def make(kind: str):
    """A locked container of batch size [3, 4] with ``a`` and ``("nested", "b")``."""
    nested = TensorDict(b=torch.rand(3, 4, 2) + 0.5, batch_size=[3, 4])
    a = torch.rand(3, 4) + 0.5
    if kind == "dense":
        td = TensorDict(a=a, nested=nested, batch_size=[3, 4])
    elif kind == "nested":  # the nested level of a locked parent
        inner = TensorDict(a=a, nested=nested, batch_size=[3, 4])
        return TensorDict(inner=inner, batch_size=[3, 4]).lock_()["inner"]
    elif kind == "lazy":
        td = LazyStackedTensorDict(
            *TensorDict(a=a, nested=nested, batch_size=[3, 4]).unbind(0), stack_dim=0
        )
    elif kind == "tensorclass":
        td = Obs(a=a, nested=nested, batch_size=[3, 4])
    else:
        raise ValueError(kind)
    return td.lock_()


KINDS = ["dense", "nested", "lazy", "tensorclass"]
MASK = torch.ones(3, 4, dtype=torch.bool)

LOCKED = {
    "reshape": lambda t: t.reshape(12),
    "view": lambda t: t.view(-1),
    "flatten": lambda t: t.flatten(),
    "unflatten": lambda t: t.unflatten(1, (2, 2)),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(0),
    "permute": lambda t: t.permute(1, 0),
    "transpose": lambda t: t.transpose(0, 1),
    "expand": lambda t: t.expand(2, 3, 4),
    "repeat": lambda t: t.repeat(2, 1),
    "flip": lambda t: t.flip(1),
    "narrow": lambda t: t.narrow(1, 0, 2),
    "add": lambda t: t + 1,
    "add_td": lambda t: t + t,
    "mul": lambda t: t * 2,
    "abs": lambda t: t.abs(),
    "neg": lambda t: -t,
    "maximum": lambda t: t.maximum(t),
    "float": lambda t: t.float(),
    "to_dtype": lambda t: t.to(torch.float64),
    "cpu": lambda t: t.to("cpu"),
    "detach": lambda t: t.detach(),
    "split": lambda t: t.split(1, 1)[0],
    "chunk": lambda t: t.chunk(2, 1)[1],
    "where": lambda t: t.where(MASK, 0.0),
    "zeros_like": lambda t: torch.zeros_like(t),
    "data": lambda t: t.data,
}
UNLOCKED = {
    "clone": lambda t: t.clone(),
    "sum": lambda t: t.sum(1),
    "unbind": lambda t: t.unbind(1)[0],
    "eq": lambda t: t == 0,
    "contiguous": lambda t: t.contiguous(),
    "new_zeros": lambda t: t.new_zeros(2),
    "masked_fill": lambda t: t.masked_fill(MASK, 1.0),
    "gather": lambda t: t.gather(1, torch.zeros(3, 4, dtype=torch.long)),
    "type": lambda t: t.type(torch.float64),
    "clamp": lambda t: t.clamp(0, 1),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", sorted(LOCKED))
def test_row8_result_of_a_locked_tensordict_is_locked(kind, op):
    td = make(kind)
    assert td.is_locked
    out = LOCKED[op](td)
    assert out is not td
    assert out.is_locked
    assert out.get("nested").is_locked
    with pytest.raises(RuntimeError, match="locked"):
        out.set("new_key", torch.zeros(out.batch_size))
    # its nested tensordict belongs to it: it cannot be unlocked alone either
    with pytest.raises(RuntimeError, match="unlock"):
        out.get("nested").unlock_()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", sorted(UNLOCKED))
def test_row8_new_results_are_not_locked(kind, op):
    out = UNLOCKED[op](make(kind))
    assert not out.is_locked
    out.set("new_key", torch.zeros(out.batch_size))


@pytest.mark.parametrize("kind", ["dense", "nested", "lazy", "tensorclass"])
def test_row8_unlocked_input_gives_unlocked_results(kind):
    td = make(kind)
    if kind == "nested":
        td = td.clone()
    else:
        td.unlock_()
    assert not (td + 1).is_locked and not td.reshape(12).is_locked


@pytest.mark.parametrize("kind", ["dense", "lazy", "tensorclass"])
def test_row8_a_nested_tensordict_of_a_locked_parent_cannot_unlock(kind):
    td = make(kind)
    nested = td.get("nested")
    with pytest.raises(RuntimeError, match="entry 'nested'|member 0"):
        nested.unlock_()
    assert nested.is_locked and td.is_locked
    with pytest.raises(RuntimeError, match="unlock"):
        nested.is_locked = False
    td.unlock_()  # the root unlocks, and everything with it
    assert not td.is_locked and not td.get("nested").is_locked
    td.get("nested").lock_()
    td.get("nested").unlock_()  # locked on its own: it unlocks on its own


def test_row8_lazy_stack_member_and_nested_level_name_where_they_are_held():
    root = TensorDict(
        a=torch.zeros(3), inner=TensorDict(b=TensorDict(c=torch.zeros(3)))
    ).lock_()
    with pytest.raises(RuntimeError, match="entry 'b'"):
        root["inner", "b"].unlock_()
    stack = LazyStackedTensorDict(TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2)))
    stack.lock_()
    with pytest.raises(RuntimeError, match="member 1"):
        stack[1].unlock_()


def test_row8_a_tensordict_shared_by_two_locked_graphs():
    child = TensorDict(c=torch.zeros(3), batch_size=[3])
    first = TensorDict(b=child, batch_size=[3]).lock_()
    second = TensorDict(b=child, batch_size=[3]).lock_()
    with pytest.raises(RuntimeError, match="unlock"):
        first.unlock_()
    assert first.is_locked and child.is_locked  # the failed unlock changed nothing
    with pytest.raises(RuntimeError, match="unlock"):
        second.unlock_()
    # both under one root: unlocking the root unlocks everything
    root = TensorDict(first=first, second=second, batch_size=[3]).lock_()
    root.unlock_()
    assert not (first.is_locked or second.is_locked or child.is_locked)


def test_row8_an_orphaned_nested_tensordict_unlocks():
    td = TensorDict(b=TensorDict(c=torch.zeros(3), batch_size=[3]), batch_size=[3])
    nested = td.lock_()["b"]
    del td
    nested.unlock_()
    assert not nested.is_locked


def test_row8_lock_as_context_manager_on_a_nested_level():
    td = TensorDict(b=TensorDict(c=torch.zeros(3), batch_size=[3]), batch_size=[3])
    td.lock_()
    with pytest.raises(RuntimeError):
        with td["b"].unlock_():
            pass
    td.unlock_()
    with td["b"].lock_():
        assert td["b"].is_locked
    assert not td["b"].is_locked


@pytest.mark.parametrize("kind", ["dense", "lazy", "tensorclass"])
def test_row8_locking_a_locked_tensordict_again(kind):
    # lock_() of a locked tensordict returns at once: its tree must stay as locked and
    # as guarded as after the first lock, and `with td.lock_():` still unlocks on exit
    td = make(kind)
    nested = td.get("nested")
    assert td.lock_() is td and td.share_memory_() is td
    assert td.is_locked and nested.is_locked
    with pytest.raises(RuntimeError, match="entry 'nested'|member 0"):
        nested.unlock_()
    assert nested.lock_() is nested and td.is_locked
    with td.lock_():
        assert td.is_locked and td.get("nested").is_locked
    assert not td.is_locked and not td.get("nested").is_locked
