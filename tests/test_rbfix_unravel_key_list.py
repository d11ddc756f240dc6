"""``unravel_key_list`` takes a list or a tuple of keys; anything else (a string, a
set, a generator) is a ``TypeError`` whose message leads with 0.15.3's phrase, so a
module given ``in_keys="abc"`` fails instead of reading three keys ``a``, ``b``, ``c``
(TorchRL's RNN modules rely on it)."""

from __future__ import annotations

import re

import pytest

from tensordict import unravel_key_list

PHRASE = "incompatible function arguments"


@pytest.mark.parametrize(
    "keys", ["abc", {"a"}, (k for k in ["a"]), {"a": 1}.keys(), 3], ids=repr
)
def test_not_a_list_of_keys(keys):
    with pytest.raises(TypeError, match=PHRASE) as info:
        unravel_key_list(keys)
    assert re.search("Expected a list or a tuple of keys", str(info.value))


def test_lists_and_tuples():
    assert unravel_key_list(["a", ("b", ("c",))]) == ["a", ("b", "c")]
    assert unravel_key_list(("a", ("b",))) == ["a", "b"]
    assert unravel_key_list([]) == []
