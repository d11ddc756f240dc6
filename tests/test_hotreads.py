"""TensorDict's dict-like reads on both paths: the C extension (``tensordict/_fastreads.c``)
and the pure-Python one (``TENSORDICT_NO_C=1``, or a machine without a compiler) give the
same results, errors included (``tensordict/_hotreads.py``).

Each path runs in a fresh interpreter (the choice is made at import), evaluates every
read of ``CASES`` and reports what it got; the two reports must be equal. The C path
must really be taken where the extension is built, and ``TENSORDICT_REQUIRE_C=1`` (set
by ``scripts/test.sh``) makes its absence a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, _hotreads


class _Sub(TensorDict):
    """A user's subclass: the reads behave as on TensorDict."""


class _StrKey(str):
    """A str subclass as a key: not the C fast path, same result."""


def _make():
    td = TensorDict(
        {
            "a": torch.arange(12.0).reshape(3, 4),
            "n": {"b": torch.ones(3, 4), "m": {"c": torch.zeros(3, 4, 2)}},
            "s": "text",
            "p": torch.nn.Parameter(torch.ones(3, 4)),
            "lazy": LazyStackedTensorDict(
                *[TensorDict(x=torch.ones(4), batch_size=[4]) for _ in range(3)], stack_dim=0
            ),
        },
        batch_size=[3, 4],
    )
    td.set_non_tensor("i", 7)  # non-tensor data that is no str
    td.set_non_tensor(("n", "t"), "nested text")
    td["n", "p"] = torch.nn.Parameter(torch.zeros(3, 4))
    return td


def _sub(td):
    return _Sub(a=td["a"], n=td["n"], batch_size=td.batch_size)


# Every read: a name, and the call on a fresh tensordict ``td``.
CASES = {
    "getitem str": lambda td: td["a"],
    "getitem nested td": lambda td: td["n"],
    "getitem tuple": lambda td: td["n", "b"],
    "getitem deep tuple": lambda td: td["n", "m", "c"],
    "getitem 1-tuple": lambda td: td[("a",)],
    "getitem nested tuple": lambda td: td[("n", ("m", "c"))],
    "getitem through lazy stack": lambda td: td["lazy", "x"],
    "getitem through tensor": lambda td: td["a", "x"],
    "getitem through non-tensor": lambda td: td["s", "x"],
    "getitem tuple to non-tensor": lambda td: td["n", "t"],
    "getitem tuple to parameter": lambda td: td["n", "p"],
    "getitem tuple non-str part": lambda td: td["n", 0],
    "getitem tuple index": lambda td: td[0, 1],
    "getitem tuple slices": lambda td: td[:, 1:],
    "getitem non-tensor": lambda td: td["s"],
    "getitem int data": lambda td: td["i"],
    "getitem parameter": lambda td: td["p"],
    "getitem lazy stack": lambda td: td["lazy"],
    "getitem str subclass": lambda td: td[_StrKey("a")],
    "getitem missing": lambda td: td["zz"],
    "getitem missing nested": lambda td: td["n", "zz"],
    "getitem int index": lambda td: td[0],
    "getitem slice": lambda td: td[:, 1:3],
    "getitem tensor index": lambda td: td[torch.tensor([0, 2])],
    "getitem mask": lambda td: td[torch.tensor([True, False, True])],
    "getitem ellipsis": lambda td: td[..., 0],
    "getitem none": lambda td: td[None],
    "getitem float": lambda td: td[1.5],
    "getitem bytes": lambda td: td[b"a"],
    "getitem empty tuple": lambda td: td[()],
    "dunder getitem": lambda td: td.__getitem__("a"),
    "dunder getitem extra": lambda td: td.__getitem__("a", "b"),
    "class getitem": lambda td: TensorDict.__getitem__(td, "n"),
    "get str": lambda td: td.get("a"),
    "get nested td": lambda td: td.get("n"),
    "get default given": lambda td: td.get("a", None),
    "get default keyword": lambda td: td.get("a", default=None),
    "get key keyword": lambda td: td.get(key="a"),
    "get all positional": lambda td: td.get("a", None, False, False, False, "right", None, 0.0),
    "get too many": lambda td: td.get("a", None, False, False, False, "right", None, 0.0, 1),
    "get no key": lambda td: td.get(),
    "get bad keyword": lambda td: td.get("a", bogus=1),
    "get tuple": lambda td: td.get(("n", "b")),
    "get deep tuple": lambda td: td.get(("n", "m", "c")),
    "get tuple to nested td": lambda td: td.get(("n", "m")),
    "get tuple to non-tensor": lambda td: td.get(("n", "t")),
    "get tuple through lazy stack": lambda td: td.get(("lazy", "x")),
    "get tuple through tensor": lambda td: td.get(("a", "x")),
    "get tuple through tensor default": lambda td: td.get(("a", "x"), 3),
    "get empty tuple": lambda td: td.get(()),
    "get nested tuple key": lambda td: td.get(("n", ("m", "c"))),
    "get non-tensor": lambda td: td.get("s"),
    "get int data": lambda td: td.get("i"),
    "get parameter": lambda td: td.get("p"),
    "get lazy stack": lambda td: td.get("lazy"),
    "get lazy as_list": lambda td: td.get("lazy", None, True),
    "get str subclass": lambda td: td.get(_StrKey("a")),
    "get missing": lambda td: td.get("zz"),
    "get missing default": lambda td: td.get("zz", 5),
    "get missing nested default": lambda td: td.get(("n", "zz"), 5),
    "get int key": lambda td: td.get(0),
    "class get": lambda td: TensorDict.get(td, "a"),
    "keys": lambda td: td.keys(),
    "keys nested": lambda td: td.keys(True),
    "keys leaves": lambda td: td.keys(True, True),
    "keys sorted": lambda td: td.keys(sort=True),
    "keys keyword": lambda td: td.keys(include_nested=True),
    "keys is_leaf": lambda td: td.keys(True, True, lambda cls: cls is TensorDict),
    "keys too many": lambda td: td.keys(1, 2, 3, 4, 5),
    "keys bad keyword": lambda td: td.keys(bogus=True),
    "values": lambda td: td.values(),
    "values nested": lambda td: td.values(True, True),
    "items": lambda td: td.items(),
    "items nested": lambda td: td.items(True),
    "in keys": lambda td: "a" in td.keys(),
    "not in keys": lambda td: "zz" in td.keys(),
    "tuple in keys": lambda td: ("n", "b") in td.keys(True),
    "len keys": lambda td: len(td.keys()),
    "iterate keys": lambda td: [k for k in td.keys()],
    "keys live": lambda td: (td.keys(), td.set("new", torch.ones(3, 4)))[0],
    "subclass getitem": lambda td: _sub(td)["a"],
    "subclass get": lambda td: _sub(td).get("n"),
    "subclass get tuple": lambda td: _sub(td).get(("n", "b")),
    "subclass getitem tuple": lambda td: _sub(td)["n", "m", "c"],
    "subclass keys": lambda td: _sub(td).keys(),
    "locked get": lambda td: td.lock_().get("a"),
    "unset storage getitem": lambda td: TensorDict.__new__(TensorDict)["a"],
    "unset storage get": lambda td: TensorDict.__new__(TensorDict).get("a"),
    "unset storage keys": lambda td: TensorDict.__new__(TensorDict).keys(),
}


def _describe(td, value) -> list:
    """What a read gave, as plain data (identity with the stored entry included)."""
    stored = {id(v) for v in td._tensordict.values()}
    same = id(value) in stored
    if isinstance(value, torch.Tensor):
        return ["tensor", type(value).__name__, list(value.shape), value.tolist(), same]
    if isinstance(value, TensorDict):
        return ["td", type(value).__name__, sorted(map(str, value.keys(True))),
                list(value.batch_size), same]
    if isinstance(value, (Iterator, tuple)) or type(value).__name__ in (
        "dict_keys", "dict_values", "dict_items", "_DenseKeysView"
    ):
        return [type(value).__name__, [_describe(td, part) for part in value]]
    return [type(value).__name__, repr(value), same]


def outcomes() -> dict:
    """Each case's result or error, on the path this interpreter runs."""
    out = {}
    for name, read in CASES.items():
        td = _make()
        try:
            out[name] = _describe(td, read(td))
        except Exception as exc:  # the error is part of the behaviour compared
            out[name] = ["raises", type(exc).__name__, str(exc)]
    out["C reads"] = _hotreads.C_READS
    return out


def _outcomes_in_subprocess(no_c: bool) -> dict:
    env = dict(os.environ)
    env.pop(_hotreads.NO_C_VARIABLE, None)
    if no_c:
        env[_hotreads.NO_C_VARIABLE] = "1"
    here = Path(__file__).resolve().parent
    code = (
        f"import json, sys; sys.path.insert(0, {str(here)!r}); "
        "import test_hotreads; print(json.dumps(test_hotreads.outcomes()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def both_paths() -> tuple[dict, dict]:
    return _outcomes_in_subprocess(no_c=False), _outcomes_in_subprocess(no_c=True)


def test_c_extension_is_built_where_required() -> None:
    if os.environ.get("TENSORDICT_REQUIRE_C", "") in ("", "0"):
        pytest.skip("TENSORDICT_REQUIRE_C is not set (scripts/test.sh sets it)")
    assert _hotreads.C_READS, (
        "the C extension tensordict._fastreads is not built or not loaded; "
        "run scripts/setup.sh (a C compiler and Python headers are needed)"
    )


def test_no_c_variable_selects_the_python_path(both_paths) -> None:
    with_c, without_c = both_paths
    assert without_c.pop("C reads") is False
    # where the extension is built, the default path is C
    assert with_c.pop("C reads") is _hotreads.C_READS or _hotreads.NO_C_VARIABLE in os.environ


@pytest.mark.parametrize("name", list(CASES))
def test_both_paths_read_alike(both_paths, name: str) -> None:
    with_c, without_c = both_paths
    assert with_c[name] == without_c[name]


@pytest.mark.parametrize("name", ["get", "keys", "values", "items"])
def test_reads_have_the_python_signatures(name: str) -> None:
    # inspect.signature (help(), IDEs, wrappers that forward arguments) must work on the
    # C methods as on the Python ones they stand for
    import inspect

    def names(fn):
        return [p for p in inspect.signature(fn).parameters][1:]  # without self

    read = names(getattr(TensorDict, name))
    if name == "get" and _hotreads.C_READS:  # the default is a sentinel: *args
        assert read == ["key", "args", "kwargs"]
    else:
        assert read == names(getattr(TensorDict, f"_{name}_py"))
    assert inspect.signature(getattr(TensorDict(a=torch.ones(1)), name))  # bound


def test_reads_give_the_stored_entry() -> None:
    """The worked values the comparison rests on (so that two equal wrong paths fail)."""
    td = _make()
    storage = td._tensordict
    assert td["a"] is storage["a"] and td.get("a") is storage["a"]
    assert td["n"] is storage["n"] and td.get("n", None) is storage["n"]
    deep = storage["n"]._tensordict["m"]._tensordict["c"]
    assert td["n", "m", "c"] is deep and td.get(("n", "m", "c")) is deep
    assert td["s"] == "text" and td.get("s").data == "text"
    assert td.get("zz", 5) == 5
    with pytest.raises(KeyError, match="zz"):
        td["zz"]
    assert td.keys() == storage.keys() and list(td.values())[0] is storage["a"]
    # non-tensor data is no leaf, as in 0.15.3
    assert set(td.keys(True, True)) == {
        "a", ("n", "b"), ("n", "m", "c"), ("n", "p"), "p", ("lazy", "x")
    }


@pytest.mark.parametrize("cls", [TensorDict, _Sub])
def test_reads_compile_without_graph_break(cls) -> None:
    dynamo = pytest.importorskip("torch._dynamo")
    from torch._dynamo.utils import counters

    def reads(td):
        out = td["a"] + td.get("a") + td.get("n")["b"] + len(td.keys())
        for key, value in td.items():
            if key in ("a", "p"):
                out = out + value
        return out + sum(v.sum() for v in td.values() if isinstance(v, torch.Tensor))

    td = cls(a=torch.ones(3, 4), n={"b": torch.ones(3, 4)}, p=torch.ones(3, 4),
             batch_size=[3, 4])
    dynamo.reset()
    counters.clear()
    compiled = torch.compile(reads, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(td), reads(td))
    assert sum(counters["graph_break"].values()) == 0, dict(counters["graph_break"])
