"""A real ``redis-server`` (and the example app in uvicorn) for the tests that need them.

Import as ``from realredis import redis_url, own_redis`` (``tests/`` is on pytest's
``pythonpath``): the fixtures start Debian's ``redis-server`` on a free loopback port
with a temp dir, and skip, saying so, where it is not installed. Tests never fake
Redis. :class:`Instance` runs ``uvicorn examples.resumable_chat:app`` in its own process.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
REDIS = shutil.which("redis-server")


def free_port() -> int:
    """A loopback TCP port nobody listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int) -> bool:
    """True when a Redis answers PING on ``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` on 127.0.0.1, files in ``tmp``; no persistence unless ``persist``."""

    def __init__(self, binary: str, tmp: Path, *, persist: bool = False) -> None:
        self.binary = binary
        self.tmp = tmp
        self.persist = persist  # an append-only file, synced at every write: survives a kill
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.tmp),
             "--save", "", "--appendonly", "yes" if self.persist else "no",
             "--appendfsync", "always", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not ping(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)


@contextmanager
def running(tmp: Path, *, persist: bool = False) -> Iterator[RedisServer]:
    """A redis-server in ``tmp`` for the block (the test skips without one)."""
    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server; "
                    ".ci/run installs it)")
    server = RedisServer(REDIS, tmp, persist=persist)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server shared by the tests that do not stop it."""
    with running(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test alone (for tests that stop or restart it)."""
    with running(tmp_path) as server:
        yield server


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> str:
    """The shared server's URL, on a database flushed for this test."""
    redis_server.flush()
    return redis_server.url



class Instance:
    """One uvicorn process serving the example app against ``redis_url``."""

    def __init__(self, redis_url: str, log: Path, **env: str) -> None:
        self.port = free_port()
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        environ = {**os.environ, "REDIS_URL": redis_url, **env}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "examples.resumable_chat:app", "--port",
             str(self.port), "--log-level", "warning"], cwd=ROOT, env=environ,
            stdout=subprocess.DEVNULL, stderr=self.log.open("wb"))

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"instance exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/chat/ready/stream", timeout=1).status_code == 204:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"instance on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no terminal entry, no more heartbeats."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
