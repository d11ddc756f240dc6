"""Spec-driven tests of the device family (``spec/device.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method (or, for ``method: false`` entries,
the torch function) with each argument form of its spec entry (``tests: calls``) on a
dense tensordict, a nested one (whose nested tensordicts have more batch dims than
their parent) and a non-contiguous one (strided, transposed leaves). The oracle is
torch, never the entry's expressions: the tensor method (or torch function) of the
op's name applied leaf by leaf to a copy of each leaf with the call's arguments
(``x.to(torch.float64)``, ``torch.zeros_like(x, dtype=...)``); where the op's
arguments are the tensordict's own (``clone(recurse)``, ``new_zeros(*size)``: the new
batch size followed by each leaf's feature dims), the entry says what torch does
(``tests: oracle``, over the leaf ``x``, its key ``leaf_key``, the input ``td`` and the
op's parameters); ``tests: floating`` gives the op floating-point leaves only. The
result must have the input's keys, the expected batch size (every nested level
keeping its extra dims) and device, and those leaves; in-place ops write them into
the stored tensors; the collectors (``numpy``, ``tolist``) are checked against an
independent walk.

CUDA and pinned memory are checked where a GPU is present (skipped otherwise). The
examples run in ``test_spec_examples.py``. An entry without calls fails
``test_every_entry_has_cases``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from spec_cases import arguments, oracle, ops_of

from codegen.checks import split_torch_function
from codegen.model import Form, Op
from tensordict import NonTensorData, TensorDict, TensorDictBase

OPS = ops_of("device")
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")
CUDA = torch.cuda.is_available()


def _size(args) -> tuple:
    """``new_zeros(2, 5)``, ``new_zeros((2, 5))``: the size."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(args[0])
    return tuple(args)


def _devices(args) -> tuple:
    """``td.to(other)`` moves to ``other``'s device, as ``Tensor.to(tensor)`` does."""
    return tuple(a.device if isinstance(a, TensorDictBase) else a for a in args)


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


def tensor_keys(td) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def run(op: Op, td, args, kwargs):
    if op.form is not Form.FUNCTION:
        return getattr(td, op.name)(*args, **kwargs)
    fn = eval(split_torch_function(op.torch_functions[0])[0], {"torch": torch})
    return fn(td, *args, **kwargs)


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


def expected_leaves(op: Op, td, args, kwargs) -> dict:
    with warnings.catch_warnings():  # torch recommends clone() for new_tensor(tensor)
        warnings.simplefilter("ignore", UserWarning)
        return {
            key: oracle(op, td=td, leaf_key=key)(td.get(key).clone(), *args, **kwargs)
            for key in tensor_keys(td)
        }


def expected_batch_size(op: Op, td, args, kwargs) -> torch.Size:
    if op.name == "new_tensor":
        return (args[0] if args else kwargs["data"]).batch_size
    if op.name.startswith("new_"):
        return torch.Size(_size(args if op.name != "new_full" else args[:1]))
    return td.batch_size


def expected_device(op: Op, td, args, kwargs):
    """The device the call names (as torch parses ``Tensor.to``'s arguments), else the
    input's."""
    if op.name in ("to", "cpu"):
        named = ("cpu",) if op.name == "cpu" else _devices(args)
        device = torch._C._nn._parse_to(*named, **{k: v for k, v in kwargs.items() if k == "device"})[0]
        return device if device is not None else td.device
    if op.name == "cuda":  # td.cuda(index): that CUDA device; td.cuda(): the current one
        index = args[0] if args else kwargs.get("device")
        return torch.device("cuda", torch.cuda.current_device() if index is None else index)
    device = kwargs.get("device")
    return torch.device(device) if device is not None else td.device


def compare_leaves(result, expected: dict, *, values_too: bool = True) -> None:
    for key, want in expected.items():
        got = result.get(key)
        assert isinstance(got, torch.Tensor), key
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert got.device == want.device, key
        if values_too:
            torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{key}: {m}")


def check_structure(result, td, batch, device) -> None:
    assert isinstance(result, TensorDict)
    assert set(result.keys(True, True)) == set(td.keys(True, True))
    assert result["s"] == "hello"
    assert result.batch_size == batch
    root = td.batch_dims
    for key in td.keys(True, False):
        value = td.get(key)
        if isinstance(value, TensorDict):
            assert result.get(key).batch_size == batch + value.batch_size[root:], key
    assert result.device == device


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


def _value(v):
    """A non-tensor entry as stored: items() gives it as NonTensorData (as get())."""
    return v.data if isinstance(v, NonTensorData) else v


def numpy_oracle(td) -> dict:
    return {
        k: numpy_oracle(v) if isinstance(v, TensorDict) else v.numpy() if isinstance(v, torch.Tensor) else _value(v)
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
                out[k] = _value(v)
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
    missing = [op.name for op in OPS if not op.tests.calls]
    assert not missing, f"add 'tests: calls' to {missing} in spec/device.yaml"


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry(op: Op, structure: str) -> None:
    assert oracle(op) or op.name in ("numpy", "tolist"), (
        f"torch has no {op.name!r}: say what it does ({op.location}: 'tests: oracle')"
    )
    for seed, call in enumerate(op.tests.calls):
        td = make(structure, seed, op.tests.floating)
        if op.name == "record_stream" and CUDA:  # a stream records GPU memory only
            td = td.cuda()
        try:
            args, kwargs = arguments(call.args, td, other=make(structure, seed + 50))
            check_case(op, td, args, kwargs)
        except (RuntimeError, AssertionError, TypeError) as exc:
            if not CUDA and needs_gpu(exc):
                pytest.skip(f"{op.name} needs a GPU: {exc}")
            raise


def check_case(op: Op, td, args, kwargs) -> None:
    if op.name in ("to", "cpu") and expected_device(op, td, args, kwargs) == td.device:
        dtype = torch._C._nn._parse_to(*_devices(args), **kwargs)[1]
        if dtype is None or all(td.get(k).dtype == dtype for k in tensor_keys(td)):
            assert run(op, td, args, kwargs) is td  # nothing to move or cast
            return
    if op.result == "in_place":  # written into the stored leaves
        target = td.clone()
        stored = {k: target.get(k) for k in tensor_keys(target)}
        expected = expected_leaves(op, td, args, kwargs)
        assert run(op, target, args, kwargs) is target
        compare_leaves(target, expected)
        for key, tensor in stored.items():
            assert target.get(key) is tensor, f"{key}: the stored tensor was replaced"
        return
    if op.name in ("numpy", "tolist"):
        result = run(op, td, args, kwargs)
        if op.name == "numpy":
            assert same_data(result, numpy_oracle(td))
        else:
            assert same_data(result, tolist_oracle(td, **kwargs))
        return
    torch.manual_seed(0)
    expected = expected_leaves(op, td, args, kwargs)
    torch.manual_seed(0)
    inplace = op.result == "replace" or kwargs.get("inplace")
    target = td.clone() if inplace else td
    result = run(op, target, args, kwargs)
    if inplace:
        assert result is target
    check_structure(result, td, expected_batch_size(op, td, args, kwargs),
                    expected_device(op, td, args, kwargs))
    compare_leaves(result, expected, values_too=op.tests.values != "uninitialized")
    if op.inplace is not None:  # the out-of-place result, written in place
        target = td.clone()
        stored = {k: target.get(k) for k in tensor_keys(target)}
        assert getattr(target, op.inplace.name)(*args, **kwargs) is target
        compare_leaves(target, expected)
        for key, tensor in stored.items():
            assert target.get(key) is tensor, key


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
    with pytest.raises(TypeError, match="tensor-like data"):
        td.new_tensor(object())  # tensors, sequences, numbers are taken (as 0.15.3)


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
