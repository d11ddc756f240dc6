"""The stacking family (spec/stacking.yaml): the rules of ``stack`` and ``cat`` (they
get the input tensordicts), the stacked leaves, and the non-tensor entries of stacked
tensordicts (tensordict/tensorclass.py).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch

import tensordict.base as _base
from tensordict import _errors
from tensordict._ops.batch_shape import batch_dim
from tensordict._ops.indexing import dense_class
from tensordict._registry import container_class


def stack_inputs(input: Any, op: str) -> list:
    """The tensordicts of a stacking op's ``input`` (a sequence of them), checked."""
    if _base.is_tensor_collection(input) or isinstance(input, torch.Tensor):
        raise TypeError(
            f"{op}(): expected a sequence of tensordicts, got one "
            f"{type(input).__name__}"
        )
    tds = list(input)
    if not tds:
        raise ValueError(f"{op}(): expected a non-empty sequence of tensordicts")
    if all(_base.is_tensor_collection(kind) for kind in {type(td) for td in tds}):
        return tds  # one check per class of item (the items are mostly of one)
    for i, td in enumerate(tds):
        if not _base.is_tensor_collection(td):
            raise TypeError(
                f"{op}(): item {i} is a {type(td).__name__}, not a tensordict; every "
                "item must be a tensor collection"
            )
    return tds


def stack_rule(input: Any, dim: Any, op: str):
    """stack: ``(input, dim, new_batch_size)``; every tensordict has the same batch
    size, and ``dim`` may also be one past the last batch dim."""
    dense = dense_class()
    if type(input) in (list, tuple) and input and type(input[0]) is dense:
        # the common call, a list of dense tensordicts: their classes, batch sizes
        # and devices read in one pass (a stack of 64 small tensordicts on a GPU spent
        # a fifth of its time beyond the loop's here)
        try:
            seen = {(type(td), td._batch_size, td._device) for td in input}
        except AttributeError:  # an item of another kind: the general path below
            seen = ()
        if len(seen) == 1:
            bs = input[0]._batch_size
            d = batch_dim(dim, bs, op, extra=1)
            return list(input), d, bs[:d] + (len(input),) + bs[d:]
    tds = stack_inputs(input, op)
    _same_device(tds, op)
    bs = tds[0].batch_size
    if len({td.batch_size for td in tds}) == 1:
        d = batch_dim(dim, bs, op, extra=1)
        return tds, d, bs[:d] + (len(tds),) + bs[d:]
    for i, td in enumerate(tds):
        if td.batch_size != bs:
            # 0.15.3's phrase first (for stack; code matches it), then ours
            lead = (
                "stacking tensordicts requires them to have congruent batch sizes: "
                if op == "stack"
                else ""
            )
            raise RuntimeError(
                f"{lead}{op}(): every tensordict must have the same batch_size; "
                f"tensordict {i} has {list(td.batch_size)} but tensordict 0 has "
                f"{list(bs)} (LazyStackedTensorDict.lazy_stack stacks tensordicts of "
                f"different batch sizes)"
            )
    d = batch_dim(dim, bs, op, extra=1)
    return tds, d, bs[:d] + (len(tds),) + bs[d:]


def _same_device(tds: list, op: str) -> None:
    """Tensordicts on different devices cannot be joined: an error naming a key."""
    devices = {td.device for td in tds}
    if len(devices) > 1 and None not in devices:
        first = tds[0]
        for i, td in enumerate(tds):
            if td.device != first.device:
                raise _errors.different_devices(
                    op, first, td, "tensordict 0", f"tensordict {i}"
                )


def cat_rule(input: Any, dim: Any, op: str):
    """cat: ``(input, dim, new_batch_size)``; the batch sizes agree but at ``dim``."""
    tds = stack_inputs(input, op)
    _same_device(tds, op)
    bs = tds[0].batch_size
    d = batch_dim(dim, bs, op)
    total = 0
    for i, td in enumerate(tds):
        other = td.batch_size
        if (
            len(other) != len(bs)
            or other[:d] != bs[:d]
            or other[d + 1 :] != bs[d + 1 :]
        ):
            lazy = any(hasattr(t, "tensordicts") for t in tds)
            raise RuntimeError(
                # 0.15.3's phrase first where a lazy stack takes part
                (
                    f"{op} along a dim requires all inputs to have the same number "
                    f"of stacked tensordicts (and batch sizes) at the other dims. "
                    if lazy
                    else ""
                )
                + f"{op}(): the batch sizes must agree but at dim {d}; tensordict {i} "
                f"has {list(other)} but tensordict 0 has {list(bs)}"
            )
        total += other[d]
    return tds, d, bs[:d] + (total,) + bs[d + 1 :]


def stacked_leaves(tds: list, leaves: list, op: str) -> list:
    """For each leaf of ``tds[0]`` (``leaves``), the matching leaf of every
    tensordict; a key that one of them lacks (or has alone) raises KeyError naming it
    and the tensordict."""
    if len(tds) == 1:
        return [(x,) for x in leaves]
    dense = dense_class()
    if {type(td) for td in tds} == {dense}:
        out: list = []
        if _dense_columns([td._tensordict for td in tds], out, dense):
            return out  # else a key differs: the general path names it
    first = tds[0]
    columns = [leaves]
    for i, td in enumerate(tds[1:], 1):
        try:
            columns.append(first._operand_leaves(td, op))
        except (KeyError, TypeError) as err:
            message = str(err.args[0] if err.args else err)
            message = message.replace(f"{op}: ", "", 1)
            message = message.replace("the other operand", f"tensordict {i}")
            message = message.replace("this tensordict", "tensordict 0")
            if isinstance(err, KeyError):
                if op == "stack":  # 0.15.3's phrase leads (TorchRL matches it)
                    raise _errors.MismatchedKeysError(
                        "The sets of keys in the tensordicts to stack are exclusive: "
                        f"stack(): the tensordicts must have the same keys: {message}. "
                        "Consider using `LazyStackedTensorDict.maybe_dense_stack` "
                        "instead"
                    ) from None
                raise _errors.MismatchedKeysError(
                    f"{op}(): the tensordicts must have the same keys: {message}"
                ) from None
            # an entry that is a tensor in one and a tensordict in the other:
            # torch's phrase for an op no handler implements leads (0.15.3 let
            # torch raise it, and existing code matches it)
            raise TypeError(
                f"no implementation found for {op}() of these tensordicts: {message}"
            ) from None
    return list(zip(*columns))


def _dense_columns(storages: list, out: list, dense) -> bool:
    """The leaves of dense tensordicts with the same keys, matched key by key (in the
    first one's order); False when a key or an entry's kind differs."""
    first = storages[0]
    n = len(first)
    for storage in storages:
        if len(storage) != n:
            return False
    for key, value in first.items():
        try:
            values = [storage[key] for storage in storages]
        except KeyError:
            return False
        if isinstance(value, torch.Tensor):
            # the other values are not checked one by one (a quarter of a stack's
            # time on a GPU for 64 tensordicts of 20 leaves): a non-tensor among them
            # makes torch.stack raise its TypeError
            if not _base.is_unbatched(value):  # an UnbatchedTensor is not stacked
                out.append(values)
            else:  # the first one's is kept: say so when the others differ
                _warn_unbatched_differ(key, values)
        elif type(value) is dense:
            for v in values:
                if type(v) is not dense:
                    return False
            if not _dense_columns([v._tensordict for v in values], out, dense):
                return False
        elif isinstance(value, _base.TensorDictBase):
            return False
        else:
            for v in values:
                if isinstance(v, (torch.Tensor, _base.TensorDictBase)):
                    return False
    return True


def _warn_unbatched_differ(key, values: list) -> None:
    """Stacking keeps the first tensordict's UnbatchedTensor at ``key``: warn, in
    0.15.3's words, when another one's data is elsewhere (it is dropped)."""
    first = values[0]
    if any(
        v.data_ptr() != first.data_ptr() or v.shape != first.shape for v in values[1:]
    ):
        warnings.warn(
            f"UnbatchedTensor entries at key {key!r} have different data storage "
            f"across the stacked tensordicts: the result keeps the first one's",
            UserWarning,
            stacklevel=4,
        )


def explain_stack_error(tds: list, op: str, err: Exception) -> None:
    """After ``op`` (``stack``/``cat``) of dense tensordicts failed inside torch (their
    tensor entries are not checked one by one beforehand, see :func:`_dense_columns`):
    raise a TypeError naming the first key whose entry is a tensor in the first
    tensordict and something else in another; return when there is none."""
    dense = dense_class()
    if len(tds) < 2 or {type(td) for td in tds} != {dense}:
        return
    _explain(tuple(), [td._tensordict for td in tds], op, err, dense)


def _explain(prefix: tuple, storages: list, op: str, err: Exception, dense) -> None:
    for key, value in storages[0].items():
        path = prefix + (key,)
        values = [storage.get(key) for storage in storages]
        if isinstance(value, torch.Tensor):
            for i, v in enumerate(values):
                if not isinstance(v, torch.Tensor):
                    name = path[0] if len(path) == 1 else path
                    raise TypeError(
                        f"{op}(): the entry {name!r} is a tensor in tensordict 0 but a "
                        f"{type(v).__name__} in tensordict {i}; stacked tensordicts "
                        "hold the same kind of entry at each key"
                    ) from err
        elif type(value) is dense and all(type(v) is dense for v in values):
            _explain(path, [v._tensordict for v in values], op, err, dense)


def explain_stack_shapes(tds: list, op: str, err: Exception) -> None:
    """After ``stack`` of dense tensordicts failed inside torch: where two of them
    hold tensors of different shapes at one key, raise a RuntimeError naming the key
    and the shapes, led by 0.15.3's phrase (TorchRL's rollout matches it to tell that
    an environment's specs are dynamic); return when there is none."""
    dense = dense_class()
    if op != "stack" or len(tds) < 2 or {type(td) for td in tds} != {dense}:
        return
    if len({td.batch_size for td in tds}) != 1:
        return  # the batch sizes differ: the rule's own error says so
    found = _first_shape_mismatch(tuple(), [td._tensordict for td in tds], dense)
    if found is not None:
        key, first, other = found
        name = key[0] if len(key) == 1 else key
        raise RuntimeError(
            f"The shapes of the tensors to stack is incompatible: {other} vs {first} "
            f"for key {name}. Stacked tensordicts hold tensors of the same shape at "
            "each key; lazy_stack() keeps tensors of different shapes"
        ) from err


def _first_shape_mismatch(prefix: tuple, storages: list, dense):
    for key, value in storages[0].items():
        path = prefix + (key,)
        values = [storage.get(key) for storage in storages]
        if isinstance(value, torch.Tensor):
            for v in values[1:]:
                if isinstance(v, torch.Tensor) and v.shape != value.shape:
                    return path, value.shape, v.shape
        elif type(value) is dense and all(type(v) is dense for v in values):
            found = _first_shape_mismatch(path, [v._tensordict for v in values], dense)
            if found is not None:
                return found
    return None


def _has_non_tensor(td, dense) -> bool:
    """Whether a dense tensordict holds non-tensor data at any depth."""
    for value in td._tensordict.values():
        if isinstance(value, torch.Tensor):
            continue
        if type(value) is dense:
            if _has_non_tensor(value, dense):
                return True
            continue
        return True
    return False


def lazy_view(td: Any, op: Callable, name: str | None = None) -> Any:
    """Under set_lazy_legacy(True): ``op`` (a batch-shape op, named ``name``) as a lazy
    view of ``td`` whose writes go through to it."""
    return container_class("LazyViewTensorDict")._of(td, op, name)


def lazy_stack(input: Any, dim: int, *, out: Any = None) -> Any:
    """Under set_lazy_legacy(True): a LazyStackedTensorDict of ``input``."""
    return container_class("LazyStackedTensorDict").lazy_stack(input, dim, out=out)


# ---- non-tensor entries of stacked tensordicts (tensordict/tensorclass.py) -------------


def stack_non_tensor(input: list, out: Any, dim: int, op: str) -> Any:
    """``out``, rebuilt from ``input[0]`` by a stacking op ``op`` along ``dim``, with
    each non-tensor entry made the stack of the inputs' entries: one value where they
    are all the same, a ``NonTensorStack`` where they differ."""
    first = input[0]
    dense = dense_class()
    if type(first) is dense and not _has_non_tensor(first, dense):
        return out  # nothing to merge
    return container_class("NonTensorStack")._stack_entries(input, out, dim, op)
