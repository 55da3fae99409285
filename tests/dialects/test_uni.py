"""UniEvent on the wire: streamflow -> bytes -> streamflow gives the very same events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA

from streamflow import StreamDecoder, assemble
from streamflow.core.errors import (
    HTTPStatusError,
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    StreamTimeoutError,
    ToolCallArgumentParseError,
)
from streamflow.core.events import EmbeddingItem, InlineDataItem, UniEvent, Usage
from streamflow.core.limits import Limits
from streamflow.wire.dialects.uni.decode import encode_jsonl, encode_sse, error_from_dict

UNI = DATA / "uni"


# -- a generator of Anthropic Messages streams ------------------------------------
def sse(ev: dict[str, Any]) -> bytes:
    return f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode()


fragments = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4)
blocks = st.one_of(
    st.tuples(st.just("text"), fragments),
    st.tuples(st.just("thinking"), fragments, st.text(min_size=1, max_size=20)),
    st.tuples(st.just("tool_use"), st.dictionaries(
        st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=5), max_size=3),
        st.integers(1, 5)),
    st.tuples(st.just("redacted_thinking"), st.text(min_size=1, max_size=30)),
)


@st.composite
def anthropic_streams(draw: st.DrawFn) -> bytes:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_" + draw(st.text("abc123", min_size=1, max_size=6)), "type": "message",
        "role": "assistant", "model": "claude-x", "content": [],
        "usage": {"input_tokens": draw(st.integers(0, 999)), "output_tokens": 1}}}]
    for index, block in enumerate(draw(st.lists(blocks, max_size=5))):
        kind = block[0]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in block[1]]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": t} for t in block[1]]
            deltas.append({"type": "signature_delta", "signature": block[2]})
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
            text = json.dumps(block[1])
            step = max(1, len(text) // block[2])
            deltas = [{"type": "input_json_delta", "partial_json": text[i:i + step]}
                      for i in range(0, len(text), step)]
        else:
            start = {"type": "redacted_thinking", "data": block[1]}
            deltas = []
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": draw(st.sampled_from(
        ["end_turn", "tool_use", "max_tokens", "refusal"])), "stop_sequence": None},
        "usage": {"output_tokens": draw(st.integers(0, 999))}})
    events.append({"type": "message_stop"})
    return b"".join(sse(e) for e in events)


def decode(body: bytes, dialect: str = "auto", **kw: Any) -> list[UniEvent]:
    dec = StreamDecoder(dialect, **kw)
    return dec.feed(body) + dec.close()


@settings(max_examples=80, deadline=None)
@given(anthropic_streams(), st.integers(1, 50))
def test_any_anthropic_stream_round_trips_unchanged(body: bytes, step: int) -> None:
    ticks = iter(range(10**9))
    source = StreamDecoder("anthropic", clock=lambda: next(ticks))
    original = source.feed(body) + source.close()
    as_sse = b"".join(encode_sse(ev) for ev in original)
    as_jsonl = b"".join(encode_jsonl(ev) for ev in original)
    for wire, dialect in ((as_sse, "uni"), (as_jsonl, "uni-jsonl"), (as_sse, "auto"),
                          (as_jsonl, "auto")):
        dec = StreamDecoder(dialect)
        got = [ev for i in range(0, len(wire), step) for ev in dec.feed(wire[i:i + step])]
        assert got + dec.close() == original
        assert dec.dialect in ("uni", "uni-jsonl")
        assert dec.message == source.message


def test_recorded_jsonl_decodes_to_the_recorded_message() -> None:
    dec = StreamDecoder("auto")
    events = dec.feed((UNI / "thinking_tools.jsonl").read_bytes()) + dec.close()
    assert dec.dialect == "uni"  # JSON lines are data-only events: the SSE decoder reads them
    message = dec.message
    assert message.thinking == "Two lookups, in parallel."
    assert message.items[0].fidelity == {"signature": "ErUBCkYIBxgCsig"}
    assert [c.arguments for c in message.tool_calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert message.finish_reason == "tool_call"
    assert message.id == "msg_bdrk_01XyZ"
    assert events[0].created_at == 1760000000021  # timestamps of the recording, kept
    assert message.usage_metadata is not None and message.usage_metadata.response_tokens == 96


def test_recorded_error_decodes_to_the_same_typed_error_with_the_partial() -> None:
    with pytest.raises(ProviderError) as info:
        assemble((UNI / "overloaded.sse").read_bytes())
    err = info.value
    assert (err.message, err.code, err.type, err.request_id) == (
        "Overloaded", 529, "overloaded_error", "req_011")
    assert err.retryable
    assert err.partial is not None and err.partial.text == "Let me check."
    assert err.partial.thinking == "Two lookups, in parallel."


@pytest.mark.parametrize("error", [
    HTTPStatusError("HTTP 429: slow down", status=429, type="rate_limit_error"),
    LimitExceededError("max_groups", 10),
    StreamTimeoutError("idle", 30.0),
    ToolCallArgumentParseError("bad args", tool_call_id="t1", name="f"),
    IncompleteStreamError("cut"),
])
def test_errors_round_trip(error: StreamflowError) -> None:
    back = error_from_dict(json.loads(encode_jsonl(error))["error"])
    assert type(back) is type(error)
    assert back.to_dict() == error.to_dict()


def test_inline_data_and_embeddings_round_trip() -> None:
    events = [
        UniEvent("delta", [InlineDataItem("inline_data.delta", b"\x00\xff", "audio/wav")]),
        UniEvent("delta", [InlineDataItem("inline_data.done", b"\x00\xff", "audio/wav")]),
        UniEvent("delta", [EmbeddingItem("embedding.delta", [0.1, -2.5e-8])]),
        UniEvent("delta", [EmbeddingItem("embedding.done", [0.1, -2.5e-8])]),
        UniEvent("stop", [], Usage(prompt_tokens=3, cost=0.5), "stop"),
    ]
    assert decode(b"".join(encode_sse(e) for e in events), "uni") == events


def line(event_type: str, *items: dict[str, Any], **extra: Any) -> bytes:
    body = {"event_type": event_type, "content_items": list(items), **extra}
    return json.dumps(body).encode() + b"\n"


TEXT_D = {"type": "text.delta", "text": "a"}
TEXT_DONE = {"type": "text.done", "text": "a"}
STOP = {"usage_metadata": {}, "finish_reason": "stop"}


@pytest.mark.parametrize("body", [
    line("delta", TEXT_D, TEXT_D),                                         # two items
    line("delta"),                                                         # no item
    line("delta", TEXT_DONE),                                              # done without deltas
    line("delta", TEXT_D) + line("delta", {"type": "thinking.delta", "thinking": "x"}),
    line("delta", TEXT_D) + line("delta", {"type": "text.done", "text": "b"}),  # wrong done
    line("delta", TEXT_D) + line("stop", **STOP),                          # stop inside a group
    line("stop", usage_metadata={}, finish_reason="done"),                 # bad finish reason
    line("stop", finish_reason="stop"),                                    # no usage
    line("delta", {"type": "text.partial", "text": "a"}),                  # unknown item type
    line("delta", {"type": "text.delta", "text": 5}),                      # wrong field type
    line("delta", {"type": "tool_call.delta", "arguments": {"a": 1}}),     # args not text
    line("delta", {"type": "rainbow.delta"}),
    line("sideways"),
    b'{"event_type": "delta", "content_items": {}}\n',
    b"[]\n",
])
def test_grammar_violations_are_protocol_errors(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        assemble(body, "uni-jsonl")


def test_cut_stream_is_incomplete() -> None:
    lines = (UNI / "thinking_tools.jsonl").read_bytes().splitlines(keepends=True)
    with pytest.raises(IncompleteStreamError) as info:
        assemble(b"".join(lines[:-1]), "uni-jsonl")
    assert info.value.partial is not None and len(info.value.partial.tool_calls) == 2


def test_limits_apply_to_decoded_streams() -> None:
    body = (UNI / "thinking_tools.jsonl").read_bytes()
    with pytest.raises(LimitExceededError, match="max_groups"):
        assemble(body, "uni-jsonl", limits=Limits(max_groups=2))
    with pytest.raises(LimitExceededError, match="max_tool_arguments_bytes"):
        assemble(body, "uni-jsonl", limits=Limits(max_tool_arguments_bytes=10))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "event_type": st.sampled_from(["delta", "stop", "x"]),
    "content_items": st.lists(st.dictionaries(
        st.sampled_from(["type", "text", "arguments", "data", "embedding", "name"]),
        st.sampled_from(["text.delta", "text.done", "tool_call.done", "inline_data.delta",
                         "embedding.done", "", "aGk="]) | st.integers() | st.none()
        | st.lists(st.integers(), max_size=2), max_size=3), max_size=2),
    "usage_metadata": st.none() | st.just({}),
    "finish_reason": st.sampled_from([None, "stop", "bogus"])}), max_size=5))
def test_fuzzed_events_raise_only_streamflow_errors(objs: list) -> None:
    try:
        assemble(b"".join(json.dumps(o).encode() + b"\n" for o in objs), "uni-jsonl")
    except StreamflowError:
        pass
