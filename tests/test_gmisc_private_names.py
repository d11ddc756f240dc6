"""0.15.3's private names that code imports at module level, with their behaviour:
``tensordict._td._str_to_index`` / ``lazy_stack``, ``tensordict.base._GENERIC_NESTED_ERR``
and ``_device_recorder``, ``tensordict._lazy._PermutedTensorDict`` /
``_ViewedTensorDict``, ``tensordict._reductions._reduce_td``,
``tensordict.utils._encode_key_for_filesystem`` / ``print_directory_tree``."""

import json
import re
import threading

import pytest
import torch

import tensordict
from tensordict import TensorDict, set_lazy_legacy, tensorclass


def test_str_to_index_reads_tagged_and_legacy_metadata():
    from tensordict._td import _index_to_str, _str_to_index

    legacy = [["slice", {"start": None, "stop": None, "step": None}], 1]
    assert _str_to_index(legacy) == (slice(None), 1)
    for index in [(slice(0, 2), ..., 1), [0, 2], range(1, 3)]:
        assert _str_to_index(json.loads(json.dumps(_index_to_str(index)))) == index
    back = _str_to_index(json.loads(json.dumps(_index_to_str(torch.tensor([1, 2])))))
    assert torch.equal(back, torch.tensor([1, 2]))


def test_td_module_lazy_stack_is_the_function():
    from tensordict._td import lazy_stack

    assert lazy_stack is tensordict.lazy_stack
    stack = lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))])
    assert stack.batch_size == (2,)


def test_generic_nested_error_leads_the_invalid_key_error():
    from tensordict.base import _GENERIC_NESTED_ERR

    td = TensorDict(sub=TensorDict())
    with pytest.raises(KeyError, match=re.escape(_GENERIC_NESTED_ERR.format(0))):
        td.get(0)
    with pytest.raises(KeyError, match=_GENERIC_NESTED_ERR.format(())):
        td.get(("sub", str))


def test_device_recorder_is_per_thread():
    from tensordict.base import _device_recorder

    assert not _device_recorder.marked and not _device_recorder.has_transfer()
    _device_recorder.mark()
    try:
        with pytest.raises(RuntimeError, match="one TensorDict at a time"):
            _device_recorder.mark()
        seen = []
        thread = threading.Thread(target=lambda: seen.append(_device_recorder.marked))
        thread.start()
        thread.join()
        assert seen == [False]
        _device_recorder.record_transfer(torch.device("cpu"))
        assert _device_recorder.has_transfer()
    finally:
        _device_recorder.unmark()
    assert not _device_recorder.marked and not _device_recorder.has_transfer()
    # a construction leaves it unmarked, and TensorDict has 0.15.3's _sync_all
    TensorDict(a=torch.zeros(2), device="cpu")
    assert not _device_recorder.marked
    TensorDict(a=torch.zeros(2))._sync_all()


def test_lazy_view_classes_tell_the_op_apart():
    from tensordict._lazy import _PermutedTensorDict, _ViewedTensorDict

    td = TensorDict(a=torch.zeros(3, 4), n={"b": torch.zeros(3, 4)}, batch_size=[3, 4])
    with set_lazy_legacy(True):
        permuted, viewed = td.permute(1, 0), td.view(-1)
    assert isinstance(permuted, _PermutedTensorDict)
    assert not isinstance(permuted, _ViewedTensorDict)
    assert isinstance(viewed, _ViewedTensorDict)
    assert isinstance(permuted["n"], _PermutedTensorDict)
    assert not isinstance(td, _PermutedTensorDict)
    assert not isinstance(td.permute(1, 0), _PermutedTensorDict)  # legacy mode off

    @tensorclass
    class Data:
        x: torch.Tensor

    with set_lazy_legacy(True):
        data = Data(x=torch.zeros(3, 4), batch_size=[3, 4]).permute(1, 0)
    assert isinstance(data._tensordict, _PermutedTensorDict)


def test_reduce_td_rebuilds():
    from tensordict._reductions import _reduce_td

    td = TensorDict(a=torch.arange(3), s="text", batch_size=[3])
    for source in (td, td.consolidate()):
        rebuild, args = _reduce_td(source)
        back = rebuild(*args)
        assert (back["a"] == td["a"]).all() and back["s"] == "text"


def test_key_file_names_are_0_15_3s(tmp_path):
    from tensordict.utils import (
        _decode_key_from_filesystem,
        _encode_key_for_filesystem,
    )

    keys = ["a/b/c", "p\\q", "with space", "x:y", "x*y", "100%", "", ".", "..", "ok"]
    encoded = [_encode_key_for_filesystem(k) for k in keys]
    assert encoded[:3] == ["a%2Fb%2Fc", "p%5Cq", "with%20space"]
    assert encoded[-4:] == ["%", "%2E", "%2E%2E", "ok"]
    assert len(set(encoded)) == len(keys)
    assert [_decode_key_from_filesystem(e) for e in encoded] == keys
    assert _encode_key_for_filesystem("a/b", robust=False) == "a/b"
    td = TensorDict({"a/b/c": torch.zeros(2), "../up": {"x": torch.ones(2)}})
    td.memmap(tmp_path / "saved")
    assert (tmp_path / "saved" / "a%2Fb%2Fc.memmap").is_file()
    assert (tmp_path / "saved" / "..%2Fup" / "meta.json").is_file()
    back = TensorDict.load_memmap(tmp_path / "saved")
    assert (back["a/b/c"] == 0).all() and (back["../up", "x"] == 1).all()
    # a tuple subpath names keys as they are, "/" included
    sub = TensorDict.load_memmap(tmp_path / "saved", subpath=("../up",))
    assert (sub["x"] == 1).all()


def test_print_directory_tree(tmp_path, caplog):
    from tensordict.utils import print_directory_tree

    TensorDict(a=torch.zeros(3), n={"b": torch.zeros(2)}).memmap(tmp_path / "td")
    with caplog.at_level("INFO", logger="tensordict"):
        text = print_directory_tree(tmp_path / "td")
    lines = text.splitlines()
    assert lines[0].startswith("Directory size: ")
    assert lines[1:] == [
        "td/",
        "    a.memmap",
        "    meta.json",
        "    n/",
        "        b.memmap",
        "        meta.json",
    ]
    assert "td/" in caplog.text
    assert not print_directory_tree(tmp_path / "td", display_metadata=False).startswith(
        "Directory"
    )


def test_memmap_is_writable(tmp_path):
    import os

    from tensordict.memmap import _is_writable

    path = tmp_path / "f.bin"
    assert _is_writable(path)  # missing: can be created
    path.write_bytes(b"0")
    assert _is_writable(path)
    os.chmod(path, 0o444)
    try:
        if os.geteuid() != 0:  # root may write anything
            assert not _is_writable(path)
    finally:
        os.chmod(path, 0o644)
