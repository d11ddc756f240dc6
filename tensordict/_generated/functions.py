# generated from spec/attributes.yaml, spec/autograd.yaml, spec/shape.yaml, spec/binary.yaml, spec/cast.yaml, spec/device.yaml, spec/indexing.yaml, spec/loss.yaml, spec/pointwise.yaml, spec/reduction.yaml, spec/stacking.yaml by codegen/templates/functions.py.jinja; do not edit
"""The classmethod ops as functions of the ``tensordict`` package
(``tensordict.stack(tds, dim)`` is ``TensorDict.stack(tds, dim)``)."""

from __future__ import annotations

from tensordict._generated.tensordict_ops import TensorDictGeneratedOps

__all__ = ["stack", "cat"]

# ---- Stacking and concatenation (spec/stacking.yaml) ----


def stack(input, dim: int = 0, *, out=None):
    """Stack tensordicts along a new batch dim ``dim``.

    Every tensordict has the same batch size; the result has one more batch dim, of
    size ``len(input)``, at ``dim`` (which may be one past the last batch dim). Each
    leaf is ``torch.stack`` of the matching leaves.

    Example:
        >>> tds = [TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4]) for _ in range(2)]
        >>> stacked = torch.stack(tds, 1)
        >>> stacked.batch_size, stacked["key 1"].shape
        (torch.Size([3, 2, 4]), torch.Size([3, 2, 4, 5]))
        >>> torch.stack([tds[0], tds[1].exclude("key 1")], 0)
        Traceback (most recent call last):
        ...
        tensordict._errors.MismatchedKeysError: The sets of keys in the tensordicts to stack are exclusive: stack(): the tensordicts must have the same keys: key ('key 1',) is missing from tensordict 1. Consider using `LazyStackedTensorDict.maybe_dense_stack` instead
    """
    return TensorDictGeneratedOps.stack(input, dim, out=out)


def cat(input, dim: int = 0, *, out=None):
    """Concatenate tensordicts along batch dim ``dim``.

    The batch sizes agree but at ``dim``, where the result's size is the sum of
    theirs. Each leaf is ``torch.cat`` of the matching leaves.

    Example:
        >>> tds = [TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4]) for _ in range(2)]
        >>> joined = torch.cat(tds, 0)
        >>> joined.batch_size, joined["key 1"].shape
        (torch.Size([6, 4]), torch.Size([6, 4, 5]))
    """
    return TensorDictGeneratedOps.cat(input, dim, out=out)
