"""A real ``redis-server`` per test session (see tests/realredis.py); the real npm clients.

Tests here never fake Redis: without ``redis-server`` on PATH they skip, saying so
(:mod:`parts`); one server per pytest-xdist worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realredis import own_redis, redis_server, redis_url

__all__ = ["node_clients", "own_redis", "redis_server", "redis_url"]


@pytest.fixture(scope="session")
def node_clients(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real npm clients, installed as the web tests install them (skips without them)."""
    from web.conftest import install_node_clients

    return install_node_clients(tmp_path_factory)
