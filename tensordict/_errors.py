"""The messages the core raises, written once so that they read the same everywhere.

Every message names the key and says what was expected and what was found.
"""

from __future__ import annotations

import torch


def _fmt_key(key) -> str:
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    return repr(key)


def batch_mismatch(key, shape, batch_size) -> RuntimeError:
    return RuntimeError(
        f"batch dimension mismatch for key {_fmt_key(key)}: the value has shape "
        f"{tuple(shape)} but the tensordict's batch_size is {tuple(batch_size)}; "
        f"the leading dimensions of a value must equal the batch size"
    )


def key_missing(key, available) -> KeyError:
    keys = sorted(available, key=lambda k: k if isinstance(k, str) else ".".join(k))
    # a string key in double quotes, as 0.15.3 writes it (TorchRL's tests match it)
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    shown = f'"{key}"' if isinstance(key, str) else repr(key)
    return KeyError(f"key {shown} not found in TensorDict with keys {keys}")


class KeyThroughLeafError(KeyError, ValueError):
    """A nested key goes through an entry that is not a tensordict. A ``KeyError``
    here; 0.15.3 raised a ``ValueError``, so code catching either still works."""


class InplaceWriteError(ValueError, RuntimeError):
    """An in-place write whose value does not fit the stored entry. A
    ``RuntimeError`` here; 0.15.3 raised a ``ValueError`` subclass, so code catching
    either still works."""


class DimOutOfRangeError(IndexError, ValueError, RuntimeError):
    """A batch dim out of range. An ``IndexError`` here, as torch raises; 0.15.3
    raised ``ValueError`` (``transpose``), ``RuntimeError`` (``unsqueeze``,
    ``narrow``, ``cat``) or ``IndexError`` depending on the op, so code catching any
    of them still works."""


class MismatchedKeysError(KeyError, RuntimeError):
    """Tensordicts stacked or concatenated without the same keys. A ``KeyError``
    naming the key here; 0.15.3 raised ``RuntimeError``. Its text is the message
    itself, unquoted (as a ``RuntimeError``'s), so that ``re.match`` of 0.15.3's
    phrase finds it."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class MaskShapeError(RuntimeError, IndexError):
    """A boolean mask whose shape does not lead the batch size (``where``,
    ``masked_select``, ``masked_fill``). 0.15.3 raised ``RuntimeError`` from ``where``
    and ``IndexError`` from ``masked_select``: this is both."""


class NamesCountError(ValueError, IndexError):
    """As many names as batch dims were expected, and another number was given. A
    ``ValueError`` here; 0.15.3 raised ``IndexError`` (``refine_names``)."""


class OutKeyNotFoundError(KeyError, ValueError, RuntimeError):
    """``select_out_keys`` given a key the module does not write. A ``KeyError``
    here; 0.15.3 raised an error both ``ValueError`` and ``RuntimeError``."""


class SplitSizeError(ValueError, RuntimeError):
    """Split sizes that do not fit the dim. A ``ValueError`` here; 0.15.3 raised
    ``RuntimeError`` (torch's)."""


class BatchDimsError(ValueError, RuntimeError):
    """Dims that name a batch dim twice, or are no permutation of the batch dims: a
    ``ValueError``, and the ``RuntimeError`` 0.15.3 (as torch) raises."""


class InvalidIndexError(TypeError, IndexError):
    """A batch index of a type no index takes (a set, a dict). A ``TypeError`` (0.15.3's
    lazy stacks raise it), and the ``IndexError`` torch raises for a tensor."""


class OutsideRamInPlaceError(NotImplementedError, ValueError):
    """An in-place op that would restructure a container whose data lives outside RAM
    (``select``/``flatten_keys``/``unflatten_keys(inplace=True)`` of a
    ``PersistentTensorDict``). A ``NotImplementedError`` (so a ``RuntimeError``) here;
    0.15.3 raised ``NotImplementedError`` (``select``) or ``ValueError``
    (``flatten_keys``, ``unflatten_keys``): this is both."""


class PadSizeError(ValueError, RuntimeError):
    """A ``pad_size`` that is not (before, after) pairs for at most the batch dims. A
    ``ValueError`` here; 0.15.3 raises ``RuntimeError``."""


def missing_operand_key(op: str, key: tuple) -> KeyError:
    # 0.15.3's phrase first where existing code matches it, then ours
    message = f"{op}: key {key!r} is missing from the other operand"
    if op == "where":
        shown = key[0] if len(key) == 1 else key
        message = f"Key {shown} not found and no pad value provided. ({message})"
    return KeyError(message)


def different_devices(op: str, td, other, here: str, there: str) -> RuntimeError:
    """Two containers on different devices met in ``op``: torch's phrase, with a key
    (any: all of a container's entries are on its device) and both devices."""
    key = next(iter(td.keys(True, True)), None)
    name = key if not isinstance(key, tuple) or len(key) > 1 else key[0]
    return RuntimeError(
        f"{op}(): Expected all tensors to be on the same device: the entry {name!r} "
        f"(and every other) is on {td.device} in {here} but on {other.device} in "
        f"{there}; move them to one device first with .to(device)"
    )


def cannot_pin(td) -> RuntimeError:
    """``pin_memory`` of a container whose leaves are views of other data (a
    sub-tensordict, a file): 0.15.3's message, and why."""
    return RuntimeError(
        f"Cannot pin memory of a {type(td).__name__}. Call to_tensordict() before making "
        "this call: its entries are views of data it does not own (another "
        "tensordict's, or a file's), which pinning would copy away from it"
    )


def not_a_tensordict(key, value) -> KeyError:
    return KeyThroughLeafError(
        f"cannot use {_fmt_key(key)} as a nested key: the entry on the way is a "
        f"{type(value).__name__}, not a tensordict"
    )


# 0.15.3's phrases, which existing code matches with ``re.search``: each message
# below leads with the phrase and goes on to say what went wrong here.
LOCK_PHRASE = (
    "Cannot modify locked TensorDict. For in-place modification, consider "
    "using the `set_()` method and make sure the key is present."
)


def locked(action: str) -> RuntimeError:
    return RuntimeError(
        f"{LOCK_PHRASE} Here: cannot {action}, as the TensorDict is locked. Unlock "
        f"it with `unlock_()` (or `with td.unlock_(): ...`), or update existing "
        f"entries in place with `set_()`"
    )


def key_exists(key) -> KeyError:
    return KeyError(
        f"key {_fmt_key(key)} already present in TensorDict: the key already "
        f"exists (pass safe=False to replace it)"
    )


def index_batch_mismatch(indexed, batch_size, index, source) -> RuntimeError:
    """A tensordict written at an index of another whose indexed batch size it does
    not broadcast to."""
    return RuntimeError(
        f"indexed destination TensorDict batch size is {torch.Size(indexed)} "
        f"(batch_size = {torch.Size(batch_size)}, index={index!r}), which differs "
        f"from the source batch size {torch.Size(source)}: the value written at an "
        f"index must have the batch size of the indexed part (or broadcast to it)"
    )


def bool_ambiguous(kind: str = "TensorDict") -> RuntimeError:
    return RuntimeError(
        f"Converting a tensordict to boolean value is not permitted: the truth "
        f"value of a {kind} is ambiguous. Use td.is_empty() to test for entries, "
        f"or (a == b).all() / .any() to reduce a comparison"
    )


def bad_batch_size(batch_size) -> TypeError:
    return TypeError(
        f"batch_size must be an int, a sequence of ints or a torch.Size, "
        f"got {batch_size!r}"
    )


def batch_size_incompatible(key, shape, batch_size) -> RuntimeError:
    return RuntimeError(
        f"cannot set batch_size to {tuple(batch_size)}: the entry {_fmt_key(key)} "
        f"has shape {tuple(shape)}, whose leading dimensions differ"
    )


def inplace_mismatch(key, shape, target_shape) -> RuntimeError:
    return InplaceWriteError(
        f"Failed to update {_fmt_key(key)} in tensordict: "
        f"cannot update the entry {_fmt_key(key)} in place: the value has shape "
        f"{tuple(shape)}, which does not broadcast to the stored shape "
        f"{tuple(target_shape)}"
    )


def inplace_type_mismatch(key, existing, value) -> InplaceWriteError:
    # 0.15.3's phrases first (a tensorclass's, then a tensordict's): code matches them
    stored = torch.Tensor if isinstance(existing, torch.Tensor) else type(existing)
    return InplaceWriteError(
        f"Cannot update an existing entry of type {stored} with a value of type "
        f"{type(value)}. Failed to update {_fmt_key(key)} in tensordict: an in-place "
        f"write keeps the entry's type (a tensor takes tensors and numbers, non-tensor "
        f"data takes non-tensor values); set it without inplace to replace it"
    )


def keys_collide(op: str, keys) -> KeyError:
    keys = sorted(keys, key=str)
    # 0.15.3's phrase first (code matches it)
    if op == "flatten_keys":
        lead = f"Flattening keys in tensordict causes keys {keys} to collide. "
    elif op == "unflatten_keys":
        lead = (
            "Unflattening key(s) in tensordict will override an existing for "
            "unflattened key. "
        )
    else:
        lead = ""
    return KeyError(
        f"{lead}{op}: the keys {keys} would collide (two entries would get "
        f"the same key); rename one of them first"
    )


class UnknownFieldError(TypeError, AttributeError):
    """A tensorclass built with a keyword that is none of its fields: Python's
    ``TypeError`` for an unexpected keyword, and 0.15.3's ``AttributeError``."""


def unknown_fields(cls: type, given: dict) -> UnknownFieldError:
    fields = sorted(getattr(cls, "_tc_fields", ()))
    return UnknownFieldError(
        f"{cls.__name__}() got unexpected keyword arguments {sorted(given)}: "
        f"{cls.__name__} has no such field; its fields are {fields}"
    )
