"""Where anonymous memory-mapped tensors live (issue 30), and return_early's split.

Anonymous memory (``memmap()`` / ``MemoryMappedTensor`` without a file name) lives in
shared memory (``/dev/shm``) when the tensor fits there, and in an unnamed file in the
temporary folder when it does not (``docs/persistence.md``).
"""

import errno
import os
import pickle
import sys
import tempfile

import pytest
import torch

import tensordict  # noqa: F401
from tensordict import MemoryMappedTensor, TensorDict

mm = sys.modules["tensordict.memmap"]

needs_shm = pytest.mark.skipif(
    not os.path.isdir("/dev/shm") or not os.path.isdir("/proc/self/fd"),
    reason="no /dev/shm here",
)


def _where(t: MemoryMappedTensor) -> str:
    return os.readlink(f"/proc/self/fd/{t._handle.fd}")


@needs_shm
def test_an_anonymous_tensor_that_fits_lives_in_shared_memory():
    t = MemoryMappedTensor.from_tensor(torch.arange(1000.0))
    assert t._handle.in_shared_memory
    assert _where(t).startswith("/dev/shm/")
    assert torch.equal(t, torch.arange(1000.0))
    z = MemoryMappedTensor.zeros(10, 10)
    assert z._handle.in_shared_memory and z.sum() == 0


@needs_shm
def test_an_anonymous_tensor_larger_than_the_limit_goes_to_the_disk(monkeypatch):
    monkeypatch.setattr(mm, "SHARED_MEMORY_LIMIT", 1024)
    small = MemoryMappedTensor.from_tensor(torch.ones(16))  # 64 bytes: fits
    big = MemoryMappedTensor.from_tensor(torch.arange(10_000.0))  # 40 kB: does not
    assert small._handle.in_shared_memory
    assert not big._handle.in_shared_memory
    assert _where(big).startswith(os.path.realpath(tempfile.gettempdir()))
    assert torch.equal(big, torch.arange(10_000.0))
    big[5] = -1.0  # written through the mapping
    assert big[5].item() == -1.0
    empty = MemoryMappedTensor.empty(100, 100)
    assert not empty._handle.in_shared_memory
    empty.fill_(3.0)
    assert empty.sum().item() == 30_000.0
    # a tensordict's anonymous save, threads or not, with leaves of both kinds
    td = TensorDict(
        a=torch.arange(10_000.0).view(100, 100), b=torch.ones(100, 2), batch_size=[100]
    )
    for threads in (0, 4):
        out = td.memmap(num_threads=threads)
        assert out.is_memmap() and out.saved_path is None
        assert not out["a"]._handle.in_shared_memory
        assert out["b"]._handle.in_shared_memory
        assert (out == td).all()
    # sent to another process's view of it: pickled through multiprocessing as a
    # file descriptor (here: the same process, through the reduction)
    again = pickle.loads(pickle.dumps(big))
    assert torch.equal(again, big)


@needs_shm
def test_a_full_shared_memory_sends_the_tensor_to_the_disk(monkeypatch):
    """Shared memory that fills up between the check and the write (ENOSPC) sends
    the tensor to the disk, never a torn tensor or a later SIGBUS."""
    real = mm._write_tensor_to_fd
    calls = []

    def full_once(fd, data):
        calls.append(os.readlink(f"/proc/self/fd/{fd}"))
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(mm, "_write_tensor_to_fd", full_once)
    t = MemoryMappedTensor.from_tensor(torch.arange(100.0))
    assert calls[0].startswith("/dev/shm/") and not calls[1].startswith("/dev/shm/")
    assert not t._handle.in_shared_memory
    assert torch.equal(t, torch.arange(100.0))


def test_return_early_lays_the_tree_out_in_the_call(tmp_path):
    """A return_early save checks the target and creates its folders and metadata in
    the call; the data is written, and the folder put in place, by the future."""
    td = TensorDict(a=torch.arange(6.0), n={"b": torch.ones(6, 2)}, batch_size=[6])
    prefix = tmp_path / "saved"
    td.memmap(prefix)
    with pytest.raises(RuntimeError, match="already exists"):
        td.memmap(prefix, num_threads=2, return_early=True, existsok=False)
    futures = [
        td.memmap(tmp_path / f"s{i}", num_threads=2, return_early=True)
        for i in range(4)
    ]
    futures.append(td.memmap(prefix, num_threads=2, return_early=True))
    for future in futures:
        out = future.result()
        assert out.is_memmap()
        assert (out == td).all()
    for i in range(4):
        loaded = TensorDict.load_memmap(tmp_path / f"s{i}")
        assert (loaded == td).all()
    # nothing left beside the targets but the spare tree of the re-saved one
    hidden = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert all(name.startswith(".saved.") for name in hidden), hidden


@needs_shm
def test_a_released_shared_memory_file_is_reused_only_when_nobody_maps_it():
    """Files of dropped anonymous tensors are kept for the next tensor of the same
    size, but never one that something still maps (a plain view of its storage), and
    never one made before a fork (the child may map it)."""
    mm._Recycled.release()
    n = 1 << 15  # 128 KiB of float32
    a = MemoryMappedTensor.from_tensor(torch.arange(float(n)))
    inode = os.fstat(a._handle.fd).st_ino
    plain = torch.empty(0).set_(a.untyped_storage())  # maps it, holds no handle
    del a
    assert mm._Recycled.total == n * 4  # kept
    b = MemoryMappedTensor.from_tensor(torch.ones(n))
    assert os.fstat(b._handle.fd).st_ino != inode  # still mapped: not reused
    assert plain[:3].tolist() == [0.0, 1.0, 2.0] and plain[-1].item() == n - 1
    inode_b = os.fstat(b._handle.fd).st_ino
    del b
    c = MemoryMappedTensor.from_tensor(torch.full((n,), 7.0))
    assert os.fstat(c._handle.fd).st_ino == inode_b  # nothing maps it: reused
    assert torch.equal(c, torch.full((n,), 7.0))
    zeros = MemoryMappedTensor.zeros(n)  # not written whole: never a reused file
    assert zeros.sum().item() == 0
    del c
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert mm._Recycled.total == n * 4  # kept before the fork: the parent keeps it
    d = MemoryMappedTensor.from_tensor(torch.ones(n))
    made_before_fork = d._handle.recyclable != mm._Recycled.generation
    assert not made_before_fork  # d is new: made after the fork
    e = MemoryMappedTensor.from_tensor(torch.ones(n))
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    kept = mm._Recycled.total
    del e  # made before that fork: closed, not kept
    assert mm._Recycled.total == kept
    mm._Recycled.release()
