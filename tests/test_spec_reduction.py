"""Spec-driven tests of the reduction family (``spec/reduction.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method on a dense tensordict, a nested one
(whose nested tensordict has more batch dims than its parent) and a non-contiguous one
(leaves that are transposed or strided views, and a tensordict that is itself indexed),
with every form of ``dim`` the entry takes: each batch dim (positive and negative), a
tuple of batch dims where torch takes one, no dim, ``"feature"``, ``keepdim`` and
``reduce=True``. Every leaf of the result is compared with the torch function of the
op's name (``torch.sum(x, dims, keepdim=...)``) applied by hand, leaf by leaf, to the
matching input tensor (never with the entry's own expressions), and the batch size of
every level is compared with the one computed here from the batch dims. The extra
arguments an op is called with come from its spec entry (``tests: calls``). Bad dims must raise errors that name the op, the dim and the batch size.
Every ``torch_function`` dispatches (the examples run in ``test_spec_examples.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spec_cases import A, arguments, ops_of, torch_oracle

from codegen.model import Op, Role
from tensordict import TensorDict
from tensordict.base import NO_DEFAULT

# std/var over a size-one dim (a leaf without feature dims, dim="feature") is nan, as
# torch says with a warning
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")

OPS = ops_of("reduction")
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")
BATCH = (3, 4)


# --------------------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------------------


def _rand(gen, *shape, profile="float"):
    if profile == "bool":
        return torch.rand(shape, generator=gen) > 0.5
    out = torch.rand(shape, generator=gen) * 0.8 + 0.1
    if profile == "nan":
        out.view(-1)[::3] = float("nan")
    return out


def make_td(structure: str, profile: str = "float", seed: int = 0) -> TensorDict:
    """Batch size [3, 4], leaves with and without feature dims, a non-tensor entry."""
    gen = torch.Generator().manual_seed(seed)
    r = lambda *shape: _rand(gen, *shape, profile=profile)  # noqa: E731
    if structure == "dense":
        return TensorDict(a=r(3, 4, 2), b=r(3, 4), s="hello", batch_size=BATCH)
    if structure == "nested":
        sub = TensorDict(c=r(3, 4, 5, 2), d=r(3, 4, 5), batch_size=[3, 4, 5])
        same = TensorDict(e=r(3, 4, 3), batch_size=BATCH)
        return TensorDict(a=r(3, 4, 2), sub=sub, same=same, s="hello", batch_size=BATCH)
    assert structure == "noncontiguous"
    big = TensorDict(
        a=r(4, 3, 2).transpose(0, 1),  # (3, 4, 2), transposed storage
        b=r(6, 5)[::2, 1:],  # (3, 4), strided rows, offset columns
        sub=TensorDict(c=r(3, 4, 5, 3)[..., ::2], batch_size=[3, 4, 5]),
        s="hello",
        batch_size=BATCH,
    )
    wider = TensorDict(
        a=torch.cat([big["a"], big["a"][:, :1]], 1),
        b=torch.cat([big["b"], big["b"][:, :1]], 1),
        sub=TensorDict(
            c=torch.cat([big["sub", "c"], big["sub", "c"][:, :1]], 1),
            batch_size=[3, 5, 5],
        ),
        s="hello",
        batch_size=[3, 5],
    )
    out = wider[:, :4]  # the tensordict itself is an index of a larger one
    assert not out["a"].is_contiguous() and not out["b"].is_contiguous()
    return out


def profile_for(op: Op) -> str:
    if op.no_dim in ("all", "any"):
        return "bool"
    return "nan" if op.name.startswith("nan") else "float"


def tensor_keys(td) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def level_dims(td, key) -> int:
    """The batch dims of the level holding ``key``."""
    return td.get(key[:-1]).batch_dims if isinstance(key, tuple) else td.batch_dims


def levels(td):
    """(key path, tensordict) of every level, root first."""
    yield (), td
    for key in td.keys(True):
        value = td.get(key)
        if isinstance(value, TensorDict):
            yield (key if isinstance(key, tuple) else (key,)), value


# --------------------------------------------------------------------------------------
# What the spec says a result should be.
# --------------------------------------------------------------------------------------


def torch_result(op: Op, x, dim=None, keepdim=False, extra=A()):
    """What torch's function of the op's name gives for one leaf: over ``dim`` (with
    ``keepdim`` where the op takes it), or over every dim when ``dim`` is None. The
    extra arguments are the call's: positional ones (``q``) before the dim."""
    args, kwargs = extra
    fn = torch_oracle(op.name)
    if dim is None:
        return fn(x, *args, **kwargs)
    if op.signature.role(Role.KEEPDIM) is not None:
        kwargs = dict(kwargs, keepdim=keepdim)
    return fn(x, *args, dim, **kwargs)


def normalise(dim, n=len(BATCH)):
    if isinstance(dim, tuple):
        return tuple(d % n for d in dim)
    return dim % n


def reduced_size(batch, dims, keepdim):
    dims = {d % len(batch) for d in (dims if isinstance(dims, tuple) else (dims,))}
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(batch))
    return tuple(s for i, s in enumerate(batch) if i not in dims)


def feature_flat(x, n):
    return x.flatten(n) if n < x.ndim else x.unsqueeze(-1)


def pairs(value):
    """A (values, indices) result as its two parts; anything else as (value, None)."""
    if isinstance(value, tuple) and hasattr(value, "indices"):
        return value[0], value[1]
    return value, None


def expected_leaves(op: Op, td, dim, keepdim, extra) -> dict:
    """{key: (values, indices or None)} from torch, leaf by leaf."""
    out = {}
    for key in tensor_keys(td):
        x = td.get(key).clone()
        if dim is None and op.no_dim != "batch":
            value = torch_result(op, x, extra=extra)
            if keepdim:
                value = value.reshape(tuple(value.shape) + (1,) * x.ndim)
            out[key] = (value, None)
        elif dim == "feature":
            flat = feature_flat(x, level_dims(td, key))
            out[key] = pairs(torch_result(op, flat, -1, False, extra))
        else:
            d = tuple(range(len(BATCH))) if dim is None else normalise(dim)
            out[key] = pairs(torch_result(op, x, d, keepdim, extra))
    return out


def expected_root_size(op: Op, td, dim, keepdim, prefix) -> tuple:
    if dim is None and op.no_dim != "batch":
        return prefix + ((1,) * td.batch_dims if keepdim else ())
    if dim == "feature" or op.scan:
        return prefix + tuple(td.batch_size)
    dims = tuple(range(td.batch_dims)) if dim is None else dim
    return prefix + reduced_size(tuple(td.batch_size), dims, keepdim)


def check_result(op, td, result, dim, keepdim, extra, *, indices: bool) -> None:
    q = extra[0][0] if extra[0] else None
    prefix = tuple(q.shape) if isinstance(q, torch.Tensor) else ()
    want = expected_leaves(op, td, dim, keepdim, extra)
    if indices:
        assert isinstance(result, tuple) and type(result).__name__ == op.name
        values, idx = result.values, result.indices
    else:
        values, idx = result, None
    for got in (values, idx) if idx is not None else (values,):
        assert type(got) is TensorDict
        assert got["s"] == "hello"
        assert set(got.keys(True, True)) == set(td.keys(True, True))
        root = expected_root_size(op, td, dim, keepdim, prefix)
        assert got.batch_size == torch.Size(root), (dim, got.batch_size, root)
        # every nested level: the root's new batch size + the dims it has beyond
        for path, level in levels(td):
            if not path:
                continue
            extra_dims = tuple(level.batch_size[td.batch_dims :])
            if dim is None and op.no_dim != "batch":
                level_want = prefix + ((1,) * level.batch_dims if keepdim else ())
            elif dim == "feature":
                level_want = prefix + tuple(level.batch_size)
            else:
                level_want = root + extra_dims
            assert got.get(path).batch_size == torch.Size(level_want), path
    for key, (value, index) in want.items():
        torch.testing.assert_close(values.get(key), value, equal_nan=True, msg=str(key))
        if idx is not None:
            torch.testing.assert_close(idx.get(key), index, msg=str(key))


# --------------------------------------------------------------------------------------
# The cases an entry takes.
# --------------------------------------------------------------------------------------


def extras(op: Op) -> list[tuple]:
    """The extra arguments each call passes (the entry's ``tests: calls``)."""
    return [arguments(call.args) for call in op.tests.calls] or [A()]


def dim_cases(op: Op) -> list:
    if not op.signature.has("dim"):
        return [None]
    cases = [0, 1, -1, -2]
    if op.scan:
        return cases
    cases += [None, "feature"]
    if op.dims == "many":
        cases += [(0, 1), (-1,), (1, 0)]
    return cases


def call(op: Op, td, dim, keepdim=None, extra=A(), **kwargs):
    args, more = extra
    args = list(args)
    kwargs = dict(more, **kwargs)
    if dim is not None:
        kwargs["dim"] = dim
    if keepdim is not None:
        kwargs["keepdim"] = keepdim
    return getattr(td, op.name)(*args, **kwargs)


# --------------------------------------------------------------------------------------
# The checks.
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry_against_torch(op: Op, structure: str) -> None:
    td = make_td(structure, profile_for(op))
    keepdims = [None, True] if op.signature.has("keepdim") else [None]
    has_indices = op.signature.has("return_indices")
    for extra in extras(op):
        for dim in dim_cases(op):
            for keepdim in keepdims:
                if dim == "feature" and keepdim:
                    continue
                result = call(op, td, dim, keepdim, extra)
                kd = bool(keepdim)
                if dim is None and op.no_dim in ("all", "any"):
                    leaf_all = [bool(torch_result(op, td.get(k))) for k in tensor_keys(td)]
                    want = all(leaf_all) if op.no_dim == "all" else any(leaf_all)
                    assert result is want
                    continue
                indices = has_indices and dim is not None
                check_result(op, td, result, dim, kd, extra, indices=indices)
                if indices:  # return_indices=False: the values only
                    values = call(op, td, dim, keepdim, extra, return_indices=False)
                    check_result(op, td, values, dim, kd, extra, indices=False)


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_reduce_true_gives_one_tensor(op: Op) -> None:
    """``reduce=True``: the leaves reduced together, as one tensor."""
    if not op.signature.has("reduce"):
        pytest.skip(f"{op.name} takes no reduce")
    td = make_td("nested", profile_for(op))
    extra = extras(op)[0]
    flat = torch.cat([td.get(k).reshape(-1) for k in tensor_keys(td)])
    per_batch = torch.cat([td.get(k).reshape(3, 4, -1) for k in tensor_keys(td)], -1)
    if op.scan:  # scans: the batch dims, then every feature
        got = call(op, td, 1, extra=extra, reduce=True)
        want = torch_result(op, per_batch, 1, False, extra)
        torch.testing.assert_close(pairs(got)[0], pairs(want)[0])
        return
    got = call(op, td, None, extra=extra, reduce=True)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, torch_result(op, flat, extra=extra), equal_nan=True)
    got = call(op, td, "feature", extra=extra, reduce=True)
    want = torch_result(op, per_batch, -1, False, extra)
    torch.testing.assert_close(pairs(got)[0], pairs(want)[0], equal_nan=True)
    assert pairs(got)[0].shape[-2:] == torch.Size(BATCH)
    # a batch dim (as 0.15.3): the leaves concatenated along it, reduced over it as one
    # leaf, so the feature dims stay; it needs leaves of one shape
    same = td.select(*tensor_keys(td)[:1])
    same.set("twin", same.get(tensor_keys(td)[0]) * 2)
    leaves = [same.get(k) for k in tensor_keys(same)]
    got = call(op, same, 0, extra=extra, reduce=True)
    want = torch_result(op, torch.cat(leaves, 0), 0, False, extra)
    torch.testing.assert_close(pairs(got)[0], pairs(want)[0], equal_nan=True)
    if len({td.get(k).shape for k in tensor_keys(td)}) > 1:
        with pytest.raises(RuntimeError, match="same shape"):
            call(op, td, 0, extra=extra, reduce=True)
    with pytest.raises(ValueError, match="no tensor leaves"):
        call(op, TensorDict(batch_size=BATCH), None, extra=extra, reduce=True)


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_bad_dims_name_the_dim_and_batch_size(op: Op) -> None:
    td = make_td("dense", profile_for(op))
    extra = extras(op)[0]
    if not op.signature.has("dim"):
        pytest.skip(f"{op.name} takes no dim")
    for bad in (2, -3, 7):
        with pytest.raises(IndexError) as info:
            call(op, td, bad, extra=extra)
        message = str(info.value)
        assert f"{op.name}(): dim={bad}" in message
        assert "batch_size [3, 4]" in message and "[-2, 1]" in message
    if op.scan:
        return
    if op.dims == "one":
        with pytest.raises(TypeError, match=r"one batch dim at a time.*\(0, 1\)"):
            call(op, td, (0, 1), extra=extra)
    else:
        with pytest.raises(IndexError, match="dim=5"):
            call(op, td, (0, 5), extra=extra)
        with pytest.raises(ValueError, match="more than once"):
            call(op, td, (0, -2), extra=extra)
    with pytest.raises(ValueError, match="'feature'"):
        call(op, td, "features", extra=extra)
    if op.signature.has("keepdim"):
        with pytest.raises(TypeError, match="keepdim"):
            call(op, td, "feature", True, extra=extra)


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_torch_errors_are_torchs(op: Op) -> None:
    """A leaf torch rejects raises torch's own error (mean of integers...)."""
    td = TensorDict(a=torch.arange(12).reshape(3, 4), batch_size=BATCH)
    extra = extras(op)[0]
    dim = 0 if op.signature.has("dim") else None
    try:
        want = torch_result(op, td["a"], dim, False, extra)
    except Exception as exc:  # noqa: BLE001 - the op must raise the same
        with pytest.raises(type(exc)):
            call(op, td, dim, extra=extra)
    else:
        got = call(op, td, dim, extra=extra)
        torch.testing.assert_close(pairs(got)[0]["a"], pairs(want)[0])


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_key_transform(op: Op) -> None:
    if not op.signature.has("key_transform"):
        pytest.skip(f"{op.name} takes no key_transform")
    td = make_td("nested")
    extra = extras(op)[0]
    plain = call(op, td, None, extra=extra)
    renamed = call(op, td, None, extra=extra, key_transform=lambda k: k + "_x")
    assert set(renamed.keys()) == {k + "_x" for k in plain.keys()}
    torch.testing.assert_close(renamed["sub_x", "c_x"], plain["sub", "c"])
    if op.signature.has("dim"):
        renamed = call(op, td, 0, extra=extra, key_transform=str.upper)
        assert "A" in renamed.keys() and ("SUB", "C") in renamed.keys(True)


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_torch_function_dispatches(op: Op) -> None:
    td = make_td("nested", profile_for(op))
    extra = extras(op)[0]
    for dotted in op.torch_functions:
        fn = eval(dotted, {"torch": torch})
        args = list(extra[0])
        if op.signature.has("dim"):
            args.append(0)
        got = fn(td, *args)
        want = getattr(td, op.name)(*args)
        for g, w in zip(*(pairs(v) for v in (got, want))):
            if g is None:
                continue
            for key in tensor_keys(td):
                torch.testing.assert_close(g.get(key), w.get(key), equal_nan=True)


# --------------------------------------------------------------------------------------
# Behaviour the spec-driven checks do not cover.
# --------------------------------------------------------------------------------------


def test_signature_defaults_are_the_users_ones() -> None:
    import inspect

    params = inspect.signature(TensorDict.sum).parameters
    assert (
        params["dim"].default is NO_DEFAULT and params["keepdim"].default is NO_DEFAULT
    )
    td = make_td("dense")
    assert td.sum(NO_DEFAULT, NO_DEFAULT).batch_size == torch.Size([])


def test_no_dim_reduces_every_dim_of_every_level() -> None:
    td = make_td("nested")
    out = td.mean()
    assert out.batch_size == () and out["sub"].batch_size == ()
    assert out["sub", "c"].shape == () and out["same", "e"].shape == ()
    out = td.mean(keepdim=True)
    assert out.batch_size == (1, 1) and out["sub"].batch_size == (1, 1, 1)
    assert out["sub", "c"].shape == (1, 1, 1, 1)
    # logsumexp: every batch dim, the feature dims stay
    out = td.logsumexp()
    assert out.batch_size == () and out["a"].shape == (2,)
    assert out["sub"].batch_size == (5,) and out["sub", "c"].shape == (5, 2)


def test_feature_dim_keeps_every_level() -> None:
    td = make_td("nested")
    out = td.sum("feature")
    assert out.batch_size == BATCH and out["sub"].batch_size == (3, 4, 5)
    assert out["a"].shape == BATCH and out["sub", "c"].shape == (3, 4, 5)
    torch.testing.assert_close(out["sub", "d"], td["sub", "d"])  # no feature dims


def test_all_any_without_leaves_and_with_dims() -> None:
    assert TensorDict(batch_size=[3]).all() is True
    assert TensorDict(batch_size=[3]).any() is False
    td = make_td("nested", "bool")
    assert td.all((0, 1))["a"].shape == (2,)
    torch.testing.assert_close(td.any(-1)["sub", "c"], td["sub", "c"].any(1))


def test_min_max_return_types() -> None:
    td = make_td("dense")
    result = torch.max(td, 1)
    assert isinstance(result, torch.return_types.max)
    values, indices = result
    assert values.batch_size == (3,) and indices["a"].dtype == torch.int64
    assert isinstance(td.max(), TensorDict) and td.max()["a"].shape == ()
    cm = td.cummin(0)
    assert isinstance(cm, torch.return_types.cummin) and cm.values.batch_size == BATCH


def test_out_receives_the_result() -> None:
    td = make_td("nested")
    out = td.logsumexp(0).zero_()
    assert td.logsumexp(0, out=out) is out
    torch.testing.assert_close(out["sub", "c"], td["sub", "c"].logsumexp(0))
    norms = td.norm().zero_()
    assert td.norm(out=norms) is norms
    torch.testing.assert_close(norms["a"], torch.linalg.vector_norm(td["a"]))


def test_generated_all_any_replace_the_hand_written_ones() -> None:
    from tensordict.base import TensorDictBase

    assert "all" not in TensorDictBase.__dict__ and "any" not in TensorDictBase.__dict__
    assert not hasattr(TensorDictBase, "_reduce_bool")


@pytest.mark.parametrize("by_keyword", [False, True])
def test_softmax_dtype_casts_every_leaf(by_keyword: bool) -> None:
    # the generated method passes dtype to torch positionally: either spelling of the
    # user's call reaches torch as dtype
    td = make_td("nested")
    out = td.softmax(1, dtype=torch.float64) if by_keyword else td.softmax(1, torch.float64)
    for key, x in td.items(True, True):
        if isinstance(x, torch.Tensor):
            expected = torch.softmax(x, 1, dtype=torch.float64)
            assert out[key].dtype == torch.float64
            torch.testing.assert_close(out[key], expected)


def test_dim_forms_a_one_dim_op_takes() -> None:
    # a plain int skips the int conversion; anything else still goes through it
    td = make_td("dense")
    expected = td.softmax(1)
    for dim in (-1, np.int64(1), torch.tensor(1)):
        torch.testing.assert_close(td.softmax(dim)["a"], expected["a"])
    with pytest.raises(TypeError, match=r"softmax\(\): dim must be an int, got True"):
        td.softmax(True)
    with pytest.raises(TypeError, match="must be an int, got float 1.0"):
        td.softmax(1.0)
