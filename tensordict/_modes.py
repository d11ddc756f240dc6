"""Global modes and the ``set_*`` switches that change them.

Code written for 0.15.3 flips these modes four ways, and every switch here takes all
four:

- a plain call, ``set_lazy_legacy(True)``, sets the mode from then on (0.15.3 needs
  ``.set()`` for that; this project sets it at the call, see ``docs/compatibility.md``);
- ``.set()`` sets it (again) and ``.unset()`` restores the mode seen when the switch was
  made: TorchRL calls ``set_lazy_legacy(False).set()`` when it is imported;
- ``with set_lazy_legacy(True): ...`` sets it inside the block only;
- ``@set_lazy_legacy(True)`` sets it while the decorated function runs.

The modes live in one dict, so that reading one (``lazy_legacy()``, on the path of every
shape op) is one lookup.
"""

from __future__ import annotations

import functools
import os

# None: never set; each reader says what that means.
_STATE: dict[str, bool | None] = {
    "lazy_legacy": None,
    "capture_non_tensor_stack": None,
    "list_to_stack": None,
    # td.get(missing) returns None (0.15.3's default) unless switched off
    "get_defaults_to_none": True,
}

if os.environ.get("LAZY_LEGACY_OP", "").lower() in ("1", "true"):
    _STATE["lazy_legacy"] = True


class _ModeSwitch:
    """A switch for the mode ``_STATE[self._mode_name]`` (see the module docstring)."""

    _mode_name: str = ""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous = _STATE[self._mode_name]
        _STATE[self._mode_name] = self.mode

    def set(self) -> None:
        """Set the mode from now on."""
        _STATE[self._mode_name] = self.mode

    def unset(self) -> None:
        """Restore the mode that was in force when this switch was made."""
        _STATE[self._mode_name] = self._previous

    def clone(self) -> "_ModeSwitch":
        """The same switch, not applied (the mode is left as it is)."""
        twin = object.__new__(type(self))
        twin.mode = self.mode
        twin._previous = self._previous
        return twin

    def __enter__(self) -> "_ModeSwitch":
        _STATE[self._mode_name] = self.mode
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        _STATE[self._mode_name] = self._previous
        return False

    def __call__(self, func):
        # a decorator: the mode applies only while func runs, not from now on
        _STATE[self._mode_name] = self._previous
        name, mode = self._mode_name, self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            previous = _STATE[name]
            _STATE[name] = mode
            try:
                return func(*args, **kwargs)
            finally:
                _STATE[name] = previous

        return wrapper

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mode})"


def _read(name: str, default: bool, allow_none: bool) -> bool | None:
    value = _STATE[name]
    if value is None:
        return None if allow_none else default
    return value


def lazy_legacy(allow_none: bool = False) -> bool | None:
    """Whether :func:`torch.stack` of tensordicts and the view-like shape ops are lazy
    (see :class:`set_lazy_legacy`). ``False`` by default: stacking is dense; with
    ``allow_none=True``, ``None`` while the mode was never set."""
    value = _STATE["lazy_legacy"]
    if value is None:
        return None if allow_none else False
    return value


class set_lazy_legacy(_ModeSwitch):
    """Make :func:`torch.stack` of tensordicts lazy (a ``LazyStackedTensorDict``
    whose writes go through to the stacked tensordicts) or dense (the default).

    A function, a context manager, a decorator, or ``set_lazy_legacy(mode).set()``
    (see :mod:`tensordict._modes`)."""

    _mode_name = "lazy_legacy"


def capture_non_tensor_stack(allow_none: bool = False) -> bool | None:
    """Whether stacking non-tensor data holding one same value gives one
    ``NonTensorData`` (True) rather than a ``NonTensorStack`` (False, the default)."""
    return _read("capture_non_tensor_stack", False, allow_none)


class set_capture_non_tensor_stack(_ModeSwitch):
    """Switch :func:`capture_non_tensor_stack` (function, context manager, decorator,
    ``.set()``/``.unset()``)."""

    _mode_name = "capture_non_tensor_stack"


def list_to_stack(allow_none: bool = False) -> bool | None:
    """Whether a list written into a tensordict that cannot become a tensor is stored
    as a ``NonTensorStack`` of its elements (True, the default)."""
    return _read("list_to_stack", True, allow_none)


class set_list_to_stack(_ModeSwitch):
    """Switch :func:`list_to_stack` (function, context manager, decorator,
    ``.set()``/``.unset()``)."""

    _mode_name = "list_to_stack"


def set_get_defaults_to_none(set_to_none: bool = True) -> None:
    """Whether ``td.get(missing_key)`` returns ``None`` (the default, as in 0.15.3) or
    raises a ``KeyError`` naming the key (``set_get_defaults_to_none(False)``)."""
    _STATE["get_defaults_to_none"] = bool(set_to_none)
