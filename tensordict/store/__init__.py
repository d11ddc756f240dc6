"""Tensordicts whose entries live on a Redis-compatible server (``TensorDictStore``).

``redis`` (redis-py) is an optional dependency: ``pip install tensordict[store]``.
See ``docs/persistence.md``, "A store on a Redis server".
"""

from tensordict.store._store import STORE_BACKENDS, TensorDictStore
from tensordict.store._lazy import LazyStackedTensorDictStore

__all__ = ["STORE_BACKENDS", "TensorDictStore", "LazyStackedTensorDictStore"]
