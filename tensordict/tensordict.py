"""Old import path (``from tensordict.tensordict import TensorDict``), kept working."""

from tensordict._td import TensorDict  # noqa: F401
from tensordict.base import TensorDictBase, is_tensor_collection  # noqa: F401
from tensordict.functional import make_tensordict  # noqa: F401
