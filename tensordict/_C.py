"""``tensordict._C``: once 0.15.3's C++ extension for keys, a deprecated module of
Python functions by 0.15.3; kept, with the same deprecation warning, because existing
code still imports from it (TorchRL's objectives tests: ``from tensordict._C import
unravel_keys``). New code imports these from ``tensordict``."""

from __future__ import annotations

import warnings

from tensordict._compat import _unravel_key_to_tuple
from tensordict._keys import unravel_key, unravel_key_list

#: The old name of :func:`~tensordict.unravel_key`.
unravel_keys = unravel_key

__all__ = ["_unravel_key_to_tuple", "unravel_key", "unravel_key_list", "unravel_keys"]

warnings.warn(
    "tensordict._C is deprecated: import unravel_key (also for unravel_keys), "
    "unravel_key_list and unravel_key_to_tuple from tensordict instead",
    DeprecationWarning,
    stacklevel=2,
)
