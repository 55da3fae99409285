"""OpenAI-compatible chat provider: request, assistant message, tool messages (written by the
dialect's request side from neutral turns)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

import pytest
from pydantic import TypeAdapter

from streamflow import Message, assemble
from streamflow.app.providers import OpenAIChatProvider, Provider, make_provider, provider_class
from streamflow.app.tools import ToolRegistry, ToolResult
from streamflow.core.events import InlineThinkingItem, ThinkingItem, ToolCallItem
from streamflow.core.requests import Turn
from streamflow.demo.server import tool_result_ids


def get_weather(city: str) -> str:
    """Weather for a city."""
    return "sunny"


def validated(value: Any) -> Any:
    """``value`` validated as a streaming chat request by the official SDK's TypedDicts."""
    params = pytest.importorskip("openai.types.chat.completion_create_params")
    adapter: Any = TypeAdapter(params.CompletionCreateParamsStreaming)

    def force(x: Any) -> Any:
        if isinstance(x, Mapping):
            return {k: force(v) for k, v in x.items()}
        if isinstance(x, (list, tuple, Iterator)) or type(x).__name__ == "ValidatorIterator":
            return [force(i) for i in x]
        return x

    return force(adapter.validate_python(value))


def demo_turn1() -> Message:
    path = resources.files("streamflow.wire.recordings") / "openai-chat-turn1.sse"
    return assemble(path.read_bytes(), "openai-chat")


def assistant(provider: Provider, message: Message) -> Any:
    """The assistant message the provider sends back for ``message`` on the next turn."""
    return provider.request([Turn.user("Hi"), Turn.assistant(message)]).json["messages"][-1]


def result_messages(provider: Provider, results: list[ToolResult]) -> Any:
    """The messages carrying ``results`` on the next turn."""
    return provider.request([Turn.results([r.to_part() for r in results])]).json["messages"]


def test_request_for_openai_and_for_a_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = OpenAIChatProvider(system="Be brief.", max_tokens=500)
    req = provider.request([Turn.user("Hi")], ToolRegistry([get_weather]))
    assert req.url == "https://api.openai.com/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    body = json.loads(req.body)
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Hi"}]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 500 and "max_tokens" not in body
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city.",
        "parameters": {"type": "object", "additionalProperties": False,
                       "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    validated(body)

    monkeypatch.delenv("OPENAI_API_KEY")
    local = make_provider("openai-chat", base_url="http://127.0.0.1:8080/v1", model="qwen")
    req = local.request([Turn.user("Hi")])
    assert req.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert "authorization" not in req.headers
    assert json.loads(req.body)["max_tokens"] == 2048  # what llama.cpp / vLLM read


def test_assistant_message_keeps_reasoning_details_tool_ids_and_arguments() -> None:
    message = demo_turn1()
    rebuilt = assistant(OpenAIChatProvider(), message)
    assert rebuilt["content"] == "I'll check the current conditions in Lisbon for you."
    assert rebuilt["tool_calls"] == [{
        "id": "toolu_vrtx_01LxqUa4ZhYkR2nWcE8dPbTf", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Lisbon", "unit": "celsius"}'}}]
    (detail,) = rebuilt["reasoning_details"]
    assert detail["type"] == "reasoning.text" and detail["text"] == message.thinking
    assert detail["signature"] == message.items[0].fidelity["signature"]  # type: ignore[index]
    assert "reasoning_content" not in rebuilt
    validated({"model": "m", "stream": True, "messages": [rebuilt]})


def test_reasoning_without_details_and_encrypted_reasoning() -> None:
    plain = Message(items=[ThinkingItem("thinking.done", "Let me think."),
                           ToolCallItem("tool_call.done", "f", "call_1", {"x": [1, "é"]})])
    rebuilt = assistant(OpenAIChatProvider(), plain)
    assert rebuilt["reasoning_content"] == "Let me think."
    assert rebuilt["content"] is None
    assert json.loads(rebuilt["tool_calls"][0]["function"]["arguments"]) == {"x": [1, "é"]}
    encrypted = Message(items=[InlineThinkingItem(
        "inline_thinking.done", b"gAAAAB", {"type": "reasoning.encrypted", "id": "rs_1",
                                            "format": "openai-responses-v1"})])
    assert assistant(OpenAIChatProvider(), encrypted)["reasoning_details"] == [
        {"type": "reasoning.encrypted", "id": "rs_1", "format": "openai-responses-v1",
         "data": "gAAAAB"}]


def test_tool_results_are_tool_messages_in_call_order() -> None:
    results = [ToolResult("call_1", "get_weather", "sunny"),
               ToolResult("call_2", "get_weather", {"error": "Timeout", "message": "slow"}, True)]
    messages = result_messages(OpenAIChatProvider(), results)
    assert messages == [
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2",
         "content": '{"error":"Timeout","message":"slow"}'}]
    validated({"model": "m", "stream": True, "messages": messages})
    assert tool_result_ids("openai-chat", {"model": "m", "messages": messages}) == [
        "call_1", "call_2"]


def test_unknown_provider_name() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        provider_class("nope")
