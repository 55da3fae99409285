"""Dialect ``anthropic``: seed streams, every event/block/delta type, bad input, the SDK oracle."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import from_json
from realdata import DATA, framing_for, real_body, real_path

from streamflow import (
    IncompleteStreamError,
    InlineThinkingItem,
    Message,
    ProtocolError,
    ProviderError,
    StreamDecoder,
    StreamflowError,
    TextItem,
    ThinkingItem,
    ToolCallArgumentParseError,
    ToolCallItem,
    UniEvent,
    Usage,
    assemble,
)
from streamflow.wire.dialects.anthropic.decode import FINISH_REASONS, AnthropicDecoder, parse_event
from streamflow.wire.dialects.anthropic.wire import (
    ContentBlockStartEvent,
    ServerToolResultBlock,
    UnknownBlock,
    UnknownDelta,
    UnknownEvent,
)
from streamflow.wire.framing import ServerSentEvent, SSEParser

CLOCK = 1694502400000
ANTHROPIC = DATA / "anthropic"


# -- building Anthropic bodies ------------------------------------------------------

def sse(*events: dict[str, Any]) -> bytes:
    """Events as the wire has them: an ``event:`` line naming the JSON ``type``, then data."""
    return b"".join(f"event: {e.get('type')}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n"
                    .encode() for e in events)


def start(**usage: Any) -> dict[str, Any]:
    return {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 1}}}


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def text(index: int, t: str) -> dict[str, Any]:
    return delta(index, type="text_delta", text=t)


def stop_block(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str | None = "end_turn", **usage: Any) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": usage or {"output_tokens": 5}}


STOP = {"type": "message_stop"}
PING = {"type": "ping"}


def decode(body: bytes) -> tuple[list[UniEvent], Message]:
    """All events of ``body`` fed in one chunk, and the final message."""
    d = StreamDecoder("anthropic", clock=lambda: CLOCK)
    events = d.feed(body) + d.close()
    return events, d.message


def failure(body: bytes) -> tuple[list[UniEvent], StreamflowError]:
    """Feed ``body`` event by event; the events received before the error, and the error."""
    d = StreamDecoder("anthropic", clock=lambda: CLOCK)
    got: list[UniEvent] = []
    *parts, last = body.split(b"\n\n")
    with pytest.raises(StreamflowError) as info:
        for part in parts:
            got += d.feed(part + b"\n\n")
        got += d.feed(last)
        got += d.close()
    assert all(e.event_type == "delta" for e in got), "a failed stream never yields stop"
    assert info.value.partial is not None and not info.value.partial.complete
    return got, info.value


def kinds(message: Message) -> list[str]:
    return [i.type for i in message.items]


# -- seed 000: the three streams of the Friendli page -------------------------------

def test_seed000_text_stream() -> None:
    events, m = decode((ANTHROPIC / "seed000_text.sse").read_bytes())
    assert [e.item.type if e.item else "stop" for e in events] == [
        "text.delta", "text.delta", "text.done", "stop"]
    assert [e.item.text for e in events[:3]] == ["Hello", ", how can I help?",  # type: ignore
                                                 "Hello, how can I help?"]
    first = dict(events[0].provider or {})
    so_far = first.pop("usage_so_far")  # message_start's counts, for an encoder's opening
    assert first == {"id": "msg_4b71d12c86d94e719c7e3984a7bb7941"}
    assert so_far["final"] is False and so_far["provider"] == {
        "input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0}
    assert m.text == "Hello, how can I help?" and m.complete
    assert m.finish_reason == "stop" and m.provider["stop_reason"] == "end_turn"
    assert m.usage_metadata is not None
    assert (m.usage_metadata.prompt_tokens, m.usage_metadata.response_tokens,
            m.usage_metadata.cached_tokens) == (0, 11, 0)


def test_seed000_tool_use_stream() -> None:
    events, m = decode((ANTHROPIC / "seed000_tool_use.sse").read_bytes())
    items = [e.item for e in events if e.item]
    assert items == [
        ToolCallItem("tool_call.delta", "get_weather", "toolu_01A", ""),
        ToolCallItem("tool_call.delta", "", "", '{"location":"Seoul"'),
        ToolCallItem("tool_call.delta", "", "", ',"date":"2026-03-12"}'),
        ToolCallItem("tool_call.done", "get_weather", "toolu_01A",
                     {"location": "Seoul", "date": "2026-03-12"}),
    ]
    assert m.tool_calls == [items[-1]]
    assert m.finish_reason == "tool_call" and m.usage_metadata.response_tokens == 19  # type: ignore


def test_seed000_thinking_stream() -> None:
    events, m = decode((ANTHROPIC / "seed000_thinking.sse").read_bytes())
    items = [e.item for e in events if e.item]
    assert items == [
        ThinkingItem("thinking.delta", "I should answer briefly."),
        ThinkingItem("thinking.delta", "", {"signature": "sig_abc123"}),
        ThinkingItem("thinking.done", "I should answer briefly.", {"signature": "sig_abc123"}),
    ]
    assert m.thinking == "I should answer briefly." and m.text == ""
    assert m.usage_metadata.response_tokens == 8  # type: ignore[union-attr]


def test_seed000_page_as_one_body_is_one_message_and_the_rest_is_ignored() -> None:
    """The page repeats three whole streams; one HTTP body holds one message only.

    The stream is over at the first ``message_stop``: what follows is counted in
    ``ignored_frames``, never decoded, so there is no error after the stop event.
    """
    body = b"".join((ANTHROPIC / f"seed000_{n}.sse").read_bytes()
                    for n in ("text", "tool_use", "thinking"))
    d = StreamDecoder("anthropic", clock=lambda: CLOCK)
    events = d.feed(body) + d.close()
    assert [e.event_type for e in events].count("stop") == 1
    assert events[-1].event_type == "stop"
    assert d.message.text == "Hello, how can I help?" and d.message.complete
    assert d.ignored_frames == 14  # the two other streams' 7 events each


# -- seed 002: the GLM walkthrough ----------------------------------------------------

def test_seed002_glm_walkthrough() -> None:
    events, m = decode((ANTHROPIC / "seed002_glm_walkthrough.sse").read_bytes())
    first = dict(events[0].provider or {})
    assert first.pop("usage_so_far")["provider"] == {"input_tokens": 0, "output_tokens": 0}
    assert first == {"id": "msg_20261112150800", "model": "glm-5.3"}
    assert kinds(m) == ["thinking.done", "text.done"]
    thinking, answer = m.items
    assert isinstance(thinking, ThinkingItem) and isinstance(answer, TextItem)
    assert thinking.thinking.startswith("The user is asking") and "每个数字" in thinking.thinking
    assert thinking.thinking.endswith('."\n\n')
    assert thinking.fidelity == {"signature": "2491a23a5f0c4b7e9d1e"}
    assert answer.text == "\n".join(str(n) for n in range(1, 11))
    text_fragments = [e.item for e in events if e.item and e.item.type == "text.delta"]
    assert len(text_fragments) == 16 and text_fragments[-1].text == "\n9\n10"  # type: ignore
    u = m.usage_metadata
    assert u == Usage(cached_tokens=0, prompt_tokens=22, response_tokens=195, provider={
        "input_tokens": 22, "output_tokens": 195, "cache_read_input_tokens": 0,
        "server_tool_use": {"web_search_requests": 0}, "service_tier": "standard"})
    assert m.finish_reason == "stop"
    assert events[-1].provider is not None and events[-1].provider["stop_reason"] == "end_turn"


def test_seed002_skeleton_as_printed_without_blank_lines_is_a_protocol_error() -> None:
    """The article prints events without blank lines; by SSE rules that is one event."""
    printed = (ANTHROPIC / "seed002_glm_walkthrough.sse").read_bytes().replace(b"\n\n", b"\n")
    with pytest.raises(ProtocolError, match="malformed JSON"):
        decode(printed + b"\n")


def test_seed002_tool_arguments_in_three_fragments() -> None:
    body = sse(start(), block(0, type="tool_use", id="toolu_sh", name="get_weather", input={}),
               delta(0, type="input_json_delta", partial_json='{"city"'),
               delta(0, type="input_json_delta", partial_json=': "'),
               delta(0, type="input_json_delta", partial_json='上海"}'),
               stop_block(0), message_delta("tool_use"), STOP)
    _, m = decode(body)
    assert m.tool_calls == [ToolCallItem("tool_call.done", "get_weather", "toolu_sh",
                                         {"city": "上海"})]


def test_seed002_redacted_thinking_has_no_deltas() -> None:
    body = sse(start(), block(0, type="redacted_thinking", data="EmwKAhgBEgy3"), stop_block(0),
               block(1, type="text", text=""), text(1, "ok"), stop_block(1),
               message_delta(), STOP)
    events, m = decode(body)
    assert [e.item for e in events[:2]] == [
        InlineThinkingItem("inline_thinking.delta", b"EmwKAhgBEgy3", None,
                           {"block_type": "redacted_thinking"}),
        InlineThinkingItem("inline_thinking.done", b"EmwKAhgBEgy3", None,
                           {"block_type": "redacted_thinking"})]
    assert kinds(m) == ["inline_thinking.done", "text.done"]


@pytest.mark.parametrize(("raw", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("tool_use", "tool_call"),
    ("pause_turn", "unknown"), ("refusal", "unknown"), (None, "unknown"), ("new_reason", "unknown"),
])
def test_stop_reasons(raw: str | None, finish: str) -> None:
    md = message_delta(raw)
    md["delta"]["stop_sequence"] = "###" if raw == "stop_sequence" else None
    events, m = decode(sse(start(), block(0, type="text", text=""), text(0, "a"), stop_block(0),
                           md, STOP))
    assert events[-1].finish_reason == finish == m.finish_reason
    assert m.provider["stop_reason"] == raw
    assert m.provider["stop_sequence"] == ("###" if raw == "stop_sequence" else None)
    assert FINISH_REASONS.get(raw or "", "unknown") == finish


def test_usage_placeholders_are_completed_and_repeated_message_deltas_are_not_summed() -> None:
    body = sse(start(input_tokens=30, cache_creation_input_tokens=4, cache_read_input_tokens=6,
                     output_tokens=1),
               block(0, type="text", text=""), text(0, "x"),
               message_delta(None, output_tokens=10), text(0, "y"),
               message_delta(None, output_tokens=20), stop_block(0),
               message_delta("end_turn", output_tokens=25, cache_read_input_tokens=None), STOP)
    events, m = decode(body)
    u = events[-1].usage_metadata
    assert u is not None and u == m.usage_metadata
    assert (u.prompt_tokens, u.cached_tokens, u.response_tokens) == (40, 6, 25)
    assert u.provider == {"input_tokens": 30, "cache_creation_input_tokens": 4,
                          "cache_read_input_tokens": 6, "output_tokens": 25}
    assert m.text == "xy"


def test_error_event_mid_stream_keeps_what_arrived() -> None:
    """Seed 002: an overload after a few seconds of text; the text must survive."""
    body = sse(start(), block(0, type="text", text=""), text(0, "Half an ans"), PING,
               {"type": "error", "request_id": "req_9",
                "error": {"type": "overloaded_error", "message": "Overloaded"}})
    got, err = failure(body)
    assert isinstance(err, ProviderError)
    assert (err.type, err.message, err.request_id, err.retryable) == (
        "overloaded_error", "Overloaded", "req_9", True)
    assert err.body["error"]["type"] == "overloaded_error"
    assert [e.item.text for e in got] == ["Half an ans"]  # type: ignore[union-attr]
    assert err.partial is not None and kinds(err.partial) == ["text.delta"]
    assert err.partial.text == "Half an ans" and err.partial.id == "msg_1"


def test_error_event_before_anything_is_detected_and_raised() -> None:
    body = sse({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    with pytest.raises(ProviderError) as info:
        assemble(body)
    assert info.value.type == "rate_limit_error" and info.value.partial is not None
    assert info.value.partial.items == []


# -- seed 001: the UniEvent example, from Anthropic bytes ------------------------------

def test_seed001_example_sequence() -> None:
    sig = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    body = sse(start(), block(0, type="thinking", thinking=""),
               delta(0, type="thinking_delta", thinking="Let me"),
               delta(0, type="thinking_delta", thinking=" check"),
               delta(0, type="signature_delta", signature=sig), stop_block(0),
               block(1, type="tool_use", id="toolu_1", name="get_weather", input={}),
               delta(1, type="input_json_delta", partial_json='{"location": '),
               delta(1, type="input_json_delta", partial_json='"Paris"}'), stop_block(1),
               message_delta("tool_use", output_tokens=42), STOP)
    events, _ = decode(body)
    assert [(e.event_type, e.content_items) for e in events] == [
        ("delta", [ThinkingItem("thinking.delta", "Let me")]),
        ("delta", [ThinkingItem("thinking.delta", " check")]),
        ("delta", [ThinkingItem("thinking.delta", "", {"signature": sig})]),
        ("delta", [ThinkingItem("thinking.done", "Let me check", {"signature": sig})]),
        ("delta", [ToolCallItem("tool_call.delta", "get_weather", "toolu_1", "")]),
        ("delta", [ToolCallItem("tool_call.delta", "", "", '{"location": ')]),
        ("delta", [ToolCallItem("tool_call.delta", "", "", '"Paris"}')]),
        ("delta", [ToolCallItem("tool_call.done", "get_weather", "toolu_1",
                                {"location": "Paris"})]),
        ("stop", []),
    ]
    stop = events[-1]
    assert stop.finish_reason == "tool_call"
    assert stop.usage_metadata == Usage(None, 10, None, 42, provider={
        "input_tokens": 10, "output_tokens": 42})
    assert all(e.created_at == CLOCK and e.role == "assistant" for e in events)
    assert all(e.usage_metadata is None and e.finish_reason is None for e in events[:-1])
    assert events[0].to_dict()["content_items"] == [
        {"type": "thinking.delta", "thinking": "Let me", "fidelity": None, "provider": None}]


# -- every block and delta type --------------------------------------------------------

def test_kitchen_sink_every_block_delta_and_event_type() -> None:
    events, m = decode((ANTHROPIC / "kitchen_sink.sse").read_bytes())
    assert kinds(m) == ["thinking.done", "inline_thinking.done", "text.done", "tool_call.done"]
    thinking, redacted, answer, call = m.items
    assert thinking.fidelity == {"signature": "c2lnbmF0dXJl"}
    assert redacted.data == b"EmwKAhgBEgy3va3pzix/LafPsn4a"  # type: ignore[union-attr]
    assert answer.text == "上海今天晴，21°C。"  # type: ignore[union-attr]
    assert answer.provider == {
        "citations": [{"type": "web_search_result_location", "cited_text": "Sunny, 21°C",
                       "url": "https://example.com/sh", "title": "Shanghai weather",
                       "encrypted_index": "x1"}],
        "unknown_deltas": [{"type": "sparkle_delta", "sparkles": 3}]}
    assert call == ToolCallItem("tool_call.done", "get_forecast", "toolu_02",
                                {"city": "上海", "days": 3})
    server_use, result = m.provider["extra_blocks"]
    assert server_use == {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
                          "input": {"query": "上海 weather"}, "index": 2}
    assert result["type"] == "web_search_tool_result" and result["index"] == 3
    assert result["content"][0]["url"] == "https://example.com/sh"
    assert m.provider["unknown_events"] == [{"type": "future_event", "payload": {"n": 1}}]
    u = m.usage_metadata
    assert u is not None and (u.prompt_tokens, u.cached_tokens, u.thoughts_tokens,
                              u.response_tokens) == (75, 20, 12, 87)
    assert u.provider["server_tool_use"] == {"web_search_requests": 1}  # type: ignore[index]
    assert m.finish_reason == "tool_call"
    # no UniEvent carries the server-tool blocks as items, and the stop event has them all
    assert events[-1].provider is not None
    assert events[-1].provider["extra_blocks"] == m.provider["extra_blocks"]


def test_blocks_given_whole_at_start() -> None:
    body = sse(start(),
               block(0, type="thinking", thinking="Pondered.", signature="sig0"), stop_block(0),
               block(1, type="text", text="Preset", citations=[{"cited_text": "c"}]),
               text(1, " text"), stop_block(1),
               block(2, type="tool_use", id="t1", name="f", input={"a": [1, "é"]}), stop_block(2),
               block(3, type="tool_use", id="t2", name="g", input={}), stop_block(3),
               block(4, type="text", text=""), stop_block(4),
               message_delta("tool_use"), STOP)
    _, m = decode(body)
    assert m.items == [
        ThinkingItem("thinking.done", "Pondered.", {"signature": "sig0"}),
        TextItem("text.done", "Preset text", None, {"citations": [{"cited_text": "c"}]}),
        ToolCallItem("tool_call.done", "f", "t1", {"a": [1, "é"]}),
        ToolCallItem("tool_call.done", "g", "t2", {}),
        TextItem("text.done", ""),
    ]


def test_two_consecutive_tool_calls_are_two_groups_in_call_order() -> None:
    body = sse(start(),
               block(0, type="tool_use", id="a", name="f", input={}),
               delta(0, type="input_json_delta", partial_json='{"x": 1}'), stop_block(0),
               block(1, type="tool_use", id="b", name="f", input={}),
               delta(1, type="input_json_delta", partial_json='{"x": 2}'), stop_block(1),
               message_delta("tool_use"), STOP)
    events, m = decode(body)
    assert [(c.tool_call_id, c.arguments) for c in m.tool_calls] == [("a", {"x": 1}),
                                                                     ("b", {"x": 2})]
    assert [e.item.type for e in events if e.item] == [
        "tool_call.delta", "tool_call.delta", "tool_call.done"] * 2


def test_unknown_blocks_and_deltas_pass_through() -> None:
    body = sse(start(),
               block(0, type="container_upload", file_id="file_1"),
               delta(0, type="upload_progress_delta", pct=50), stop_block(0),
               block(1, type="server_tool_use", id="s", name="code_execution", input={}),
               delta(1, type="input_json_delta", partial_json='{"code": "pri'), stop_block(1),
               block(2, type="thinking", thinking=""),
               delta(2, type="mood_delta", mood="calm"),
               delta(2, type="thinking_delta", thinking="hm"), stop_block(2),
               block(3, type="tool_use", id="t", name="f", input={}),
               delta(3, type="future_delta", x=1),
               delta(3, type="input_json_delta", partial_json="{}"), stop_block(3),
               block(4, type="redacted_thinking", data="abc"),
               delta(4, type="odd_delta"), stop_block(4),
               message_delta("tool_use"), STOP)
    _, m = decode(body)
    upload, code = m.provider["extra_blocks"]
    assert upload == {"type": "container_upload", "file_id": "file_1", "index": 0,
                      "deltas": [{"type": "upload_progress_delta", "pct": 50}]}
    assert code["input_json"] == '{"code": "pri' and code["input"] == {}  # cut: raw text kept
    thinking, call, redacted = m.items
    assert thinking.provider == {"unknown_deltas": [{"type": "mood_delta", "mood": "calm"}]}
    assert thinking.thinking == "hm"  # type: ignore[union-attr]
    assert call.provider == {"unknown_deltas": [{"type": "future_delta", "x": 1}]}
    assert redacted.provider == {"block_type": "redacted_thinking",
                                 "unknown_deltas": [{"type": "odd_delta"}]}


def test_message_level_extras_are_kept() -> None:
    md = message_delta("refusal")
    md["delta"]["stop_details"] = {"type": "refusal", "category": "cyber"}
    md["delta"]["container"] = {"id": "cont_1"}
    st_ = dict(start())
    st_["message"] = dict(st_["message"], container=None, service="x")
    _, m = decode(sse(st_, md, {"type": "message_stop", "trace": "t"}))
    assert m.items == [] and m.complete
    assert m.provider["stop_details"] == {"type": "refusal", "category": "cyber"}
    assert m.provider["container"] == {"id": "cont_1"} and m.provider["service"] == "x"
    assert m.provider["message_stop"] == {"trace": "t"}


def test_blocks_left_open_at_message_stop_are_closed() -> None:
    """A ``max_tokens`` cut may end the message without ``content_block_stop``."""
    body = sse(start(), block(0, type="text", text=""), text(0, "cut he"),
               message_delta("max_tokens"), STOP)
    events, m = decode(body)
    assert [e.item.type if e.item else e.event_type for e in events] == [
        "text.delta", "text.done", "stop"]
    assert m.text == "cut he" and m.finish_reason == "length"


def test_the_json_type_decides_not_the_event_line() -> None:
    frames = [ServerSentEvent(json.dumps(e)) for e in (start(), block(0, type="text", text=""),
                                                       text(0, "hi"), stop_block(0),
                                                       message_delta(), STOP)]
    d = StreamDecoder("anthropic")
    d.feed_frames(frames)
    assert d.close() == [] and d.message.text == "hi"


# -- bad input: typed errors, nothing received is lost ---------------------------------

HEAD = [start(), block(0, type="text", text=""), text(0, "kept")]
BAD = {
    "malformed JSON": b'event: content_block_delta\ndata: {"type": "content_block_delta",\n\n',
    "JSON array": b"data: [1, 2]\n\n",
    "JSON string": b'data: "message_stop"\n\n',
    "text is a number": sse(text(0, 5)),  # type: ignore[arg-type]
    "index is a string": sse({**text(0, "x"), "index": "x"}),
    "index is a bool": sse({**text(0, "x"), "index": True}),
    "index missing": sse({"type": "content_block_delta", "delta": {"type": "text_delta"}}),
    "delta is a string": sse({"type": "content_block_delta", "index": 0, "delta": "x"}),
    "delta is null": sse({"type": "content_block_delta", "index": 0, "delta": None}),
    "delta for a block never started": sse(text(7, "x")),
    "stop for a block never started": sse(stop_block(3)),
    "block started twice": sse(block(0, type="text", text="")),
    "content_block is a list": sse({"type": "content_block_start", "index": 1,
                                    "content_block": []}),
    "text_delta on a thinking block": sse(stop_block(0), block(1, type="thinking", thinking=""),
                                          text(1, "x")),
    "input_json_delta on a text block": sse(delta(0, type="input_json_delta", partial_json="{")),
    "signature is a number": sse(stop_block(0), block(1, type="thinking", thinking=""),
                                 delta(1, type="signature_delta", signature=7)),
    "tool name is an object": sse(stop_block(0), block(1, type="tool_use", id="t", name={})),
    "redacted data is a number": sse(stop_block(0), block(1, type="redacted_thinking", data=5)),
    "usage counter is a string": sse(stop_block(0), message_delta(None, output_tokens="5")),
    "usage is a list": sse(stop_block(0), {"type": "message_delta", "delta": {}, "usage": [1]}),
    "stop_reason is a number": sse(stop_block(0), {"type": "message_delta",
                                                   "delta": {"stop_reason": 3}}),
    "message_delta.delta is a string": sse({"type": "message_delta", "delta": "end"}),
    "second message_start": sse(start()),
    "message is null": sse({"type": "message_start", "message": None}),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_protocol_error_with_the_partial(case: str) -> None:
    body = sse(*HEAD) + BAD[case] + sse(stop_block(0), message_delta(), STOP)
    got, err = failure(body)
    assert type(err) is ProtocolError, err
    assert [e.item for e in got][:1] == [TextItem("text.delta", "kept")]
    assert err.partial is not None and err.partial.text == "kept"
    assert err.partial.id == "msg_1"


@pytest.mark.parametrize("message", [{"id": {}}, {"id": "m", "model": 3}, {"usage": [1]}])
def test_bad_message_envelope_is_a_protocol_error(message: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as info:
        decode(sse({"type": "message_start", "message": message}))
    assert info.value.partial is not None and info.value.partial.items == []


def test_redacted_data_null_reads_as_empty() -> None:
    """``expect_str`` reads a null string as empty: a redacted block with no data is kept."""
    _, m = decode(sse(start(), block(0, type="redacted_thinking", data=None), stop_block(0),
                      message_delta(), STOP))
    assert m.items == [InlineThinkingItem("inline_thinking.done", b"", None,
                                          {"block_type": "redacted_thinking"})]


def test_event_after_message_stop_is_ignored_by_the_stream_but_rejected_by_the_decoder() -> None:
    body = sse(*HEAD, stop_block(0), message_delta(), STOP, PING)
    _, m = decode(body)
    assert m.complete
    events, m = decode(body + sse(block(1, type="text", text="")))
    assert m.complete and events[-1].event_type == "stop"  # the stream was over
    decoder = AnthropicDecoder(clock=lambda: CLOCK)  # the bare dialect decoder says why
    for frame in SSEParser().feed(body):
        decoder.feed(frame)
    with pytest.raises(ProtocolError, match="after message_stop") as info:
        decoder.feed(ServerSentEvent(data='{"type": "content_block_start", "index": 1, '
                                          '"content_block": {"type": "text", "text": ""}}'))
    assert info.value.partial is not None and info.value.partial.complete


@pytest.mark.parametrize("tail", [
    b"",                                                   # cut between events
    sse(stop_block(0), message_delta())[:-1],              # message_delta never finished
    sse(stop_block(0), message_delta()),                   # no message_stop
    b"event: message_stop\ndata: {\"type\": \"message_stop\"}\n",  # last event unfinished
])
def test_body_without_message_stop_is_incomplete(tail: bytes) -> None:
    _got, err = failure(sse(*HEAD, text(0, " more")) + tail)
    assert type(err) is IncompleteStreamError and err.retryable
    assert "message_stop" in err.message
    assert err.partial is not None and err.partial.text == "kept more"
    closed = b"content_block_stop" in tail
    assert kinds(err.partial) == ["text.done" if closed else "text.delta"]


@pytest.mark.parametrize(("fragments", "why"), [
    (['{"a": 1'], "not valid JSON"),
    (['{"a": 1}}'], "not valid JSON"),
    (["[1, 2]"], "JSON list"),
    (['"str"'], "JSON str"),
    (["null"], "JSON NoneType"),
])
def test_bad_tool_arguments_raise_in_place_of_the_done(fragments: list[str], why: str) -> None:
    body = sse(*HEAD, stop_block(0), block(1, type="tool_use", id="t9", name="f", input={}),
               *[delta(1, type="input_json_delta", partial_json=f) for f in fragments],
               stop_block(1), message_delta("tool_use"), STOP)
    got, err = failure(body)
    assert isinstance(err, ToolCallArgumentParseError) and why in err.message
    assert (err.name, err.tool_call_id, err.arguments) == ("f", "t9", "".join(fragments))
    assert [e.item.type for e in got if e.item][-1] == "tool_call.delta"
    assert err.partial is not None
    assert err.partial.items[-1] == ToolCallItem("tool_call.delta", "f", "t9", "".join(fragments))
    assert err.partial.text == "kept" and err.partial.tool_calls == []


def _kitchen_events() -> list[dict[str, Any]]:
    body = (ANTHROPIC / "kitchen_sink.sse").read_bytes()
    p = SSEParser()
    return [json.loads(f.data) for f in p.feed(body) + p.close()]


JSON = st.recursive(st.none() | st.booleans() | st.integers()
                    | st.text(st.characters(codec="utf-8"), max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=5), inner,
                                      max_size=3), max_leaves=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_hostile_value_gives_a_typed_error_or_a_message(data: st.DataObject) -> None:
    """Replace one value anywhere in one event by arbitrary JSON: never a bare exception."""
    events = _kitchen_events()
    ev = data.draw(st.sampled_from(events))
    target: Any = ev
    while True:
        keys = list(target) if isinstance(target, dict) else list(range(len(target)))
        key = data.draw(st.sampled_from(keys))
        child = target[key]
        if not isinstance(child, (dict, list)) or not child or data.draw(st.booleans()):
            target[key] = data.draw(JSON)
            break
        target = child
    try:
        assemble(sse(*events))
    except StreamflowError as exc:
        assert exc.partial is not None and not exc.partial.complete


# -- sniffing and the typed wire models ------------------------------------------------

@pytest.mark.parametrize(("frame", "ok"), [
    (ServerSentEvent("{}", "message_start"), True),
    (ServerSentEvent('{"type":"ping"}', "ping"), True),
    (ServerSentEvent('{ "type" : "message_start", "message": {}}'), True),
    (ServerSentEvent('{\n  "type": "message_start"\n}'), True),
    (ServerSentEvent('{"type":"error","error":{"type":"overloaded_error","message":"x"}}',
                     "error"), True),
    (ServerSentEvent('{"type":"error","error":{"message":"x"}}'), True),
    (ServerSentEvent('{"type":"error","code":"x","message":"y","sequence_number":1}',
                     "error"), False),
    (ServerSentEvent('{"type":"error","error":{"a":1},"sequence_number":1}'), False),
    (ServerSentEvent("not json", "error"), False),
    (ServerSentEvent('{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[]}'), False),
    (ServerSentEvent('{"type":"response.created"}', "response.created"), False),
    (ServerSentEvent('{"type":"pingback"}'), False),
])
def test_sniff(frame: ServerSentEvent, ok: bool) -> None:
    assert AnthropicDecoder.sniff(frame) is ok


def test_wire_models_type_every_event_of_the_fixtures() -> None:
    for path in sorted(ANTHROPIC.glob("*.sse")):
        p = SSEParser()
        for frame in p.feed(path.read_bytes()) + p.close():
            model = AnthropicDecoder.parse_wire(frame.data)
            assert not isinstance(model, UnknownEvent) or model.type == "future_event", path
            block_ = getattr(model, "content_block", None)
            assert not isinstance(block_, UnknownBlock), (path, block_)
            assert not isinstance(getattr(model, "delta", None), UnknownDelta) or \
                model.delta.type == "sparkle_delta"  # type: ignore[attr-defined]


def test_wire_models_pass_unknown_types_through() -> None:
    ev = parse_event('{"type":"content_block_start","index":3,"content_block":'
                     '{"type":"bash_code_execution_tool_result","tool_use_id":"s","content":{}}}')
    assert isinstance(ev, ContentBlockStartEvent)
    assert isinstance(ev.content_block, ServerToolResultBlock)
    assert isinstance(parse_event('{"type":"new_event","x":1}'), UnknownEvent)
    ev = parse_event('{"type":"content_block_start","index":0,"content_block":{"type":"novel"}}')
    assert isinstance(ev.content_block, UnknownBlock)  # type: ignore[attr-defined]
    assert parse_event('{"type":"new_event","x":1}').model_extra == {"x": 1}


# -- oracle: the official SDK's stream helper on the same bytes ---------------------------

REAL = ["sdk_basic_response.sse", "sdk_tool_use_response.sse", "sdk_refusal_response.sse",
        "pyd_thinking_part_stream.sse", "vercel_anthropic_text.jsonl"]


def sdk_final(body: bytes) -> Any:
    """The ``anthropic`` SDK's ``get_final_message()`` for ``body`` served by a mock transport."""
    anthropic = pytest.importorskip("anthropic")
    try:  # recent SDKs ship their own fork of httpx
        import httpx2 as httpx_mod  # type: ignore[import-not-found]
    except ImportError:
        import httpx as httpx_mod

    def serve(request: Any) -> Any:
        return httpx_mod.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = anthropic.Anthropic(api_key="x", http_client=httpx_mod.Client(
        transport=httpx_mod.MockTransport(serve)))
    with client.messages.stream(model="m", max_tokens=64,
                                messages=[{"role": "user", "content": "hi"}]) as s:
        return s.get_final_message()


def sse_for_sdk(relative: str) -> bytes:
    """The recording as SSE the SDK reads: ``.jsonl`` payloads get their ``event:`` line back."""
    body = real_body(relative)
    if framing_for(relative) != "ndjson":
        return body
    return b"".join(b"event: " + json.loads(line)["type"].encode() + b"\ndata: " + line + b"\n\n"
                    for line in body.splitlines() if line.strip())


def sdk_summary(msg: Any) -> dict[str, Any]:
    blocks = msg.content
    u = msg.usage
    return {
        "id": msg.id, "model": msg.model, "stop_reason": msg.stop_reason,
        "kinds": [b.type for b in blocks],
        "text": "".join(b.text for b in blocks if b.type == "text"),
        "thinking": [(b.thinking, b.signature) for b in blocks if b.type == "thinking"],
        "tools": [(b.name, b.id, b.input) for b in blocks if b.type == "tool_use"],
        "usage": (u.input_tokens, u.output_tokens, u.cache_read_input_tokens,
                  u.cache_creation_input_tokens),
    }


BLOCK_OF = {"text": "text", "thinking": "thinking", "tool_call": "tool_use",
            "inline_thinking": "redacted_thinking"}


def our_summary(m: Message) -> dict[str, Any]:
    raw = (m.usage_metadata.provider if m.usage_metadata else None) or {}
    return {
        "id": m.id, "model": m.model, "stop_reason": m.provider.get("stop_reason"),
        "kinds": [BLOCK_OF[i.kind] for i in m.items],
        "text": m.text,
        "thinking": [(i.thinking, (i.fidelity or {}).get("signature"))
                     for i in m.items if isinstance(i, ThinkingItem)],
        "tools": [(c.name, c.tool_call_id, c.arguments) for c in m.tool_calls],
        "usage": tuple(raw.get(k) for k in ("input_tokens", "output_tokens",
                                            "cache_read_input_tokens",
                                            "cache_creation_input_tokens")),
    }


@pytest.mark.parametrize("relative", REAL)
def test_real_recording_matches_the_sdk(relative: str) -> None:
    """Text, thinking + signature, tools, usage and stop reason equal the SDK's final message.

    For ``.jsonl`` recordings (payloads without ``event:`` lines) the SDK gets the event
    line restored from each payload's ``type``, since it skips events without one; we read
    the payloads as they are. The refusal recording has one empty text block: the SDK keeps
    it, so do we (a ``text.done`` with ``""``); its ``refusal`` stop reason maps to
    ``finish_reason="unknown"`` with the raw reason and ``stop_details`` in ``provider``.
    """
    m = assemble(real_body(f"anthropic/{relative}"), framing=framing_for(relative))
    expected = sdk_summary(sdk_final(sse_for_sdk(f"anthropic/{relative}")))
    assert our_summary(m) == expected
    assert m.finish_reason == FINISH_REASONS.get(expected["stop_reason"] or "", "unknown")
    inp, _, read, made = expected["usage"]
    assert m.usage_metadata is not None
    assert m.usage_metadata.prompt_tokens == inp + (read or 0) + (made or 0)


def test_cut_tool_arguments_differ_from_the_sdk_by_design() -> None:
    """``sdk_incomplete_partial_json.sse``: ``max_tokens`` cut a tool call's JSON mid-string.

    The SDK returns a final message anyway (stop_reason ``max_tokens``) whose tool input
    is jiter's best-effort partial parse of the cut text. Seed 001 says streamflow raises
    ``ToolCallArgumentParseError`` in place of the ``tool_call.done``: the error carries the
    raw cut text, and its partial message holds the finished text plus the call as a
    ``tool_call.delta`` item with those cut arguments, from which a best-effort parse
    recovers exactly what the SDK shows.
    """
    relative = "anthropic/sdk_incomplete_partial_json.sse"
    body = real_body(relative)
    sdk = sdk_final(body)
    with pytest.raises(ToolCallArgumentParseError) as info:
        assemble(body)
    err = info.value
    assert sdk.stop_reason == "max_tokens" and [b.type for b in sdk.content] == ["text", "tool_use"]
    partial = err.partial
    assert partial is not None and not partial.complete
    assert partial.text == sdk.content[0].text
    call = partial.items[-1]
    assert isinstance(call, ToolCallItem) and call.type == "tool_call.delta"
    assert (call.name, call.tool_call_id) == (sdk.content[1].name, sdk.content[1].id)
    assert call.arguments == err.arguments and err.arguments.endswith('"Filing taxes')
    assert from_json(err.arguments, allow_partial=True) == sdk.content[1].input
    assert partial.tool_calls == []
    usage = partial.usage_metadata  # every count reported before the cut, marked not final
    assert usage is not None and usage.final is False
    assert (usage.prompt_tokens, usage.response_tokens) == (sdk.usage.input_tokens,
                                                           sdk.usage.output_tokens)


def test_every_real_recording_is_covered() -> None:
    names = {p.name for p in real_path("anthropic").iterdir()}
    assert names == {*REAL, "sdk_incomplete_partial_json.sse"}
