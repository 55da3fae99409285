"""The gateway's answers run on the run core, so an app's sinks see them as any run's:
``create_app(..., sinks=lambda: [...])`` feeds each answer's own sinks the upstream's
events beside the client's body; a sink that fails is logged, never the client's problem."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from recordings import turn_bodies
from security.hostile import serve

from streamflow import LogSink, UniEvent
from streamflow.servers.gateway import create_app
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


class Broken:
    """A sink that fails on its first event."""

    def on_next(self, event: Any) -> None:
        raise RuntimeError("the app's sink broke")

    def on_error(self, error: Exception) -> None:
        pass

    def on_completed(self) -> None:
        pass


async def test_each_answer_feeds_the_apps_own_sinks(caplog: pytest.LogCaptureFixture) -> None:
    first, _ = turn_bodies("openai-chat")
    seen: list[list[UniEvent]] = []

    def sinks() -> list[Any]:
        events: list[UniEvent] = []
        seen.append(events)
        return [events.append, LogSink("gateway.answers"), Broken()]

    caplog.set_level(logging.INFO)
    async with ReplayServer({"/v1/chat/completions": [Route.from_body(first)] * 2}) as upstream, \
            serve(create_app(upstream.url + "/v1", "openai-chat", sinks=sinks)) as url, \
            httpx.AsyncClient(trust_env=False) as client:
        streamed = await client.post(url + "/v1/messages", json={
            "model": "m", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]})  # translated: anthropic client
        whole = await client.post(url + "/v1/messages", json={
            "model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]})
    assert streamed.status_code == 200 and "message_stop" in streamed.text
    assert "error" not in streamed.text  # the broken sink is the app's, not the client's
    assert whole.status_code == 200 and whole.json()["stop_reason"] == "tool_use"
    assert len(seen) == 2 and all(e[-1].event_type == "stop" for e in seen)
    records = [r for r in caplog.records if r.name == "gateway.answers"]
    assert len(records) == 2  # one record per answer, as for any run
    assert any("a gateway sink failed" in r.getMessage() for r in caplog.records)
