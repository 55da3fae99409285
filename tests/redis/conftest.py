"""A real ``redis-server`` per test session (see tests/realredis.py); the real npm clients.

Tests here never fake Redis: without Debian's ``redis-server`` they skip, saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realredis import own_redis, redis_server, redis_url

__all__ = ["node_clients", "own_redis", "redis_server", "redis_url"]


@pytest.fixture(scope="session")
def node_clients() -> Path:
    """The real npm clients, installed by the web tests' fixture (skips without node/npm)."""
    from web.conftest import node_clients as install

    return Path(install.__wrapped__())  # type: ignore[attr-defined]
