"""Tensorclass options: ``TensorClass["nocast", "frozen"]`` and the keywords of
``@tensorclass(...)`` and of the class statement.

- ``shadow``: a field may take the name of a tensorclass member;
- ``nocast``: values of tensor-annotated fields are kept as given (numbers stay numbers);
- ``autocast``: values are cast to the field's annotated type (``int``, ``float``,
  ``bool``, ``str``, ``torch.Tensor``) when they are not of it already;
- ``tensor_only``: every field must be annotated as a tensor (or be optional one); values
  are converted to tensors;
- ``frozen``: fields cannot be reassigned (``dataclasses.FrozenInstanceError``) and the
  instance is locked once built;
- ``skip_post_init_on_rebuild``: accepted (this project never calls ``__post_init__``
  when an op rebuilds an instance).

``autocast`` and ``nocast`` exclude each other. Options are inherited by subclasses.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import torch
from torch import Tensor

FLAGS = (
    "autocast",
    "nocast",
    "frozen",
    "tensor_only",
    "shadow",
    "skip_post_init_on_rebuild",
)


def are_flags(flags) -> bool:
    """True when the subscript of ``cls[...]`` is strings (options), not types."""
    parts = flags if isinstance(flags, tuple) else (flags,)
    return all(isinstance(part, str) for part in parts)


def parse_flags(flags) -> frozenset:
    """The options named by the subscript of ``TensorClass[...]``."""
    if isinstance(flags, str):
        flags = (flags,)
    flags = tuple(flags)
    unknown = [f for f in flags if f not in FLAGS]
    if unknown or not flags:
        raise TypeError(
            f"TensorClass[...] takes class options, one or more of {FLAGS}; "
            f"got {flags!r}. TensorClass is not a generic class"
        )
    return frozenset(flags)


def merge(inherited: frozenset, **keywords: bool) -> frozenset:
    """``inherited`` options plus the keywords set to True; checked."""
    options = set(inherited) | {name for name, on in keywords.items() if on}
    if "autocast" in options and "nocast" in options:
        raise TypeError(
            "the tensorclass options autocast and nocast exclude each other: autocast "
            "casts every value to its field's type, nocast keeps values as given"
        )
    return frozenset(options)


def _is_tensor_annotation(annotation) -> bool:
    if annotation is None or annotation is type(None):
        return True
    if isinstance(annotation, type):
        return issubclass(annotation, Tensor)
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return all(_is_tensor_annotation(arg) for arg in typing.get_args(annotation))
    if isinstance(annotation, str):
        return annotation.replace("torch.", "") in ("Tensor", "Tensor | None")
    return False


def check_tensor_only(cls_name: str, hints: dict, field_names) -> None:
    """``tensor_only`` classes: every field annotated as a tensor (or optional one)."""
    for name in field_names:
        annotation = hints.get(name)
        if not _is_tensor_annotation(annotation):
            raise TypeError(
                f"{cls_name}: the field {name!r} is annotated {annotation!r}, but a "
                f"tensor_only tensorclass takes only fields annotated torch.Tensor "
                f"(or Optional[torch.Tensor])"
            )


_CASTS = (bool, int, float, str)


def cast_target(annotation) -> type | None:
    """The type ``autocast`` converts a field's values to (None: left as given)."""
    if isinstance(annotation, type) and (
        annotation in _CASTS or issubclass(annotation, Tensor)
    ):
        return Tensor if issubclass(annotation, Tensor) else annotation
    return None


def autocast(value: Any, target: type) -> Any:
    """``value`` as ``target`` (``int(2.5)``, ``int(tensor(3))``, ``str(2)``, a tensor
    from a number or list); unchanged when it already is one or cannot be cast."""
    if value is None or isinstance(value, target):
        return value
    if target is Tensor:
        try:
            return torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            return value
    if isinstance(value, Tensor):
        value = value.item() if value.numel() == 1 else value.tolist()
        if isinstance(value, target):
            return value
    try:
        return target(value)
    except (TypeError, ValueError):
        return value
