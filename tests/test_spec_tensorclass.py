"""Spec-driven tests on tensorclasses: every method of every entry of ``spec/*.yaml``
(whatever its family), called on a tensorclass with a nested tensorclass, a nested
TensorDict and non-tensor fields, compared with the same call on the TensorDict the
tensorclass converts to (``to_tensordict()``), result by result and leaf by leaf.

``tests/test_spec_ops.py`` checks the TensorDict methods against torch; here the
tensorclass forms (``tensordict/_generated/tensorclass_ops.py``) must agree with them:
a tensordict result comes back as the user's class (its nested tensorclass field as its
own class, its non-tensor fields as they were), tuples of tensordicts as tuples of
instances, in-place ops return the tensorclass itself, and where the TensorDict method
raises, the tensorclass method raises the same error.

The arguments of each op are found by trying, on the TensorDict, the calls its spec
entry declares (``tests: calls``), then candidate values for its required parameters
(``CANDIDATES``, by parameter name, or ``ARGS``, by op) on float, int and bool data;
the first call the TensorDict accepts is the one compared.
An op for which no candidate is accepted is skipped, naming the op.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from spec_cases import SPEC, arguments

from codegen.model import Form
from tensordict import TensorClass, TensorDict, TensorDictBase, tensorclass

B = (2, 3)  # the batch size: two batch dims, for the ops that move dims around


@tensorclass
class Leaf:
    x: torch.Tensor


@tensorclass
class Sample:
    a: torch.Tensor
    b: torch.Tensor
    leaf: Leaf
    td: TensorDict
    label: str = "label"
    count: int = 7


def _leaf(kind: str, shape, gen: torch.Generator) -> torch.Tensor:
    if kind == "float":
        return torch.rand(shape, generator=gen) * 0.8 + 0.1
    if kind == "int":
        return torch.randint(1, 5, shape, generator=gen)
    return torch.rand(shape, generator=gen) > 0.5


def make_tc(profile: str, seed: int) -> Sample:
    gen = torch.Generator().manual_seed(seed)
    return Sample(
        a=_leaf(profile, B + (4,), gen),
        b=_leaf(profile, B, gen),
        leaf=Leaf(_leaf(profile, B + (4,), gen), batch_size=B),
        td=TensorDict(y=_leaf(profile, B + (4,), gen), batch_size=B),
        batch_size=B,
    )


# --------------------------------------------------------------------------------------
# Arguments.
# --------------------------------------------------------------------------------------

_GEN = torch.Generator().manual_seed(5)
MASK = torch.tensor([[True, False, True], [False, True, True]])

# Candidate values for required parameters, by name, tried in order. ``OPERAND``
# stands for a second tensorclass / tensordict of the same structure.
OPERAND = object()
CANDIDATES: dict[str, list] = {
    "other": [OPERAND, 0.5, 2],
    "end": [OPERAND, 0.5],
    "weight": [0.5, OPERAND],
    "tensor1": [OPERAND],
    "tensor2": [OPERAND],
    "other1": [OPERAND],
    "other2": [OPERAND],
    "data": [OPERAND, torch.zeros(2, 3)],
    "min": [0.2],
    "max": [0.7],
    "dim": [0, 1, -1],
    "dim0": [0],
    "dim1": [1],
    "axis0": [0],
    "axis1": [1],
    "source": [0],
    "destination": [1],
    "dims": [(1, 0), (0,), 0, (2, 1)],
    "shape": [(3, 2), (2, 3), (-1,)],
    "unflattened_size": [(3, 1), (1, 3)],
    "repeats": [2],
    "shifts": [1],
    "start": [0],
    "length": [1],
    "split_size": [1, [1, 1]],
    "chunks": [2],
    "indices_or_sections": [1],
    "q": [0.5],
    "dst_type": [torch.float64],
    "key": ["a"],
    "value": [0.5, True],
    "fill_value": [1.0],
    "mask": [MASK],
    "condition": [MASK],
    "index": [torch.tensor([[0, 1, 0], [1, 0, 1]]), torch.tensor([[0, 2, 1], [1, 0, 2]])],
    "size": [(2,), (3, 4)],
}
# Whole argument lists, by op (positional args), for ops taking ``*args``.
ARGS: dict[str, list[tuple]] = {
    "clamp": [(0.2, 0.7)],
    "view": [(-1,), (3, 2)],
    "reshape": [(3, 2), (-1,)],
    "permute": [(1, 0)],
    "squeeze": [()],
    "unsqueeze": [(0,), (-1,)],
    "expand": [(4, 2, 3)],
    "repeat": [(2, 1)],
    "to": [(torch.float64,), ("cpu",)],
    "new_zeros": [((2, 5),)],
    "new_ones": [((2, 5),)],
    "new_empty": [((2, 5),)],
}
SKIP = {
    "record_stream": "needs a CUDA stream",
    "cuda": "needs CUDA",
    "pin_memory": "needs CUDA",
    "pin_memory_": "needs CUDA",
    "data_ptr": "addresses of two separate copies differ (tests/test_spec_attributes.py)",
}
MAX_TRIES = 40


def _methods():
    """(name, op, signature, kind) for every method of every entry."""
    out = []
    for op in SPEC.ops():
        if op.form is Form.FUNCTION:
            continue
        out.append((op.name, op, op.signature, "op"))
        if op.inplace is not None:
            out.append((op.inplace.name, op, op.inplace.signature, "inplace"))
            out += [(a.name, op, a.signature, "alias") for a in op.inplace.dunders]
        out += [(a.name, op, a.signature, "alias") for a in op.dunders]
    return out


METHODS = _methods()


def _required(signature) -> list:
    return [
        p
        for p in signature.params
        if p.default is None and p.kind not in ("var_keyword",)
    ]


def _argument_sets(name: str, signature, op=None):
    """Candidate (args, kwargs) pairs, with OPERAND placeholders: the entry's own calls
    first."""
    if op is not None and op.name == name:
        for call in op.tests.calls:
            try:
                yield arguments(call.args, other=OPERAND), None
            except Exception:  # noqa: BLE001 - a call this machine cannot make (CUDA)
                continue
    if signature.receiver == "cls":  # stacking: a sequence of collections first
        rest = [p for p in _required(signature) if p.name != signature.params[0].name]
        for combo in itertools.product(*[CANDIDATES.get(p.name, []) for p in rest]):
            yield ([[None, OPERAND]] + list(combo), {}), None
        return
    if name in ARGS:
        for args in ARGS[name]:
            yield (list(args), {}), None
        return
    required = _required(signature)
    pools = []
    for p in required:
        if p.kind == "var_positional":
            pools.append([()])
        elif p.name in CANDIDATES:
            pools.append(CANDIDATES[p.name])
        else:
            return  # nothing to try for this parameter
    for combo in itertools.islice(itertools.product(*pools), MAX_TRIES):
        args, kwargs = [], {}
        for p, value in zip(required, combo):
            if p.kind == "var_positional":
                args.extend(value)
            elif p.kind == "keyword_only":
                kwargs[p.name] = value
            else:
                args.append(value)
        yield (args, kwargs), None


def _fill(value, self_obj, operand):
    if value is OPERAND:
        return operand
    if value is None:
        return self_obj
    if isinstance(value, list) and any(v is OPERAND or v is None for v in value):
        return [_fill(v, self_obj, operand) for v in value]
    return value


def _call(obj, cls_target, name, signature, args, kwargs, operand):
    args = [_fill(a, obj, operand) for a in args]
    kwargs = {k: _fill(v, obj, operand) for k, v in kwargs.items()}
    if signature.receiver == "cls":
        return getattr(cls_target, name)(*args, **kwargs)
    return getattr(obj, name)(*args, **kwargs)


def _outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - compared with the tensorclass's
        return None, exc


def find_case(name: str, signature, op=None):
    """(profile, args, kwargs) of the first call the TensorDict method accepts."""
    for profile in ("float", "int", "bool"):
        for (args, kwargs), _ in _argument_sets(name, signature, op):
            td = make_tc(profile, 0).to_tensordict()
            operand = make_tc(profile, 1).to_tensordict()
            _, error = _outcome(
                lambda: _call(td, TensorDict, name, signature, args, kwargs, operand)
            )
            if error is None:
                return profile, args, kwargs
    return None


# --------------------------------------------------------------------------------------
# Comparing a tensorclass result with the TensorDict result.
# --------------------------------------------------------------------------------------


def assert_same_tensors(got: torch.Tensor, want: torch.Tensor, where: str) -> None:
    assert type(got) is type(want) or isinstance(got, torch.Tensor), where
    assert got.shape == want.shape and got.dtype == want.dtype, where
    if got.is_floating_point() or got.is_complex():
        torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{where}: {m}")
    else:
        assert torch.equal(got, want), where


def assert_same_collections(got: Any, want: TensorDictBase, where: str) -> None:
    """``got`` (a tensorclass result) holds what ``want`` (the TensorDict result) does."""
    assert isinstance(got, Sample), f"{where}: {type(got).__name__}, not Sample"
    assert got.batch_size == want.batch_size, where
    plain = got.to_tensordict()
    want = want.to_tensordict() if type(want) is not TensorDict else want
    assert set(plain.keys(True, True)) == set(want.keys(True, True)), where
    for key in want.keys(True, True):
        assert_same_tensors(plain.get(key), want.get(key), f"{where}[{key}]")
    for key in ("label", "count"):
        if key in want.keys():
            mine, theirs = getattr(got, key), want[key]
            if isinstance(theirs, torch.Tensor):  # (comparisons compare them too)
                assert torch.equal(mine, theirs), f"{where}.{key}"
            else:
                assert mine == theirs, f"{where}.{key}"
    if isinstance(want.get("leaf", None), TensorDictBase):
        assert type(got.leaf) is Leaf, f"{where}: the nested tensorclass lost its class"


def assert_same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, TensorDictBase) and not want._is_non_tensor:
        assert_same_collections(got, want, where)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, torch.Tensor):
        assert_same_tensors(got, want, where)
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and np.array_equal(got, want), where
    else:
        assert got == want, where


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize(
    "name,op,signature,kind", METHODS, ids=[f"{m[1].family}.{m[0]}" for m in METHODS]
)
def test_spec_method_on_a_tensorclass(name, op, signature, kind) -> None:
    if name in SKIP:
        pytest.skip(SKIP[name])
    assert hasattr(Sample, name), f"{name} is missing on tensorclasses"
    case = find_case(name, signature, op)
    if case is None:
        pytest.skip(f"no candidate arguments the TensorDict method {name} accepts")
    profile, args, kwargs = case

    tc, tc_operand = make_tc(profile, 0), make_tc(profile, 1)
    td, td_operand = tc.to_tensordict(), tc_operand.to_tensordict()
    want, error = _outcome(
        lambda: _call(td, TensorDict, name, signature, args, kwargs, td_operand)
    )
    assert error is None, error  # find_case found an accepted call
    got, got_error = _outcome(
        lambda: _call(tc, Sample, name, signature, args, kwargs, tc_operand)
    )
    assert got_error is None, f"{name}: the tensorclass raised {got_error!r}"
    if want is NotImplemented:
        assert got is NotImplemented
        return
    if want is td:  # in place, or an op that returns its input unchanged
        assert got is tc, f"{name} must return the tensorclass itself"
        assert_same_collections(tc, td, name)
        return
    if want is td_operand:  # an ``out=``-style result
        assert got is tc_operand
        return
    if op.tests.values == "uninitialized":  # its values are not defined
        want.zero_()
        got.zero_()
    assert_same(got, want, f"the tensorclass form of {name} against the TensorDict form ({op.location})")
    # the input is left as the TensorDict's is (in-place forms write into both)
    assert_same_collections(tc, td, f"{name} (input afterwards)")


@pytest.mark.parametrize(
    "name,op,signature,kind", METHODS, ids=[f"{m[1].family}.{m[0]}" for m in METHODS]
)
def test_spec_method_errors_match(name, op, signature, kind) -> None:
    """Where the TensorDict method rejects an argument, so does the tensorclass one."""
    if signature.receiver == "cls" or not signature.params:
        pytest.skip("no argument to get wrong")
    tc = make_tc("float", 0)
    td = tc.to_tensordict()
    bad = object()
    args = [bad] * len([p for p in _required(signature) if p.kind != "keyword_only"])
    if not args:
        args = [bad]
    _, want = _outcome(lambda: getattr(td, name)(*args))
    _, got = _outcome(lambda: getattr(tc, name)(*args))
    if want is None:
        assert got is None
    else:
        assert type(got) is type(want), f"{name}: {got!r} vs {want!r}"


def test_every_generated_method_is_a_forwarder() -> None:
    """The tensorclass form of every spec method comes from the generated mixin."""
    import inspect

    from tensordict._generated.tensorclass_ops import TensorClassGeneratedOps

    for name in SPEC.method_names():
        assert name in TensorClassGeneratedOps.__dict__, name
        found = inspect.getattr_static(TensorClass, name)
        assert found is TensorClassGeneratedOps.__dict__[name], name


def test_coverage_of_the_spec() -> None:
    """Most methods find arguments (the others are skipped above, by name)."""
    found = [name for name, op, sig, kind in METHODS if name in SKIP or find_case(name, sig, op)]
    assert len(found) >= 0.9 * len(METHODS), sorted(
        {n for n, *_ in METHODS} - set(found)
    )
