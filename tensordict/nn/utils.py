"""Settings the modules read (``skip_existing``, ``composite_lp_aggregate``) and the
scale mappings of the probabilistic modules (``mappings``, ``biased_softplus``).

A setting is a :class:`~tensordict._modes._Setting` with a switch
(:class:`~tensordict._modes._ModeSwitch`, the mechanism of ``set_lazy_legacy`` too): a
context manager (the value holds inside the block and the previous one is back on
exit, also when the block raises), a decorator (the value holds while the function
runs), and ``set()`` / ``unset()`` for a lasting change. ``thread_local=True`` confines
the value to the calling thread.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import torch
from torch import nn

from tensordict._keys import NestedKey, unravel_key, unravel_key_list
from tensordict._modes import _ModeSwitch, _Setting

# --------------------------------------------------------------------------------------
# skip_existing
# --------------------------------------------------------------------------------------

#: ``torch.nn.Buffer`` (a tensor marked to be registered as a module's buffer), under
#: the name 0.15.3 gives it here and in ``tensordict.utils``.
Buffer = nn.Buffer

_SKIP_EXISTING = _Setting("skip_existing", False)


def skip_existing() -> bool | list:
    """The mode :class:`set_skip_existing` sets: ``False`` (the default, every module
    runs), ``True`` (a module whose outputs are all in its input does not run), or a
    list of keys (only outputs among them count as existing).

    >>> skip_existing()
    False
    >>> with set_skip_existing(True):
    ...     skip_existing()
    True
    """
    return _SKIP_EXISTING.get()


class set_skip_existing(_ModeSwitch):
    """Skip modules whose outputs are already in the input tensordict.

    Inside ``with set_skip_existing():`` (or ``set_skip_existing(True)``), a tensordict
    module whose ``out_keys`` are all present in its input returns the input without
    running; a module that reads one of the keys it writes always runs. A list of keys
    as the mode restricts skipping to modules whose ``out_keys`` are all in the list.

    As a decorator of a ``forward(self, tensordict, ...)`` method it makes that check
    itself (with the mode given, or, for ``None``, the mode of the enclosing block),
    reading the module's key lists from ``in_key_attr`` / ``out_key_attr``.

    >>> import torch
    >>> from tensordict import TensorDict
    >>> from tensordict.nn import TensorDictModule, set_skip_existing
    >>> module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    >>> td = TensorDict(x=torch.zeros(()), y=torch.zeros(()))
    >>> with set_skip_existing():
    ...     module(td)["y"]
    tensor(0.)
    >>> module(td)["y"]
    tensor(1.)
    """

    _setting = _SKIP_EXISTING

    def __init__(
        self,
        mode: bool | list | None = True,
        in_key_attr: str = "in_keys",
        out_key_attr: str = "out_keys",
        *,
        thread_local: bool = False,
    ) -> None:
        super().__init__(mode, thread_local=thread_local)
        self.in_key_attr = in_key_attr
        self.out_key_attr = out_key_attr

    @staticmethod
    def _check(mode):
        if mode is None or isinstance(mode, bool):
            return mode
        return unravel_key_list(list(mode))

    def __enter__(self) -> "set_skip_existing":
        if self.mode is None:
            raise RuntimeError(
                "It seems you are using set_skip_existing(None) as a context manager: "
                "set_skip_existing(None) only works as a decorator (it means: follow "
                "the enclosing block's mode); use True, False or a list of keys here"
            )
        return super().__enter__()

    def __call__(self, func: Callable) -> Callable:
        mode = self.mode
        in_attr, out_attr = self.in_key_attr, self.out_key_attr

        @functools.wraps(func)
        def forward(module, tensordict, *args, **kwargs):
            current = skip_existing() if mode is None else mode
            if current is not False and outputs_exist(
                tensordict,
                getattr(module, in_attr),
                getattr(module, out_attr),
                current,
            ):
                return tensordict
            if mode is None:
                return func(module, tensordict, *args, **kwargs)
            with self.clone():
                return func(module, tensordict, *args, **kwargs)

        return forward


class _set_skip_existing_None(set_skip_existing):
    """``set_skip_existing(None)`` under the name TorchRL decorates its forwards with:
    the wrapped ``forward(self, tensordict, ...)`` follows the enclosing block's mode."""

    def __init__(
        self,
        mode: None = None,
        in_key_attr: str = "in_keys",
        out_key_attr: str = "out_keys",
        *,
        thread_local: bool = False,
    ) -> None:
        super().__init__(None, in_key_attr, out_key_attr, thread_local=thread_local)


# --------------------------------------------------------------------------------------
# whether tensordict modules dispatch calls made with tensors
# --------------------------------------------------------------------------------------

_DISPATCH_TD_NN_MODULES = _Setting("dispatch_td_nn_modules", True)


class _set_dispatch_td_nn_modules(_ModeSwitch):
    """Whether tensordict modules called with something other than a tensordict gather
    it into one (the default, ``True``) or hand the call to ``forward`` unchanged
    (``False``). TorchRL turns it off around transforms applied to plain tensors."""

    _setting = _DISPATCH_TD_NN_MODULES

    @staticmethod
    def _check(mode):
        return bool(mode)


def outputs_exist(tensordict, in_keys, out_keys, mode) -> bool:
    """Whether a module with these keys may be skipped under ``mode`` (see
    :class:`set_skip_existing`)."""
    if not out_keys:
        return False
    for key in out_keys:
        if key in in_keys:
            return False
    if mode is not True:
        allowed = mode
        for key in out_keys:
            if unravel_key(key) not in allowed:
                return False
    for key in out_keys:
        if key not in tensordict.keys(True):
            return False
    return True


# --------------------------------------------------------------------------------------
# composite_lp_aggregate
# --------------------------------------------------------------------------------------

_COMPOSITE_LP_AGGREGATE = _Setting("composite_lp_aggregate", False)


def composite_lp_aggregate(nowarn: bool = False) -> bool:
    """Whether :class:`~tensordict.nn.CompositeDistribution` sums the log-probabilities
    (and entropies) of its parts into one tensor (``True``) or returns them per part in
    a tensordict (``False``, the default). Set with :class:`set_composite_lp_aggregate`.

    >>> with set_composite_lp_aggregate(False):
    ...     composite_lp_aggregate()
    False
    """
    return bool(_COMPOSITE_LP_AGGREGATE.get())


class set_composite_lp_aggregate(_ModeSwitch):
    """Set :func:`composite_lp_aggregate` (a context manager, a decorator, or
    ``set_composite_lp_aggregate(True).set()`` for good).

    >>> from tensordict.nn import composite_lp_aggregate, set_composite_lp_aggregate
    >>> with set_composite_lp_aggregate(True):
    ...     composite_lp_aggregate()
    True
    >>> composite_lp_aggregate()
    False
    """

    _setting = _COMPOSITE_LP_AGGREGATE

    def __init__(self, mode: bool = True, *, thread_local: bool = False) -> None:
        super().__init__(bool(mode), thread_local=thread_local)


# --------------------------------------------------------------------------------------
# scale mappings
# --------------------------------------------------------------------------------------


def inv_softplus(bias: float | torch.Tensor) -> float | torch.Tensor:
    """The inverse of softplus: ``softplus(inv_softplus(y)) == y`` for ``y > 0``.

    >>> y = torch.tensor(2.0)
    >>> torch.nn.functional.softplus(inv_softplus(y))
    tensor(2.)
    """
    if isinstance(bias, torch.Tensor):
        return bias.expm1().log()
    return math.log(math.expm1(bias))


class biased_softplus(nn.Module):
    """A softplus shifted so that an input of zero maps to ``bias``, never going below
    ``min_val``: ``softplus(x + inv_softplus(bias - min_val)) + min_val``.

    >>> import torch
    >>> biased_softplus(1.0)(torch.zeros(2))
    tensor([1., 1.])
    """

    def __init__(self, bias: float, min_val: float = 0.01) -> None:
        super().__init__()
        self.bias = inv_softplus(bias - min_val)
        self.min_val = min_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x + self.bias) + self.min_val

    def extra_repr(self) -> str:
        return f"shift={self.bias:.4g}, min_val={self.min_val}"


def expln(x: torch.Tensor) -> torch.Tensor:
    """``exp(x)`` for ``x <= 0`` and ``log(x + 1) + 1`` above: positive, and growing
    only logarithmically."""
    out = torch.empty_like(x)
    negative = x <= 0
    out[negative] = x[negative].exp()
    positive = ~negative
    out[positive] = x[positive].log1p() + 1
    return out


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


_MAPPINGS: dict[str, Callable] = {
    "softplus": torch.nn.functional.softplus,
    "exp": torch.exp,
    "relu": torch.relu,
    "biased_softplus": biased_softplus(1.0),
    "none": _identity,
    "expln": expln,
}


def add_custom_mapping(name: str, mapping: Callable[[torch.Tensor], torch.Tensor]):
    """Make ``mappings(name)`` return ``mapping``.

    >>> add_custom_mapping("doubled", lambda x: 2 * x)
    >>> mappings("doubled")(torch.ones(2))
    tensor([2., 2.])
    """
    if not callable(mapping):
        raise TypeError(f"add_custom_mapping: {mapping!r} is not callable")
    _MAPPINGS[name] = mapping


def mappings(key: str) -> Callable:
    """The function a scale mapping name stands for: ``"softplus"``, ``"exp"``,
    ``"relu"``, ``"expln"``, ``"none"``, ``"biased_softplus"`` (bias 1.0),
    ``"biased_softplus_<bias>"`` or ``"biased_softplus_<bias>_<min_val>"``, or a name
    registered with :func:`add_custom_mapping`.

    >>> import torch
    >>> mappings("biased_softplus_2.0")(torch.zeros(1))
    tensor([2.])
    """
    mapping = _MAPPINGS.get(key)
    if mapping is not None:
        return mapping
    if key.startswith("biased_softplus_"):
        parts = key[len("biased_softplus_") :].split("_")
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            numbers = []
        if len(numbers) == 1:
            return biased_softplus(numbers[0])
        if len(numbers) == 2:
            return biased_softplus(numbers[0], min_val=numbers[1])
    raise NotImplementedError(
        f"Unknown mapping {key} (0.15.3's phrase): no scale mapping {key!r}; "
        f"expected one of {sorted(_MAPPINGS)}, "
        f"'biased_softplus_<bias>' or 'biased_softplus_<bias>_<min_val>' (or a name "
        f"registered with add_custom_mapping)"
    )


__all__ = [
    "Buffer",
    "NestedKey",
    "add_custom_mapping",
    "biased_softplus",
    "composite_lp_aggregate",
    "expln",
    "inv_softplus",
    "mappings",
    "set_composite_lp_aggregate",
    "set_skip_existing",
    "skip_existing",
]
