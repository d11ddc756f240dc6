"""Spec-driven tests of the batch_shape family (``spec/shape.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method, with each argument form users pass,
on a dense tensordict, a nested one (whose nested tensordict has more batch dims than
its parent) and a non-contiguous one (transposed leaves, in a tensordict that is itself
an index of a larger one). The oracle is torch itself: the same method applied to a
tensor of batch indices (``torch.arange(numel).reshape(batch_size)``) says where every
batch element goes, so every leaf must equal the input leaf gathered at those indices
(its feature dims untouched), and the result's batch size at every level must be the
index tensor's shape followed by the dims that level has beyond the root's. The
entry's ``storage`` is checked (a write through a view shows in the input, a copy
shares nothing), and so are ``inplace=True``, bad arguments (errors that name the op,
the argument and the batch size), ``torch.X(td)`` dispatch and every ``example``.

Argument cases live in ``CASES`` below; an entry without cases fails
``test_every_entry_has_cases``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.loader import load_spec
from codegen.model import Op
from tensordict import TensorDict

SPEC = load_spec(ROOT / "spec")
OPS = [op for op in SPEC.ops() if op.family == "batch_shape"]
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")


def A(*args, **kwargs):
    return args, kwargs


# The argument forms each op is called with, on a tensordict of batch size BATCH[op]
# (default [3, 4]).
BATCH = {
    "squeeze": (3, 1, 4, 1),
    "expand": (3, 1, 4),
    "expand_as": (3, 1, 4),
    "broadcast_to": (3, 1, 4),
    "atleast_1d": (),
    "atleast_2d": (4,),
    "atleast_3d": (4,),
}
CASES = {
    "view": [
        A(-1),
        A(2, 6),
        A((2, 6)),
        A([4, 3]),
        A(torch.Size([12])),
        A(size=[12]),
        A(batch_size=torch.Size([6, 2])),
        A(2, -1),
        A(1, 12, 1),
    ],
    "reshape": [A(-1), A(2, 6), A((2, 6)), A(shape=(4, 3)), A(size=[12, 1]), A(6, -1)],
    "permute": [A(1, 0), A([1, 0]), A((1, 0)), A(dims=(1, 0)), A(-1, 0), A(0, 1)],
    "transpose": [A(0, 1), A(-1, 0), A(1, 1)],
    "swapdims": [A(0, 1), A(1, -2)],
    "swapaxes": [A(0, 1), A(-1, -2)],
    "movedim": [A(0, 1), A((0, 1), (1, 0)), A(-1, 0), A(source=1, destination=0)],
    "moveaxis": [A(0, 1), A((0, 1), (1, 0))],
    "squeeze": [A(), A(1), A(0), A((1, 3)), A(dim=-1), A(-3), A(1, 3)],
    "unsqueeze": [A(0), A(-1), A(2), A(1), A(-3), A(dim=1)],
    "flatten": [A(), A(0, 1), A(0, -1), A(1), A(start_dim=1, end_dim=1)],
    "unflatten": [A(1, (2, 2)), A(-1, (2, -1)), A(0, (3, 1)), A(0, [1, 3])],
    "expand": [A(3, 5, 4), A((2, 3, 5, 4)), A(torch.Size([3, 2, 4])), A(-1, 2, -1)],
    "expand_as": [A(torch.zeros(3, 5, 4)), A(TensorDict(batch_size=[2, 3, 5, 4]))],
    "broadcast_to": [A((3, 5, 4)), A((2, 3, 2, 4)), A(torch.Size([3, 1, 4]))],
    "repeat": [A(2, 1), A((2, 1)), A(2, 1, 3), A(1, 3)],
    "repeat_interleave": [
        A(2, dim=0),
        A(2),
        A(torch.tensor([1, 2, 0, 1]), dim=1),
        A(torch.tensor([1, 2, 0, 1]), 1, output_size=4),
        A(torch.tensor(3), dim=-1),
    ],
    "tile": [A((2, 1)), A((2,)), A(2), A((2, 1, 3))],
    "flip": [A(0), A((0, 1)), A([1]), A(-1)],
    "fliplr": [A()],
    "flipud": [A()],
    "roll": [A(1, 0), A(1), A((1, 2), (0, 1)), A(-1, -1), A(5)],
    "rot90": [A(), A(1, (1, 0)), A(2), A(3, (0, 1)), A(k=-1)],
    "atleast_1d": [A()],
    "atleast_2d": [A()],
    "atleast_3d": [A()],
    "narrow": [A(1, 1, 2), A(-1, 1, 2), A(0, -2, 2), A(0, 0, 0), A(1, 0, 4)],
    "contiguous": [A()],
}
# What the oracle calls on the index tensor, where it is not the tensor method of the
# same name: atleast_Nd adds its dims in front (torch.atleast_3d adds one at the end of
# a 2-d tensor; a leaf's end holds its feature dims).
ORACLE = {
    f"atleast_{n}d": (lambda n: lambda t: t.reshape((1,) * (n - t.ndim) + t.shape))(n)
    for n in (1, 2, 3)
}
# Bad arguments: (args, kwargs, error type, fragments the message must hold), on a
# tensordict of batch size BATCH[op].
BAD = {
    "view": [
        (A(5), RuntimeError, ["view()", "[5]", "batch_size [3, 4]", "12 elements"]),
        (A(-1, -1), RuntimeError, ["only one may be -1"]),
        (A(-1, size=[12]), TypeError, ["not both"]),
        (A(torch.float16, size=[12]), TypeError, ["dtype view"]),
    ],
    "reshape": [
        (A(5, 3), RuntimeError, ["reshape()", "[5, 3]", "batch_size [3, 4]"]),
        (A(bogus=3), TypeError, ["bogus"]),
    ],
    "permute": [
        (A(0, 2), IndexError, ["permute()", "dims=2", "batch_size [3, 4]", "[-2, 1]"]),
        (A(0), ValueError, ["not a permutation", "batch_size [3, 4]"]),
        (A(0, 0), ValueError, ["not a permutation"]),
    ],
    "transpose": [
        (A(0, 2), IndexError, ["transpose()", "dim1=2", "batch_size [3, 4]"])
    ],
    "swapdims": [(A(-3, 0), IndexError, ["swapdims()", "dim0=-3"])],
    "swapaxes": [(A(0, 9), IndexError, ["swapaxes()", "dim1=9"])],
    "movedim": [
        (A(0, 3), IndexError, ["movedim()", "destination=3", "batch_size [3, 4]"]),
        (A((0, 1), 1), ValueError, ["as many dims"]),
    ],
    "moveaxis": [(A(2, 0), IndexError, ["moveaxis()", "source=2"])],
    "squeeze": [(A(4), IndexError, ["squeeze()", "dim=4", "batch_size [3, 1, 4, 1]"])],
    "unsqueeze": [
        (A(3), IndexError, ["unsqueeze()", "dim=3", "batch_size [3, 4]", "[-3, 2]"]),
        (A(), TypeError, ["one dim"]),
    ],
    "flatten": [
        (A(2), IndexError, ["flatten()", "start_dim=2", "batch_size [3, 4]"]),
        (A(1, 0), ValueError, ["end_dim=0 comes before start_dim=1"]),
    ],
    "unflatten": [
        (A(1, (3, 3)), RuntimeError, ["unflatten()", "[3, 3]", "batch dim 1 (4)"]),
        (A(2, (1, 1)), IndexError, ["unflatten()", "dim=2"]),
    ],
    "expand": [
        (A(5, 1, 4), RuntimeError, ["expand()", "batch_size [3, 1, 4]", "[5, 1, 4]"]),
        (A(4), RuntimeError, ["fewer dims", "batch_size [3, 1, 4]"]),
        (A(-1, 3, 1, 4), RuntimeError, ["new leading dims need a size"]),
    ],
    "expand_as": [
        (A(torch.zeros(3, 2, 5)), RuntimeError, ["expand_as()", "[3, 2, 5]"])
    ],
    "broadcast_to": [(A((2, 2, 4)), RuntimeError, ["broadcast_to()", "[2, 2, 4]"])],
    "repeat": [
        (A(2), ValueError, ["repeat()", "give one per batch dim", "batch_size [3, 4]"]),
        (A(2, -1), ValueError, [">= 0"]),
    ],
    "repeat_interleave": [
        (A(torch.tensor([1, 2]), dim=1), ValueError, ["one per element", "size 4"]),
        (A(2, dim=2), IndexError, ["repeat_interleave()", "dim=2"]),
    ],
    "tile": [(A((2, -1)), ValueError, ["tile()", ">= 0"])],
    "flip": [(A(2), IndexError, ["flip()", "dims=2", "batch_size [3, 4]"])],
    "roll": [
        (A(1, 2), IndexError, ["roll()", "dims=2", "batch_size [3, 4]"]),
        (A((1, 2), 0), ValueError, ["2 shifts for 1 dims"]),
    ],
    "rot90": [
        (A(1, (0, 0)), ValueError, ["rot90()", "more than once"]),
        (A(1, (0, 2)), IndexError, ["rot90()", "dims=2"]),
    ],
    "narrow": [
        (A(0, 2, 2), IndexError, ["narrow()", "do not fit", "size 3", "[3, 4]"]),
        (A(2, 0, 1), IndexError, ["narrow()", "dim=2"]),
    ],
}
# Ops whose arguments cannot be wrong on a tensordict with batch dims.
NO_BAD_INPUT = {
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "contiguous",
    "fliplr",
    "flipud",
}


# --------------------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------------------


def _leaf(gen, shape, contiguous=True):
    if contiguous:
        return torch.rand(shape, generator=gen)
    # the same shape, laid out transposed in memory
    return torch.rand(tuple(reversed(shape)), generator=gen).permute(
        *reversed(range(len(shape)))
    )


def make_td(structure: str, batch=(3, 4), seed: int = 0) -> TensorDict:
    """Leaves with and without feature dims, and a non-tensor entry. ``nested``: a
    nested tensordict with one more batch dim than its parent, one with the same."""
    gen = torch.Generator().manual_seed(seed)
    batch = tuple(batch)
    if structure == "dense":
        return TensorDict(
            a=_leaf(gen, batch + (2,)), b=_leaf(gen, batch), s="hello", batch_size=batch
        )
    if structure == "nested":
        sub = TensorDict(
            c=_leaf(gen, batch + (5, 2)),
            d=_leaf(gen, batch + (5,)),
            batch_size=batch + (5,),
        )
        same = TensorDict(e=_leaf(gen, batch + (3,)), batch_size=batch)
        return TensorDict(
            a=_leaf(gen, batch + (2,)), sub=sub, same=same, s="hello", batch_size=batch
        )
    assert structure == "noncontiguous"
    if not batch:  # nothing to index: transposed leaves only
        return TensorDict(a=_leaf(gen, (2, 3), False), s="hello", batch_size=batch)
    wide = (batch[0] + 2,) + batch[1:]
    big = TensorDict(
        a=_leaf(gen, wide + (2, 3), False),
        b=_leaf(gen, wide, False),
        sub=TensorDict(c=_leaf(gen, wide + (5, 2), False), batch_size=wide + (5,)),
        s="hello",
        batch_size=wide,
    )
    return big[1:-1]  # the tensordict is itself an index of a larger one


def tensor_keys(td) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def nested_levels(td):
    for key in td.keys(True):
        if isinstance(td.get(key), TensorDict):
            yield key


def run(op: Op, td, args, kwargs):
    return getattr(td, op.name)(*args, **kwargs)


# --------------------------------------------------------------------------------------
# The oracle: torch's own op on a tensor of batch indices.
# --------------------------------------------------------------------------------------


def batch_index(op: Op, batch, args, kwargs) -> torch.Tensor:
    """Where each batch element goes: the op applied by torch to a tensor of indices."""
    index = torch.arange(int(torch.Size(batch).numel())).reshape(batch)
    args = tuple(
        torch.empty(a.batch_size) if isinstance(a, TensorDict) else a for a in args
    )
    if op.name == "view" and "batch_size" in kwargs:  # view(batch_size=...): size=
        kwargs = {"size": kwargs["batch_size"]}
    if op.name == "reshape" and "size" in kwargs:  # reshape(size=...): shape=
        kwargs = {"shape": kwargs["size"]}
    if op.name in ORACLE:
        return ORACLE[op.name](index, *args, **kwargs)
    return getattr(index, op.name)(*args, **kwargs)


def expected(td, index: torch.Tensor) -> dict:
    """{key: the input leaf gathered at ``index`` along its (flattened) batch dims}."""
    n = td.batch_dims
    out = {}
    for key in tensor_keys(td):
        x = td.get(key)
        flat = x.reshape((td.batch_size.numel(),) + x.shape[n:])
        out[key] = flat[index]
    return out


def check_against_oracle(op: Op, td, result, args, kwargs) -> None:
    index = batch_index(op, tuple(td.batch_size), args, kwargs)
    assert type(result) is TensorDict
    assert result.batch_size == index.shape, (op.name, args, kwargs)
    assert set(result.keys(True, True)) == set(td.keys(True, True))
    assert result.get("s") == "hello"
    for key in nested_levels(td):
        extra = td.get(key).batch_size[td.batch_dims :]
        assert result.get(key).batch_size == index.shape + extra, key
    for key, want in expected(td, index).items():
        got = result.get(key)
        assert got.shape == want.shape, (key, args, kwargs)
        torch.testing.assert_close(got, want, msg=lambda m: f"{key}: {m}")


# --------------------------------------------------------------------------------------
# The checks.
# --------------------------------------------------------------------------------------


def test_every_entry_has_cases() -> None:
    missing = [op.name for op in OPS if op.name not in CASES]
    assert not missing, f"add argument cases for {missing} to CASES"
    no_bad = [
        op.name for op in OPS if op.name not in BAD and op.name not in NO_BAD_INPUT
    ]
    assert not no_bad, f"add bad arguments for {no_bad} to BAD"


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry_against_torch(op: Op, structure: str) -> None:
    td = make_td(structure, BATCH.get(op.name, (3, 4)))
    for args, kwargs in CASES[op.name]:
        if op.name == "view" and structure == "noncontiguous":
            # torch refuses to view leaves whose strides do not allow it
            with pytest.raises(RuntimeError, match="view"):
                run(op, td, args, kwargs)
            continue
        check_against_oracle(op, td, run(op, td, args, kwargs), args, kwargs)


def _shares(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_storage(op: Op) -> None:
    """``storage: view``: a write through the result shows in the input; ``copy``:
    nothing is shared; ``view_where_possible``: a view of contiguous leaves."""
    for args, kwargs in CASES[op.name]:
        td = make_td("nested", BATCH.get(op.name, (3, 4)))
        before = td.clone()
        result = run(op, td, args, kwargs)
        for key in tensor_keys(td):
            got = result.get(key)
            if got.numel() == 0:
                continue
            shared = _shares(got, td.get(key))
            if op.storage == "copy":
                assert not shared, key
                continue
            assert shared, (key, args, kwargs)
            # a write through the result is visible in the input
            got[(0,) * result.batch_dims].fill_(-7.0)
            assert (td.get(key) == -7.0).any(), key
        if op.storage == "copy":
            for key in tensor_keys(td):
                result.get(key).fill_(-7.0)
                torch.testing.assert_close(td.get(key), before.get(key))
    if op.storage == "view_where_possible" and op.name != "contiguous":
        # a permuted tensordict's leaves cannot be viewed with a merged batch dim
        td = make_td("dense", (4, 3)).permute(1, 0)
        result = run(op, td, *A(-1)) if op.name == "reshape" else run(op, td, (), {})
        assert all(not _shares(result.get(k), td.get(k)) for k in tensor_keys(td))
    if op.name == "contiguous":
        td = make_td("noncontiguous")
        result = td.contiguous()
        for key in tensor_keys(td):
            assert result.get(key).is_contiguous()
            assert (result.get(key) is td.get(key)) == td.get(key).is_contiguous()


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_inplace(op: Op) -> None:
    if not op.signature.has("inplace"):
        pytest.skip(f"{op.name} takes no inplace")
    batch = BATCH.get(op.name, (3, 4))
    for args, kwargs in CASES[op.name]:
        td = make_td("nested", batch)
        want = run(op, td, args, kwargs)
        out = run(op, td, args, dict(kwargs, inplace=True))
        assert out is td
        assert td.batch_size == want.batch_size
        for key in tensor_keys(want):
            torch.testing.assert_close(td.get(key), want.get(key))
        assert td["sub"].batch_size == want["sub"].batch_size
    locked = make_td("dense", batch).lock_()
    args, kwargs = CASES[op.name][0]
    with pytest.raises(RuntimeError, match="locked"):
        run(op, locked, args, dict(kwargs, inplace=True))


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_bad_arguments_raise_clear_errors(op: Op) -> None:
    td = make_td("dense", BATCH.get(op.name, (3, 4)))
    for (args, kwargs), error, fragments in BAD.get(op.name, []):
        with pytest.raises(error) as info:
            run(op, td, args, kwargs)
        for fragment in fragments:
            assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_torch_function_dispatches(op: Op) -> None:
    td = make_td("nested", BATCH.get(op.name, (3, 4)))
    for dotted in op.torch_functions:
        fn = eval(dotted, {"torch": torch})
        matched = 0
        for args, kwargs in CASES[op.name]:
            try:
                got = fn(td, *args, **kwargs)
            except TypeError:  # an argument form torch's own signature does not take
                continue
            check_against_oracle(op, td, got, args, kwargs)
            matched += 1
        assert matched, f"{dotted}(td, ...) took none of the cases"


# --------------------------------------------------------------------------------------
# Behaviour the spec-driven checks do not cover.
# --------------------------------------------------------------------------------------


def test_seed_examples() -> None:
    data = TensorDict(a=torch.zeros(3, 4, 5), b=torch.ones(3, 4), batch_size=[3, 4])
    assert data.view(-1).batch_size == torch.Size([12])
    assert data.reshape(-1).batch_size == torch.Size([12])
    assert data.unsqueeze(-1).batch_size == torch.Size([3, 4, 1])
    assert data.unsqueeze(-1)["a"].shape == (3, 4, 1, 5)


def test_view_dtype() -> None:
    td = make_td("nested")
    out = td.view(torch.int32)
    assert out.batch_size == td.batch_size and out["sub"].batch_size == (3, 4, 5)
    for key in tensor_keys(td):
        assert out.get(key).dtype == torch.int32
        torch.testing.assert_close(out.get(key), td.get(key).view(torch.int32))
        assert _shares(out.get(key), td.get(key))
    # a dtype of another size rescales the last dim: a leaf without one refuses
    with pytest.raises(RuntimeError, match="has no feature dim"):
        td.view(torch.int16)


def test_reshape_copies_what_it_cannot_view() -> None:
    td = make_td("dense", (4, 3)).permute(1, 0)
    out = td.reshape(-1)
    index = torch.arange(12).reshape(4, 3).permute(1, 0).reshape(-1)
    base = make_td("dense", (4, 3))
    torch.testing.assert_close(out["a"], base["a"].reshape(12, 2)[index])


def test_names_of_new_batch_dims_and_feature_dims_untouched() -> None:
    td = make_td("nested")
    out = td.permute(1, 0)
    assert out["sub", "c"].shape == (4, 3, 5, 2)
    torch.testing.assert_close(out["sub", "c"], td["sub", "c"].transpose(0, 1))
    out = td.unsqueeze(-1)
    assert out["sub"].batch_size == (3, 4, 1, 5)


def test_squeeze_keeps_feature_dims_of_size_one() -> None:
    td = TensorDict(a=torch.zeros(3, 1, 1), batch_size=[3, 1])
    assert td.squeeze()["a"].shape == (3, 1)
    assert td.squeeze(0).batch_size == (3, 1)  # dim 0 has size 3: it stays


def test_no_batch_dims() -> None:
    td = TensorDict(a=torch.zeros(2), batch_size=[])
    assert td.view(-1).batch_size == (1,)
    assert td.unsqueeze(0)["a"].shape == (1, 2)
    assert td.squeeze().batch_size == ()
    assert td.expand(3).batch_size == (3,)
    with pytest.raises(ValueError, match="no batch dims to flatten"):
        td.flatten()
    with pytest.raises(IndexError, match="no batch dims"):
        td.transpose(0, 1)
