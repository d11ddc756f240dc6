"""Mistakes ``mypy --strict`` must report (tests/test_typing.py): each line marked
``# E`` is an error, and no other line is. They prove that the types the stubs give are
real ones: were ``torch.Tensor``, ``torch.Size``, ``TensorDict`` or a tensorclass's
fields read as ``Any`` (a torch module left unread by ``mypy.ini``), these lines would
pass."""

from __future__ import annotations

import torch

from tensordict import LazyStackedTensorDict, TensorClass, TensorDict, tensorclass


class Derived(TensorClass):
    label: torch.Tensor


@tensorclass
class Decorated:
    obs: torch.Tensor


def mistakes() -> None:
    td = TensorDict(a=torch.zeros(3), batch_size=[3])
    size: torch.Tensor = td.batch_size  # E
    doubled: torch.Tensor = td * 2  # E
    text: str = torch.zeros(1).sum()  # E
    lazy = LazyStackedTensorDict(TensorDict(a=torch.zeros(2)), stack_dim=0)
    dense: TensorDict = lazy + 1  # E
    label: str = Derived(label=torch.zeros(2), batch_size=[2]).label  # E
    obs: int = Decorated(obs=torch.zeros(2), batch_size=[2]).obs  # E
    device: int = td.device  # E
