"""The attributes family (spec/attributes.yaml): every entry against torch, on dense,
nested, mixed, shared, non-contiguous and empty tensordicts.

The oracle is the tensor attribute (or no-argument method) of the op's name read on
every leaf (``x.dtype``, ``x.is_contiguous()``), combined as the entry's combiner says
(``COMBINE``, written here); an op whose name is no tensor attribute, or whose value is
the tensordict's own (its device), says what torch gives in its entry (``tests:
oracle``, an expression over ``td`` and its ``leaves``). Their examples run in
``test_spec_examples.py``.
"""

from __future__ import annotations

import pytest
import torch
from spec_cases import oracle, ops_of

from codegen.model import Form
from tensordict import TensorDict

OPS = {op.name: op for op in ops_of("attributes")}


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
        # all/any stop at the deciding leaf: here the first (non-contiguous, not
        # floating point) for all, the last (requires grad) for any
        "decided_first_or_last": TensorDict(
            a=torch.zeros(4, 3, dtype=torch.long).t(),
            b={"c": torch.ones(3), "d": torch.ones(3, requires_grad=True)},
            batch_size=[3],
        ),
        "empty": TensorDict({}, batch_size=[3]),
    }


# What each combiner makes of the per-leaf values.
COMBINE = {
    "all": lambda td, values: all(values),
    "any": lambda td, values: any(values),
    "common_dtype": lambda td, values: (
        values[0] if values and len(set(values)) == 1 else None
    ),
}


def expected(op, td):
    leaves = td._leaves()
    if op.tests.oracle is not None:
        return oracle(op, td=td, leaves=leaves)(None)
    values = [getattr(x, op.name) for x in leaves]
    values = [v() if callable(v) else v for v in values]
    return COMBINE[op.combine.name](td, values)


def checked(ops) -> list:
    """The entries with an oracle: their own, or a tensor attribute of their name whose
    values the combiner joins in a way ``COMBINE`` knows."""
    return sorted(
        name
        for name, op in ops.items()
        if op.tests.oracle is not None
        or (op.combine.name in COMBINE and hasattr(torch.Tensor, name))
    )


CHECKED = checked(OPS)


def check_entry(op, kind: str) -> None:
    td = _tds()[kind]
    got = getattr(td, op.name) if op.form is Form.PROPERTY else getattr(td, op.name)()
    assert got == expected(op, td)


@pytest.mark.parametrize("kind", list(_tds()))
@pytest.mark.parametrize("name", CHECKED)
def test_aggregate_matches_the_leaves(name, kind):
    check_entry(OPS[name], kind)


@pytest.mark.parametrize("name", ["bytes", "param_count"])
def test_count_duplicates(name):
    td = _tds()["shared"]
    per = (lambda x: x.numel() * x.element_size()) if name == "bytes" else torch.numel
    assert getattr(td, name)(count_duplicates=False) == per(td["a"]) + per(td["c"])
    assert getattr(td, name)() == 2 * per(td["a"]) + per(td["c"])


# Entries whose result is no value to compare with ``==``: each has its own test below.
OWN_TESTS = {"grad", "data", "data_ptr", "stack_from_tensordict", "cat_from_tensordict"}


def test_the_aggregates_are_checked():
    assert {"dtype", "requires_grad", "is_contiguous", "bytes", "is_cpu"} <= set(CHECKED)
    unchecked = sorted(set(OPS) - set(CHECKED) - OWN_TESTS)
    assert not unchecked, f"say what torch gives for {unchecked}: 'tests: oracle'"


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


