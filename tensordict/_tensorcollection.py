"""``TensorCollection``: the common base of every tensordict-like class.

``TensorDictBase`` (hence ``TensorDict``, lazy stacks, ``TensorClass`` subclasses)
derives from it, so ``isinstance(x, TensorCollection)`` and annotations that name it
(TorchRL's trainers do) accept any of them. As in 0.15.3, a class made with the
``@tensorclass`` decorator is not a subclass: use :func:`is_tensor_collection` to accept
those too.
"""

from __future__ import annotations


class TensorCollection:
    """Base class of every tensordict-like container (see the module docstring)."""

    __slots__ = ()
