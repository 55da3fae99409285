"""from_ui_messages / from_run_agent_input: every UIMessage part type, into Turns and into each
provider's own JSON; AG-UI's RunAgentInput through the real ag-ui-protocol models."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from streamflow.core.errors import RequestError
from streamflow.core.events import (
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from streamflow.core.requests import ToolResultPart
from streamflow.servers.web import from_run_agent_input, from_ui_messages

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
REDACTED = base64.b64encode(b"opaque-bytes").decode()

HISTORY: list[dict[str, Any]] = [
    {"id": "u1", "role": "user", "parts": [
        {"type": "text", "text": "Weather in Paris?"},
        {"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{PNG}"},
        {"type": "data-ui-state", "data": {"tab": 2}}]},
    {"id": "a1", "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "reasoning", "text": "Look it up.", "state": "done",
         "providerMetadata": {"streamflow": {"fidelity": {"signature": "c2ln+/=="}}}},
        {"type": "reasoning", "text": "", "state": "done",
         "providerMetadata": {"streamflow": {"data": REDACTED}}},
        {"type": "tool-get_weather", "toolCallId": "c1", "state": "output-available",
         "input": {"city": "Paris"}, "output": {"temp": 20}},
        {"type": "dynamic-tool", "toolName": "lookup", "toolCallId": "c2",
         "state": "output-error", "input": {"q": "x"}, "errorText": "no such thing"},
        {"type": "step-start"},
        {"type": "text", "text": "It is 20 degrees.", "state": "done"},
        {"type": "source-url", "sourceId": "s", "url": "https://example.invalid"}]},
    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "And tomorrow?"}]},
]


def test_every_part_type_into_turns() -> None:
    turns = from_ui_messages(HISTORY)
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    text, image = turns[0].parts
    assert isinstance(text, TextItem) and text.text == "Weather in Paris?"
    assert isinstance(image, InlineDataItem) and image.data == b"\x89PNG\r\n\x1a\n"
    thinking, redacted, call, failed = turns[1].parts
    assert isinstance(thinking, ThinkingItem) and thinking.fidelity == {"signature": "c2ln+/=="}
    assert isinstance(redacted, InlineThinkingItem) and redacted.data == b"opaque-bytes"
    assert isinstance(call, ToolCallItem) and (call.name, call.arguments) == (
        "get_weather", {"city": "Paris"})
    assert isinstance(failed, ToolCallItem) and failed.name == "lookup"
    ok, error = turns[2].parts
    assert isinstance(ok, ToolResultPart) and not ok.is_error and ok.text == '{"temp":20}'
    assert isinstance(error, ToolResultPart) and error.is_error and error.text == "no such thing"
    assert turns[3].parts == [TextItem("text.done", "It is 20 degrees.")]


def test_anthropic_gets_its_signed_and_redacted_thinking_back() -> None:
    messages = from_ui_messages(HISTORY, dialect="anthropic")
    blocks = messages[1]["content"]
    assert blocks[0] == {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln+/=="}
    assert blocks[1] == {"type": "redacted_thinking", "data": "opaque-bytes"}
    assert messages[2]["content"][1]["is_error"] is True
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}


@pytest.mark.parametrize(("dialect", "key"), [("openai-chat", "tool_call_id"),
                                              ("openai-responses", "call_id"),
                                              ("gemini", "functionResponse")])
def test_other_dialects_carry_the_tool_round(dialect: str, key: str) -> None:
    out = from_ui_messages(HISTORY, dialect=dialect)
    assert key in str(out) and "It is 20 degrees." in str(out) and "And tomorrow?" in str(out)


def test_data_parts_only_through_map_data() -> None:
    mapped = from_ui_messages(HISTORY, map_data=lambda p: [TextItem("text.done",
                                                                    f"tab={p['data']['tab']}")])
    assert mapped[0].parts[-1] == TextItem("text.done", "tab=2")
    assert len(from_ui_messages(HISTORY)[0].parts) == 2


def test_pending_and_streaming_tool_parts() -> None:
    turns = from_ui_messages([{"role": "assistant", "parts": [
        {"type": "tool-a", "toolCallId": "x", "state": "input-streaming", "input": {}},
        {"type": "tool-b", "toolCallId": "y", "state": "input-available", "input": {"k": 1}}]}])
    [turn] = turns
    assert [p.name for p in turn.parts] == ["b"]  # type: ignore[union-attr]


def test_system_messages_stay_the_apps() -> None:
    assert from_ui_messages([{"role": "system", "parts": [{"type": "text", "text": "be nice"}]},
                             {"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
                            dialect="anthropic") == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@pytest.mark.parametrize("bad", [[{"role": "user", "parts": "x"}], [{"role": "robot"}], "hi",
                                 [{"role": "user", "parts": [{"type": "file"}]}]])
def test_malformed_history_is_a_request_error(bad: Any) -> None:
    with pytest.raises(RequestError):
        from_ui_messages(bad)


def test_run_agent_input_through_the_real_models() -> None:
    from ag_ui.core import (
        AssistantMessage,
        FunctionCall,
        RunAgentInput,
        SystemMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    run_input = RunAgentInput(thread_id="t", run_id="r", state={}, tools=[], context=[],
                              forwarded_props={}, messages=[
        SystemMessage(id="s", content="be nice"),
        UserMessage(id="1", content="Weather in Paris?"),
        AssistantMessage(id="2", content="Checking.", tool_calls=[ToolCall(
            id="c1", function=FunctionCall(name="get_weather", arguments='{"city":"Paris"}'))]),
        ToolMessage(id="3", tool_call_id="c1", content='{"temp":20}'),
        AssistantMessage(id="4", content="20 degrees."),
        UserMessage(id="5", content="Tomorrow?")])
    turns = from_run_agent_input(run_input)
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1].parts[1] == ToolCallItem("tool_call.done", "get_weather", "c1",
                                             {"city": "Paris"})
    assert turns[2].parts == [ToolResultPart("c1", '{"temp":20}', False, "get_weather")]
    wire = from_run_agent_input(run_input.model_dump(by_alias=True), dialect="anthropic")
    assert wire[2]["content"][0]["tool_use_id"] == "c1"
    assert wire[-1]["content"] == [{"type": "text", "text": "Tomorrow?"}]
