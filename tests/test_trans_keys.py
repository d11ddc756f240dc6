"""``td.keys()`` takes a key in ``in`` as 0.15.3's view does: a str or a non-empty tuple
of str (a 1-tuple names a key of this level; TorchRL's transforms are checked with
``("key",) in td.keys()``), on the C path and on the Python one alike."""

import collections.abc

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict
from tensordict._hotreads import _StringKeys
from tensordict.nn import TensorDictParams


def _td():
    return TensorDict(a=torch.zeros(2), n=TensorDict(b=torch.zeros(2)), batch_size=[2])


def _kinds():
    td = _td()
    return {
        "dense": td,
        "params": TensorDictParams(td.clone()),
        "sub": td[0:1],
        "lazy": LazyStackedTensorDict.lazy_stack([td, td.clone()]),
    }


@pytest.mark.parametrize("kind", ["dense", "params", "sub", "lazy"])
def test_one_tuple_is_the_key(kind):
    keys = _kinds()[kind].keys()
    assert ("a",) in keys
    assert ("n",) in keys
    assert ("z",) not in keys
    assert ("n", "b") not in keys  # a nested key is not among one level's keys
    assert "a" in keys


@pytest.mark.parametrize(
    "make", [lambda td: td.keys(), lambda td: _StringKeys(td._tensordict.keys())]
)
def test_keys_view_reads_as_the_dict_view(make):
    td = _td()
    keys = make(td)
    assert isinstance(keys, collections.abc.KeysView)
    assert list(keys) == ["a", "n"] and len(keys) == 2
    assert list(reversed(keys)) == ["n", "a"]
    assert keys == {"a", "n"} and {"a", "n"} == keys
    assert keys & {"a", "z"} == {"a"} and {"a", "z"} & keys == {"a"}
    assert keys | {"z"} == {"a", "n", "z"}
    assert keys - {"a"} == {"n"} and {"a", "z"} - keys == {"z"}
    assert keys ^ {"a"} == {"n"}
    assert keys.isdisjoint({"q"}) and not keys.isdisjoint(td.keys())
    assert keys <= {"a", "n", "z"}
    assert repr(keys) == "_StringKeys(dict_keys(['a', 'n']))"
    with pytest.raises(TypeError):
        hash(keys)
    td["c"] = torch.zeros(2)  # a live view
    assert list(keys) == ["a", "n", "c"] and ("c",) in keys


@pytest.mark.parametrize(
    "make", [lambda td: td.keys(), lambda td: _StringKeys(td._tensordict.keys())]
)
@pytest.mark.parametrize("key", [1, None, (), ("a", 1), (1,), b"a", ["a"]])
def test_keys_view_refuses_what_is_not_a_key(make, key):
    with pytest.raises(TypeError, match="TensorDict keys are always strings"):
        key in make(_td())
