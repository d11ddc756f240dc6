"""Two gloo ranks on this machine, for the distributed benchmark scripts
(``bench_distributed.py``, ``count_messages.py``, ``trace_distributed.py``,
``segments_distributed.py``): a free local port, and a pair of spawned workers whose
results come back by rank."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for ``init_method``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_two_ranks(worker, *args) -> dict:
    """Run ``worker(rank, port, *args, queue)`` in two spawned processes (ranks 0 and
    1, one free port); each worker puts ``(rank, result)`` on ``queue``. Returns
    ``{rank: result}`` once both processes have exited."""
    import torch.multiprocessing as mp

    port = free_port()
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = [
        ctx.Process(target=worker, args=(rank, port, *args, queue)) for rank in (0, 1)
    ]
    for p in procs:
        p.start()
    by_rank = dict(queue.get() for _ in procs)
    for p in procs:
        p.join()
    return by_rank
