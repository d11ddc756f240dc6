"""HDF5-backed tensordicts read strings as bytes (as 0.15.3, which warns that 0.17 will
read str); an expanded string is stored once; bytes values go through memmap without
pickle."""

import importlib.util

import pytest
import torch

from tensordict import PersistentTensorDict, TensorDict
from tensordict.utils import is_non_tensor

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("h5py") is None, reason="h5py missing"
)


def test_string_reads_as_bytes_with_a_future_warning(tmp_path):
    td = TensorDict(a=torch.zeros(3), s="hello", batch_size=[3])
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "f.h5")
    with pytest.warns(FutureWarning, match="as bytes"):
        assert h5["s"] == b"hello"
    with pytest.warns(FutureWarning):
        back = TensorDict.from_h5(tmp_path / "f.h5").to_dict()
    assert back["s"].decode("utf-8") == "hello"


def test_numbers_stay_numbers(tmp_path):
    td = TensorDict(a=torch.zeros(3), batch_size=[3])
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "f.h5")
    h5["n"] = 1
    assert h5["n"] == 1


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_expanded_string_is_one_value_with_the_batch(tmp_path):
    td = TensorDict({"a": 0, "c": "a string!", ("d", "e"): "nested"}, []).expand(10)
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "f.h5")
    assert h5["c"] == b"a string!"
    assert h5.get("c").batch_size == (10,)
    assert h5["d", "e"] == b"nested"
    back = h5.to_tensordict()
    assert is_non_tensor(back.get("c")) and back.get(("d", "e")).batch_size == (10,)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_bytes_values_memmap_without_pickle(tmp_path):
    td = TensorDict(a=torch.zeros(3), s="hello", batch_size=[3])
    h5 = PersistentTensorDict.from_dict(td, filename=tmp_path / "f.h5")
    h5.memmap(tmp_path / "mm")
    back = TensorDict.load_memmap(tmp_path / "mm")  # no allow_pickle needed
    assert back["s"] == b"hello"
    plain = TensorDict(b=b"\x00\xffraw", batch_size=[]).memmap(tmp_path / "mm2")
    assert TensorDict.load_memmap(tmp_path / "mm2")["b"] == b"\x00\xffraw"
    assert plain["b"] == b"\x00\xffraw"
