"""Issue 15's floor table: 15 everyday operations on a tensordict of 10 leaves of
[64, 8] (batch size [64]), each beside the same work written by hand on plain dicts of
tensors (the ``[floor]`` rows). ``benchmarks/floor_table.py`` times the same cases
in one process, round by round, and prints the table with the geometric mean.

Data: 10 float32 leaves of shape [64, 8] in three levels: ``k0``..``k4`` at the root,
``k5``..``k7`` under ``n``, ``k8``, ``k9`` under ``("n", "m")``. Construction of the
flat case takes the 10 leaves at the root. Every floor checks what the tensordict call
checks where that is the real work (the batch dims of a constructed or set value).
"""

import pytest
import torch
from _floor import floor_construct, floor_leaf_items, floor_map, floor_map2
from tensordict import TensorDict

B = 64
BATCH = torch.Size([B])
LEAF = (B, 8)
NESTED_LEAF = ("n", "m", "k9")


def make_flat(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return {f"k{i}": torch.randn(*LEAF, generator=gen) for i in range(10)}


def make_nested(seed=0):
    leaves = make_flat(seed)
    return {
        **{f"k{i}": leaves[f"k{i}"] for i in range(5)},
        "n": {
            **{f"k{i}": leaves[f"k{i}"] for i in range(5, 8)},
            "m": {"k8": leaves["k8"], "k9": leaves["k9"]},
        },
    }


# ---------------------------------------------------------------------------------------
# The floor: what a careful user writes by hand on nested dicts of tensors (the
# shared helpers are in _floor.py).
# ---------------------------------------------------------------------------------------


def floor_set_nested(d, value):
    if value.shape[:1] != BATCH:
        raise ValueError(f"bad shape {value.shape}")
    d["n"]["m"]["k9"] = value


def floor_stack(dicts):
    first = dicts[0]
    return {
        k: (
            floor_stack([d[k] for d in dicts])
            if isinstance(v, dict)
            else torch.stack([d[k] for d in dicts])
        )
        for k, v in first.items()
    }


def _double(x):
    return x * 2


# ---------------------------------------------------------------------------------------
# The 15 cases: name -> make(impl) returning the call to time (no argument).
# ---------------------------------------------------------------------------------------


def _data(impl, seed=0):
    src = make_nested(seed)
    return (
        TensorDict(src, batch_size=[B]) if impl == "td" else floor_construct(src, BATCH)
    )


def case_construct_flat(impl):
    src = make_flat()
    if impl == "td":
        return lambda: TensorDict(src, batch_size=[B])
    return lambda: floor_construct(src, BATCH)


def case_construct_nested(impl):
    src = make_nested()
    if impl == "td":
        return lambda: TensorDict(src, batch_size=[B])
    return lambda: floor_construct(src, BATCH)


def case_get_nested(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d[NESTED_LEAF]
    return lambda: d["n"]["m"]["k9"]


def case_set_nested(impl):
    d = _data(impl)
    value = torch.ones(*LEAF)
    if impl == "td":
        return lambda: d.set(NESTED_LEAF, value)
    return lambda: floor_set_nested(d, value)


def case_items(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: list(d.items(True, True))
    return lambda: list(floor_leaf_items(d))


def case_index_tensor(impl):
    d = _data(impl)
    idx = torch.randperm(B, generator=torch.Generator().manual_seed(0))[:16]
    if impl == "td":
        return lambda: d[idx]
    return lambda: floor_map(d, lambda x: x[idx])


def case_index_int(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d[3]
    return lambda: floor_map(d, lambda x: x[3])


def case_add_scalar(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d + 1
    return lambda: floor_map(d, lambda x: x + 1)


def case_add_td(impl):
    d, other = _data(impl), _data(impl, seed=1)
    if impl == "td":
        return lambda: d + other
    return lambda: floor_map2(d, other, torch.add)


def case_apply(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d.apply(_double)
    return lambda: floor_map(d, _double)


def case_clone(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d.clone()
    return lambda: floor_map(d, torch.clone)


def case_reshape(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d.reshape(8, 8)
    return lambda: floor_map(d, lambda x: x.reshape(8, 8, *x.shape[1:]))


def case_stack8(impl):
    ds = [_data(impl, seed) for seed in range(8)]
    if impl == "td":
        return lambda: torch.stack(ds, 0)
    return lambda: floor_stack(ds)


def case_sum0(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d.sum(0)
    return lambda: floor_map(d, lambda x: x.sum(0))


def case_cast(impl):
    d = _data(impl)
    if impl == "td":
        return lambda: d.to(torch.float64)
    return lambda: floor_map(d, lambda x: x.to(torch.float64))


CASES = {
    "construct_flat": case_construct_flat,
    "construct_nested": case_construct_nested,
    "get_nested": case_get_nested,
    "set_nested": case_set_nested,
    "items": case_items,
    "index_tensor": case_index_tensor,
    "index_int": case_index_int,
    "add_scalar": case_add_scalar,
    "add_td": case_add_td,
    "apply": case_apply,
    "clone": case_clone,
    "reshape": case_reshape,
    "stack8": case_stack8,
    "sum0": case_sum0,
    "cast": case_cast,
}


def _as_dict(result):
    return result.to_dict() if isinstance(result, TensorDict) else result


def _same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(
            x[0] == y[0] and torch.equal(x[1], y[1]) for x, y in zip(a, b)
        )
    return torch.equal(a, b)


@pytest.mark.parametrize("case", list(CASES))
def test_floor15(benchmark, impl, case):
    run = CASES[case](impl)
    result = benchmark(run)
    # a fast wrong answer fails: the tensordict's result is the floor's
    if impl == "td" and result is not None and case != "set_nested":
        expected = CASES[case]("floor")()
        assert _same(_as_dict(result), expected), case
