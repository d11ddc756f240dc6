"""rename_key_ of a locked tensordict: the lock error first."""

import pytest
import torch

from tensordict import TensorDict


def test_rename_key_of_a_locked_tensordict_raises_the_lock_error_first():
    td = TensorDict(a=torch.zeros(2), b=torch.zeros(2), batch_size=[2]).lock_()
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        td.rename_key_("a", "b", safe=True)  # not the KeyError of an existing key
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        td.rename_key_("a", "z")
    assert set(td.keys()) == {"a", "b"}
