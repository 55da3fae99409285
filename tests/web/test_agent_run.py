"""A whole Agent run served as one UI message: the demo's two turns over a real loopback API.

The DemoServer plays the provider; the Agent runs the real ``get_weather``; the app is
served by uvicorn and read with httpx. The caller's Agent is left as it was.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from security.hostile import serve_sync
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route as HTTPRoute

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolResult
from streamflow.demo import DEMO_PROMPT
from streamflow.demo.server import DemoServer
from streamflow.demo.tools import demo_tools
from streamflow.servers.replay import ReplayServer, Route
from streamflow.servers.web import Answer, ag_ui_response, agent_run, ui_message_stream_response

pytestmark = pytest.mark.anyio


def agent_app(base_url: str, respond: Any, seen: list[list[ToolResult]]) -> tuple[Starlette,
                                                                                  list[Agent]]:
    agents: list[Agent] = []

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=30) as client:
            provider = make_provider("anthropic", base_url=base_url, api_key="test",
                                     model="claude-sonnet-4-5", thinking_budget=1024)
            agents.append(Agent(provider, demo_tools(), http_sender(client),
                                on_results=seen.append))
            yield

    async def chat(request: Request) -> Response:
        return respond(agent_run(agents[0], DEMO_PROMPT))

    return Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])],
                     lifespan=lifespan), agents


def payloads(body: bytes) -> list[Any]:
    return [e.removeprefix("data: ") for e in body.decode().split("\n\n") if e]


async def test_an_agent_run_is_one_ui_message_with_a_step_per_turn() -> None:
    seen: list[list[ToolResult]] = []
    async with DemoServer("anthropic", fast=True) as upstream:
        app, agents = agent_app(upstream.base_url, ui_message_stream_response, seen)
        with serve_sync(app) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                response = await client.post(url + "/chat")
        assert len(upstream.hits) == 2  # turn 1, then turn 2 with the tool result
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    raw = payloads(response.content)
    assert raw[-1] == "[DONE]"
    chunks = [json.loads(p) for p in raw[:-1]]
    types = [c["type"] for c in chunks]
    assert types.count("start") == 1 and types.count("finish") == 1
    assert types.count("start-step") == 2 and types.count("finish-step") == 2
    between = types[types.index("finish-step"):types.index("start-step", 2)]
    assert between == ["finish-step", "message-metadata", "tool-output-available"]
    output = chunks[types.index("tool-output-available")]["output"]
    assert output["city"] == "Lisbon" and output["temperature"] == 17
    meta = chunks[-1]["messageMetadata"]
    assert [t["finish_reason"] for t in meta["turns"]] == ["tool_call", "stop"]
    # the caller's agent is untouched and its own callback still ran
    assert agents[0].sinks == [] and agents[0].on_results == seen.append
    assert [r.name for r in seen[0]] == ["get_weather"]


async def test_an_agent_run_as_ag_ui_events() -> None:
    async with DemoServer("anthropic", fast=True) as upstream:
        app, _ = agent_app(upstream.base_url, ag_ui_response, [])
        with serve_sync(app) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                response = await client.post(url + "/chat")
    events = [json.loads(p) for p in payloads(response.content)]
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert [e["stepName"] for e in events if e["type"] == "STEP_STARTED"] == ["turn 1", "turn 2"]
    result = events[types.index("TOOL_CALL_RESULT")]
    assert types.index("STEP_FINISHED") < types.index("TOOL_CALL_RESULT") < types.index(
        "STEP_STARTED", 2)
    assert json.loads(result["content"])["city"] == "Lisbon"
    assert len(events[-1]["usage"]) == 2


@pytest.mark.parametrize("respond", [ui_message_stream_response, ag_ui_response])
async def test_a_failed_agent_run_tells_on_finish_failed_with_its_partial(respond: Any) -> None:
    """The upstream cuts the answer: the body ends with the in-band error, and on_finish
    hears "failed" once, with the text that arrived and the error (it said "completed")."""
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1",'
            b'"type":"message","role":"assistant","model":"m","content":[],"usage":'
            b'{"input_tokens":3,"output_tokens":0}}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"Half an ans"}}\n\n')
    finished: list[tuple[Answer, str]] = []
    async with ReplayServer({"/v1/messages": Route(chunks=[body], abort=True)}) as upstream, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=upstream.url, api_key="k", model="m")
        agent = Agent(provider, demo_tools(), http_sender(client))

        async def chat(request: Request) -> Response:
            return respond(agent_run(agent, "hi"), on_finish=lambda answer, *, status:
                           finished.append((answer, status)))

        app = Starlette(routes=[HTTPRoute("/chat", chat, methods=["POST"])])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://app") as http:
            answer_body = (await http.post("/chat")).text
    assert "Half an ans" in answer_body and "error" in answer_body.lower()
    [(answer, status)] = finished
    assert status == "failed" and answer.text == "Half an ans" and answer.error
    assert answer.usage is None  # the cut step never reported its totals
