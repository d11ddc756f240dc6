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


# keep_lock lives in _lock_graph, below base, so that the capabilities under
# TensorDictBase (tensordict/_consolidate.py) call it too
keep_lock = _lock_graph.keep_lock
