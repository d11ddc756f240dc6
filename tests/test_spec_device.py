"""Spec-driven tests of the device family (``spec/device.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method (or, for ``method: false`` entries,
the torch function) with each argument form of ``CASES`` on a dense tensordict, a
nested one (whose nested tensordicts have more batch dims than their parent) and a
non-contiguous one (strided, transposed leaves). The oracle is the entry's ``leaf``
evaluated leaf by leaf on a copy of each leaf, with the names the entry's rules define
(the new batch size, the target device and dtype): the result must have the input's
keys, the rule's batch size (every nested level keeping its extra dims) and device, and
those leaves. ``result: in_place`` entries run their statement on a clone; the
collectors (``numpy``, ``tolist``) are checked against an independent walk.

CUDA and pinned memory are checked where a GPU is present (skipped otherwise). The
examples run in ``test_spec_examples.py``. An entry without cases fails
``test_every_entry_has_cases``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

import tensordict._ops as _ops
from codegen.loader import load_spec, split_torch_function
from codegen.model import Op
from codegen.schema import BATCH_RULES, DEVICE_RULES
from tensordict import NO_DEFAULT, TensorDict

SPEC = load_spec(ROOT / "spec")
OPS = [op for op in SPEC.ops() if op.family == "device"]
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")
CUDA = torch.cuda.is_available()


def A(*args, **kwargs):
    return args, kwargs


def _nested_key(td):
    for key, value in td.items():
        if isinstance(value, TensorDict):
            return key
    return "a"


# Argument forms per op; "td" stands for a tensordict shaped like the input, "td_cpu"
# for one on the cpu device, a callable computes the case from the input.
CASES = {
    "to": [
        A(torch.float64),
        A("cpu"),
        A(torch.device("cpu"), torch.float16),
        A(torch.zeros(1, dtype=torch.int32)),
        A(dtype=torch.float32, non_blocking=True),
        A("td_cpu"),
        A(device="cpu", dtype=torch.bfloat16),
    ],
    "cpu": [A(), A(non_blocking=True)],
    "cuda": [A(), A(0)],
    "pin_memory": [A(), A(inplace=True)],
    "pin_memory_": [A()],
    "share_memory_": [A()],
    "detach": [A()],
    "requires_grad_": [A(), A(False)],
    "zero_": [A()],
    "fill_": [A("a", 2.5), lambda td: A(_nested_key(td), 1)],
    "zero_grad": [A(), A(set_to_none=False)],
    "clone": [A(), A(False), A(memory_format=torch.contiguous_format)],
    "as_tensor": [A()],
    "numpy": [A()],
    "tolist": [
        A(),
        A(convert_tensors=True),
        A(convert_nodes=False),
        A(tolist_first=True),
        A(convert_tensors="numpy", tolist_first=True),
    ],
    "record_stream": [lambda td: A(torch.cuda.current_stream())],
    "new_zeros": [A(2), A(2, 5), A([2]), A(torch.Size([1, 2])), A(2, dtype=torch.float64), A(3, device="cpu")],
    "new_ones": [A(2), A((2, 3)), A(1, dtype=torch.int32)],
    "new_empty": [A(2), A(2, 5, dtype=torch.float16)],
    "new_full": [A([2], 7.5), A((2, 3), 1, dtype=torch.int32), A(2, True)],
    "new_tensor": [A("td"), A("td", dtype=torch.float64)],
    "zeros_like": [A(), A(dtype=torch.float64), A(device="cpu")],
    "ones_like": [A(), A(dtype=torch.int32)],
    "empty_like": [A()],
    "full_like": [A(3), A(2.5, dtype=torch.float64)],
    "rand_like": [A(), A(dtype=torch.float64)],
    "randn_like": [A(), A(dtype=torch.float64)],
}
# ops torch accepts on floating (and complex) leaves only
FLOATS_ONLY = {"requires_grad_", "rand_like", "randn_like"}


# --------------------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------------------


def make(structure: str, seed: int = 0, floats_only: bool = False) -> TensorDict:
    """Batch size [4, 3]; float, int and bool leaves with feature dims; a string."""
    g = torch.Generator().manual_seed(seed)

    def ints(*shape):
        if floats_only:
            return torch.rand(*shape, generator=g, dtype=torch.float64)
        return torch.randint(0, 9, shape, generator=g)

    def bools(*shape):
        if floats_only:
            return torch.rand(*shape, generator=g)
        return torch.rand(*shape, generator=g) > 0.5

    if structure == "dense":
        return TensorDict(
            a=torch.rand(4, 3, 2, generator=g),
            b=ints(4, 3),
            c=bools(4, 3, 5),
            s="hello",
            batch_size=[4, 3],
        )
    if structure == "nested":
        deeper = TensorDict(e=ints(4, 3, 2), batch_size=[4, 3, 2])
        sub = TensorDict(
            c=torch.rand(4, 3, 2, 5, generator=g), deeper=deeper, batch_size=[4, 3, 2]
        )
        return TensorDict(
            a=torch.rand(4, 3, 2, generator=g), sub=sub, s="hello", batch_size=[4, 3]
        )
    big = TensorDict(
        a=torch.rand(3, 8, 2, generator=g).transpose(0, 1),
        b=bools(3, 8, 6).permute(1, 0, 2),
        sub=TensorDict(c=ints(8, 3, 2, 2), batch_size=[8, 3, 2]),
        s="hello",
        batch_size=[8, 3],
    )
    return big[::2]


def tensor_keys(td) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def _default(param):
    if param.default is None:
        return None
    if param.default == "NO_DEFAULT":
        return NO_DEFAULT
    try:
        return ast.literal_eval(param.default)
    except ValueError:
        return eval(param.default, {"torch": torch})


def bind(op: Op, case, td, structure: str, seed: int):
    """``(args, kwargs, values)``: the call and every parameter's value by name."""
    args, kwargs = case(td) if callable(case) else case
    fill = {
        "td": lambda: make(structure, seed + 50),
        "td_cpu": lambda: make(structure, seed + 50).to("cpu"),
    }
    args = tuple(fill[a]() if isinstance(a, str) and a in fill else a for a in args)
    kwargs = {k: fill[v]() if isinstance(v, str) and v in fill else v for k, v in kwargs.items()}
    values = {}
    rest = list(args)
    for p in op.signature.params:
        if p.kind == "var_positional":
            values[p.name], rest = tuple(rest), []
        elif p.kind == "var_keyword":
            values[p.name] = {k: v for k, v in kwargs.items() if k not in op.signature.names}
        elif p.kind != "keyword_only" and rest:
            values[p.name] = rest.pop(0)
        else:
            values[p.name] = kwargs.get(p.name, _default(p))
    return args, kwargs, values


def run(op: Op, td, args, kwargs):
    if op.method:
        return getattr(td, op.name)(*args, **kwargs)
    fn = eval(split_torch_function(op.torch_functions[0])[0], {"torch": torch})
    return fn(td, *args, **kwargs)


def rule_defines(op: Op, td, values: dict) -> dict:
    """What the entry's rules define, computed by calling them as the method does."""
    env = dict(values, torch=torch, _ops=_ops)
    out = {}
    rule = BATCH_RULES.get(op.batch_size)
    if rule is not None:
        args = [eval(a, env) for a in op.batch_args]
        got = getattr(_ops, f"{op.batch_size}_rule")(td.batch_size, *args, op.name)
        got = got if len(rule.defines) > 1 else (got,)
        out.update(zip(rule.defines, got))
    if op.device_rule is not None:
        rule = DEVICE_RULES[op.device_rule]
        args = [eval(a, env) for a in op.device_args]
        got = getattr(_ops, f"{op.device_rule}_device_rule")(td.device, *args, op.name)
        got = got if len(rule.defines) > 1 else (got,)
        out.update(zip(rule.defines, got))
    return out


def needs_gpu(exc: BaseException) -> bool:
    """torch's errors for CUDA work on a machine without a GPU."""
    text = str(exc)
    return any(
        words in text
        for words in (
            "not compiled with CUDA",
            "Cannot access accelerator device",
            "no NVIDIA driver",
        )
    )


# --------------------------------------------------------------------------------------
# Oracles.
# --------------------------------------------------------------------------------------


def expected_leaves(op: Op, td, values: dict, defines: dict, *, statement=False) -> dict:
    env = dict(values, torch=torch, _ops=_ops, self=td)
    env.update(defines)
    out = {}
    for key in tensor_keys(td):
        x = td.get(key).clone()
        local = dict(env, x=x)
        for operand in op.operands:
            value = values[operand]
            local[operand] = value.get(key) if isinstance(value, TensorDict) else value
        result = eval(op.leaf, local)
        out[key] = x if statement else result
    return out


def compare_leaves(result, expected: dict, *, values_too: bool = True) -> None:
    for key, want in expected.items():
        got = result.get(key)
        assert isinstance(got, torch.Tensor), key
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert got.device == want.device, key
        if values_too:
            torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{key}: {m}")


def check_structure(result, td, defines: dict) -> None:
    assert isinstance(result, TensorDict)
    assert set(result.keys(True, True)) == set(td.keys(True, True))
    assert result.get("s") == "hello"
    batch = defines.get("new_batch_size", td.batch_size)
    assert result.batch_size == batch
    root = td.batch_dims
    for key in td.keys(True, False):
        value = td.get(key)
        if isinstance(value, TensorDict):
            assert result.get(key).batch_size == batch + value.batch_size[root:], key
    device = defines.get("new_device", NO_DEFAULT)
    assert result.device == (td.device if device is NO_DEFAULT else device)


def same_data(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same_data, a, b))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, TensorDict):
        return isinstance(b, TensorDict) and same_data(a.to_dict(), b.to_dict())
    if isinstance(a, (np.ndarray, np.generic)):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def numpy_oracle(td) -> dict:
    return {
        k: numpy_oracle(v) if isinstance(v, TensorDict) else v.numpy() if isinstance(v, torch.Tensor) else v
        for k, v in td.items()
    }


def tolist_oracle(td, convert_nodes=True, convert_tensors=False, tolist_first=False, as_linked_list=False):
    def conv(x):
        if convert_tensors == "numpy":
            return x.numpy()
        return x.tolist() if convert_tensors else x

    def as_dict(level):
        out = {}
        for k, v in level.items():
            if isinstance(v, TensorDict):
                out[k] = element(v) if tolist_first and v.batch_dims else as_dict(v)
            elif isinstance(v, torch.Tensor):
                out[k] = conv(v)
            else:
                out[k] = v
        return out

    def element(level):
        if level.batch_dims:
            return [element(level[i]) for i in range(level.batch_size[0])]
        return level if not convert_nodes else as_dict(level)

    return element(td)


# --------------------------------------------------------------------------------------
# The checks.
# --------------------------------------------------------------------------------------


def test_every_entry_has_cases() -> None:
    assert OPS, "no device entries in the spec"
    missing = [op.name for op in OPS if not CASES.get(op.name)]
    assert not missing, f"add argument cases for {missing} to CASES"


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry(op: Op, structure: str) -> None:
    for seed, case in enumerate(CASES[op.name]):
        td = make(structure, seed, op.name in FLOATS_ONLY)
        try:
            args, kwargs, values = bind(op, case, td, structure, seed)
            check_case(op, td, args, kwargs, values)
        except (RuntimeError, AssertionError, TypeError) as exc:
            if not CUDA and needs_gpu(exc):
                pytest.skip(f"{op.name} needs a GPU: {exc}")
            raise


def check_case(op: Op, td, args, kwargs, values) -> None:
    defines = rule_defines(op, td, values)
    if defines.get("unchanged"):
        assert run(op, td, args, kwargs) is td
        return
    if op.result == "in_place":
        target = td.clone()
        stored = {k: target.get(k) for k in tensor_keys(target)}
        expected = expected_leaves(op, td, values, defines, statement=True)
        if op.target is not None:  # only the leaves at the target key change
            prefix = values[op.target]
            prefix = prefix if isinstance(prefix, tuple) else (prefix,)
            for key in expected:
                path = key if isinstance(key, tuple) else (key,)
                if path[: len(prefix)] != prefix:
                    expected[key] = td.get(key)
        assert run(op, target, args, kwargs) is target
        compare_leaves(target, expected)
        for key, tensor in stored.items():
            assert target.get(key) is tensor, f"{key}: the stored tensor was replaced"
        return
    if op.result in ("nested_dict", "nested_lists"):
        result = run(op, td, args, kwargs)
        if op.result == "nested_dict":
            assert same_data(result, numpy_oracle(td))
        else:
            flags = {k: values[k] for k in ("convert_nodes", "convert_tensors", "tolist_first")}
            assert same_data(result, tolist_oracle(td, **flags))
        return
    torch.manual_seed(0)
    expected = expected_leaves(op, td, values, defines)
    torch.manual_seed(0)
    target = td.clone() if op.result == "replace" or values.get("inplace") else td
    result = run(op, target, args, kwargs)
    if op.result == "replace" or values.get("inplace"):
        assert result is target
    check_structure(result, td, defines)
    compare_leaves(result, expected, values_too="empty" not in op.leaf)


# --------------------------------------------------------------------------------------
# Behaviour the oracle does not cover.
# --------------------------------------------------------------------------------------


def test_to_forms_and_device() -> None:
    td = make("nested")
    assert td.device is None
    moved = td.to("cpu")
    assert moved.device == torch.device("cpu") and moved["sub"].device == torch.device("cpu")
    assert moved["sub", "deeper"].device == torch.device("cpu")
    assert moved.to("cpu") is moved and moved.cpu() is moved
    assert moved.to(torch.device("cpu")) is moved
    assert td.to(torch.float64)["sub", "deeper", "e"].dtype == torch.float64  # ints too
    assert td.to(torch.float32) is not td
    assert td.to(moved).device == torch.device("cpu")
    as_tensor = td.to(torch.zeros((), dtype=torch.float16))
    assert as_tensor["a"].dtype == torch.float16 and as_tensor.device == torch.device("cpu")
    both = td.to("cpu", torch.float64, non_blocking=True)
    assert both.device == torch.device("cpu") and both["a"].dtype == torch.float64


@pytest.mark.parametrize(
    "args, kwargs, error, word",
    [
        ((3.0,), {}, TypeError, "3.0"),
        (("cpu", "cpu"), {}, TypeError, "positional"),
        ((), {"batch": 2}, TypeError, "batch"),
        ((), {"dtype": "float"}, TypeError, "dtype"),
    ],
)
def test_to_refuses_bad_arguments(args, kwargs, error, word) -> None:
    with pytest.raises(error, match=word):
        make("dense").to(*args, **kwargs)


@pytest.mark.skipif(CUDA, reason="checks the error raised without a GPU")
def test_cuda_without_a_gpu_raises_torchs_error() -> None:
    with pytest.raises((RuntimeError, AssertionError)):
        make("dense").cuda()
    with pytest.raises(ValueError, match="not a CUDA device"):
        make("dense").cuda("cpu")


@pytest.mark.skipif(not CUDA, reason="needs a GPU")
def test_cuda_round_trip() -> None:
    td = make("nested")
    on_gpu = td.to("cuda:0")
    assert on_gpu.device == torch.device("cuda", 0) and on_gpu["sub", "c"].is_cuda
    back = on_gpu.cpu()
    assert back.device == torch.device("cpu")
    torch.testing.assert_close(back["sub", "c"], td["sub", "c"])
    pinned = td.pin_memory()
    assert pinned["a"].is_pinned() and not td["a"].is_pinned()
    assert td.pin_memory_() is td and td["sub", "deeper", "e"].is_pinned()
    on_gpu.record_stream(torch.cuda.current_stream())
    assert td.cuda(0, non_blocking=True).device == torch.device("cuda", 0)


def test_zero_grad_and_requires_grad() -> None:
    td = TensorDict(a=torch.ones(3), sub={"b": torch.ones(3, 2)}, batch_size=[3])
    td.requires_grad_()
    (td["a"].sum() + td["sub", "b"].sum()).backward()
    assert td["sub", "b"].grad is not None
    td.zero_grad(set_to_none=False)
    assert td["a"].grad.eq(0).all() and td["sub", "b"].grad.eq(0).all()
    td.zero_grad()
    assert td["a"].grad is None and td["sub", "b"].grad is None
    assert not td.detach()["a"].requires_grad
    assert td.detach_() is td and not td["a"].requires_grad


def test_share_memory_locks() -> None:
    td = make("nested")
    assert td.share_memory_() is td
    assert td.is_locked and td["sub", "c"].is_shared()
    with pytest.raises(RuntimeError, match="locked"):
        td["new"] = torch.zeros(4, 3)


def test_fill_missing_key_names_it() -> None:
    with pytest.raises(KeyError, match="nope"):
        make("dense").fill_("nope", 1)


def test_clone_shares_nothing_and_copy_shares_leaves() -> None:
    td = make("nested")
    clone = td.clone()
    assert clone["sub", "c"].data_ptr() != td["sub", "c"].data_ptr()
    assert td.clone(recurse=False)["sub", "c"] is td["sub", "c"]
    assert td.copy()["sub", "c"] is td["sub", "c"]
    assert torch.clone(td)["sub", "deeper", "e"].data_ptr() != td["sub", "deeper", "e"].data_ptr()


def test_new_ops_keep_feature_dims_and_take_a_device() -> None:
    td = make("nested")
    out = td.new_zeros(2, device="cpu")
    assert out.device == torch.device("cpu") and out["sub"].batch_size == (2, 2)
    assert out["sub", "c"].shape == (2, 2, 5)
    assert td.new_full(torch.Size([5]), 3)["sub", "deeper", "e"].eq(3).all()
    with pytest.raises(ValueError, match="sizes must be >= 0"):
        td.new_zeros(-1)
    with pytest.raises(TypeError, match="tensor collection"):
        td.new_tensor(torch.zeros(3))


def test_as_tensor_turns_subclasses_into_tensors() -> None:
    class Sub(torch.Tensor):
        pass

    td = TensorDict(a=torch.zeros(3).as_subclass(Sub), batch_size=[3])
    assert type(td.as_tensor()["a"]) is torch.Tensor


def test_tolist_shapes() -> None:
    td = TensorDict(a=torch.arange(6).reshape(2, 3), batch_size=[2, 3])
    assert td.tolist(convert_tensors=True) == [
        [{"a": 0}, {"a": 1}, {"a": 2}],
        [{"a": 3}, {"a": 4}, {"a": 5}],
    ]
    scalar = TensorDict(a=torch.tensor(1.0))
    assert scalar.tolist(convert_tensors=True) == {"a": 1.0}
