"""A locked tensordict gives locked results, for the ops whose spec entry says
``keeps_lock: true``.

0.15.3 locks the result of most ops that keep a tensordict's keys (shape ops,
arithmetic, casts, ``to``, ``detach``, ``split``...) when the input is locked, and
leaves unlocked what it builds anew (``clone``, reductions, ``unbind``, comparisons,
``new_*``). Code written for it writes into one and expects the other to refuse new
keys; the spec records, entry by entry, which ops keep the lock.
"""

from __future__ import annotations

from tensordict import _lock_graph


def keep_lock(source, result):
    """``result`` (a container, or a tuple or list of them), locked at every level
    when ``source`` is locked. An unlocked input costs one attribute read."""
    if source._is_locked and result is not source:
        if isinstance(result, (tuple, list)):
            for item in result:
                _lock_graph.lock(item)
        else:
            _lock_graph.lock(result)
    return result
