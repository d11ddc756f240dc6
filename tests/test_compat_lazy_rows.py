"""Issue 14, rows 4 and 6: lazy stacks and lazy views behave as code written for
0.15.3 expects.

Row 4: ops on a lazy stack whose members differ in shape run member by member and
return lazy stacks (0.15.3 does so; a dense stack cannot hold such members).
"""

from __future__ import annotations

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict


class Obs(TensorClass):
    a: torch.Tensor
    nested: TensorDict = None


def members(kind: str, stack_dim: int = 0):
    """Two tensordicts of batch [3, 4] whose entries differ in their last dim."""
    out = []
    for i in range(2):
        a = torch.arange(12.0 * (i + 1)).view(3, 4, i + 1)
        nested = TensorDict(b=torch.full((3, 4, i + 2), float(i)), batch_size=[3, 4])
        if kind == "tensorclass":
            out.append(Obs(a=a, nested=nested, batch_size=[3, 4]))
        else:
            out.append(TensorDict(a=a, nested=nested, batch_size=[3, 4]))
    return out


def make(kind: str, stack_dim: int = 0):
    """A lazy stack of batch [2, 3, 4] (``stack_dim=0``) of members of different
    shapes; ``nested``: the lazy stack a stack gives for a nested key."""
    if kind == "nested":
        outer = [TensorDict(outer=m, batch_size=[3, 4]) for m in members("dense")]
        return LazyStackedTensorDict(*outer, stack_dim=stack_dim).get("outer")
    return LazyStackedTensorDict(*members(kind), stack_dim=stack_dim)


KINDS = ["dense", "nested", "tensorclass"]  # the members' kind


def leaves(td, key="a"):
    return [m.get(key) for m in td.tensordicts]


def check_rows(result, stack, shape):
    """``result`` holds, row by row, the members' ``a`` reshaped to ``shape`` (the
    batch dims), each keeping its own feature dim."""
    assert isinstance(result, LazyStackedTensorDict)
    assert result.batch_size == torch.Size(shape)
    flat = [x.reshape(-1, x.shape[-1]) for x in leaves(stack)]
    got = [x.reshape(-1, x.shape[-1]) for x in result.get("a", as_list=True)]
    torch.testing.assert_close(torch.cat([g for g in got if g.shape[-1] == 1]), flat[0])
    torch.testing.assert_close(torch.cat([g for g in got if g.shape[-1] == 2]), flat[1])


@pytest.mark.parametrize("kind", KINDS)
class TestRow4LazyStackOfDifferentShapes:
    def test_expand(self, kind):
        stack = make(kind)
        out = stack.expand(5, 2, 3, 4)
        assert isinstance(out, LazyStackedTensorDict)
        assert out.batch_size == (5, 2, 3, 4) and out.stack_dim == 1
        assert [x.shape for x in out.get("a", as_list=True)] == [(5, 3, 4, 1), (5, 3, 4, 2)]
        assert out.get(("nested", "b"), as_list=True)[1].shape == (5, 3, 4, 3)
        assert stack.expand_as(torch.zeros(5, 2, 3, 4)).batch_size == (5, 2, 3, 4)

    @pytest.mark.parametrize("op", ["view", "reshape"])
    def test_view_and_reshape_flat(self, kind, op):
        stack = make(kind)
        out = getattr(stack, op)(-1)
        check_rows(out, stack, (24,))
        # each member's rows, in order
        assert out[0].get("a").shape == (1,) and out[12].get("a").shape == (2,)
        torch.testing.assert_close(out[13].get("a"), stack[1].get("a")[0, 1])

    @pytest.mark.parametrize("shape", [(2, 12), (6, 4), (2, 3, 2, 2)])
    def test_view_to_other_shapes(self, kind, shape):
        stack = make(kind)
        check_rows(stack.view(*shape), stack, shape)
        check_rows(stack.reshape(shape), stack, shape)

    def test_view_is_a_view(self, kind):
        stack = make(kind)
        out = stack.view(-1)
        out[13].get("a").fill_(-1)
        assert (stack[1].get("a")[0, 1] == -1).all()

    def test_flatten(self, kind):
        stack = make(kind)
        check_rows(stack.flatten(), stack, (24,))
        check_rows(stack.flatten(0, 1), stack, (6, 4))

    def test_cat(self, kind):
        stack = make(kind)
        for dim, shape in [(0, (4, 3, 4)), (1, (2, 6, 4)), (2, (2, 3, 8))]:
            out = torch.cat([stack, stack], dim)
            assert isinstance(out, LazyStackedTensorDict) and out.batch_size == shape

    def test_all_and_any(self, kind):
        stack = make(kind)
        assert stack.all() is False and stack.any() is True
        assert (stack + 1).all() is True
        assert (stack * 0).any() is False

    def test_comparisons(self, kind):
        stack = make(kind)
        for out in (stack == 0, stack != stack.clone(), stack < 1, stack >= stack):
            assert isinstance(out, LazyStackedTensorDict)
            assert [x.dtype for x in out.get("a", as_list=True)] == [torch.bool] * 2
        assert (stack == stack).all()

    def test_where(self, kind):
        stack = make(kind)
        condition = torch.zeros(2, 3, 4, dtype=torch.bool)
        condition[1] = True
        out = stack.where(condition, -1.0)
        assert isinstance(out, LazyStackedTensorDict)
        a0, a1 = out.get("a", as_list=True)
        assert (a0 == -1).all() and torch.equal(a1, stack[1].get("a"))
        out = torch.where(condition, stack, stack * 10)
        torch.testing.assert_close(out.get("a", as_list=True)[0], stack[0].get("a") * 10)

    def test_where_writes_into_out(self, kind):
        stack = make(kind)
        target = make(kind) * 0
        condition = torch.ones(2, 3, 4, dtype=torch.bool)
        result = stack.where(condition, stack * 3, out=target)
        assert result is target
        for got, want in zip(target.get("a", as_list=True), stack.get("a", as_list=True)):
            torch.testing.assert_close(got, want)

    def test_repeat(self, kind):
        stack = make(kind)
        out = stack.repeat(1, 2, 1)
        assert isinstance(out, LazyStackedTensorDict) and out.batch_size == (2, 6, 4)
        torch.testing.assert_close(out.get("a", as_list=True)[1], stack[1].get("a").repeat(2, 1, 1))
        out = stack.repeat(2, 1, 1)  # the members, twice, each a copy
        assert out.batch_size == (4, 3, 4) and len(out.tensordicts) == 4
        torch.testing.assert_close(out[3].get("a"), stack[1].get("a"))
        out[3].get("a").fill_(-1)
        assert (out[1].get("a") != -1).all()

    def test_masked_fill(self, kind):
        stack = make(kind)
        mask = torch.zeros(2, 3, 4, dtype=torch.bool)
        mask[:, 0] = True
        out = stack.masked_fill(mask, 5.0)
        assert isinstance(out, LazyStackedTensorDict)
        assert (out.get("a", as_list=True)[1][0] == 5).all()
        stack.masked_fill_(mask, 5.0)
        assert (stack[1].get("a")[0] == 5).all() and (stack[1].get("a")[1] != 5).any()


def test_row4_stack_dim_inside_the_batch():
    stack = LazyStackedTensorDict(*members("dense"), stack_dim=1)  # batch [3, 2, 4]
    assert stack.expand(7, 3, 2, 4).stack_dim == 2
    out = stack.reshape(3, 8)  # row i: member 0's row i, then member 1's
    assert isinstance(out, LazyStackedTensorDict) and out.batch_size == (3, 8)
    for j in range(8):
        member, column = divmod(j, 4)
        torch.testing.assert_close(out[:, j].get("a"), stack.tensordicts[member].get("a")[:, column])
    # reshapes that mix the dims before the stack dim need the dense stack: an error
    with pytest.raises(RuntimeError, match="reshape"):
        stack.reshape(-1)
    condition = torch.zeros(3, 2, 4, dtype=torch.bool)
    condition[:, 1] = True
    a0, a1 = stack.where(condition, -1.0).get("a", as_list=True)
    assert (a0 == -1).all() and (a1 != -1).any()


def test_row4_members_of_one_shape_still_match_the_dense_stack():
    tds = [TensorDict(a=torch.randn(3, 4, 2), batch_size=[3, 4]) for _ in range(2)]
    stack, dense = LazyStackedTensorDict(*tds), torch.stack(tds)
    condition = torch.rand(2, 3) > 0.5
    for op in (
        lambda t: t.view(-1),
        lambda t: t.reshape(6, 4),
        lambda t: t.view(2, 12),
        lambda t: t.flatten(),
        lambda t: t.expand(5, 2, 3, 4),
        lambda t: t.where(condition, 0.0),
    ):
        got, want = op(stack), op(dense)
        assert got.batch_size == want.batch_size
        torch.testing.assert_close(got.get("a"), want.get("a"))


# ------------------------------------------------------------------------ row 6
# Under set_lazy_legacy(True), unsqueeze/squeeze/permute/transpose/view of a tensordict
# are lazy views (tensordict/_lazy_view.py).

from tensordict import set_lazy_legacy  # noqa: E402
from tensordict._lazy import _CustomOpTensorDict  # noqa: E402


def named(kind: str):
    """A container of batch [3, 4] named ("x", "y"), with a nested tensordict."""
    nested = TensorDict(b=torch.zeros(3, 4, 2), batch_size=[3, 4])
    if kind == "tensorclass":
        return Obs(a=torch.zeros(3, 4), nested=nested, batch_size=[3, 4], names=["x", "y"])
    td = TensorDict(a=torch.zeros(3, 4), nested=nested, batch_size=[3, 4], names=["x", "y"])
    if kind == "nested":
        return TensorDict(inner=td, batch_size=[3, 4])["inner"]
    return td


def storage(td):
    """What identifies a container: a tensorclass's tensordict, else itself."""
    return getattr(td, "_tensordict", td) if isinstance(td, Obs) else td


INVERSES = {
    "unsqueeze(0).squeeze(0)": lambda t: t.unsqueeze(0).squeeze(0),
    "unsqueeze(1).squeeze(1)": lambda t: t.unsqueeze(1).squeeze(1),
    "unsqueeze(-1).squeeze(-1)": lambda t: t.unsqueeze(-1).squeeze(-1),
    "unsqueeze twice, squeeze twice": lambda t: t.unsqueeze(0).unsqueeze(0).squeeze(0).squeeze(0),
    "transpose(0, 1) twice": lambda t: t.transpose(0, 1).transpose(0, 1),
    "transpose(0, 1).transpose(1, 0)": lambda t: t.transpose(0, 1).transpose(1, 0),
    "permute(1, 0) twice": lambda t: t.permute(1, 0).permute(1, 0),
    "view(-1).view(3, 4)": lambda t: t.view(-1).view(3, 4),
    "view(12).view(3, 4)": lambda t: t.view(12).view(3, 4),
}


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
@pytest.mark.parametrize("ops", sorted(INVERSES))
def test_row6_view_ops_undone_give_the_tensordict_back(kind, ops):
    td = named(kind)
    with set_lazy_legacy(True):
        out = INVERSES[ops](td)
    assert storage(out) is storage(td)


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
def test_row6_views_are_lazy_and_not_undone_by_other_ops(kind):
    td = named(kind)
    with set_lazy_legacy(True):
        view = td.unsqueeze(0)
        assert isinstance(storage(view), _CustomOpTensorDict)
        assert storage(view.squeeze(0)) is storage(td)
        other = td.permute(1, 0).unsqueeze(0)
        assert isinstance(storage(other), _CustomOpTensorDict) and other.batch_size == (1, 4, 3)
        assert storage(td.transpose(0, 1).view(-1)) is not storage(td)


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
def test_row6_names_follow_the_dims(kind):
    td = named(kind)
    with set_lazy_legacy(True):
        assert td.unsqueeze(0).names == [None, "x", "y"]
        assert td.unsqueeze(2).names == ["x", "y", None]
        assert td.permute(1, 0).names == ["y", "x"]
        assert td.transpose(0, 1).names == ["y", "x"]
        assert td.unsqueeze(1).squeeze(1).names == ["x", "y"]
        assert td.view(-1).names == [None]
        assert td.view(3, 4).names == ["x", "y"]


def named3(kind: str):
    """A container of batch [2, 3, 4] named ("x", "y", "z")."""
    if kind == "lazy":
        stack = LazyStackedTensorDict(
            *[TensorDict(a=torch.zeros(3, 4, 2), batch_size=[3, 4]) for _ in range(2)], stack_dim=0
        )
        stack.names = ["x", "y", "z"]
        return stack
    nested = TensorDict(b=torch.zeros(2, 3, 4, 2), batch_size=[2, 3, 4])
    if kind == "tensorclass":
        return Obs(a=torch.zeros(2, 3, 4), nested=nested, batch_size=[2, 3, 4], names=["x", "y", "z"])
    td = TensorDict(a=torch.zeros(2, 3, 4), nested=nested, batch_size=[2, 3, 4], names=["x", "y", "z"])
    if kind == "nested":
        return TensorDict(inner=td, batch_size=[2, 3, 4])["inner"]
    return td


# the names 0.15.3 gives, without the legacy mode (x, y, z name dims 0, 1, 2)
NAMES_AFTER = {
    "unsqueeze(1)": (lambda t: t.unsqueeze(1), ["x", None, "y", "z"]),
    "unsqueeze(-1)": (lambda t: t.unsqueeze(-1), ["x", "y", "z", None]),
    "squeeze(1)": (lambda t: t.unsqueeze(1).squeeze(1), ["x", "y", "z"]),
    "permute(2, 0, 1)": (lambda t: t.permute(2, 0, 1), ["z", "x", "y"]),
    "transpose(0, 2)": (lambda t: t.transpose(0, 2), ["z", "y", "x"]),
    "movedim(0, 2)": (lambda t: t.movedim(0, 2), ["y", "z", "x"]),
    "view same": (lambda t: t.view(2, 3, 4), ["x", "y", "z"]),
    "reshape(6, 4)": (lambda t: t.reshape(6, 4), [None, None]),
    "flatten(1, 2)": (lambda t: t.flatten(1, 2), ["x", None]),
    "unflatten(2, (2, 2))": (lambda t: t.unflatten(2, (2, 2)), ["x", "y", None, "z"]),
    "expand(5, 2, 3, 4)": (lambda t: t.expand(5, 2, 3, 4), [None, "x", "y", "z"]),
    "rot90": (lambda t: t.rot90(1, (0, 1)), ["y", "x", "z"]),
    "narrow": (lambda t: t.narrow(1, 0, 2), ["x", "y", "z"]),
    "split": (lambda t: t.split(1, 1)[0], ["x", "y", "z"]),
    "unbind(1)": (lambda t: t.unbind(1)[0], ["x", "z"]),
    "index [:, 0]": (lambda t: t[:, 0], ["x", "z"]),
    "index by a mask": (lambda t: t[torch.tensor([True, False])], ["x", "y", "z"]),
    "index by a list": (lambda t: t[..., [0, 1]], ["x", "y", "z"]),
    "stack(1)": (lambda t: torch.stack([t, t], 1), ["x", None, "y", "z"]),
    "cat(1)": (lambda t: torch.cat([t, t], 1), ["x", "y", "z"]),
    "sum(1)": (lambda t: t.sum(1), ["x", "z"]),
    "sum((0, 2))": (lambda t: t.sum((0, 2)), ["y"]),
    "amax(1, keepdim=True)": (lambda t: t.amax(1, keepdim=True), ["x", "y", "z"]),
}


@pytest.mark.parametrize("kind", ["dense", "nested", "lazy", "tensorclass"])
@pytest.mark.parametrize("op", sorted(NAMES_AFTER))
def test_row6_names_follow_the_dims_without_the_legacy_mode(kind, op):
    fn, names = NAMES_AFTER[op]
    assert fn(named3(kind)).names == names


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
def test_row6_new_nested_keys_written_through_a_view_persist(kind):
    td = named(kind)
    with set_lazy_legacy(True):
        view = td.unsqueeze(0)
        view["fresh", "leaf"] = torch.ones(1, 3, 4)
        view["nested", "c"] = torch.ones(1, 3, 4, 5)
        permuted = td.permute(1, 0)
        permuted["other", "leaf"] = torch.arange(12.0).view(4, 3)
    assert td["fresh", "leaf"].shape == (3, 4) and (td["fresh", "leaf"] == 1).all()
    assert td["nested", "c"].shape == (3, 4, 5)
    torch.testing.assert_close(td["other", "leaf"], torch.arange(12.0).view(4, 3).T)


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
def test_row6_shallow_clone_keeps_the_view(kind):
    td = named(kind)
    with set_lazy_legacy(True):
        view = td.permute(1, 0)
        shallow = view.clone(recurse=False)
        assert isinstance(storage(shallow), _CustomOpTensorDict)
        assert shallow.batch_size == (4, 3)
        assert shallow["a"].data_ptr() == td["a"].data_ptr()  # the tensors are shared
        shallow["new"] = torch.zeros(4, 3)  # ... the structure is not
        assert "new" not in td.keys()
        assert type(storage(view.clone())) is TensorDict


@pytest.mark.parametrize("kind", ["dense", "nested", "tensorclass"])
@pytest.mark.parametrize(
    "op, hint",
    [
        (lambda v: v.squeeze(0), "to_tensordict"),
        (lambda v: v.unsqueeze(0), "to_tensordict"),
        (lambda v: v.permute(0, 2, 1), "to_tensordict"),
        (lambda v: v.transpose(1, 2), "to_tensordict"),
        (lambda v: v.view(-1), "reshape"),
    ],
)
def test_row6_shape_ops_on_a_view_need_the_legacy_mode(kind, op, hint):
    td = named(kind)
    with set_lazy_legacy(True):
        view = td.unsqueeze(0)
    with pytest.raises(RuntimeError, match=hint):
        op(view)
    # what 0.15.3 densified, still densifies; the dense copy takes any op
    assert type(storage(view.reshape(12))) is TensorDict
    assert storage(view.to_tensordict().squeeze(0)).batch_size == (3, 4)


def test_row4_repeat_in_place_repeats_each_member():
    stack = LazyStackedTensorDict(*members("dense"), stack_dim=0)
    assert stack.repeat(1, 2, 1, inplace=True) is stack
    assert stack.batch_size == (2, 6, 4) and stack.tensordicts[1].get("a").shape == (6, 4, 2)


SAME_SHAPE = {
    "view(3, 4)": lambda t: t.view(3, 4),
    "view(-1, 4)": lambda t: t.view(-1, 4),
    "reshape(3, 4)": lambda t: t.reshape(3, 4),
    "permute(0, 1)": lambda t: t.permute(0, 1),
    "transpose(1, 1)": lambda t: t.transpose(1, 1),
    "squeeze()": lambda t: t.squeeze(),
}


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("kind", ["dense", "nested"])
@pytest.mark.parametrize("op", sorted(SAME_SHAPE))
def test_row6_a_shape_op_that_changes_nothing_returns_the_tensordict(legacy, kind, op):
    td = named(kind)  # batch [3, 4]
    with set_lazy_legacy(legacy):
        assert SAME_SHAPE[op](td) is td  # as 0.15.3, in both modes


def test_row6_nested_tensordicts_share_the_parents_names():
    inner = TensorDict(b=torch.zeros(2, 3, 4), batch_size=[2, 3, 4])
    td = TensorDict(n=inner, batch_size=[2, 3], names=["p", "q"])
    assert td["n"].names == ["p", "q", None]
    assert inner.names == [None, None, None]  # the caller's tensordict is left as it is
    td.names = ["x", "y"]
    assert td["n"].names == ["x", "y", None]
    assert td.unsqueeze(0)["n"].names == [None, "x", "y", None]
    assert td.permute(1, 0)["n"].names == ["y", "x", None]
    assert td[0]["n"].names == ["y", None]
    assert td.sum(0)["n"].names == ["y", None]
    assert td.clone()["n"].names == ["x", "y", None]
    with pytest.raises(RuntimeError, match="'n'"):
        TensorDict(
            n=TensorDict(b=torch.zeros(2), batch_size=[2], names=["z"]), batch_size=[2], names=["x"]
        )
