"""Old import path ``tensordict.prototype``: ``from tensordict.prototype import
tensorclass`` keeps working."""

from tensordict.tensorclass import tensorclass  # noqa: F401

__all__ = ["tensorclass"]
