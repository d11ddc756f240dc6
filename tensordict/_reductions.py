"""0.15.3's import path of the pickling reduction of a tensordict.

Code that sends tensordicts between processes (or tests a round trip) calls
``_reduce_td(td)`` for the pair ``(rebuild, args)`` and rebuilds with
``rebuild(*args)``. Here it is the container's own reduction (``tensordict/_pickle.py``):
a consolidated tensordict travels as its one storage and rebuilds consolidated.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable


def _reduce_td(data) -> tuple[Callable, tuple]:
    """``(rebuild, args)``: ``rebuild(*args)`` is a copy of the tensor collection
    ``data`` (its tensors shared), as unpickling it would give.

    >>> from tensordict._reductions import _reduce_td
    >>> td = TensorDict(a=torch.arange(3), batch_size=[3])
    >>> rebuild, args = _reduce_td(td)
    >>> rebuild(*args)["a"].tolist()
    [0, 1, 2]
    """
    reduced: Any = data.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    if isinstance(reduced, str) or len(reduced) != 2:
        raise TypeError(
            f"_reduce_td: {type(data).__name__} reduces with a state to set after "
            "the rebuild; pickle it instead"
        )
    return reduced[0], reduced[1]
