"""The compatibility surface (tensordict/_compat.py, docs/compatibility.md): what
TorchRL and other code written for 0.15.3 call, checked without TorchRL.

Each test pins a behaviour of 0.15.3 that existing code relies on (issue 16 items 1-5,
issue 13's "names TorchRL reaches for", issue 14's private names).
"""

from __future__ import annotations

import dataclasses
import typing

import pytest
import torch

import tensordict
from tensordict import (
    LazyStackedTensorDict,
    NestedKey,
    NO_DEFAULT,
    TensorClass,
    TensorDict,
    TensorDictBase,
    tensorclass,
)
from tensordict import _modes


pytestmark = pytest.mark.usefixtures("restore_modes")  # tests/conftest.py


class Pair(TensorClass):
    x: torch.Tensor
    y: torch.Tensor = None


def dense():
    return TensorDict(
        a=torch.zeros(3, 2),
        nested=TensorDict(b=torch.ones(3), batch_size=[3]),
        batch_size=[3],
    )


def lazy():
    return LazyStackedTensorDict(
        TensorDict(a=torch.zeros(2), only0=torch.ones(2)),
        TensorDict(a=torch.ones(2)),
    )


# ------------------------------------------------------------------ item 1: switches
SWITCHES = [
    (tensordict.set_lazy_legacy, tensordict.lazy_legacy, False),
    (
        tensordict.set_capture_non_tensor_stack,
        tensordict.capture_non_tensor_stack,
        False,
    ),
    (tensordict.set_list_to_stack, tensordict.list_to_stack, True),
]


@pytest.mark.parametrize("switch,read,default", SWITCHES)
class TestSwitches:
    def test_set_and_unset(self, switch, read, default):
        before = read()
        flip = switch(not default)
        flip.set()
        assert read() is (not default)
        flip.unset()
        assert read() is before

    def test_torchrl_import_call(self, switch, read, default):
        # what `import torchrl` runs: set_lazy_legacy(False).set()
        switch(default).set()
        assert read() is default

    def test_plain_call_sets_the_mode(self, switch, read, default):
        switch(not default)
        assert read() is (not default)

    def test_context_manager_restores(self, switch, read, default):
        switch(default).set()
        with switch(not default):
            assert read() is (not default)
        assert read() is default

    def test_decorator_applies_only_inside(self, switch, read, default):
        switch(default).set()

        @switch(not default)
        def inside():
            return read()

        assert read() is default
        assert inside() is (not default)
        assert read() is default

    def test_allow_none_before_any_set(self, switch, read, default):
        switch._setting.value = None
        assert read(allow_none=True) is None
        assert read() is default

    def test_clone_does_not_apply(self, switch, read, default):
        switch(default).set()
        twin = switch(default).clone()
        assert type(twin) is switch and twin.mode is default


def test_switches_are_importable_from_both_places():
    from tensordict import utils

    for name in (
        "set_lazy_legacy",
        "set_capture_non_tensor_stack",
        "set_list_to_stack",
        "lazy_legacy",
        "capture_non_tensor_stack",
        "list_to_stack",
    ):
        assert getattr(utils, name) is getattr(tensordict, name)


def test_set_get_defaults_to_none():
    td = dense()
    assert td.get("missing") is None
    tensordict.set_get_defaults_to_none(False)
    with pytest.raises(KeyError, match="missing"):
        td.get("missing")
    tensordict.set_get_defaults_to_none(True)
    assert td.get("missing") is None


# --------------------------------------------------------- item 2: names and modules
def test_assert_allclose_td_both_paths():
    from tensordict.utils import assert_allclose_td

    assert tensordict.assert_allclose_td is assert_allclose_td
    td = dense()
    assert assert_allclose_td(td, td.clone()) is True
    with pytest.raises(AssertionError, match="'a'"):
        assert_allclose_td(td, td + 1)
    with pytest.raises(KeyError, match="nested"):
        assert_allclose_td(td, td.exclude("nested"))
    assert assert_allclose_td(td, td.exclude("nested"), intersection=True)
    with pytest.raises(TypeError):
        assert_allclose_td(td, {"a": 1})
    with pytest.raises(AssertionError, match="dtype"):
        assert_allclose_td(td, td.int())
    nan = TensorDict(a=torch.tensor([float("nan")]))
    assert assert_allclose_td(nan, nan.clone())
    with pytest.raises(AssertionError):
        assert_allclose_td(nan, nan.clone(), equal_nan=False)


def test_private_utils():
    from tensordict import utils

    assert utils._unravel_key_to_tuple(("a", ("b", "c"))) == ("a", "b", "c")
    assert utils._unravel_key_to_tuple("a") == ("a",)
    assert utils._unravel_key_to_tuple(1) == ()
    assert utils._unravel_key_to_tuple(("a", 1)) == ()
    assert list(utils._zip_strict([1, 2], [3, 4])) == [(1, 3), (2, 4)]
    with pytest.raises(ValueError):
        list(utils._zip_strict([1, 2], [3]))
    td = dense()
    assert utils._shape(td) == torch.Size([3])
    assert utils._shape(torch.zeros(2, 5)) == torch.Size([2, 5])
    assert utils._maybe_correct_neg_dim(-1, torch.Size([2, 3])) == 1
    assert utils._maybe_correct_neg_dim(-2, None, 3) == 1
    with pytest.raises(IndexError):
        utils._maybe_correct_neg_dim(5, torch.Size([2, 3]))
    with pytest.raises(IndexError):
        utils._maybe_correct_neg_dim(-5, torch.Size([2, 3]))
    bs = torch.Size([3, 4])
    assert utils._getitem_batch_size(bs, 0) == torch.Size([4])
    assert utils._getitem_batch_size(bs, (slice(None), None)) == torch.Size([3, 1, 4])
    assert utils._getitem_batch_size(bs, torch.tensor([0, 1])) == torch.Size([2, 4])
    assert utils._getitem_batch_size(bs, (Ellipsis, 0)) == torch.Size([3])
    assert utils.Buffer is torch.nn.Buffer
    assert utils.is_seq_of_nested_key(["a", ("b", "c")])
    assert utils.is_seq_of_nested_key("a") and utils.is_seq_of_nested_key([])
    assert not utils.is_seq_of_nested_key([1])
    assert utils._is_tensorclass(Pair) and not utils._is_tensorclass(TensorDict)
    assert utils._is_non_tensor(tensordict.NonTensorData)
    assert utils._is_non_tensor(tensordict.NonTensorStack)
    assert not utils._is_non_tensor(TensorDict)
    assert utils.is_non_tensor(tensordict.NonTensorData(1))
    assert not utils.is_non_tensor(1)
    assert utils.is_tensorclass(Pair(x=torch.zeros(1), batch_size=[1]))
    assert utils.logger.name == "tensordict"
    assert utils.NestedKey is NestedKey and utils.NO_DEFAULT is NO_DEFAULT
    assert utils.unravel_key(("a", ("b",))) == ("a", "b")


def test_expand_right_helpers():
    from tensordict.utils import expand_as_right, expand_right

    dest = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
    assert expand_as_right(torch.arange(3), dest).shape == torch.Size([3])
    out = expand_right(torch.arange(3), [3, 2])
    assert out.shape == (3, 2) and (out[:, 1] == torch.arange(3)).all()
    td = TensorDict(a=torch.arange(3), batch_size=[3])
    assert expand_right(td, [3, 2]).batch_size == (3, 2)
    with pytest.raises(RuntimeError):
        expand_right(torch.arange(3), [2, 3])


def test_base_names():
    from tensordict import base

    assert base.TensorDictBase is TensorDictBase and base.NO_DEFAULT is NO_DEFAULT
    leaf = base._is_leaf_nontensor
    assert leaf(torch.Tensor) and leaf(tensordict.NonTensorData)
    assert leaf(tensordict.NonTensorStack)
    assert not leaf(TensorDict) and not leaf(LazyStackedTensorDict)
    assert tensordict.is_leaf_nontensor is leaf
    assert base._default_is_leaf(torch.Tensor) and not base._default_is_leaf(TensorDict)
    td = TensorDict(a=torch.zeros(2), n="x", s=TensorDict(b=torch.zeros(2)))
    assert set(td.keys(True, True, is_leaf=leaf)) == {"a", "n", ("s", "b")}
    keys = set(td.keys(True, True, is_leaf=base._NESTED_TENSORS_AS_LISTS))
    assert keys == {"a", ("s", "b")}


def test_tensor_collection_base_class():
    from tensordict._tensorcollection import TensorCollection

    assert issubclass(TensorDictBase, TensorCollection)
    for obj in (dense(), lazy(), Pair(x=torch.zeros(2), batch_size=[2])):
        assert isinstance(obj, TensorCollection)
    assert not isinstance(torch.zeros(1), TensorCollection)


# -------------------------------------------------------- item 3: _set_str, _fast_apply
@pytest.mark.parametrize(
    "make", [dense, lazy, lambda: Pair(x=torch.zeros(2), batch_size=[2])]
)
def test_set_str_and_get_str_keywords(make):
    td = make()
    n = td.batch_size[0]
    td._set_str("new", torch.ones(n), validated=True, inplace=False, non_blocking=False)
    assert (td.get("new") == 1).all()
    td._set_str("new", torch.full((n,), 2.0), validated=False, inplace=True)
    assert (td.get("new") == 2).all()
    assert td._get_str("nope", default=None) is None
    with pytest.raises(KeyError, match="nope"):
        td._get_str("nope", NO_DEFAULT)


def test_fast_apply():
    td = dense()
    out = td._fast_apply(lambda x: x + 1)
    assert (out["a"] == 1).all() and (out["nested", "b"] == 2).all()
    # named, nested keys, a second tensordict with a default, filtered entries
    other = TensorDict(a=torch.ones(3, 2), batch_size=[3])
    seen = []

    def fn(name, x, y):
        seen.append(name)
        return None if y is None else x + y

    out = td._fast_apply(
        fn, other, named=True, nested_keys=True, default=None, filter_empty=True
    )
    assert set(seen) == {"a", ("nested", "b")}
    assert list(out.keys()) == ["a"]
    # out= receives the results; propagate_lock locks them
    target = td.empty()
    assert td._fast_apply(lambda x: x * 0, out=target) is target
    assert (target["a"] == 0).all()
    td.lock_()
    assert td._fast_apply(lambda x: x, propagate_lock=True).is_locked
    # batch_size and device as apply takes them
    assert td._fast_apply(lambda x: x[:2], batch_size=[2]).batch_size == (2,)


# --------------------------------------- item 4: get, to(None), NestedKey, lazy stacks
def test_get_missing_returns_none():
    td = dense()
    assert td.get("missing") is None
    assert td.get(("nested", "missing")) is None
    assert td.get(("missing", "deeper")) is None
    assert td.get("missing", 3) == 3 and td.get("missing", default=4) == 4
    with pytest.raises(KeyError, match="missing"):
        td["missing"]
    with pytest.raises(KeyError, match="missing"):
        td.get("missing", NO_DEFAULT)
    tc = Pair(x=torch.zeros(2), batch_size=[2])
    assert tc.get("missing") is None and tc.get("y") is None


def test_lazy_stack_key_held_by_some_members():
    stack = lazy()
    assert stack.get("only0") is None  # as 0.15.3: read as missing
    assert stack.get("only0", "d") == "d"
    assert "only0" not in stack.keys()
    with pytest.raises(KeyError, match="only0"):
        stack["only0"]
    assert (stack[0].get("only0") == 1).all()


def test_nested_key_isinstance():
    assert isinstance("a", NestedKey)
    assert isinstance(("a", "b"), NestedKey)
    assert isinstance(("a", ("b", "c")), NestedKey)
    for bad in (1, ("a", 1), (), None, ["a"]):
        assert not isinstance(bad, NestedKey)
    # still usable in annotations
    assert typing.get_args(typing.Union[NestedKey, int]) == (NestedKey, int)
    assert (NestedKey | None) is not None


# ---------------------------------------------------------------- item 5: tensorclass
def test_tensorclass_subscript_options():
    class NoCast(TensorClass["nocast"]):
        x: torch.Tensor
        y: int = 0

    obj = NoCast(x=1, y=2, batch_size=[])
    assert type(obj.x) is int and type(obj.y) is int
    assert issubclass(NoCast, TensorClass)
    with pytest.raises(TypeError, match="bogus"):
        TensorClass["bogus"]
    with pytest.raises(TypeError, match="autocast"):

        class Both(TensorClass["autocast", "nocast"]):
            x: torch.Tensor


def test_tensorclass_autocast():
    class Cast(TensorClass["autocast"]):
        x: torch.Tensor
        i: int = 0
        f: float = 0.0
        s: str = ""

    obj = Cast(x=1, i=2.5, f=2, s=3, batch_size=[])
    assert isinstance(obj.x, torch.Tensor)
    assert obj.i == 2 and type(obj.i) is int
    assert obj.f == 2.0 and type(obj.f) is float
    assert obj.s == "3"
    obj.i = torch.tensor(7)
    assert obj.i == 7 and type(obj.i) is int

    @tensorclass(autocast=True)
    class Deco:
        i: int

    assert Deco(i=2.7, batch_size=[]).i == 2


def test_tensorclass_tensor_only():
    class Only(TensorClass["tensor_only"]):
        x: torch.Tensor
        y: typing.Optional[torch.Tensor] = None

    obj = Only(x=[1, 2], batch_size=[2])
    assert isinstance(obj.x, torch.Tensor) and obj.y is None

    class PipeUnion(TensorClass["tensor_only"]):  # PEP 604 spelling of Optional
        x: torch.Tensor | None

    assert PipeUnion(x=None, batch_size=[]).x is None
    with pytest.raises(TypeError, match="'s'"):

        class Bad(TensorClass["tensor_only"]):
            x: torch.Tensor
            s: str


def test_tensorclass_frozen():
    @tensorclass(frozen=True)
    class Frozen:
        x: torch.Tensor

    for cls in (
        Frozen,
        type("F2", (TensorClass["frozen"],), {"__annotations__": {"x": torch.Tensor}}),
    ):
        obj = cls(x=torch.zeros(2), batch_size=[2])
        with pytest.raises(dataclasses.FrozenInstanceError, match="'x'"):
            obj.x = torch.ones(2)
        assert obj.is_locked
        assert isinstance(hash(obj), int)
        assert type(obj + 1) is cls


def test_tensorclass_shadow_and_combinations():
    class Shadow(TensorClass["shadow", "nocast"]):
        get: torch.Tensor

    obj = Shadow(get=3, batch_size=[])
    assert obj.get == 3
    with pytest.raises(AttributeError, match="get"):

        class NoShadow(TensorClass):
            get: torch.Tensor

    assert TensorClass["nocast", "frozen"].__name__ == "TensorClass_nocast_frozen"


def test_tensorclass_field_named_data():
    class WithData(TensorClass):
        data: torch.Tensor

    obj = WithData(data=torch.zeros(2), batch_size=[2])
    assert (obj.data == 0).all()
    assert (obj[0].data == 0).all()


def test_tensorclass_getattr():
    obj = Pair(x=torch.zeros(3, 2), batch_size=[3])
    assert obj.__getattr__("x") is obj.x
    assert obj.__getattr__("y") is None
    with pytest.raises(AttributeError, match="'foo'"):
        obj.foo


# ----------------------------------------------------- issue 13/14: private methods
def test_private_methods():
    td = dense()
    assert not td._has_names()
    td.names = ["b"]
    assert td._has_names()
    assert td._check_batch_size() is True
    td._tensordict["bad"] = torch.zeros(4)  # bypassing validation
    with pytest.raises(RuntimeError, match="'bad'"):
        td._check_batch_size()
    assert td._check_batch_size(raise_exception=False) is False
    del td._tensordict["bad"]
    assert not td._has_non_tensor
    td["n"] = "text"
    assert td._has_non_tensor
    values = td._values_list(True, True)
    assert len(values) == 2 and all(isinstance(v, torch.Tensor) for v in values)
    assert "n" not in td._exclude("n").keys()
    assert list(td._select("a").keys()) == ["a"]
    assert td._is_locked is False
    td._propagate_lock()
    assert td.is_locked and td["nested"].is_locked
    td._propagate_unlock()
    assert not td["nested"].is_locked
    other = TensorDict(z=torch.zeros(3), batch_size=[3])
    td._replace_contents(other)
    assert list(td.keys()) == ["z"]


def test_sub_and_custom_op_classes():
    from tensordict._lazy import _CustomOpTensorDict
    from tensordict._td import _SubTensorDict

    td = dense()
    assert isinstance(td._get_sub_tensordict(0), _SubTensorDict)
    with tensordict.set_lazy_legacy(True):
        view = td.unsqueeze(0)
    assert isinstance(view, _CustomOpTensorDict)
    assert not isinstance(td, (_SubTensorDict, _CustomOpTensorDict))


def test_to_none_is_a_no_op():
    td = dense()
    assert td.to(None) is td
