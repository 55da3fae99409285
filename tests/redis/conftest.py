"""A real ``redis-server`` per test session (per pytest-xdist worker), on a random
loopback port with a temp dir.

Tests here never fake Redis: without ``redis-server`` on PATH they skip, saying so
(:mod:`parts`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from parts import program
from redis_helpers import RedisServer


@contextmanager
def _running(tmp: Path) -> Iterator[RedisServer]:
    server = RedisServer(program("redis-server"), tmp)
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
def node_clients(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real npm clients, installed as the web tests install them (skips without them)."""
    from web.conftest import install_node_clients

    return install_node_clients(tmp_path_factory)
