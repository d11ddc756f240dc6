"""``UnbatchedTensor``: a tensor a tensordict holds without batch dims.

A leaf such as a shared table or a per-environment constant does not share the batch
dims of its tensordict. Wrapped in ``UnbatchedTensor``, it may have any shape, and the
ops that act on the batch dims (indexing, ``reshape``/``view``, ``unsqueeze``/
``squeeze``, ``permute``/``transpose``, ``expand``, ``flatten``/``unflatten``,
``stack``/``cat``, ``split``/``unbind``, reductions over batch dims...) leave it as it
is, while the elementwise ones (arithmetic, ``to``, ``clone``, ``apply``...) apply to it
as to any leaf, as in 0.15.3.

The containers find such leaves by the class attribute ``_pass_through`` (a tensor
subclass of 0.15.3's kind may set it too): :func:`is_unbatched`. The generated ops
with a batch rule collect their leaves with ``_batched_leaves_and_rebuild``, which
leaves these out and puts them back unchanged.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


class UnbatchedTensor(Tensor):
    """A tensor exempt from the batch-dim ops of the tensordict holding it.

    >>> import torch
    >>> from tensordict import TensorDict, UnbatchedTensor
    >>> td = TensorDict(a=torch.zeros(3, 4), table=UnbatchedTensor(torch.ones(5)), batch_size=[3, 4])
    >>> td[0]["table"].shape, td.reshape(-1).batch_size
    (torch.Size([5]), torch.Size([12]))
    """

    _pass_through = True

    @staticmethod
    def __new__(cls, data, *args, **kwargs):
        data = data if isinstance(data, Tensor) else torch.as_tensor(data, *args, **kwargs)
        return Tensor._make_subclass(cls, data, data.requires_grad)

    @property
    def batch_size(self) -> torch.Size:
        """The batch size of the tensordict it was read from (as in 0.15.3, where
        this metadata follows the tensordict through its ops), ``torch.Size([])``
        before it was read from one. It has no batch dims of its own: its shape is
        not checked against it."""
        return self.__dict__.get("_td_batch_size", _NO_BATCH)

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"UnbatchedTensor({self.as_subclass(Tensor)!r})"

    # printed and formatted as the tensor it wraps (a subclass would otherwise go
    # through its repr, as torch formats only plain tensors by value)
    def __str__(self) -> str:
        return str(self.as_subclass(Tensor))

    def __format__(self, format_spec: str) -> str:
        return format(self.as_subclass(Tensor), format_spec)

    # round() and math's trunc/floor/ceil: the tensor's result, or its error
    def __round__(self, *ndigits):
        return round(self.as_subclass(Tensor), *ndigits)

    def __trunc__(self):
        return math.trunc(self.as_subclass(Tensor))

    def __floor__(self):
        return math.floor(self.as_subclass(Tensor))

    def __ceil__(self):
        return math.ceil(self.as_subclass(Tensor))


_NO_BATCH = torch.Size([])


def read_from(value: UnbatchedTensor, batch_size: torch.Size) -> UnbatchedTensor:
    """``value`` as read from a tensordict of batch size ``batch_size``: its
    ``batch_size`` says that one (the same tensor object, relabelled: the entries of
    tensordicts made from one another share it, as they share its data)."""
    value.__dict__["_td_batch_size"] = batch_size
    return value


def is_unbatched(value) -> bool:
    """True for a leaf the batch-dim ops leave as it is (an ``UnbatchedTensor``)."""
    return type(value) is not Tensor and getattr(type(value), "_pass_through", False)
