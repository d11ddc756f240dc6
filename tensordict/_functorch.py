"""``torch.func.functional_call`` with a tensordict of parameters.

``torch.func.functional_call(module, params, args)`` takes its parameters as a dict (or
a sequence of dicts) keyed by dotted names, and refuses anything that is not a
``dict``. A tensordict of parameters, such as ``TensorDict.from_module(module)``
(nested keys, one level per submodule), is what tensordict users hold: this module
wraps ``functional_call`` so that it accepts one, or a sequence mixing tensordicts and
dicts, and passes on ``{"0.weight": ..., ...}`` built from the tensordict's leaves. The
wrapper replaces ``torch.func.functional_call`` (and the name in
``torch._functorch.functional_call``) when ``tensordict`` is imported; a name bound
before that (``from torch.func import functional_call`` ahead of ``import
tensordict``) keeps torch's own function.

The other transforms need nothing of the kind: tensordicts are pytree nodes
(``tensordict/_pytree.py``), which is all ``vmap``, ``grad``, ``jacrev`` and
``jacfwd`` ask of their inputs and outputs.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch._functorch.functional_call as _functional_call_module

from tensordict.base import TensorDictBase

__all__ = ["functional_call", "install"]

_TORCH_FUNCTIONAL_CALL = getattr(
    _functional_call_module.functional_call,
    "__wrapped_by_tensordict__",
    _functional_call_module.functional_call,
)


def _as_dict(params: Any) -> Any:
    """A tensordict as ``functional_call`` takes parameters: its tensors keyed by
    dotted names (``("0", "weight")`` -> ``"0.weight"``); anything else as it is."""
    if not isinstance(params, TensorDictBase):
        return params
    return {
        key if type(key) is str else ".".join(key): value
        for key, value in params.items(True, True)
    }


@functools.wraps(_TORCH_FUNCTIONAL_CALL)
def functional_call(
    module: torch.nn.Module,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    # a dict (what torch's own callers pass: a state_dict is an OrderedDict) goes
    # straight through
    if isinstance(parameter_and_buffer_dicts, dict):
        pass
    elif isinstance(parameter_and_buffer_dicts, TensorDictBase):
        parameter_and_buffer_dicts = _as_dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        parameter_and_buffer_dicts = type(parameter_and_buffer_dicts)(
            _as_dict(params) for params in parameter_and_buffer_dicts
        )
    return _TORCH_FUNCTIONAL_CALL(
        module,
        parameter_and_buffer_dicts,
        args,
        kwargs,
        tie_weights=tie_weights,
        strict=strict,
    )


functional_call.__wrapped_by_tensordict__ = _TORCH_FUNCTIONAL_CALL
functional_call.__doc__ = (
    "torch.func.functional_call, also taking a tensordict of parameters (nested keys "
    "are joined with dots) or a sequence of tensordicts and dicts.\n\n"
    + (_TORCH_FUNCTIONAL_CALL.__doc__ or "")
)


def install() -> None:
    """Make ``torch.func.functional_call`` the wrapper (once)."""
    torch.func.functional_call = functional_call
    _functional_call_module.functional_call = functional_call
