"""tensordict: a dictionary of tensors that behaves like one tensor.

Indexing, reshaping, casting, moving to a device or reducing a tensordict does the same
to every entry in one call; every entry shares the leading ``batch_size`` dims.
"""

from tensordict._keys import (
    KEY_SEPARATOR,
    NestedKey,
    unravel_key,
    unravel_key_list,
    unravel_key_to_tuple,
)
from tensordict.base import NO_DEFAULT, TensorDictBase, is_tensor_collection
from tensordict._td import TensorDict
from tensordict.functional import from_dict, fromkeys, make_tensordict

__version__ = "0.1.0"

__all__ = [
    "KEY_SEPARATOR",
    "NO_DEFAULT",
    "NestedKey",
    "TensorDict",
    "TensorDictBase",
    "from_dict",
    "fromkeys",
    "is_tensor_collection",
    "make_tensordict",
    "unravel_key",
    "unravel_key_list",
    "unravel_key_to_tuple",
]
