"""``TensorDictModuleBase._out_keys`` for subclasses that set ``out_keys`` as a class
attribute, as 0.15.3 has it, without taking the name from subclasses that keep their
own ``_out_keys``."""

import torch

from tensordict import TensorDict
from tensordict.nn import TensorDictModuleBase


class _Adds(TensorDictModuleBase):
    in_keys = ["a", "b"]
    out_keys = ["c", "d", "e"]

    def forward(self, tensordict):
        tensordict["c"] = tensordict["a"] + 2
        tensordict["d"] = tensordict["b"] + 2
        tensordict["e"] = tensordict["d"] + 2
        return tensordict


def test_class_out_keys_are_also_private_out_keys():
    for _ in range(2):  # a second instance sees the same
        module = _Adds()
        assert module.out_keys is module._out_keys
        td = module(TensorDict(a=torch.zeros(()), b=torch.ones(())))
        assert set(td.keys()) == {"a", "b", "c", "d", "e"}


def test_private_out_keys_keep_every_key_after_select_out_keys():
    module = _Adds()
    module.select_out_keys("d")
    assert module.out_keys == ["d"]
    assert module._out_keys == ["c", "d", "e"]
    td = module(TensorDict(a=torch.zeros(()), b=torch.ones(())))
    assert set(td.keys()) == {"a", "b", "d"}
    module.reset_out_keys()
    assert module.out_keys == ["c", "d", "e"]


def test_instance_private_out_keys_leave_out_keys_alone():
    # TorchRL's IQLLoss: out_keys a class list, ``self._out_keys = None`` for its use
    class Loss(_Adds):
        out_keys = ["loss_actor", "loss_value"]

        def __init__(self):
            super().__init__()
            self._out_keys = None

    loss = Loss()
    assert loss._out_keys is None
    assert loss.out_keys == ["loss_actor", "loss_value"]
    assert Loss._out_keys == ["loss_actor", "loss_value"]


def test_out_keys_property_subclass_keeps_its_store():
    class Loss(TensorDictModuleBase):
        in_keys = ["a"]

        def __init__(self):
            super().__init__()
            self._out_keys = None

        @property
        def out_keys(self):
            return self._out_keys or ["loss"]

        @out_keys.setter
        def out_keys(self, value):
            self._out_keys = value

        def forward(self, td):
            return td

    loss = Loss()
    assert loss.out_keys == ["loss"]
    loss.out_keys = ["other"]
    assert loss._out_keys == ["other"]
