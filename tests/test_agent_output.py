"""``Agent(output=T)``: the schema asked for in each dialect's own way, a typed result, the
object streamed as it grows, and a bounded retry that sends the validation errors back.

The answers are replayed over loopback HTTP in each dialect's wire format (the JSON answer
written by the dialect's encoder); each request body is checked by the official SDK's own
request types (``sdk_checked``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from streamflow import OutputValidationError
from streamflow.app.agent import Agent, AgentEvent, http_sender
from streamflow.app.providers import OpenAIChatProvider, make_provider
from streamflow.app.tools import ToolRegistry
from streamflow.core.events import ToolCallItem, UniEvent, Usage
from streamflow.core.structured.snapshots import _covers
from streamflow.demo.server import event_chunks
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects import REQUESTS, get_request
from streamflow.wire.dialects.request_base import RequestSide
from streamflow.wire.encoding import encode

sys.path.insert(0, str(Path(__file__).resolve().parent / "structured"))
import itertools

from test_agent_dialects import sdk_checked
from test_stream_output import ANSWER, WEATHER, Weather, text_events

pytestmark = pytest.mark.anyio


def answer(dialect: str, text: str) -> Route:
    """A streamed text answer ``text`` in ``dialect``'s wire format."""
    return Route(chunks=event_chunks(b"".join(encode(text_events(text), dialect))))


def schema_sent(dialect: str, body: dict[str, Any]) -> Any:
    """The JSON schema a request body asks the answer to follow, where the dialect puts it."""
    if dialect == "anthropic":
        fmt = body["output_config"]["format"]
        assert fmt["type"] == "json_schema"
        return fmt["schema"]
    if dialect == "openai-chat":
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Weather"
        return fmt["json_schema"]["schema"]
    if dialect == "openai-responses":
        fmt = body["text"]["format"]
        assert fmt["type"] == "json_schema" and fmt["name"] == "Weather"
        return fmt["schema"]
    assert dialect == "gemini"
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    return body["generationConfig"]["responseJsonSchema"]


async def served(dialect: str, *routes: Route, **agent: Any) -> tuple[Any, list[AgentEvent],
                                                                       list[dict[str, Any]]]:
    """Run an ``Agent(output=Weather)`` against ``routes``; (result, events, request bodies)."""
    path = get_request(dialect).url("", "m").split("?")[0]
    async with ReplayServer({path: list(routes)}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = agent.pop("provider", None) or make_provider(
            dialect, base_url=server.url, api_key="k", model="m")
        if provider.base_url == "http://set-later":
            provider.base_url = server.url
        bot = Agent(provider, agent.pop("tools", None), http_sender(client), output=Weather,
                    **agent)
        events: list[AgentEvent] = []
        try:
            async with bot.stream("Weather in Lisbon?") as run:
                events = [ev async for ev in run]
            result: Any = run.result
        except OutputValidationError as error:
            result = error
        return result, events, [hit.json() for hit in server.hits]


@pytest.mark.parametrize("dialect", sorted(REQUESTS))
async def test_the_output_is_asked_for_streamed_and_typed(dialect: str) -> None:
    result, events, bodies = await served(dialect, answer(dialect, ANSWER))
    assert isinstance(result.output, Weather) and result.output == WEATHER
    (body,) = bodies
    assert schema_sent(dialect, body) == Weather.model_json_schema()
    sdk_checked(dialect, body)
    shown = [ev.output for ev in events if ev.type == "output"]
    assert len(shown) > 5  # the object while it arrives, not only at the end
    for before, after in itertools.pairwise(shown):
        assert _covers(after, before)  # it only grows
    assert shown[-1] == json.loads(WEATHER.model_dump_json())
    assert [ev.type for ev in events][-2:] == ["output", "run.end"]


async def test_an_invalid_answer_goes_back_with_its_errors_and_the_retry_is_typed() -> None:
    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    result, _, bodies = await served("openai-chat", answer("openai-chat", wrong),
                                     answer("openai-chat", ANSWER))
    assert result.output == WEATHER and len(result.turns) == 2
    told = bodies[1]["messages"][-1]
    assert told["role"] == "user" and "conditions" in told["content"]
    assert bodies[1]["messages"][-2] == {"role": "assistant", "content": wrong}
    assert result.usage.response_tokens == 40  # both tries counted


async def test_the_retries_are_bounded_and_the_error_keeps_the_answer() -> None:
    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    error, _, bodies = await served("openai-chat", answer("openai-chat", wrong),
                                    answer("openai-chat", wrong), answer("openai-chat", ANSWER),
                                    output_retries=1)
    assert isinstance(error, OutputValidationError) and len(bodies) == 2
    assert error.partial is not None and error.partial.text == wrong
    assert error.raw == wrong.strip() and tuple(error.errors[0]["loc"]) == ("conditions",)
    assert error.partial_output is not None and error.partial_output.city == WEATHER.city
    with pytest.raises(ValueError, match="output_retries"):
        Agent(OpenAIChatProvider(base_url="http://x"), output=Weather, output_retries=-1)


@dataclasses.dataclass(slots=True, repr=False)
class NoFormatProvider(OpenAIChatProvider):
    """An OpenAI-compatible API whose request side takes no structured output option."""

    @property
    def request_side(self) -> RequestSide:
        side = get_request("openai-chat")
        return dataclasses.replace(side, takes=side.takes - {"response_format"})


def tool_answer(name: str, arguments: str, *, call_id: str = "call_1") -> Route:
    """An OpenAI chat answer that is one call of ``name`` with ``arguments``."""
    events = [UniEvent("delta", [ToolCallItem("tool_call.delta", name, call_id, "")]),
              *(UniEvent("delta", [ToolCallItem("tool_call.delta", "", "", arguments[i:i + 9])])
                for i in range(0, len(arguments), 9)),
              UniEvent("delta", [ToolCallItem("tool_call.done", name, call_id,
                                              json.loads(arguments))]),
              UniEvent("stop", [], Usage(0, 10, None, 20), "tool_call")]
    return Route(chunks=event_chunks(b"".join(encode(events, "openai-chat"))))


async def test_a_dialect_without_an_output_option_gets_a_final_result_tool() -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        ran.append(city)
        return "cloudy, 17 degrees"

    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    result, events, bodies = await served(
        "openai-chat", tool_answer("get_weather", '{"city": "Lisbon"}', call_id="c0"),
        tool_answer("final_result", wrong, call_id="c1"),
        tool_answer("final_result", ANSWER, call_id="c2"),
        provider=NoFormatProvider(base_url="http://set-later", api_key="k", model="m"),
        tools=ToolRegistry([get_weather]))
    assert ran == ["Lisbon"]  # the real tool ran; final_result never runs as a tool
    assert result.output == WEATHER and len(result.turns) == 3
    first = bodies[0]
    assert "response_format" not in first
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "final_result"]
    assert first["tools"][1]["function"]["parameters"] == Weather.model_json_schema()
    retry = bodies[2]["messages"][-1]  # the failed call answered with its errors
    assert retry["role"] == "tool" and retry["tool_call_id"] == "c1"
    assert "ValidationError" in retry["content"]
    assert not any(ev.type == "approval.request" for ev in events)
    assert [ev.output for ev in events if ev.type == "output"][-1]["city"] == WEATHER.city


class Tiny(BaseModel):
    ok: bool


async def test_a_json_schema_dict_is_an_output_too() -> None:
    schema = {"title": "tiny answer", "type": "object", "properties": {"ok": {"type": "boolean"}},
              "required": ["ok"]}
    async with ReplayServer({"/chat/completions": [answer("openai-chat", '{"ok": true}')]}
                            ) as server, httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider("openai-chat", base_url=server.url, api_key="k", model="m")
        result = await Agent(provider, send=http_sender(client), output=schema).run("ok?")
        sent = server.hits[0].json()["response_format"]["json_schema"]
    assert result.output == {"ok": True}
    assert sent["name"] == "tiny_answer" and sent["schema"] == schema


async def test_a_final_result_beside_another_call_gets_both_answered_on_a_retry() -> None:
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "cloudy"

    wrong = ANSWER.replace('"cloudy"', '"foggy"')
    def call(name: str, call_id: str, arguments: str) -> list[UniEvent]:
        return [UniEvent("delta", [ToolCallItem("tool_call.delta", name, call_id, arguments)]),
                UniEvent("delta", [ToolCallItem("tool_call.done", name, call_id,
                                                json.loads(arguments))])]

    both = [*call("get_weather", "w1", '{"city": "Lisbon"}'), *call("final_result", "f1", wrong),
            UniEvent("stop", [], Usage(0, 10, None, 20), "tool_call")]
    route = Route(chunks=event_chunks(b"".join(encode(both, "openai-chat"))))
    result, _, bodies = await served(
        "openai-chat", route, tool_answer("final_result", ANSWER, call_id="f2"),
        provider=NoFormatProvider(base_url="http://set-later", api_key="k", model="m"),
        tools=ToolRegistry([get_weather]))
    assert result.output == WEATHER
    answered = [m["tool_call_id"] for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert answered == ["w1", "f1"]  # every call of the turn has its result, in call order
