"""Ragged batch dims: a batch size with ``-1`` where the entries are nested tensors.

0.15.3 lets a batch dim be ``-1`` when the entries are ``torch.nested`` tensors whose
components differ in size along it: TorchRL's ``split_trajectories(as_nested=True)``
builds ``TensorDict(batch_size=[n_trajectories, -1])`` that way, one component per
trajectory, and turns it back into a dense, padded tensordict with
:meth:`RaggedMethods.to_padded_tensor`. A value enters such a tensordict when its
shape, ``-1`` for each ragged dim (:func:`batch_shape`), starts with the batch size.

This module sits below the concrete classes: ``TensorDict`` inherits
:class:`RaggedMethods`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from tensordict._compat import _shape
from tensordict._keys import unravel_key_to_tuple
from tensordict._registry import container_class

#: The batch-size entry of a ragged dim.
RAGGED = -1


def batch_shape(tensor: Tensor) -> torch.Size:
    """``tensor``'s shape as a batch size sees it: ``-1`` along the dims where the
    components of a nested tensor differ (a strided nested tensor has no ``shape``)."""
    if tensor.is_nested:
        return _shape(tensor)
    return tensor.shape


class RaggedMethods:
    """Methods of a tensordict whose batch size may hold ragged (``-1``) dims."""

    __slots__ = ()

    def to_padded_tensor(self, padding: float = 0.0, mask_key=None):
        """A dense copy: every nested tensor padded with ``padding`` to its largest
        component (``torch.nested.to_padded_tensor``), and each ragged batch dim
        (``-1``) becomes that size. With ``mask_key``, a boolean tensor of the new
        batch size is stored there, True where the values are real.

        >>> import torch
        >>> from tensordict import TensorDict
        >>> parts = [torch.ones(2), torch.ones(3)]
        >>> td = TensorDict(a=torch.nested.nested_tensor(parts), batch_size=[2, -1])
        >>> padded = td.to_padded_tensor(mask_key="mask")
        >>> padded.batch_size, padded["mask"].sum().item()
        (torch.Size([2, 3]), 5)
        """
        batch_dims = self.batch_dims
        mask = None

        def pad(value: Tensor) -> Tensor:
            nonlocal mask
            if not value.is_nested:
                return value
            if mask is None and mask_key is not None:
                real = torch.nested.nested_tensor(
                    [
                        torch.ones(part.shape[: batch_dims - 1], dtype=torch.bool)
                        for part in value.unbind()
                    ],
                    device=value.device,
                )
                mask = torch.nested.to_padded_tensor(real, False)
            return torch.nested.to_padded_tensor(value, padding)

        padded = [
            (key, pad(value)) for key, value in self.items(True, True) if value is not None
        ]
        batch_size = list(self.batch_size)
        for _, value in padded:
            if isinstance(value, Tensor):
                batch_size = list(value.shape[:batch_dims])
                break
        result = container_class("TensorDict")(batch_size=batch_size, device=self.device)
        for key, value in padded:
            result.set(key, value)
        if mask_key is not None:
            if mask is None:
                mask = torch.ones(batch_size, dtype=torch.bool, device=self.device)
            result.set(unravel_key_to_tuple(mask_key), mask)
        return result
