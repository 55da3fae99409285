"""The gateway in-process over a canned upstream (httpx.MockTransport), and envelope checks."""

from __future__ import annotations

from importlib import resources
from typing import Any

import httpx

from streamflow.servers.gateway import create_app
from streamflow.servers.gateway._app import client_routes

ROUTES = {dialect: path for path, dialect in client_routes().items()}
"""Client dialect -> its route."""

VALID: dict[str, dict[str, Any]] = {
    "anthropic": {"model": "m", "max_tokens": 20,
                  "messages": [{"role": "user", "content": "hi"}]},
    "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "openai-responses": {"model": "m", "input": "hi"},
}
"""A valid body per client dialect."""


def canned_upstream(dialect: str) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """An HTTP client answering every request with a recorded answer turn of ``dialect``
    (``anthropic`` or ``openai-chat``), and the requests it got."""
    name = {"anthropic": "anthropic-turn2.sse", "openai-chat": "openai-chat-turn2.sse"}[dialect]
    body = (resources.files("streamflow.wire.recordings") / name).read_bytes()
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
    return httpx.AsyncClient(transport=httpx.MockTransport(answer)), seen


def in_process(upstream: str = "anthropic", **options: Any
               ) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """A client of the gateway app served in-process, and the requests reaching the upstream."""
    http, seen = canned_upstream(upstream)
    base = "http://upstream" + ("/v1" if upstream.startswith("openai") else "")
    app = create_app(base, upstream, client=http, **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw",
                             timeout=30), seen


def enveloped(dialect: str, body: Any) -> str:
    """The error message of ``body`` in ``dialect``'s envelope (AssertionError otherwise)."""
    assert isinstance(body, dict), body
    if dialect == "anthropic":
        assert body.get("type") == "error", body
    error = body.get("error")
    assert isinstance(error, dict) and isinstance(error.get("message"), str), body
    assert isinstance(error.get("type"), str), body
    return str(error["message"])
