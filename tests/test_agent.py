"""The agent loop: stream -> tools -> results in the provider's format -> stream again."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from streamflow import IncompleteStreamError, LimitExceededError, UniEvent
from streamflow.app.agent import Agent, http_sender, wants_tools
from streamflow.app.providers import HTTPRequest, make_provider
from streamflow.app.tools import ToolRegistry, ToolResult
from streamflow.demo import DEMO_PROMPT, recording
from streamflow.demo.server import DemoServer, event_chunks
from streamflow.demo.tools import demo_tools, get_weather
from streamflow.reactive.sources import Source, from_bytes
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat"])
async def test_two_turns_over_http_with_the_results_in_the_provider_format(dialect: str) -> None:
    requests: list[int] = []
    shown: list[list[ToolResult]] = []
    events: list[UniEvent] = []
    async with DemoServer(dialect, fast=True) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider(dialect, base_url=server.base_url, api_key="k",
                                 model="m")
        agent = Agent(provider, demo_tools(), http_sender(client), sinks=[events.append],
                      on_request=lambda n, r: requests.append(n), on_results=shown.append)
        result = await agent.run(DEMO_PROMPT)
        second = server.hits[1].json()
    assert requests == [1, 2]
    assert [t.message.finish_reason for t in result.turns] == ["tool_call", "stop"]
    assert "bring a light jacket" in result.text
    (tool_result,) = result.turns[0].results
    assert tool_result.content == get_weather("Lisbon")
    assert shown == [[tool_result]]
    assert sum(e.event_type == "stop" for e in events) == 2  # sinks saw both turns
    # The second request carries turn 1 back, signature and call id included, then the result.
    call_id = result.turns[0].message.tool_calls[0].tool_call_id
    if dialect == "anthropic":
        assistant, results = second["messages"][1:]
        assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]
        assert assistant["content"][0]["signature"] == \
            result.turns[0].message.items[0].fidelity["signature"]  # type: ignore[index]
        assert results["content"][0]["tool_use_id"] == call_id
        assert results["content"][0]["is_error"] is False
        assert json.loads(results["content"][0]["content"])["temperature"] == 17
        assert server.hits[1].headers["x-api-key"] == "k"
    else:
        assistant, tool_message = second["messages"][1:]
        assert assistant["tool_calls"][0]["id"] == call_id
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
            "city": "Lisbon", "unit": "celsius"}
        assert assistant["reasoning_details"][0]["signature"]
        assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == call_id
        assert server.hits[1].headers["authorization"] == "Bearer k"
    assert result.messages[-1].role == "assistant"  # the conversation ends with the answer


async def test_a_failing_tool_goes_back_as_an_error_result() -> None:
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        raise ConnectionError("weather service unreachable")

    turns = [Route(chunks=event_chunks(recording("anthropic", n))) for n in (1, 2)]
    async with ReplayServer({"/v1/messages": turns}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("anthropic", base_url=server.url)
        result = await Agent(provider, ToolRegistry([get_weather]), http_sender(client)).run("?")
        block = server.hits[1].json()["messages"][-1]["content"][0]
    assert result.turns[0].results[0].is_error
    assert block["is_error"] is True
    assert json.loads(block["content"]) == {"error": "ConnectionError",
                                            "message": "weather service unreachable"}


def replay_send(*bodies: bytes) -> Any:
    """A ``send`` that answers the n-th request with the n-th body (the last one repeats)."""
    sent: list[HTTPRequest] = []

    def send(request: HTTPRequest) -> Source:
        sent.append(request)
        return from_bytes(bodies[min(len(sent), len(bodies)) - 1], chunk_size=13)

    send.sent = sent  # type: ignore[attr-defined]
    return send


async def test_max_turns_stops_a_model_that_keeps_calling_tools() -> None:
    send = replay_send(recording("anthropic", 1))
    agent = Agent(make_provider("anthropic"), demo_tools(), send, max_turns=3)
    with pytest.raises(LimitExceededError) as caught:
        await agent.run("loop forever")
    assert caught.value.limit == "max_turns" and caught.value.maximum == 3
    assert caught.value.partial is not None and caught.value.partial.tool_calls
    assert len(send.sent) == 3
    # every follow-up request grew by one assistant turn and one tool-result message
    assert [len(r.json["messages"]) for r in send.sent] == [1, 3, 5]


async def test_a_cut_stream_raises_with_the_partial_and_runs_no_tool() -> None:
    ran: list[str] = []

    def get_weather(city: str, unit: str = "celsius") -> str:
        ran.append(city)
        return "sunny"

    body = recording("anthropic", 1)
    cut = body[:body.index(b"event: message_delta")]
    agent = Agent(make_provider("anthropic"), ToolRegistry([get_weather]), replay_send(cut))
    with pytest.raises(IncompleteStreamError) as caught:
        await agent.run("?")
    assert caught.value.partial is not None
    assert caught.value.partial.tool_calls[0].arguments == {"city": "Lisbon", "unit": "celsius"}
    assert ran == []


async def test_eager_agent_gives_the_same_results() -> None:
    send = replay_send(recording("openai-chat", 1), recording("openai-chat", 2))
    agent = Agent(make_provider("openai-chat"), demo_tools(), send, eager=True)
    result = await agent.run("?")
    assert result.turns[0].results[0].content["city"] == "Lisbon"
    assert result.message.finish_reason == "stop"


async def test_cancelling_the_agent_closes_the_connection() -> None:
    first_text = anyio.Event()

    def watch(event: UniEvent) -> None:
        if event.item is not None and event.item.type == "text.delta":
            first_text.set()

    async with DemoServer("anthropic") as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = Agent(make_provider("anthropic", base_url=server.base_url), demo_tools(),
                      http_sender(client), sinks=[watch])
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run, "?")
            await first_text.wait()
            tg.cancel_scope.cancel()
        hit = await server.wait_disconnect()
    assert hit.disconnected and not hit.completed
    assert len(server.hits) == 1  # no tool ran, no second request


def test_wants_tools_needs_a_call_and_the_finish_reason() -> None:
    from streamflow import Message, ToolCallItem

    call = ToolCallItem("tool_call.done", "f", "id", {})
    assert wants_tools(Message(items=[call], finish_reason="tool_call"))
    assert not wants_tools(Message(items=[call], finish_reason="length"))
    assert not wants_tools(Message(items=[], finish_reason="tool_call"))
