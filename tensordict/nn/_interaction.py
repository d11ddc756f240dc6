"""How probabilistic modules turn a distribution into a value: ``InteractionType``
and the setting that picks one (``set_interaction_type`` / ``interaction_type``)."""

from __future__ import annotations

import enum

from tensordict._modes import _ModeSwitch, _Setting

__all__ = ["InteractionType", "interaction_type", "set_interaction_type"]


class InteractionType(str, enum.Enum):
    """What a probabilistic module writes as its sample: the distribution's ``mode``,
    ``median`` or ``mean``, a ``random`` sample, or a ``deterministic`` value (the
    distribution's ``deterministic_sample`` if it has one, else its mode, else its
    mean). A string enum: ``InteractionType("mode") is InteractionType.MODE``.

    >>> InteractionType.from_str("mean")
    <InteractionType.MEAN: 'mean'>
    """

    MODE = "mode"
    MEDIAN = "median"
    MEAN = "mean"
    RANDOM = "random"
    DETERMINISTIC = "deterministic"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _missing_(cls, value):
        # the names in any case, as 0.15.3 takes them: "DETERMINISTIC", "Mean"
        if isinstance(value, str):
            lowered = value.lower()
            for member in cls:
                if member.value == lowered:
                    return member
        return None

    @classmethod
    def from_str(cls, type_str: str) -> "InteractionType":
        """The interaction type named ``type_str``, in any case (``"MODE"``,
        ``"mode"``); a ``ValueError`` "... is not a valid InteractionType" otherwise."""
        return cls(type_str)


_INTERACTION_TYPE = _Setting("interaction_type", None)


def interaction_type() -> InteractionType | None:
    """The interaction type set by the enclosing :class:`set_interaction_type` block,
    or ``None`` (each module then uses its ``default_interaction_type``).

    >>> with set_interaction_type(InteractionType.MODE):
    ...     interaction_type()
    <InteractionType.MODE: 'mode'>
    """
    return _INTERACTION_TYPE.get()


class set_interaction_type(_ModeSwitch):
    """Make probabilistic modules use ``type`` (an :class:`InteractionType` or its
    name) inside the block or the decorated function; ``None`` restores each module's
    default.

    >>> from tensordict.nn import InteractionType, interaction_type, set_interaction_type
    >>> with set_interaction_type("random"):
    ...     interaction_type()
    <InteractionType.RANDOM: 'random'>
    >>> interaction_type() is None
    True
    """

    _setting = _INTERACTION_TYPE

    def __init__(
        self,
        type: InteractionType | str | None = InteractionType.DETERMINISTIC,
        *,
        thread_local: bool = False,
    ) -> None:
        super().__init__(type, thread_local=thread_local)

    @staticmethod
    def _check(mode):
        if mode is None:
            return None
        try:
            return InteractionType(mode)
        except ValueError:
            raise ValueError(
                f"unknown interaction type {mode!r}: expected one of "
                f"{[t.value for t in InteractionType]} or None"
            ) from None
