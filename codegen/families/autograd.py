"""autograd: ``torch.autograd.grad(td, inputs, grad_outputs)`` (``spec/autograd.yaml``).
A function only the torch function reaches (there is no method, as in 0.15.3): the
leaves are the outputs, ``grad_outputs`` the operand matched key by key, and the
``grad`` collector (``_ops.grad_result``) makes one ``torch.autograd.grad`` call and
shapes the gradients like ``inputs``. The shared leaf-wise machinery is
``codegen/leafwise.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import leafwise
from codegen.families import register


@register
@dataclass(frozen=True, kw_only=True)
class AutogradOp(leafwise.FunctionOnlyOp):
    family: ClassVar[str] = "autograd"
    KEYS: ClassVar[frozenset] = leafwise.KEYS
