"""Every container kind has the whole public API of ``TensorDict`` (docs/architecture.md,
"Capabilities"): the capabilities live on ``TensorDictBase``, so a lazy view, a
sub-tensordict, ``TensorDictParams`` or an HDF5-backed tensordict has ``memmap_``,
``state_dict``, ``consolidate``... as a dense one does.

Two walks:

- ``test_every_public_name``: every public name of ``TensorDict`` exists on every kind
  (``hasattr``), except the few listed in ``NOT_APPLICABLE`` with the reason.
- ``test_capability``: a curated set of capabilities run on every kind and give the
  values they give on the kind's dense form (``to_tensordict()``), or, where the kind's
  storage rules them out (``REFUSED``), raise an error that names the kind and says
  why (never AttributeError).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pickle

import pytest
import torch

from tensordict import LazyStackedTensorDict, TensorDict, tensorclass
from tensordict.nn import TensorDictParams
from tensordict.utils import set_lazy_legacy

try:
    import h5py  # noqa: F401

    _HAS_H5 = True
except ImportError:  # pragma: no cover - h5py is an optional extra
    _HAS_H5 = False


@tensorclass
class _Pair:
    a: torch.Tensor
    b: TensorDict


def _dense():
    return TensorDict(
        a=torch.arange(24, dtype=torch.float32).reshape(3, 4, 2),
        b=TensorDict(c=torch.arange(12).reshape(3, 4), batch_size=[3, 4]),
        batch_size=[3, 4],
    )


def _lazy_view():
    with set_lazy_legacy(True):
        return _dense().unsqueeze(0)


_STORE_SERVER = []  # one Redis server for the store kind, started on first use


def _store_server():
    from tensordict.store._server import LocalServer, server_binary

    if server_binary() is None or importlib.util.find_spec("redis") is None:
        pytest.skip(
            "no Redis server binary or redis-py (pip install tensordict[store-server])"
        )
    if not _STORE_SERVER:
        _STORE_SERVER.append(LocalServer().start())
        atexit.register(_STORE_SERVER[0].close)
    return _STORE_SERVER[0]


def _store(tmp_path):
    return _dense().to_store(port=_store_server().port)


def _store_lazy(tmp_path):
    return LazyStackedTensorDict(*_dense().unbind(0), stack_dim=0).to_store(
        port=_store_server().port
    )


def _h5(tmp_path):
    from tensordict.persistent import PersistentTensorDict

    return PersistentTensorDict.from_dict(_dense(), str(tmp_path / "kind.h5"), mode="w")


# kind name -> how to make one (from a fresh temporary folder)
KINDS = {
    "dense": lambda tmp: _dense(),
    "nested": lambda tmp: TensorDict(outer=_dense(), batch_size=[3, 4]).get("outer"),
    "lazy_stack": lambda tmp: LazyStackedTensorDict(*_dense().unbind(0), stack_dim=0),
    "lazy_view": lambda tmp: _lazy_view(),
    "sub_td": lambda tmp: _dense()._get_sub_tensordict(1),
    "tensorclass": lambda tmp: _Pair(
        a=_dense()["a"], b=_dense()["b"], batch_size=[3, 4]
    ),
    "td_params": lambda tmp: TensorDictParams(_dense(), no_convert=True),
    "memmap": lambda tmp: _dense().memmap_(tmp / "memmap_kind"),
    "h5": _h5,
    # a TensorDictStore on a Redis server these tests start (tests/test_store.py)
    "store": _store,
    "store_lazy": _store_lazy,
}

# names that do not apply to a kind, with the reason
NOT_APPLICABLE = {
    # a property of memory-mapped tensordicts only: AttributeError until memmap_
    # (as in 0.15.3), so hasattr is False on a kind that is not memory-mapped
    ("saved_path", kind): "not memory-mapped"
    for kind in KINDS
    if kind != "memmap"
}

PUBLIC = sorted(name for name in dir(TensorDict) if not name.startswith("_"))


@pytest.fixture(params=[k for k in KINDS if k != "h5" or _HAS_H5])
def kind(request, tmp_path):
    td = KINDS[request.param](tmp_path)
    yield request.param, td
    if request.param == "h5":
        td.close()
    if request.param in ("store", "store_lazy"):
        td.clear_redis()
        td.close()


def test_every_public_name(kind):
    name, td = kind
    missing = [
        attr
        for attr in PUBLIC
        if (attr, name) not in NOT_APPLICABLE and not hasattr(td, attr)
    ]
    assert not missing, f"{type(td).__name__} ({name}) lacks {missing}"


def test_private_names_code_written_for_0_15_3_reads(kind):
    # _check_device, _is_memmap and _is_shared are read by code and tests of 0.15.3
    name, td = kind
    assert td._check_device() is True
    assert td._is_memmap is td.is_memmap()
    assert td._is_shared is td.is_shared()


# ---------------------------------------------------------------------------- values


def _same(result, expected):
    """Same keys, batch size and values (compared as dense tensordicts)."""
    result = result.to_tensordict() if not isinstance(result, TensorDict) else result
    expected = (
        expected.to_tensordict() if not isinstance(expected, TensorDict) else expected
    )
    assert result.batch_size == expected.batch_size
    assert set(result.keys(True, True)) == set(expected.keys(True, True))
    for key in expected.keys(True, True):
        assert torch.equal(
            torch.as_tensor(result[key]), torch.as_tensor(expected[key])
        ), key


def _memmap(td, tmp):
    out = td.memmap(tmp / "copy", copy_existing=True)
    assert out.is_memmap() and out is not td
    return out


def _memmap_like(td, tmp):
    out = td.memmap_like(tmp / "like")
    assert out.is_memmap()
    return out.apply(lambda x: x.zero_())  # zeros of the same shapes


def _memmap_in_place(td, tmp):
    out = td.memmap_(tmp / "in_place", copy_existing=True)
    assert out is td and td.is_memmap()
    return out


def _save_load(td, tmp):
    td.save(tmp / "saved", copy_existing=True)
    return TensorDict.load_memmap(tmp / "saved")


def _state_dict_round_trip(td, tmp):
    target = td.to_tensordict().zero_()
    target.load_state_dict(td.state_dict())
    return target


def _load_state_dict(td, tmp):
    state = (td.to_tensordict() + 1).state_dict()
    return td.load_state_dict(state)


def _consolidate(td, tmp):
    out = td.consolidate()
    assert out.is_consolidated()
    return out


def _to_dict(td, tmp):
    return TensorDict(td.to_dict(), batch_size=td.batch_size)


def _pickle(td, tmp):
    return pickle.loads(pickle.dumps(td))


def _pytree(td, tmp):
    return type(td).from_pytree(td.to_pytree())


def _to_h5(td, tmp):
    if not _HAS_H5:
        pytest.skip("h5py is not installed")
    out = td.to_h5(str(tmp / "out.h5"))
    try:
        return out.to_tensordict()
    finally:
        out.close()


# capability -> (what it does, what the dense form gives for it)
CAPABILITIES = {
    "memmap": (_memmap, lambda d: d),
    "memmap_like": (_memmap_like, lambda d: d.apply(torch.zeros_like)),
    "memmap_": (_memmap_in_place, lambda d: d),
    "save_load": (_save_load, lambda d: d),
    "state_dict": (_state_dict_round_trip, lambda d: d),
    "load_state_dict": (_load_state_dict, lambda d: d + 1),
    "consolidate": (_consolidate, lambda d: d),
    "to_dict": (_to_dict, lambda d: d),
    "pickle": (_pickle, lambda d: d),
    "to_pytree": (_pytree, lambda d: d),
    "to_h5": (_to_h5, lambda d: d),
}

# (capability, kind) -> (error type, words the message must hold): the kinds whose
# storage rules the capability out; the error names the kind
REFUSED = {
    # a sub-tensordict's entries are parts of the source's tensors (0.15.3 refuses too)
    ("memmap_", "sub_td"): (RuntimeError, "_SubTensorDict"),
    # the leaves are the module's parameters / live in the HDF5 file (as 0.15.3)
    ("memmap_", "td_params"): (RuntimeError, "TensorDictParams"),
    ("memmap_", "h5"): (RuntimeError, "PersistentTensorDict"),
    ("memmap_", "store"): (RuntimeError, "TensorDictStore"),
}


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_capability(kind, capability, tmp_path):
    name, td = kind
    do, expect = CAPABILITIES[capability]
    refused = REFUSED.get((capability, name))
    if refused is not None:
        error, words = refused
        with pytest.raises(error) as info:
            do(td, tmp_path)
        assert not isinstance(info.value, AttributeError)
        assert words in str(info.value)
        return
    dense = td.to_tensordict().clone()
    result = do(td, tmp_path)
    _same(result, expect(dense))


def test_is_memmap_follows_the_source(tmp_path):
    td = _dense()
    view = _lazy_view_of(td)
    sub = td._get_sub_tensordict(0)
    assert not view.is_memmap() and not sub.is_memmap()
    td.memmap_(tmp_path / "src")
    assert view.is_memmap() and sub.is_memmap()


def _lazy_view_of(td):
    with set_lazy_legacy(True):
        return td.permute(1, 0)


def test_lazy_view_memmap_in_place_maps_its_source(tmp_path):
    td = _dense()
    view = _lazy_view_of(td)
    assert view.memmap_(tmp_path / "src") is view
    assert td.is_memmap() and type(td["a"]).__name__ == "MemoryMappedTensor"
    assert torch.equal(view["a"], td["a"].permute(1, 0, 2))
    assert os.path.exists(tmp_path / "src" / "meta.json")


def test_views_refuse_in_place_replacement_with_the_kind_named():
    td = _dense()
    for view in (_lazy_view_of(td), td._get_sub_tensordict(0)):
        with pytest.raises(RuntimeError, match="Cannot call exclude") as info:
            view.flatten_keys(inplace=True)
        assert type(view).__name__ in str(info.value)
        with pytest.raises(RuntimeError, match="Modifying the batch size"):
            view.auto_batch_size_()
    assert set(td.keys(True, True)) == {"a", ("b", "c")}  # the source is unchanged


def test_views_refuse_new_memmap_entries(tmp_path):
    td = _dense().memmap_(tmp_path / "src")
    view = _lazy_view_of(td)
    with pytest.raises(RuntimeError, match="after instantiation") as info:
        view.make_memmap("z", (4, 3))
    assert "LazyViewTensorDict" in str(info.value)


def test_td_params_memmap_copies_into_a_tensordict(tmp_path):
    params = TensorDictParams(_dense().float())
    out = params.memmap(tmp_path / "p")
    assert type(out) is TensorDict and out.is_memmap()
    assert not params.is_memmap()
    # still pickled as a module
    restored = pickle.loads(pickle.dumps(params))
    assert type(restored) is TensorDictParams
    assert [n for n, _ in restored.named_parameters()] == ["a", "b.c"]


def test_views_refuse_select_in_place_exclude_deletes_through():
    td = _dense()
    for view in (_lazy_view_of(td), td._get_sub_tensordict(0)):
        with pytest.raises(RuntimeError, match="Cannot call select"):
            view.select("a", inplace=True)
        assert set(view.select("a").keys()) == {"a"}
        assert set(view.exclude("a").keys()) == {"b"}
    assert set(td.keys(True, True)) == {"a", ("b", "c")}
    # exclude / split_keys in place delete the keys from the source (as in 0.15.3)
    view = _lazy_view_of(td)
    rest = view.split_keys(["a"], inplace=True)[1]
    assert rest is view and "a" not in td.keys()


def test_every_kind_is_a_tensor_collection(kind):
    # 0.15.3's import path: tensordict._td.is_tensor_collection
    from tensordict._td import is_tensor_collection

    name, td = kind
    assert is_tensor_collection(td) and is_tensor_collection(type(td))


def test_a_lazy_stack_keeps_its_batch_size():
    stack = KINDS["lazy_stack"](None)  # entries of (3, 4, 2) and (3, 4)
    assert stack.auto_batch_size_() is stack and stack.batch_size == (3, 4)
    members = [TensorDict(a=torch.zeros(4, 2)) for _ in range(3)]
    stack = LazyStackedTensorDict(*members, stack_dim=0)
    with pytest.raises(RuntimeError, match="Modifying the batch size"):
        stack.auto_batch_size_()  # would be (3, 4, 2)
    assert stack.batch_size == (3,)
