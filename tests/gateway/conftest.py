"""Gateway test support: the real app under real uvicorn on a random loopback port."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest

uvicorn = pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
pytest.importorskip("starlette", reason="the gateway extra (starlette) is not installed")

from streamflow.gateway import create_app  # noqa: E402

OPENAI_BASE = {"openai-chat": "/v1", "openai-responses": "/v1"}
"""The path the upstream's base URL ends with (OpenAI's SDK-style base includes /v1)."""


@asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Run ``app`` under uvicorn (its own asyncio loop, in a thread); yield its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                            lifespan="on", http="h11", loop="asyncio")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-gateway", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        await anyio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await anyio.to_thread.run_sync(thread.join, 10)


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
