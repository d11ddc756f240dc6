"""Spec-driven tests of the indexing family (``spec/indexing.yaml``).

One parametrized test walks every entry of the family (loaded through
``codegen.loader``) and calls the generated method with each argument form of its spec
entry (``tests: calls``) on a dense tensordict, a nested one (whose nested tensordicts
have more batch dims than their parent) and a non-contiguous one (strided, transposed
leaves). The oracles come from torch, never from the entry's expressions:

- ops that move batch elements (a rule defining ``new_batch_size`` or
  ``batch_sizes``): the torch function of the op's name applied to a tensor of batch
  indices (``torch.split(torch.arange(numel).reshape(batch_size), ...)``) says which
  batch element lands where; every leaf must equal the input leaf gathered at those
  indices (feature dims untouched), and every level's batch size must be the index
  tensor's shape followed by that level's extra dims;
- ops that keep the batch size: the torch function applied leaf by leaf, the batch
  mask expanded over the leaf's feature dims (``expand_right``).

An op whose torch function takes its arguments differently says what torch does in its
entry (``tests: oracle``: ``x.masked_fill(expand_right(mask, x.shape), value)``).

Also checked: in-place variants, ``torch.X(td)`` dispatch, the errors bad arguments
raise (naming the argument and the batch size); the examples run in
``test_spec_examples.py``.
An entry without calls fails ``test_every_entry_has_cases``.
"""

from __future__ import annotations

import pytest
import torch
from spec_cases import arguments, oracle, ops_of

from codegen.checks import split_torch_function
from codegen.loader import load_spec
from codegen.model import Op
from tensordict import TensorDict
from tensordict.utils import expand_right

OPS = ops_of("indexing")
IDS = [op.name for op in OPS]
STRUCTURES = ("dense", "nested", "noncontiguous")
BATCH = (4, 3)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


MASK_4 = torch.tensor([True, False, True, True])


# --------------------------------------------------------------------------------------
# Data.
# --------------------------------------------------------------------------------------


def make(structure: str, seed: int = 0) -> TensorDict:
    """Batch size [4, 3]; float, int and bool leaves with feature dims; a string."""
    g = _gen(seed)
    if structure == "dense":
        return TensorDict(
            a=torch.rand(4, 3, 2, generator=g),
            b=torch.randint(0, 9, (4, 3), generator=g),
            c=torch.rand(4, 3, 5, generator=g) > 0.5,
            s="hello",
            batch_size=BATCH,
        )
    if structure == "nested":
        deeper = TensorDict(
            e=torch.randint(0, 9, (4, 3, 2), generator=g), batch_size=[4, 3, 2]
        )
        sub = TensorDict(
            c=torch.rand(4, 3, 2, 5, generator=g), deeper=deeper, batch_size=[4, 3, 2]
        )
        return TensorDict(
            a=torch.rand(4, 3, 2, generator=g), sub=sub, s="hello", batch_size=BATCH
        )
    # non-contiguous: transposed leaves in a strided index of a larger tensordict
    big = TensorDict(
        a=torch.rand(3, 8, 2, generator=g).transpose(0, 1),
        b=torch.randint(0, 9, (3, 8, 6), generator=g).permute(1, 0, 2),
        sub=TensorDict(c=torch.rand(8, 3, 2, 2, generator=g), batch_size=[8, 3, 2]),
        s="hello",
        batch_size=[8, 3],
    )
    td = big[::2]
    assert not td["a"].is_contiguous() and td.batch_size == BATCH
    return td


def tensor_keys(td) -> list:
    return [k for k in td.keys(True, True) if isinstance(td.get(k), torch.Tensor)]


def bind(op: Op, call, td, structure: str, seed: int) -> dict:
    """The arguments by parameter name (``other`` is a tensordict like the input)."""
    args, kwargs = arguments(call.args, td, other=make(structure, seed + 100))
    values = dict(zip([p.name for p in op.signature.params], args))
    values.update(kwargs)
    return values


def call(td, name: str, values: dict):
    return getattr(td, name)(**values)


def assert_valid(td) -> None:
    """Every level's leaves start with that level's batch size."""
    for key in td.keys(True, False):
        value = td.get(key)
        parent = td if not isinstance(key, tuple) or len(key) == 1 else td.get(key[:-1])
        if isinstance(value, torch.Tensor):
            assert value.shape[: parent.batch_dims] == parent.batch_size, key
        elif isinstance(value, TensorDict):
            assert value.batch_size[: parent.batch_dims] == parent.batch_size, key


def assert_same_entries(result, td) -> None:
    assert type(result) is type(td)
    assert set(result.keys(True, True)) == set(td.keys(True, True))
    assert result.get("s") == "hello"
    assert_valid(result)


# --------------------------------------------------------------------------------------
# Oracles.
# --------------------------------------------------------------------------------------


def moves_elements(op: Op) -> bool:
    rule = op.batch_rule
    return rule is not None and bool({"new_batch_size", "batch_sizes"} & set(rule.rule.defines))


def positional(op: Op, values: dict) -> list:
    """The arguments the op was given, in the order of its signature (its defaults
    where the call left them out), without the ones torch's function has no use for."""
    out = []
    for p in op.signature.params:
        if p.role is not None and p.name not in values:
            continue  # out=, inplace=, pad=: the op's own options
        if p.name in values:
            out.append(values[p.name])
        elif p.default is not None and p.kind != "keyword_only":
            out.append(eval(p.default))
    return out


def index_oracle(op: Op, td, values: dict) -> list[torch.Tensor]:
    """The batch-element indices each result holds (one tensor per result): torch's
    function of the op's name applied to a tensor of batch indices."""
    index = torch.arange(td.numel()).reshape(td.batch_size)
    out = oracle(op)(index, *positional(op, values))
    return list(out) if op.result == "tensordicts" else [out]


def check_against_indices(result, td, idx: torch.Tensor) -> None:
    assert result.batch_size == idx.shape
    root = td.batch_dims
    for key in tensor_keys(td):
        leaf = td.get(key)
        flat = leaf.reshape((td.numel(),) + leaf.shape[root:])
        torch.testing.assert_close(result.get(key), flat[idx], msg=lambda m: f"{key}: {m}")
    for key in td.keys(True, False):
        value = td.get(key)
        if isinstance(value, TensorDict):  # nested levels keep their extra dims
            assert result.get(key).batch_size == idx.shape + value.batch_size[root:]


def check_values(op: Op, result, td, values: dict) -> None:
    """Every leaf is torch's function of the op's name applied to the input leaf."""
    assert result.batch_size == td.batch_size
    for key in tensor_keys(td):
        args = [
            v.get(key) if isinstance(v, TensorDict) else v for v in positional(op, values)
        ]
        expected = oracle(op)(td.get(key).clone(), *args)
        torch.testing.assert_close(result.get(key), expected, msg=lambda m: f"{key}: {m}")


# --------------------------------------------------------------------------------------
# The checks.
# --------------------------------------------------------------------------------------


def test_every_entry_has_cases() -> None:
    assert OPS, "no indexing entries in the spec"
    missing = [op.name for op in OPS if not op.tests.calls]
    assert not missing, f"add 'tests: calls' to {missing} in spec/indexing.yaml"


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_entry(op: Op, structure: str) -> None:
    assert oracle(op), f"torch has no {op.name!r}: say what it does ({op.location}: 'tests: oracle')"
    for seed, case in enumerate(op.tests.calls):
        td = make(structure, seed)
        values = bind(op, case, td, structure, seed)
        result = call(td, op.name, values)
        if moves_elements(op):
            indices = index_oracle(op, td, values)
            parts = result if op.result == "tensordicts" else (result,)
            assert isinstance(parts, tuple)
            assert len(parts) == len(indices), (args, kwargs)
            for part, idx in zip(parts, indices):
                assert_same_entries(part, td)
                check_against_indices(part, td, idx)
        else:
            assert_same_entries(result, td)
            check_values(op, result, td, values)
        if op.inplace is not None:  # the out-of-place result, written in place
            target = td.clone()
            stored = {k: target.get(k) for k in tensor_keys(target)}
            assert getattr(target, op.inplace.name)(**values) is target
            for key, tensor in stored.items():
                assert target.get(key) is tensor, key
                torch.testing.assert_close(tensor, result.get(key).to(tensor.dtype))
        # torch.X(td, ...) does what the method does
        for item in op.torch_functions:
            check_dispatch(op, item, td, values, result)


def check_dispatch(op: Op, item: str, td, values: dict, expected) -> None:
    dotted, params = split_torch_function(item)
    fn = eval(dotted, {"torch": torch})
    if params is None:
        first = op.signature.params
        positional = [values[p.name] for p in first if p.name in values and p.kind != "keyword_only"]
        keywords = {p.name: values[p.name] for p in first if p.name in values and p.kind == "keyword_only"}
        got = fn(td, *positional, **keywords)
    else:
        named = dict(values, self=td)
        positional = [named.pop(p) for p in params]
        got = fn(*positional, **named)
    parts = got if isinstance(got, tuple) else (got,)
    wanted = expected if isinstance(expected, tuple) else (expected,)
    assert len(parts) == len(wanted)
    for g, w in zip(parts, wanted):
        assert g.batch_size == w.batch_size
        for key in tensor_keys(w):
            torch.testing.assert_close(g.get(key), w.get(key))


# --------------------------------------------------------------------------------------
# Behaviour the oracle does not cover: views, out=, inplace=, seeds, errors.
# --------------------------------------------------------------------------------------


def test_pieces_are_views() -> None:
    td = make("nested")
    for part in (td.split(2)[0], td.unbind(1)[0], td.chunk(2, 1)[1]):
        part["a"].fill_(7.0)
        part["sub", "c"].fill_(7.0)
    assert (td["a"] == 7).any() and (td["sub", "c"] == 7).any()


def test_seed_unbind() -> None:
    td = TensorDict({"a": torch.zeros(3, 4), "b": {"c": torch.ones(3, 4, 2)}}, [3])
    td0, td1, td2 = td.unbind(0)
    assert td0.batch_size == () and td2["b", "c"].shape == (4, 2)


def test_gather_out_and_inplace() -> None:
    td = make("nested")
    index = torch.tensor([[0, 2], [1, 1], [2, 0], [0, 0]])
    expected = td.gather(1, index)
    out = expected.clone().zero_()
    assert td.gather(1, index, out=out) is out
    for key in tensor_keys(expected):
        torch.testing.assert_close(out.get(key), expected.get(key))
    target = td.clone()
    assert target.gather(1, index, inplace=True) is target
    assert target.batch_size == (4, 2) and target["sub"].batch_size == (4, 2, 2)
    torch.testing.assert_close(target["sub", "c"], expected["sub", "c"])


def test_masked_select_inplace() -> None:
    td = make("dense")
    expected = td.masked_select(MASK_4)
    assert td.masked_select(MASK_4, inplace=True) is td
    assert td.batch_size == (3, 3)
    torch.testing.assert_close(td["a"], expected["a"])


def test_where_pad_out_and_dispatch_forms() -> None:
    td = make("nested")
    other = make("nested", 5).exclude("a")
    with pytest.raises(KeyError, match="'a'"):
        td.where(MASK_4, other)
    padded = td.where(MASK_4, other, pad=-1.0)
    expected = torch.where(expand_right(MASK_4, td["a"].shape), td["a"], -1.0)
    torch.testing.assert_close(padded["a"], expected)
    out = td.clone().zero_()
    assert td.where(MASK_4, 0, out=out) is out
    # keyword forms of torch.where reach the method too
    via_kw = torch.where(MASK_4, td, other=0)
    torch.testing.assert_close(via_kw["a"], td.where(MASK_4, 0)["a"])


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda td: td.split(2, 2), IndexError, ["split()", "dim=2", "[4, 3]"]),
        (lambda td: td.split([1, 2]), ValueError, ["[1, 2]", "sum to 4"]),
        (lambda td: td.split(0), ValueError, ["split_size"]),
        (lambda td: td.chunk(0), ValueError, ["chunks"]),
        (lambda td: td.unbind(-3), IndexError, ["unbind()", "dim=-3", "[-2, 1]"]),
        (lambda td: td.tensor_split(2, 5), IndexError, ["tensor_split()", "dim=5"]),
        (
            lambda td: td.gather(0, torch.zeros(4, dtype=torch.long)),
            IndexError,
            ["gather()", "1 dims", "[4, 3]"],
        ),
        (lambda td: td.gather(0, torch.zeros(4, 3)), TypeError, ["int64"]),
        (
            lambda td: td.gather(0, torch.zeros(2, 5, dtype=torch.long)),
            IndexError,
            ["larger", "dim 1"],
        ),
        (
            lambda td: td.masked_fill(torch.ones(3, dtype=torch.bool), 0),
            RuntimeError,
            ["mask of shape [3]", "[4, 3]"],
        ),
        (lambda td: td.masked_fill(torch.ones(4), 0), TypeError, ["boolean"]),
        (
            lambda td: td.masked_select(torch.ones(4, 3, 1, dtype=torch.bool)),
            RuntimeError,
            ["[4, 3, 1]"],
        ),
        (
            lambda td: td.where(torch.ones(3, dtype=torch.bool), 0),
            RuntimeError,
            ["where()", "condition of shape [3]", "[4, 3]"],
        ),
    ],
)
def test_bad_arguments_name_what_is_wrong(call, error, words) -> None:
    with pytest.raises(error) as info:
        call(make("dense"))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_negative_dims_count_batch_dims() -> None:
    td = make("nested")
    assert [p.batch_size for p in td.split(1, -1)] == [torch.Size([4, 1])] * 3
    assert td.unbind(-1)[0]["sub"].batch_size == (4, 2)
    assert td.gather(-1, torch.zeros(4, 1, dtype=torch.long))["sub"].batch_size == (4, 1, 2)


# --------------------------------------------------------------------------------------
# The loader checks the keys of the indexing, device and stacking families.
# --------------------------------------------------------------------------------------


def test_leafwise_keys_are_validated(tmp_path) -> None:
    import textwrap

    from codegen.model import SpecError

    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "indexing.yaml").write_text(
        textwrap.dedent(
            """
            family: indexing
            title: Indexing
            doc: Test family.
            ops:
              - name: split
                signature: "(self, split_size: int, dim: int = 0)"
                batch_size: mask(split_size)
                result: tensordicts
                leaf: "torch.split(x, split_size, _ops.nope(dim))"
                torch_function: ["torch.split(split_size, dim)"]
                summary: Split.
                details: More.
                example: ">>> 1"
              - name: pick
                signature: "(self, mask: Tensor)"
                batch_size: masked_select(mask, mask)
                result: bogus
                leaf: "x[y]"
                summary: Pick.
                details: More.
                example: ">>> 1"
            """
        ).lstrip()
    )
    (tmp_path / "spec" / "stacking.yaml").write_text(
        textwrap.dedent(
            """
            family: stacking
            title: Stacking
            doc: Test family.
            ops:
              - name: stack
                signature: "(self, input, dim: int = 0)"
                batch_size: stack(input, dim)
                leaf: "torch.stack(x, dim)"
                summary: Stack.
                details: More.
                example: ">>> 1"
            """
        ).lstrip()
    )
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / "spec")
    found = "\n".join(info.value.problems)
    for expected in (
        "entry 'split': 'result: tensordicts' needs a batch_size rule defining batch_sizes",
        "entry 'split': 'leaf': tensordict/_ops has no 'nope'",
        "entry 'split': 'torch_function': 'torch.split(split_size, dim)' must name 'self'",
        "entry 'pick': batch_size rule 'masked_select' takes 1 positional argument(s)",
        "entry 'pick': unknown result rule 'bogus'",
        "entry 'pick': 'leaf' uses the unknown name 'y'",
        "entry 'stack': bad signature",
        "the first parameter must be a bare 'cls'",
    ):
        assert expected in found, (expected, found)
