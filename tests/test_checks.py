"""``tensordict.utils._check_recursive_properties``: the tree validator that code written
for 0.15.3 (its test helpers) runs on every tensordict it builds."""

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass
from tensordict.utils import _check_recursive_properties


@tensorclass
class _Frame:
    obs: torch.Tensor
    label: str


def test_consistent_trees_pass_non_tensor_data_included() -> None:
    td = TensorDict(a=torch.ones(3, 2), n={"b": torch.zeros(3)}, s="text", batch_size=[3])
    assert _check_recursive_properties(td)
    frame = _Frame(obs=torch.ones(3, 2), label="x", batch_size=[3])
    holder = TensorDict(frame=frame, batch_size=[3])
    assert _check_recursive_properties(holder)
    lazy = LazyStackedTensorDict.lazy_stack([td, td.clone()], 0)
    assert _check_recursive_properties(lazy)


def test_an_inconsistent_tree_is_reported_with_the_key() -> None:
    td = TensorDict(a=torch.ones(3, 2), batch_size=[3])
    td._tensordict["bad"] = torch.ones(4)  # past the validation a write would do
    with pytest.raises(Exception, match="'bad'"):
        _check_recursive_properties(td)
    assert _check_recursive_properties(td, raise_exception=False) is False
