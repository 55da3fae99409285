"""The app's own async code on asyncio and trio: served in-process through httpx's ASGI transport.

Under uvicorn the gateway always runs on asyncio; mounted in another ASGI server it
may run on trio (starlette and the gateway use anyio only). Here the app runs in
the test's own event loop, both backends, with the replay server as the upstream.
"""

from __future__ import annotations

import httpx
import pytest
from recordings import PATHS, turn_bodies, turn_messages

from streamflow import assemble
from streamflow.servers.gateway import create_app
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
pytest.importorskip("starlette")
ASK = [{"role": "user", "content": "hi"}]


async def test_streams_json_and_errors_on_this_backend() -> None:
    first, _ = turn_bodies("openai-chat")
    turn1, _ = turn_messages("openai-chat")
    routes = {PATHS["openai-chat"]: [Route.from_body(first), Route.from_body(first),
                                     Route.error(503, {"error": {"message": "busy"}})]}
    async with ReplayServer(routes) as server:
        app = create_app(server.url + "/v1", "openai-chat")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
            streamed = await client.post("/v1/messages", json={
                "model": "m", "max_tokens": 9, "messages": ASK, "stream": True})
            whole = await client.post("/v1/messages", json={
                "model": "m", "max_tokens": 9, "messages": ASK})
            failed = await client.post("/v1/messages", json={
                "model": "m", "max_tokens": 9, "messages": ASK})
        await app.state.gateway.upstream.aclose()
    message = assemble(streamed.content, "anthropic")
    assert [(c.name, c.arguments) for c in message.tool_calls] == \
        [(c.name, c.arguments) for c in turn1.tool_calls]
    assert message.thinking == turn1.thinking
    body = whole.json()
    assert body["type"] == "message" and body["stop_reason"] == "tool_use"
    assert [b["type"] for b in body["content"]] == ["thinking", "text", "tool_use"]
    assert failed.status_code == 503
    assert failed.json() == {"type": "error",
                             "error": {"type": "overloaded_error", "message": "busy"}}
