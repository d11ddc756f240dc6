"""What code written for 0.15.3 reads of a consolidated tensordict: its storage
(``td._consolidated["storage"]``), its device when backed by a file, and the lock it
comes with (an unlocked tensordict is no longer consolidated; a refused write carries
0.15.3's ``_LOCK_ERROR`` sentence)."""

from __future__ import annotations

import re

import pytest
import torch

from tensordict import TensorDict
from tensordict.utils import _LOCK_ERROR


def _td(device=None):
    return TensorDict(
        a=torch.zeros(2, 1),
        b={"c": torch.ones(2, 1)},
        d="a string!",
        batch_size=[2],
        device=device,
    )


def test_storage_is_the_block_the_leaves_view():
    c = _td().consolidate()
    storage = c._consolidated["storage"]
    assert storage.dtype == torch.uint8
    storage *= 0
    assert (c["b", "c"] == 0).all() and (c["a"] == 0).all()
    assert c["d"] == "a string!"
    with pytest.raises(KeyError, match="storage"):
        c._consolidated["nonsense"]


def test_device_of_a_file_backed_consolidation_is_the_cpu(tmp_path):
    assert _td().consolidate().device is None
    assert _td().consolidate(filename=tmp_path / "f.mmap").device == torch.device("cpu")


def test_unlocking_ends_the_consolidated_state():
    c = _td("cpu").consolidate()
    assert c.is_consolidated() and c.is_locked and c["b"].is_locked
    with pytest.raises(RuntimeError, match=re.escape(_LOCK_ERROR)):
        c["new_key"] = torch.ones(2, 1)
    with pytest.raises(RuntimeError, match=re.escape(_LOCK_ERROR)):
        c.update({"new_key": torch.ones(2, 1)})
    c.set("a", torch.ones(2, 1), inplace=True)  # in place: allowed, stays one block
    assert c.is_consolidated()
    c.unlock_()
    assert not c.is_locked and not c.is_consolidated()
    c["new_key"] = torch.ones(2, 1)
    assert "new_key" in c


def test_unlock_as_a_context_manager():
    c = _td("cpu").consolidate()
    with c.unlock_():
        assert not c.is_consolidated()
        c["new_key"] = torch.ones(2, 1)
    assert c.is_locked and not c.is_consolidated()
    moved = _td("cpu").consolidate().to("cpu")
    assert moved.is_consolidated() and moved.is_locked
