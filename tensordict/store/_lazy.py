"""LazyStackedTensorDictStore: a lazy stack whose elements live on a Redis server.

Each element is a :class:`TensorDictStore` of its own, with the id ``<td_id>/<i>``, so
that the elements may hold entries of different shapes (as a lazy stack's members
may). The stack itself is one record on the server (its count, stack dim and the
elements' batch size) under ``<td_id>``. It is a
:class:`~tensordict.LazyStackedTensorDict` whose members are those stores: every op of
a lazy stack works on it, ``store[i]`` is element ``i`` (a ``TensorDictStore``, writes go
to the server), and reads or writes of the whole stack make one round trip per element.
The number of elements is fixed when the stack is made (``append``/``insert`` refuse).
"""

from __future__ import annotations

import json
import uuid

import torch

from tensordict._lazy import LazyStackedTensorDict
from tensordict._registry import register
from tensordict._td import _parse_batch_size, _parse_device
from tensordict.store._layout import field
from tensordict.store._store import (
    TensorDictStore,
    _check_backend,
    _connect,
    _Server,
)


def _element_id(td_id: str, i: int) -> str:
    return f"{td_id}/{i}"


@register
class LazyStackedTensorDictStore(LazyStackedTensorDict):
    """A lazy stack of ``count`` tensordicts, each on a Redis-compatible server (see the
    module docstring). Make one from a lazy stack with :meth:`from_lazy_stack` (or
    ``TensorDictStore.from_tensordict``/``to_store`` of a lazy stack), reconnect with
    :meth:`from_store`; the constructor makes ``count`` empty elements of batch size
    ``inner_batch_size``.

    >>> stack = LazyStackedTensorDictStore(count=3, inner_batch_size=[2])  # doctest: +SKIP
    >>> stack[0]["a"] = torch.zeros(2, 5)  # doctest: +SKIP
    """

    __slots__ = ("_stack_server",)

    def __init__(
        self,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        count: int,
        stack_dim: int = 0,
        inner_batch_size,
        device=None,
        client=None,
        td_id: str | None = None,
        cache_metadata: bool = True,
        **redis_kwargs,
    ) -> None:
        _check_backend(backend)
        inner = _parse_batch_size(inner_batch_size)
        connection, where = _connect(
            host, port, db, unix_socket_path, client, redis_kwargs
        )
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
        members = [
            TensorDictStore(
                backend=backend,
                prefix=prefix,
                batch_size=inner,
                device=device,
                client=connection,
                td_id=_element_id(td_id, i),
            )
            for i in range(int(count))
        ]
        for member in members:
            member._server.connect = connect
        record = {
            "t": "stack",
            "count": int(count),
            "stack_dim": int(stack_dim),
            "inner_batch_size": list(inner),
            "device": None if device is None else str(_parse_device(device)),
        }
        server.transaction(
            lambda pipe: pipe.hset(server.names.meta, field(()), json.dumps(record)),
            {(): record},
        )
        self._init_stack(server, members, stack_dim, inner)

    def _init_stack(self, server, members, stack_dim, inner) -> None:
        LazyStackedTensorDict.__init__(self, *members, stack_dim=stack_dim)
        if not members:
            bs = list(inner)
            bs.insert(stack_dim, 0)
            self._batch_size = torch.Size(bs)
        self._stack_server = server

    # ------------------------------------------------------------------ building
    @classmethod
    def from_lazy_stack(
        cls,
        lazy_td,
        *,
        backend: str = "redis",
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        unix_socket_path: str | None = None,
        prefix: str = "tensordict",
        device=None,
        **kwargs,
    ) -> "LazyStackedTensorDictStore":
        """Upload the members of the lazy stack ``lazy_td`` (one transaction each)."""
        members = list(lazy_td.tensordicts)
        inner = (
            members[0].batch_size
            if members
            else lazy_td.batch_size[: lazy_td.stack_dim]
            + lazy_td.batch_size[lazy_td.stack_dim + 1 :]
        )
        out = cls(
            backend=backend,
            host=host,
            port=port,
            db=db,
            unix_socket_path=unix_socket_path,
            prefix=prefix,
            count=len(members),
            stack_dim=lazy_td.stack_dim,
            inner_batch_size=inner,
            device=device,
            **kwargs,
        )
        for store, member in zip(out.tensordicts, members):
            store._upload(member)
        return out

    @classmethod
    def from_tensordict(cls, td, **kwargs) -> "LazyStackedTensorDictStore":
        """Upload a lazy stack (its members, one store each); a tensordict that is not
        a lazy stack is uploaded as a stack of its slices along dim 0."""
        if not isinstance(td, LazyStackedTensorDict):
            td = LazyStackedTensorDict(*td.unbind(0), stack_dim=0)
        return cls.from_lazy_stack(td, **kwargs)

    def to_local(self):
        """Deprecated name of ``to_tensordict()`` (as in 0.15.3)."""
        return self.to_tensordict()

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
        client=None,
        **kwargs,
    ) -> "LazyStackedTensorDictStore":
        """Attach to the existing stack ``td_id``."""
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
        record = server.refresh().get(())
        if record is None or record.get("t") != "stack":
            raise KeyError(
                f"LazyStackedTensorDictStore.from_store: no stack with td_id {td_id!r} "
                f"under the prefix {prefix!r} on {where} (a TensorDictStore's id is "
                f"opened with TensorDictStore.from_store)"
            )
        if device is None:
            device = record.get("device")
        members = [
            TensorDictStore.from_store(
                backend=backend,
                prefix=prefix,
                td_id=_element_id(str(td_id), i),
                device=device,
                client=connection,
            )
            for i in range(record["count"])
        ]
        for member in members:
            member._server.connect = connect
        self = object.__new__(cls)
        self._init_stack(
            server, members, record["stack_dim"], torch.Size(record["inner_batch_size"])
        )
        return self

    # ------------------------------------------------------------------ lifecycle
    @property
    def _count(self) -> int:
        return len(self.tensordicts)

    @property
    def _inner_batch_size(self) -> torch.Size:
        bs = list(self.batch_size)
        del bs[self.stack_dim]
        return torch.Size(bs)

    @property
    def _stack_dim(self) -> int:
        return self.stack_dim

    @property
    def _backend(self) -> str:
        return self._stack_server.backend

    @property
    def td_id(self) -> str:
        return self._stack_server.td_id

    @property
    def _td_id(self) -> str:
        return self._stack_server.td_id

    def close(self) -> None:
        """Close the connection (the data stays on the server)."""
        server = self._stack_server
        if not server.closed:
            server.client.close()
            server.closed = True
            for member in self.tensordicts:
                member._server.closed = True

    def clear_redis(self) -> None:
        """Delete the elements' entries from the server (the stack's record and its
        elements stay, empty)."""
        for member in self.tensordicts:
            member.clear_redis()

    def _pickle_reduce(self):
        return _reattach_stack, (self._stack_server.connect, self.td_id)

    def _refuse_growth(self, *args, **kwargs):
        raise RuntimeError(
            "LazyStackedTensorDictStore: the number of elements is fixed when the stack "
            "is made on the server; make a new one with from_lazy_stack() to change it"
        )

    append = insert = extend = _refuse_growth

    def __repr__(self) -> str:
        try:
            keys = sorted(self.keys())
        except Exception as exc:  # a repr must not fail on a stopped server
            keys = f"<unavailable: {type(exc).__name__}>"
        return (
            f"LazyStackedTensorDictStore(\n    keys={keys},\n    batch_size={self.batch_size!r},\n"
            f"    count={len(self.tensordicts)},\n    stack_dim={self.stack_dim},\n"
            f"    device={self.device!r},\n    backend={self._stack_server.backend!r},\n"
            f"    td_id={self.td_id!r})"
        )


def _reattach_stack(connect, td_id):
    connect = dict(connect)
    redis_kwargs = connect.pop("redis_kwargs", {})
    return LazyStackedTensorDictStore.from_store(td_id=td_id, **connect, **redis_kwargs)
