"""``torch.X(td, ...)`` for tensordicts: the dispatch behind
``TensorDictBase.__torch_function__``.

``TORCH_FUNCTIONS`` maps a torch function to the callable that implements it for
tensor collections. A function not in the table is refused (``NotImplemented``), so
torch raises its usual ``TypeError`` naming the function.
"""

from __future__ import annotations

from typing import Any, Callable

TORCH_FUNCTIONS: dict[Callable, Callable] = {}


def dispatch(func: Callable, types, args: tuple, kwargs: dict) -> Any:
    impl = TORCH_FUNCTIONS.get(func)
    if impl is None:
        return NotImplemented
    return impl(*args, **kwargs)
