"""``TensorCollection``: the common base of every tensordict-like class.

``TensorDictBase`` (hence ``TensorDict``, lazy stacks, ``TensorClass`` subclasses)
derives from it, so ``isinstance(x, TensorCollection)`` and annotations that name it
(TorchRL's trainers do) accept any of them. As in 0.15.3, a class made with the
``@tensorclass`` decorator is not a subclass: use :func:`is_tensor_collection` to accept
those too.

It also holds what the capability mixins under ``TensorDictBase`` (persistence,
consolidation, distribution, map, module state, pytree) share with it and must reach
without importing ``base``: the ``NO_DEFAULT`` sentinel, :func:`_parse_names` and
:func:`_is_node`. ``base`` re-exports them.
"""

from __future__ import annotations

import enum


class TensorCollection:
    """Base class of every tensordict-like container (see the module docstring); it
    cannot be built itself (``NotImplementedError``).

    >>> isinstance(TensorDict(), TensorCollection), isinstance(torch.zeros(1), TensorCollection)
    (True, False)
    """

    __slots__ = ()

    def __init__(self, *args, **kwargs) -> None:
        # only TensorCollection() itself gets here: subclasses have their __init__
        if type(self) is TensorCollection:
            raise NotImplementedError(
                "TensorCollection is an abstract base class and cannot be instantiated "
                "directly: build a TensorDict, a lazy stack or a tensorclass"
            )
        super().__init__()


class _NoDefault(enum.IntEnum):
    ZERO = 0


#: Sentinel for "no default given" (``None`` is a valid default).
#: Pass it where a method takes ``default`` to ask for its error on a missing key.
#:
#: >>> td = TensorDict(a=torch.zeros(1))
#: >>> print(td.get("b", None))                 # None is a default like any other
#: None
#: >>> td.get("b", NO_DEFAULT)
#: Traceback (most recent call last):
#: ...
#: KeyError: ...
NO_DEFAULT = _NoDefault.ZERO


def _parse_names(names, ndim: int):
    if names is None:
        return None
    names = list(names)
    if len(names) != ndim:
        raise ValueError(
            f"names {names} must give one name per batch dim ({ndim} batch dims)"
        )
    if all(name is None for name in names):
        return None
    seen = [n for n in names if n is not None]
    if len(set(seen)) != len(seen):
        raise ValueError(f"names must be unique, got {names}")
    return names


def _is_node(value) -> bool:
    # a nested tensordict (non-tensor stacks are tensordict-like, but data);
    # TensorDictBase is the one subclass of TensorCollection
    return isinstance(value, TensorCollection) and not value._is_non_tensor
