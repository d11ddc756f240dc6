"""Issue 14's table, rows 5, 7, 9, 10, 11, 12 and 14 (continuing
``tests/test_compat_rows.py``): what 0.15.3 does that existing code relies on, on
dense, nested, lazy-stacked and tensorclass containers where the row applies."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict
from tensordict.base import NO_DEFAULT


class Obs(TensorClass):
    a: torch.Tensor
    nested: TensorDict = None


def make(kind: str, value: float = 0.0):
    """A container with ``a`` (shape [3, 2]) and ``("nested", "b")`` (shape [3, 4])."""
    nested = TensorDict(b=torch.full((3, 4), value), batch_size=[3])
    a = torch.arange(6.0).reshape(3, 2) + value
    if kind == "dense":
        return TensorDict(a=a, nested=nested, batch_size=[3])
    if kind == "lazy":
        return LazyStackedTensorDict(
            *[TensorDict(a=a[i], nested=nested[i], batch_size=[]) for i in range(3)], stack_dim=0
        )
    if kind == "tensorclass":
        return Obs(a=a, nested=nested, batch_size=[3])
    raise ValueError(kind)


KINDS = ["dense", "lazy", "tensorclass"]
LEAVES = ["a", ("nested", "b")]


# ----------------------------------------------------------------------- row 12
@pytest.mark.parametrize("kind", KINDS)
def test_row12_masked_select(kind):
    td = make(kind)
    mask = torch.tensor([True, False, True])
    got = torch.masked_select(td, mask)
    assert got.batch_size == (2,)
    for key in LEAVES:
        assert (got[key] == td[key][mask]).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loss", [F.l1_loss, F.mse_loss, F.smooth_l1_loss])
def test_row12_losses(kind, loss):
    td, target = make(kind), make(kind, 1.5)
    got = loss(td, target)
    assert got.batch_size == () and got["nested"].batch_size == ()
    for key in LEAVES:
        torch.testing.assert_close(got[key], loss(td[key], target[key]))
    summed = loss(td, target, reduction="sum")
    torch.testing.assert_close(summed["nested", "b"], loss(td["nested", "b"], target["nested", "b"], reduction="sum"))
    each = loss(td, target, reduction="none")
    assert each.batch_size == (3,)
    torch.testing.assert_close(each["a"], loss(td["a"], target["a"], reduction="none"))


def test_row12_loss_errors():
    td, target = make("dense"), make("dense", 1.0)
    with pytest.raises(KeyError, match="'b'"):
        F.mse_loss(td, target.exclude(("nested", "b")))
    with pytest.raises(ValueError):  # as torch: not a reduction
        F.mse_loss(td, target, reduction="bad")


@pytest.mark.parametrize("kind", KINDS)
def test_row12_autograd_grad(kind):
    x = make(kind).requires_grad_()
    y = x * 3
    grads = torch.autograd.grad(y, x, torch.ones_like(y))
    assert grads.batch_size == (3,)
    for key in LEAVES:
        assert (grads[key] == 3).all() and grads[key].shape == x[key].shape


def test_row12_autograd_grad_scalar_outputs_and_unused_inputs():
    x = make("dense").requires_grad_()
    total = (x["a"] * 2).sum()
    y = TensorDict(a=total)
    grads = torch.autograd.grad(y, x, allow_unused=True)
    assert (grads["a"] == 2).all()
    assert ("nested", "b") not in grads.keys(True)  # unused: left out, as 0.15.3
    with pytest.raises(ValueError, match="inputs"):
        torch.autograd.grad(x * 2, x["a"], torch.ones_like(x))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["abs_", "exp_", "sigmoid_", "sqrt_", "neg_", "trunc_"])
def test_row12_in_place_torch_functions_write_into_the_container(kind, name):
    td = make(kind, 0.25)
    before = {key: td[key].clone() for key in LEAVES}
    assert getattr(torch, name)(td) is td
    for key in LEAVES:
        torch.testing.assert_close(td[key], getattr(torch, name)(before[key]))


def test_row12_in_place_torch_functions_of_0_15_3_all_dispatch():
    names = ["abs_", "acos_", "asin_", "atan_", "ceil_", "cos_", "cosh_", "erf_", "erfc_",
             "exp_", "expm1_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_", "neg_",
             "reciprocal_", "round_", "sigmoid_", "sin_", "sinh_", "sqrt_", "tan_", "tanh_",
             "trunc_"]  # the in-place torch functions 0.15.3 dispatches
    for name in names:
        td = TensorDict(a=torch.full((3,), 0.5), batch_size=[3])
        assert getattr(torch, name)(td) is td, name
        torch.testing.assert_close(td["a"], getattr(torch, name)(torch.full((3,), 0.5)))


# ------------------------------------------------------------------------ row 5
@pytest.mark.parametrize("kind", KINDS)
def test_row5_where_out_without_the_keys_gets_them(kind):
    td, other = make(kind), make(kind, 1.0)
    cond = torch.tensor([True, False, True])
    out = td.empty()
    assert td.where(cond, other, out=out) is out
    for key in LEAVES:
        assert (out[key] == torch.where(_expand(cond, td[key]), td[key], other[key])).all()


def test_row5_stack_out_writes_the_keys_it_has():
    # as 0.15.3: a preallocated out holding only some keys gets only those
    td, other = make("dense"), make("dense", 1.0)
    out = TensorDict(a=torch.zeros(2, 3, 2), batch_size=[2, 3])
    kept = out["a"]
    torch.stack([td, other], 0, out=out)
    assert out["a"] is kept and (kept[1] == other["a"]).all()
    assert set(out.keys()) == {"a"}


def _expand(mask, x):
    return mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim)).expand_as(x)


# ------------------------------------------------------------------------ row 9
@pytest.mark.parametrize("kind", KINDS)
def test_row9_default_fills_keys_missing_on_either_side(kind):
    td, other = make(kind), make(kind, 1.0)
    partial = other.exclude("a")
    got = td.add(partial, default=10.0)  # other lacks "a"
    assert (got["a"] == td["a"] + 10).all()
    got = partial.add(td, default=10.0)  # self lacks "a": the result has it
    assert (got["a"] == td["a"] + 10).all()
    assert (got["nested", "b"] == other["nested", "b"] + td["nested", "b"]).all()
    common = td.add(partial, default="intersection")
    assert set(common.keys(True, True)) == {("nested", "b")}


@pytest.mark.parametrize("kind", KINDS)
def test_row9_where_pad_fills_either_side(kind):
    td, other = make(kind), make(kind, 1.0)
    cond = torch.tensor([True, False, True])
    got = td.exclude("a").where(cond, other, pad=5.0)
    assert (got["a"] == torch.where(_expand(cond, td["a"]), 5.0, other["a"])).all()


@pytest.mark.parametrize("kind", KINDS)
def test_row9_comparison_with_a_dict_is_elementwise(kind):
    td = make(kind)
    plain = td.to_dict() if kind != "tensorclass" else td.to_tensordict().to_dict()
    equal = td == plain
    assert not isinstance(equal, bool)
    assert equal.all() and not (td != plain).any()
    assert (td >= plain).all()
    with pytest.raises(KeyError, match="nested"):
        td == {"a": torch.zeros(3, 2)}  # noqa: B015


# ----------------------------------------------------------------------- row 10
@pytest.mark.parametrize("kind", KINDS)
def test_row10_to_inplace_and_other(kind):
    td = make(kind)
    assert td.to(torch.float64, inplace=True) is td
    assert td["a"].dtype == td["nested", "b"].dtype == torch.float64
    cast = make(kind).to(other=torch.zeros(1, dtype=torch.float16))
    assert cast["nested", "b"].dtype == torch.float16
    assert make(kind).to(other=make("dense").to("cpu")).device == torch.device("cpu")


@pytest.mark.parametrize("kind", ["dense", "tensorclass"])
def test_row10_reshape_inplace(kind):
    td = make(kind)
    assert td.reshape(1, 3, inplace=True) is td
    assert td.batch_size == (1, 3) and td["a"].shape == (1, 3, 2)
    assert td["nested"].batch_size == (1, 3)


def test_row10_view_dtype_with_batch_size():
    td = TensorDict(a=torch.zeros(3, 4), batch_size=[3])
    got = td.view(torch.int16, batch_size=[3, 8])
    assert got.batch_size == (3, 8) and got["a"].dtype == torch.int16
    assert td.view(torch.int32, batch_size=[3]).batch_size == (3,)
    with pytest.raises(RuntimeError, match="does not start with"):
        td.view(torch.int16, batch_size=[3, 4])


@pytest.mark.parametrize("kind", KINDS)
def test_row10_new_tensor_from_tensor_like_data(kind):
    td = make(kind)
    got = td.new_tensor(torch.ones(3, dtype=torch.int64))
    assert got.batch_size == (3,)
    for key in LEAVES:
        assert got[key].dtype == torch.float32 and (got[key] == 1).all()
    assert (td.new_tensor([1, 2])["a"] == torch.tensor([1.0, 2.0])).all()
    assert td.new_tensor([1, 2]).batch_size == (2,)


def test_row10_update_keywords_from_dict_batch_dims_set_at_numpy():
    import numpy as np

    td = make("dense")
    td.update(TensorDict(a=torch.ones(3, 2), c=torch.ones(3), batch_size=[3]), keys_to_update=["a"])
    assert "c" not in td.keys() and (td["a"] == 1).all()
    built = TensorDict.from_dict({"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3, 4, 5)}}, batch_dims=2)
    assert built.batch_size == (3, 4) and built["b"].batch_size == (3, 4)
    td.set_at_(("nested", "b"), np.full(4, 7.0), 1)
    assert (td["nested", "b"][1] == 7).all()


# ----------------------------------------------------------------------- row 11
@pytest.mark.parametrize("kind", KINDS)
def test_row11_reduce_true_with_dim_keeps_feature_dims(kind):
    td = make(kind)
    same = td.select("a")
    same.set("twin", same["a"] * 2)
    both = torch.cat([same["a"], same["twin"]], 0)
    torch.testing.assert_close(same.sum(dim=0, reduce=True), both.sum(0))
    torch.testing.assert_close(same.mean(dim=0, keepdim=True, reduce=True), both.mean(0, keepdim=True))
    assert same.sum(dim=0, reduce=True).shape == (2,)
    with pytest.raises(RuntimeError, match="same shape"):
        td.sum(dim=0, reduce=True)  # "a" is [3, 2], ("nested", "b") [3, 4]


@pytest.mark.parametrize("kind", KINDS)
def test_row11_apply_to_nothing_with_filter_empty_is_none(kind):
    assert make(kind).apply(lambda x: None, filter_empty=True) is None


@pytest.mark.parametrize("kind", KINDS)
def test_row11_atleast_returns_self_when_nothing_changes(kind):
    td = make(kind)
    if kind != "lazy":  # a lazy stack runs them on its dense stack
        assert td.atleast_1d() is td and torch.atleast_1d(td) is td
    assert td.atleast_2d().batch_size == (1, 3)


def test_row11_flatten_without_batch_dims_gives_batch_one():
    td = TensorDict(a=torch.zeros(2), nested=TensorDict(b=torch.zeros(())), batch_size=[])
    flat = td.flatten()
    assert flat.batch_size == (1,) and flat["a"].shape == (1, 2)
    assert flat["nested"].batch_size == (1,) and flat["nested", "b"].shape == (1,)


@pytest.mark.parametrize("kind", KINDS)
def test_row11_sub_tensordict_without_batch_dims_takes_the_parents(kind):
    td = make(kind)
    sub = TensorDict(c=torch.zeros(3, 2))
    td["sub"] = sub
    assert td["sub"].batch_size == (3,) and sub.batch_size == ()  # sub left as it is
    td.set("empty", TensorDict())
    assert td["empty"].batch_size == (3,)
    with pytest.raises(RuntimeError, match="'bad'"):
        td["bad"] = TensorDict(c=torch.zeros(2))


@pytest.mark.parametrize("kind", ["dense", "lazy"])
def test_row11_nested_flatten_unflatten_blocks_write_back(kind):
    base = TensorDict(a=TensorDict(b=torch.zeros(3), batch_size=[3]), batch_size=[3])
    td = base if kind == "dense" else LazyStackedTensorDict(*base.unbind(0), stack_dim=0)
    with td.flatten_keys() as flat:
        flat["a.c"] = torch.ones(3)
        with flat.unflatten_keys() as nested:
            nested["x", "y"] = torch.full((3,), 2.0)
    assert set(td.keys(True, True)) == {("a", "b"), ("a", "c"), ("x", "y")}
    assert (td["x", "y"] == 2).all() and (td["a", "c"] == 1).all()


# ------------------------------------------------------------------------ row 7
@pytest.mark.parametrize("kind", ["dense", "tensorclass"])
def test_row7_get_returns_non_tensor_data(kind):
    from tensordict import NonTensorData

    td = make(kind)
    td.set(("nested", "label"), "hello") if kind == "dense" else td.nested.set("label", "hello")
    got = td.get(("nested", "label"))
    assert isinstance(got, NonTensorData) and got.data == "hello"
    assert got.batch_size == (3,)
    assert td["nested", "label"] == "hello"  # indexing gives the value itself
    assert td.get_non_tensor(("nested", "label")) == "hello"


@pytest.mark.parametrize("kind", ["dense", "lazy"])
def test_row7_list_value_is_a_non_tensor_stack(kind):
    from tensordict import NonTensorStack

    td = make(kind)
    td.set("labels", ["x", "y", "z"])
    assert isinstance(td.get("labels"), NonTensorStack)
    assert td[1]["labels"] == "y" and td["labels"].tolist() == ["x", "y", "z"]
    empty = TensorDict()
    empty["labels"] = ["x", "y"]
    assert empty.get("labels").batch_size == (2,)


def test_row7_non_tensor_leaf_is_not_empty():
    from tensordict import NonTensorData

    assert not TensorDict(s=NonTensorData("x")).is_empty()


@pytest.mark.parametrize("kind", ["dense", "lazy"])
@pytest.mark.parametrize("method", ["update_at_", "copy_at_"])
def test_row7_non_tensor_written_at_an_index(kind, method):
    from tensordict import NonTensorData

    base = TensorDict(s=NonTensorData("a", batch_size=[3]), x=torch.zeros(3), batch_size=[3])
    td = base if kind == "dense" else LazyStackedTensorDict(*base.unbind(0), stack_dim=0)
    getattr(td, method)(TensorDict(s=NonTensorData("z"), x=torch.ones(()), batch_size=[]), 1)
    assert td["s"].tolist() == ["a", "z", "a"]
    assert td["x"].tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("kind", ["dense", "nested", "lazy"])
def test_row7_indexing_a_non_tensor_stack_gives_a_linked_list(kind):
    import json

    from tensordict.utils import LinkedList

    td = TensorDict(a=torch.zeros(3), labels=["x", "y", "z"], batch_size=[3])
    if kind == "nested":
        td = TensorDict(inner=td, batch_size=[3])
    elif kind == "lazy":
        td = LazyStackedTensorDict(*td.unbind(0), stack_dim=0)
    key = ("inner", "labels") if kind == "nested" else "labels"
    values = td[key]
    assert isinstance(values, LinkedList) and isinstance(values, list)
    assert values == ["x", "y", "z"] and json.dumps(values) == '["x", "y", "z"]'
    assert td[1][key] == "y"  # one element: the value itself
    if kind != "lazy":  # a lazy stack stacks its members' values on each read
        values[0] = "w"  # an item assignment writes into the stack
        assert td[key].tolist() == ["w", "y", "z"] and td[0][key] == "w"


@pytest.mark.parametrize("kind", ["dense", "lazy", "tensorclass"])  # a nested key
@pytest.mark.parametrize("op", ["expand", "unsqueeze"])
def test_row7_expand_and_unsqueeze_make_a_non_tensor_stack(kind, op):
    from tensordict import NonTensorData, NonTensorStack

    td = make(kind)
    if kind == "tensorclass":
        td.nested.set("label", "t")
    else:
        td.set(("nested", "label"), "t")
    out = td.expand(2, 3) if op == "expand" else td.unsqueeze(0)
    got = out.get(("nested", "label")) if kind != "tensorclass" else out.nested.get("label")
    assert isinstance(got, NonTensorStack) and got.batch_size == out.batch_size
    assert got.tolist() == [["t"] * 3] * out.batch_size[0]
    assert out[0, 1]["nested", "label"] == "t"
    if kind != "lazy":
        same = td.expand(3)  # the batch size stays: the one value
        label = same.get(("nested", "label")) if kind == "dense" else same.nested.get("label")
        assert isinstance(label, NonTensorData)


def test_row7_linked_list_of_two_batch_dims():
    from tensordict.utils import LinkedList

    td = TensorDict(labels=[["a", "b"], ["c", "d"]], batch_size=[2, 2])
    values = td["labels"]
    assert isinstance(values[1], LinkedList) and values == [["a", "b"], ["c", "d"]]
    assert values.tolist() == [["a", "b"], ["c", "d"]] and type(values.tolist()[0]) is list
    values[1][0] = "q"
    assert td[1, 0]["labels"] == "q"
    assert repr(LinkedList([1, 2])) == "LinkedList([1, 2])"


@pytest.mark.parametrize("kind", KINDS)
def test_row11_squeeze_returns_self_when_nothing_is_squeezed(kind):
    td = make(kind)
    assert td.squeeze() is td and td.squeeze(0) is td and torch.squeeze(td) is td
    assert td.unsqueeze(0).squeeze(0).batch_size == (3,)


# ----------------------------------------------------------------------- row 14
def _dense():
    return make("dense")


# (call, the exception type 0.15.3 raises): the error here must be an instance of it,
# so that code catching 0.15.3's type still catches it (the message stays this
# project's, naming the key, dim or mask).
ROW14_CASES = {
    "stack with different keys": (lambda: torch.stack([_dense(), _dense().exclude("a")]), RuntimeError),
    "cat with different keys": (lambda: torch.cat([_dense(), _dense().exclude("a")]), KeyError),
    "cat dim out of range": (lambda: torch.cat([_dense(), _dense()], 3), RuntimeError),
    "transpose dim out of range": (lambda: _dense().transpose(0, 3), ValueError),
    "unsqueeze dim out of range": (lambda: _dense().unsqueeze(5), RuntimeError),
    "squeeze dim out of range": (lambda: _dense().squeeze(5), IndexError),
    "sum dim out of range": (lambda: _dense().sum(5), IndexError),
    "unbind dim out of range": (lambda: _dense().unbind(3), IndexError),
    "split sizes not summing": (lambda: _dense().split([1, 1]), RuntimeError),
    "masked_select bad mask": (lambda: torch.masked_select(_dense(), torch.ones(4, dtype=torch.bool)), IndexError),
    "where bad condition": (lambda: _dense().where(torch.ones(4, dtype=torch.bool), _dense()), RuntimeError),
    "flatten_keys collision": (
        lambda: TensorDict({"a.b": torch.zeros(3), "a": TensorDict(b=torch.zeros(3), batch_size=[3])}, batch_size=[3]).flatten_keys(),
        KeyError,
    ),
    "unflatten_keys collision": (
        lambda: TensorDict({"a.b": torch.zeros(3), "a": TensorDict(b=torch.zeros(3), batch_size=[3])}, batch_size=[3]).unflatten_keys(),
        KeyError,
    ),
    "nested key through a leaf": (lambda: _dense()["a", "b"], ValueError),
    "set_ of another shape": (lambda: _dense().set_("a", torch.zeros(3, 5)), ValueError),
    "non-key": (lambda: _dense().get(1), KeyError),
    "set a nested key through a leaf": (lambda: _dense().set(("a", "x"), torch.zeros(3)), KeyError),
    "narrow out of range": (lambda: _dense().narrow(0, 2, 5), RuntimeError),
    "refine_names with too many names": (lambda: _dense().refine_names("x", "y"), IndexError),
}


@pytest.mark.parametrize("kind", KINDS)
def test_row9_get_at_a_missing_key_returns_none(kind):
    td = make(kind)
    assert td.get_at("missing", 0) is None  # as get(missing), 0.15.3's default
    assert td.get_at("missing", 0, "fallback") == "fallback"
    with pytest.raises(KeyError, match="missing"):
        td.get_at("missing", 0, default=NO_DEFAULT)


@pytest.mark.parametrize("case", list(ROW14_CASES))
def test_row14_errors_are_instances_of_0_15_3_types(case):
    call, expected = ROW14_CASES[case]
    with pytest.raises(expected):
        call()


def test_row14_stack_error_names_the_key():
    with pytest.raises(KeyError, match="'a'"):
        torch.stack([_dense(), _dense().exclude("a")])
