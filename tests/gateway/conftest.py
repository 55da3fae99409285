"""Gateway test support: the real app under real uvicorn on a random loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
pytest.importorskip("starlette", reason="the gateway extra (starlette) is not installed")

from streamflow.servers.gateway import create_app  # noqa: E402

OPENAI_BASE = {"openai-chat": "/v1", "openai-responses": "/v1"}
"""The path the upstream's base URL ends with (OpenAI's SDK-style base includes /v1)."""


# the real app under real uvicorn: the one helper the security tests use too
from security.hostile import serve  # noqa: E402

GatewayFactory = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def gateway() -> GatewayFactory:
    """``async with gateway(upstream_url, dialect, **options) as url``: a running gateway."""
    @asynccontextmanager
    async def start(upstream_url: str, dialect: str, **options: Any) -> AsyncIterator[str]:
        app = create_app(upstream_url + OPENAI_BASE.get(dialect, ""), dialect, **options)
        async with serve(app) as url:
            yield url
    return start
