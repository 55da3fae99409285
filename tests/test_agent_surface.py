"""The Agent as an application sees it: no tool on a cut turn, total usage, shown results."""

from __future__ import annotations

import io

import httpx
import pytest
from rich.console import Console

import streamflow
from streamflow.app.agent import Agent, AgentResult, Turn, http_sender, total_usage
from streamflow.app.providers import HTTPRequest, make_provider
from streamflow.app.tools import ToolRegistry, ToolResult
from streamflow.app.tools.dispatch import ToolDispatchSink
from streamflow.core.events import ToolCallItem
from streamflow.demo import DEMO_PROMPT, recording
from streamflow.demo.server import event_chunks
from streamflow.demo.tools import demo_tools
from streamflow.reactive.sources import from_bytes
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio

CUT = recording("anthropic", 1).replace(b'"stop_reason":"tool_use"',
                                          b'"stop_reason":"max_tokens"')


async def test_no_tool_runs_on_a_turn_cut_by_length() -> None:
    ran: list[str] = []

    def get_weather(city: str, unit: str = "celsius") -> str:
        ran.append(city)
        return "sunny"

    async with ReplayServer({"/v1/messages": Route(chunks=event_chunks(CUT))}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=server.url, api_key="k")
        result = await Agent(provider, ToolRegistry([get_weather]), http_sender(client)).run("?")
    assert ran == [] and len(result.turns) == 1 and result.turns[0].results == []
    assert result.message.finish_reason == "length" and result.message.tool_calls  # still seen
    last = result.messages[-1]
    assert last.role == "assistant"
    assert not any(isinstance(p, ToolCallItem) for p in last.parts)  # nothing unanswered


async def test_eager_results_of_a_cut_turn_are_dropped() -> None:
    async with ReplayServer({"/v1/messages": Route(chunks=event_chunks(CUT))}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=server.url, api_key="k")
        result = await Agent(provider, demo_tools(), http_sender(client), eager=True).run("?")
    assert result.turns[0].results == [] and len(server.hits) == 1
    assert not any(isinstance(p, ToolCallItem) for p in result.messages[-1].parts)


async def test_the_dispatch_sink_alone_runs_no_tool_on_a_cut_turn() -> None:
    dispatch = ToolDispatchSink(demo_tools())
    message = await streamflow.run(from_bytes(CUT), dispatch)
    assert message.tool_calls and dispatch.results == []
    dispatch = ToolDispatchSink(demo_tools())
    await streamflow.run(from_bytes(recording("anthropic", 1)), dispatch)
    assert [r.name for r in dispatch.results] == ["get_weather"]


async def test_agent_result_sums_usage_and_cost_and_render_shows_tool_results() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    render = streamflow.RenderSink(console, plain=False, fps=0)
    turns = [Route(chunks=event_chunks(recording("anthropic", n))) for n in (1, 2)]
    async with ReplayServer({"/v1/messages": turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=server.url, api_key="k")
        result = await Agent(provider, demo_tools(), http_sender(client),
                             sinks=[render]).run(DEMO_PROMPT)
    usage = result.usage
    assert usage.prompt_tokens == 583 + 794 and usage.response_tokens == 131 + 97
    assert usage.cost is None and result.cost is None  # the recordings report no cost
    assert '✓ get_weather → {"city":"Lisbon"' in out.getvalue()  # no wiring needed


def test_total_usage_keeps_none_for_what_no_turn_reported() -> None:
    a = streamflow.Usage(prompt_tokens=10, response_tokens=2, cost=0.5)
    b = streamflow.Usage(prompt_tokens=5, cached_tokens=3, cost=0.25)
    total = total_usage([a, None, b])
    assert (total.prompt_tokens, total.response_tokens, total.cached_tokens) == (15, 2, 3)
    assert total.cost == 0.75 and total.thoughts_tokens is None
    message = streamflow.Message(usage_metadata=a)
    request = HTTPRequest("http://127.0.0.1/v1/messages", {}, {})
    result = AgentResult([Turn(request, message)] * 2, [])
    assert result.usage.prompt_tokens == 20 and result.cost == 1.0


def test_render_sink_draws_tool_errors_in_plain_mode_on_stderr() -> None:
    err = io.StringIO()
    out = io.StringIO()
    render = streamflow.RenderSink(Console(file=out), plain=True, err_file=err)
    render.on_tool_result(ToolResult("t1", "get_weather", {"error": "Timeout",
                                                           "message": "slow"}, True))
    render.on_tool_result(ToolResult("t2", "lookup", "x" * 500))
    lines = err.getvalue().splitlines()
    assert lines[0] == '✖ get_weather → {"error":"Timeout","message":"slow"}'
    assert lines[1].startswith("✓ lookup → xxx") and lines[1].endswith("…")
    assert len(lines[1]) < 130 and out.getvalue() == ""


