"""CPU-side parts of the GPU work: what ``to`` accepts, when it stages leaves
(``tensordict/_transfer.py``; the staged copies themselves need a GPU:
tests/test_cuda.py), and the error a stack of mismatched dense tensordicts raises."""

import pytest
import torch

from tensordict import TensorDict
from tensordict._transfer import staged_leaves


def test_to_accepts_0153s_staging_keywords() -> None:
    td = TensorDict(a=torch.ones(3), batch_size=[3], device="cpu")
    assert td.to("cpu", non_blocking_pin=True, num_threads=4) is td
    moved = td.to(torch.float64, non_blocking_pin=True)
    assert moved["a"].dtype == torch.float64
    with pytest.raises(TypeError, match="unexpected keyword"):
        td.to("cpu", pin_threads=2)


def test_only_moves_between_the_host_and_a_gpu_are_staged() -> None:
    leaves = [torch.ones(3), torch.zeros(2)]
    assert staged_leaves(leaves, torch.device("cpu"), False) is None
    assert staged_leaves(leaves, torch.device("meta"), False) is None
    grads = [torch.ones(3, requires_grad=True), torch.ones(2)]
    assert staged_leaves(grads, torch.device("cuda"), False) is None  # keeps history
    assert staged_leaves([torch.ones(3)], torch.device("cuda"), False) is None


@pytest.mark.parametrize(
    "other, kind",
    [
        (TensorDict(x={"y": torch.ones(2)}, batch_size=[2]), "TensorDict"),
        (TensorDict(x="text", batch_size=[2]), "str"),
    ],
)
def test_stacking_a_tensor_with_another_kind_of_entry_names_the_key(other, kind) -> None:
    first = TensorDict(x=torch.ones(2), batch_size=[2])
    with pytest.raises(TypeError, match=f"the entry 'x' is a tensor in tensordict 0 but a {kind} in tensordict 1"):
        torch.stack([first, other])
    nested = TensorDict(n={"x": torch.ones(2)}, batch_size=[2])
    wrong = TensorDict(n={"x": other["x"]}, batch_size=[2])
    with pytest.raises(TypeError, match=r"the entry \('n', 'x'\) is a tensor"):
        torch.stack([nested, wrong])


def test_a_memory_mapped_tensor_refuses_another_device_as_0153_does() -> None:
    from tensordict import MemoryMappedTensor

    for make in (MemoryMappedTensor.zeros, MemoryMappedTensor.ones, MemoryMappedTensor.empty):
        with pytest.raises(RuntimeError, match="Only CPU tensors are supported"):
            make(3, device="meta")
        with pytest.raises(ValueError, match="lives on the CPU"):
            make(3, device="meta")


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: a + b,
        lambda a, b: a.mul_(b),
        lambda a, b: a.where(torch.ones(2, dtype=torch.bool), b),
        lambda a, b: torch.stack([a, b]),
        lambda a, b: torch.cat([a, b]),
    ],
)
def test_operands_on_different_devices_raise_naming_a_key(call) -> None:
    # "meta" stands for a GPU: tests/test_cuda.py runs the same with CUDA
    here = TensorDict(obs=torch.ones(2), batch_size=[2], device="cpu")
    there = TensorDict(obs=torch.ones(2, device="meta"), batch_size=[2], device="meta")
    with pytest.raises(RuntimeError, match="same device: the entry 'obs'"):
        call(here, there)


def test_pinning_a_sub_tensordict_or_an_h5_tensordict_is_refused_as_0153(tmp_path) -> None:
    # refused before any pinning happens, so this holds without a GPU too
    td = TensorDict(a=torch.ones(3, 2), batch_size=[3])
    sub = td._get_sub_tensordict(0)
    for call in (sub.pin_memory, sub.pin_memory_):
        with pytest.raises(RuntimeError, match="Cannot pin memory of a _SubTensorDict"):
            call()
    pytest.importorskip("h5py")
    from tensordict import PersistentTensorDict

    h5 = PersistentTensorDict.from_dict(td, tmp_path / "x.h5")
    with pytest.raises(RuntimeError, match="Cannot pin memory of a PersistentTensorDict"):
        h5.pin_memory()
