"""``map`` / ``map_iter``: a function over chunks of a tensordict, in worker processes.

The tensordict is cut along ``dim`` into chunks (slices, or single elements with
``chunksize=0``) and ``fn`` runs on each chunk in a pool of processes. What crosses the
process boundary is kept small:

- **In.** With a pool this call starts under ``fork`` (the default on Linux), the
  workers inherit the tensordict and ``fn`` (so ``fn`` may be a lambda) and each task is
  a chunk number; the leaves' storages are first moved to shared memory, as
  ``torch.multiprocessing`` would do when pickling them, so that in-place writes of
  ``fn`` reach the caller. Under ``spawn`` or with a caller's ``pool``, each chunk is
  pickled, which for tensors means shared-memory handles (a memory-mapped tensordict:
  its path and offsets).
- **Out.** The first result that arrives gives the structure of the output, which is
  then allocated once as memory-mapped files in a temporary folder; every later chunk is
  written there by its worker, which returns only its chunk number. Results computed
  before the output existed come back as shared-memory handles and are copied in by the
  caller. An ``out=`` that is shared or memory-mapped is written by the workers
  directly. The folder is removed before ``map`` returns (the result keeps its mapping).

Failures: the exception a worker raises is raised again in the caller with the
worker's traceback as its cause; a worker that dies (killed by a signal) raises a
``RuntimeError`` saying so; ``KeyboardInterrupt`` in the caller terminates the workers.
In every case the workers this call started are terminated and joined, and the
temporary folder is removed, before the error propagates.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import multiprocessing.pool
import os
import shutil
import signal
import sys
import tempfile
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator

import torch
import torch.multiprocessing as tmp

from tensordict._errors import _fmt_key
from tensordict._registry import container_class
from tensordict._structure import leaf_items
from tensordict._tensorcollection import TensorCollection

__all__ = ["MapMixin"]

# Jobs of this process, by token: (source, fn, out). Forked workers inherit it.
_JOBS: dict[int, tuple] = {}
_job_counter = itertools.count()
# In a worker: memory-mapped outputs already opened, by folder.
_OPENED: dict[str, Any] = {}
# How a task's result comes back.
_NONE, _WRITTEN, _DATA = 0, 1, 2


class MapMixin:
    """``map`` and ``map_iter`` for every container."""

    def map(
        self,
        fn: Callable,
        dim: int = 0,
        num_workers: int | None = None,
        *,
        out: TensorCollection | None = None,
        chunksize: int | None = None,
        num_chunks: int | None = None,
        pool=None,
        generator: torch.Generator | None = None,
        max_tasks_per_child: int | None = None,
        worker_threads: int = 1,
        index_with_generator: bool = False,
        pbar: bool = False,
        mp_start_method: str | None = None,
    ):
        """Apply ``fn`` to chunks of this tensordict along ``dim`` in worker processes.

        Returns the results joined along ``dim`` (concatenated, or stacked when
        ``chunksize=0``): a tensordict, a tensor if ``fn`` returns tensors, ``out`` if
        given, or ``None`` if ``fn`` returns ``None`` for every chunk (a function that
        writes into its chunk in place). See ``docs/distributed.md``.

        >>> td = TensorDict(x=torch.arange(8.0), batch_size=[8])
        >>> out = td.map(lambda chunk: chunk.set("y", chunk["x"] * 2), num_workers=1, chunksize=4)
        >>> out["y"].tolist()
        [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
        """
        job = _Job(self, fn, dim, num_workers, chunksize, num_chunks, out,
                   index_with_generator, shuffle=False)
        with _Runner(job, pool, generator, max_tasks_per_child, worker_threads,
                     mp_start_method, pbar) as runner:
            for index, kind, value in runner.results(ordered=False, allocate=True):
                job.collect(index, kind, value)
        return job.finish()

    def map_iter(
        self,
        fn: Callable,
        dim: int = 0,
        num_workers: int | None = None,
        *,
        shuffle: bool = False,
        chunksize: int | None = None,
        num_chunks: int | None = None,
        pool=None,
        generator: torch.Generator | None = None,
        max_tasks_per_child: int | None = None,
        worker_threads: int = 1,
        index_with_generator: bool = True,
        pbar: bool = False,
        mp_start_method: str | None = None,
    ) -> Iterator:
        """Yield ``fn``'s result for each chunk, in chunk order, as the workers finish.

        With ``shuffle=True`` (which needs ``index_with_generator=True``) the chunks
        take their elements from a random permutation along ``dim`` and the results
        come in the order the workers finish them. Closing the iterator early stops
        the workers.

        >>> td = TensorDict(x=torch.arange(4.0), batch_size=[4])
        >>> [out["x"].tolist() for out in td.map_iter(lambda c: c * 10, num_workers=1, chunksize=2)]
        [[0.0, 10.0], [20.0, 30.0]]
        """
        if shuffle and not index_with_generator:
            raise RuntimeError(
                "map_iter(shuffle=True) needs index_with_generator=True; "
                "got index_with_generator=False"
            )
        job = _Job(self, fn, dim, num_workers, chunksize, num_chunks, None,
                   index_with_generator, shuffle=shuffle, generator=generator)
        return _iterate(job, pool, generator, max_tasks_per_child, worker_threads,
                        mp_start_method, pbar, ordered=not shuffle)


def _iterate(job, pool, generator, max_tasks_per_child, worker_threads,
             mp_start_method, pbar, ordered):
    with _Runner(job, pool, generator, max_tasks_per_child, worker_threads,
                 mp_start_method, pbar) as runner:
        for _, kind, value in runner.results(ordered=ordered, allocate=False):
            yield None if kind == _NONE else value


# ------------------------------------------------------------------------------ a job


class _Job:
    """The chunks of one call, and the results gathered so far."""

    def __init__(self, source, fn, dim, num_workers, chunksize, num_chunks, out,
                 index_with_generator, shuffle, generator=None):
        if not callable(fn):
            raise TypeError(f"map expects a callable fn; got {type(fn).__name__}")
        ndim = len(source.batch_size)
        if not -ndim <= dim < ndim:
            raise ValueError(
                f"map: dim={dim} is out of range for batch size {tuple(source.batch_size)}"
            )
        self.dim = dim % ndim
        self.source, self.fn, self.out = source, fn, out
        self.num_workers = num_workers or os.cpu_count() or 1
        if chunksize is not None and num_chunks is not None:
            raise ValueError(
                f"map: chunksize and num_chunks are exclusive; got chunksize={chunksize} "
                f"and num_chunks={num_chunks}"
            )
        size = source.batch_size[self.dim]
        self.stacked = chunksize == 0
        order = None
        if shuffle:
            order = torch.randperm(size, generator=generator)
        if self.stacked:
            specs = [int(i) for i in (order if order is not None else range(size))]
        else:
            if chunksize is None:
                chunksize = math.ceil(size / (num_chunks or self.num_workers)) or 1
            starts = range(0, size, chunksize)
            if order is not None:
                specs = [order[s:s + chunksize] for s in starts]
            else:
                specs = [(s, min(s + chunksize, size)) for s in starts]
        self.specs = specs
        self._chunks = None
        if not index_with_generator and not shuffle and not self.stacked and specs:
            self._chunks = source.split([b - a for a, b in specs], self.dim)
        self.pieces: dict[int, Any] = {}
        self.kinds: dict[int, int] = {}
        self.output = None  # the memory-mapped output, once allocated
        self.folder = None  # its temporary folder

    def chunk(self, i):
        if self._chunks is not None:
            return self._chunks[i]
        return _take(self.source, self.dim, self.specs[i])

    def allocate(self, i, result) -> str | None:
        """Allocate the memory-mapped output from chunk ``i``'s result, if it fits."""
        if self.out is not None or self.output is not None:
            return None
        if type(result) is not container_class("TensorDict") or result.is_locked:
            return None
        if not leaf_items(result):
            return None
        size = len(self.source.batch_size) and self.source.batch_size[self.dim]
        batch = list(result.batch_size)
        if self.stacked:
            if self.dim > len(batch):
                return None
            template = result.unsqueeze(self.dim)
            batch.insert(self.dim, size)
        else:
            a, b = self.specs[i]
            if len(batch) <= self.dim or batch[self.dim] != b - a or b == a:
                return None
            template = _take(result, self.dim, (0, 1))
            batch[self.dim] = size
        self.folder = tempfile.mkdtemp(prefix="tensordict-map-", dir=_scratch_root())
        self.output = template.expand(*batch).memmap_like(self.folder)
        return self.folder

    def target(self, i):
        """Where chunk ``i``'s result goes in the output."""
        spec = i if self.stacked else self.specs[i]
        return _take(self.output if self.out is None else self.out, self.dim, spec)

    def collect(self, i, kind, value) -> None:
        self.kinds[i] = kind
        if kind != _DATA:
            return
        if self.output is not None or self.out is not None:
            target = self.target(i)
            if _fits(target, value):
                _write(target, value)
                self.kinds[i] = _WRITTEN
                return
            if self.out is not None:
                raise ValueError(
                    f"map: the result for chunk {i} does not fit out: "
                    f"{_mismatch_text(target, value)}"
                )
        self.pieces[i] = value

    def finish(self):
        try:
            kinds = [self.kinds[i] for i in range(len(self.specs))]
            if all(k == _NONE for k in kinds):
                return self.out
            if any(k == _NONE for k in kinds):
                first = kinds.index(_NONE)
                other = next(i for i, k in enumerate(kinds) if k != _NONE)
                raise ValueError(
                    f"map: fn returned None for chunk {first} but a result for chunk "
                    f"{other}; it must return None for every chunk or for none"
                )
            if self.out is not None:
                return self.out
            if self.output is not None and not self.pieces:
                return _detached(self.output)
            pieces = [
                self.pieces[i] if i in self.pieces else self.target(i)
                for i in range(len(self.specs))
            ]
            join = torch.stack if self.stacked else torch.cat
            return join(pieces, self.dim)
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _take(td, dim: int, spec):
    """The chunk ``spec`` of ``td`` along ``dim``: ``(start, stop)``, an index, or indices."""
    if isinstance(spec, tuple):
        spec = slice(*spec)
    return td[(slice(None),) * dim + (spec,)]


def _fits(target, value) -> bool:
    if isinstance(target, torch.Tensor) or isinstance(value, torch.Tensor):
        return (
            isinstance(target, torch.Tensor) and isinstance(value, torch.Tensor)
            and target.shape == value.shape and target.dtype == value.dtype
        )
    if not isinstance(value, TensorCollection) or target.batch_size != value.batch_size:
        return False
    mine = {p: (t.shape, t.dtype) for p, t in leaf_items(target)}
    theirs = {p: (t.shape, t.dtype) for p, t in leaf_items(value)}
    return mine == theirs


def _write(target, value) -> None:
    """Copy ``value`` into ``target``, leaf by leaf (the same leaves: :func:`_fits`
    said so). A chunk's slot is written whole, so unlike ``update_`` nothing is saved
    first for a rollback (that copy doubled the cost of every write)."""
    with torch.no_grad():
        if isinstance(target, torch.Tensor):
            target.copy_(value)
            return
        slots = dict(leaf_items(target))
        pairs = [(slots[path], leaf) for path, leaf in leaf_items(value)]
        torch._foreach_copy_([t for t, _ in pairs], [v for _, v in pairs])


def _mismatch_text(target, value) -> str:
    """What differs between a chunk's slot in ``out`` and the result: the key when keys differ."""
    if (
        isinstance(target, TensorCollection)
        and isinstance(value, TensorCollection)
        and target.batch_size == value.batch_size
    ):
        mine = {p: (tuple(t.shape), t.dtype) for p, t in leaf_items(target)}
        theirs = {p: (tuple(t.shape), t.dtype) for p, t in leaf_items(value)}
        for key in sorted(set(mine) | set(theirs), key=str):
            if key not in theirs:
                return f"key {_fmt_key(key)} of out is missing from the result"
            if key not in mine:
                return f"the result has key {_fmt_key(key)}, which out lacks"
            if mine[key] != theirs[key]:
                (shape, dtype), (got_shape, got_dtype) = mine[key], theirs[key]
                return (
                    f"key {_fmt_key(key)}: expected shape {shape} and {dtype}, "
                    f"got shape {got_shape} and {got_dtype}"
                )
    return f"expected {_shape_text(target)}, got {_shape_text(value)}"


def _shape_text(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return f"{type(value).__name__} with batch size {tuple(value.batch_size)}"


def _detached(output):
    """The output's leaves as plain tensors on the same mapping (the folder goes away)."""
    if os.name == "nt":  # a mapped file cannot be removed there: copy to memory first
        return output.apply(lambda t: t.as_subclass(torch.Tensor).clone())
    return output.apply(lambda t: t.as_subclass(torch.Tensor))


def _scratch_root() -> str | None:
    """Memory-backed scratch space where the system has one (Linux: ``/dev/shm``)."""
    shm = "/dev/shm"
    if sys.platform.startswith("linux") and os.path.isdir(shm) and os.access(shm, os.W_OK):
        return shm
    return None


def _share_storages(td) -> None:
    """Move the leaves' storages to shared memory in place (not memory-mapped files)."""
    for _, leaf in leaf_items(td):
        storage = leaf.untyped_storage()
        if leaf.device.type != "cpu" or storage.is_shared():
            continue
        if getattr(storage, "filename", None) is not None:  # a memory-mapped file
            continue
        storage.share_memory_()


# --------------------------------------------------------------------------- the pool


class _Runner:
    """A pool running one job's chunks, and its clean shutdown."""

    def __init__(self, job, pool, generator, max_tasks_per_child, worker_threads,
                 mp_start_method, pbar):
        self.job = job
        self.token = next(_job_counter)
        self.user_pool = pool
        self.executor = None
        self.inherited = False
        self.processes = []
        self.progress = _Progress(len(job.specs), pbar)
        if pool is not None:
            return
        ctx = tmp.get_context(mp_start_method)
        if max_tasks_per_child is not None and ctx.get_start_method() == "fork":
            ctx = tmp.get_context("spawn")  # replacing workers is not allowed under fork
        self.inherited = ctx.get_start_method() == "fork"
        if generator is None:
            generator = torch.Generator()
        base_seed = int(torch.empty((), dtype=torch.int64).random_(generator=generator))
        counter = ctx.Value("i", 0)
        kwargs = {}
        if max_tasks_per_child is not None:
            kwargs["max_tasks_per_child"] = max_tasks_per_child
        if self.inherited:
            _import_numpy_random()  # once here, not in every forked worker
            _share_storages(job.source)
            _JOBS[self.token] = (job.source, job.fn, job.out)
        self.executor = cf.ProcessPoolExecutor(
            max_workers=min(job.num_workers, max(len(job.specs), 1)),
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(base_seed, counter, worker_threads),
            **kwargs,
        )

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        self.close(failed=kind is not None)
        return False

    def close(self, failed: bool) -> None:
        _JOBS.pop(self.token, None)
        self.progress.close()
        try:
            if self.executor is not None:
                # on failure the workers may be busy; on success every result is in
                # and they only wait for more work: either way, stop them at once
                # rather than wait for them to wind down (as Pool.__exit__ does)
                for process in self._processes():
                    if process.is_alive():
                        process.terminate()
                self.executor.shutdown(wait=True, cancel_futures=True)
                for process in self._processes():
                    process.join()
        finally:
            self.job.cleanup()

    def _processes(self) -> list:
        live = getattr(self.executor, "_processes", None) or {}
        for process in live.values():
            if process not in self.processes:
                self.processes.append(process)
        return list(self.processes)

    # ---------------------------------------------------------------------- submitting

    def _task(self, i):
        job = self.job
        spec = job.specs[i]
        out_ref = None
        if job.out is not None and (job.out.is_shared() or job.out.is_memmap()):
            out_ref = "inherited" if self.inherited else job.out
        elif job.folder is not None:
            out_ref = job.folder
        if self.inherited:
            args = (self.token, i, spec, None, None, out_ref, job.dim, job.stacked)
        else:
            args = (self.token, i, spec, job.chunk(i), job.fn, out_ref, job.dim,
                    job.stacked)
        return args

    def _submit(self, i):
        args = self._task(i)
        if self.executor is not None:
            future = self.executor.submit(_run_chunk, *args)
            self._processes()
            return future
        if isinstance(self.user_pool, multiprocessing.pool.Pool):
            future = _PoolFuture(self.user_pool.apply_async(_run_chunk, args))
            self.processes.extend(
                p for p in getattr(self.user_pool, "_pool", []) if p not in self.processes
            )
            return future
        return self.user_pool.submit(_run_chunk, *args)

    def results(self, ordered: bool, allocate: bool):
        """Yield ``(chunk, kind, value)``, keeping at most two tasks per worker queued."""
        job = self.job
        total = len(job.specs)
        window = 2 * (job.num_workers if self.user_pool is None
                      else getattr(self.user_pool, "_processes", None) or job.num_workers)
        pending: dict = {}
        ready: dict = {}
        following = 0  # the next chunk to yield, in order
        submitted = 0
        while submitted < min(window, total):
            pending[self._submit(submitted)] = submitted
            submitted += 1
        while pending:
            done, _ = cf.wait(list(pending), timeout=0.5, return_when=cf.FIRST_COMPLETED)
            if not done:
                self._check_alive()
                continue
            for future in done:
                i = pending.pop(future)
                index, kind, value = self._outcome(future, i)
                self.progress.update()
                if allocate and kind == _DATA and submitted < total:
                    job.allocate(index, value)
                if ordered:
                    ready[index] = (index, kind, value)
                else:
                    yield index, kind, value
                if submitted < total:
                    pending[self._submit(submitted)] = submitted
                    submitted += 1
            while ordered and following in ready:
                yield ready.pop(following)
                following += 1

    def _outcome(self, future, i):
        try:
            return future.result()
        except BrokenProcessPool as error:
            for process in self._processes():  # the pool is tearing down: let them end,
                if process.exitcode is None:  # so that each exit status is known
                    process.join(timeout=2.0)
            raise RuntimeError(
                f"map: a worker process died while chunk {i} was running "
                f"({self._deaths() or 'no exit code recorded'}); the pool was shut down"
            ) from error

    def _deaths(self) -> str:
        texts = []
        for process in self.processes:
            code = process.exitcode
            if code is not None and code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = str(-code)
                texts.append(f"pid {process.pid} killed by {name}")
            elif code not in (None, 0):
                texts.append(f"pid {process.pid} exited with status {code}")
        return ", ".join(texts)

    def _check_alive(self) -> None:
        """A caller's ``multiprocessing.Pool`` never reports a dead worker (it replaces
        it and waits forever for its task): look at every worker seen so far."""
        if not isinstance(self.user_pool, multiprocessing.pool.Pool):
            return
        for process in list(getattr(self.user_pool, "_pool", [])):
            if process not in self.processes:
                self.processes.append(process)
        for process in self.processes:
            code = process.exitcode
            if code is not None and code < 0:
                raise RuntimeError(
                    f"map: a worker process of the pool died ({self._deaths()}); "
                    "its chunk will never finish"
                )


class _PoolFuture(cf.Future):
    """A ``multiprocessing.pool.AsyncResult`` seen as a ``concurrent.futures.Future``."""

    def __init__(self, async_result):
        super().__init__()
        self._async = async_result
        self.set_running_or_notify_cancel()
        pool_thread_done = self._done_from_pool
        async_result._callback = pool_thread_done
        async_result._error_callback = self._failed_from_pool
        if async_result.ready():  # finished before the callbacks were set
            try:
                pool_thread_done(async_result.get(0))
            except BaseException as error:  # noqa: BLE001 (handed to the caller)
                self._failed_from_pool(error)

    def _done_from_pool(self, value):
        if not self.done():
            self.set_result(value)

    def _failed_from_pool(self, error):
        if not self.done():
            self.set_exception(error)


class _Progress:
    """A progress bar over chunks: ``tqdm`` if installed, else one line on stderr."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.count, self.bar = total, 0, None
        self.enabled = enabled
        if not enabled:
            return
        try:
            from tqdm import tqdm  # optional dependency
        except ImportError:
            self._plain()
        else:
            self.bar = tqdm(total=total, desc="map", unit="chunk")

    def _plain(self) -> None:
        sys.stderr.write(f"\rmap: {self.count}/{self.total} chunks")
        sys.stderr.flush()

    def update(self) -> None:
        if not self.enabled:
            return
        self.count += 1
        if self.bar is not None:
            self.bar.update(1)
        else:
            self._plain()

    def close(self) -> None:
        if not self.enabled:
            return
        self.enabled = False
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ---------------------------------------------------------------------- in a worker


def _import_numpy_random() -> None:
    """Import ``numpy.random`` (which each worker seeds) in the caller before forking:
    imported in each forked worker instead, it cost every worker ~40 ms per call."""
    try:
        import numpy.random  # noqa: F401
    except ImportError:  # numpy is optional for torch
        pass


def _init_worker(base_seed: int, counter, worker_threads: int) -> None:
    """Each worker: the caller handles Ctrl-C; its own seeds; ``worker_threads`` threads."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    torch.set_num_threads(worker_threads)
    torch.manual_seed(base_seed + index)
    try:
        import numpy as np
    except ImportError:  # numpy is optional for torch
        return
    np.random.seed((base_seed * 1_000_003 + index) % (2**32))


def _run_chunk(token, i, spec, chunk, fn, out_ref, dim, stacked):
    """Run ``fn`` on chunk ``i``; write the result into the output when there is one."""
    if chunk is None:  # forked: the source, fn and out came with the process
        source, fn, _ = _JOBS[token]
        chunk = _take(source, dim, spec)
    result = fn(chunk)
    if result is None:
        return i, _NONE, None
    out = _output(out_ref, token)
    if out is not None:
        target = _take(out, dim, i if stacked else spec)
        if _fits(target, result):
            _write(target, result)
            return i, _WRITTEN, None
    return i, _DATA, _compact(result)


def _output(out_ref, token):
    """The output a task names: none, the inherited ``out``, a folder, or ``out`` itself."""
    if out_ref is None:
        return None
    if isinstance(out_ref, str) and out_ref == "inherited":
        return _JOBS[token][2]
    if isinstance(out_ref, str):
        if out_ref not in _OPENED:
            _OPENED.clear()  # one job's output at a time
            _OPENED[out_ref] = container_class("TensorDict").load_memmap(out_ref)
        return _OPENED[out_ref]
    return out_ref


def _oversized(t) -> bool:
    return t.untyped_storage().nbytes() > t.numel() * t.element_size()


def _compact(result):
    """Clone leaves that view a larger storage, so that only their bytes are shared back."""
    if isinstance(result, torch.Tensor):
        return result.clone() if _oversized(result) else result
    if isinstance(result, TensorCollection) and any(
        _oversized(t) for _, t in leaf_items(result)
    ):
        return result.apply(lambda t: t.clone() if _oversized(t) else t)
    return result
