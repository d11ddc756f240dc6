"""Walking the keys of a lazy stack reads no stacked values: heterogeneous members
(TorchRL's heterogeneous environments) list their keys, and ``is_leaf`` sees a
non-tensor entry as ``NonTensorData`` on a lazy stack as on a TensorDict."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, NonTensorData, TensorDict
from tensordict.base import _default_is_leaf, _is_leaf_nontensor


def _heterogeneous():
    a = LazyStackedTensorDict.lazy_stack(
        [TensorDict(action=torch.zeros(3)), TensorDict(action=torch.zeros(2))]
    )
    b = LazyStackedTensorDict.lazy_stack(
        [TensorDict(action=torch.zeros(2)), TensorDict(action=torch.zeros(2))]
    )
    return LazyStackedTensorDict.lazy_stack(
        [TensorDict(n=a, batch_size=[2]), TensorDict(n=b, batch_size=[2])]
    )


def test_keys_of_nested_heterogeneous_stacks():
    td = _heterogeneous()
    assert set(td.keys(True, True)) == {("n", "action")}
    assert set(td.keys(True)) == {"n", ("n", "action")}
    assert ("n", "action") in td.keys(True, True)
    # reading the value still refuses to stack the ragged leaves
    with pytest.raises(RuntimeError, match="as_list=True"):
        td.get(("n", "action"))


@pytest.mark.parametrize("stack_dim", [0, -1])
def test_is_leaf_sees_non_tensor_entries_as_on_a_tensordict(stack_dim):
    td = TensorDict(
        a=torch.zeros(3), s=NonTensorData("x", batch_size=[3]), batch_size=[3]
    )
    lazy = LazyStackedTensorDict.lazy_stack([td.clone(), td.clone()], stack_dim)
    for kind in (td, lazy):
        assert set(kind.keys(True, True, is_leaf=_default_is_leaf)) == {"a"}
        assert set(kind.keys(True, True, is_leaf=_is_leaf_nontensor)) == {"a", "s"}
