"""Spec-driven tests of the lazy forms: every entry of ``spec/*.yaml`` on lazy stacks.

One parametrized test walks every entry (loaded through ``codegen.loader``) and calls
the op on lazy stacks of three tensordicts (stack dim 0, 1 and 2, a lazy stack of lazy
stacks, and members that hold a nested tensordict), with each argument form in
``CASES``. The oracle is the same op on the dense stack (``stack.to_tensordict()``):
the lazy result, made dense, must hold the same batch size, keys and values, and where
the dense op raises, the lazy one raises the same kind of error. In-place ops must
leave the stacked tensordicts (the originals) as the dense op leaves the dense stack.
It also checks how each op runs (``codegen/lazy.py``): a per-member op keeps a lazy
stack (and, on members whose shapes differ, still works), a dense one names the op in
its error on such members.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # codegen/ is not installed; it runs from the checkout
    sys.path.insert(0, str(ROOT))

from codegen.lazy import lazy_strategy
from codegen.loader import load_spec
from codegen.model import Op
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase

SPEC = load_spec(ROOT / "spec")
OPS = [op for op in SPEC.ops()]
IDS = [op.name for op in OPS]


def A(*args, **kwargs):
    return args, kwargs


# ---------------------------------------------------------------------------------------
# data: 3 members of batch size (2, 4) (or MEMBER_BATCH[op]) -> a stack of 3 batch dims
# ---------------------------------------------------------------------------------------

MEMBER_BATCH = {"squeeze": (1, 4)}
STRUCTURES = ("dim0", "dim1", "dim2", "lazy_of_lazy")


def member(seed: int, batch=(2, 4), nested: bool = True) -> TensorDict:
    gen = torch.Generator().manual_seed(seed)
    data = {"a": torch.rand(*batch, 5, generator=gen) * 0.8 + 0.1}
    if nested:
        data["n"] = {"b": torch.rand(*batch, generator=gen) * 0.8 + 0.1}
    return TensorDict(data, batch_size=batch)


def make_stack(structure: str, batch=(2, 4), seed: int = 0):
    if structure == "lazy_of_lazy":
        inner = [
            LazyStackedTensorDict(
                *(member(seed + 10 * j + i, batch[1:]) for i in range(batch[0])),
                stack_dim=0,
            )
            for j in range(3)
        ]
        return LazyStackedTensorDict(*inner, stack_dim=1)
    sd = int(structure[-1])
    return LazyStackedTensorDict(
        *(member(seed + i, batch) for i in range(3)), stack_dim=sd
    )


def _bool_mask(shape):
    gen = torch.Generator().manual_seed(3)
    return torch.rand(shape, generator=gen) > 0.4


# The argument forms, as functions of the stack's batch size (or fixed).
def _dims(n=3):
    return [A(d) for d in range(n)] + [A(-1)]


CASES = {
    # batch_shape
    "view": [A(-1), A(4, 6), A(size=[24]), A(torch.float32)],
    "reshape": [A(-1), A(6, 4), A(shape=(24,))],
    "permute": [A(2, 0, 1), A(1, 0, 2), A(0, 2, 1), A(dims=(2, 1, 0))],
    "transpose": [A(0, 2), A(1, -1), A(0, 1), A(1, 1)],
    "swapdims": [A(0, 2), A(1, 2)],
    "swapaxes": [A(0, 1)],
    "movedim": [A(0, 2), A((0, 1), (1, 2)), A(-1, 0)],
    "moveaxis": [A(2, 0)],
    "squeeze": [A(), A(0), A(1), A(2), A(dim=-2)],
    "unsqueeze": [A(0), A(1), A(2), A(3), A(-1), A(dim=-2)],
    "flatten": [A(), A(0, 1), A(1, 2), A(1, 1), A(start_dim=1)],
    "unflatten": [
        lambda bs: A(0, (1, bs[0])),
        lambda bs: A(1, (bs[1], 1)),
        lambda bs: A(2, (1, -1)),
    ],
    "expand": [lambda bs: A(2, *bs)],
    "expand_as": [lambda bs: A(TensorDict(batch_size=(2, *bs)))],
    "broadcast_to": [lambda bs: A((2, *bs))],
    "repeat": [A(2, 1, 1), A(1, 1, 2)],
    "repeat_interleave": [A(2), A(2, dim=1)],
    "tile": [A((1, 2, 1))],
    "flip": [A((0,)), A((1, 2)), A((0, 1, 2))],
    "fliplr": [A()],
    "flipud": [A()],
    "roll": [A(1, 0), A(1, 1), A((1, 2), (0, 2)), A(1)],
    "rot90": [A(1, (0, 1)), A(1, (1, 2))],
    "atleast_1d": [A()],
    "atleast_2d": [A()],
    "atleast_3d": [A()],
    "narrow": [A(0, 1, 1), A(1, 0, 1), A(2, 1, 2)],
    "contiguous": [A()],
    # indexing
    "split": [A(1, 0), A(1, 1), A(2, 2), A([1, 1], 1)],
    "chunk": [A(2, 0), A(2, 1), A(2, 2)],
    "tensor_split": [A(2, 0), A([1], 1), A(2, 2)],
    "unbind": [A(0), A(1), A(2)],
    "gather": [lambda bs: A(1, torch.zeros(bs, dtype=torch.long))],
    "masked_fill": [lambda bs: A(_bool_mask(bs), 0.0)],
    "masked_select": [lambda bs: A(_bool_mask(bs))],
    "where": [lambda bs: A(_bool_mask(bs), 0.0)],
    # device
    "to": [A(torch.float64), A("cpu"), A(device="cpu", dtype=torch.float16)],
    "cpu": [A()],
    "cuda": [],
    "pin_memory": [],
    "pin_memory_": [],
    "record_stream": [],
    "share_memory_": [A()],
    "detach": [A()],
    "requires_grad_": [A()],
    "zero_": [A()],
    "fill_": [A("a", 2.0), A(("n", "b"), 3.0)],
    "zero_grad": [A()],
    "clone": [A(), A(recurse=False)],
    "as_tensor": [A()],
    "numpy": [A()],
    "tolist": [A()],
    "new_zeros": [A(2, 3)],
    "new_ones": [A((2,))],
    "new_empty": [A(2)],
    "new_full": [A((2, 3), 1.5)],
    "new_tensor": [A(torch.ones(2, 3))],
    # attributes that join the leaves along a dim
    "stack_from_tensordict": [A(), A(1), A(0, sorted=True)],
    "cat_from_tensordict": [A(), A(2)],
    # stacking: the inputs are two stacks like the one under test
    "stack": [A(0), A(1), A(-1)],
    "cat": [A(0), A(1), A(2)],
}
REDUCTION_CASES = {
    "many": [
        A(),
        A(0),
        A(1),
        A(2),
        A((0, 2)),
        A(1, True),
        A(0, keepdim=True),
        A("feature"),
    ],
    "one": [A(), A(0), A(1), A(2), A(-1, True)],
    "scan": [A(0), A(1), A(2)],
}
NO_REDUCE_KWARG = {"all", "any", "logsumexp", "norm", "softmax"}
# ops whose values are random or left uninitialised: only shapes and dtypes compare
SHAPES_ONLY = {"new_empty", "rand_like", "randn_like", "empty_like"}
# lazy stacks differ from their dense stack here on purpose: a lazy stack is never
# contiguous, and its leaves live in the stacked tensordicts' storages
NOT_COMPARED = {"is_contiguous", "data_ptr"}
# the torch functions of entries without a method (``method: false``)
TORCH_ONLY = {
    "zeros_like": A(),
    "ones_like": A(),
    "empty_like": A(),
    "full_like": A(2.0),
    "rand_like": A(),
    "randn_like": A(),
}


def cases_for(op: Op):
    if op.name in CASES:
        return CASES[op.name]
    if op.family in ("pointwise", "cast"):
        return [A(torch.float64)] if op.name == "type" else [A()]
    if op.family == "binary":
        values = [0.5] * len(op.operands)
        return [A(*values), A("dense", *values[1:]), A("lazy", *values[1:])]
    if op.family == "reduction":
        if op.name in ("quantile",):
            return [A(0.5, d) for d in range(3)] + [A(torch.tensor([0.2, 0.8]), 1)]
        if op.name == "norm":
            return [A()]
        if op.batch_size == "keep":
            cases = list(REDUCTION_CASES["scan"])
        else:
            cases = list(REDUCTION_CASES[op.dims])
        if op.name in ("all", "any"):
            cases = [A(), A(0), A(1), A(2)]
        if op.name not in NO_REDUCE_KWARG and op.signature.has("reduce"):
            cases.append(A(reduce=True))
        return cases
    if not op.method and op.name in TORCH_ONLY:
        return [TORCH_ONLY[op.name]]
    if all(p.default is not None or p.kind.startswith("var") for p in op.signature.params):
        return [A()]  # nothing required (attributes and the like)
    raise KeyError(op.name)


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
    if isinstance(b, np.ndarray) or isinstance(a, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and len(a) == len(b)
            and all(_equal_data(x, y) for x, y in zip(a, b))
        )
    return a == b


def _resolve(case, bs, stack_like):
    if callable(case):
        case = case(bs)
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
    if op.signature.receiver == "cls":
        (dim,) = args
        fn = getattr(type(obj), op.name)
        return fn([obj, other], dim, **kwargs)
    if not op.method:
        return getattr(torch, op.name)(obj, *args, **kwargs)
    return getattr(obj, op.name)(*args, **kwargs)


def outcome(fn):
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - compared with what the op raises
        return None, exc


def _is_inplace(op: Op) -> bool:
    return op.result in ("in_place", "replace") or op.name.endswith("_")


@pytest.mark.parametrize("op", OPS, ids=IDS)
@pytest.mark.parametrize("structure", STRUCTURES)
def test_lazy_matches_dense(op: Op, structure: str):
    batch = MEMBER_BATCH.get(op.name, (2, 4))
    for number, case in enumerate(cases_for(op)):
        lazy = make_stack(structure, batch, seed=number)
        dense = lazy.to_tensordict()
        other_lazy = make_stack(structure, batch, seed=100 + number)
        other_dense = other_lazy.to_tensordict()

        def like(kind):
            return other_dense if kind == "dense" else other_lazy

        args, kwargs = _resolve(case, dense.batch_size, like)
        where = f"{op.name}{tuple(args)}{kwargs} on {structure}"
        expected, error = outcome(lambda: _call(dense, op, args, kwargs, other_dense))
        if error is not None:
            with pytest.raises(type(error)):
                _call(lazy, op, args, kwargs, other_lazy)
            continue
        got = _call(lazy, op, args, kwargs, other_lazy)
        if op.name in NOT_COMPARED:
            continue
        assert_same(got, expected, op.name in SHAPES_ONLY, where)
        if _is_inplace(op):
            # the stacked tensordicts are written as the dense stack was
            assert_same(lazy.to_tensordict(), dense, op.name in SHAPES_ONLY, where)


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
        ("view", A(-1)),
        ("sum", A(0)),
        ("flatten", A()),
        ("expand", A(2, 3, 2, 4)),
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

    stacks = [make_stack("dim1"), make_stack("dim1", seed=4)]
    dense = torch.stack(stacks, 0)
    assert type(dense) is TensorDict and dense.batch_size == (2, 2, 3, 4)
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
        stack.repeat(1, 2, inplace=True)


def test_masked_fill_inplace_writes_the_members():
    members = [member(i) for i in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=1)
    mask = torch.zeros(2, 3, 4, dtype=torch.bool)
    mask[:, 2] = True
    assert stack.masked_fill_(mask, -1.0) is stack
    assert (members[2]["a"] == -1).all() and not (members[0]["a"] == -1).any()


def test_every_op_has_cases_and_a_lazy_form():
    for op in OPS:
        cases_for(op)  # raises KeyError for an op without cases
        lazy_strategy(op)
        if op.method:
            for name in op.method_names():
                assert hasattr(LazyStackedTensorDict, name), name
