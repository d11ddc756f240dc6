"""Tensorclass options: ``TensorClass["nocast", "frozen"]`` and the keywords of
``@tensorclass(...)`` and of the class statement.

- ``shadow``: a field may take the name of a tensorclass member;
- ``nocast``: values of tensor-annotated fields are kept as given (numbers stay numbers);
- ``autocast``: values are cast to the field's annotated type (``int``, ``float``,
  ``bool``, ``str``, ``torch.Tensor``) when they are not of it already;
- ``tensor_only``: every field must be annotated as a tensor, a tensordict or a
  tensorclass (or be an optional one); values are converted to tensors, mappings
  (``dict``, ``UserDict``, nested ones too) to ``TensorDict``;
- ``frozen``: fields cannot be reassigned (``dataclasses.FrozenInstanceError``) and the
  instance is locked once built;
- ``skip_post_init_on_rebuild``: accepted (this project never calls ``__post_init__``
  when an op rebuilds an instance).

``autocast`` and ``nocast`` exclude each other. Options are inherited by subclasses.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensordict._tensorcollection import TensorCollection

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
    if "tensor_only" in options and ("nocast" in options or "autocast" in options):
        raise TypeError(
            "the tensorclass option tensor_only excludes nocast and autocast: "
            "tensor_only converts every value to a tensor"
        )
    if "autocast" in options and "nocast" in options:
        raise TypeError(
            "the tensorclass options autocast and nocast exclude each other: autocast "
            "casts every value to its field's type, nocast keeps values as given"
        )
    return frozenset(options)


_LEGACY_TENSOR_TYPE = type(torch.IntTensor)  # the metaclass of torch.IntTensor & co
_TENSOR_NAMES = ("Tensor", "TensorDict", "TensorDictBase", "None", "NoneType")


def _is_tensor_type(candidate) -> bool:
    """A tensor type (``torch.Tensor``, a subclass, a legacy ``torch.IntTensor``) or a
    tensor collection type (tensordict, tensorclass)."""
    if candidate is None or candidate is type(None):
        return True
    if isinstance(candidate, _LEGACY_TENSOR_TYPE):  # torch.IntTensor, LongTensor...
        return True
    return isinstance(candidate, type) and issubclass(
        candidate, (Tensor, TensorCollection)
    )


def _is_tensor_annotation(annotation, namespace: dict) -> bool:
    """A tensor or tensor collection type, None, a union of these, or a generic of
    one (``TensorDict[str, Tensor]``); a string annotation is read by name."""
    if isinstance(annotation, str):
        return _is_tensor_text(annotation, namespace)
    if _is_tensor_type(annotation):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return all(
            _is_tensor_annotation(arg, namespace) for arg in typing.get_args(annotation)
        )
    if origin is not None:  # a generic alias: its class decides
        return _is_tensor_type(origin)
    return False


# a generic with its parameters, not Optional[...] or Union[...]: TensorDict[str, T]
_GENERIC = re.compile(r"(?<![\w.])((?!Optional|Union)[\w.]+)\[[^\[\]]*\]")


def _is_tensor_text(text: str, namespace: dict) -> bool:
    """:func:`_is_tensor_annotation` of an annotation left as text (a forward
    reference, or ``from __future__ import annotations`` with names that cannot be
    resolved): ``Optional[...]``, ``Union[...]`` and ``|`` are split, a generic's
    parameters dropped, and each name must be a tensor type, a tensordict or
    tensorclass name, or None."""
    text = text.replace(" ", "")
    while True:  # drop the parameters of generics: TensorDict[str,Tensor] -> TensorDict
        reduced = _GENERIC.sub(r"\1", text)
        if reduced == text:
            break
        text = reduced
    names = [
        n for n in re.split(r"[|\[\],]", text) if n and n not in ("Optional", "Union")
    ]
    for name in names:
        short = name.rsplit(".", 1)[-1]
        if short in _TENSOR_NAMES or (
            name.startswith("torch.") and short.endswith("Tensor")
        ):
            continue
        if _is_tensor_type(namespace.get(name)) and namespace.get(name) is not None:
            continue
        return False
    return True


def check_tensor_only(cls_name: str, hints: dict, field_names, namespace=None) -> None:
    """``tensor_only`` classes: every field annotated as a tensor or tensor collection
    (or an optional one); ``namespace`` resolves annotations left as text."""
    namespace = namespace or {}
    for name in field_names:
        annotation = hints.get(name)
        if not _is_tensor_annotation(annotation, namespace):
            raise TypeError(
                f"{cls_name}: tensor_only requires types to be Tensor, "
                f"Tensor-subtrypes or None: the field {name!r} is annotated "
                f"{annotation!r} (a tensor_only tensorclass takes torch.Tensor and its "
                f"subtypes, tensordict and tensorclass types, or Optional[...] of one)"
            )


_CASTS = (bool, int, float, str)


def cast_target(annotation) -> Any:
    """The type ``autocast`` converts a field's values to (None: left as given):
    ``Any`` casts what makes a tensor (numbers, lists) to one, as 0.15.3 does."""
    if annotation is Any or annotation == "Any":
        return Any
    if isinstance(annotation, type) and (
        annotation in _CASTS
        or issubclass(annotation, Tensor)
        or annotation is np.ndarray
    ):
        return Tensor if issubclass(annotation, Tensor) else annotation
    return None


def autocast(value: Any, target: Any) -> Any:
    """``value`` as ``target`` (``int(2.5)``, ``int(tensor(3))``, ``str(2)``, a tensor
    from a number or list, an array); unchanged when it already is one or cannot be
    cast."""
    if target is Any:  # a number, a bool or a list of them becomes a tensor
        if isinstance(value, (bool, int, float, complex, list, tuple)):
            try:
                return torch.as_tensor(value)
            except (TypeError, ValueError, RuntimeError):
                return value
        return value
    if value is None or isinstance(value, target):
        return value
    if target is np.ndarray:
        try:
            return np.asarray(
                value.numpy(force=True) if isinstance(value, Tensor) else value
            )
        except (TypeError, ValueError, RuntimeError):
            return value
    if target is Tensor:
        try:
            return torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError) as err:
            # 0.15.3 raises TypeError for a value of a tensor field that makes no tensor
            raise TypeError(
                f"autocast: a field annotated torch.Tensor cannot hold the "
                f"{type(value).__name__} {value!r}: it does not convert to a tensor "
                f"({err})"
            ) from None
    if isinstance(value, Tensor):
        value = value.item() if value.numel() == 1 else value.tolist()
        if isinstance(value, target):
            return value
    try:
        return target(value)
    except (TypeError, ValueError):
        return value
