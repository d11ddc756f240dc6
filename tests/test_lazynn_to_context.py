"""``with td.to(...) as moved:`` writes what the block wrote back into ``td``:
existing entries in place (their device and dtype kept), new entries added."""

import torch

from tensordict import TensorClass, TensorDict


def test_to_as_a_context_manager_writes_back():
    td = TensorDict(
        x=torch.zeros(3), n=TensorDict(z=torch.zeros(3), batch_size=[3]), batch_size=[3]
    )
    x = td["x"]
    with td.to(torch.float64) as moved:
        assert moved["x"].dtype == torch.float64
        moved["x"] = moved["x"] + 5
        moved["n", "w"] = moved["n", "z"] + 1
        moved["y"] = moved["x"] + 1
    assert td["x"] is x and td["x"].dtype == torch.float32
    assert (td["x"] == 5).all()
    assert (td["y"] == 6).all()
    assert (td["n", "w"] == 1).all()


def test_to_a_device_as_a_context_manager_of_a_tensorclass():
    class Pair(TensorClass):
        x: torch.Tensor
        y: torch.Tensor | None = None

    pair = Pair.from_tensordict(TensorDict(x=torch.zeros(3), batch_size=[3]))
    with pair.to("cpu") as moved:
        moved.y = moved.x + 1
    assert (pair.y == 1).all()
    assert pair.y.device == torch.device("cpu")
