"""Behaviour on a GPU: moving between host and device, pinned memory, streams,
consolidated and memory-mapped data, stacking and indexing on the device, CUDA graphs,
torch.compile and ``map``.

CI has no GPU: every test here is skipped there (the module's ``pytestmark``).
``scripts/gpu_check.sh`` runs them, with the rest of the suite and the GPU benchmark,
on a machine with one.
"""

from __future__ import annotations

import pytest
import torch

from tensordict import (
    LazyStackedTensorDict,
    MemoryMappedTensor,
    TensorDict,
    tensorclass,
)
from tensordict._transfer import STAGE_LEAF_BYTES

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

DEV = torch.device("cuda", 0)


def _mixed(n: int = 12) -> TensorDict:
    """Small leaves of several dtypes, a nested level, non-tensor data and one leaf
    large enough to move on its own (above the staging size)."""
    gen = torch.Generator().manual_seed(0)
    big_rows = STAGE_LEAF_BYTES // (4 * 8) + 1
    return TensorDict(
        {
            **{f"f{i}": torch.randn(8, 3, generator=gen) for i in range(n)},
            "i": torch.arange(8 * 2).view(8, 2),
            "b": torch.rand(8, generator=gen) > 0.5,
            "h": torch.randn(8, 5, generator=gen).half(),
            "nested": {"x": torch.randn(8, 4, generator=gen), "s": "text"},
            "big": torch.randn(8, big_rows, 8, generator=gen),
            "label": "hello",
        },
        batch_size=[8],
    )


def _assert_same(got: TensorDict, want: TensorDict, device) -> None:
    assert set(got.keys(True, True)) == set(want.keys(True, True))
    for key in want.keys(True, True, is_leaf=lambda c: isinstance(c, torch.Tensor)):
        value = got.get(key)
        if isinstance(value, torch.Tensor):
            assert value.device == device, key
            torch.testing.assert_close(value.cpu(), want.get(key).cpu(), msg=str(key))
    assert got["label"] == "hello" and got["nested", "s"] == "text"


@pytest.mark.parametrize("non_blocking", [False, True])
def test_to_cuda_and_back(non_blocking: bool) -> None:
    td = _mixed()
    on_gpu = td.to(DEV, non_blocking=non_blocking)
    if non_blocking:
        torch.cuda.synchronize()
    assert on_gpu.device == DEV and on_gpu["nested"].device == DEV
    _assert_same(on_gpu, td, DEV)
    back = on_gpu.to("cpu", non_blocking=non_blocking)
    if non_blocking:
        torch.cuda.synchronize()
    assert back.device == torch.device("cpu")
    _assert_same(back, td, torch.device("cpu"))


def test_values_written_on_the_gpu_are_read_right_after_to_cpu() -> None:
    """No unsynchronised read: the copy back waits for the queued GPU work."""
    on_gpu = _mixed().to(DEV)
    expected = {}
    for key in ("f0", "f5", "big"):
        x = on_gpu[key]
        for _ in range(50):  # a queue of kernels still running when to() is called
            x.mul_(1.01).add_(0.5)
    for key in ("f0", "f5", "big"):
        expected[key] = on_gpu[key].clone()
    on_gpu["i"].add_(7)
    back = on_gpu.to("cpu")  # read at once, no synchronize
    for key, value in expected.items():
        assert torch.equal(back[key], value.cpu()), key
    assert torch.equal(back["i"], torch.arange(16).view(8, 2) + 7)


def test_the_source_may_change_right_after_to_cuda() -> None:
    td = _mixed()
    before = td.clone()
    on_gpu = td.to(DEV)
    td.apply_(lambda x: x.zero_() if x.dtype != torch.bool else x)
    _assert_same(on_gpu, before, DEV)


def test_moved_leaves_are_independent() -> None:
    on_gpu = _mixed().to(DEV)
    kept = on_gpu["f1"].clone()
    on_gpu["f0"].fill_(123.0)
    assert torch.equal(on_gpu["f1"], kept)
    back = on_gpu.to("cpu")
    back["f2"].fill_(5.0)
    assert not torch.equal(back["f1"], back["f2"])


def test_leaves_that_require_grad_keep_their_history() -> None:
    td = TensorDict(
        {f"w{i}": torch.randn(4, 3, requires_grad=True) for i in range(4)}, batch_size=[4]
    )
    on_gpu = td.to(DEV)
    assert all(v.grad_fn is not None for v in on_gpu.values())
    sum(v.sum() for v in on_gpu.values()).backward()
    assert all(torch.equal(v.grad, torch.ones(4, 3)) for v in td.values())


def test_device_and_dtype_together_and_the_cuda_method() -> None:
    td = _mixed()
    cast = td.to(DEV, torch.float64)
    assert cast.device == DEV and cast["f0"].dtype == torch.float64 and cast["i"].dtype == torch.float64
    assert td.cuda().device == DEV and td.cuda(0).device == DEV
    assert td.cuda(non_blocking=True)["f3"].is_cuda


def test_non_blocking_pin_and_num_threads_are_accepted() -> None:
    td = _mixed()
    on_gpu = td.to(DEV, non_blocking_pin=True, num_threads=4)
    torch.cuda.synchronize()
    _assert_same(on_gpu, td, DEV)


def test_inplace_moves_the_tensordict_itself() -> None:
    td = _mixed()
    expected = td.clone()
    assert td.to(DEV, inplace=True) is td
    assert td.device == DEV
    _assert_same(td, expected, DEV)
    consolidated = expected.consolidate()  # locked, as consolidate() returns it
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        consolidated.to(DEV, inplace=True)
    assert consolidated.device != DEV and consolidated.is_consolidated()


def test_a_lazy_stack_and_a_tensorclass_move_too() -> None:
    lazy = LazyStackedTensorDict.lazy_stack([_mixed(), _mixed()], 0)
    on_gpu = lazy.to(DEV)
    assert isinstance(on_gpu, LazyStackedTensorDict) and on_gpu.device == DEV
    assert torch.equal(on_gpu.tensordicts[1]["f3"].cpu(), lazy.tensordicts[1]["f3"])

    @tensorclass
    class Batch:
        obs: torch.Tensor
        reward: torch.Tensor

    batch = Batch(obs=torch.randn(6, 3), reward=torch.randn(6), batch_size=[6])
    moved = batch.to(DEV)
    assert isinstance(moved, Batch) and moved.obs.is_cuda and moved.device == DEV
    assert torch.equal(moved.to("cpu").reward, batch.reward)


def test_pin_memory() -> None:
    td = _mixed()
    pinned = td.pin_memory()
    assert all(v.is_pinned() for v in pinned.values(True, True) if isinstance(v, torch.Tensor))
    assert not td["f0"].is_pinned()
    assert td.pin_memory(inplace=True) is td and td["f0"].is_pinned()
    other = _mixed()
    assert other.pin_memory_() is other and other["nested", "x"].is_pinned()


def test_pin_memory_of_a_view_or_a_persistent_tensordict_raises(tmp_path) -> None:
    td = _mixed()
    with pytest.raises(RuntimeError, match="Cannot pin memory"):
        td._get_sub_tensordict(0).pin_memory()
    h5py = pytest.importorskip("h5py")  # noqa: F841
    from tensordict import PersistentTensorDict

    persistent = PersistentTensorDict.from_dict(
        TensorDict(a=torch.ones(3), batch_size=[3]), tmp_path / "x.h5"
    )
    with pytest.raises(RuntimeError, match="Cannot pin memory"):
        persistent.pin_memory()


def test_record_stream() -> None:
    on_gpu = _mixed().to(DEV)
    stream = torch.cuda.Stream()
    assert on_gpu.record_stream(stream) is on_gpu
    with pytest.raises((RuntimeError, NotImplementedError)):
        _mixed().record_stream(stream)  # host memory: torch refuses, as for a tensor


def test_consolidated_moves_as_one_block_and_stays_consolidated() -> None:
    td = _mixed()
    consolidated = td.consolidate(pin_memory=True)
    on_gpu = consolidated.to(DEV, non_blocking=True)
    torch.cuda.synchronize()
    assert on_gpu.is_consolidated() and on_gpu.device == DEV
    storages = {v.untyped_storage().data_ptr() for v in on_gpu.values(True, True) if isinstance(v, torch.Tensor)}
    assert len(storages) == 1
    _assert_same(on_gpu, td, DEV)
    back = on_gpu.to("cpu")
    assert back.is_consolidated()
    _assert_same(back, td, torch.device("cpu"))
    on_device = td.consolidate(device=DEV)
    assert on_device.is_consolidated() and on_device["f0"].is_cuda


def test_memory_mapped_data_to_the_gpu(tmp_path) -> None:
    td = _mixed().exclude("label", ("nested", "s"))
    mapped = td.memmap(tmp_path / "td")
    on_gpu = mapped.to(DEV)
    assert on_gpu.device == DEV
    for key in td.keys(True, True):
        assert torch.equal(on_gpu[key].cpu(), td[key]), key
    tensor = MemoryMappedTensor.from_tensor(torch.arange(10.0), filename=tmp_path / "t.memmap")
    assert torch.equal(tensor.cuda().cpu(), torch.arange(10.0))


def test_hdf5_data_to_the_gpu(tmp_path) -> None:
    pytest.importorskip("h5py")
    from tensordict import PersistentTensorDict

    data = TensorDict(a=torch.randn(4, 3), n={"b": torch.arange(4)}, batch_size=[4])
    persistent = PersistentTensorDict.from_dict(data, tmp_path / "d.h5")
    on_gpu = persistent.to(DEV)
    assert on_gpu["a"].is_cuda and torch.equal(on_gpu["n", "b"].cpu(), data["n", "b"])


def test_stack_cat_and_index_on_the_gpu() -> None:
    parts = [_mixed().exclude("big") for _ in range(3)]
    on_gpu = [p.to(DEV) for p in parts]
    stacked = torch.stack(on_gpu, 0)
    assert stacked.device == DEV and stacked.batch_size == (3, 8)
    assert torch.equal(stacked["f4"].cpu(), torch.stack([p["f4"] for p in parts], 0))
    joined = torch.cat(on_gpu, 0)
    assert joined.batch_size == (24,) and joined["i"].is_cuda
    index = torch.tensor([5, 0, 2], device=DEV)
    rows = on_gpu[0][index]
    assert rows["f0"].is_cuda and torch.equal(rows["f0"].cpu(), parts[0]["f0"][[5, 0, 2]])
    mask = on_gpu[0]["b"]
    assert torch.equal(on_gpu[0][mask]["f1"].cpu(), parts[0]["f1"][parts[0]["b"]])
    on_gpu[0][index] = on_gpu[1][index]
    assert torch.equal(on_gpu[0]["f2"][index], on_gpu[1]["f2"][index])


def test_share_memory_of_gpu_data_keeps_it_and_locks() -> None:
    """CUDA memory is shared between processes by CUDA itself: nothing moves."""
    on_gpu = _mixed().exclude("label", ("nested", "s")).to(DEV)
    pointer = on_gpu["f0"].data_ptr()
    assert on_gpu.share_memory_() is on_gpu
    assert on_gpu.is_locked and on_gpu["f0"].data_ptr() == pointer and on_gpu["f0"].is_cuda


def test_cuda_graph_module_captures_and_replays() -> None:
    from tensordict.nn import CudaGraphModule, TensorDictModule

    linear = torch.nn.Linear(3, 4, device=DEV)
    module = TensorDictModule(linear, in_keys=["x"], out_keys=["y"])
    graphed = CudaGraphModule(module, warmup=2)
    for step in range(5):
        td = TensorDict(x=torch.randn(6, 3, device=DEV), batch_size=[6], device=DEV)
        out = graphed(td.clone())
        torch.testing.assert_close(out["y"], linear(td["x"]), msg=f"call {step}")


def test_compile_on_gpu_tensordicts() -> None:
    def step(td):
        return (td * 2 + 1).sum(0)

    td = TensorDict(a=torch.randn(4, 3, device=DEV), n={"b": torch.randn(4, device=DEV)},
                    batch_size=[4], device=DEV)
    compiled = torch.compile(step, fullgraph=True)
    out = compiled(td)
    assert out.device == DEV
    torch.testing.assert_close(out["a"], step(td)["a"])
    torch.testing.assert_close(out["n", "b"], step(td)["n", "b"])


def _to_gpu_and_double(chunk):
    return (chunk.to("cuda:0") * 2).to("cpu")


def test_map_with_gpu_work_in_the_workers() -> None:
    td = TensorDict(a=torch.arange(8.0), batch_size=[8])
    out = td.map(_to_gpu_and_double, num_workers=2, chunksize=4, mp_start_method="spawn")
    assert torch.equal(out["a"], torch.arange(8.0) * 2)


def test_memory_mapped_tensors_stay_on_the_host(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="Only CPU tensors are supported"):
        MemoryMappedTensor.zeros(3, 4, device=DEV)
    from_gpu = MemoryMappedTensor.from_tensor(torch.arange(6.0, device=DEV), filename=tmp_path / "g.memmap")
    assert from_gpu.device == torch.device("cpu") and torch.equal(from_gpu, torch.arange(6.0))
    like = MemoryMappedTensor.zeros_like(torch.ones(2, 3, device=DEV))
    assert like.device == torch.device("cpu") and like.shape == (2, 3)


def test_consolidate_into_a_file_then_onto_the_gpu(tmp_path) -> None:
    td = _mixed().exclude("big")
    on_gpu = td.consolidate(filename=tmp_path / "td.bin", device=DEV)
    assert on_gpu.device == DEV and on_gpu.is_consolidated()
    _assert_same(on_gpu, td, DEV)
    from tensordict import TensorDict as TD

    _assert_same(TD.from_consolidated(tmp_path / "td.bin"), td, torch.device("cpu"))


def test_operands_on_the_host_and_the_gpu_raise_naming_a_key() -> None:
    here = TensorDict(obs=torch.ones(2), batch_size=[2], device="cpu")
    there = here.to(DEV)
    for call in (lambda: here + there, lambda: torch.stack([here, there]), lambda: torch.cat([there, here])):
        with pytest.raises(RuntimeError, match="same device: the entry 'obs'"):
            call()
    here.update_(there)  # copying across devices is allowed, as Tensor.copy_ does
