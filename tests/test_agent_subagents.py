"""Sub-agents: ``agent_tool`` runs another Agent inside a call; its events stream into the
parent's run tagged with the call's id and depth, parallel calls interleave and stay
attributed, and the sub-runs' usage adds to the parent's. Against the replay server:
each agent's turns on their own path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from agent_turns import turn

from streamflow.app.agent import Agent, AgentEvent, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry, agent_tool
from streamflow.servers.replay import ReplayServer

pytestmark = pytest.mark.anyio

ROUTES = {
    "/v1/messages": [turn(("research", "toolu_r", {"task": "Find the fact."}),
                          ("write", "toolu_w", {"task": "Draft the note."}), tokens=10),
                     turn(text="All done.", tokens=10)],
    "/r/v1/messages": [turn(("wait_for_writer", "toolu_rw", {}), tokens=100),
                       turn(text="The fact is 42.", tokens=100)],
    "/w/v1/messages": [turn(("draft", "toolu_wd", {}), tokens=1000),
                       turn(text="A note.", tokens=1000)],
}


@asynccontextmanager
async def lead_agent() -> AsyncIterator[tuple[Agent, ReplayServer]]:
    researching, writing = anyio.Event(), anyio.Event()
    researcher_tools, writer_tools = ToolRegistry(), ToolRegistry()

    @researcher_tools.tool
    async def wait_for_writer() -> str:
        """Waits until the writer's tool runs (so the two sub-runs overlap)."""
        researching.set()
        await writing.wait()
        return "the writer is at work"

    @writer_tools.tool
    async def draft() -> str:
        """Drafts, once the researcher's tool runs."""
        writing.set()
        await researching.wait()
        return "drafted"

    async with ReplayServer(ROUTES) as server, httpx.AsyncClient(trust_env=False) as client:
        def agent(path: str, tools: ToolRegistry) -> Agent:
            provider = make_provider("anthropic", base_url=server.url + path, api_key="k",
                                     model="m")
            return Agent(provider, tools, http_sender(client))

        tools = ToolRegistry([
            agent_tool(agent("/r", researcher_tools), name="research",
                       description="Research a question."),
            agent_tool(agent("/w", writer_tools), name="write")])
        yield agent("", tools), server


def sub_kinds(events: list[AgentEvent], call_id: str) -> list[str]:
    return [ev.type for ev in events if ev.parent_call_id == call_id and ev.type != "event"]


async def test_parallel_sub_agents_stream_into_the_parent_attributed() -> None:
    with anyio.fail_after(20):
        async with lead_agent() as (lead, _), lead.stream("Research and write.") as run:
            events = [ev async for ev in run]
    own = [ev for ev in events if ev.depth == 0]
    assert all(ev.parent_call_id is None for ev in own)
    assert {ev.parent_call_id for ev in events if ev.depth == 1} == {"toolu_r", "toolu_w"}
    for call_id, tool in (("toolu_r", "wait_for_writer"), ("toolu_w", "draft")):
        assert sub_kinds(events, call_id) == ["turn.start", "tool.start", "tool.result",
                                              "turn.start", "run.end"]
        (start,) = [ev for ev in events if ev.parent_call_id == call_id
                    and ev.type == "tool.start"]
        assert start.call is not None and start.call.name == tool and start.depth == 1
    # each sub-run's tool waits for the other's to start: the two runs' events interleave
    order = [ev.type for ev in events if ev.depth == 1 and ev.type.startswith("tool.")]
    assert order == ["tool.start", "tool.start", "tool.result", "tool.result"]
    # each sub-run lies between its parent call's start and result
    index = {(ev.type, ev.call.tool_call_id): n for n, ev in enumerate(events)
             if ev.depth == 0 and ev.call is not None}
    for call_id in ("toolu_r", "toolu_w"):
        inside = [n for n, ev in enumerate(events) if ev.parent_call_id == call_id]
        assert index[("tool.start", call_id)] < min(inside)
        assert max(inside) < index[("tool.result", call_id)]
    texts = {r.tool_call_id: r.content for r in run.result.turns[0].results}
    assert texts == {"toolu_r": "The fact is 42.", "toolu_w": "A note."}
    sub_texts = {ev.parent_call_id: ev.event.item.text for ev in events  # type: ignore[union-attr]
                 if ev.depth == 1 and ev.event is not None and ev.event.item is not None
                 and ev.event.item.type == "text.done"}
    assert sub_texts == {"toolu_r": "The fact is 42.", "toolu_w": "A note."}


async def test_the_sub_runs_usage_adds_to_the_parents() -> None:
    async with lead_agent() as (lead, server):
        result = await lead.run("Research and write.")
        sent = server.hits[-1].json()
    assert len(result.turns) == 2  # the sub-runs' turns are theirs, their usage is counted
    assert result.usage.prompt_tokens == 10 * 2 + 100 * 2 + 1000 * 2
    assert result.usage.response_tokens == 5 * 2 + 50 * 2 + 500 * 2
    tools = {t["name"]: t for t in sent["tools"]}
    assert tools["research"]["description"] == "Research a question."
    assert tools["research"]["input_schema"]["required"] == ["task"]


async def test_a_sub_agents_own_sub_agent_is_depth_two() -> None:
    routes = {"/v1/messages": [turn(("mid", "toolu_m", {"task": "a"})), turn(text="top")],
              "/m/v1/messages": [turn(("inner", "toolu_i", {"task": "b"})), turn(text="mid")],
              "/i/v1/messages": [turn(text="inner")]}
    async with ReplayServer(routes) as server, httpx.AsyncClient(trust_env=False) as client:
        def agent(path: str, *tools: Any) -> Agent:
            provider = make_provider("anthropic", base_url=server.url + path, api_key="k",
                                     model="m")
            return Agent(provider, ToolRegistry(tools), http_sender(client))

        inner = agent("/i")
        mid = agent("/m", agent_tool(inner, name="inner"))
        top = agent("", agent_tool(mid, name="mid"))
        async with top.stream("go") as run:
            events = [ev async for ev in run]
    depth = {(ev.depth, ev.parent_call_id) for ev in events}
    assert depth == {(0, None), (1, "toolu_m"), (2, "toolu_i")}
    (inner_end,) = [ev for ev in events if ev.depth == 2 and ev.type == "run.end"]
    assert run.result.text == "top" and inner_end.result is not None
    assert run.result.usage.prompt_tokens == 10 * 5  # five turns in all
