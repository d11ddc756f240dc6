"""Nested keys: a key is a string or a tuple of keys, nested to any depth.

``("a", ("b", ("c",)))`` and ``("a", "b", "c")`` name the same entry; every public
entry point unravels once, and the core works on flat tuples of strings after that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple, Union

if TYPE_CHECKING:
    NestedKey = Union[str, Tuple["NestedKey", ...]]
else:

    class _NestedKeyMeta(type):
        def __instancecheck__(cls, obj) -> bool:
            return _is_nested_key(obj)

        def __subclasscheck__(cls, sub) -> bool:
            return issubclass(sub, str)

    class NestedKey(metaclass=_NestedKeyMeta):
        """A key: a string, or a non-empty tuple of keys nested to any depth.

        Usable in annotations (``key: NestedKey``, ``NestedKey | None``) and, as in
        0.15.3, at runtime: ``isinstance(("a", "b"), NestedKey)`` is True.

        >>> def read(td: TensorDict, key: NestedKey) -> torch.Tensor:
        ...     return td[key]
        >>> read(TensorDict(next={"obs": torch.ones(1)}), ("next", "obs"))
        tensor([1.])
        >>> isinstance("obs", NestedKey), isinstance(("next", ("obs",)), NestedKey)
        (True, True)
        >>> isinstance(("next", 0), NestedKey), isinstance((), NestedKey)
        (False, False)
        """

        def __new__(cls, *args, **kwargs):
            raise TypeError("NestedKey is a type of keys, not a class to instantiate")


def _is_nested_key(obj) -> bool:
    if isinstance(obj, str):
        return True
    if type(obj) is not tuple or not obj:
        return False
    return all(_is_nested_key(part) for part in obj)


#: The separator `flatten_keys` puts between the parts of a nested key by default
#: (``("next", "obs")`` becomes ``"next.obs"``).
#:
#: >>> td = TensorDict(next={"obs": torch.zeros(1)})
#: >>> list(td.flatten_keys().keys()) == ["next" + KEY_SEPARATOR + "obs"]
#: True
#: >>> list(td.flatten_keys("/").keys())
#: ['next/obs']
KEY_SEPARATOR = "."


#: The message of a key that is not one (0.15.3's text, which code matches), to be
#: formatted with the key; ``tensordict.base._GENERIC_NESTED_ERR`` is this string.
GENERIC_NESTED_ERR = (
    "Only NestedKeys are supported: a key must be a string or a non-empty, possibly "
    "nested tuple of strings. Got key {!r}."
)


def _invalid_key(key, part) -> "InvalidKeyError":
    if part is key:
        detail = f" (a {type(key).__name__})"
    else:
        detail = f" (its part {part!r} is a {type(part).__name__})"
    return InvalidKeyError(GENERIC_NESTED_ERR.format(key) + detail)


class InvalidKeyError(KeyError, TypeError, RuntimeError):
    """Something that is not a key (a string or a tuple of strings) was used as one.
    A ``TypeError``; 0.15.3 raised a ``KeyError`` (and, from :func:`unravel_key`, a
    ``RuntimeError``), so code catching any of them works."""

    def __str__(self) -> str:  # the message as written, not quoted as a KeyError's
        return str(self.args[0]) if self.args else ""


def _flatten_into(key, out: list, whole=None) -> None:
    if isinstance(key, str):
        out.append(key)
    elif isinstance(key, tuple):
        for part in key:
            _flatten_into(part, out, key if whole is None else whole)
    else:
        raise _invalid_key(key if whole is None else whole, key)


def unravel_key_to_tuple(key: NestedKey) -> tuple[str, ...]:
    """Return ``key`` as a flat tuple of strings (``"a"`` -> ``("a",)``).

    >>> unravel_key_to_tuple("a"), unravel_key_to_tuple(("a", ("b",)))
    (('a',), ('a', 'b'))
    """
    if isinstance(key, str):
        return (key,)
    if isinstance(key, tuple):
        # fast path: already flat
        for part in key:
            if not isinstance(part, str):
                break
        else:
            if not key:
                raise KeyError(
                    "the key () is an empty tuple: a key is a string or a non-empty "
                    "tuple of strings"
                )
            return key
        out: list[str] = []
        _flatten_into(key, out)
        if not out:
            raise KeyError(f"the key {key!r} names no entry")
        return tuple(out)
    raise _invalid_key(key, key)


def _unravel_strict(key: NestedKey) -> NestedKey:
    """:func:`unravel_key` that raises on a tuple that is not a key."""
    if isinstance(key, str):
        return key
    flat = unravel_key_to_tuple(key)
    return flat[0] if len(flat) == 1 else flat


def unravel_key(key: NestedKey) -> NestedKey:
    """Unravel a nested key: a string stays a string, ``("a",)`` becomes ``"a"``,
    nested tuples become one flat tuple.

    As in 0.15.3, a tuple that is not a key (``(0, slice(None))``, ``()``) gives
    ``()``, so that callers holding "a key or an index" can tell them apart (TorchRL's
    ``Composite.__getitem__``); anything else that is not a key raises
    :class:`InvalidKeyError`, a ``RuntimeError`` among others.

    >>> unravel_key(("a", ("b", "c")))
    ('a', 'b', 'c')
    >>> unravel_key(("a",))
    'a'
    """
    if isinstance(key, str):
        return key
    if not isinstance(key, tuple):
        raise InvalidKeyError(
            f"key should be a Sequence<NestedKey> (a string or a tuple of strings), "
            f"got {key!r} of type {type(key).__name__}"
        )
    try:
        return _unravel_strict(key)
    except KeyError:  # InvalidKeyError included
        return ()


def unravel_key_list(keys) -> list[NestedKey]:
    """Unravel every key of a list or a tuple of keys (see :func:`unravel_key`); a
    tuple that is not a key raises here, and so does anything but a list or a tuple
    (``TypeError``: a string is one key, not a list of keys).

    >>> unravel_key_list(["a", ("b",), ("c", ("d",))])
    ['a', 'b', ('c', 'd')]
    """
    if not isinstance(keys, (list, tuple)):
        # 0.15.3's phrase first (TorchRL's tests match it), then ours
        raise TypeError(
            f"unravel_key_list(): incompatible function arguments. Expected a list or "
            f"a tuple of keys, got {type(keys)}: wrap a single key in a list "
            f"([key]), or pass list(keys) for another iterable"
        )
    return [_unravel_strict(key) for key in keys]


def is_valid_key(key) -> bool:
    """True when ``key`` is a string or a (nested) tuple of strings."""
    try:
        unravel_key_to_tuple(key)
    except (TypeError, KeyError):
        return False
    return True
