"""The attributes family (spec/attributes.yaml): every entry against its ``leaf`` and
``combine`` applied by hand to the leaves, on dense and nested tensordicts (the
examples run in ``test_spec_examples.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from codegen.loader import load_spec
from tensordict import TensorDict

ROOT = Path(__file__).resolve().parent.parent
FAMILY = next(f for f in load_spec(ROOT / "spec").families if f.name == "attributes")
OPS = {op.name: op for op in FAMILY.ops}


def _tds():
    x = torch.arange(6.0)
    return {
        "dense": TensorDict(a=torch.zeros(3, 4), b=torch.ones(3, 2), batch_size=[3]),
        "nested": TensorDict(
            a=torch.zeros(3, 2), b={"c": torch.ones(3, 2)}, batch_size=[3], device="cpu"
        ),
        "mixed": TensorDict(
            a=torch.zeros(3, 2), b={"c": torch.arange(6).reshape(3, 2)}, batch_size=[3]
        ),
        "shared": TensorDict(a=x, b=x, c=x[2:], batch_size=[]),
        "noncontiguous": TensorDict(a=torch.zeros(4, 3).t(), batch_size=[3]),
        "empty": TensorDict({}, batch_size=[3]),
    }


# Per op: (keyword arguments, the expected value from the leaves and the tensordict)



CASES = {
    "dtype": lambda td, leaves: (
        leaves[0].dtype if leaves and len({x.dtype for x in leaves}) == 1 else None
    ),
    "requires_grad": lambda td, leaves: any(x.requires_grad for x in leaves),
    "is_cpu": lambda td, leaves: td.device is not None and td.device.type == "cpu",
    "is_cuda": lambda td, leaves: td.device is not None and td.device.type == "cuda",
    "is_meta": lambda td, leaves: td.device is not None and td.device.type == "meta",
    "is_contiguous": lambda td, leaves: all(x.is_contiguous() for x in leaves),
    "is_floating_point": lambda td, leaves: all(x.is_floating_point() for x in leaves),
    "bytes": lambda td, leaves: sum(x.numel() * x.element_size() for x in leaves),
    "param_count": lambda td, leaves: sum(x.numel() for x in leaves),
}


@pytest.mark.parametrize("kind", list(_tds()))
@pytest.mark.parametrize("name", sorted(CASES))
def test_aggregate_matches_the_leaves(name, kind):
    td = _tds()[kind]
    op = OPS[name]
    got = getattr(td, name) if op.is_property else getattr(td, name)()
    assert got == CASES[name](td, td._leaves())


@pytest.mark.parametrize("name", ["bytes", "param_count"])
def test_count_duplicates(name):
    td = _tds()["shared"]
    per = (lambda x: x.numel() * x.element_size()) if name == "bytes" else torch.numel
    assert getattr(td, name)(count_duplicates=False) == per(td["a"]) + per(td["c"])
    assert getattr(td, name)() == 2 * per(td["a"]) + per(td["c"])


def test_every_entry_is_tested():
    assert set(OPS) == set(CASES) | {
        "grad", "data", "data_ptr", "stack_from_tensordict", "cat_from_tensordict"
    }


def test_grad_and_data():
    td = TensorDict(
        a=torch.ones(2, requires_grad=True),
        b={"c": torch.ones(2, requires_grad=True)},
        d={"e": torch.ones(2, requires_grad=True)},
        batch_size=[2],
    )
    assert td.grad is None
    (td["a"] * 2 + td["b", "c"]).sum().backward()
    grad = td.grad
    assert set(grad.keys(include_nested=True, leaves_only=True)) == {"a", ("b", "c")}
    torch.testing.assert_close(grad["a"], torch.full((2,), 2.0))
    data = td.data
    assert not data.requires_grad and td.requires_grad
    assert data["b", "c"].data_ptr() == td["b", "c"].data_ptr()
    assert data.batch_size == td.batch_size


def test_data_ptr():
    td = _tds()["shared"]
    ptrs = td.data_ptr()
    assert ptrs.batch_size == torch.Size([])
    for key in ("a", "b", "c"):
        assert int(ptrs[key]) == td[key].data_ptr()
        assert int(td.data_ptr(storage=True)[key]) == td["a"].data_ptr()
    source = _tds()["nested"]
    nested = source.data_ptr()
    assert int(nested["b", "c"]) == source["b", "c"].data_ptr()
    assert nested["b"].batch_size == torch.Size([])


@pytest.mark.parametrize("name, fn", [("stack", torch.stack), ("cat", torch.cat)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_join_leaves(name, fn, dim):
    td = _tds()["nested"]
    method = getattr(td, f"{name}_from_tensordict")
    torch.testing.assert_close(method(dim), fn([td["a"], td["b", "c"]], dim))
    torch.testing.assert_close(
        method(dim, sorted=[("b", "c"), "a"]), fn([td["b", "c"], td["a"]], dim)
    )
    torch.testing.assert_close(method(dim, sorted=True), fn([td["a"], td["b", "c"]], dim))
    out = torch.empty(0)
    assert method(dim, out=out) is out
    with pytest.raises(IndexError):
        method(5)


def test_join_leaves_empty():
    with pytest.raises(RuntimeError, match="stack_from_tensordict"):
        TensorDict({}, batch_size=[3]).stack_from_tensordict()


def test_properties_are_read_only():
    td = _tds()["dense"]
    with pytest.raises(AttributeError):
        td.dtype = torch.float64


