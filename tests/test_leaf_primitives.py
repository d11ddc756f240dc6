"""The leaf primitives every generated op is built on (docs/architecture.md).

``_leaves_and_rebuild`` returns a tensordict's tensor leaves and a ``rebuild`` that
makes a same-structured tensordict from new leaves. Generated methods trust it to put
each new leaf back under the key its old leaf had, to keep what is not a tensor leaf,
and to refuse a list of the wrong length instead of silently dropping or misplacing
leaves.
"""

from __future__ import annotations

import pytest
import torch

from tensordict import TensorDict


def _nested():
    return TensorDict(
        {
            "a": torch.arange(6.0).reshape(2, 3),
            "meta": "a string",
            "sub": TensorDict(
                {"b": torch.ones(2, 1), "deeper": {"c": torch.zeros(2, 4)}},
                batch_size=[2],
            ),
            "z": torch.tensor([1, 2]),
        },
        batch_size=[2],
        names=["batch"],
    )


def test_leaves_follow_nested_key_order():
    td = _nested()
    leaves, _ = td._leaves_and_rebuild()
    expected = [td.get(key) for key in td.keys(True, True)]
    assert [id(x) for x in leaves] == [id(x) for x in expected]


def test_rebuild_puts_each_leaf_back_under_its_key():
    td = _nested()
    leaves, rebuild = td._leaves_and_rebuild()
    out = rebuild([x * 10 for x in leaves])
    assert type(out) is TensorDict and out is not td
    assert list(out.keys(True)) == list(td.keys(True))
    for key in td.keys(True, True):
        assert torch.equal(out.get(key), td.get(key) * 10), key
    assert out["meta"] == "a string"
    assert out.batch_size == td.batch_size
    assert out["sub", "deeper"].batch_size == torch.Size([2])
    assert out.names == ["batch"]
    assert out["sub"] is not td["sub"]  # new containers, the source is untouched
    assert torch.equal(td["a"], torch.arange(6.0).reshape(2, 3))


def test_rebuild_with_batch_size_device_and_names():
    td = _nested()
    leaves, rebuild = td._leaves_and_rebuild()
    cpu = torch.device("cpu")  # callers pass a parsed device
    out = rebuild([x[:1] for x in leaves], batch_size=[1], device=cpu, names=["n"])
    assert out.batch_size == torch.Size([1])
    assert out["sub", "deeper"].batch_size == torch.Size([1])
    assert out.device == cpu and out["sub"].device == cpu
    assert out.names == ["n"]
    assert torch.equal(out["sub", "deeper", "c"], torch.zeros(1, 4))


@pytest.mark.parametrize("count", [0, 3, 5])
def test_rebuild_refuses_the_wrong_number_of_leaves(count):
    td = _nested()
    leaves, rebuild = td._leaves_and_rebuild()
    assert len(leaves) == 4
    new = (leaves * 2)[:count]
    with pytest.raises(ValueError, match=f"expected 4 leaves, got {count}"):
        rebuild(new)
    with pytest.raises(ValueError, match=f"expected 4 leaves, got {count}"):
        rebuild(new, batch_size=[2])


def test_rebuild_of_an_empty_tensordict():
    td = TensorDict({"meta": "text"}, batch_size=[2])
    leaves, rebuild = td._leaves_and_rebuild()
    assert leaves == []
    out = rebuild([])
    assert out["meta"] == "text" and out.batch_size == torch.Size([2])
