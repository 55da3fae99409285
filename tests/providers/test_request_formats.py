"""The neutral request model: each format's parser and builder, checked against the SDKs' types."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from streamflow.core.errors import RequestError
from streamflow.core.events import InlineThinkingItem, TextItem, ThinkingItem, ToolCallItem
from streamflow.core.requests import (
    ChatRequest,
    Thinking,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Turn,
)
from streamflow.wire.dialects import get_request

FORMATS = ("anthropic", "openai-chat", "openai-responses")
SIG = "EqQDCkYIBxgCKkDs+/=="


def conversation() -> ChatRequest:
    return ChatRequest(
        model="m", system="Be brief.", max_tokens=300, temperature=0.2, stop=["END"],
        tools=[ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
            "city": {"type": "string"}}})],
        tool_choice=ToolChoice("auto", parallel=True), thinking=Thinking(budget=2048),
        turns=[Turn.user("Weather in Lisbon and Paris?"),
               Turn("assistant", [ThinkingItem("thinking.done", "Two calls.", {"signature": SIG}),
                                  TextItem("text.done", "Checking."),
                                  ToolCallItem("tool_call.done", "get_weather", "call_1",
                                               {"city": "Lisbon"}),
                                  ToolCallItem("tool_call.done", "get_weather", "call_2", {})]),
               Turn("user", [ToolResultPart("call_1", "sunny"),
                             ToolResultPart("call_2", "no city", is_error=True)])])


def _force(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {k: _force(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, Iterator)) or type(x).__name__ == "ValidatorIterator":
        return [_force(i) for i in x]
    return x


def sdk_valid(module: str, type_name: str, value: Any) -> Any:
    types = pytest.importorskip(module)
    return _force(TypeAdapter(getattr(types, type_name)).validate_python(value))


def test_anthropic_body_is_what_the_sdk_types_accept() -> None:
    body = get_request("anthropic").build(conversation())
    kinds = {"text": "TextBlockParam", "thinking": "ThinkingBlockParam",
             "tool_use": "ToolUseBlockParam", "tool_result": "ToolResultBlockParam"}
    for message in body["messages"]:  # block by block: whole messages make pydantic-core panic
        for block in message["content"]:
            assert sdk_valid("anthropic.types", kinds[block["type"]], block) == block
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048 and body["stop_sequences"] == ["END"]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": False}
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "Two calls.", "signature": SIG}
    assert assistant[3]["input"] == {}
    results = body["messages"][2]["content"]
    assert [r["is_error"] for r in results] == [False, True]


def test_openai_chat_body_is_what_the_sdk_types_accept() -> None:
    body = get_request("openai-chat").build(conversation())
    for message in body["messages"]:
        sdk_valid("openai.types.chat", "ChatCompletionMessageParam", message)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    calls = body["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"city": "Lisbon"}', "{}"]
    assert [m["tool_call_id"] for m in body["messages"][3:]] == ["call_1", "call_2"]
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "low" and body["parallel_tool_calls"] is True


def test_openai_responses_body_is_what_the_sdk_types_accept() -> None:
    request = conversation()
    request.turns[1].parts.insert(1, InlineThinkingItem("inline_thinking.done", b"gAAAA-enc",
                                                        {"id": "rs_1"}))
    body = get_request("openai-responses").build(request)
    for item in body["input"]:
        sdk_valid("openai.types.responses", "ResponseInputItemParam", item)
    reasoning = [i for i in body["input"] if i["type"] == "reasoning"]
    assert reasoning == [{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-enc",
                          "summary": [{"type": "summary_text", "text": "Two calls."}]}]
    assert "reasoning.encrypted_content" in body["include"]
    assert body["instructions"] == "Be brief." and "stop" not in body


def test_gemini_body_keeps_signatures_on_their_parts_and_names_results() -> None:
    request = conversation()
    request.turns[1].parts[2] = ToolCallItem("tool_call.done", "get_weather", "call_1",
                                             {"city": "Lisbon"},
                                             {"thought_signature": "c2ln"})
    body = get_request("gemini").build(request)
    model, results = body["contents"][1], body["contents"][2]
    assert model["role"] == "model"
    assert model["parts"][0] == {"text": "Two calls.", "thought": True, "thoughtSignature": SIG}
    assert model["parts"][2]["thoughtSignature"] == "c2ln"
    assert results["parts"][0]["functionResponse"]["name"] == "get_weather"
    assert results["parts"][1]["functionResponse"]["response"] == {"error": "no city"}
    assert body["generationConfig"]["stopSequences"] == ["END"]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


@pytest.mark.parametrize("name", FORMATS)
def test_parse_reads_back_what_build_wrote(name: str) -> None:
    original = conversation()
    back = get_request(name).parse(get_request(name).build(original))
    assert back.system == original.system and back.max_tokens is not None
    assert [t.role for t in back.turns] == ["user", "assistant", "user"]
    calls = [(p.tool_call_id, p.name, p.arguments) for p in back.turns[1].parts
             if isinstance(p, ToolCallItem)]
    assert calls == [("call_1", "get_weather", {"city": "Lisbon"}), ("call_2", "get_weather", {})]
    results = [(p.tool_call_id, p.text) for p in back.turns[2].parts
               if isinstance(p, ToolResultPart)]
    assert results == [("call_1", "sunny"), ("call_2", "no city")]
    assert [t.name for t in back.tools] == ["get_weather"]
    assert back.tool_choice is not None and back.tool_choice.mode == "auto"
    assert back.thinking is not None


def test_anthropic_thinking_and_redacted_blocks_round_trip_byte_for_byte() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": SIG},
            {"type": "redacted_thinking", "data": "opaque+/=="},
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}]}
    request = get_request("anthropic").parse(body)
    assert get_request("anthropic").build(request)["messages"] == body["messages"]


def test_openrouter_reasoning_details_round_trip_in_order() -> None:
    details = [{"type": "reasoning.text", "text": "a", "signature": SIG, "format": "f",
                "index": 0},
               {"type": "reasoning.encrypted", "data": "enc==", "id": "rs_1", "index": 1}]
    body = {"model": "m", "messages": [{"role": "user", "content": "q"},
                                       {"role": "assistant", "content": "x",
                                        "reasoning_details": details}]}
    built = get_request("openai-chat").build(get_request("openai-chat").parse(body))
    assert built["messages"][1]["reasoning_details"] == details


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=60, deadline=None)
@given(body=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                         lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.sampled_from(
                             ["model", "messages", "input", "role", "content", "type",
                              "tool_calls", "function", "tools", "name", "system"]),
                             inner, max_size=4), max_leaves=12))
def test_bad_bodies_raise_request_error_only(name: str, body: Any) -> None:
    """A client's bad body is the client's fault: a RequestError, never another error."""
    try:
        get_request(name).parse(body)
    except RequestError as error:
        assert error.status == 400


texts = st.text(min_size=1, max_size=8)


@st.composite
def requests(draw: st.DrawFn) -> ChatRequest:
    n = draw(st.integers(1, 3))
    turns: list[Turn] = []
    for i in range(n):
        turns.append(Turn.user(draw(texts)))
        ids = [f"call_{i}_{k}" for k in range(draw(st.integers(0, 2)))]
        parts: list[Any] = [TextItem("text.done", draw(texts))]
        parts += [ToolCallItem("tool_call.done", "f", c, draw(st.dictionaries(
            st.sampled_from("abc"), st.integers() | st.text(max_size=4), max_size=2)))
            for c in ids]
        turns.append(Turn("assistant", parts))
        if ids:
            turns.append(Turn("user", [ToolResultPart(c, draw(texts)) for c in ids]))
    return ChatRequest(model="m", turns=turns, system=draw(st.none() | texts),
                       max_tokens=draw(st.none() | st.integers(1, 9999)))


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=40, deadline=None)
@given(request=requests())
def test_build_is_a_fixpoint_of_parse(name: str, request: ChatRequest) -> None:
    once = get_request(name).build(request)
    assert get_request(name).build(get_request(name).parse(once)) == once
