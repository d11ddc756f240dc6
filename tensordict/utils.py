"""Public helpers users import from ``tensordict.utils``."""

from __future__ import annotations

import numpy as np
import torch

from tensordict._keys import (  # noqa: F401  (re-exported)
    KEY_SEPARATOR,
    NestedKey,
    is_valid_key,
    unravel_key,
    unravel_key_list,
    unravel_key_to_tuple,
)
from tensordict.base import (
    NO_DEFAULT,
    TensorDictBase,
    is_tensor_collection,
)  # noqa: F401

from tensordict._parse_repr import parse_tensor_dict_string  # noqa: F401
from tensordict._linked_list import (
    LinkedList,
)  # noqa: F401  (td[key] of a NonTensorStack)

# 0.15.3's private helpers that existing code imports from here (tensordict/_compat.py)
from tensordict._repr import get_printoptions, set_printoptions  # noqa: F401
from tensordict._compat import (  # noqa: F401  (re-exported)
    Buffer,
    _default_is_leaf,
    _getitem_batch_size,
    _is_leaf_nontensor,
    _is_non_tensor,
    _is_tensorclass,
    _maybe_correct_neg_dim,
    _shape,
    _unravel_key_to_tuple,
    _zip_strict,
    is_non_tensor,
    is_seq_of_nested_key,
    is_tensorclass,
    logger,
)


def expand_right(tensor: torch.Tensor, shape) -> torch.Tensor:
    """Expand ``tensor`` to ``shape`` by adding dims on the right (not the left, as
    broadcasting does): a ``[3]`` tensor expanded to ``[3, 4]`` repeats each value,
    and a dim of size one is expanded too (``[1]`` to ``[7, 3]``). A tensordict is
    expanded along its batch dims the same way.

    >>> expand_right(torch.tensor([1.0, 2.0]), (2, 3)).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    shape = torch.Size(shape)
    if isinstance(tensor, TensorDictBase):
        bs = tensor.batch_size
        if not _expands_on_the_right(bs, shape):
            raise RuntimeError(
                f"cannot expand a tensordict of batch size {tuple(bs)} on the right "
                f"to {tuple(shape)}: its batch size must be a prefix of the target, "
                "up to dims of size one"
            )
        return tensor.reshape(bs + (1,) * (len(shape) - len(bs))).expand(shape)
    if not _expands_on_the_right(tensor.shape, shape):
        raise RuntimeError(
            f"cannot expand a tensor of shape {tuple(tensor.shape)} on the right to "
            f"{tuple(shape)}: its shape must be a prefix of the target, up to dims "
            "of size one"
        )
    view = tensor.reshape(tensor.shape + (1,) * (len(shape) - tensor.ndim))
    return view.expand(shape)


def _expands_on_the_right(shape: torch.Size, target: torch.Size) -> bool:
    return len(shape) <= len(target) and all(
        dim == want or dim == 1 for dim, want in zip(shape, target)
    )


def expand_as_right(tensor: torch.Tensor, dest: torch.Tensor) -> torch.Tensor:
    """:func:`expand_right` to the shape of ``dest`` (a tensordict's batch size).

    >>> expand_as_right(torch.tensor([1.0, 2.0]), torch.zeros(2, 3)).shape
    torch.Size([2, 3])
    """
    return expand_right(tensor, dest.shape)


class _EllipsisError(IndexError, RuntimeError):
    """More than one ``...`` in an index: an ``IndexError``, and the
    ``RuntimeError`` 0.15.3's ``convert_ellipsis_to_idx`` raised."""


def convert_ellipsis_to_idx(idx, batch_size) -> tuple:
    """``idx`` with its ``...`` replaced by the full slices it stands for, given the
    ``batch_size`` it indexes: ``(..., 0)`` on ``[3, 4, 5]`` is ``(:, :, 0)``.

    >>> convert_ellipsis_to_idx((0, ...), torch.Size([2, 3, 4]))
    (0, slice(None, None, None), slice(None, None, None))
    """
    parts = idx if isinstance(idx, tuple) else (idx,)
    if sum(part is Ellipsis for part in parts) > 1:
        raise _EllipsisError(
            f"an index can only have a single ellipsis ('...'), got {idx!r}"
        )
    consumed = sum(part is not Ellipsis and part is not None for part in parts)
    fill = (slice(None),) * max(len(batch_size) - consumed, 0)
    out = []
    for part in parts:
        out.extend(fill if part is Ellipsis else (part,))
    return tuple(out)


def assert_close(
    actual,
    expected,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    intersection: bool = False,
    msg: str = "",
    prefix: NestedKey = (),
) -> bool:
    """Assert that two tensor collections (tensordicts, tensorclasses, at any depth,
    lazy stacks included) hold close tensors at the same keys, as
    :func:`torch.testing.assert_close` does tensor by tensor; return ``True``.

    - a key that one side lacks raises ``KeyError`` ("keys in tensordicts mismatch",
      naming the keys and where); with ``intersection=True`` only the keys both sides
      have are compared;
    - values that are not close, or differ in dtype or shape, raise ``AssertionError``
      naming the full key and the root mean square of the difference ("key ('a',)
      does not match, got mse = ..."), then ``msg`` and torch's report;
    - tensors that cannot be compared at all (shapes that do not broadcast) raise
      ``RuntimeError`` ("Failed to compare key ...");
    - anything but two tensor collections raises ``TypeError``.

    Batch sizes are not compared, nor non-tensor data; ``rtol`` and ``atol`` go
    together, as for :func:`torch.testing.assert_close`. ``prefix`` is prepended to
    the keys named in errors.

    >>> td = TensorDict(a=torch.zeros(3), b=TensorDict(c=torch.ones(3)))
    >>> assert_close(td, td.clone())
    True
    """
    if not (is_tensor_collection(actual) and is_tensor_collection(expected)):
        raise TypeError(
            "assert_allclose inputs must be of TensorDict type, got "
            f"{type(actual)} and {type(expected)}: assert_close compares two "
            "tensordicts or tensorclasses (use torch.testing.assert_close for tensors)"
        )
    prefix = unravel_key_to_tuple(prefix) if prefix != () else ()
    # a tensorclass is compared through the tensordict it wraps: over a lazy stack,
    # member by member (as 0.15.3 does), members of different shapes included
    if getattr(actual, "_is_tensorclass", False):
        actual = actual._tensordict
    if getattr(expected, "_is_tensorclass", False):
        expected = expected._tensordict
    members_a = getattr(actual, "tensordicts", None)
    members_b = getattr(expected, "tensordicts", None)
    if isinstance(members_a, list) and isinstance(members_b, list):
        # two lazy stacks: member by member (their exclusive keys included, and
        # members of different shapes), the second restacked along the first's dim
        if expected.stack_dim != actual.stack_dim:
            members_b = expected.to_lazystack(actual.stack_dim).tensordicts
        if len(members_a) != len(members_b):
            raise ValueError(
                f"assert_close: the lazy stacks hold {len(members_a)} and "
                f"{len(members_b)} tensordicts (zip() argument 2 is "
                f"{'shorter' if len(members_b) < len(members_a) else 'longer'} than "
                "argument 1)"
            )
        for member_a, member_b in zip(members_a, members_b):
            assert_close(
                member_a, member_b, rtol, atol, equal_nan, intersection, msg, prefix
            )
        return True
    actual_keys = list(actual.keys())
    expected_keys = set(expected.keys())
    if not intersection:
        _check_same_keys(set(actual_keys), expected_keys, prefix)
    for key in actual_keys:
        if key not in expected_keys:
            continue
        full = prefix + (key,)
        a = actual.get(key)
        b = expected.get(key)
        if is_tensor_collection(a) and not is_non_tensor(a):
            if not is_tensor_collection(b):
                raise TypeError(
                    "assert_allclose inputs must be of TensorDict type, got "
                    f"{type(a)} and {type(b)} at key {full}"
                )
            assert_close(a, b, rtol, atol, equal_nan, intersection, msg, full)
            continue
        if not isinstance(a, torch.Tensor):
            continue  # non-tensor data is not compared
        if not isinstance(b, torch.Tensor):
            raise TypeError(
                f"assert_close: key {full} holds a tensor in the first tensordict and "
                f"a {type(b).__name__} in the second"
            )
        for part_a, part_b in _comparable_parts(a, b):
            rms = _rms_difference(part_a, part_b, full)
            try:
                torch.testing.assert_close(
                    part_a, part_b, rtol=rtol, atol=atol, equal_nan=equal_nan
                )
            except AssertionError as err:
                detail = f"key {full} does not match, got mse = {rms:4.4f}"
                if msg:
                    detail += f",\t{msg}"
                raise AssertionError(f"{detail}\n{err}") from None
    return True


def _comparable_parts(a: torch.Tensor, b: torch.Tensor) -> list:
    """The pairs of plain tensors that compare ``a`` and ``b``: themselves, or for
    two nested tensors their values and offsets (jagged; two jagged tensors built
    apart have different symbolic sizes, so they cannot be subtracted) or their
    components (strided)."""
    if not (a.is_nested and b.is_nested):
        return [(a, b)]
    if a.layout == torch.jagged and b.layout == torch.jagged:
        return [(a.values(), b.values()), (a.offsets(), b.offsets())]
    parts_a, parts_b = a.unbind(), b.unbind()
    if len(parts_a) != len(parts_b):
        raise AssertionError(
            f"nested tensors of {len(parts_a)} and {len(parts_b)} components"
        )
    return list(zip(parts_a, parts_b))


#: 0.15.3's older name of :func:`assert_close` (the same function).
assert_allclose_td = assert_close


def _check_same_keys(actual_keys: set, expected_keys: set, prefix: tuple) -> None:
    where = f" (under {prefix})" if prefix else ""
    only_actual = actual_keys - expected_keys
    if only_actual:
        raise KeyError(
            f"keys in tensordicts mismatch. The first TD has keys {only_actual} that "
            f"the second does not have{where}; pass intersection=True to compare "
            "only the keys both have."
        )
    only_expected = expected_keys - actual_keys
    if only_expected:
        raise KeyError(
            f"keys in tensordicts mismatch. The second TD has keys {only_expected} "
            f"that the first does not have{where}; pass intersection=True to compare "
            "only the keys both have."
        )


def _rms_difference(a: torch.Tensor, b: torch.Tensor, key: tuple) -> float:
    """The root mean square of ``a - b`` (in floating point, whatever the dtypes),
    for the error of :func:`assert_close`."""
    dtype = torch.promote_types(a.dtype, b.dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = torch.get_default_dtype()
    try:
        with torch.no_grad():
            diff = a.to(dtype) - b.to(device=a.device, dtype=dtype)
            return diff.abs().pow(2).mean().sqrt().item()
    except RuntimeError as err:
        raise RuntimeError(
            f"Failed to compare key {key}. Scroll up for more details: the tensors "
            f"of shapes {list(a.shape)} and {list(b.shape)} could not be compared "
            f"({err})"
        ) from err


def _pass_through_cls(cls: type) -> bool:
    """Whether entries of class ``cls`` go through ops untouched (0.15.3's helper):
    non-tensor data, and classes that say so with a ``_pass_through`` attribute."""
    return bool(getattr(cls, "_is_non_tensor", False)) or bool(
        getattr(cls, "_pass_through", False)
    )


def _pass_through(data) -> bool:
    """:func:`_pass_through_cls` of ``type(data)``."""
    return _pass_through_cls(type(data))


# The global modes and their set_* switches live in tensordict/_modes.py.
from tensordict._modes import (  # noqa: E402,F401  (re-exported)
    capture_non_tensor_stack,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
)

# 0.15.3's lock message, which existing code matches (``re.escape(_LOCK_ERROR)``);
# every lock error here leads with it.
from tensordict._errors import LOCK_PHRASE as _LOCK_ERROR  # noqa: E402,F401
from tensordict._checks import (  # noqa: E402,F401  (0.15.3's private test helper)
    _TensorDictPropertyError,
    _check_recursive_properties,
)


class implement_for:
    """Pick, among several definitions of one function, the one written for the
    installed version of a package: ``@implement_for("torch", "2.3")`` keeps the
    decorated function when torch >= 2.3 (``to_version`` is exclusive; ``None`` leaves
    a bound open). Definitions whose range does not match leave the name bound to the
    one that does, whichever order they come in; calling a name no definition matched
    raises ``ModuleNotFoundError``.

    >>> @implement_for("torch", "2.0")
    ... def f(): return "new"
    >>> @implement_for("torch", None, "2.0")
    ... def f(): return "old"
    >>> f()
    'new'
    """

    _chosen: dict = {}

    def __init__(
        self,
        module_name: str,
        from_version: str | None = None,
        to_version: str | None = None,
        *,
        class_method: bool = False,
    ) -> None:
        self.module_name = module_name
        self.from_version = from_version
        self.to_version = to_version
        self.class_method = class_method

    @staticmethod
    def _version_tuple(text: str) -> tuple:
        import re

        return tuple(int(p) for p in re.findall(r"\d+", text.split("+")[0])[:3])

    def _matches(self) -> bool:
        import importlib.metadata

        try:
            installed = importlib.metadata.version(self.module_name)
        except importlib.metadata.PackageNotFoundError:
            return False
        version = self._version_tuple(installed)
        if self.from_version is not None:
            if version < self._version_tuple(self.from_version):
                return False
        if self.to_version is not None:
            if version >= self._version_tuple(self.to_version):
                return False
        return True

    def __call__(self, func):
        import functools

        key = f"{func.__module__}.{func.__qualname__}"
        if self._matches():
            implement_for._chosen[key] = func
            return classmethod(func) if self.class_method else func
        chosen = implement_for._chosen.get(key)
        if chosen is not None:
            return classmethod(chosen) if self.class_method else chosen

        @functools.wraps(func)
        def unmatched(*args, **kwargs):
            chosen = implement_for._chosen.get(key)
            if chosen is None:
                raise ModuleNotFoundError(
                    f"{key}: no implementation for the installed version of "
                    f"{self.module_name!r}"
                )
            return chosen(*args, **kwargs)

        return classmethod(unmatched) if self.class_method else unmatched


# ------------------------------------------------------------ numpy <-> torch dtypes
# (0.15.3's public tables; the persistent backends and test helpers use them)

#: numpy dtype -> the torch dtype of the same kind and size
NUMPY_TO_TORCH_DTYPE_DICT = {
    np.dtype(name): getattr(torch, name)
    for name in (
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
}
#: torch dtype -> numpy dtype (the inverse of ``NUMPY_TO_TORCH_DTYPE_DICT``)
TORCH_TO_NUMPY_DTYPE_DICT = {t: n for n, t in NUMPY_TO_TORCH_DTYPE_DICT.items()}


# ----------------------------------------------------------------------------- dtype
# predicates: ``fn(value)`` or ``fn(key, value)`` (as ``filter``/``select`` callbacks
# pass them), testing the last argument's dtype


def _dtype_of(args, name: str):
    if not args:
        raise TypeError(
            f"{name}() takes the value to test (and optionally a key before it)"
        )
    value = args[-1]
    try:
        return value.dtype
    except AttributeError:
        raise AttributeError(
            f"'{type(value).__name__}' object has no attribute 'dtype': {name} tests "
            f"a tensor (or a tensordict), got {type(value).__name__}"
        ) from None


def is_bool(*args) -> bool:
    """Whether the last argument's dtype is ``torch.bool`` (a key may come first);
    ``AttributeError`` for a value without a dtype.

    >>> is_bool(torch.zeros(2, dtype=torch.bool)), is_bool("mask", torch.zeros(2))
    (True, False)
    """
    return _dtype_of(args, "is_bool") == torch.bool


def is_floating(*args) -> bool:
    """Whether the last argument has a floating-point dtype (not complex); a key may
    come first; ``AttributeError`` for a value without a dtype.

    >>> is_floating(torch.zeros(2)), is_floating("k", torch.zeros(2, dtype=torch.complex64))
    (True, False)
    """
    dtype = _dtype_of(args, "is_floating")
    return dtype is not None and dtype.is_floating_point


def is_inexact(*args) -> bool:
    """Whether the last argument has a floating-point or complex dtype; a key may
    come first; ``AttributeError`` for a value without a dtype.

    >>> is_inexact(torch.zeros(2, dtype=torch.complex64)), is_inexact(torch.zeros(2, dtype=torch.int64))
    (True, False)
    """
    dtype = _dtype_of(args, "is_inexact")
    return dtype is not None and (dtype.is_floating_point or dtype.is_complex)


def is_integer(*args) -> bool:
    """Whether the last argument has an integer dtype (signed or unsigned; not bool);
    a key may come first; ``AttributeError`` for a value without a dtype.

    >>> is_integer(torch.zeros(2, dtype=torch.uint8)), is_integer(torch.zeros(2, dtype=torch.bool))
    (True, False)
    """
    dtype = _dtype_of(args, "is_integer")
    return (
        dtype is not None
        and dtype != torch.bool
        and not dtype.is_floating_point
        and not dtype.is_complex
    )


# --- dropa: 0.15.3's name for the future of a return_early save or consolidation
from tensordict._futures import TensorDictFuture  # noqa: E402,F401


def print_directory_tree(path, indent: str = "", display_metadata: bool = True) -> str:
    """Log (``tensordict.utils.logger``, level INFO) and return the tree of files under
    ``path``, as ``save``/``memmap`` left it: one line per folder (``name/``) and
    file, indented by depth; ``display_metadata`` adds the total size of the files
    first. ``indent`` starts every line.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> TensorDict(a=torch.zeros(3)).memmap(folder)  # doctest: +ELLIPSIS
    TensorDict(...)
    >>> "a.memmap" in print_directory_tree(folder)
    True
    """
    import os

    root = os.fspath(path)
    lines = []
    if display_metadata:
        total = 0
        for folder, _, files in os.walk(root):
            total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
        lines.append(f"{indent}Directory size: {_human_size(total)}")

    def walk(folder: str, depth: int) -> None:
        lines.append(f"{indent}{'    ' * depth}{os.path.basename(folder) or folder}/")
        entries = sorted(os.scandir(folder), key=lambda e: (e.is_dir(), e.name))
        for entry in entries:
            if entry.is_dir():
                walk(entry.path, depth + 1)
            else:
                lines.append(f"{indent}{'    ' * (depth + 1)}{entry.name}")

    walk(root.rstrip(os.sep) or root, 0)
    for line in lines:
        logger.info(line)
    return "\n".join(lines)


def _human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} TB"


# --- gmisc: 0.15.3's file-name encoding of keys and its folder printer
from tensordict._disk import fs_decode_key, fs_encode_key  # noqa: E402


def _encode_key_for_filesystem(key: str, *, robust: bool = True) -> str:
    """The file name 0.15.3 gives ``key`` in a memory-mapped folder: unsafe characters
    (path separators, ``:*?"<>|%``, spaces, control characters) as ``%XX``; ``.``
    and ``..`` as ``%2E``s; the empty key as ``%``. ``robust=False`` gives the key
    itself (0.15.3's legacy names). The folders written here use this name where it
    is a portable ASCII name (else a hashed one), and ``meta.json`` records it.

    >>> _encode_key_for_filesystem("a/b c")
    'a%2Fb%20c'
    >>> _decode_key_from_filesystem("a%2Fb%20c")
    'a/b c'
    """
    return fs_encode_key(key) if robust else key


def _decode_key_from_filesystem(encoded_key: str) -> str:
    """The key :func:`_encode_key_for_filesystem` made ``encoded_key`` of.

    >>> _decode_key_from_filesystem("%2E%2E")
    '..'
    """
    return fs_decode_key(encoded_key)
