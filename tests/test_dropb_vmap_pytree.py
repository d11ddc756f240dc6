"""vmap and pytree round trips of lazy stacks keep them lazy (0.15.3's behaviour)."""

import pytest
import torch
from torch.utils._pytree import tree_map

from tensordict import LazyStackedTensorDict, TensorDict


@pytest.mark.parametrize("stack_dim", [0, 1])
@pytest.mark.parametrize("out_dim", [0, 1])
@pytest.mark.parametrize("key", ["a", ("a", "b")])
def test_vmap_over_the_stack_dim_returns_a_lazy_stack(stack_dim, out_dim, key):
    x = LazyStackedTensorDict.lazy_stack(
        [TensorDict({key: [1.0]}, [1]), TensorDict({key: [1.0]}, [1])], stack_dim
    )
    y = LazyStackedTensorDict.lazy_stack(
        [TensorDict({key: [2.0]}, [1]), TensorDict({key: [2.0]}, [1])], stack_dim
    )

    def add(x, y):
        return x.set(key, x.get(key) + y.get(key))

    out = torch.vmap(add, (stack_dim, stack_dim), (out_dim,))(x, y)
    assert isinstance(out, LazyStackedTensorDict)
    assert out.stack_dim == out_dim
    assert out.shape[out_dim] == 2
    assert (out[key] == 3).all()
    # the caller's stack is not written
    assert (x[key] == 1).all()


def test_vmap_over_the_stack_dim_a_new_tensordict_is_dense():
    x = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.ones(3)), TensorDict(a=torch.zeros(3))], 0
    )
    out = torch.vmap(lambda t: t.apply(lambda v: v + 1))(x)
    assert type(out) is TensorDict
    assert (out["a"] == torch.tensor([[2.0] * 3, [1.0] * 3])).all()


def test_vmap_over_the_stack_dim_of_a_locked_stack_returns_it_locked():
    x = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.ones(3)), TensorDict(a=torch.zeros(3))], 0
    ).lock_()
    out = torch.vmap(lambda t: t)(x)
    assert isinstance(out, LazyStackedTensorDict) and out.is_locked


def test_unsqueeze_then_squeeze_keeps_non_tensor_data():
    td = TensorDict({"a": torch.zeros(3), "f": "a string"}, [])
    back = td.unsqueeze(0).squeeze(0)
    assert back.batch_size == torch.Size([])
    assert back["f"] == "a string"


def test_tree_map_of_a_heterogeneous_lazy_stack_with_strings():
    td0 = TensorDict(
        {"a": torch.zeros(3), "b": torch.zeros(4), "c": {"d": 0, "e": "x"}, "f": "y"}
    )
    td1 = TensorDict(
        {"b": torch.zeros(5), "c": {"d": 0, "e": "x"}, "f": "y", "a": torch.zeros(3)}
    )
    td = TensorDict.lazy_stack([td0, td1])
    out = tree_map(lambda x: x + 1, td)
    assert isinstance(out, LazyStackedTensorDict)
    assert (out == td + 1).all()
    assert out[0]["f"] == "y" and out[1]["c", "e"] == "x"
    del td0["a"]  # exclusive keys
    out = tree_map(lambda x: x + 1, td)
    assert (out == td + 1).all()
