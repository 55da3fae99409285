"""Ollama /api/chat and /api/generate NDJSON streams."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA

from streamflow import StreamDecoder, assemble
from streamflow.core.errors import (
    IncompleteStreamError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    ToolCallArgumentParseError,
)
from streamflow.core.events import ToolCallItem

OLLAMA = DATA / "ollama"


def body(name: str) -> bytes:
    return (OLLAMA / name).read_bytes()


def test_text_usage_and_timings() -> None:
    message = assemble(body("chat_text.jsonl"))  # auto-detected
    assert message.text == "The sky is blue because of Rayleigh scattering."
    assert message.finish_reason == "stop" and message.complete
    usage = message.usage_metadata
    assert usage is not None
    assert (usage.prompt_tokens, usage.response_tokens, usage.cached_tokens) == (26, 9, None)
    assert message.model == "llama3.2"
    assert message.provider["done_reason"] == "stop"
    assert message.provider["eval_duration"] == 4535599000
    assert message.provider["done_at"] == "2025-05-27T22:54:57.250000Z"


def test_thinking_then_parallel_whole_tool_calls() -> None:
    dec = StreamDecoder("auto")
    events = dec.feed(body("chat_thinking_tools.jsonl")) + dec.close()
    assert dec.dialect == "ollama"
    kinds = [ev.item.type if ev.item else ev.event_type for ev in events]
    assert kinds == ["thinking.delta", "thinking.delta", "thinking.done", "text.delta",
                     "text.done", "tool_call.delta", "tool_call.done", "tool_call.delta",
                     "tool_call.done", "stop"]
    first = events[5].item
    assert isinstance(first, ToolCallItem)
    # the whole arguments arrive as JSON text on the one delta, parsed on the done
    assert json.loads(str(first.arguments)) == {"format": "celsius", "location": "Toronto"}
    message = dec.message
    assert message.thinking == "The user asks for two cities; call the tool twice."
    assert message.text == "Checking."
    toronto, montreal = message.tool_calls
    assert toronto.name == "get_current_weather"
    assert toronto.arguments == {"format": "celsius", "location": "Toronto"}
    assert toronto.tool_call_id.startswith("call_")
    assert toronto.provider == {"synthesized_id": True}
    assert montreal.tool_call_id == "call_k2b9" and montreal.provider == {"index": 1}
    assert montreal.arguments == {"format": "celsius", "location": "Montréal"}
    # Ollama says "stop" after tool calls; the caller must run them
    assert message.finish_reason == "tool_call"
    assert message.provider["done_reason"] == "stop"


def test_synthesised_ids_are_stable_and_distinct() -> None:
    a = assemble(body("chat_thinking_tools.jsonl"))
    b = assemble(body("chat_thinking_tools.jsonl"))
    assert a.tool_calls[0].tool_call_id == b.tool_calls[0].tool_call_id
    twice = (b'{"model":"m","message":{"role":"assistant","tool_calls":['
             b'{"function":{"name":"f","arguments":{}}},{"function":{"name":"f","arguments":{}}}'
             b']},"done":false}\n{"model":"m","message":{"content":""},"done":true,'
             b'"done_reason":"stop"}\n')
    ids = [c.tool_call_id for c in assemble(twice, "ollama").tool_calls]
    assert len(set(ids)) == 2


def test_generate_stream_with_length_finish() -> None:
    message = assemble(body("generate_length.jsonl"))
    assert message.thinking == "Short answer."
    assert message.text == "Once upon a time"
    assert message.finish_reason == "length"
    assert message.provider["context"] == [1, 2, 3]


def test_error_line_is_a_provider_error_with_the_partial() -> None:
    with pytest.raises(ProviderError, match="unexpected EOF") as info:
        assemble(body("error_midstream.jsonl"))
    assert info.value.partial is not None and info.value.partial.text == "Partial"


def test_missing_done_line_is_incomplete() -> None:
    lines = body("chat_text.jsonl").splitlines(keepends=True)
    with pytest.raises(IncompleteStreamError) as info:
        assemble(b"".join(lines[:-1]), "ollama")
    assert info.value.partial is not None
    assert info.value.partial.text == "The sky is blue because of Rayleigh scattering."


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 60), max_size=20))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    data = body("chat_thinking_tools.jsonl")
    ref = StreamDecoder("ollama", clock=lambda: 0)
    expected = ref.feed(data) + ref.close()
    dec = StreamDecoder("ollama", clock=lambda: 0)
    got, pos = [], 0
    for size in cuts:
        got += dec.feed(data[pos:pos + size])
        pos += size
    got += dec.feed(data[pos:]) + dec.close()
    assert got == expected


@pytest.mark.parametrize(("line", "error"), [
    (b'{"model":"m","message":{"content":5},"done":false}', ProtocolError),
    (b'{"model":"m","message":"hello","done":false}', ProtocolError),
    (b'{"model":"m","message":{"tool_calls":[{"function":"f"}]},"done":false}', ProtocolError),
    (b'{"model":"m","message":{"tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]},'
     b'"done":false}', ToolCallArgumentParseError),
    (b'[1, 2]', ProtocolError),
    (b'{"model":"m",', ProtocolError),
])
def test_hostile_lines_are_typed_errors(line: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        assemble(line + b"\n", "ollama")


def test_line_after_done_is_ignored_never_an_error_after_stop() -> None:
    dec = StreamDecoder("ollama")
    events = dec.feed(body("chat_text.jsonl") + b'{"model":"m","message":{"content":"x"}}\n')
    events += dec.close()
    assert events[-1].event_type == "stop" and dec.ignored_frames == 1
    assert dec.message.text == assemble(body("chat_text.jsonl"), "ollama").text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["model", "message", "content", "thinking", "tool_calls", "function",
                         "name", "arguments", "done", "done_reason", "error", "response"]),
        inner, max_size=4),
    max_leaves=10)


@settings(max_examples=100, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=5))
def test_fuzzed_lines_raise_only_streamflow_errors(lines: list) -> None:
    data = b"".join(json.dumps(v).encode() + b"\n" for v in lines)
    try:
        assemble(data, "ollama")
    except StreamflowError:
        pass
