"""The ASGI responses over real HTTP: uvicorn serves them, httpx reads them, a replay server is
the provider -- headers, bodies, typed errors in-band, and a client disconnect reaching upstream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from realdata import DATA
from security.hostile import serve_sync
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as HTTPRoute

from streamflow.demo.server import event_chunks
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import ag_ui_response, ui_message_stream_response
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.targets.ag_ui.encode import AGUIEncoder
from streamflow.wire.targets.vercel_ui.encode import VercelUIEncoder

pytestmark = pytest.mark.anyio
TOOL_TURN = DATA / "cli" / "anthropic_tool_turn.sse"


def sse_payloads(body: bytes) -> list[str]:
    """The ``data:`` payloads of an SSE body."""
    return [event.removeprefix("data: ") for event in body.decode().split("\n\n") if event]


def expected_body(path: Path, encoder: Any) -> bytes:
    """What a ``run=True`` encoder writes for the recording at ``path``, finish included."""
    events = StreamDecoder("auto").feed(path.read_bytes())
    return b"".join(encoder.feed(e) for e in events) + encoder.finish()


def proxy_app(upstream: str, respond: Any) -> Starlette:
    """An app whose POST /chat streams the upstream's /v1/messages through ``respond``."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=30) as client:
            app.state.client = client
            yield

    async def chat(request: Request) -> Response:
        client = request.app.state.client
        source = from_httpx(client, lambda: client.build_request(
            "POST", upstream + "/v1/messages", json={"stream": True}))
        return respond(source)

    return Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])], lifespan=lifespan)


async def post(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(url)


async def test_ui_message_stream_response_headers_and_body() -> None:
    async with ReplayServer(Route.from_body(TOOL_TURN.read_bytes())) as upstream:
        app = proxy_app(upstream.url, lambda s: ui_message_stream_response(s, message_id="m1"))
        with serve_sync(app) as url:
            response = await post(url + "/chat")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.content == expected_body(TOOL_TURN, VercelUIEncoder(run=True,
                                                                         message_id="m1"))
    assert sse_payloads(response.content)[-1] == "[DONE]"


async def test_ag_ui_response_headers_and_body() -> None:
    async with ReplayServer(Route.from_body(TOOL_TURN.read_bytes())) as upstream:
        app = proxy_app(upstream.url, lambda s: ag_ui_response(
            s, thread_id="t", run_id="r", message_id="m"))
        with serve_sync(app) as url:
            response = await post(url + "/chat")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.content == expected_body(
        TOOL_TURN, AGUIEncoder(run=True, thread_id="t", run_id="r", message_id="m"))
    events = [json.loads(p) for p in sse_payloads(response.content)]
    assert events[0] == {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    assert events[-1]["type"] == "RUN_FINISHED"


async def test_provider_error_is_written_in_band() -> None:
    overloaded = Route.error(529, {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}})
    async with ReplayServer(overloaded) as upstream:
        app = proxy_app(upstream.url, ui_message_stream_response)
        with serve_sync(app) as url:
            response = await post(url + "/chat")
    assert response.status_code == 200  # the stream had started: the error is a chunk
    chunks = sse_payloads(response.content)
    assert [json.loads(c)["type"] for c in chunks[:-1]] == ["start", "error"]
    assert "Overloaded" in json.loads(chunks[1])["errorText"]
    assert chunks[-1] == "[DONE]"


@pytest.mark.parametrize("respond", [ui_message_stream_response, ag_ui_response])
async def test_client_disconnect_cancels_the_upstream_request(respond: Any) -> None:
    chunks = event_chunks(TOOL_TURN.read_bytes())  # one SSE event per HTTP chunk
    slow = Route(chunks=chunks, delays=[0.0] + [0.2] * (len(chunks) - 1))
    async with ReplayServer(slow) as upstream:
        with serve_sync(proxy_app(upstream.url, respond)) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                async with client.stream("POST", url + "/chat") as response:
                    async for _ in response.aiter_bytes():
                        break  # the first chunk arrived: the client goes away
            with anyio.fail_after(5):
                hit = await upstream.wait_disconnect()
    assert hit.disconnected and not hit.completed
    assert hit.chunks_sent < len(slow.chunks)
