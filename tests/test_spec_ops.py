"""Spec-driven tests: every entry of ``spec/*.yaml`` checked against torch, leaf by leaf.

One parametrized test walks the entries of the leaf-wise families (pointwise, binary,
cast). For each op it builds dense and nested tensordicts with float, int, bool and
mixed leaves (plus a non-tensor string entry), calls the generated method and compares
every leaf with what torch gives for that leaf: the torch function of the op's name
(``torch.erfinv(x)``), or the tensor method of that name (``x.float()``,
``x.__rtruediv__(other)``); an op whose name is neither, or whose torch function takes
its operands otherwise, says what torch does in its entry (``tests: oracle``: ``x %
other``). The oracle never reads the entry's own expressions, so a wrong ``leaf`` fails. Where torch
rejects a leaf, the tensordict op must raise torch's error. The in-place form is
checked against the out-of-place one: the same values where they fit the stored dtype,
an error where they do not. Binary ops are checked with tensordict, tensor and number
operands, and with operands whose keys do not match. The foreach fast path and the
per-leaf fallback are both exercised. (Every ``example`` runs as a doctest in
``test_spec_examples.py``.)
"""

from __future__ import annotations

import inspect

import pytest
import torch
from spec_cases import SPEC, oracle

import tensordict._ops as ops_module
from codegen.model import Op
from tensordict import TensorDict

# The leaf-wise families (same keys and batch size in, out); the others have their own
# spec-driven suites (tests/test_spec_reduction.py, tests/test_spec_shape.py, ...).
LEAFWISE_FAMILIES = ("pointwise", "binary", "cast")
OPS = [op for op in SPEC.ops() if op.family in LEAFWISE_FAMILIES]

PROFILES = ("float", "int", "bool", "mixed")
STRUCTURES = ("dense", "nested")
OPERAND_KINDS = ("td", "tensor", "number")
# Values for required parameters that are neither operands nor have defaults.
REQUIRED_ARGS = {"dst_type": torch.float64}


# --------------------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------------------


def _leaf(kind: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    if kind == "float":
        # in (0.1, 0.9): inside the domain of every unary op of the spec
        return torch.rand(shape, generator=gen) * 0.8 + 0.1
    if kind == "int":
        return torch.randint(1, 5, shape, generator=gen)
    if kind == "bool":
        return torch.rand(shape, generator=gen) > 0.5
    raise AssertionError(kind)


def make_td(structure: str, profile: str, seed: int) -> TensorDict:
    """Batch size [3]; a (3,) tensor operand lines up with the batch dim."""
    gen = torch.Generator().manual_seed(seed)
    kinds = ("float", "int", "bool") if profile == "mixed" else (profile,) * 3
    if structure == "dense":
        return TensorDict(
            a=_leaf(kinds[0], (3, 4), gen),
            b=_leaf(kinds[1], (3, 2, 4), gen),
            c=_leaf(kinds[2], (3, 4), gen),
            s="hello",
            batch_size=[3],
        )
    return TensorDict(
        a=_leaf(kinds[0], (3, 4), gen),
        sub={
            "c": _leaf(kinds[1], (3, 2, 4), gen),
            "deeper": {"e": _leaf(kinds[2], (3, 4), gen)},
        },
        s="hello",
        batch_size=[3],
    )


def make_operand(kind: str, structure: str, profile: str, seed: int):
    if kind == "td":
        return make_td(structure, profile, seed)
    gen = torch.Generator().manual_seed(seed)
    scalar_kind = "float" if profile == "mixed" else profile
    if kind == "tensor":
        return _leaf(scalar_kind, (3,), gen)  # the batch shape: see per_leaf
    return {"float": 0.75, "int": 2, "bool": True}[scalar_kind]


def tensor_keys(td: TensorDict) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def per_leaf(value, key, leaf=None):
    """The operand's value for the leaf at ``key``: a tensor lines up with the batch
    dims (a trailing singleton dim for each of the leaf's feature dims), as in 0.15.3."""
    if isinstance(value, TensorDict):
        return value.get(key)
    if isinstance(value, torch.Tensor) and value.ndim and leaf is not None:
        return value.reshape(value.shape + (1,) * (leaf.ndim - value.ndim))
    return value


# --------------------------------------------------------------------------------------
# Calling an op and computing what it should give.
# --------------------------------------------------------------------------------------


def call(td, name: str, signature, operands: tuple[str, ...], values: dict, **extra):
    """Call ``td.<name>`` with ``values`` for the operands, defaults elsewhere."""
    args, kwargs = [], {}
    for param in signature.params:
        if param.name in values:
            value = values[param.name]
        elif param.name in extra:
            value = extra[param.name]
        elif param.name in REQUIRED_ARGS:
            value = REQUIRED_ARGS[param.name]
        elif param.default is not None:
            continue
        else:
            raise AssertionError(f"no value for {param.name!r} of {name}")
        if param.kind == "keyword_only":
            kwargs[param.name] = value
        else:
            args.append(value)
    return getattr(td, name)(*args, **kwargs)


def expected_leaves(op: Op, td, values: dict) -> dict:
    """``{key: tensor}``: torch's result for each leaf (the operands' matching values).

    Raises whatever torch raises for the first leaf (in key order) it rejects.
    """
    fn = oracle(op)
    extra = [REQUIRED_ARGS[p.name] for p in op.signature.params if p.name in REQUIRED_ARGS]
    out = {}
    for key in tensor_keys(td):
        leaf = td.get(key)
        operands = [per_leaf(values[name], key, leaf) for name in getattr(op, "operands", ())]
        out[key] = fn(td.get(key).clone(), *operands, *extra)
    return out


def outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - compared with what the op raises
        return None, exc


def assert_same_error(expected: BaseException, fn) -> None:
    with pytest.raises(type(expected)) as info:
        fn()
    assert str(info.value) == str(expected)


def expected_call(op: Op) -> str:
    """How the tests compute the expected leaf, for messages: ``torch.erfinv(x)``."""
    if op.tests.oracle is not None:
        return f"{op.tests.oracle} (the entry's tests: oracle)"
    fn = getattr(torch, op.name, None) if not op.name.startswith("__") else None
    if isinstance(fn, torch.dtype):
        return f"x.to(torch.{op.name})"
    if callable(fn) and not isinstance(fn, type):
        return f"torch.{op.name}(x, ...)"
    return f"x.{op.name}(...)"


# The operators that compare the non-tensor entries of two tensordicts (spec/binary.yaml).
_COMPARE_NON_TENSOR = {"__eq__", "__ne__", "__xor__", "__or__", "__rxor__", "__ror__"}


def assert_result(
    result, td, expected: dict, *, inplace: bool = False, form: str = "", op: Op | None = None
) -> None:
    """``form``: which form of ``op`` made ``result`` (out-of-place, in-place), named
    with the expected call when a value differs."""
    assert type(result) is type(td)
    assert result.batch_size == td.batch_size
    assert set(result.keys(True, True)) - {"s"} == set(td.keys(True, True))
    if op is not None and op.name in _COMPARE_NON_TENSOR and isinstance(
        result.get("s"), torch.Tensor
    ):
        # a comparison with another tensordict compares its non-tensor entries too
        # (booleans of the batch size, as 0.15.3)
        assert result["s"].dtype == torch.bool and result["s"].shape == td.batch_size
    else:
        assert result["s"] == "hello"
    if op is None:
        context = ""
    elif inplace:
        context = (f"the in-place form ({op.inplace.name}, {op.inplace.location}) differs "
                   f"from the out-of-place {op.name} cast to the stored dtype: ")
    else:
        context = (f"the {form or 'out-of-place'} form of {op.name} ({op.location}: 'leaf' "
                   f"{op.leaf!r}) differs from {expected_call(op)} leaf by leaf: "
                   if hasattr(op, "leaf") else f"{op.name} differs from {expected_call(op)}: ")
    for key, value in expected.items():
        got = result.get(key)
        assert isinstance(got, torch.Tensor), key
        torch.testing.assert_close(
            got, value, equal_nan=True, msg=lambda m: f"{context}{key}: {m}"
        )
    if not inplace:
        assert result is not td


class _NoForeach:
    """Make every generated op take its per-leaf path."""

    def __init__(self, monkeypatch):
        monkeypatch.setattr(ops_module, "try_foreach", lambda fn, leaves, *a, **k: None)
        monkeypatch.setattr(
            ops_module, "try_foreach_", lambda fn, leaves, *a, **k: False
        )


# --------------------------------------------------------------------------------------
# The checks.
# --------------------------------------------------------------------------------------


def _cases(op: Op):
    """(structure, profile, operand kind or None) combinations for an op."""
    for structure in STRUCTURES:
        for profile in PROFILES:
            if operands(op):
                for kind in OPERAND_KINDS:
                    yield structure, profile, kind
            else:
                yield structure, profile, None


def operand_values(op: Op, kind, structure: str, profile: str, seed: int) -> dict:
    return {
        name: make_operand(kind, structure, profile, 1000 + seed + i)
        for i, name in enumerate(getattr(op, "operands", ()))
    }


def check_out_of_place(op: Op) -> list[tuple]:
    """Returns the cases torch accepted (every op must accept some)."""
    accepted = []
    for seed, (structure, profile, kind) in enumerate(_cases(op)):
        td = make_td(structure, profile, seed)
        values = operand_values(op, kind, structure, profile, seed)
        expected, error = outcome(lambda: expected_leaves(op, td, values))
        run = lambda: call(td, op.name, op.signature, operands(op), values)  # noqa: E731
        if error is not None:
            assert_same_error(error, run)
            continue
        accepted.append((structure, profile, kind))
        assert_result(run(), td, expected, op=op)
        if op.family == "cast":
            keep = lambda t: t.dtype == torch.float32  # noqa: E731
            filtered = {
                k: (v if keep(td.get(k)) else td.get(k)) for k, v in expected.items()
            }
            result = call(td, op.name, op.signature, (), {}, cast_filter=keep)
            assert_result(result, td, filtered)
            for key in tensor_keys(td):
                if not keep(td.get(key)):
                    assert result.get(key) is td.get(key)
    return accepted


def operands(op: Op) -> tuple[str, ...]:
    return getattr(op, "operands", ())


def check_inplace(op: Op) -> None:
    """The in-place form against the out-of-place one: the same values written into
    the stored tensors where they fit the stored dtype, an error where they do not."""
    ip = op.inplace
    for seed, (structure, profile, kind) in enumerate(_cases(op)):
        td = make_td(structure, profile, seed)
        values = operand_values(op, kind, structure, profile, seed)
        out_of_place, error = outcome(
            lambda: call(td, op.name, op.signature, operands(op), values)
        )
        target = td.clone()
        run = lambda: call(target, ip.name, ip.signature, operands(op), values)  # noqa: E731
        fits = error is None and all(
            torch.can_cast(out_of_place.get(k).dtype, td.get(k).dtype)
            for k in tensor_keys(td)
        )
        if not fits:
            with pytest.raises(Exception):  # noqa: B017 - torch's error, whichever it is
                run()
            continue
        stored = {key: target.get(key) for key in tensor_keys(target)}
        result = run()
        assert result is target
        expected = {k: out_of_place.get(k).to(td.get(k).dtype) for k in tensor_keys(td)}
        assert_result(result, td, expected, inplace=True, op=op)
        for key, tensor in stored.items():
            assert target.get(key) is tensor, f"{key}: the stored tensor was replaced"


def check_aliases(op: Op) -> None:
    aliases = [(a, op.name) for a in op.dunders]
    if op.inplace is not None:
        aliases += [(a, op.inplace.name) for a in op.inplace.dunders]
    for alias, target in aliases:
        for kind in OPERAND_KINDS if alias.binary else (None,):
            profile = "int" if "and" in alias.name or "or" in alias.name else "float"
            td = make_td("nested", profile, 7)
            args = [make_operand(kind, "nested", profile, 8)] if alias.binary else []
            want = getattr(td.clone(), target)(*args)
            got = getattr(td.clone(), alias.name)(*args)
            assert type(got) is type(td)
            for key in tensor_keys(td):
                torch.testing.assert_close(got.get(key), want.get(key), equal_nan=True)
        if alias.binary:
            assert getattr(td, alias.name)("not an operand") is NotImplemented
            assert getattr(td, alias.name)(None) is NotImplemented


def check_operator_entry(op: Op) -> None:
    """Operator entries (``__eq__``, ``__rpow__``...) refuse foreign operands."""
    if op.is_dunder and operands(op):
        td = make_td("dense", "float", 3)
        assert getattr(td, op.name)("not an operand") is NotImplemented
        assert getattr(td, op.name)(None) is NotImplemented


def check_mismatched_keys(op: Op, profile: str) -> None:
    names = [(op.name, op.signature)]
    if op.inplace is not None:
        names.append((op.inplace.name, op.inplace.signature))
    for name, signature in names:
        td = make_td("nested", profile, 11)
        extra = make_td("nested", profile, 12)
        extra["sub", "zzz_extra"] = torch.zeros(3, 4)
        missing = make_td("nested", profile, 13).exclude(("sub", "deeper", "e"))
        for operand, key in ((extra, "zzz_extra"), (missing, "'e'")):
            values = {n: operand for n in op.operands}
            with pytest.raises(KeyError) as info:
                call(td.clone(), name, signature, op.operands, values)
            assert key in str(info.value), str(info.value)
        if signature.has("default"):
            values = {n: missing for n in op.operands}
            result = call(td, name, signature, op.operands, values, default=1)
            filled = missing.clone()
            filled["sub", "deeper", "e"] = torch.full_like(
                td.get(("sub", "deeper", "e")), 1
            )
            want = call(
                td, name, signature, op.operands, {n: filled for n in op.operands}
            )
            for key in tensor_keys(td):
                torch.testing.assert_close(result.get(key), want.get(key))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("op", OPS, ids=[f"{op.family}.{op.name}" for op in OPS])
def test_spec_entry(op: Op, monkeypatch) -> None:
    assert oracle(op), (
        f"torch has no function or tensor method named {op.name!r}: say what torch "
        f"does in its entry ({op.location}: 'tests: oracle')"
    )
    # foreach path (where the spec names a foreach function), then per-leaf path
    accepted = check_out_of_place(op)
    assert accepted, f"torch accepted no test case for {op.name}"
    if op.inplace is not None:
        check_inplace(op)
    check_aliases(op)
    check_operator_entry(op)
    if operands(op):
        profile = next(p for s, p, k in accepted if s == "nested" and k == "td")
        check_mismatched_keys(op, profile)

    with monkeypatch.context() as patch:
        _NoForeach(patch)
        check_out_of_place(op)
        if op.inplace is not None:
            check_inplace(op)


def test_every_method_is_generated() -> None:
    from tensordict._generated.tensordict_ops import TensorDictGeneratedOps

    for name in SPEC.method_names():
        assert name in TensorDictGeneratedOps.__dict__, name
        # (getattr_static: a classmethod, e.g. stack, is the same descriptor)
        found = inspect.getattr_static(TensorDict, name)
        assert found is TensorDictGeneratedOps.__dict__[name], name
