"""A real ``redis-server`` per test session, on a random loopback port with a temp dir.

Tests here never fake Redis: without Debian's ``redis-server`` they skip, saying so.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from redis_helpers import RedisServer

REDIS = shutil.which("redis-server")


@contextmanager
def _running(tmp: Path) -> Iterator[RedisServer]:
    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server; "
                    ".ci/run installs it)")
    server = RedisServer(REDIS, tmp)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server shared by the tests that do not stop it."""
    with _running(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test alone (for tests that stop or restart it)."""
    with _running(tmp_path) as server:
        yield server


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> str:
    """The shared server's URL, on a database flushed for this test."""
    redis_server.flush()
    return redis_server.url


@pytest.fixture(scope="session")
def node_clients() -> Path:
    """The real npm clients, installed by the web tests' fixture (skips without node/npm)."""
    from web.conftest import node_clients as install

    return Path(install.__wrapped__())  # type: ignore[attr-defined]
