"""What TorchRL's environments rely on when they skip or reset part of a batch.

A skipped step copies the previous values, non-tensor ones included, through
``_fast_apply(..., is_leaf=_is_leaf_nontensor)``; a partial reset merges the reset
values with ``where(~reset, other=reset_td, out=node)`` into a tensordict whose
tensors a rollout has already stored, so ``where(out=)`` must not write into them.
"""

import torch

from tensordict import NonTensorData, TensorDict
from tensordict._compat import _is_leaf_nontensor


def _copy_like(name, x, y):
    # TorchRL's select-and-clone: a value only where the template has one
    if y is not None:
        assert x.device == y.device
        return x.clone()


def test_fast_apply_is_leaf_gives_non_tensor_entries_to_fn():
    source = TensorDict(obs=torch.ones(2), label=NonTensorData("current"))
    template = TensorDict(obs=torch.zeros(2), label=NonTensorData("placeholder"))
    seen = set()

    def fn(name, x, y):
        seen.add(name)
        return _copy_like(name, x, y)

    out = source._fast_apply(
        fn,
        template,
        default=None,
        filter_empty=True,
        is_leaf=_is_leaf_nontensor,
        named=True,
        nested_keys=True,
    )
    assert seen == {"obs", "label"}
    assert out["label"] == "current"
    assert out["obs"].tolist() == [1.0, 1.0]


def test_fast_apply_is_leaf_other_entries_are_non_tensor_data_too():
    source = TensorDict(
        sub=TensorDict(label=NonTensorData("x"), v=torch.zeros(3), batch_size=[3]),
        batch_size=[3],
    )
    template = source.clone()
    got = []

    def fn(x, y):
        got.append((type(x).__name__, type(y).__name__))
        return x

    source._fast_apply(fn, template, is_leaf=_is_leaf_nontensor, default=None)
    assert ("NonTensorData", "NonTensorData") in got


def test_fast_apply_is_leaf_missing_in_other_reads_default():
    source = TensorDict(obs=torch.ones(2), label=NonTensorData("current"))
    template = TensorDict(obs=torch.zeros(2))
    out = source._fast_apply(
        _copy_like,
        template,
        default=None,
        filter_empty=True,
        is_leaf=_is_leaf_nontensor,
        named=True,
    )
    assert "label" not in out.keys()


def test_where_out_replaces_tensors_without_writing_into_them():
    stored = torch.arange(4.0)
    node = TensorDict(obs=stored, batch_size=[4])
    reset_td = TensorDict(
        obs=torch.full((4,), -1.0), extra=torch.ones(4), batch_size=[4]
    )
    keep = torch.tensor([True, False, True, True])
    result = node.where(keep, other=reset_td, out=node, pad=0)
    assert result is node
    assert stored.tolist() == [0.0, 1.0, 2.0, 3.0]  # what a rollout kept is intact
    assert node["obs"].tolist() == [0.0, -1.0, 2.0, 3.0]
    assert node["extra"].tolist() == [0.0, 1.0, 0.0, 0.0]  # created, padded


def test_where_out_with_a_number_or_tensor_replaces_too():
    td = TensorDict(x=torch.arange(4.0), batch_size=[4])
    cond = torch.tensor([True, False, True, True])
    for other in (-1.0, torch.tensor(-1.0)):
        held = torch.zeros(4)
        out = TensorDict(x=held, n=torch.ones(4), batch_size=[4])
        assert td.where(cond, other, out=out) is out
        assert held.tolist() == [0.0, 0.0, 0.0, 0.0]
        assert out["x"].tolist() == [0.0, -1.0, 2.0, 3.0]
        assert out["n"].tolist() == [1.0, 1.0, 1.0, 1.0]  # only out's own key


def test_where_out_nested():
    held = torch.zeros(4)
    out = TensorDict(sub=TensorDict(y=held, batch_size=[4]), batch_size=[4])
    td = TensorDict(sub=TensorDict(y=torch.arange(4.0), batch_size=[4]), batch_size=[4])
    td.where(torch.tensor([True, False, True, True]), td * 2, out=out)
    assert held.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert out["sub", "y"].tolist() == [0.0, 2.0, 2.0, 3.0]


def test_where_out_takes_results_that_require_grad():
    # TorchRL's ConsistentDropout primer resets a rollout's masks this way, with grad on
    x = torch.randn(3, requires_grad=True)
    td = TensorDict(a=x * 2, batch_size=[3])
    out = TensorDict(a=torch.zeros(3), batch_size=[3])
    cond = torch.tensor([True, False, True])
    for other in (td.detach() + 1, torch.tensor(1.0), 2):
        assert td.where(cond, other, out=out) is out
        assert out["a"].requires_grad
