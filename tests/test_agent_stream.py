"""``agent.stream()``: a whole run as one ordered stream of AgentEvents, against the replay
server; ``run()`` is the same run read to its end."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from agent_turns import turn

from streamflow import IncompleteStreamError, UniEvent
from streamflow.app.agent import Agent, AgentEvent, AgentResult, http_sender
from streamflow.app.providers import make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.demo import DEMO_PROMPT
from streamflow.demo.server import DemoServer
from streamflow.demo.tools import demo_tools
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


def weather_tools() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {"city": city, "temperature": 17}

    return tools


TURNS = [turn(("get_weather", "toolu_1", {"city": "Lisbon"}), text="Looking."),
         turn(text="17 degrees in Lisbon.")]


async def streamed(dialect: str = "anthropic",
                   sinks: tuple[Any, ...] = ()) -> tuple[list[AgentEvent], AgentResult]:
    path = "/v1/messages" if dialect == "anthropic" else "/chat/completions"
    turns = [turn(("get_weather", "toolu_1", {"city": "Lisbon"}), text="Looking.",
                  dialect=dialect), turn(text="17 degrees in Lisbon.", dialect=dialect)]
    async with ReplayServer({path: turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider(dialect, base_url=server.url, api_key="k", model="m"),
                      weather_tools(), http_sender(client), sinks=sinks)
        async with agent.stream("Weather in Lisbon?") as run:
            events = [ev async for ev in run]
    return events, run.result


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat"])
async def test_a_run_is_its_turns_tools_and_end_in_order(dialect: str) -> None:
    seen: list[UniEvent] = []
    events, result = await streamed(dialect, sinks=(seen.append,))
    kinds = [ev.type for ev in events]
    first_end = kinds.index("tool.start")
    assert kinds[0] == "turn.start" and set(kinds[1:first_end]) == {"event"}
    assert kinds[first_end:first_end + 3] == ["tool.start", "tool.result", "turn.start"]
    assert set(kinds[first_end + 3:-1]) == {"event"} and kinds[-1] == "run.end"
    assert [ev.turn for ev in events if ev.type == "turn.start"] == [1, 2]
    assert all(ev.depth == 0 and ev.parent_call_id is None for ev in events)
    start, done = events[first_end], events[first_end + 1]
    assert start.call is not None and start.call.tool_call_id == "toolu_1"
    assert start.call.arguments == {"city": "Lisbon"} and done.call == start.call
    assert done.result is not None and done.result.content == {"city": "Lisbon",
                                                               "temperature": 17}
    # the events of each turn are that turn's UniEvents, the ones the sinks saw
    uni = [ev.event for ev in events if ev.type == "event"]
    assert uni == seen and sum(e.event_type == "stop" for e in seen) == 2
    assert events[-1].result is result and result.text == "17 degrees in Lisbon."
    assert [t.message.finish_reason for t in result.turns] == ["tool_call", "stop"]
    assert result.usage.prompt_tokens == 20 and result.pending == []


async def test_run_is_the_stream_read_to_its_end() -> None:
    _, streamed_result = await streamed()
    async with ReplayServer({"/v1/messages": TURNS}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      weather_tools(), http_sender(client))
        result = await agent.run("Weather in Lisbon?")
    assert result.messages == streamed_result.messages
    assert result.turns[0].results == streamed_result.turns[0].results


async def test_leaving_the_block_early_closes_the_response() -> None:
    async with DemoServer("anthropic") as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.base_url), demo_tools(),
                      http_sender(client))
        async with agent.stream(DEMO_PROMPT) as run:
            async for ev in run:
                if ev.event is not None and ev.event.item is not None \
                        and ev.event.item.type == "text.delta":
                    break
        hit = await server.wait_disconnect()
    assert hit.disconnected and not hit.completed
    assert len(server.hits) == 1  # no tool ran, no second request
    with pytest.raises(RuntimeError, match="not ended"):
        _ = run.result


async def test_leaving_the_block_early_cancels_the_running_tools() -> None:
    cancelled = anyio.Event()
    tools = ToolRegistry()

    @tools.tool
    async def slow(n: int) -> int:
        """Takes its time."""
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return n

    async with ReplayServer({"/v1/messages": [turn(("slow", "toolu_s", {"n": 1}))]}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      tools, http_sender(client))
        with anyio.fail_after(10):
            async with agent.stream("?") as run:
                async for ev in run:
                    if ev.type == "tool.start":
                        break
    assert cancelled.is_set()
    assert len(server.hits) == 1


async def test_a_cut_turn_raises_its_error_after_the_events_before_it() -> None:
    body = b"".join(turn(("get_weather", "toolu_1", {"city": "Lisbon"}), text="Look").chunks)
    cut = body[:body.index(b"event: message_delta")]
    async with ReplayServer({"/v1/messages": Route(chunks=[cut])}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      weather_tools(), http_sender(client))
        kinds: list[str] = []
        with pytest.raises(IncompleteStreamError) as caught:
            async with agent.stream("?") as run:
                async for ev in run:
                    kinds.append(ev.type)
    assert kinds[0] == "turn.start" and "event" in kinds
    assert "tool.start" not in kinds and "run.end" not in kinds  # no tool ran
    assert caught.value.partial is not None and caught.value.partial.text == "Look"
    with pytest.raises(IncompleteStreamError):
        _ = run.result


async def test_an_error_nobody_read_is_raised_when_the_block_exits() -> None:
    async with ReplayServer({"/v1/messages": Route.error(500, {"error": "boom"})}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      weather_tools(), http_sender(client))
        with pytest.raises(Exception) as caught:
            async with agent.stream("?") as run:
                while not run._finished:  # the driver ends on its own; nothing is read
                    await anyio.sleep(0.01)
    assert type(caught.value).__name__ == "HTTPStatusError"


async def test_an_agent_stream_is_entered_once() -> None:
    async with ReplayServer({"/v1/messages": TURNS}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      weather_tools(), http_sender(client))
        run = agent.stream("?")
        async with run:
            await run.final_result()
            with pytest.raises(RuntimeError, match="entered once"):
                await run.__aenter__()


async def test_forward_to_gets_each_event_as_it_happens_before_the_reader() -> None:
    forwarded: list[AgentEvent] = []
    seen_by_tool: list[list[str]] = []
    tools = ToolRegistry()

    @tools.tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather (noting what was forwarded by the time it runs)."""
        seen_by_tool.append([ev.type for ev in forwarded])
        return {"city": city, "temperature": 17}

    async def forward(event: AgentEvent) -> None:
        forwarded.append(event)

    async with ReplayServer({"/v1/messages": TURNS}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.url, api_key="k", model="m"),
                      tools, http_sender(client))
        async with agent.stream("Weather in Lisbon?").forward_to(forward) as run:
            await anyio.sleep(0.2)  # the reader lags; the forward does not
            events = [ev async for ev in run]
    assert seen_by_tool[0][0] == "turn.start" and seen_by_tool[0][-1] == "tool.start"
    assert forwarded == events and events[-1].type == "run.end"
