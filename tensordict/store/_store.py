"""TensorDictStore: a tensordict whose entries live on a Redis-compatible server.

The layout on the server is in ``_layout.py``. A ``TensorDictStore`` is a handle, as
``PersistentTensorDict`` is on a file: ``get`` downloads one entry, ``store[idx]``
downloads only the rows of ``idx`` (``GETRANGE`` of their byte ranges), ``store[idx] =
value`` uploads only them (``SETRANGE``), and every other op reads what it needs and
returns its result in RAM, as a :class:`~tensordict.TensorDict`. Nested tensordicts are
handles on the same store (``store["b"]`` writes through); tensors that ``get`` returns
are copies.

One call is one round trip: its commands go in one pipeline. Writes are one
``MULTI``/``EXEC`` transaction (a whole entry) or one script (rows): the server applies
all of a call or none of it, so a connection lost mid-call leaves nothing half-written.
The metadata a handle keeps (shapes and dtypes, for byte offsets) is checked against the
store's version counter in the same round trip: a read retries with fresh metadata,
and an indexed write is refused by the server (and retried) if another process changed
the entries meanwhile.

``redis`` (redis-py) is an optional dependency: ``pip install tensordict[store]``.
"""

from __future__ import annotations

import importlib
import json
import sys
import uuid
from typing import Any, Literal, get_args

import torch
from torch import Tensor

from tensordict import _errors
from tensordict._compat import _getitem_batch_size
from tensordict._generated.tensordict_ops import TensorDictGeneratedOps
from tensordict._keys import unravel_key_to_tuple
from tensordict._outside_ram import OutsideRam
from tensordict._registry import container_class, register
from tensordict._td import TensorDict, _parse_batch_size, _parse_device
from tensordict.base import (
    _index_batch_mismatch,
    _looks_like_key,
    NO_DEFAULT,
    TensorDictBase,
    _is_node,
    _KeysView,
)
from tensordict.store import _layout
from tensordict.store._layout import Names, RowPlan, field, plan_rows

# the labels ``backend=`` takes (a typing.Literal, as in 0.15.3); every one speaks the
# Redis protocol, so the label changes nothing in how a store connects
STORE_BACKENDS = Literal["redis", "dragonfly", "keydb", "valkey"]

# Rows read or written by one script each (one round trip, one reply), so that the
# client library handles one command, not one per row. KEYS: the version key, then one
# data key per tensor; ARGV[1]: the version the caller's shapes were read at. Per
# tensor: its row size in bytes and its runs of consecutive rows, "first,count;...".
# A read returns the version, then per tensor the bytes of its runs, concatenated (the
# caller retries with fresh shapes if the version is not its own). A write also takes
# per tensor the bytes of its runs, and is refused (-1) if the version changed, so that
# no row lands at offsets computed from stale shapes.
READ_ROWS = """
local out = {redis.call('GET', KEYS[1]) or '0'}
for j = 2, #KEYS do
  local row = tonumber(ARGV[2 * j - 2])
  local parts = {}
  if row > 0 then
    for first, count in string.gmatch(ARGV[2 * j - 1], '(%d+),(%d+)') do
      local start = tonumber(first) * row
      parts[#parts + 1] = redis.call('GETRANGE', KEYS[j], start, start + tonumber(count) * row - 1)
    end
  end
  out[j] = table.concat(parts)
end
return out
"""

WRITE_ROWS = """
local ver = redis.call('GET', KEYS[1]) or '0'
if ver ~= ARGV[1] then return -1 end
for j = 2, #KEYS do
  local row = tonumber(ARGV[3 * j - 4])
  local data = ARGV[3 * j - 2]
  local at = 1
  if row > 0 then
    for first, count in string.gmatch(ARGV[3 * j - 3], '(%d+),(%d+)') do
      local n = tonumber(count) * row
      redis.call('SETRANGE', KEYS[j], tonumber(first) * row, string.sub(data, at, at + n - 1))
      at = at + n
    end
  end
end
return #KEYS - 1
"""


def _redis():
    try:
        import redis
    except ImportError:
        raise ModuleNotFoundError(
            "TensorDictStore needs the redis client library: pip install redis "
            "(or pip install tensordict[store])"
        ) from None
    return redis


class StoreConnectionError(ConnectionError):
    """The server of a store did not answer (stopped, unreachable). Also a
    ``redis.exceptions.ConnectionError`` where redis-py is installed (see
    :func:`_connection_error`)."""


_ERROR_CLASSES: dict = {}


def _connection_error(where: str, td_id: str, exc: BaseException) -> Exception:
    redis = _redis()
    cls = _ERROR_CLASSES.get("cls")
    if cls is None:
        cls = _ERROR_CLASSES["cls"] = type(
            "StoreConnectionError",
            (StoreConnectionError, redis.exceptions.ConnectionError),
            {"__module__": __name__},
        )
    return cls(
        f"TensorDictStore {td_id!r}: lost the connection to the Redis server at "
        f"{where} ({type(exc).__name__}: {exc}). Each call's writes are one "
        f"transaction, so the server holds all of the last call or none of it. Check "
        f"that the server is running and reachable, then retry (the store reconnects "
        f"on its next call)."
    )


class _Server:
    """What every handle on one store shares: the client, the key names, and the
    metadata last read with its version."""

    __slots__ = (
        "client",
        "where",
        "names",
        "td_id",
        "prefix",
        "backend",
        "connect",
        "meta",
        "ver",
        "locked",
        "closed",
        "_read_script",
        "_write_script",
    )

    def __init__(self, client, where, prefix, td_id, backend, connect) -> None:
        self.client = client
        self.where = where
        self.prefix = prefix
        self.td_id = td_id
        self.backend = backend
        self.connect = connect  # the arguments that reconnect (pickling, from_store)
        self.names = Names(prefix, td_id)
        self.meta: dict | None = None  # path -> record
        self.ver: int | None = None
        self.locked: set = set()  # paths locked (a path locks what is under it)
        self.closed = False
        self._read_script = self._write_script = None  # made on first use

    @property
    def read_script(self):
        if self._read_script is None:
            self._read_script = self.client.register_script(READ_ROWS)
        return self._read_script

    @property
    def write_script(self):
        if self._write_script is None:
            self._write_script = self.client.register_script(WRITE_ROWS)
        return self._write_script

    # ------------------------------------------------------------------ round trips
    def execute(self, pipe) -> list:
        if self.closed:
            raise RuntimeError(
                f"TensorDictStore {self.td_id!r} is closed: its connection to "
                f"{self.where} was closed by close(); the data stays on the server, "
                f"reconnect with TensorDictStore.from_store(td_id={self.td_id!r}, ...)"
            )
        redis = _redis()
        try:
            return pipe.execute()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            self.meta = self.ver = None
            raise _connection_error(self.where, self.td_id, exc) from exc
        finally:
            pipe.reset()

    def call(self, fn, *args, **kwargs):
        """One command outside a pipeline (a script), with the same errors."""
        if self.closed:
            return self.execute(self.client.pipeline())  # raises the closed error
        redis = _redis()
        try:
            return fn(*args, **kwargs)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            self.meta = self.ver = None
            raise _connection_error(self.where, self.td_id, exc) from exc

    def refresh(self) -> dict:
        """Read the metadata (one round trip) and keep it."""
        pipe = self.client.pipeline(transaction=True)
        pipe.get(self.names.ver)
        pipe.hgetall(self.names.meta)
        ver, raw = self.execute(pipe)
        self._keep(ver, raw)
        return self.meta

    def _keep(self, ver, raw) -> None:
        meta = {}
        for name, record in raw.items():
            meta[_layout.path_of(name)] = json.loads(record)
        self.meta = meta
        self.ver = int(ver or 0)

    def cached(self) -> dict:
        return self.meta if self.meta is not None else self.refresh()

    def wrote(self, pipe_results_ver: int, changes) -> None:
        """After a transaction that bumped the version to ``pipe_results_ver``: apply
        ``changes`` (path -> record, or None for a deletion) to the kept metadata if no
        one else wrote in between, else forget it."""
        if (
            self.meta is not None
            and self.ver is not None
            and pipe_results_ver == self.ver + 1
        ):
            for path, record in changes.items():
                if record is None:
                    self.meta.pop(path, None)
                else:
                    self.meta[path] = record
            self.ver = pipe_results_ver
        else:
            self.meta = self.ver = None

    def read(self, build):
        """Run the reads ``build(pipe, meta)`` queues (it returns a function of their
        results) in one transaction with the version: retried with fresh metadata if the
        version is not the one the metadata was read at."""
        for _ in range(4):
            meta = self.cached()
            ver = self.ver
            pipe = self.client.pipeline(transaction=True)
            pipe.get(self.names.ver)
            finish = build(pipe, meta)
            results = self.execute(pipe)
            if int(results[0] or 0) == ver:
                return finish(results[1:])
            self.meta = self.ver = None
        raise RuntimeError(
            f"TensorDictStore {self.td_id!r}: the entries kept changing on {self.where} "
            f"while reading (another process rewrites them); retry the read"
        )

    def transaction(self, build, changes: dict, atomic: bool = True):
        """Run the writes ``build(pipe)`` queues, and a version bump, as one
        transaction; ``changes`` is what they do to the metadata. ``atomic=False``
        (a new store's first upload, whose id no one knows yet: its metadata, written
        last in one command, is what makes it visible) sends them as one pipeline."""
        pipe = self.client.pipeline(transaction=atomic)
        out = build(pipe)
        if not atomic:  # a new store: version 0 (no key) is its first, nothing to bump
            results = self.execute(pipe)
            self.meta, self.ver = {}, 0
            self.wrote(1, changes)
            self.ver = 0
            return out, results
        pipe.incr(self.names.ver)
        results = self.execute(pipe)
        self.wrote(int(results[-1]), changes)
        return out, results

    def read_rows(self, build):
        """Run the row reads ``build(meta)`` returns (``(data keys, args, finish)``,
        args as :data:`READ_ROWS` takes them) as one script; retried with fresh
        metadata if the version is not the one the metadata was read at."""
        for _ in range(4):
            meta = self.cached()
            ver = self.ver
            keys, args, finish = build(meta)
            results = self.call(
                self.read_script, keys=[self.names.ver] + keys, args=[ver] + args
            )
            if int(results[0] or 0) == ver:
                return finish(results[1:])
            self.meta = self.ver = None
        raise RuntimeError(
            f"TensorDictStore {self.td_id!r}: the entries kept changing on {self.where} "
            f"while reading rows (another process rewrites them); retry the read"
        )

    def write_rows(self, build) -> None:
        """Run the row writes ``build(meta)`` returns (``(data keys, args)``, args as
        :data:`WRITE_ROWS` takes them) as one script, refused by the server and retried
        if the metadata changed."""
        for _ in range(4):
            fresh = self.meta is None
            meta = self.cached()
            try:
                keys, args = build(meta)
            except (RuntimeError, ValueError, TypeError):
                if fresh:
                    raise
                self.meta = self.ver = None  # the kept shapes may be stale: check
                continue
            if not keys:
                return
            done = self.call(
                self.write_script, keys=[self.names.ver] + keys, args=[self.ver] + args
            )
            if done != -1:
                return
            self.meta = self.ver = None
        raise RuntimeError(
            f"TensorDictStore {self.td_id!r}: the entries kept changing on {self.where} "
            f"while writing rows (another process rewrites them); retry the write"
        )

    def subtree(self, meta: dict, path: tuple) -> list:
        n = len(path)
        return [p for p in meta if len(p) > n and p[:n] == path]


def _connect(host, port, db, unix_socket_path, client, redis_kwargs):
    redis = _redis()
    if client is not None:
        kwargs = client.connection_pool.connection_kwargs
        where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
        return client, where
    kwargs = dict(redis_kwargs)
    if "retry" not in kwargs:
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        # a stopped server is reported within about a second, not after redis-py's
        # default of retries with backoff
        kwargs["retry"] = Retry(ExponentialBackoff(cap=0.2, base=0.02), 2)
    kwargs.setdefault("socket_connect_timeout", 5)
    if unix_socket_path is not None:
        return (
            redis.Redis(unix_socket_path=unix_socket_path, db=db, **kwargs),
            unix_socket_path,
        )
    return redis.Redis(host=host, port=port, db=db, **kwargs), f"{host}:{port}"


def _check_backend(backend: str) -> None:
    if backend not in get_args(STORE_BACKENDS):
        raise ValueError(
            f"TensorDictStore: unknown backend {backend!r}; expected one of "
            f"{list(get_args(STORE_BACKENDS))} (all speak the Redis protocol)"
        )


# ----------------------------------------------------------------------------- class


@register
class TensorDictStore(OutsideRam, TensorDictGeneratedOps, TensorDictBase):
    """A tensordict whose entries live on a Redis-compatible server (Redis, Valkey,
    Dragonfly, KeyDB).

    Each tensor is one string of raw bytes on the server, its shape and dtype are kept
    beside it (so ``keys()`` and shapes download no data), and another process or
    machine attaches with :meth:`from_store` and the store's ``td_id``. The data stays
    on the server after :meth:`close` and after the process ends; :meth:`clear_redis`
    deletes it. See ``docs/persistence.md``.

    Keyword Args:
        backend: a label for the kind of server (``"redis"``, ``"valkey"``,
            ``"dragonfly"``, ``"keydb"``); all speak the same protocol.
        host, port, db: where the server is (default ``localhost:6379``, db 0).
        unix_socket_path: a Unix socket of a server on this machine (then ``host``
            and ``port`` are ignored).
        prefix: the namespace of the store's keys on the server.
        batch_size: the batch size (default ``torch.Size([])``).
        device: the device of the tensors reads return (the server holds bytes).
        client: an existing ``redis.Redis`` client to use.
        td_id: the store's id on the server (default: a new UUID). The constructor
            does not read an existing store's batch size: use :meth:`from_store`.
        cache_metadata: accepted for 0.15.3's signature; shapes and dtypes are always
            kept and checked against the store's version in the same round trip.
        **redis_kwargs: passed to ``redis.Redis``.

    >>> from tensordict.store._server import LocalServer  # a throwaway local server
    >>> with LocalServer() as server:
    ...     store = TensorDictStore(port=server.port, batch_size=[100])
    ...     store["obs"] = torch.zeros(100, 84)
    ...     print(store[3:5]["obs"].shape)
    ...     store.clear_redis()
    ...     store.close()
    torch.Size([2, 84])
    """

    _refuses_memmap_in_place = True
    _memmap_in_place_refusal = "on its Redis server"

    __slots__ = (
        "_server",
        "_path",
        "_batch_size",
        "_device",
        "_names",
        "_last_lock_op",
        "_lock_stack",
        "_tensorclass",
        "__weakref__",
    )

    _RESTRUCTURE_HINT = (
        "use the out-of-place op, whose result is in RAM, or write it back with update()"
    )

    def __init__(
        self,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        batch_size=None,
        device=None,
        client=None,
        td_id: str | None = None,
        cache_metadata: bool = True,
        **redis_kwargs,
    ) -> None:
        self._open(
            backend,
            host,
            port,
            db,
            unix_socket_path,
            prefix,
            batch_size,
            device,
            client,
            td_id,
            redis_kwargs,
        )
        # the store's own record: its batch size and device (one transaction)
        server = self._server
        record = self._root_record()
        server.transaction(
            lambda pipe: pipe.hset(server.names.meta, field(()), json.dumps(record)),
            {(): record},
        )

    def _root_record(self) -> dict:
        record = {
            "t": "td",
            "batch_size": list(self._batch_size),
            "device": _device_str(self._device),
        }
        tensorclass = getattr(self, "_tensorclass", None)
        if tensorclass is not None:
            record["tensorclass"] = tensorclass
        return record

    @property
    def _tensorclass_cls(self) -> str | None:
        """The ``module.qualname`` of the tensorclass this store was made from
        (``from_store`` wraps the store in it), or ``None``."""
        if self._path:
            return None
        record = self._server.cached().get((), {})
        return record.get("tensorclass")

    @property
    def _backend(self) -> str:
        return self._server.backend

    def is_contiguous(self) -> bool:
        """``False``: the entries are on the server (as in 0.15.3)."""
        return False

    def share_memory_(self):
        """Refused: the entries live on the server, which every process reaches
        already (``NotImplementedError``, as in 0.15.3)."""
        raise NotImplementedError(
            "TensorDictStore.share_memory_(): the entries live on the Redis server, "
            "which other processes reach by the store's td_id; share the store itself "
            "(it pickles as its address and id), or share_memory_() a to_tensordict() copy"
        )

    def fill_(self, key, value):
        """Fill the entry ``key`` with ``value`` on the server."""
        path = self._path + unravel_key_to_tuple(key)
        record = self._server.refresh().get(path)
        if record is None:
            raise _errors.key_missing(key, self.keys(True))
        if record["t"] == "td":
            self._get_path(path[len(self._path) :]).apply_(
                lambda x: x.fill_(value)
            )  # noqa
            return self
        full = torch.full(
            record["shape"], value, dtype=_layout.dtype_of(record["dtype"])
        )
        parent = (
            self
            if len(path) == len(self._path) + 1
            else self._get_path(path[len(self._path) : -1])
        )
        parent._set_str(path[-1], full, inplace=True, validated=True)
        return self

    def clone(self, recurse: bool = True, **kwargs):
        """A copy on the server under a new ``td_id`` (``recurse=False``: a new
        handle on the same data, as in 0.15.3)."""
        server = self._server
        if not recurse:
            return TensorDictStore._view(
                server, self._path, self._batch_size, self._device
            )
        connect = dict(server.connect)
        connect.pop("redis_kwargs", None)
        copy = object.__new__(TensorDictStore)
        copy._open(
            connect["backend"],
            connect["host"],
            connect["port"],
            connect["db"],
            connect["unix_socket_path"],
            connect["prefix"],
            self._batch_size,
            self._device,
            server.client,
            None,
            {},
        )
        copy._server.where = server.where
        copy._server.connect = server.connect
        copy._tensorclass = self._tensorclass_cls
        copy._upload(self._to_ram(), root=True)
        return copy

    def _open(
        self,
        backend,
        host,
        port,
        db,
        unix_socket_path,
        prefix,
        batch_size,
        device,
        client,
        td_id,
        redis_kwargs,
    ) -> None:
        """Connect (no round trip) and set this handle up as the store's root."""
        _check_backend(backend)
        connection, where = _connect(
            host, port, db, unix_socket_path, client, redis_kwargs
        )
        fresh = td_id is None
        td_id = str(uuid.uuid4()) if td_id is None else str(td_id)
        connect = dict(
            backend=backend,
            host=host,
            port=port,
            db=db,
            unix_socket_path=unix_socket_path,
            prefix=prefix,
            redis_kwargs={k: v for k, v in redis_kwargs.items() if k != "retry"},
        )
        server = _Server(connection, where, prefix, td_id, backend, connect)
        if fresh:  # a new id: nothing is on the server under it yet
            server.meta, server.ver = {}, 0
        self._init_view(
            server, (), _parse_batch_size(batch_size or []), _parse_device(device)
        )

    def _init_view(self, server, path, batch_size, device) -> None:
        self._server = server
        self._path = path
        self._batch_size = batch_size
        self._device = device
        self._names = None
        self._last_lock_op = None
        self._lock_stack = None
        self._tensorclass = None

    @classmethod
    def _view(cls, server, path, batch_size, device) -> "TensorDictStore":
        self = object.__new__(cls)
        self._init_view(server, path, batch_size, device)
        return self

    # ------------------------------------------------------------------ building
    @classmethod
    def from_store(
        cls,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        td_id: str,
        device=None,
        tensorclass_cls=None,
        client=None,
        **kwargs,
    ) -> "TensorDictStore":
        """Attach to the existing store ``td_id`` (its batch size and device are read
        from the server)."""
        _check_backend(backend)
        connection, where = _connect(host, port, db, unix_socket_path, client, kwargs)
        connect = dict(
            backend=backend,
            host=host,
            port=port,
            db=db,
            unix_socket_path=unix_socket_path,
            prefix=prefix,
            redis_kwargs={k: v for k, v in kwargs.items() if k != "retry"},
        )
        server = _Server(connection, where, prefix, str(td_id), backend, connect)
        meta = server.refresh()
        record = meta.get(())
        if record is not None and record.get("t") == "stack":  # a lazy stack's id
            return container_class("LazyStackedTensorDictStore").from_store(
                backend=backend,
                host=host,
                port=port,
                db=db,
                unix_socket_path=unix_socket_path,
                prefix=prefix,
                td_id=td_id,
                device=device,
                client=connection,
                **kwargs,
            )
        if record is None:
            raise KeyError(
                f"No TensorDictStore with td_id {td_id!r} under the prefix {prefix!r} "
                f"on {where}; check the id and prefix (the id is in the store's repr)"
            )
        if device is None and record.get("device") is not None:
            device = record["device"]
        self = object.__new__(cls)
        self._init_view(
            server, (), torch.Size(record["batch_size"]), _parse_device(device)
        )
        if tensorclass_cls is None and not _RAW.get("raw"):
            tensorclass_cls = record.get("tensorclass")
            if tensorclass_cls is not None:
                tensorclass_cls = _loaded_class(tensorclass_cls, where)
        elif isinstance(tensorclass_cls, str):
            tensorclass_cls = _import_class(tensorclass_cls)
        if tensorclass_cls is not None:
            return tensorclass_cls._from_td(self)
        return self

    @classmethod
    def from_tensordict(
        cls,
        td: TensorDictBase,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        device=None,
        td_id: str | None = None,
        client=None,
        **kwargs,
    ) -> "TensorDictStore":
        """Upload ``td`` to a new store (one transaction) and return it (a
        :class:`LazyStackedTensorDictStore` for a lazy stack, whose members may
        differ in shape)."""
        tensorclass = None
        if getattr(
            type(td), "_is_tensorclass", False
        ):  # its data, and its class's path
            tensorclass = f"{type(td).__module__}.{type(td).__qualname__}"
            td = td._tensordict
        if isinstance(td, container_class("LazyStackedTensorDict")):
            return container_class("LazyStackedTensorDictStore").from_lazy_stack(
                td,
                backend=backend,
                host=host,
                port=port,
                db=db,
                unix_socket_path=unix_socket_path,
                prefix=prefix,
                device=device,
                td_id=td_id,
                client=client,
                **kwargs,
            )
        store = object.__new__(cls)
        store._open(
            backend,
            host,
            port,
            db,
            unix_socket_path,
            prefix,
            td.batch_size,
            device if device is not None else td.device,
            client,
            td_id,
            kwargs,
        )
        store._tensorclass = tensorclass
        store._upload(td, root=True)  # the root record and every entry: one transaction
        return store

    @classmethod
    def from_dict(
        cls,
        input_dict,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        auto_batch_size: bool = False,
        batch_size=None,
        device=None,
        batch_dims: int | None = None,
        names=None,
        **kwargs,
    ) -> "TensorDictStore":
        """Upload a nested dict of tensors (or a tensordict) to a new store."""
        if isinstance(input_dict, TensorDictBase):
            source = input_dict
            if batch_size is not None:
                source = source.copy()
                source.batch_size = batch_size
        else:
            source = TensorDict.from_dict(
                input_dict,
                batch_size=batch_size,
                auto_batch_size=auto_batch_size,
                batch_dims=batch_dims,
            )
        return cls.from_tensordict(
            source,
            backend=backend,
            host=host,
            port=port,
            db=db,
            unix_socket_path=unix_socket_path,
            prefix=prefix,
            device=device,
            **kwargs,
        )

    def _upload(self, td: TensorDictBase, root: bool = False) -> None:
        """Write every entry of ``td`` under this handle (one transaction), and the
        store's own record with ``root``."""
        records: dict = {}
        blobs: list = []
        _collect(td, self._path, records, blobs, self._batch_size)
        if root:
            records[()] = self._root_record()
        server = self._server
        names = server.names
        meta = server.cached()
        stale = [p for p in server.subtree(meta, self._path) if p not in records]

        def build(pipe):
            for path in stale:
                pipe.delete(names.data(path))
                pipe.hdel(names.meta, field(path))
            for path, data in blobs:
                pipe.set(names.data(path), data)
            if records:
                pipe.hset(
                    names.meta,
                    mapping={field(p): json.dumps(r) for p, r in records.items()},
                )

        changes = {p: None for p in stale}
        changes.update(records)
        # a new store (a fresh id, empty): the data first, then every record in one
        # HSET; a reader finds the store only once its record is there, so MULTI/EXEC
        # (~0.1 ms of server time on a 1 MB upload) is not needed to show all or nothing
        fresh = root and not meta and server.ver == 0
        server.transaction(build, changes, atomic=not fresh)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connection (the data stays on the server)."""
        server = self._server
        if not server.closed:
            server.client.close()
            server.closed = True

    def clear_redis(self) -> None:
        """Delete every key of this store from the server (the connection stays
        open; the handle is an empty store after)."""
        server = self._server
        names = server.names
        meta = server.refresh()
        gone = server.subtree(meta, self._path)
        data = [names.data(p) for p in gone if meta[p]["t"] == "tensor"]
        pipe = server.client.pipeline(transaction=True)
        if data:
            pipe.delete(*data)
        if not self._path:
            # the store stays (empty, same batch size): its own record is written back
            pipe.delete(names.meta)
            pipe.hset(names.meta, field(()), json.dumps(self._root_record()))
        elif gone:
            pipe.hdel(names.meta, *[field(p) for p in gone])
        pipe.incr(names.ver)
        server.execute(pipe)
        server.meta = server.ver = None

    @property
    def td_id(self) -> str:
        return self._server.td_id

    @property
    def _td_id(self) -> str:
        return self._server.td_id

    def _pickle_reduce(self):
        connect = self._server.connect
        return _reattach, (
            connect,
            self._server.td_id,
            self._path,
            None if self._device is None else str(self._device),
        )

    # ------------------------------------------------------------------ attributes
    @property
    def batch_size(self) -> torch.Size:
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value) -> None:
        bs = _parse_batch_size(value)
        server = self._server
        meta = server.refresh()
        n = len(bs)
        for path in server.subtree(meta, self._path):
            if len(path) != len(self._path) + 1:
                continue
            record = meta[path]
            shape = record.get("shape") or record.get("batch_size")
            if shape is not None and tuple(shape[:n]) != tuple(bs):
                raise _errors.batch_mismatch(path[-1], shape, bs)
        record = dict(meta.get(self._path) or {"t": "td"})
        record["batch_size"] = list(bs)
        server.transaction(
            lambda pipe: pipe.hset(
                server.names.meta, field(self._path), json.dumps(record)
            ),
            {self._path: record},
        )
        self._batch_size = bs

    @property
    def _is_locked(self) -> bool:
        locked = self._server.locked
        if not locked:
            return False
        path = self._path
        return any(path[: len(p)] == p for p in locked)

    @_is_locked.setter
    def _is_locked(self, value: bool) -> None:
        self._set_lock(value)

    def _set_lock(self, locked: bool) -> None:
        paths = self._server.locked
        if locked:
            paths.add(self._path)
        else:
            n = len(self._path)
            for p in [
                p for p in paths if p[:n] == self._path or self._path[: len(p)] == p
            ]:
                paths.discard(p)

    # ------------------------------------------------------------------ storage
    def _children(self, meta: dict) -> list:
        return _children_of(meta, self._path)

    def _own_keys(self):
        return [key for key, _, _ in self._children(self._server.refresh())]

    def _child_view(self, path: tuple, record: dict) -> "TensorDictStore":
        return TensorDictStore._view(
            self._server, path, torch.Size(record["batch_size"]), self._device
        )

    def _value(self, record: dict, data) -> Any:
        kind = record["t"]
        if kind == "tensor":
            tensor = _layout.from_bytes(data, record["dtype"], record["shape"])
            return self._on_device(tensor)
        return _nt_value(record)

    def _on_device(self, tensor: Tensor) -> Tensor:
        if self._device is not None and self._device.type != "cpu":
            return tensor.to(self._device)
        return tensor

    def _own_items(self):
        def build(pipe, meta):
            children = self._children(meta)
            for _, path, record in children:
                if record["t"] == "tensor":
                    pipe.get(self._server.names.data(path))

            def finish(results):
                items, it = [], iter(results)
                for key, path, record in children:
                    if record["t"] == "tensor":
                        items.append((key, self._value(record, next(it))))
                    elif record["t"] == "td":
                        items.append((key, self._child_view(path, record)))
                    else:
                        items.append((key, record.get("v")))
                return items

            return finish

        self._server.refresh()
        return self._server.read(build)

    def _own_values(self):
        return [value for _, value in self._own_items()]

    def _get_str(self, key: str, default: Any, *, missing_ok: bool = False) -> Any:
        server = self._server
        path = self._path + (key,)
        # the record and the bytes in one round trip (the bytes are empty for a node)
        pipe = server.client.pipeline(transaction=True)
        pipe.hget(server.names.meta, field(path))
        pipe.get(server.names.data(path))
        raw, data = server.execute(pipe)
        if raw is None:
            if default is NO_DEFAULT and not missing_ok:
                raise _errors.key_missing(key, self._own_keys())
            return default
        record = json.loads(raw)
        if record["t"] == "td":
            return self._child_view(path, record)
        return self._value(record, data)

    def get_at(self, key, *args, **kwargs):
        """``store.get(key)[index]``, downloading only the rows of ``index``."""
        index = args[0] if args else kwargs.get("index", kwargs.get("idx"))
        path = self._path + unravel_key_to_tuple(key)
        meta = self._server.cached()
        record = meta.get(path)
        if record is None or record["t"] != "tensor":
            meta = self._server.refresh()
            record = meta.get(path)
        if record is not None and record["t"] == "tensor":
            # td.get(key)[index]: the index is the tensor's (as on a TensorDict)
            plan = plan_rows(index, torch.Size(record["shape"]))
            if plan is not None:
                return self._read_rows_of({path: plan}, plan)[path]
        return TensorDictBase.get_at(self, key, *args, **kwargs)

    def _set_str(
        self,
        key: str,
        value,
        *,
        inplace: bool,
        validated: bool,
        non_blocking: bool = False,
    ) -> None:
        server = self._server
        path = self._path + (key,)
        meta = server.refresh()
        old = meta.get(path)
        if old is None and self._is_locked:
            raise _errors.locked(f"set the key {key!r}")
        if isinstance(value, dict) and not isinstance(value, TensorDictBase):
            value = TensorDict(value, batch_size=self._batch_size)
        if (
            getattr(value, "_is_non_tensor", False)
            and hasattr(value, "data")
            and not isinstance(value, Tensor)
        ):
            value = value.data if not hasattr(value, "tolist") else value.tolist()
        n = len(self._batch_size)
        if (
            isinstance(value, (int, float, bool))
            and old is not None
            and old["t"] == "tensor"
        ):
            value = torch.full(
                old["shape"], value, dtype=_layout.dtype_of(old["dtype"])
            )
        if isinstance(value, Tensor):
            if not validated and value.shape[:n] != self._batch_size:
                raise _errors.batch_mismatch(key, value.shape, self._batch_size)
            if (
                inplace
                and old is not None
                and old["t"] == "tensor"
                and list(value.shape) != old["shape"]
            ):
                if value.shape[n:] != torch.Size(old["shape"][n:]):
                    raise _errors.inplace_mismatch(key, value.shape, old["shape"])
            if inplace and old is not None and old["t"] == "tensor":
                value = value.to(_layout.dtype_of(old["dtype"]))
            self._write_entries(
                path,
                old,
                {path: _layout.tensor_record(value)},
                [(path, _layout.as_bytes(value))],
            )
            return
        if _is_node(value):
            if not validated and value.batch_size[:n] != self._batch_size:
                raise _errors.batch_mismatch(key, value.batch_size, self._batch_size)
            if inplace and old is not None and old["t"] == "td":
                self._child_view(path, old).update(value, inplace=True)
                return
            records: dict = {}
            blobs: list = []
            _collect(value, path, records, blobs, value.batch_size)
            self._write_entries(path, old, records, blobs)
            return
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"cannot store the non-tensor entry {key!r} ({type(value).__name__}) in "
                f"a TensorDictStore: only values JSON can hold (str, numbers, bool, None, "
                f"lists, dicts); the store never pickles"
            ) from None
        self._write_entries(path, old, {path: {"t": "json", "v": value}}, [])

    def _write_entries(self, path, old, records: dict, blobs: list) -> None:
        """Replace the entry at ``path`` (and what was under it) by ``records`` and
        ``blobs``, in one transaction."""
        server = self._server
        names = server.names
        meta = server.cached()
        top = records.get(path)
        if (
            top is not None
        ):  # the entry keeps its place among its siblings; a new one goes last
            siblings = [
                r.get("order", 0)
                for p, r in meta.items()
                if len(p) == len(path) and p[:-1] == path[:-1]
            ]
            top["order"] = (
                old.get("order", 0) if old is not None else max(siblings, default=0) + 1
            )
        stale = (
            [p for p in server.subtree(meta, path) if p not in records]
            if old is not None
            else []
        )
        if old is not None and old["t"] == "tensor" and path not in blobs_paths(blobs):
            stale.append(path)

        def build(pipe):
            for p in stale:
                pipe.delete(names.data(p))
                if p not in records:
                    pipe.hdel(names.meta, field(p))
            for p, data in blobs:
                pipe.set(names.data(p), data)
            pipe.hset(
                names.meta,
                mapping={field(p): json.dumps(r) for p, r in records.items()},
            )

        changes = {p: None for p in stale if p not in records}
        changes.update(records)
        server.transaction(build, changes)

    def _del_str(self, key: str) -> None:
        server = self._server
        path = self._path + (key,)
        meta = server.refresh()
        if self._is_locked:
            raise _errors.locked(f"delete the key {key!r}")
        if path not in meta:
            raise _errors.key_missing(key, [k for k, _, _ in self._children(meta)])
        gone = [path] + server.subtree(meta, path)
        names = server.names

        def build(pipe):
            for p in gone:
                pipe.delete(names.data(p))
                pipe.hdel(names.meta, field(p))

        server.transaction(build, {p: None for p in gone})

    def _walk(self, include_nested, leaves_only, is_leaf, with_values=True) -> list:
        if with_values or is_leaf is not None:
            return TensorDictBase._walk(
                self, include_nested, leaves_only, is_leaf, with_values
            )
        meta = self._server.refresh()
        out: list = []
        _walk_meta(meta, self._path, include_nested, leaves_only, out)
        return out

    def keys(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf=None,
        *,
        sort: bool = False,
    ):
        """The keys (read from the store's metadata: no data is downloaded)."""
        return _StoreKeysView(self, include_nested, leaves_only, is_leaf, sort)

    def __contains__(self, key) -> bool:
        return key in self.keys(include_nested=True)

    def _create_nested_str(self, key: str) -> "TensorDictStore":
        self._set_str(key, self._new_empty(), inplace=False, validated=True)
        return self._child_view(
            self._path + (key,), {"batch_size": list(self._batch_size)}
        )

    # ------------------------------------------------------------------ indexing
    def _leaf_records(self, meta: dict) -> dict:
        """path -> record of every tensor under this handle."""
        n = len(self._path)
        return {
            p: r
            for p, r in meta.items()
            if len(p) > n and p[:n] == self._path and r["t"] == "tensor"
        }

    def _read_rows_of(self, plans: dict, plan: RowPlan) -> dict:
        """Download the rows of ``plan`` of each tensor path in ``plans`` (one script,
        one round trip): path -> tensor shaped as the index asks."""
        server = self._server
        span = plan.read_as_span()
        lo = plan.span()[0] if span and plan.rows else 0
        runs = f"{lo},{plan.span()[1] - lo}" if span else plan.runs_text()

        def build(meta):
            keys, args, jobs = [], [], []
            for path in plans:
                record = meta.get(path)
                if record is None or record["t"] != "tensor":
                    continue
                keys.append(server.names.data(path))
                args.append(_layout.row_bytes(record))
                args.append(runs)
                jobs.append((path, record))

            def finish(results):
                out = {}
                for (path, record), data in zip(jobs, results):
                    feature = tuple(record["shape"][1:])
                    if span:
                        block = _layout.from_bytes(
                            data, record["dtype"], (-1,) + feature
                        )
                        rows = block[torch.tensor(plan.rows, dtype=torch.long) - lo]
                    else:
                        rows = _layout.from_bytes(
                            data, record["dtype"], (len(plan.rows),) + feature
                        )
                    out[path] = self._on_device(_layout.apply_rest(rows, plan))
                return out

            return keys, args, finish

        return server.read_rows(build)

    def _index(self, index) -> TensorDict:
        plan = plan_rows(index, self._batch_size)
        if plan is None:  # an index that is no choice of rows: read all, index here
            return self._to_ram()[index]
        meta = self._server.cached()
        leaves = self._leaf_records(meta)
        values = self._read_rows_of(dict.fromkeys(leaves), plan)
        new_bs = plan.batch_size(self._batch_size)
        return self._build(
            meta, self._path, values, new_bs, len(self._batch_size), plan
        )

    def _build(self, meta, path, values, new_bs, n, plan) -> TensorDict:
        storage = {}
        for key, child, record in _children_of(meta, path):
            if record["t"] == "tensor":
                if child in values:
                    storage[key] = values[child]
            elif record["t"] == "td":
                bs = new_bs + torch.Size(record["batch_size"][n:])
                storage[key] = self._build(meta, child, values, bs, n, plan)
            elif record["t"] == "json_rows":  # one value per row: the rows asked for
                picked = [record["v"][r] for r in plan.rows]
                if not plan.lead:
                    storage[key] = picked[0]
                else:
                    storage[key] = _nt_stack(picked, plan.lead)
            else:
                storage[key] = record.get("v")
        return TensorDict._from_storage(storage, new_bs, self._device, None)

    def __setitem__(self, index, value) -> None:
        if isinstance(index, str) or (
            isinstance(index, tuple) and index and _looks_like_key(index)
        ):
            return TensorDictBase.__setitem__(self, index, value)
        # rows: one script (or one transaction) applies all of the write or none of it,
        # and a bad value is refused before anything is sent, so no snapshot is kept
        plan = False
        if isinstance(value, TensorDictBase):
            plan = plan_rows(index, self._batch_size)
            # a tensordict of another batch size is named in 0.15.3's words (checked on
            # the rows' batch size where the index is rows: the general check costs more
            # than the write's own work)
            if (
                plan.batch_size(self._batch_size) != value.batch_size
                if plan is not None
                else _index_batch_mismatch(self._batch_size, index, value.batch_size)
            ) and _index_batch_mismatch(self._batch_size, index, value.batch_size):
                raise _errors.index_batch_mismatch(
                    _getitem_batch_size(self._batch_size, index),
                    self._batch_size,
                    index,
                    value.batch_size,
                )
        self._set_at_index(index, value, plan)

    def _set_at_index(self, index, value, plan=False) -> None:
        if plan is False:  # (__setitem__ passes the plan it made)
            plan = plan_rows(index, self._batch_size)
        if plan is None or plan.rest is not None:
            # not rows of the first dim: change the whole entries in RAM, write back
            ram = self._to_ram()
            ram._set_at_index(index, value)
            self._upload(ram)
            return
        if not plan.rows:
            return
        server = self._server
        n = len(self._path)
        if isinstance(value, dict) and not isinstance(value, TensorDictBase):
            value = TensorDict(value, batch_size=plan.lead + self._batch_size[1:])
        lead = torch.Size(plan.lead)

        runs = plan.runs_text()

        def build(meta):
            keys, args = [], []
            for path, record in self._leaf_records(meta).items():
                if isinstance(value, TensorDictBase):
                    leaf = value._get_path(path[n:], None)
                    if leaf is None:
                        continue
                else:
                    leaf = value
                dtype = _layout.dtype_of(record["dtype"])
                feature = torch.Size(record["shape"][1:])
                target = lead + feature
                try:
                    if not (
                        type(leaf) is Tensor
                        and leaf.dtype is dtype
                        and leaf.shape == target
                    ):
                        leaf = torch.as_tensor(leaf, dtype=dtype)
                        while leaf.ndim > len(target) and leaf.shape[0] == 1:
                            leaf = leaf[0]  # torch's setitem takes leading ones too
                        leaf = leaf.expand(target)
                except RuntimeError:
                    shape = getattr(leaf, "shape", ())
                    raise RuntimeError(
                        f"cannot write the key {_fmt(path[n:])} at {index!r}: the value "
                        f"has shape {tuple(shape)}, the rows asked for have shape "
                        f"{tuple(lead + feature)}"
                    ) from None
                data = _layout.as_bytes(
                    leaf.reshape((len(plan.rows),) + tuple(feature))
                )
                keys.append(server.names.data(path))
                args += [_layout.row_bytes(record), runs, _arg(data)]
            return keys, args

        if isinstance(value, TensorDictBase):
            have = {p[n:] for p in self._leaf_records(server.cached())}
            missing = [
                k for k in value.keys(True, True) if unravel_key_to_tuple(k) not in have
            ]
            if missing:  # the kept metadata may be stale: ask the server
                have = {p[n:] for p in self._leaf_records(server.refresh())}
            for key in missing:
                path = unravel_key_to_tuple(key)
                if path in have:
                    continue
                if self._is_locked:
                    raise _errors.locked(f"set the key {key!r}")
                # a new entry (the first write of a store at an index): zeros elsewhere
                leaf = value.get(key)
                feature = leaf.shape[len(lead) :]
                self._set_path(
                    path,
                    torch.zeros(self._batch_size + feature, dtype=leaf.dtype),
                    inplace=False,
                    validated=True,
                )
        server.write_rows(build)
        if isinstance(value, TensorDictBase):
            self._set_non_tensor_rows(value, plan)

    def _set_non_tensor_rows(self, value: TensorDictBase, plan: RowPlan) -> None:
        """The non-tensor entries of ``value`` written at the rows of ``plan`` (one
        transaction): such an entry keeps one value per row once they differ."""
        written: dict = {}
        _non_tensor_leaves(value, (), written)
        if not written:
            return
        server = self._server
        meta = server.refresh()
        n0 = self._batch_size[0]
        records = {}
        for rel, entry in written.items():
            path = self._path + rel
            old = meta.get(path)
            if old is not None and old["t"] not in ("json", "json_rows"):
                continue  # a tensor or a tensordict there: not a non-tensor entry
            if isinstance(entry, container_class("NonTensorStack")):
                new = entry.tolist()
                per_row = plan.lead and len(new) == len(plan.rows)
            else:
                new = entry.data if getattr(entry, "_is_non_tensor", False) else entry
                per_row = False
            try:
                json.dumps(new)
            except (TypeError, ValueError):
                raise TypeError(
                    f"cannot store the non-tensor entry {_fmt(rel)!r} "
                    f"({type(new).__name__}) in a TensorDictStore: only values JSON can "
                    f"hold; the store never pickles"
                ) from None
            if not plan.lead:
                per_row = False
            rows = _nt_rows(old, n0)
            for i, r in enumerate(plan.rows):
                rows[r] = new[i] if per_row else new
            record = _nt_record(rows)
            record["order"] = (old or {}).get("order", len(meta) + len(records) + 1)
            records[path] = record
        if not records:
            return
        for path in list(records):  # parents created on the way
            for cut in range(len(self._path) + 1, len(path)):
                parent = path[:cut]
                if parent not in meta and parent not in records:
                    records[parent] = {"t": "td", "batch_size": list(self._batch_size)}
        server.transaction(
            lambda pipe: pipe.hset(
                server.names.meta,
                mapping={field(p): json.dumps(r) for p, r in records.items()},
            ),
            records,
        )

    def set_at_(self, key, value, index, *, non_blocking: bool = False):
        """Write ``value`` into the rows ``index`` of the entry ``key`` (only those
        rows are uploaded)."""
        path = self._path + unravel_key_to_tuple(key)
        meta = self._server.refresh()
        record = meta.get(path)
        if record is None:
            raise _errors.key_missing(key, self.keys(True))
        parent = TensorDictStore._view(
            self._server,
            path[:-1],
            torch.Size(meta.get(path[:-1], {}).get("batch_size", self._batch_size)),
            self._device,
        )
        if record["t"] == "tensor":
            # td.get(key)[index] = value: the index is the tensor's (as on a TensorDict)
            plan = plan_rows(index, torch.Size(record["shape"]))
            if plan is not None and plan.rest is None:
                parent._write_one(path, plan, torch.as_tensor(value))
                return self
            # not rows of the first dim: change the whole tensor here, write it back
            tensor = parent._get_str(path[-1], NO_DEFAULT)
            tensor[index] = torch.as_tensor(value, dtype=tensor.dtype)
            parent._set_str(path[-1], tensor, inplace=True, validated=True)
            return self
        return TensorDictBase.set_at_(
            self, key, value, index, non_blocking=non_blocking
        )

    def _write_one(self, path, plan, leaf) -> None:
        server = self._server
        lead = torch.Size(plan.lead)
        if not plan.rows:
            return

        runs = plan.runs_text()

        def build(meta):
            current = meta.get(path)
            if current is None or current["t"] != "tensor":
                return [], []
            dtype = _layout.dtype_of(current["dtype"])
            feature = torch.Size(current["shape"][1:])
            data = _layout.as_bytes(
                torch.as_tensor(leaf, dtype=dtype)
                .expand(lead + feature)
                .reshape((len(plan.rows),) + tuple(feature))
            )
            return [server.names.data(path)], [
                _layout.row_bytes(current),
                runs,
                _arg(data),
            ]

        server.write_rows(build)

    # ------------------------------------------------------------------ leaves
    def _to_ram(self) -> TensorDict:
        """The whole content as a TensorDict in RAM (one round trip for the data)."""
        server = self._server
        server.refresh()

        def build(pipe, meta):
            leaves = self._leaf_records(meta)
            for path in leaves:
                pipe.get(server.names.data(path))

            def finish(results):
                values = {}
                for (path, record), data in zip(leaves.items(), results):
                    values[path] = self._value(record, data)
                return values

            return finish

        values = server.read(build)
        meta = server.cached()
        return self._build_full(meta, self._path, values, self._batch_size)

    def _build_full(self, meta, path, values, bs) -> TensorDict:
        storage = {}
        for key, child, record in _children_of(meta, path):
            if record["t"] == "tensor":
                if child in values:
                    storage[key] = values[child]
            elif record["t"] == "td":
                storage[key] = self._build_full(
                    meta, child, values, torch.Size(record["batch_size"])
                )
            else:
                storage[key] = _nt_value(record)
        return TensorDict._from_storage(
            storage, bs, self._device, self._names if path == self._path else None
        )

    def to_local(self) -> TensorDict:
        """Deprecated name of :meth:`to_tensordict` (as in 0.15.3)."""
        return self._to_ram()

    def _leaves(self) -> list[Tensor]:
        return self._to_ram()._leaves()

    def _leaves_and_rebuild(self):
        return self._to_ram()._leaves_and_rebuild()

    def _operand_leaves(self, other, op: str, default=None) -> list:
        return self._to_ram()._operand_leaves(other, op, default)

    def _moved_to(self, device) -> TensorDict:
        return self._to_ram()._moved_to(device)

    def __repr__(self) -> str:
        try:
            keys = sorted(self._own_keys())
        except Exception as exc:  # a repr must not fail on a stopped server
            keys = f"<unavailable: {type(exc).__name__}>"
        return (
            f"TensorDictStore(\n    keys={keys},\n    batch_size={self._batch_size!r},\n"
            f"    device={self._device!r},\n    backend={self._server.backend!r},\n"
            f"    td_id={self._server.td_id!r})"
        )


# ----------------------------------------------------------------------------- helpers


class _StoreKeysView(_KeysView):
    """``keys()`` of a store: membership is answered from the metadata (one round
    trip, no data downloaded)."""

    __slots__ = ()

    def __contains__(self, key) -> bool:
        try:
            path = unravel_key_to_tuple(key)
        except (TypeError, KeyError):
            return False
        if len(path) > 1 and not self._include_nested:
            return False
        td = self._td
        record = td._server.refresh().get(td._path + path)
        if record is None:
            return False
        if self._leaves_only:
            if self._is_leaf is not None:
                return _KeysView.__contains__(self, key)
            return record["t"] == "tensor"
        return True


def _nt_value(record: dict):
    """A non-tensor entry as a read of the whole entry returns it."""
    if record["t"] == "json_rows":
        return _nt_stack(record["v"], (len(record["v"]),))
    return record.get("v")


def _nt_stack(values: list, lead: tuple):
    """The values (one per row) as a NonTensorStack of batch size ``lead``."""
    if len(lead) > 1:  # an index tensor of several dims: nest the values as it does
        positions = torch.arange(len(values)).reshape(lead).tolist()

        def nest(p):
            return [nest(q) for q in p] if isinstance(p, list) else values[p]

        values = nest(positions)
    return container_class("NonTensorStack").from_list(values)


def _nt_record(values: list) -> dict:
    """The record of a non-tensor entry with one value per row: one value where they
    are all equal."""
    if values and all(v == values[0] for v in values):
        return {"t": "json", "v": values[0]}
    return {"t": "json_rows", "v": values}


def _nt_rows(record: dict | None, n0: int) -> list:
    if record is None:
        return [None] * n0
    if record["t"] == "json_rows":
        return list(record["v"])
    return [record.get("v")] * n0


def _non_tensor_leaves(td, prefix: tuple, out: dict) -> None:
    """path -> non-tensor entry of ``td`` (any depth)."""
    for key, value in td._own_items():
        path = prefix + (key,)
        if isinstance(value, Tensor):
            continue
        if getattr(value, "_is_non_tensor", False) or not _is_node(value):
            out[path] = value
        else:
            _non_tensor_leaves(value, path, out)


def _arg(data: memoryview):
    """``data`` as a command argument: a copy when short (redis-py sends each
    memoryview argument with a socket write of its own, which costs more than copying
    a few KB), the view otherwise."""
    return data.tobytes() if len(data) < 65536 else data


def blobs_paths(blobs) -> set:
    return {p for p, _ in blobs}


def _fmt(path: tuple):
    return path[0] if len(path) == 1 else path


def _device_str(device):
    return None if device is None else str(device)


def _children_of(meta: dict, path: tuple) -> list:
    n = len(path) + 1
    return sorted(
        ((p[-1], p, r) for p, r in meta.items() if len(p) == n and p[: n - 1] == path),
        key=lambda item: item[2].get("order", 0),
    )


def _collect(td, path: tuple, records: dict, blobs: list, batch_size) -> None:
    """The records and bytes of every entry of ``td`` placed at ``path``."""
    order = 0
    if path:
        records[path] = {"t": "td", "batch_size": list(batch_size)}
    for key, value in td._own_items():
        child = path + (key,)
        order += 1
        if isinstance(value, Tensor):
            record = _layout.tensor_record(value)
            record["order"] = order
            records[child] = record
            blobs.append((child, _layout.as_bytes(value)))
        elif _is_node(value):
            _collect(value, child, records, blobs, value.batch_size)
            records[child]["order"] = order
        else:
            if isinstance(value, container_class("NonTensorStack")):
                records[child] = dict(_nt_record(value.tolist()), order=order)
                continue
            if getattr(value, "_is_non_tensor", False):
                value = value.data
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                raise TypeError(
                    f"cannot store the non-tensor entry {_fmt(child)!r} "
                    f"({type(value).__name__}) in a TensorDictStore: only values JSON "
                    f"can hold (str, numbers, bool, None, lists, dicts); the store never "
                    f"pickles"
                ) from None
            records[child] = {"t": "json", "v": value, "order": order}


def _walk_meta(meta, path, include_nested, leaves_only, out) -> None:
    n = len(path)
    for key, child, record in _children_of(meta, path):
        name = child[n:] if len(child[n:]) > 1 else key
        if record["t"] == "td":
            if include_nested:
                _walk_meta_nested(meta, child, n, leaves_only, out)
            if not leaves_only:
                out.append(name)
        elif record["t"] == "tensor":
            out.append(name)
        elif not leaves_only:
            out.append(name)


def _walk_meta_nested(meta, path, base, leaves_only, out) -> None:
    for key, child, record in _children_of(meta, path):
        name = child[base:]
        if record["t"] == "td":
            _walk_meta_nested(meta, child, base, leaves_only, out)
            if not leaves_only:
                out.append(name)
        elif record["t"] == "tensor" or not leaves_only:
            out.append(name)


_RAW: dict = {}  # set while reattaching a pickled store: no tensorclass wrapping


def _reattach(connect, td_id, path, device):
    connect = dict(connect)
    redis_kwargs = connect.pop("redis_kwargs", {})
    _RAW["raw"] = True
    try:
        root = TensorDictStore.from_store(
            td_id=td_id, device=device, **connect, **redis_kwargs
        )
    finally:
        _RAW.pop("raw", None)
    return root._get_path(path) if path else root


def _import_class(path: str) -> type:
    """The class at ``module.qualname`` (the module is imported: the caller named it)."""
    module_name, _, qualname = path.rpartition(".")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _loaded_class(path: str, where: str) -> type:
    """The tensorclass a store's record names, from a module already imported: a
    module named by data on the server is never imported here (that would run its
    code on the word of whoever can write to the server)."""
    module_name, _, qualname = path.rpartition(".")
    # the longest prefix that is an imported module
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            obj = module
            try:
                for part in parts[cut:]:
                    obj = getattr(obj, part)
            except AttributeError:
                break
            return obj
    raise LookupError(
        f"the store on {where} was made from the tensorclass {path!r}, whose module is "
        f"not imported; import it first, or pass tensorclass_cls= to from_store"
    )


def _to_store(td, **kwargs) -> TensorDictStore:
    return TensorDictStore.from_tensordict(td, **kwargs)
