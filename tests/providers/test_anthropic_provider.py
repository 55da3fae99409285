"""Anthropic provider: the request, and the next turn's messages rebuilt from a stream by the
dialect's request side (neutral turns in, Messages JSON out)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

import pytest
from pydantic import TypeAdapter

from streamflow import Message, assemble
from streamflow.app.providers import AnthropicProvider, Provider
from streamflow.app.tools import ToolRegistry, ToolResult
from streamflow.core.requests import Turn
from streamflow.demo.server import tool_result_ids
from streamflow.wire.dialects.anthropic.request import API_VERSION


def get_weather(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def validated(type_name: str, value: Any) -> Any:
    """``value`` validated against the official SDK's TypedDict (iterables consumed)."""
    types = pytest.importorskip("anthropic.types")
    adapter: Any = TypeAdapter(getattr(types, type_name))

    def force(x: Any) -> Any:
        if isinstance(x, Mapping):
            return {k: force(v) for k, v in x.items()}
        if isinstance(x, (list, tuple, Iterator)) or type(x).__name__ == "ValidatorIterator":
            return [force(i) for i in x]
        return x

    return force(adapter.validate_python(value))


def demo_turn1() -> Message:
    path = resources.files("streamflow.wire.recordings") / "anthropic-turn1.sse"
    return assemble(path.read_bytes(), "anthropic")


def assistant(provider: Provider, message: Message) -> Any:
    """The assistant message the provider sends back for ``message`` on the next turn."""
    return provider.request([Turn.user("Hi"), Turn.assistant(message)]).json["messages"][-1]


def result_messages(provider: Provider, results: list[ToolResult]) -> Any:
    """The messages carrying ``results`` on the next turn."""
    return provider.request([Turn.results([r.to_part() for r in results])]).json["messages"]


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_request_url_headers_and_body(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    provider = AnthropicProvider(model="claude-x", system="Be brief.", thinking_budget=2048,
                                 max_tokens=1000)
    req = provider.request([Turn.user("Hi")], ToolRegistry([get_weather]))
    assert req.url == "https://api.anthropic.com/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-test"
    assert req.headers["anthropic-version"] == API_VERSION
    assert req.redacted_headers()["x-api-key"] == "<redacted>"
    body = json.loads(req.body)
    assert body["stream"] is True and body["model"] == "claude-x"
    assert body["system"] == "Be brief."
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048  # the budget must fit under max_tokens
    assert body["tools"] == [{"name": "get_weather", "description": "Weather for a city.",
                              "input_schema": {"type": "object", "additionalProperties": False,
                                               "properties": {"city": {"type": "string"}},
                                               "required": ["city"]}}]
    validated("MessageCreateParams", body)


def test_base_url_and_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    req = AnthropicProvider(base_url="http://127.0.0.1:9/").request([])
    assert req.url == "http://127.0.0.1:9/v1/messages"
    assert "x-api-key" not in req.headers


def test_assistant_message_keeps_signature_tool_id_and_argument_object() -> None:
    message = demo_turn1()
    rebuilt = assistant(AnthropicProvider(), message)
    thinking, text, tool_use = rebuilt["content"]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == message.thinking
    assert thinking["signature"] == message.items[0].fidelity["signature"]  # type: ignore[index]
    assert thinking["signature"].startswith("EqQDCkYIBxgCKk")
    assert text == {"type": "text", "text": "I'll check the current conditions in Lisbon for you."}
    assert tool_use == {"type": "tool_use", "id": "toolu_01D7rW3nLkq8VbYc2ZhFxJtE",
                        "name": "get_weather", "input": {"city": "Lisbon", "unit": "celsius"}}
    validated("MessageParam", rebuilt)


def test_redacted_thinking_citations_and_server_blocks_come_back_in_place() -> None:
    citation = {"type": "char_location", "cited_text": "Sky is blue.", "document_index": 0,
                "document_title": "Notes", "start_char_index": 0, "end_char_index": 12}
    body = sse(
        {"type": "message_start", "message": {"id": "m", "model": "c", "role": "assistant",
                                              "content": [], "usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '{"query": "sky"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "text_delta", "text": "The sky is blue."}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "citations_delta", "citation": citation}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    )
    rebuilt = assistant(AnthropicProvider(), assemble(body, "anthropic"))
    assert rebuilt["content"] == [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
         "input": {"query": "sky"}},
        {"type": "text", "text": "The sky is blue.", "citations": [citation]},
    ]
    validated("MessageParam", rebuilt)


def test_unsigned_thinking_and_empty_text_are_left_out() -> None:
    from streamflow.core.events import TextItem, ThinkingItem

    message = Message(items=[ThinkingItem("thinking.done", "from another provider"),
                             TextItem("text.done", ""), TextItem("text.done", "Hi")])
    assert assistant(AnthropicProvider(), message)["content"] == [
        {"type": "text", "text": "Hi"}]


def test_tool_results_are_one_user_message_in_call_order() -> None:
    results = [ToolResult("toolu_1", "get_weather", {"temperature": 17}),
               ToolResult("toolu_2", "get_weather",
                          {"error": "ValidationError", "message": "bad", "errors": []}, True)]
    messages = result_messages(AnthropicProvider(), results)
    assert messages == [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"temperature":17}',
         "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_2",
         "content": '{"error":"ValidationError","message":"bad","errors":[]}',
         "is_error": True}]}]
    validated("MessageParam", messages[0])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, *messages]}
    assert tool_result_ids("anthropic", body) == ["toolu_1", "toolu_2"]
    assert tool_result_ids("anthropic", {"model": "m", "messages": [
        {"role": "user", "content": "hi"}]}) == []
