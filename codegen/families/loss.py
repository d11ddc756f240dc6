"""loss: ``torch.nn.functional`` losses of a tensordict against a target
(``spec/loss.yaml``). Every entry is a function only ``torch.X(td, target)`` reaches
(there is no method, as in tensordict 0.15.3): the loss of each leaf against the
target's leaf of the same key, computed by the torch function of the entry's name. The
``reduction`` decides the result's shape: ``"none"`` keeps every leaf's shape (and the
batch size), ``"mean"`` and ``"sum"`` leave one scalar per leaf (every level with
batch size ``[]``). The shared leaf-wise machinery is ``codegen/leafwise.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import leafwise
from codegen.families import register


@register
@dataclass(frozen=True, kw_only=True)
class LossOp(leafwise.FunctionOnlyOp):
    family: ClassVar[str] = "loss"
    KEYS: ClassVar[frozenset] = leafwise.KEYS
