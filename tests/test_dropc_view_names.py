"""Views neither take dim names of their own nor run the aliases of the shape ops
they refuse (0.15.3's refusals, in its words)."""

import pytest
import torch

from tensordict import TensorDict, set_lazy_legacy


def _lazy_view():
    with set_lazy_legacy(True):
        return TensorDict(a=torch.zeros(4, 3, 2), batch_size=[4, 3, 2]).unsqueeze(-1)


def test_sub_tensordict_refuses_names():
    source = TensorDict(a=torch.zeros(2, 4, 3), batch_size=[2, 4, 3])
    sub = source._get_sub_tensordict(1)
    with pytest.raises(RuntimeError, match="Names of a subtensordict cannot be modified"):
        sub.refine_names("a", "b")
    with pytest.raises(RuntimeError, match="Names of a subtensordict cannot be modified"):
        sub.names = ["a", "b"]
    assert sub.names == [None, None]
    assert source.names == [None, None, None]


def test_lazy_view_refuses_names():
    view = _lazy_view()
    with pytest.raises(RuntimeError, match="Names of a lazy tensordict cannot be modified"):
        view.rename_("a", "b", "c", "d")
    assert view.names == [None] * 4


def test_lazy_view_names_follow_the_source():
    source = TensorDict(a=torch.zeros(4, 3), batch_size=[4, 3], names=["x", "y"])
    with set_lazy_legacy(True):
        view = source.unsqueeze(0)
    assert view.names == [None, "x", "y"]


@pytest.mark.parametrize(
    "call,phrase",
    [
        (lambda v: v.swapaxes(0, 1), "transpose"),
        (lambda v: v.swapdims(0, 1), "transpose"),
        (lambda v: v.movedim(0, 1), "permute"),
        (lambda v: v.moveaxis(0, 1), "permute"),
    ],
)
def test_lazy_view_refuses_shape_aliases(call, phrase):
    view = _lazy_view()
    with pytest.raises(RuntimeError, match=f"Cannot call `{phrase}`.*Make it dense"):
        call(view)
