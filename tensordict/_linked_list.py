"""``LinkedList``: what ``td[key]`` gives for a ``NonTensorStack`` entry.

0.15.3 returns the stack's values as a list (a ``list`` subclass, so ``isinstance(x,
list)``, ``json.dumps(x)`` and list equality work), one value per element of the
first batch dim, a ``LinkedList`` of ``LinkedList`` for more batch dims. The list is
linked to the stack it came from: setting an item (``td["labels"][0] = "z"``) writes
it into the stack. Other mutations (``append``, ``pop``...) change the list only, as
in 0.15.3: they would change the batch size.
"""

from __future__ import annotations

from typing import Any

from tensordict._registry import container_class


class LinkedList(list):
    """A list of a ``NonTensorStack``'s values whose item assignments write into it."""

    def __init__(self, *args, td: Any = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._stack = td
        self._at: tuple = ()  # where this list's items are in ``td`` (nested lists)

    def _td(self) -> Any:
        """The stack this list writes into (``None`` once a mutation that changes its
        length unlinked it), called as 0.15.3's weak reference is."""
        return self._stack

    def _unlinked(name: str):
        def method(self, *args, **kwargs):
            self._stack = None  # the list no longer matches the stack's batch size
            return getattr(list, name)(self, *args, **kwargs)

        method.__name__ = name
        return method

    append = _unlinked("append")
    extend = _unlinked("extend")
    insert = _unlinked("insert")
    pop = _unlinked("pop")
    remove = _unlinked("remove")
    clear = _unlinked("clear")
    __delitem__ = _unlinked("__delitem__")
    __iadd__ = _unlinked("__iadd__")
    __imul__ = _unlinked("__imul__")
    del _unlinked

    @classmethod
    def _of(cls, stack: Any) -> "LinkedList":
        """The values of ``stack`` (a ``NonTensorStack`` with at least one batch dim),
        nested as its batch dims are."""
        return cls._nested(stack.tolist(), stack, ())

    @classmethod
    def _nested(cls, values: list, stack: Any, at: tuple) -> "LinkedList":
        if len(at) + 1 < stack.batch_dims:
            values = [cls._nested(row, stack, at + (i,)) for i, row in enumerate(values)]
        out = cls(values, td=stack)
        out._at = at
        return out

    def __setitem__(self, index, value) -> None:
        super().__setitem__(index, value)
        if self._stack is not None:
            self._stack[(*self._at, index) if self._at else index] = value

    def tolist(self) -> list:
        """A plain list (of plain lists, for nested ones) of the values."""
        return [x.tolist() if isinstance(x, LinkedList) else x for x in self]

    def __repr__(self) -> str:
        return f"LinkedList({list.__repr__(self)})"

    def __reduce__(self):
        # pickled as the values alone: the stack it is linked to stays behind
        return (LinkedList, (list(self),))


_STACK_CLASS: list = []  # NonTensorStack, from the registry at the first read


def entry_value(value: Any) -> Any:
    """What ``td[key]`` gives for the stored entry ``value``: a ``NonTensorStack``'s
    values as a :class:`LinkedList` (as 0.15.3), anything else as it is."""
    if not getattr(type(value), "_is_non_tensor", False):
        return value
    if not _STACK_CLASS:
        _STACK_CLASS.append(container_class("NonTensorStack"))
    if isinstance(value, _STACK_CLASS[0]) and value.batch_dims:
        return LinkedList._of(value)
    return value
