"""The agent loop on every dialect with a request side, over a replayed recording.

The Agent builds neutral requests and each dialect's request side writes them, so one
loop runs on all of them: turn 1 is the demo's recorded tool call (Anthropic's and
OpenAI chat's own bundled recordings; for the dialects with no recorded tool call, that
stream written by the dialect's encoder, which the official SDKs read elsewhere in the
suite), turn 2 a text answer. The second request is read back by the dialect's own
parser (or, for Gemini, which has none, looked at as JSON) and checked by the official
SDK's request types: the call's id, name and arguments and the tool's result went back
in the dialect's own shape, with the thinking signature where the dialect carries one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider
from streamflow.core.events import ThinkingItem, ToolCallItem, UniEvent
from streamflow.core.requests import ToolResultPart
from streamflow.demo import DEMO_PROMPT
from streamflow.demo.server import event_chunks
from streamflow.demo.tools import demo_tools
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import REQUESTS, get_request
from streamflow.wire.encoding import encode
from streamflow.wire.recordings import recording

pytestmark = pytest.mark.anyio

RECORDED = {"anthropic", "openai-chat"}  # dialects with bundled demo recordings


def events_of(body: bytes, dialect: str) -> list[UniEvent]:
    decoder = StreamDecoder(dialect)
    return decoder.feed(body) + decoder.close()


def turn_body(dialect: str, turn: int) -> bytes:
    """Demo turn ``turn`` as ``dialect`` streams it."""
    if dialect in RECORDED:
        return recording(dialect, turn)
    return b"".join(encode(events_of(recording("anthropic", turn), "anthropic"), dialect))


def sdk_checked(dialect: str, body: Mapping[str, Any]) -> None:
    """``body`` validated by the official SDK's request types (skipped where absent)."""
    def force(x: Any) -> Any:  # pydantic's validated iterables, consumed
        if isinstance(x, Mapping):
            return {k: force(v) for k, v in x.items()}
        if isinstance(x, (list, tuple, Iterator)) or type(x).__name__ == "ValidatorIterator":
            return [force(i) for i in x]
        return x

    adapter: Any = None  # kept alive while its lazy iterators are read
    if dialect == "anthropic":
        types = pytest.importorskip("anthropic.types")
        adapter = TypeAdapter(types.MessageCreateParams)
    elif dialect == "openai-chat":
        params = pytest.importorskip("openai.types.chat.completion_create_params")
        adapter = TypeAdapter(params.CompletionCreateParamsStreaming)
    elif dialect == "openai-responses":
        params = pytest.importorskip("openai.types.responses.response_create_params")
        adapter = TypeAdapter(params.ResponseCreateParamsStreaming)
    if adapter is not None:
        force(adapter.validate_python(body))
    if dialect == "gemini":
        genai = pytest.importorskip("google.genai.types")
        for content in body["contents"]:
            genai.Content.model_validate(content)


def sent_back(dialect: str, body: Mapping[str, Any]) -> tuple[list[ToolCallItem],
                                                              list[ToolResultPart]]:
    """The tool calls and results of a request body, read as the dialect reads them."""
    parse = get_request(dialect).parse
    if parse is not None:
        turns = parse(body).turns
        return ([p for t in turns for p in t.parts if isinstance(p, ToolCallItem)],
                [p for t in turns for p in t.parts if isinstance(p, ToolResultPart)])
    parts = [p for c in body["contents"] for p in c["parts"]]  # Gemini: written only
    calls = [ToolCallItem("tool_call.done", p["functionCall"]["name"], "",
                          p["functionCall"]["args"]) for p in parts if "functionCall" in p]
    results = [ToolResultPart("", _result_text(p["functionResponse"]["response"]),
                              name=p["functionResponse"]["name"])
               for p in parts if "functionResponse" in p]
    return calls, results


def _result_text(response: Mapping[str, Any]) -> str:
    """A Gemini functionResponse's result text (a text result is wrapped as ``result``)."""
    return response["result"] if set(response) == {"result"} else json.dumps(response)


@pytest.mark.parametrize("dialect", sorted(REQUESTS))
async def test_the_agent_loop_runs_on_every_request_side(dialect: str) -> None:
    routes = [Route(chunks=event_chunks(turn_body(dialect, n))) for n in (1, 2)]
    path = get_request(dialect).url("", "m")
    async with ReplayServer({path.split("?")[0]: routes}) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        provider = make_provider(dialect, base_url=server.url, api_key="k", model="m")
        result = await Agent(provider, demo_tools(), http_sender(client)).run(DEMO_PROMPT)
        second = server.hits[1].json()
    first = result.turns[0].message
    assert [t.message.finish_reason for t in result.turns] == ["tool_call", "stop"]
    assert "light jacket" in result.text
    (call,) = first.tool_calls
    calls, results = sent_back(dialect, second)
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", call.arguments)]
    (tool_result,) = result.turns[0].results
    (sent,) = results
    assert json.loads(sent.text) == json.loads(tool_result.text)  # the tool's own answer
    if get_request(dialect).parse is not None:  # ids are the dialect's to keep
        assert calls[0].tool_call_id == sent.tool_call_id == call.tool_call_id
    signed = [i for i in first.items if isinstance(i, ThinkingItem) and i.fidelity]
    if dialect == "anthropic":
        assert signed and json.dumps(second).count(signed[0].fidelity["signature"]) == 1
    sdk_checked(dialect, second)


async def test_a_dialect_without_a_provider_class_gets_a_plain_one() -> None:
    provider = make_provider("openai-chat", base_url="http://127.0.0.1:9/v1", model="m")
    assert provider.request([]).url == "http://127.0.0.1:9/v1/chat/completions"
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        make_provider("nope")
