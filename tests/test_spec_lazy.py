"""Spec-driven tests of the lazy forms: every entry of ``spec/*.yaml`` on lazy stacks.

One parametrized test walks every entry (loaded through ``codegen.loader``) and calls
the op on lazy stacks along every batch dim of the batch size its spec entry's tests
use (and a lazy stack of lazy stacks; members hold a nested tensordict), with each
argument form of the entry (``tests: calls``, or forms derived from the family: a
number and a tensordict for a binary operand, every dim for a reduction). The oracle is the same op on the dense stack (``stack.to_tensordict()``):
the lazy result, made dense, must hold the same batch size, keys and values, and where
the dense op raises, the lazy one raises the same kind of error. In-place ops must
leave the stacked tensordicts (the originals) as the dense op leaves the dense stack.
It also checks how each op runs (its family's ``lazy_way``): a per-member op keeps a lazy
stack (and, on members whose shapes differ, still works), a dense one names the op in
its error on such members.
"""

from __future__ import annotations

import pytest
import torch
from spec_cases import A, SPEC, arguments, batch_size

from codegen.checks import split_torch_function
from codegen.lazy import WAYS
from codegen.model import Form, Op, Role
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase

OPS = list(SPEC.ops())
# tiny batch dims: std over one element is nan, as torch warns
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*degrees of freedom:UserWarning",
    "ignore:ComplexHalf support is experimental",
)
IDS = [op.name for op in OPS]


# ---------------------------------------------------------------------------------------
# data: lazy stacks whose batch size is the one the op's tests use (default (3, 2, 4)),
# along each batch dim, and a lazy stack of lazy stacks
# ---------------------------------------------------------------------------------------

DEFAULT_BATCH = (3, 2, 4)


def structures(batch: tuple) -> list[str]:
    out = [f"dim{d}" for d in range(len(batch))]
    return out + (["lazy_of_lazy"] if len(batch) >= 2 else [])


def member(seed: int, batch=(2, 4), nested: bool = True) -> TensorDict:
    gen = torch.Generator().manual_seed(seed)
    data = {"a": torch.rand(*batch, 5, generator=gen) * 0.8 + 0.1}
    if nested:
        data["n"] = {"b": torch.rand(batch, generator=gen) * 0.8 + 0.1}
    return TensorDict(data, batch_size=batch)


def make_stack(structure: str, batch: tuple, seed: int = 0):
    """A lazy stack of batch size ``batch``."""
    if structure == "lazy_of_lazy":  # stacked along dim 1 of lazy stacks along dim 0
        inner = [
            LazyStackedTensorDict(
                *(member(seed + 10 * j + i, batch[2:]) for i in range(batch[0])),
                stack_dim=0,
            )
            for j in range(batch[1])
        ]
        return LazyStackedTensorDict(*inner, stack_dim=1)
    sd = int(structure[3:])
    members = batch[:sd] + batch[sd + 1 :]
    return LazyStackedTensorDict(
        *(member(seed + i, members) for i in range(batch[sd])), stack_dim=sd
    )


REQUIRED_ARGS = {"dst_type": torch.float64}
# lazy stacks differ from their dense stack here on purpose: a lazy stack is never
# contiguous, and its leaves live in the stacked tensordicts' storages
NOT_COMPARED = {"is_contiguous", "data_ptr"}


def reduction_cases(op: Op, n: int) -> list:
    """Every batch dim, a tuple of dims, keepdim, "feature", no dim, reduce=True."""
    dims = [A(d) for d in range(n)]
    if op.scan:
        cases = dims
    else:
        cases = [A()] + dims + [A(-1)]
        if op.dims == "many":
            cases.append(A((0, n - 1)))
        if op.signature.role(Role.KEEPDIM):
            cases += [A(1, True), A(0, keepdim=True)]
        if op.no_dim not in ("all", "any"):
            cases.append(A("feature"))
    if op.signature.role(Role.REDUCE):
        cases.append(A(*cases[1][0], reduce=True))
    return cases


def cases_for(op: Op, bs: tuple, other=None) -> list:
    """The argument forms an op is called with on a lazy stack of batch size ``bs``."""
    if op.family == "reduction":
        if not op.signature.role(Role.DIM):
            return [A()]
        extras = [arguments(c.args) for c in op.tests.calls] or [A()]
        return [
            A(*extra[0], *args, **extra[1], **kwargs)
            for extra in extras
            for args, kwargs in reduction_cases(op, len(bs))
        ]
    if op.tests.calls:
        like = TensorDict(batch_size=bs)  # what the calls' names read
        return [arguments(c.args, like, other) for c in op.tests.calls]
    if op.family == "binary":
        values = [0.5] * len(op.operands)
        return [A(*values), A("dense", *values[1:]), A("lazy", *values[1:])]
    if op.form is Form.CLASSMETHOD:
        return [A(d) for d in range(len(bs))] + [A(-1)]
    required = [
        p
        for p in op.signature.params
        if p.default is None and not p.kind.startswith("var")
    ]
    return [A(*(REQUIRED_ARGS[p.name] for p in required))]


# ---------------------------------------------------------------------------------------
# comparing results
# ---------------------------------------------------------------------------------------


def dense_of(value):
    if isinstance(value, LazyStackedTensorDict):
        return value.to_tensordict()
    return value


def assert_same(got, expected, shapes_only=False, where=""):
    got = dense_of(got)
    if isinstance(expected, TensorDictBase):
        assert isinstance(got, TensorDictBase), (where, type(got))
        assert got.batch_size == expected.batch_size, where
        keys = set(expected.keys(True, True))
        assert set(got.keys(True, True)) == keys, where
        for key in keys:
            assert_same(got.get(key), expected.get(key), shapes_only, f"{where} {key}")
    elif (
        isinstance(expected, (tuple, list))
        and expected
        and all(isinstance(e, TensorDictBase) for e in expected)
    ):
        assert type(got) is type(expected) and len(got) == len(expected), where
        for g, e in zip(got, expected):
            assert_same(g, e, shapes_only, where)
    elif isinstance(expected, torch.Tensor):
        assert isinstance(got, torch.Tensor), (where, type(got))
        assert got.shape == expected.shape and got.dtype == expected.dtype, where
        if not shapes_only:
            torch.testing.assert_close(got, expected, equal_nan=True, msg=where)
    else:
        assert _equal_data(got, expected), where


def _equal_data(a, b) -> bool:
    """Python data (nested dicts and lists, numpy arrays, numbers) compare equal."""
    import numpy as np

    if isinstance(b, dict):
        return (
            isinstance(a, dict)
            and a.keys() == b.keys()
            and all(_equal_data(a[k], b[k]) for k in b)
        )
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and torch.equal(a, b)
    if isinstance(b, TensorDictBase):
        return isinstance(a, TensorDictBase) and _equal_data(a.to_dict(), b.to_dict())
    if isinstance(b, np.ndarray) or isinstance(a, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and len(a) == len(b)
            and all(_equal_data(x, y) for x, y in zip(a, b))
        )
    return a == b


def _resolve(case, stack_like):
    args, kwargs = case
    args = [
        (
            stack_like("dense")
            if a == "dense"
            else stack_like("lazy") if a == "lazy" else a
        )
        for a in args
    ]
    return args, kwargs


def _call(obj, op: Op, args, kwargs, other):
    if op.form is Form.CLASSMETHOD:
        (dim,) = args
        fn = getattr(type(obj), op.name)
        return fn([obj, other], dim, **kwargs)
    if op.form is Form.FUNCTION:  # the torch function reaching it: torch.zeros_like
        fn = eval(split_torch_function(op.torch_functions[0])[0], {"torch": torch})
        return fn(obj, *args, **kwargs)
    return getattr(obj, op.name)(*args, **kwargs)


def outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - compared with what the op raises
        return None, exc


def _is_inplace(op: Op) -> bool:
    return getattr(op, "result", None) in ("in_place", "replace") or op.name.endswith(
        "_"
    )


# torch.autograd.grad needs inputs its outputs were computed from, which no generic
# call gives: its lazy stacks are checked in tests/test_compat_rows_func.py.
CASES = [
    (op, structure)
    for op in OPS
    if op.family != "autograd"
    for structure in structures(batch_size(op, DEFAULT_BATCH))
]


@pytest.mark.parametrize(
    "op, structure", CASES, ids=[f"{op.name}-{structure}" for op, structure in CASES]
)
def test_lazy_matches_dense(op: Op, structure: str):
    batch = batch_size(op, DEFAULT_BATCH)
    try:
        count = len(cases_for(op, batch, make_stack(structure, batch).to_tensordict()))
    except (AssertionError, RuntimeError) as exc:  # torch.cuda.current_stream()...
        pytest.skip(f"the calls of {op.name} need what this machine lacks: {exc}")
    for number in range(count):
        lazy = make_stack(structure, batch, seed=number)
        dense = lazy.to_tensordict()
        other_lazy = make_stack(structure, batch, seed=100 + number)
        other_dense = other_lazy.to_tensordict()
        case = cases_for(op, batch, other_dense)[number]

        def like(kind):
            return other_dense if kind == "dense" else other_lazy

        args, kwargs = _resolve(case, like)
        where = (
            f"the lazy form of {op.name}{tuple(args)}{kwargs} on {structure} "
            f"against the TensorDict form ({op.location})"
        )
        expected, error = outcome(lambda: _call(dense, op, args, kwargs, other_dense))
        if error is not None:
            with pytest.raises(type(error)):
                _call(lazy, op, args, kwargs, other_lazy)
            continue
        got = _call(lazy, op, args, kwargs, other_lazy)
        if op.name in NOT_COMPARED:
            continue
        assert_same(got, expected, op.tests.values != "defined", where)
        if _is_inplace(op):
            # the stacked tensordicts are written as the dense stack was
            assert_same(
                lazy.to_tensordict(), dense, op.tests.values != "defined", where
            )


# ---------------------------------------------------------------------------------------
# how the ops run: lazily where they can, with the op's name where they cannot
# ---------------------------------------------------------------------------------------


def ragged_stack(stack_dim=0):
    """Members whose leaf "a" differs in its feature dim."""
    members = [
        TensorDict(
            a=torch.rand(2, 4, 3 + i), n={"b": torch.rand(2, 4)}, batch_size=[2, 4]
        )
        for i in range(3)
    ]
    return LazyStackedTensorDict(*members, stack_dim=stack_dim)


PER_MEMBER = [
    ("transpose", A(1, 2)),
    ("transpose", A(0, 2)),
    ("permute", A(2, 0, 1)),
    ("movedim", A(0, 2)),
    ("unsqueeze", A(1)),
    ("flatten", A(1, 2)),
    ("unflatten", A(2, (2, 2))),
    ("narrow", A(0, 1, 2)),
    ("flip", A((0, 1))),
    ("roll", A(1, 0)),
    ("rot90", A(1, (1, 2))),
    ("split", A(1, 0)),
    ("chunk", A(2, 2)),
    ("unbind", A(2)),
    ("sum", A(1)),
    ("mean", A((1, 2), True)),
    ("amax", A(2)),
    ("cummax", A(1)),
    ("softmax", A(2)),
    ("abs", A()),
    ("add", A(1.0)),
    ("to", A(torch.float64)),
    ("clone", A()),
    # reshapes keeping the dims before the stack dim, expand, where, masked_fill
    # (issue 14 row 4)
    ("view", A(-1)),
    ("reshape", A(6, 4)),
    ("flatten", A()),
    ("expand", A(2, 3, 2, 4)),
    ("repeat", A(1, 2, 1)),
    ("where", A(torch.ones(3, 2, 4, dtype=torch.bool), 0.0)),
    ("masked_fill", A(torch.ones(3, 2, 4, dtype=torch.bool), 0.0)),
]


@pytest.mark.parametrize(
    "name, case", PER_MEMBER, ids=[f"{n}{c[0]}" for n, c in PER_MEMBER]
)
def test_per_member_ops_work_on_members_of_different_shapes(name, case):
    stack = ragged_stack()
    args, kwargs = case
    result = getattr(stack, name)(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    for r in results:
        # per member on members of different shapes: still a lazy stack, still ragged
        assert isinstance(r, LazyStackedTensorDict), type(r)
        assert r.get_item_shape("a")[-1] == -1 or len(r.tensordicts) == 1


@pytest.mark.parametrize(
    "name, case",
    [
        ("view", A(2, 12)),  # mixes the stack dim's members: needs the dense stack
        ("sum", A(0)),
        ("numpy", A()),
    ],
)
def test_dense_ops_name_the_op_on_members_of_different_shapes(name, case):
    stack = ragged_stack()
    args, kwargs = case
    with pytest.raises(RuntimeError, match=rf"^{name}\(\).*LazyStackedTensorDict.*'a'"):
        getattr(stack, name)(*args, **kwargs)


def test_permutations_keep_the_members():
    members = [member(i) for i in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    moved = stack.transpose(0, 2)
    assert isinstance(moved, LazyStackedTensorDict) and moved.stack_dim == 2
    assert moved.batch_size == (4, 2, 3)
    # a view: writing through the result writes the originals
    moved["a"].zero_() if False else moved.tensordicts[1]["a"].zero_()
    assert (members[1]["a"] == 0).all()
    assert stack.unsqueeze(0).stack_dim == 1 and stack.unsqueeze(1).stack_dim == 0
    assert stack.unbind(0)[2] is members[2]
    assert stack.narrow(0, 1, 2).tensordicts[0] is members[1]
    assert stack.flip((0,)).tensordicts[0] is members[2]
    assert LazyStackedTensorDict(members[0]).squeeze(0) is members[0]
    single = LazyStackedTensorDict(members[0], stack_dim=1)
    assert single.squeeze(1) is members[0]


def test_cat_along_the_stack_dim_joins_the_members():
    a = [member(i) for i in range(2)]
    b = [member(i + 5) for i in range(3)]
    joined = torch.cat([LazyStackedTensorDict(*a), LazyStackedTensorDict(*b)], 0)
    assert isinstance(joined, LazyStackedTensorDict) and joined.batch_size == (5, 2, 4)
    assert joined.tensordicts[2] is b[0]
    side = torch.cat(
        [
            LazyStackedTensorDict(*a, stack_dim=1),
            LazyStackedTensorDict(*a, stack_dim=1),
        ],
        2,
    )
    assert isinstance(side, LazyStackedTensorDict) and side.batch_size == (2, 2, 8)


def test_stack_of_lazy_stacks_follows_lazy_legacy():
    from tensordict import set_lazy_legacy

    stacks = [make_stack("dim1", (2, 3, 4)), make_stack("dim1", (2, 3, 4), seed=4)]
    # as 0.15.3: lazy stacks alike give a lazy stack of their members stacked one by
    # one, the stack dim one along
    stacked = torch.stack(stacks, 0)
    assert isinstance(stacked, LazyStackedTensorDict)
    assert stacked.stack_dim == 2 and stacked.batch_size == (2, 2, 3, 4)
    expected = torch.stack([s.to_tensordict() for s in stacks], 0)
    for key, value in expected.items(True, True):
        torch.testing.assert_close(stacked.get(key), value)
    with set_lazy_legacy(True):
        lazy = torch.stack(stacks, 0)
    assert isinstance(lazy, LazyStackedTensorDict) and lazy[1] is stacks[1]


def test_inplace_shape_op_on_a_stack():
    members = [member(i) for i in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    assert stack.flatten(1, 2, inplace=True) is stack
    assert stack.batch_size == (3, 8) and members[0].batch_size == (8,)
    with pytest.raises(RuntimeError, match="inplace=True"):
        stack.flatten(0, 1, inplace=True)
    with pytest.raises(RuntimeError, match="inplace=True"):
        stack.repeat(2, 1, inplace=True)  # more members: not in place


def test_masked_fill_inplace_writes_the_members():
    members = [member(i) for i in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=1)
    mask = torch.zeros(2, 3, 4, dtype=torch.bool)
    mask[:, 2] = True
    assert stack.masked_fill_(mask, -1.0) is stack
    assert (members[2]["a"] == -1).all() and not (members[0]["a"] == -1).any()


def test_every_op_has_cases_and_a_lazy_form():
    for op in OPS:
        if op.family == "autograd":  # see CASES
            continue
        if "cuda" not in str(op.tests.calls):  # the calls of record_stream need a GPU
            batch = batch_size(op, DEFAULT_BATCH)
            assert cases_for(op, batch, TensorDict(batch_size=batch)), op.name
        assert op.lazy_way in WAYS
        if op.form is not Form.FUNCTION:
            for name in op.method_names():
                assert hasattr(LazyStackedTensorDict, name), name
