"""0.15.3's private names that existing code (TorchRL, test suites) reads, and
``tensordict.nn.utils.Buffer``: each exists and says what 0.15.3's says."""

from __future__ import annotations

import sys

import pytest
import torch
from torch import nn

import tensordict
from tensordict import LazyStackedTensorDict, MemoryMappedTensor, NonTensorData, TensorDict
from tensordict.nn import InteractionType, TensorDictModule, TensorDictModuleBase


def test_buffer_in_nn_utils():
    from tensordict.nn.utils import Buffer

    assert Buffer is torch.nn.Buffer
    assert Buffer is tensordict.utils.Buffer


@pytest.mark.parametrize(
    "name, expected",
    [
        ("DETERMINISTIC", InteractionType.DETERMINISTIC),
        ("Mean", InteractionType.MEAN),
        ("mode", InteractionType.MODE),
    ],
)
def test_interaction_type_any_case(name, expected):
    assert InteractionType.from_str(name) is expected
    assert InteractionType(name) is expected
    with tensordict.nn.set_interaction_type(name):
        assert tensordict.nn.interaction_type() is expected


def test_interaction_type_unknown():
    with pytest.raises(ValueError, match=" is not a valid InteractionType"):
        InteractionType.from_str("foo")


def test_is_shared_is_memmap_check_device():
    td = TensorDict(a=torch.zeros(3), b={"c": torch.zeros(3)}, batch_size=[3])
    assert td._is_shared is False and td._is_memmap is False
    td.share_memory_()
    assert td._is_shared and td["b"]._is_shared
    mm = TensorDict(a=torch.zeros(3)).memmap_()
    assert mm._is_memmap
    assert td._check_device() is True
    on_cpu = TensorDict(a=torch.zeros(3), device="cpu")
    assert on_cpu._check_device() is True


def test_lock_parents_weakrefs():
    td = TensorDict({("a", "b"): torch.zeros(1)}, [])
    assert td["a"]._lock_parents_weakrefs == []
    td.lock_()
    assert [ref() for ref in td["a"]._lock_parents_weakrefs] == [td]
    stack = LazyStackedTensorDict(td.clone(), td.clone()).lock_()
    assert [r() for r in stack.tensordicts[0]._lock_parents_weakrefs] == [stack]


def test_memmap_handler_and_has_h5():
    t = MemoryMappedTensor.from_tensor(torch.zeros(10))
    assert t._handler is not None and t[:2]._handler is t._handler
    assert isinstance(tensordict.persistent._has_h5, bool)


def test_module_out_keys_and_select_before_return():
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    assert not module._select_before_return

    class Two(TensorDictModuleBase):
        in_keys = ["a"]
        out_keys = ["b", "c"]

        def forward(self, td):
            td["b"] = td["a"] + 1
            td["c"] = td["a"] + 2
            return td

    two = Two()
    two.select_out_keys("b")
    assert two._select_before_return


def test_pass_through():
    from tensordict.utils import _pass_through

    assert _pass_through(NonTensorData(1)) is True
    assert _pass_through(torch.zeros(1)) is False
    assert _pass_through(TensorDict()) is False


def test_uninitialized_parameters_through_from_module_and_to_module():
    module = nn.Sequential(nn.LazyLinear(4), nn.Linear(4, 2))
    params = TensorDict.from_module(module)
    assert type(params["0", "weight"]).__name__ == "UninitializedParameter"
    assert "UninitializedParameter" in repr(params)
    as_module = TensorDict.from_module(module, as_module=True)
    assert type(as_module["0", "bias"]).__name__ == "UninitializedParameter"
    assert params.apply(lambda x: x)["0", "weight"] is params["0", "weight"]
    other = nn.Sequential(nn.LazyLinear(4), nn.Linear(4, 2))
    with params.to_module(other):
        assert other[0].weight is params["0", "weight"]
    out = other(torch.zeros(5, 3))  # the lazy layer initializes as usual
    assert out.shape == torch.Size([5, 2])


def test_subclass_keeping_its_own_out_keys_store():
    # TorchRL's losses: ``out_keys`` a property over their own ``_out_keys``
    class Loss(TensorDictModuleBase):
        in_keys = ["a"]

        def __init__(self):
            super().__init__()
            self._out_keys = None

        @property
        def out_keys(self):
            if self._out_keys is None:
                self._out_keys = ["loss"]
            return self._out_keys

        @out_keys.setter
        def out_keys(self, value):
            self._out_keys = value

        def forward(self, td):
            return td

    loss = Loss()
    assert loss.out_keys == ["loss"]
    loss.out_keys = ["other"]
    assert loss._out_keys == ["other"]


def test_subclass_with_class_out_keys_and_its_own_out_keys_store():
    # TorchRL's IQLLoss: out_keys a class attribute, and ``self._out_keys = None`` in
    # __init__ for its own use: the two stay apart
    class Loss(TensorDictModuleBase):
        in_keys = ["a"]
        out_keys = ["loss_actor", "loss_value"]

        def __init__(self):
            super().__init__()
            self._out_keys = None

        def forward(self, td):
            return td

    loss = Loss()
    assert loss.out_keys == ["loss_actor", "loss_value"]


def test_new_unsafe_turns_nested_dicts_into_tensordicts():
    # TorchRL's SACLoss builds its target parameters this way, then to_module's them
    td = TensorDict._new_unsafe(
        {"module": {"0": {"w": torch.zeros(3, 2)}}, "x": torch.ones(3)}, [3]
    )
    assert isinstance(td["module"], TensorDict)
    assert td["module", "0"].batch_size == torch.Size([3])
    assert td["module", "0", "w"].shape == torch.Size([3, 2])
    module = nn.Sequential(nn.Linear(2, 2))
    params = TensorDict._new_unsafe(
        {"0": {"weight": torch.zeros(2, 2), "bias": torch.zeros(2)}}, torch.Size([])
    )
    with params.to_module(module):
        assert (module(torch.ones(1, 2)) == 0).all()


def test_non_tensor_dicts_stay_non_tensor_data_through_internal_rebuilds():
    # the library's own rebuilds (clone, indexing, pickling) do not take 0.15.3's
    # _new_unsafe path: a dict stored as non-tensor data stays one
    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    td.set_non_tensor("meta", {"lr": 0.1})
    assert td.clone()["meta"] == {"lr": 0.1}
    assert td[0]["meta"] == {"lr": 0.1}
