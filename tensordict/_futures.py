"""``TensorDictFuture``: what ``return_early=True`` saves and consolidations return.

A :class:`concurrent.futures.Future` of the tensordict being written by a background
thread (``future.result()`` waits and gives it, or raises the first error); 0.15.3's
name for it, so that code checking ``isinstance(f, TensorDictFuture)`` runs. Code that
waits with ``concurrent.futures.wait`` keeps working: it is a ``Future``.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable

__all__ = ["TensorDictFuture", "submit"]


class TensorDictFuture(concurrent.futures.Future):
    """The tensordict a background thread is writing: :meth:`result` waits for it."""


def submit(
    pool: concurrent.futures.Executor, fn: Callable[[], Any]
) -> TensorDictFuture:
    """Run ``fn`` on ``pool``; its result (or error) through a :class:`TensorDictFuture`."""
    future = TensorDictFuture()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn()
        except BaseException as err:  # delivered to whoever waits on the future
            future.set_exception(err)
        else:
            future.set_result(result)

    pool.submit(run)
    return future
