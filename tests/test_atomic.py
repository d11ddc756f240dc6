"""A failed call changes nothing (issue 14, "Robustness"; docs/compatibility.md).

``update``, ``update_``, ``set``, ``td[index] = value``, in-place arithmetic with a
tensordict, ``rename_key_``, ``select``/``exclude`` with ``inplace=True`` and ``lock_``:
when they raise, the container is exactly as before (keys at every level, values, lock
state). The deterministic tests pin the cases that 0.15.3 gets wrong; the property-based
test drives random sequences of valid and invalid calls against a dense tensordict, a
lazy stack and a tensorclass.

The property test runs ``TD_HYPOTHESIS_EXAMPLES`` examples (200 by default, CI's
profile; ``TD_HYPOTHESIS_EXAMPLES=10000`` for the full run), each a sequence of up to 8
calls.
"""

from __future__ import annotations

import os

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# The exception types a failed call may raise (docs/compatibility.md).
DOCUMENTED = (KeyError, RuntimeError, TypeError, ValueError, IndexError)


class Sample(TensorClass):
    a: torch.Tensor
    n: TensorDict = None


def dense():
    return TensorDict(
        a=torch.zeros(3, 2),
        b=torch.arange(3),
        n=TensorDict(c=torch.ones(3), batch_size=[3]),
        batch_size=[3],
    )


def lazy():
    return LazyStackedTensorDict(
        *[
            TensorDict(
                a=torch.zeros(2),
                b=torch.tensor(i),
                n=TensorDict(c=torch.ones(())),
            )
            for i in range(3)
        ],
        stack_dim=0,
    )


def tensorclass():
    return Sample(
        a=torch.zeros(3, 2),
        n=TensorDict(c=torch.ones(3), batch_size=[3]),
        batch_size=[3],
    )


MAKERS = {"dense": dense, "lazy": lazy, "tensorclass": tensorclass}


def state(td):
    """Everything a failed call must leave as it was: per storage level, its keys in
    order, its tensors' values (cloned), its lock state."""
    if isinstance(td, LazyStackedTensorDict):
        return ("lazy", td.is_locked, [state(m) for m in td.tensordicts])
    inner = getattr(td, "_tensordict", None)
    if isinstance(inner, TensorDict):  # a tensorclass
        return ("tc", state(inner))
    out = []
    for key, value in td.items():
        if isinstance(value, torch.Tensor):
            out.append((key, "t", value.dtype, value.clone()))
        elif isinstance(value, TensorDict) or isinstance(value, LazyStackedTensorDict):
            out.append((key, "td", state(value)))
        else:
            out.append((key, "x", repr(value)))
    return ("td", tuple(td.batch_size), td.is_locked, out)


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.equal(a, b)
        )
    if isinstance(a, (list, tuple)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b))
        )
    return a == b


def assert_unchanged_on_failure(td, call, names=()):
    """Run ``call(td)``; if it raises, the error is documented, names one of
    ``names`` (when given), and ``td`` is as it was."""
    before = state(td)
    try:
        call(td)
    except DOCUMENTED as err:
        if names:
            text = str(err)
            assert any(str(n) in text for n in names), (names, text)
        after = state(td)
        assert same(before, after), f"{call} changed the container: {err!r}"
        return err
    return None


# --------------------------------------------------------- the cases 0.15.3 corrupts
@pytest.mark.parametrize("kind", list(MAKERS))
class TestFailedCallsChangeNothing:
    def test_update_with_one_bad_shape(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td,
            lambda t: t.update(
                {"new": torch.ones(3), "a": torch.ones(3, 2), "bad": torch.ones(4)}
            ),
            names=["bad"],
        )
        assert err is not None

    def test_update_inplace_with_bad_shape_last(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td,
            lambda t: t.update(
                {"a": torch.ones(3, 2), ("n", "c"): torch.ones(3, 7)}, inplace=True
            ),
            names=["c"],
        )
        assert err is not None

    def test_update_underscore_with_missing_key_last(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td,
            lambda t: t.update_({"a": torch.ones(3, 2), "zz": torch.ones(3)}),
            names=["zz"],
        )
        assert isinstance(err, KeyError)

    def test_update_underscore_with_bad_shape_last(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td,
            lambda t: t.update_({"a": torch.ones(3, 2), ("n", "c"): torch.ones(3, 5)}),
            names=["c"],
        )
        assert err is not None

    def test_setitem_index_with_partly_wrong_tensordict(self, kind):
        td = MAKERS[kind]()
        value = TensorDict(a=torch.ones(2), n=TensorDict(c=torch.ones(5)))
        err = assert_unchanged_on_failure(td, lambda t: t.__setitem__(0, value))
        assert err is not None

    def test_setitem_index_with_new_key_then_bad_one(self, kind):
        td = MAKERS[kind]()
        value = {"new": torch.ones(()), "a": torch.ones(7)}
        err = assert_unchanged_on_failure(td, lambda t: t.__setitem__(1, value))
        assert err is not None
        assert "new" not in td.keys()

    def test_set_nested_through_new_levels_with_bad_value(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td, lambda t: t.set(("x", "y", "z"), torch.ones(4)), names=["z"]
        )
        assert err is not None and "x" not in td.keys()

    def test_inplace_add_with_missing_key(self, kind):
        td = MAKERS[kind]()
        other = TensorDict(a=torch.ones(3, 2), batch_size=[3])
        err = assert_unchanged_on_failure(td, lambda t: t.__iadd__(other))
        assert err is not None

    def test_inplace_add_with_a_bad_shape_or_dtype_last(self, kind):
        td = MAKERS[kind]()
        for bad in (torch.ones(3, 5), torch.ones(3, dtype=torch.complex64)):
            other = td.to_tensordict().apply(torch.ones_like)
            other["n", "c"] = bad  # the last leaf written
            err = assert_unchanged_on_failure(td, lambda t: t.__iadd__(other), ["c"])
            assert isinstance(err, RuntimeError)

    def test_rename_key_onto_a_locked_level(self, kind):
        td = MAKERS[kind]()
        td.get("n").lock_()
        err = assert_unchanged_on_failure(
            td, lambda t: t.rename_key_("a", ("n", "a2")), names=["a2"]
        )
        assert err is not None and "a" in td.keys()

    def test_exclude_inplace_reaching_a_locked_level(self, kind):
        td = MAKERS[kind]()
        if kind == "lazy":
            td.tensordicts[1].get("n").lock_()
        else:
            td.get("n").lock_()
        err = assert_unchanged_on_failure(
            td, lambda t: t.exclude("a", ("n", "c"), inplace=True), names=["c"]
        )
        assert err is not None and "a" in td.keys()

    def test_select_inplace_missing_key(self, kind):
        td = MAKERS[kind]()
        err = assert_unchanged_on_failure(
            td, lambda t: t.select("a", "zz", inplace=True), names=["zz"]
        )
        assert isinstance(err, KeyError)

    def test_locked_writes(self, kind):
        td = MAKERS[kind]()
        td.lock_()
        for call in (
            lambda t: t.set("new", torch.ones(3)),
            lambda t: t.update({"a": torch.ones(3, 2), "new": torch.ones(3)}),
            lambda t: t.rename_key_("a", "new"),
        ):
            err = assert_unchanged_on_failure(td, call, names=["new", "a"])
            assert isinstance(err, RuntimeError) and "locked" in str(err)
        assert td.is_locked


# ------------------------------------------------------------- property-based test
KEYS = st.sampled_from(
    ["a", "b", "new", ("n", "c"), ("n", "d"), ("x", "y"), ("a", "deeper"), 1, ()]
)
BATCH = st.sampled_from([(3,), (4,), ()])
FEATURE = st.sampled_from([(), (2,), (5,)])
DTYPE = st.sampled_from([torch.float32, torch.int64, torch.bool])
INDEX = st.sampled_from([0, -1, 2, 3, -4, slice(0, 2), slice(None)])


@st.composite
def tensors(draw):
    batch = draw(BATCH)
    return torch.ones(batch + draw(FEATURE), dtype=draw(DTYPE))


@st.composite
def calls(draw):
    """One call on a container of batch size [3] and a description of it."""
    kind = draw(
        st.sampled_from(
            [
                "set",
                "set_",
                "update",
                "update_inplace",
                "update_",
                "setitem_index",
                "iadd",
                "rename",
                "select",
                "exclude",
                "lock",
                "unlock",
            ]
        )
    )
    if kind in ("set", "set_"):
        key, value = draw(KEYS), draw(tensors())
        method = kind

        def call(t):
            getattr(t, method)(key, value)

        return Call(kind, call, _names([key]), f"{method}({key!r}, {_short(value)})")
    if kind.startswith("update"):
        entries = draw(st.lists(st.tuples(KEYS, tensors()), min_size=1, max_size=4))
        mapping = {}
        for key, value in entries:
            if isinstance(key, (str, tuple)) and key != ():
                mapping[key] = value

        def call(t):
            if kind == "update_":
                t.update_(mapping)
            else:
                t.update(mapping, inplace=kind == "update_inplace")

        return Call(kind, call, _names(mapping), f"{kind}({_short(mapping)})")
    if kind == "setitem_index":
        index = draw(INDEX)
        keys = draw(st.lists(st.sampled_from(["a", "b", "new", "n"]), max_size=3))
        feature = draw(FEATURE)
        value = {}
        for key in keys:
            if key == "n":
                value[key] = {"c": torch.ones(draw(FEATURE))}
            else:
                value[key] = torch.ones(feature if key != "a" else draw(FEATURE))

        def call(t):
            t[index] = value

        return Call(kind, call, [], f"td[{index!r}] = {_short(value)}")
    if kind == "iadd":
        keys = draw(st.lists(st.sampled_from(["a", "b", "n"]), unique=True))
        batch = draw(BATCH)
        other = {}
        for key in keys:
            if key == "n":
                other[key] = TensorDict(c=torch.ones(batch), batch_size=batch)
            else:
                other[key] = torch.ones(batch + draw(FEATURE))

        def call(t):
            t += TensorDict(other, batch_size=batch)

        return Call(kind, call, [], f"td += TensorDict({_short(other)}, {batch})")
    if kind == "rename":
        old, new, safe = draw(KEYS), draw(KEYS), draw(st.booleans())

        def call(t):
            t.rename_key_(old, new, safe=safe)

        return Call(
            kind,
            call,
            _names([old, new]),
            f"rename_key_({old!r}, {new!r}, safe={safe})",
        )
    if kind in ("select", "exclude"):
        keys = draw(st.lists(KEYS, min_size=1, max_size=3))
        method = kind

        def call(t):
            getattr(t, method)(*keys, inplace=True)

        return Call(kind, call, _names(keys), f"{method}(*{keys!r}, inplace=True)")
    if kind == "lock":
        return Call(kind, lambda t: t.lock_(), [], "lock_()")
    return Call(kind, lambda t: t.unlock_(), [], "unlock_()")


class Call:
    """One call of a random sequence, with a readable repr for hypothesis reports."""

    def __init__(self, kind, fn, names, text):
        self.kind, self.fn, self.names, self.text = kind, fn, names, text

    def __repr__(self) -> str:
        return self.text


def _short(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"<{tuple(value.shape)} {str(value.dtype)[6:]}>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _name(key) -> str:
    # the part of the key an error should name: the last one (a tuple key also
    # passes when the error names the part on the way that is not a tensordict)
    if isinstance(key, tuple):
        return key[-1] if key else "()"
    return str(key)


def _names(keys) -> list:
    out = []
    for key in keys:
        out.append(_name(key))
        if isinstance(key, tuple):
            out.extend(str(part) for part in key)
    return out


EXAMPLES = int(os.environ.get("TD_HYPOTHESIS_EXAMPLES", "200"))
# examples run per container kind, reported at the end of the run (tests/conftest.py)
EXAMPLES_RUN: dict = {}


@pytest.mark.parametrize("kind", list(MAKERS))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=EXAMPLES <= 200,  # CI: the same examples every run
)
@given(sequence=st.lists(calls(), min_size=1, max_size=8))
def test_random_calls_leave_failed_calls_without_effect(kind, sequence):
    EXAMPLES_RUN[kind] = EXAMPLES_RUN.get(kind, 0) + 1
    td = MAKERS[kind]()
    for step in sequence:
        name, call, names = step, step.fn, step.names
        before = state(td)
        try:
            call(td)
        except DOCUMENTED as err:
            if names and not isinstance(err, IndexError):
                assert any(n in str(err) for n in names), (name, names, str(err))
            assert same(before, state(td)), (name, repr(err))
        except Exception as err:  # noqa: BLE001
            pytest.fail(f"{name} raised an undocumented {type(err).__name__}: {err}")
