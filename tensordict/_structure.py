"""The structure of a tensordict as plain data, and one contiguous layout of its leaves.

Consolidation (``tensordict/_consolidate.py``) and distribution
(``tensordict/_distributed.py``) both move a tensordict as *one block of bytes plus a
description*: the leaves packed one after another, and, beside them, what is needed to
check or rebuild the container around them. This module holds the shared pieces:

- :func:`leaf_items`: every tensor leaf with its path, in the order of ``_leaves()``;
  :func:`canonical_order` sorts them by path, so that two processes that built the same
  structure in another insertion order agree on the order of the bytes.
- :class:`Layout`: where each leaf lives in the block. Leaves are grouped by dtype (each
  group one aligned run), so that a reduction can run on a whole group at once.
- :func:`signature` / :func:`fingerprint`: the (path, dtype, shape) of every leaf as JSON
  and a 64-bit hash of it, for a receiver to check that the bytes it gets fit its leaves;
  :func:`first_difference` names the key where two signatures part.
- :func:`describe` / :func:`build`: the whole container (classes, batch sizes, names,
  devices, non-tensor values) as JSON-able data, and back, for a receiver that does not
  know the structure. Only JSON travels: nothing is unpickled, and a tensorclass is
  found again in its module if this process has imported it (never imported for it).
"""

from __future__ import annotations

import ctypes
import hashlib
import sys
import json
from typing import Any

import torch
from torch import Tensor

from tensordict._registry import container_class
from tensordict._tensorcollection import TensorCollection

__all__ = [
    "Layout",
    "advise_huge_pages",
    "aligned",
    "build",
    "copy_bytes",
    "canonical_order",
    "describe",
    "first_difference",
    "fingerprint",
    "leaf_items",
    "path_repr",
    "signature",
]

# Each dtype group starts on this boundary (bytes): any dtype's view of a group is aligned.
_ALIGN = 16


def aligned(nbytes: int) -> int:
    """``nbytes`` rounded up to the next dtype group boundary (``_ALIGN``)."""
    return -(-nbytes // _ALIGN) * _ALIGN


# Leaves of this many bytes and more are packed one ``memmove`` each (see copy_bytes).
_MEMMOVE_BYTES = 1 << 20


def copy_bytes(dst: Tensor, src: Tensor) -> None:
    """``dst.copy_(src)`` for two tensors of the same dtype and size; between
    contiguous CPU tensors one ``memmove``: torch's copy splits a large block over its
    threads, which on a busy machine costs milliseconds waiting for them (measured on
    the 2-core CI machine: 8 MB leaves pack 1.4x faster this way)."""
    if (
        dst.device.type == "cpu"
        and src.device.type == "cpu"
        and dst.is_contiguous()
        and src.is_contiguous()
    ):
        ctypes.memmove(dst.data_ptr(), src.data_ptr(), src.numel() * src.element_size())
    else:
        with torch.no_grad():
            dst.copy_(src)


def _copy(dst: Tensor, src: Tensor) -> None:
    with torch.no_grad():
        dst.copy_(src)


def _stack(dst: Tensor, run: list) -> None:
    with torch.no_grad():
        torch.stack(run, out=dst)


# Linux: ask for transparent huge pages on large fresh buffers (see advise_huge_pages)
_MADV_HUGEPAGE = 14
_HUGE_PAGE = 1 << 21
_madvise = None


def advise_huge_pages(buffer: Tensor) -> None:
    """Ask the kernel to back a fresh CPU buffer with 2 MiB pages (Linux
    ``madvise(MADV_HUGEPAGE)`` on the aligned part of it; elsewhere, or where it is
    refused, nothing changes). Filling a fresh buffer costs a page fault per 4 KiB
    page: for 64 MB, 22 of the 32 ms of packing it, against about 7 with huge pages
    (measured on the 2-core CI machine, ``docs/distributed.md``). Worth it only for
    buffers of several MiB that are filled right away."""
    global _madvise
    if _madvise is None:
        _madvise = False
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None).madvise
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                _madvise = fn
            except (OSError, AttributeError):
                pass
    if not _madvise or buffer.device.type != "cpu":
        return
    ptr = buffer.data_ptr()
    start = -(-ptr // _HUGE_PAGE) * _HUGE_PAGE
    end = (ptr + buffer.numel() * buffer.element_size()) // _HUGE_PAGE * _HUGE_PAGE
    if end > start:
        _madvise(start, end - start, _MADV_HUGEPAGE)


# ----------------------------------------------------------------------------- leaves
def leaf_items(td) -> list[tuple[tuple, Tensor]]:
    """``(path, leaf)`` for every tensor leaf, in the order of ``td._leaves()``. A path
    is a tuple of keys; a lazy stack adds the index of the stacked tensordict (an
    ``int``) before the keys inside it."""
    out: list = []
    _walk(td, (), out)
    return out


def _walk(td, prefix: tuple, out: list) -> None:
    if getattr(td, "_is_tensorclass", False):
        td = td._tensordict
    if isinstance(td, container_class("LazyStackedTensorDict")):
        for i, member in enumerate(td.tensordicts):
            _walk(member, prefix + (i,), out)
        return
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            out.append((prefix + (key,), value))
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            _walk(value, prefix + (key,), out)


def is_jagged(leaf: Tensor) -> bool:
    """A nested tensor of the jagged layout (``torch.nested.nested_tensor(...,
    layout=torch.jagged)``): its shape holds a symbolic (ragged) size, so it has no
    flat bytes of its own; a block holds its components instead."""
    return leaf.is_nested and leaf.layout is torch.jagged


def split_jagged(leaves: list) -> tuple[list, list | None]:
    """``leaves`` with each jagged nested tensor replaced by its components
    (``values``, ``offsets`` and, when it has them, ``lengths``), which the block
    holds, and the spans that :func:`join_jagged` and :func:`jagged_index` read:
    ``(start, count, ragged_dim)`` per leaf (``count`` 0: a plain leaf). ``(leaves,
    None)`` when there is none (the usual case: nothing to do)."""
    if not any(t.is_nested for t in leaves):
        return leaves, None
    flat: list = []
    spans: list = []
    for leaf in leaves:
        if is_jagged(leaf):
            parts = [leaf.values(), leaf.offsets()]
            if leaf.lengths() is not None:
                parts.append(leaf.lengths())
            spans.append((len(flat), len(parts), leaf._ragged_idx))
            flat.extend(parts)
        else:
            spans.append((len(flat), 0, None))
            flat.append(leaf)
    return flat, spans


def jagged_from_parts(parts: list, ragged_dim: int) -> Tensor:
    """The jagged nested tensor over ``parts`` (values, offsets[, lengths]): views of
    them, so that it shares their memory."""
    values, offsets = parts[0], parts[1]
    lengths = parts[2] if len(parts) > 2 else None
    return torch.nested.nested_tensor_from_jagged(
        values, offsets, lengths, jagged_dim=ragged_dim
    )


def join_jagged(views: list, spans: list | None) -> list:
    """The leaves again from the block's ``views`` (see :func:`split_jagged`)."""
    if spans is None:
        return views
    return [
        views[start]
        if not count
        else jagged_from_parts(views[start : start + count], dim)
        for start, count, dim in spans
    ]


def jagged_index(leaves: list, spans: list | None) -> dict:
    """``id(leaf)`` to what :func:`describe` records for it: its position in the
    block, or for a jagged nested tensor its components' positions and ragged dim."""
    if spans is None:
        return {id(leaf): i for i, leaf in enumerate(leaves)}
    return {
        id(leaf): start
        if not count
        else {"jagged": list(range(start, start + count)), "dim": dim}
        for leaf, (start, count, dim) in zip(leaves, spans)
    }


def _leaf_of(entry, leaves: list) -> Tensor:
    """The leaf a described entry names (see :func:`jagged_index`), checked: the
    description may come from a file."""
    if type(entry) is int:
        return leaves[entry]
    parts, dim = entry.get("jagged"), entry.get("dim")
    if (
        type(parts) is not list
        or not 2 <= len(parts) <= 3
        or not all(type(i) is int for i in parts)
        or type(dim) is not int
    ):
        raise ValueError(f"a consolidated description names a bad leaf {entry!r}")
    return jagged_from_parts([leaves[i] for i in parts], dim)


def canonical_order(paths: list) -> list[int]:
    """Indices of ``paths`` sorted by path: the order in which bytes travel."""
    return sorted(range(len(paths)), key=paths.__getitem__)


def path_repr(path: tuple) -> str:
    """A path as a user reads it: ``('next', 'obs')``, or with the stacked tensordict
    named: ``'obs' of stacked tensordict 1``."""
    keys = tuple(p for p in path if not isinstance(p, int))
    members = [p for p in path if isinstance(p, int)]
    text = repr(keys[0]) if len(keys) == 1 else repr(keys)
    if members:
        text += " of stacked tensordict " + ", ".join(str(m) for m in members)
    return text


# ----------------------------------------------------------------------------- layout
class Layout:
    """Where each leaf (given in canonical order) lives in one byte block.

    Leaves are grouped by dtype, each group one aligned run of bytes; inside a group,
    leaves of the same shape sit next to each other (ordered by shape, then by their
    canonical position), so that a run of ``n`` same-shaped leaves is one
    ``(n, *shape)`` tensor: one ``stack`` packs it and one ``unbind`` cuts it into
    views, instead of a call per leaf. ``groups`` lists ``(dtype, start, nbytes,
    runs)`` with ``runs`` a list of ``(shape, positions)``; ``offsets`` the byte offset
    of each leaf; ``nbytes`` the block's size. The layout depends only on the dtypes
    and shapes."""

    __slots__ = ("groups", "nbytes", "offsets")

    def __init__(self, dtypes: list, shapes: list) -> None:
        by_dtype: dict = {}
        for pos, dtype in enumerate(dtypes):
            by_dtype.setdefault(dtype, []).append(pos)
        groups = []
        offsets = [0] * len(dtypes)
        start = 0
        for dtype in sorted(by_dtype, key=str):
            by_shape: dict = {}
            for pos in by_dtype[dtype]:
                by_shape.setdefault(tuple(shapes[pos]), []).append(pos)
            itemsize = dtype.itemsize
            offset = start
            runs = []
            for shape in sorted(by_shape):
                positions = by_shape[shape]
                numel = 1
                for d in shape:
                    numel *= d
                for pos in positions:
                    offsets[pos] = offset
                    offset += numel * itemsize
                runs.append((torch.Size(shape), positions, numel))
            groups.append((dtype, start, offset - start, runs))
            start = aligned(offset)
        self.groups = groups
        self.offsets = offsets
        self.nbytes = start

    @classmethod
    def of(cls, leaves: list) -> "Layout":
        return cls([t.dtype for t in leaves], [t.shape for t in leaves])

    def views(self, block: Tensor) -> list[Tensor]:
        """One view of ``block`` (1-D ``uint8``) per leaf, in canonical order."""
        out: list = [None] * len(self.offsets)
        for (dtype, start, nbytes, runs), region in zip(
            self.groups, self.regions(block)
        ):
            parts = region.split([len(pos) * numel for _, pos, numel in runs])
            for (shape, positions, _), part in zip(runs, parts):
                if len(positions) == 1:
                    out[positions[0]] = part.view(shape)
                else:
                    for p, view in zip(positions, part.view(-1, *shape).unbind(0)):
                        out[p] = view
        return out

    def zero_padding(self, block: Tensor) -> None:
        """Zero the bytes between dtype groups (alignment padding), which no leaf
        writes: two consolidations of the same leaves give the same bytes."""
        for dtype, start, nbytes, _ in self.groups:
            end = start + nbytes
            pad = min(aligned(end), self.nbytes) - end
            if pad > 0:
                block[end : end + pad].zero_()

    def regions(self, block: Tensor) -> list[Tensor]:
        """One typed 1-D view of ``block`` per dtype group (what reductions run on)."""
        return [
            block[start : start + nbytes].view(dtype)
            for dtype, start, nbytes, _ in self.groups
        ]

    def pack(self, leaves: list, block: Tensor, pool=None, pieces: int = 1) -> None:
        """Copy ``leaves`` (canonical order) into ``block``: one ``stack`` per run of
        same-shaped small leaves, one :func:`copy_bytes` per large leaf. With ``pool``
        (an executor), the copies are spread over its threads, each run stacked in
        ``pieces`` parts (both kinds of copy release the GIL)."""
        jobs = []
        with torch.no_grad():
            for (dtype, start, nbytes, runs), region in zip(
                self.groups, self.regions(block)
            ):
                parts = region.split([len(pos) * numel for _, pos, numel in runs])
                for (shape, positions, numel), part in zip(runs, parts):
                    run = [leaves[p] for p in positions]
                    if run[0].device != part.device:
                        run = [t.to(part.device) for t in run]
                    if numel * dtype.itemsize >= _MEMMOVE_BYTES:
                        for leaf, into in zip(run, part.view(-1, *shape).unbind(0)):
                            jobs.append((copy_bytes, into, leaf))
                    elif len(run) == 1:
                        jobs.append((_copy, part.view(shape), run[0]))
                    else:
                        into = part.view(-1, *shape)
                        step = -(-len(run) // pieces)
                        for i in range(0, len(run), step):
                            jobs.append((_stack, into[i : i + step], run[i : i + step]))
        if pool is None or len(jobs) < 2:
            for copy, into, source in jobs:
                copy(into, source)
        else:
            for future in [pool.submit(*job) for job in jobs]:
                future.result()

    def unpack(self, block: Tensor, leaves: list) -> None:
        """Copy ``block`` into ``leaves`` (canonical order), in place."""
        views = self.views(block)
        with torch.no_grad():
            torch._foreach_copy_(leaves, views)

    def holds(self, block: Tensor, leaves: list) -> bool:
        """Whether ``leaves`` are exactly this layout's views of ``block``."""
        base = block.data_ptr()
        if block.numel() < self.nbytes:
            return False
        device = block.device
        for leaf, offset in zip(leaves, self.offsets):
            if leaf.data_ptr() - base != offset or not leaf.is_contiguous():
                return False
            if leaf.device != device:
                return False
        return True


# ----------------------------------------------------------------------------- checks
def signature(paths: list, leaves: list) -> bytes:
    """The (path, dtype, shape) of each leaf, in the order given, as JSON bytes."""
    return json.dumps(
        [
            [list(path), str(leaf.dtype)[6:], list(leaf.shape)]
            for path, leaf in zip(paths, leaves)
        ],
        separators=(",", ":"),
    ).encode()


def fingerprint(sig: bytes) -> int:
    """A 64-bit hash of a signature (the same in every process)."""
    return int.from_bytes(
        hashlib.blake2b(sig, digest_size=8).digest(), "little", signed=True
    )


def first_difference(mine: bytes, theirs: bytes) -> str | None:
    """Where two signatures part, said from the side of ``mine`` (None if equal)."""
    own = {tuple(p): (d, s) for p, d, s in json.loads(mine)}
    other = {tuple(p): (d, s) for p, d, s in json.loads(theirs)}
    for path in sorted(set(own) | set(other), key=lambda p: [str(x) for x in p]):
        if path not in other:
            return (
                f"the key {path_repr(path)} is here but the other side has no such leaf"
            )
        if path not in own:
            d, s = other[path]
            return (
                f"the key {path_repr(path)} (dtype {d}, shape {tuple(s)}) is missing "
                f"here"
            )
        (d0, s0), (d1, s1) = own[path], other[path]
        if d0 != d1:
            return f"the key {path_repr(path)} has dtype {d0} here but {d1} there"
        if s0 != s1:
            return (
                f"the key {path_repr(path)} has shape {tuple(s0)} here but "
                f"{tuple(s1)} there"
            )
    if mine != theirs:
        return "the leaves are the same but in another order"
    return None


# ----------------------------------------------------------------------------- rebuild
_JSON_SCALARS = (str, int, float, bool, type(None))


def describe(td, leaf_index: dict) -> dict:
    """The container ``td`` as JSON-able data. ``leaf_index`` maps ``id(leaf)`` to the
    leaf's position in the block's order; leaves are named by that position."""
    if getattr(td, "_is_tensorclass", False):
        cls = type(td)
        return {
            "kind": "tensorclass",
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "inner": describe(td._tensordict, leaf_index),
        }
    if isinstance(td, container_class("LazyStackedTensorDict")):
        return {
            "kind": "lazy",
            "stack_dim": td.stack_dim,
            "stack_dim_name": td._stack_dim_name,
            "members": [describe(m, leaf_index) for m in td.tensordicts],
        }
    entries = []
    for key, value in td._own_items():
        if isinstance(value, Tensor):
            entries.append([key, {"leaf": leaf_index[id(value)]}])
        elif isinstance(value, container_class("NonTensorStack")):
            entries.append(
                [
                    key,
                    {"stack": _json_value(key, value.tolist()), "names": value._names},
                ]
            )
        elif isinstance(value, TensorCollection) and not value._is_non_tensor:
            entries.append([key, describe(value, leaf_index)])
        else:
            entries.append([key, {"value": _json_value(key, value)}])
    names = getattr(td, "_names", None)
    return {
        "kind": "dict",
        "batch_size": list(td.batch_size),
        "device": None if td.device is None else str(td.device),
        "names": None if names is None else list(names),
        "entries": entries,
    }


def _json_value(key, value):
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"the non-tensor entry {key!r} holds a {type(value).__name__}, which cannot "
            f"travel as data: only JSON values (str, numbers, bools, None, lists and "
            f"dicts of them) do, so that the receiver never unpickles. Convert it, or "
            f"exclude the key before moving the tensordict"
        ) from None
    return value


def build(tree: dict, leaves: list, device=None, *, set_device: bool = False):
    """The container that :func:`describe` described, holding ``leaves`` (block order).
    ``device`` (where the leaves are) replaces the recorded devices; with
    ``set_device`` it is given to containers that had none too."""
    kind = tree["kind"]
    if kind == "tensorclass":
        inner = build(tree["inner"], leaves, device, set_device=set_device)
        cls = _import_class(tree["class"])
        return inner if cls is None else cls._from_td(inner)
    if kind == "lazy":
        members = [
            build(m, leaves, device, set_device=set_device) for m in tree["members"]
        ]
        return container_class("LazyStackedTensorDict")._new_unsafe(
            members,
            tree["stack_dim"],
            batch_size=None,
            stack_dim_name=tree["stack_dim_name"],
        )
    storage = {}
    for key, entry in tree["entries"]:
        if "leaf" in entry:
            storage[key] = _leaf_of(entry["leaf"], leaves)
        elif "value" in entry:
            storage[key] = entry["value"]
        elif "stack" in entry:
            storage[key] = container_class("NonTensorStack").from_list(
                entry["stack"], names=entry["names"]
            )
        else:
            storage[key] = build(entry, leaves, device, set_device=set_device)
    dev = None if tree["device"] is None else torch.device(tree["device"])
    if device is not None and (dev is not None or set_device):
        dev = torch.device(device)
    return container_class("TensorDict")._from_storage(
        storage, torch.Size(tree["batch_size"]), dev, tree["names"]
    )


def _import_class(path: str):
    """The tensorclass named ``module:qualname``, or None where this process has not
    imported its module (the data then arrives as the TensorDict it wraps). A module is
    never imported on behalf of received or unpickled data: that would run its code."""
    module_name, _, qualname = path.partition(":")
    try:
        obj = sys.modules[module_name]
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (KeyError, AttributeError):
        return None
    if not getattr(obj, "_is_tensorclass", False):
        return None
    return obj
