"""``torch.X(td, ...)``: the dispatch table generated from the spec, and stacking.

``test_dispatch_entry`` walks every ``torch_function`` item of every spec entry (all
families) and checks that the torch function gives what the method gives, on a nested
tensordict whose nested levels have more batch dims than their parent. Arguments come
from the entry's own calls (``tests: calls`` in the spec, at its test batch size), else
from ``ARGS`` (per torch function) or ``PARAM_VALUES`` (per parameter name); an item
whose required arguments are in none fails, naming them.

Then stacking (``torch.stack``/``torch.cat``, ``TensorDict.stack``/``cat``,
``tensordict.stack``/``cat``): the seed samples, nested and non-contiguous inputs,
``out=``, the errors (keys, batch sizes, dims), the lazy-legacy hook; and
``torch.testing.assert_close`` on tensordicts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

import tensordict
from spec_cases import arguments, batch_size

from codegen.checks import split_torch_function
from codegen.loader import load_spec
from codegen.model import Form, Op
from tensordict import TensorDict
from tensordict._generated.torch_functions import TORCH_FUNCTIONS

SPEC = load_spec(ROOT / "spec")
ITEMS = [(op, item) for op in SPEC.ops() for item in op.torch_functions]
IDS = [split_torch_function(item)[0] for _, item in ITEMS]


def make(seed: int = 0, kind: str = "float", batch=(4, 3)) -> TensorDict:
    """Batch size ``batch`` ([4, 3]); a nested level with one more batch dim (of size 2);
    values in (0.1, 0.9) (ints in [1, 5) for the bitwise ops)."""
    g = torch.Generator().manual_seed(seed)
    batch = tuple(batch)

    def leaf(*shape):
        if kind == "int":
            return torch.randint(1, 5, shape, generator=g)
        return torch.rand(*shape, generator=g) * 0.8 + 0.1

    return TensorDict(
        a=leaf(*batch, 2),
        sub=TensorDict(c=leaf(*batch, 2, 5), d=leaf(*batch, 2), batch_size=[*batch, 2]),
        batch_size=list(batch),
    )


MASK = torch.tensor([True, False, True, True])
# Values of the required parameters of entries without test calls, by name ("td2":
# another tensordict like the input); the entries' own calls come first.
PARAM_VALUES = {
    "other": "td2",
    "end": "td2",
    "weight": 0.5,
    "other1": "td2",
    "other2": "td2",
    "dim": 0,
    "fill_value": 2.0,
    "condition": MASK,
}
# torch functions whose arguments the parameter names do not say: torch.logsumexp
# needs a dim where the method has a default
ARGS = {"torch.logsumexp": (0,)}


def prepare(value, seed, kind):
    return make(seed + 1, kind) if isinstance(value, str) and value == "td2" else value


def call_args(op: Op, dotted: str) -> tuple:
    if dotted in ARGS:
        return ARGS[dotted]
    args, missing = [], []
    for p in op.signature.params:
        if p.kind in ("var_keyword", "keyword_only") or p.default is not None:
            continue
        if p.name in PARAM_VALUES:
            args.append(PARAM_VALUES[p.name])
        else:
            missing.append(p.name)
    assert not missing, f"{dotted}: add values for {missing} to PARAM_VALUES or ARGS"
    return tuple(args)


def assert_same(got, want) -> None:
    if isinstance(want, TensorDict):
        assert isinstance(got, TensorDict), type(got)
        assert got.batch_size == want.batch_size
        assert set(got.keys(True, True)) == set(want.keys(True, True))
        for key in want.keys(True, True):
            g, w = got.get(key), want.get(key)
            if isinstance(w, torch.Tensor):
                torch.testing.assert_close(g, w, equal_nan=True)
            else:
                assert g == w
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want, equal_nan=True)
    else:
        assert got == want


@pytest.mark.parametrize("op, item", ITEMS, ids=IDS)
def test_dispatch_entry(op: Op, item: str) -> None:
    dotted, params = split_torch_function(item)
    fn = eval(dotted, {"torch": torch})
    assert fn in TORCH_FUNCTIONS
    kind = "int" if "bitwise" in dotted or "logical" in dotted else "float"
    td = make(0, kind)
    if op.signature.receiver == "cls":  # torch.stack(tds, dim): the classmethod
        tds = [make(0, kind), make(1, kind)]
        want = getattr(TensorDict, op.name)(tds, 0)
        got = fn(tds, 0)
        assert_same(got, want)
        return
    if op.tests.calls and params is None and op.form is not Form.FUNCTION:
        checked = 0
        batch = batch_size(op, (4, 3))
        for call in op.tests.calls:
            td = make(0, kind, batch)
            try:
                args, kwargs = arguments(call.args, td, other=make(1, kind, batch))
                got = fn(td.clone(), *args, **kwargs)
            except TypeError:  # an argument form torch's own signature does not take
                continue
            assert_same(got, getattr(td.clone(), op.name)(*args, **kwargs))
            checked += 1
        assert checked, f"{dotted}(td, ...) took none of the calls"
        return
    args = tuple(prepare(a, 0, kind) for a in call_args(op, dotted))
    torch.manual_seed(0)
    if op.form is not Form.FUNCTION:
        want = getattr(td.clone(), op.name)(*args)
    else:
        want = None  # function-only: the torch function is the op
    torch.manual_seed(0)
    if params is None:
        got = fn(td.clone(), *args)
    else:  # a call pattern: the positional arguments by name, self the tensordict
        named = dict(zip([p.name for p in op.signature.params], args), self=td.clone())
        got = fn(*[named.pop(p) for p in params], **named)
    if want is not None:
        assert_same(got, want)
    else:
        assert isinstance(got, TensorDict) and got.batch_size == td.batch_size


def test_every_required_function_dispatches() -> None:
    required = [
        torch.stack, torch.cat, torch.unbind, torch.split, torch.chunk, torch.where,
        torch.permute, torch.reshape, torch.squeeze, torch.unsqueeze, torch.flatten,
        torch.unflatten, torch.gather, torch.clone, torch.zeros_like, torch.ones_like,
        torch.empty_like, torch.full_like, torch.rand_like, torch.randn_like,
        torch.abs, torch.add, torch.maximum, torch.mul, torch.exp, torch.clamp,
    ]  # fmt: skip
    missing = [f.__name__ for f in required if f not in TORCH_FUNCTIONS]
    assert not missing


def test_functions_without_an_entry_are_refused() -> None:
    with pytest.raises(TypeError):
        torch.cumsum(make(), 0)
    with pytest.raises(TypeError):  # the tensordict is not where torch.add expects it
        torch.add(torch.ones(4, 3, 2), make())


def test_where_forms() -> None:
    td, other = make(0), make(1)
    want = td.where(MASK, other)
    assert_same(torch.where(MASK, td, other), want)
    assert_same(torch.where(MASK, td, other=other), want)
    assert_same(torch.where(condition=MASK, input=td, other=other), want)
    assert_same(torch.where(MASK, td, 0.0), td.where(MASK, 0.0))


# --------------------------------------------------------------------------------------
# Stacking.
# --------------------------------------------------------------------------------------


def seed_tds():
    return [
        TensorDict(
            {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
            batch_size=[3, 4],
        )
        for _ in range(2)
    ]


def test_seed_samples() -> None:
    tensordicts = seed_tds()
    stack_tensordict = torch.stack(tensordicts, 1)
    assert type(stack_tensordict) is TensorDict  # dense
    assert stack_tensordict.shape == torch.Size([3, 2, 4])
    assert stack_tensordict["key 1"].shape == torch.Size([3, 2, 4, 5])
    cat_tensordict = torch.cat(tensordicts, 0)
    assert cat_tensordict.shape == torch.Size([6, 4])
    assert cat_tensordict["key 1"].shape == torch.Size([6, 4, 5])

    def foo():
        data = TensorDict({}, batch_size=[])
        data["a"] = torch.randn(3)
        data["b"] = TensorDict({"c": torch.zeros(2)}, batch_size=[])
        return data

    data = torch.stack([foo() for _ in range(10)])
    assert data.batch_size == (10,) and data["a"].shape == (10, 3)
    assert data["b"].batch_size == (10,) and data["b", "c"].shape == (10, 2)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack_matches_torch_leaf_by_leaf(dim) -> None:
    tds = [make(i) for i in range(3)]
    out = torch.stack(tds, dim)
    d = dim % 3
    assert out.batch_size == torch.Size([4, 3])[:d] + (3,) + torch.Size([4, 3])[d:]
    assert out["sub"].batch_size == out.batch_size + (2,)
    for key in ("a", ("sub", "c"), ("sub", "d")):
        torch.testing.assert_close(out[key], torch.stack([td[key] for td in tds], d))
    assert_same(TensorDict.stack(tds, dim), out)
    assert_same(tensordict.stack(tds, dim), out)
    assert_same(torch.stack(tuple(tds), dim=dim), out)


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_matches_torch_leaf_by_leaf(dim) -> None:
    tds = [make(0), make(1)[:2] if dim in (0, -2) else make(1)[:, :1]]
    out = torch.cat(tds, dim)
    d = dim % 2
    for key in ("a", ("sub", "c"), ("sub", "d")):
        torch.testing.assert_close(out[key], torch.cat([td[key] for td in tds], d))
    assert out["sub"].batch_size == out.batch_size + (2,)
    assert_same(TensorDict.cat(tds, dim), out)
    assert_same(tensordict.cat(tds, dim), out)
    assert_same(torch.concat(tds, dim), out)


def test_stack_of_non_contiguous_inputs() -> None:
    base = make(3)
    tds = [base[::2], base[1::2]]
    assert not tds[0]["a"].is_contiguous()
    out = torch.stack(tds, 1)
    torch.testing.assert_close(out["sub", "c"], torch.stack([t["sub", "c"] for t in tds], 1))
    permuted = TensorDict(a=torch.rand(3, 4, 2).permute(1, 0, 2), batch_size=[4, 3])
    assert torch.cat([permuted, permuted], 1).batch_size == (4, 6)


def test_stack_and_cat_out() -> None:
    tds = [make(0), make(1)]
    expected = torch.stack(tds, 1)
    out = expected.clone().zero_()
    assert torch.stack(tds, 1, out=out) is out
    assert_same(out, expected)
    cat_out = torch.cat(tds, 0).zero_()
    assert TensorDict.cat(tds, 0, out=cat_out) is cat_out
    assert_same(cat_out, torch.cat(tds, 0))


def test_stack_names_the_missing_key() -> None:
    td = make(0)
    other = make(1)
    del other["sub", "d"]
    with pytest.raises(KeyError) as info:
        torch.stack([td, other], 0)
    assert "'d'" in str(info.value) and "tensordict 1" in str(info.value)
    extra = make(1)
    extra["zzz"] = torch.zeros(4, 3)
    with pytest.raises(KeyError, match="zzz"):
        torch.cat([td, extra], 0)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: torch.stack([make(0), make(1)[:2]]), RuntimeError, ["same batch_size", "[2, 3]", "[4, 3]"]),
        (lambda: torch.cat([make(0), make(1)[:, :2]], 0), RuntimeError, ["but at dim 0", "[4, 2]"]),
        (lambda: torch.stack([make(0), make(1)], 3), IndexError, ["stack()", "dim=3"]),
        (lambda: torch.cat([make(0), make(1)], 2), IndexError, ["cat()", "dim=2"]),
        (lambda: TensorDict.stack([], 0), ValueError, ["non-empty"]),
        (lambda: TensorDict.stack(make(0), 0), TypeError, ["sequence"]),
        (lambda: TensorDict.cat([make(0), torch.zeros(4, 3)], 0), TypeError, ["item 1"]),
    ],
)
def test_stacking_errors(call, error, words) -> None:
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_lazy_legacy_hook() -> None:
    set_lazy_legacy = getattr(tensordict, "set_lazy_legacy", None)
    if set_lazy_legacy is None or not hasattr(tensordict, "LazyStackedTensorDict"):
        pytest.skip("this build has no lazy stacks")
    tds = [make(0), make(1)]
    with set_lazy_legacy(True):
        lazy = torch.stack(tds, 0)
    assert isinstance(lazy, tensordict.LazyStackedTensorDict)
    assert type(torch.stack(tds, 0)) is TensorDict  # dense again


# --------------------------------------------------------------------------------------
# torch.testing.assert_close
# --------------------------------------------------------------------------------------


def test_assert_close_compares_leaf_by_leaf() -> None:
    td = make(0)
    torch.testing.assert_close(td, td.clone())
    changed = td.clone()
    changed["sub", "c"][0, 0, 0, 0] += 1
    with pytest.raises(AssertionError, match="sub"):
        torch.testing.assert_close(td, changed)
    with pytest.raises(AssertionError, match="keys"):
        torch.testing.assert_close(td, td.exclude("a"))
