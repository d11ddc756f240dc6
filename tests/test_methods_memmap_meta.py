"""meta.json carries the batch size under 0.15.3's key, ``shape`` too."""

import json

import torch

from tensordict import LazyStackedTensorDict, TensorDict


def test_meta_json_has_shape(tmp_path):
    td = TensorDict(
        a=torch.zeros(3, 2),
        sub=TensorDict(b=torch.zeros(3, 4), batch_size=[3, 4]),
        batch_size=[3],
    )
    td.memmap_(tmp_path / "td")
    meta = json.loads((tmp_path / "td" / "meta.json").read_text())
    assert meta["shape"] == [3]
    sub = json.loads((tmp_path / "td" / "sub" / "meta.json").read_text())
    assert sub["shape"] == [3, 4]
    assert (TensorDict.load_memmap(tmp_path / "td") == td).all()


def test_meta_json_of_stack_members_has_shape(tmp_path):
    td = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(3), batch_size=[3]) for _ in range(2)], 0
    )
    td.memmap_(tmp_path / "td")
    meta = json.loads((tmp_path / "td" / "0" / "meta.json").read_text())
    assert meta["shape"] == [3]
