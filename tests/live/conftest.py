"""The live llama.cpp server the tests/live/ suite runs against (skipped without one).

``STREAMFLOW_LIVE_URL`` is a ``llama-server`` started with ``--jinja`` (its model's own
chat template); ``STREAMFLOW_LIVE_TOOLS_URL`` (optional) one started with a tool-use
template (``--chat-template-file models/templates/NousResearch-Hermes-2-Pro-Llama-3-8B-
tool_use.jinja``). See docs in tests/live/record.py and ../shared/real-server.md. Only
loopback servers are used. The recordings' tests (test_recorded.py) need neither.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

LOOPBACK = ("127.0.0.1", "localhost", "::1")
UPSTREAM_BASE = {"anthropic": "", "openai-chat": "/v1", "openai-responses": "/v1"}
"""What the upstream's base URL ends with for each dialect (OpenAI's base includes /v1)."""


def _server(variable: str, what: str) -> str:
    url = os.environ.get(variable, "").rstrip("/")
    if not url:
        pytest.skip(f"{variable} is not set: point it at a live llama.cpp llama-server "
                    f"({what}) to run the live suite")
    if urlsplit(url).hostname not in LOOPBACK:
        pytest.skip(f"{variable}={url} is not a loopback address; the live suite only "
                    "talks to 127.0.0.1")
    try:
        health = httpx.get(url + "/health", timeout=5)
    except httpx.HTTPError as exc:
        pytest.skip(f"{variable}={url} does not answer: {exc}")
    if health.status_code != 200:
        pytest.skip(f"{variable}={url} is not ready (/health: {health.status_code})")
    return url


@pytest.fixture(scope="session")
def live_url() -> str:
    """The llama-server with its model's own chat template."""
    return _server("STREAMFLOW_LIVE_URL", "started with --jinja")


@pytest.fixture(scope="session")
def tools_url() -> str:
    """The llama-server started with a tool-use chat template."""
    return _server("STREAMFLOW_LIVE_TOOLS_URL", "started with --jinja and a tool-use "
                   "--chat-template-file")


GatewayFactory = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def live_gateway() -> GatewayFactory:
    """``async with live_gateway(server_url, dialect) as url``: the gateway under uvicorn."""
    pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
    from gateway.conftest import serve  # tests/gateway/conftest.py: real uvicorn, loopback

    from streamflow.servers.gateway import create_app

    @asynccontextmanager
    async def start(server: str, dialect: str, **options: Any) -> AsyncIterator[str]:
        app = create_app(server + UPSTREAM_BASE[dialect], dialect, **options)
        async with serve(app) as url:
            yield url
    return start
