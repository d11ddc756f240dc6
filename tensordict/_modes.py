"""Global modes and the ``set_*`` switches that change them: one mechanism for the
tensordict modes here (``set_lazy_legacy``...) and the module settings of
``tensordict.nn`` (``set_skip_existing``, ``set_interaction_type``...).

A mode is a :class:`_Setting`: one process-wide value, with per-thread overrides. A
switch (a :class:`_ModeSwitch` subclass) changes it four ways:

- ``with set_lazy_legacy(True): ...`` sets it inside the block only (the previous value
  is back on exit, also when the block raises; blocks nest);
- ``@set_lazy_legacy(True)`` sets it while the decorated function runs;
- ``.set()`` sets it from now on and ``.unset()`` undoes that: TorchRL calls
  ``set_lazy_legacy(False).set()`` when it is imported;
- for the tensordict modes, a plain call, ``set_lazy_legacy(True)``, also sets the mode
  from then on (0.15.3 needs ``.set()`` for that; this project sets it at the call, see
  ``docs/compatibility.md``); the nn settings change only in the three ways above.

``thread_local=True`` (nn settings) confines the value to the calling thread.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
import warnings
from typing import Any, Callable, ClassVar

_UNSET = object()

# Every mode by name, so that tests can save and restore them all.
_SETTINGS: dict[str, "_Setting"] = {}


class _Setting:
    """One process-wide value, with per-thread overrides (``thread_local`` switches).
    Reading it (:meth:`get`) is one attribute read while no thread overrides it."""

    __slots__ = ("name", "value", "_local", "_local_count")

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.value = default
        self._local = threading.local()
        self._local_count = 0  # threads holding an override: 0 keeps get() to one read
        _SETTINGS[name] = self

    def get(self) -> Any:
        if self._local_count:
            value = getattr(self._local, "value", _UNSET)
            if value is not _UNSET:
                return value
        return self.value

    def _thread_has_override(self) -> bool:
        return getattr(self._local, "value", _UNSET) is not _UNSET

    def replace(self, value: Any, thread_local: bool) -> tuple:
        """Set ``value``; return what :meth:`restore` needs to put things back."""
        if thread_local or (self._local_count and self._thread_has_override()):
            previous = getattr(self._local, "value", _UNSET)
            if previous is _UNSET:
                self._local_count += 1
            self._local.value = value
            return (True, previous)
        previous = self.value
        self.value = value
        return (False, previous)

    def restore(self, token: tuple) -> None:
        local, previous = token
        if not local:
            self.value = previous
            return
        if previous is _UNSET:
            del self._local.value
            self._local_count -= 1
        else:
            self._local.value = previous

    def __repr__(self) -> str:
        return f"_Setting({self.name!r}, {self.get()!r})"


class _ModeSwitch:
    """Base of the switches (see the module docstring). A subclass names its
    ``_setting``, may check the mode in ``_check``, and says with
    ``_applies_when_made`` whether a plain call sets the mode."""

    _setting: ClassVar[_Setting]
    _applies_when_made: ClassVar[bool] = False

    def __init__(self, mode: Any, *, thread_local: bool = False) -> None:
        self.mode = self._check(mode)
        self.thread_local = thread_local
        self._tokens: list = []  # one per enter/set not yet exited/unset
        # the change a plain call made; the first enter/set/unset/decoration takes it
        self._pending = (
            self._setting.replace(self.mode, thread_local) if self._applies_when_made else None
        )

    @staticmethod
    def _check(mode: Any) -> Any:
        return mode

    def clone(self) -> "_ModeSwitch":
        """The same switch, not applied (the mode is left as it is)."""
        twin = copy.copy(self)
        twin._tokens = []
        twin._pending = None
        return twin

    def __enter__(self) -> "_ModeSwitch":
        if self._pending is not None:  # the plain call set it: leaving restores before it
            token, self._pending = self._pending, None
            self._setting.replace(self.mode, self.thread_local)
            self._tokens.append(token)
        else:
            self._tokens.append(self._setting.replace(self.mode, self.thread_local))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        self._setting.restore(self._tokens.pop())
        return False

    def set(self) -> None:
        """Set the mode from now on (until :meth:`unset`)."""
        self.__enter__()

    def unset(self) -> None:
        """Undo :meth:`set` (or the plain call): the mode seen before it is back."""
        if self._tokens:
            self._setting.restore(self._tokens.pop())
        elif self._pending is not None:
            token, self._pending = self._pending, None
            self._setting.restore(token)

    def __call__(self, func: Callable) -> Callable:
        # a decorator: the mode applies only while func runs, not from now on
        if self._pending is not None:
            token, self._pending = self._pending, None
            self._setting.restore(token)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mode!r})"


# None: never set; each reader says what that means.
_LAZY_LEGACY = _Setting(
    "lazy_legacy",
    True if os.environ.get("LAZY_LEGACY_OP", "").lower() in ("1", "true") else None,
)
_CAPTURE_NON_TENSOR_STACK = _Setting("capture_non_tensor_stack", None)
_LIST_TO_STACK = _Setting("list_to_stack", None)
# td.get(missing) returns None (0.15.3's default) unless switched off; set by a plain
# function only (never per thread), so base.py reads ``.value``
_GET_DEFAULTS_TO_NONE = _Setting("get_defaults_to_none", True)


class _TensorDictModeSwitch(_ModeSwitch):
    """A switch of a tensordict mode: a plain call sets it; the mode is a bool."""

    _applies_when_made = True

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)

    @staticmethod
    def _check(mode: Any) -> bool:
        return bool(mode)


def _read(setting: _Setting, default: bool, allow_none: bool) -> bool | None:
    value = setting.get()
    if value is None:
        return None if allow_none else default
    return value


def lazy_legacy(allow_none: bool = False) -> bool | None:
    """Whether :func:`torch.stack` of tensordicts and the view-like shape ops are lazy
    (see :class:`set_lazy_legacy`). ``False`` by default: stacking is dense; with
    ``allow_none=True``, ``None`` while the mode was never set.

    >>> lazy_legacy()
    False
    >>> with set_lazy_legacy(True):
    ...     lazy_legacy()
    True
    """
    value = _LAZY_LEGACY.get()  # on the path of every shape op: one call
    if value is None:
        return None if allow_none else False
    return value


class set_lazy_legacy(_TensorDictModeSwitch):
    """Make :func:`torch.stack` of tensordicts lazy (a ``LazyStackedTensorDict``
    whose writes go through to the stacked tensordicts) or dense (the default).

    A function, a context manager, a decorator, or ``set_lazy_legacy(mode).set()``
    (see :mod:`tensordict._modes`).

    >>> tds = [TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(3))]
    >>> type(torch.stack(tds)).__name__
    'TensorDict'
    >>> with set_lazy_legacy(True):
    ...     type(torch.stack(tds)).__name__
    'LazyStackedTensorDict'
    """

    _setting = _LAZY_LEGACY


def capture_non_tensor_stack(allow_none: bool = False) -> bool | None:
    """Whether stacking non-tensor data holding one same value gives one
    ``NonTensorData`` (True) rather than a ``NonTensorStack`` (False, the default).

    >>> isinstance(capture_non_tensor_stack(), bool)
    True
    """
    return _read(_CAPTURE_NON_TENSOR_STACK, False, allow_none)


class set_capture_non_tensor_stack(_TensorDictModeSwitch):
    """Switch :func:`capture_non_tensor_stack` (function, context manager, decorator,
    ``.set()``/``.unset()``).

    >>> tds = [TensorDict(label="cat"), TensorDict(label="cat")]
    >>> with set_capture_non_tensor_stack(True):
    ...     torch.stack(tds)["label"]          # one value for the whole stack
    'cat'
    """

    _setting = _CAPTURE_NON_TENSOR_STACK


def list_to_stack(allow_none: bool = False) -> bool | None:
    """Whether a list written into a tensordict that cannot become a tensor is stored
    as a ``NonTensorStack`` of its elements (True, the default).

    >>> isinstance(list_to_stack(), bool)
    True
    """
    return _read(_LIST_TO_STACK, True, allow_none)


class set_list_to_stack(_TensorDictModeSwitch):
    """Switch :func:`list_to_stack` (function, context manager, decorator,
    ``.set()``/``.unset()``).

    >>> td = TensorDict(batch_size=[2])
    >>> with set_list_to_stack(True):
    ...     td["labels"] = ["cat", "dog"]   # one value per batch element
    >>> td[1]["labels"]
    'dog'
    """

    _setting = _LIST_TO_STACK


def set_get_defaults_to_none(set_to_none: bool = True) -> None:
    """Whether ``td.get(missing_key)`` returns ``None`` (the default, as in 0.15.3) or
    raises a ``KeyError`` naming the key (``set_get_defaults_to_none(False)``).

    >>> td = TensorDict(a=torch.zeros(2))
    >>> td.get("missing") is None
    True
    """
    _GET_DEFAULTS_TO_NONE.value = bool(set_to_none)


def get_defaults_to_none(set_to_none: bool = True) -> bool:
    """Whether ``td.get(missing_key)`` returns ``None`` (see
    :func:`set_get_defaults_to_none`); ``set_to_none`` is ignored, as in 0.15.3,
    which deprecates both functions (``td[key]`` raises a ``KeyError`` for a missing
    key): it warns with a ``DeprecationWarning``.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     get_defaults_to_none()
    True
    """
    warnings.warn(
        "get_defaults_to_none() is deprecated and will be removed in TensorDict 0.17. "
        "Use td[key] to raise a KeyError for a missing key instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _GET_DEFAULTS_TO_NONE.value
