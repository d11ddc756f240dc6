"""Every op of ``spec/*.yaml`` on two more container kinds: a memory-mapped tensordict
and a PersistentTensorDict (HDF5), each compared with the same op on a plain in-RAM
TensorDict holding the same data (the oracle).

The ops are read from the spec files themselves, so a new entry is covered as soon as it
exists: ops whose parameters all have defaults run as ``op()``; the others take their
arguments from ``ARGS`` below or, failing that, from their entry's ``tests: calls``, and
an entry with neither fails ``test_every_spec_op_has_arguments``. Out-of-place results must equal the oracle's (in
RAM); an in-place op must return the container itself, hold the oracle's values after
the op, and have written them to the file (checked by reopening it). Where the oracle
raises, the container must raise the same type of error.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from spec_cases import SPEC as LOADED_SPEC
from spec_cases import arguments

from tensordict import PersistentTensorDict, TensorDict, TensorDictBase

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((ROOT / "spec").glob("*.yaml"))


def _spec_ops() -> list[tuple[str, str, str | None]]:
    """(family, name, in-place name or None) for every entry of the spec."""
    out = []
    for path in SPEC_FILES:
        data = yaml.safe_load(path.read_text())
        template = ((data.get("defaults") or {}).get("inplace") or {}).get("name", "{name}_")
        for entry in data["ops"]:
            inplace = entry.get("inplace")
            name = entry["name"]
            if inplace is True:
                inplace_name = template.replace("{name}", name)
            elif isinstance(inplace, dict):
                inplace_name = inplace.get("name", template).replace("{name}", name)
            else:
                inplace_name = None
            out.append((data["family"], name, inplace_name))
    return out


# torch.autograd.grad needs inputs its outputs were computed from: tested in
# tests/test_torch_function.py and tests/test_compat_rows_func.py
SPEC = [op for op in _spec_ops() if op[0] != "autograd"]

OTHER = object()  # stands for a tensordict operand with the data's keys and batch size
MASK = torch.tensor([[True, False, True]] * 2 + [[False, True, False]] * 2)
BINARY = [((0.5,), {}), ((OTHER,), {})]
REDUCE = [((), {}), ((0,), {}), ((1,), {"keepdim": True}), ((), {"reduce": True})]

# Arguments for the ops that need some (or that are worth calling with some).
ARGS: dict[str, list] = {
    **{
        name: BINARY
        for name in (
            "add sub rsub mul div pow maximum minimum clamp_min clamp_max mod "
            "bitwise_and logical_and __rtruediv__ __rpow__ __or__ __xor__ __eq__ "
            "__ne__ __lt__ __le__ __gt__ __ge__"
        ).split()
    },
    "clamp": [((), {"min": 0.2, "max": 0.6})],
    "lerp": [((OTHER, 0.5), {})],
    "addcmul": [((OTHER, OTHER), {})],
    "addcdiv": [((OTHER, OTHER), {})],
    "type": [((torch.float64,), {})],
    "to": [(("cpu",), {}), ((torch.float64,), {})],
    "fill_": [(("b", 1.5), {})],
    "new_zeros": [((2, 5), {})],
    "new_ones": [((2, 5), {})],
    "new_empty": [((2, 5), {})],
    "new_full": [(([2], 7.5), {})],
    "new_tensor": [((OTHER,), {})],
    "full_like": [((3.0,), {})],
    "l1_loss": [((OTHER,), {}), ((OTHER,), {"reduction": "none"})],
    "mse_loss": [((OTHER,), {})],
    "smooth_l1_loss": [((OTHER,), {"reduction": "sum"})],
    "split": [((2,), {}), (([1, 3],), {}), ((1, 1), {})],
    "chunk": [((2,), {})],
    "tensor_split": [((2,), {})],
    "unbind": [((0,), {}), ((1,), {})],
    "gather": [((1, torch.tensor([[0, 2]] * 4)), {})],
    "masked_fill": [((MASK, -1.0), {})],
    "masked_select": [((MASK,), {})],
    "where": [((MASK, OTHER), {})],
    **{name: REDUCE for name in "sum nansum mean nanmean prod std var".split()},
    **{name: [((), {}), ((0,), {})] for name in "min max amin amax all any".split()},
    "logsumexp": [((0,), {})],
    "quantile": [((0.5,), {}), ((0.5, 0), {})],
    "cummin": [((0,), {})],
    "cummax": [((0,), {})],
    "softmax": [((1,), {})],
    "view": [((-1,), {}), ((3, 4), {})],
    "reshape": [((12,), {}), ((2, 6), {})],
    "permute": [((1, 0), {})],
    "transpose": [((0, 1), {})],
    "swapdims": [((0, 1), {})],
    "swapaxes": [((0, 1), {})],
    "movedim": [((0, 1), {})],
    "moveaxis": [((0, 1), {})],
    "unsqueeze": [((0,), {})],
    "flatten": [((), {}), ((0, 1), {})],
    "unflatten": [((0, (2, 2)), {})],
    "expand": [((2, 4, 3), {})],
    "expand_as": [((torch.zeros(2, 4, 3),), {})],
    "broadcast_to": [(((2, 4, 3),), {})],
    "repeat": [((2, 1), {})],
    "repeat_interleave": [((2,), {"dim": 0})],
    "tile": [(((2, 1),), {})],
    "flip": [((0,), {})],
    "roll": [((1,), {"dims": 0})],
    "narrow": [((0, 1, 2), {})],
}

# Ops whose results are addresses: compared by structure only, as are the entries
# whose values are random or uninitialised (``tests: values`` in the spec).
STRUCTURE_ONLY = {"data_ptr"}
# Ops that need a CUDA device (or pinned memory, which needs one).
NEEDS_CUDA = {"cuda", "record_stream", "pin_memory", "pin_memory_"}
# Ops that refuse this data on a TensorDict too (checked: the same error here):
# ``record_stream`` takes GPU leaves only (these containers live on the host), and
# ``pin_memory_`` replaces the leaves, which a locked (memory-mapped) or file-backed
# container refuses.
ALWAYS_RAISES = {"stack_from_tensordict", "cat_from_tensordict", "record_stream", "pin_memory_"}
# torch functions only, not named torch.<name> (spec/loss.yaml)
TORCH_ONLY = {
    "l1_loss": torch.nn.functional.l1_loss,
    "mse_loss": torch.nn.functional.mse_loss,
    "smooth_l1_loss": torch.nn.functional.smooth_l1_loss,
}
# Ops that run on integer leaves (bitwise ops); the others on floats.
INTEGER_OPS = {"bitwise_and", "__or__", "__xor__", "__invert__"}


def _data(profile: str, seed: int = 0) -> TensorDict:
    gen = torch.Generator().manual_seed(seed)
    if profile == "int":
        leaf = lambda *shape: torch.randint(1, 5, shape, generator=gen)  # noqa: E731
    else:
        leaf = lambda *shape: torch.rand(shape, generator=gen) * 0.8 + 0.1  # noqa: E731
    return TensorDict(
        {"a": leaf(4, 3, 2), "b": leaf(4, 3), "n": {"c": leaf(4, 3, 5)}, "s": "hello"},
        batch_size=[4, 3],
    )


def _memmap_kind(data: TensorDict, tmp_path: Path):
    """The container, a way to read it back from disk, and the oracle."""
    container = data.memmap(tmp_path / "memmap")
    oracle = data.clone().lock_()  # a memory-mapped tensordict is locked
    return container, lambda: TensorDict.load_memmap(tmp_path / "memmap"), oracle


def _h5_kind(data: TensorDict, tmp_path: Path):
    filename = tmp_path / "data.h5"
    container = PersistentTensorDict.from_dict(data, filename)

    def reopen():
        return PersistentTensorDict.from_h5(filename).to_tensordict()

    oracle = data.clone()
    # HDF5 reads strings back as bytes, as 0.15.3 does
    oracle.set_non_tensor("s", data.get_non_tensor("s").encode())
    return container, reopen, oracle


KINDS = {"memmap": _memmap_kind, "h5": _h5_kind}


def _resolve(args, kwargs, profile):
    operand = _data(profile, seed=1)
    args = tuple(operand if a is OTHER else a for a in args)
    kwargs = {k: operand if v is OTHER else v for k, v in kwargs.items()}
    return args, kwargs


def _plain(value):
    return value.as_subclass(torch.Tensor) if isinstance(value, torch.Tensor) else value


def assert_same_result(got, want, *, structure_only=False, where=""):
    if isinstance(want, TensorDictBase):
        assert isinstance(got, TensorDictBase), f"{where}: {type(got)}"
        assert got.batch_size == want.batch_size, where
        keys = set(want.keys(True, True))
        assert set(got.keys(True, True)) == keys, where
        for key in keys:
            assert_same_result(got.get(key), want.get(key), structure_only=structure_only, where=f"{where}[{key!r}]")
        for key, value in want.items(True):
            if not isinstance(value, (torch.Tensor, TensorDictBase)):
                assert got[key] == value, where
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_result(g, w, structure_only=structure_only, where=f"{where}[{i}]")
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key in want:
            assert_same_result(got[key], want[key], structure_only=structure_only, where=f"{where}[{key!r}]")
        return
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), where
        assert got.shape == want.shape and got.dtype == want.dtype, where
        if not structure_only:
            torch.testing.assert_close(_plain(got), _plain(want), equal_nan=True, msg=lambda m: f"{where}: {m}")
        return
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
        return
    if structure_only:
        return
    if isinstance(got, bytes) and isinstance(want, str):
        got = got.decode()  # HDF5 reads strings as bytes, as 0.15.3
    assert got == want, where


def _call(target, name, args, kwargs):
    if name in ("stack", "cat"):
        return getattr(torch, name)([target, target], *args, **kwargs)
    if not hasattr(TensorDict, name):  # a torch function only: torch.zeros_like(td)
        return TORCH_ONLY.get(name, getattr(torch, name, None))(target, *args, **kwargs)
    attr = inspect.getattr_static(TensorDict, name)
    if isinstance(attr, property):
        return getattr(target, name)
    return getattr(target, name)(*args, **kwargs)


def _outcome(fn):
    try:
        return fn(), None
    except Exception as err:  # noqa: BLE001 - compared with the container's
        return None, err


# The test calls each entry declares (``tests: calls`` in spec/*.yaml).
ENTRY_CALLS = {op.name: op.tests.calls for op in LOADED_SPEC.ops()}
STRUCTURE_ONLY |= {op.name for op in LOADED_SPEC.ops() if op.tests.values != "defined"}


def _needs_arguments(name: str) -> bool:
    """Whether the TensorDict method ``name`` has a required parameter (besides self)."""
    if not hasattr(TensorDict, name):  # torch.zeros_like & co: the tensordict alone
        return False
    if isinstance(inspect.getattr_static(TensorDict, name), property):
        return False
    signature = inspect.signature(getattr(TensorDict, name))
    return any(
        p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in list(signature.parameters.values())[1:]
    )


def _cases(name: str, profile: str) -> list:
    """``ARGS``' row; else, for an op that needs arguments, its entry's test calls
    (``other`` a tensordict like the data); else no arguments."""
    if name in ARGS:
        return ARGS[name]
    if _needs_arguments(name) and ENTRY_CALLS.get(name):
        data = _data(profile)
        return [arguments(c.args, data, other=OTHER) for c in ENTRY_CALLS[name]]
    return [((), {})]


# Ops a kind refuses where a TensorDict does not: pinning an HDF5-backed tensordict
# (0.15.3's "Cannot pin memory of a PersistentTensorDict"; pin its to_tensordict()).
REFUSED = {("h5", "pin_memory"): "Cannot pin memory", ("h5", "pin_memory_"): "Cannot pin memory"}


def _check(kind, name, tmp_path, inplace_of=None):
    profile = "int" if (inplace_of or name) in INTEGER_OPS else "float"
    if (kind, name) in REFUSED:
        container, _, _ = KINDS[kind](_data(profile), tmp_path)
        with pytest.raises(RuntimeError, match=REFUSED[kind, name]):
            _call(container, name, (), {})
        return
    succeeded = 0
    for i, (args, kwargs) in enumerate(_cases(inplace_of or name, profile)):
        case = tmp_path / f"case{i}"
        case.mkdir()
        container, reread, oracle = KINDS[kind](_data(profile), case)
        args, kwargs = _resolve(args, kwargs, profile)
        want, error = _outcome(lambda: _call(oracle, name, args, kwargs))
        where = f"{kind}.{name}{args}{kwargs}"
        if error is not None:
            with pytest.raises(type(error)):
                _call(container, name, args, kwargs)
            continue
        succeeded += 1
        got = _call(container, name, args, kwargs)
        if want is oracle:  # an in-place op
            assert got is container, where
            assert_same_result(got.to_tensordict(), oracle, where=where)
            assert_same_result(reread(), oracle, where=f"{where} (reread from disk)")
        else:
            assert_same_result(got, want, structure_only=name in STRUCTURE_ONLY, where=where)
        if hasattr(container, "close"):
            container.close()
    assert succeeded or name in ALWAYS_RAISES, f"{name}: the oracle accepted no case"


CASES = []
for family, name, inplace in SPEC:
    for kind in KINDS:
        marks = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")] if name in NEEDS_CUDA else []
        CASES.append(pytest.param(kind, name, None, id=f"{kind}-{family}.{name}", marks=marks))
        if inplace is not None:
            CASES.append(pytest.param(kind, inplace, name, id=f"{kind}-{family}.{inplace}", marks=marks))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("kind, name, inplace_of", CASES)
def test_spec_op_on_persistent_containers(kind, name, inplace_of, tmp_path):
    _check(kind, name, tmp_path, inplace_of)


def test_every_spec_op_has_arguments():
    """An entry with a required parameter (other than self) needs test calls in its
    entry (or a row in ARGS)."""
    missing = []
    for _, name, _ in SPEC:
        if name in ARGS or name in NEEDS_CUDA or name in ("stack", "cat"):
            continue
        if _needs_arguments(name) and not ENTRY_CALLS.get(name):
            missing.append(name)
    assert not missing, f"give these spec ops 'tests: calls' in their entries: {missing}"
