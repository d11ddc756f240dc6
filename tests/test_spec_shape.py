"""Spec-driven tests of the batch_shape family (``spec/shape.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method, with each argument form users pass,
on a dense tensordict, a nested one (whose nested tensordict has more batch dims than
its parent) and a non-contiguous one (transposed leaves, in a tensordict that is itself
an index of a larger one). The oracle is torch itself: the same method applied to a
tensor of batch indices (``torch.arange(numel).reshape(batch_size)``) says where every
batch element goes, so every leaf must equal the input leaf gathered at those indices
(its feature dims untouched), and the result's batch size at every level must be the
index tensor's shape followed by the dims that level has beyond the root's. Where the
tensor method takes its arguments otherwise (``atleast_3d`` adds dims at the end; a
batch gains them in front), the entry says what torch does (``tests: oracle``). The
entry's ``storage`` is checked (a write through a view shows in the input, a copy
shares nothing), and so are ``inplace=True``, bad arguments (errors that name the op,
the argument and the batch size), ``torch.X(td)`` dispatch and every ``example``.

The argument forms, the test batch size and the bad arguments (with the words their
errors must hold) of each op are its spec entry's ``tests``; an entry without calls
fails ``test_every_entry_has_cases``.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch
from spec_cases import A, arguments, batch_size, oracle, ops_of

from codegen.model import Op
from tensordict import TensorDict

OPS = ops_of("batch_shape")
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")


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
    if op.tests.oracle is not None:  # the entry says what torch does
        return oracle(op)(index, *args, **kwargs)
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
    if getattr(op, "stacks_non_tensor", False) and result.batch_size != td.batch_size:
        # expand, unsqueeze: the value in every element of a NonTensorStack (0.15.3)
        stack = result.get("s")
        assert type(stack).__name__ == "NonTensorStack" and stack.batch_size == index.shape
        assert set(np.asarray(stack.tolist(), dtype=object).flat) == {"hello"}
    else:
        assert result["s"] == "hello"
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


def cases(op: Op) -> list:
    """The argument forms of the entry's ``tests: calls``."""
    return [arguments(call.args) for call in op.tests.calls]


def batch(op: Op) -> tuple:
    return batch_size(op, (3, 4))


def test_every_entry_has_cases() -> None:
    missing = [op.name for op in OPS if not op.tests.calls]
    assert not missing, f"add 'tests: calls' to the entries of {missing} in spec/shape.yaml"


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry_against_torch(op: Op, structure: str) -> None:
    td = make_td(structure, batch(op))
    for args, kwargs in cases(op):
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
    for args, kwargs in cases(op):
        td = make_td("nested", batch(op))
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
    size = batch(op)
    for args, kwargs in cases(op):
        td = make_td("nested", size)
        want = run(op, td, args, kwargs)
        out = run(op, td, args, dict(kwargs, inplace=True))
        assert out is td
        assert td.batch_size == want.batch_size
        for key in tensor_keys(want):
            torch.testing.assert_close(td.get(key), want.get(key))
        assert td["sub"].batch_size == want["sub"].batch_size
    locked = make_td("dense", size).lock_()
    args, kwargs = cases(op)[0]
    with pytest.raises(RuntimeError, match="locked"):
        run(op, locked, args, dict(kwargs, inplace=True))


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_bad_arguments_raise_clear_errors(op: Op) -> None:
    td = make_td("dense", batch(op))
    for case in op.tests.errors:
        args, kwargs = arguments(case.call.args)
        with pytest.raises(getattr(builtins, case.raises)) as info:
            run(op, td, args, kwargs)
        for fragment in case.match:
            assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_torch_function_dispatches(op: Op) -> None:
    td = make_td("nested", batch(op))
    for dotted in op.torch_functions:
        fn = eval(dotted, {"torch": torch})
        matched = 0
        for args, kwargs in cases(op):
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
    assert td.flatten().batch_size == (1,)  # as torch.flatten of a 0-d tensor (0.15.3)
    assert td.flatten()["a"].shape == (1, 2)
    with pytest.raises(IndexError, match="start_dim=1"):
        td.flatten(1)
    with pytest.raises(IndexError, match="no batch dims"):
        td.transpose(0, 1)
