"""The openai-chat dialect: seed-004 example streams, authored fixtures, hostile input.

Seed examples are asserted event by event (clock fixed at 0); the fixtures in
tests/data/openai_chat/ (written for these tests) are asserted on the events that
matter and on the assembled message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamflow.core.errors import (
    IncompleteStreamError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    StreamflowError,
    ToolCallArgumentParseError,
)
from streamflow.core.events import UniEvent
from streamflow.core.limits import Limits
from streamflow.core.message import Message
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import detect_dialect
from streamflow.wire.dialects.openai_chat.decode import OpenAIChatDecoder
from streamflow.wire.dialects.openai_chat.wire import ChatCompletionChunk, DoneMarker, parse_event
from streamflow.wire.framing import ServerSentEvent

DATA = Path(__file__).resolve().parent.parent / "data" / "openai_chat"
GEN = "6f1c2b8e-3d4a-4f5b-9c7d-2e8a1b0c9d3f"
MODEL = "openai/gpt-6-luna"
HEAD = {"id": GEN, "model": MODEL}


# -- helpers ------------------------------------------------------------------
def chunk(*choices: dict[str, Any], created: int = 1790000000, **extra: Any) -> dict[str, Any]:
    """A seed-004 style chunk of generation GEN."""
    return {"id": GEN, "object": "chat.completion.chunk", "created": created, "model": MODEL,
            "choices": list(choices), **extra}


def choice(delta: dict[str, Any], finish: str | None = None, index: int = 0,
           **extra: Any) -> dict[str, Any]:
    return {"index": index, "delta": delta, "finish_reason": finish, **extra}


def sse(*payloads: dict[str, Any] | str) -> bytes:
    """An SSE body: one ``data:`` event per payload (dicts as compact JSON)."""
    out = []
    for p in payloads:
        text = p if isinstance(p, str) else json.dumps(p, separators=(",", ":"))
        out.append(f"data: {text}\n\n")
    return "".join(out).encode()


def decode(body: bytes, pieces: list[bytes] | None = None, **options: Any) -> list[UniEvent]:
    """All events of a body (fed whole or in ``pieces``); clock fixed at 0."""
    dec = StreamDecoder("openai-chat", clock=lambda: 0, **options)
    events: list[UniEvent] = []
    for piece in pieces if pieces is not None else [body]:
        events += dec.feed(piece)
    return events + dec.close()


def dicts(events: list[UniEvent]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


def message(body: bytes, **options: Any) -> Message:
    dec = StreamDecoder("openai-chat", clock=lambda: 0, **options)
    dec.feed(body)
    dec.close()
    return dec.message


def failure(body: bytes, kind: type[Exception] = Exception, **options: Any) -> Any:
    """The typed error a body raises (with its partial message)."""
    with pytest.raises(kind) as info:
        decode(body, **options)
    return info.value


def delta(item: dict[str, Any], provider: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"role": "assistant", "event_type": "delta", "content_items": [item],
            "usage_metadata": None, "finish_reason": None, "created_at": 0, "provider": provider}


def stop(usage: dict[str, Any], finish: str, provider: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "event_type": "stop", "content_items": [],
            "usage_metadata": usage, "finish_reason": finish, "created_at": 0,
            "provider": provider}


def text(value: str, done: bool = False, provider: Any = None) -> dict[str, Any]:
    return {"type": "text.done" if done else "text.delta", "text": value, "fidelity": None,
            "provider": provider}


def thinking(value: str, done: bool = False, fidelity: Any = None) -> dict[str, Any]:
    return {"type": "thinking.done" if done else "thinking.delta", "thinking": value,
            "fidelity": fidelity, "provider": None}


def call(name: str, call_id: str, arguments: Any, done: bool = False,
         provider: Any = None) -> dict[str, Any]:
    return {"type": "tool_call.done" if done else "tool_call.delta", "name": name,
            "tool_call_id": call_id, "arguments": arguments, "fidelity": None,
            "provider": provider}


NO_USAGE = {"cached_tokens": None, "prompt_tokens": None, "thoughts_tokens": None,
            "response_tokens": None}
META = {"id": GEN, "created": 1790000000, "model": MODEL}


# -- seed 004: every example stream -------------------------------------------
SEED_TEXT = [
    chunk(choice({"role": "assistant", "content": "Server-Sent"})),
    chunk(choice({"content": " Events keep one HTTP response open"})),
    chunk(choice({}, "stop")),
    chunk(usage={"prompt_tokens": 16, "completion_tokens": 38, "total_tokens": 54,
                 "cost": 0.000017, "cost_details": {"upstream_inference_cost": 0.000017}}),
]


def test_seed_text_stream_finish_usage_chunk_with_cost_and_done() -> None:
    events = decode(sse(*SEED_TEXT, "[DONE]"))
    whole = "Server-Sent Events keep one HTTP response open"
    raw_usage = SEED_TEXT[3]["usage"]
    assert dicts(events) == [
        delta(text("Server-Sent"), HEAD),
        delta(text(" Events keep one HTTP response open")),
        delta(text(whole, done=True)),
        stop({"cached_tokens": None, "prompt_tokens": 16, "thoughts_tokens": None,
              "response_tokens": 38, "cost": 0.000017, "provider": raw_usage},
             "stop", {**META, "finish_reason": "stop"}),
    ]


def test_seed_stop_waits_for_done_because_usage_follows_the_finish_chunk() -> None:
    dec = StreamDecoder("openai-chat", clock=lambda: 0)
    before = dec.feed(sse(*SEED_TEXT))
    assert [e.event_type for e in before] == ["delta"] * 3  # text.done at the finish chunk
    assert not dec.partial.complete
    after = dec.feed(b"data: [DONE]\n\n")
    assert [e.event_type for e in after] == ["stop"]
    assert after[0].usage_metadata is not None and after[0].usage_metadata.cost == 0.000017
    dec.close()


SEED_REASONING = chunk(choice({"role": "assistant", "reasoning": "The user wants brevity.",
                               "reasoning_details": [{"type": "reasoning.text",
                                                      "text": "The user wants brevity."}]}))


def test_seed_reasoning_is_read_once_and_details_kept_for_the_next_turn() -> None:
    events = decode(sse(SEED_REASONING, "[DONE]"))
    details = {"reasoning_details": [{"type": "reasoning.text",
                                      "text": "The user wants brevity."}]}
    assert dicts(events) == [
        delta(thinking("The user wants brevity."), HEAD),
        delta(thinking("", fidelity=details)),
        delta(thinking("The user wants brevity.", done=True, fidelity=details)),
        stop(NO_USAGE, "unknown", {**META, "finish_reason": None}),
    ]


SEED_TOOL = [
    chunk(choice({"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_7f3a9c", "type": "function",
         "function": {"name": "get_weather"}}]})),
    chunk(choice({"tool_calls": [
        {"index": 0, "function": {"arguments": "{\"city\":\"Lisbon\"}"}}]})),
    chunk(choice({}, "tool_calls")),
]


def test_seed_tool_call_stream() -> None:
    events = decode(sse(*SEED_TOOL, "[DONE]"))
    assert dicts(events) == [
        delta(call("get_weather", "call_7f3a9c", ""), HEAD),
        delta(call("", "", "{\"city\":\"Lisbon\"}")),
        delta(call("get_weather", "call_7f3a9c", {"city": "Lisbon"}, done=True)),
        stop(NO_USAGE, "tool_call", {**META, "finish_reason": "tool_calls"}),
    ]


SEED_ERROR = chunk(choice({"content": ""}, "error"), created=1790000004,
                   error={"code": 503, "message": "provider became unavailable",
                          "metadata": {"error_type": "provider_unavailable"}})


def test_seed_error_after_streaming_started() -> None:
    err = failure(sse(SEED_ERROR, "[DONE]"), ProviderError)
    assert (err.code, err.type, err.message) == (503, "provider_unavailable",
                                                  "provider became unavailable")
    assert err.request_id == GEN and err.retryable
    assert err.body["error"] == SEED_ERROR["error"]
    assert err.partial is not None and not err.partial.complete and err.partial.items == []


def test_seed_error_keeps_the_text_already_streamed() -> None:
    err = failure(sse(*SEED_TEXT[:2], SEED_ERROR, "[DONE]"), ProviderError)
    assert err.partial.text == "Server-Sent Events keep one HTTP response open"
    assert err.partial.items[0].type == "text.delta"  # unfinished, never mistaken for done
    assert err.partial.finish_reason is None


# -- authored fixtures ----------------------------------------------------------
def fixture(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_parallel_tool_calls_interleaved_by_index_come_out_in_call_order() -> None:
    events = decode(fixture("parallel_interleaved.sse"))
    head = {"id": "chatcmpl-sf1", "model": "test-model"}
    assert [e["content_items"][0] for e in dicts(events)[:-1]] == [
        call("get_weather", "call_a", ""),       # the first call streams live
        call("", "", "{\"city\":"),
        call("", "", "\"Paris\"}"),
        call("get_weather", "call_a", {"city": "Paris"}, done=True),
        call("get_time", "call_b", "{\"tz\":\"UTC\"}"),  # buffered calls: one fragment each
        call("get_time", "call_b", {"tz": "UTC"}, done=True),
        call("lookup", "call_c", "{\"q\":\"x\"}"),
        call("lookup", "call_c", {"q": "x"}, done=True),
    ]
    assert events[0].provider == head
    assert events[-1].finish_reason == "tool_call"


def test_n2_choices_choice_zero_live_others_after_it_tagged() -> None:
    events = decode(fixture("n2_choices.sse"))
    one = {"choice_index": 1}
    assert [e["content_items"][0] for e in dicts(events)[:-1]] == [
        text("Hi"), text("!"), text("Hi!", done=True),
        text("Hello", provider=one), text(" there", provider=one),
        text("Hello there", done=True, provider=one),
    ]
    last = events[-1]
    assert last.finish_reason == "stop"
    assert last.provider is not None
    assert last.provider["choices"] == [{"index": 1, "finish_reason": "length"}]


def test_deepseek_reasoning_content_and_cache_hit_usage() -> None:
    msg = message(fixture("deepseek_reasoning.sse"))
    assert [i.type for i in msg.items] == ["thinking.done", "text.done"]
    assert (msg.thinking, msg.text) == ("Add the numbers.", "4")
    usage = msg.usage_metadata
    assert usage is not None
    assert (usage.prompt_tokens, usage.cached_tokens, usage.thoughts_tokens,
            usage.response_tokens) == (20, 16, 6, 9)
    assert msg.provider["system_fingerprint"] == "fp_ds"


def test_annotations_ride_on_the_text_item_and_openrouter_meta_is_kept() -> None:
    msg = message(fixture("annotations.sse"))
    [item] = msg.items
    assert item.text == "SSE is one-way."
    assert item.provider is not None
    assert item.provider["annotations"][0]["url_citation"]["url"] == "https://example.org/sse"
    assert msg.provider["provider"] == "OpenAI"
    assert msg.provider["native_finish_reason"] == "completed"
    usage = msg.usage_metadata
    assert usage is not None and (usage.cost, usage.cached_tokens) == (0.0012, 10)


def test_logprobs_per_chunk_are_merged_on_the_done_item() -> None:
    msg = message(sse(
        chunk(choice({"role": "assistant", "content": ""},
                     logprobs={"content": [], "refusal": None})),
        chunk(choice({"content": "Foo"}, logprobs={"content": [{"token": "Foo", "logprob": -1}]})),
        chunk(choice({"content": "!"}, logprobs={"content": [{"token": "!", "logprob": -2}]})),
        chunk(choice({}, "stop", logprobs=None)), "[DONE]"))
    [item] = msg.items
    assert item.provider == {"logprobs": [{"token": "Foo", "logprob": -1},
                                          {"token": "!", "logprob": -2}]}


def test_refusal_is_a_text_group_of_its_own_marked_refusal() -> None:
    msg = message(fixture("refusal.sse"))
    [item] = msg.items
    assert item.text == "I can't help."
    assert item.provider is not None and item.provider["refusal"] is True
    assert [lp["token"] for lp in item.provider["logprobs"]] == ["I can't", " help."]
    mixed = message(sse(chunk(choice({"content": "Sure. "})), chunk(choice({"refusal": "No."})),
                        chunk(choice({}, "stop")), "[DONE]"))
    assert [(i.text, (i.provider or {}).get("refusal")) for i in mixed.items] == [
        ("Sure. ", None), ("No.", True)]


def test_audio_delta_is_one_inline_data_item_with_transcript() -> None:
    events = decode(fixture("audio.sse"))
    done = events[-2].content_items[0]
    assert done.type == "inline_data.done"
    assert done.data == b"\x00\x01\x02\x03" and done.mime_type == "audio/pcm"
    assert done.fidelity == {"audio_id": "audio_1"}
    assert done.provider == {"transcript": "Hi there", "expires_at": 1790003600}
    fragments = [e.content_items[0] for e in events[:-2]]
    assert [f.data for f in fragments] == [b"", b"\x00\x01", b"\x02\x03", b"", b""]
    assert sum(f.fidelity is not None for f in fragments) == 1


def test_images_and_artifacts_are_one_inline_data_item_each() -> None:
    msg = message(fixture("images.sse"))
    kinds = [(i.type, getattr(i, "mime_type", None)) for i in msg.items]
    assert kinds == [("text.done", None), ("inline_data.done", "image/png"),
                     ("inline_data.done", ""), ("inline_data.done", "text/plain")]
    assert msg.items[1].data == b"\x89PNG\r\n\x1a\n"
    assert msg.items[2].provider is not None
    assert msg.items[2].provider["url"] == "https://cdn.example/x.webp"
    assert msg.items[3].data == b"hello"
    assert msg.items[3].provider == {"artifact": {"type": "file", "filename": "a.txt"}}


def test_encrypted_reasoning_becomes_inline_thinking_summary_goes_to_fidelity() -> None:
    msg = message(fixture("encrypted_reasoning.sse"))
    think, opaque, answer = msg.items
    assert think.type == "thinking.done" and think.thinking == "**Plan** then answer."
    assert think.fidelity == {"reasoning_details": [
        {"type": "reasoning.summary", "summary": "**Plan** then answer.", "id": "rs_1",
         "format": "openai-responses-v1", "index": 0}]}
    assert opaque.type == "inline_thinking.done" and opaque.data == b"gAAAAB-opaque=="
    sent_back = {**opaque.fidelity, "data": opaque.data.decode()}
    assert sent_back == {"type": "reasoning.encrypted", "data": "gAAAAB-opaque==", "id": "rs_1",
                         "format": "openai-responses-v1", "index": 1}
    assert answer.text == "42"


def test_signature_after_the_text_is_one_fidelity_fragment() -> None:
    fmt = "anthropic-claude-v1"
    body = sse(
        chunk(choice({"reasoning": None, "reasoning_details": [
            {"type": "reasoning.text", "text": "", "signature": "", "format": fmt, "index": 0}]})),
        chunk(choice({"reasoning": "Hm", "reasoning_details": [
            {"type": "reasoning.text", "text": "Hm", "format": fmt, "index": 0}]})),
        chunk(choice({"reasoning": None, "reasoning_details": [
            {"type": "reasoning.text", "signature": "SIG", "format": fmt, "index": 0}]})),
        chunk(choice({"content": "Yes"})), chunk(choice({}, "stop")), "[DONE]")
    events = decode(body)
    items = [e.content_items[0] for e in events[:-1]]
    assert [(i.type, getattr(i, "thinking", None)) for i in items[:3]] == [
        ("thinking.delta", "Hm"), ("thinking.delta", ""), ("thinking.done", "Hm")]
    assert sum(i.fidelity is not None for i in items[:2]) == 1
    assert items[2].fidelity == {"signature": "SIG", "reasoning_details": [
        {"type": "reasoning.text", "text": "Hm", "signature": "SIG", "format": fmt, "index": 0}]}


def test_details_without_a_reasoning_string_are_displayed_once() -> None:
    msg = message(sse(
        chunk(choice({"reasoning_details": [{"type": "reasoning.text", "text": "A", "index": 0}]})),
        chunk(choice({"reasoning_details": [{"type": "reasoning.text", "text": "B", "index": 0}]})),
        chunk(choice({}, "stop")), "[DONE]"))
    assert msg.thinking == "AB"
    assert msg.items[0].fidelity == {"reasoning_details": [
        {"type": "reasoning.text", "text": "AB", "index": 0}]}


def test_reasoning_and_reasoning_content_in_one_chunk_are_not_doubled() -> None:
    msg = message(sse(chunk(choice({"reasoning": "R", "reasoning_content": "R"})),
                      chunk(choice({}, "stop")), "[DONE]"))
    assert msg.thinking == "R"


def test_missing_done_is_incomplete_even_after_finish_and_usage() -> None:
    err = failure(fixture("no_done.sse"), IncompleteStreamError)
    assert err.partial.text == "Cut short" and not err.partial.complete
    assert err.partial.usage_metadata.prompt_tokens == 5  # nothing received is lost


def test_error_chunk_mid_stream() -> None:
    err = failure(fixture("error_mid_stream.sse"), ProviderError)
    assert (err.code, err.type) == (503, "provider_unavailable")
    assert err.partial.text == "Partial answer"


# -- finish reasons, usage, meta -------------------------------------------------
@pytest.mark.parametrize(("raw", "mapped"), [
    ("stop", "stop"), ("length", "length"), ("tool_calls", "tool_call"),
    ("function_call", "tool_call"), ("content_filter", "unknown"), ("error", "unknown")])
def test_finish_reasons(raw: str, mapped: str) -> None:
    events = decode(sse(chunk(choice({"content": "x"}, raw)), "[DONE]"))
    assert events[-1].finish_reason == mapped
    assert events[-1].provider is not None and events[-1].provider["finish_reason"] == raw


def test_stop_with_tool_calls_is_reported_as_tool_call() -> None:
    events = decode(sse(*SEED_TOOL[:2], chunk(choice({}, "stop")), "[DONE]"))
    assert events[-1].finish_reason == "tool_call"
    assert events[-1].provider is not None and events[-1].provider["finish_reason"] == "stop"


def test_only_done_gives_an_empty_complete_message() -> None:
    msg = message(b"data: [DONE]\n\n")
    assert msg.complete and msg.items == [] and msg.finish_reason == "unknown"


def test_unknown_fields_are_kept_not_dropped() -> None:
    msg = message(sse(
        chunk(choice({"content": "x", "future_field": {"a": 1}}, native_finish_reason="eos"),
              service_tier="flex", brand_new=[1]),
        chunk(choice({}, "stop")), "[DONE]"))
    assert msg.provider["service_tier"] == "flex" and msg.provider["brand_new"] == [1]
    assert msg.provider["unknown_delta_fields"] == [{"future_field": {"a": 1}}]
    assert msg.provider["native_finish_reason"] == "eos"


# -- tool-call variants ------------------------------------------------------------
def test_legacy_function_call() -> None:
    msg = message(sse(
        chunk(choice({"function_call": {"name": "f", "arguments": "{\"a\""}})),
        chunk(choice({"function_call": {"arguments": ":1}"}})),
        chunk(choice({}, "function_call")),
        chunk(choice({"function_call": {"arguments": ""}})), "[DONE]"))  # empty: ignored
    [item] = msg.tool_calls
    assert (item.name, item.arguments) == ("f", {"a": 1})
    assert item.provider == {"legacy_function_call": True}
    assert msg.finish_reason == "tool_call"


def test_calls_reusing_index_zero_with_new_ids_are_separate_calls() -> None:
    msg = message(sse(
        chunk(choice({"tool_calls": [{"index": 0, "id": "a", "function": {
            "name": "f", "arguments": "{}"}}]})),
        chunk(choice({"tool_calls": [{"index": 0, "id": "b", "function": {
            "name": "g", "arguments": "{\"x\":2}"}}]})),
        chunk(choice({}, "tool_calls")), "[DONE]"))
    assert [(c.tool_call_id, c.name, c.arguments) for c in msg.tool_calls] == [
        ("a", "f", {}), ("b", "g", {"x": 2})]


def test_extra_content_thought_signature_goes_to_fidelity() -> None:
    msg = message(sse(chunk(choice({"tool_calls": [{
        "index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""},
        "extra_content": {"google": {"thought_signature": "TS"}}}]})),
        chunk(choice({}, "tool_calls")), "[DONE]"))
    [item] = msg.tool_calls
    assert item.arguments == {}
    assert item.fidelity == {"extra_content": {"google": {"thought_signature": "TS"}}}


def test_text_after_a_complete_call_closes_the_call_first() -> None:
    msg = message(sse(*SEED_TOOL[:2], chunk(choice({"content": "done"})),
                      chunk(choice({}, "stop")), "[DONE]"))
    assert [i.type for i in msg.items] == ["tool_call.done", "text.done"]


def test_content_as_a_list_of_parts() -> None:
    msg = message(sse(
        chunk(choice({"content": [{"type": "thinking", "thinking": [
            {"type": "text", "text": "mull"}]}]})),
        chunk(choice({"content": [{"type": "text", "text": "ok"}]})),
        chunk(choice({}, "stop")), "[DONE]"))
    assert (msg.thinking, msg.text) == ("mull", "ok")


# -- hostile input -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [
    "{not json", "[1, 2]", "42",
    json.dumps({"choices": {"0": {}}}),
    json.dumps({"choices": ["x"]}),
    json.dumps({"choices": [{"index": "0", "delta": {}}]}),
    json.dumps({"choices": [{"index": 0, "delta": "text"}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"content": 5}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"reasoning": {"x": 1}}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "a"}]}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"name": "f", "arguments": 12}}]}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"reasoning_details": "x"}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"audio": {"data": "%%%"}}}]}),
    json.dumps({"choices": [{"index": 0, "delta": {"images": [{"image_url": {
        "url": "data:image/png;base64,@@"}}]}}]}),
    json.dumps({"choices": [], "usage": [1]}),
    json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": 3}]}),
])
def test_hostile_chunks_are_protocol_errors_keeping_what_came_before(bad: str) -> None:
    err = failure(sse(chunk(choice({"content": "kept"})), bad, "[DONE]"), ProtocolError)
    assert err.partial is not None and err.partial.text == "kept"


def test_non_object_arguments_raise_in_place_of_the_done() -> None:
    body = sse(chunk(choice({"tool_calls": [{"index": 0, "id": "c", "function": {
        "name": "f", "arguments": "[1, 2]"}}]})), chunk(choice({}, "tool_calls")), "[DONE]")
    err = failure(body, ToolCallArgumentParseError)
    assert (err.tool_call_id, err.name, err.arguments) == ("c", "f", "[1, 2]")
    assert [i.type for i in err.partial.items] == ["tool_call.delta"]


def test_malformed_arguments_raise_at_the_finish_chunk() -> None:
    body = sse(chunk(choice({"tool_calls": [{"index": 0, "id": "c", "function": {
        "name": "f", "arguments": "{\"a\": "}}]})), chunk(choice({}, "tool_calls")), "[DONE]")
    assert failure(body, ToolCallArgumentParseError).arguments == "{\"a\": "


def test_fragment_for_a_closed_call_is_a_protocol_error() -> None:
    body = sse(*SEED_TOOL[:2],
               chunk(choice({"tool_calls": [{"index": 1, "id": "c2", "function": {
                   "name": "g", "arguments": "{}"}}]})),
               chunk(choice({"tool_calls": [{"index": 0, "function": {"arguments": "x"}}]})))
    err = failure(body + b"data: [DONE]\n\n", ProtocolError)
    assert "closed" in err.message
    assert err.partial.tool_calls[0].arguments == {"city": "Lisbon"}


def test_frames_after_done_are_ignored_never_an_error_after_stop() -> None:
    assert message(sse(*SEED_TEXT, "[DONE]", "[DONE]")).complete
    dec = StreamDecoder("openai-chat", clock=lambda: 0)
    events = dec.feed(sse(*SEED_TEXT, "[DONE]", SEED_TEXT[0])) + dec.close()
    assert events[-1].event_type == "stop" and dec.ignored_frames == 1


def test_error_only_chunk_without_choices() -> None:
    err = failure(sse({"error": {"message": "boom", "type": "server_error", "code": "x1"}}),
                  ProviderError)
    assert (err.code, err.type, err.message) == ("x1", "server_error", "boom")
    plain = failure(sse({"error": "overloaded"}), ProviderError)
    assert plain.message == "overloaded" and plain.code is None


def test_buffered_calls_are_in_the_partial_message() -> None:
    body = sse(chunk(choice({"tool_calls": [
        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\":"}},
        {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"y\":1"}}]})))
    err = failure(body, IncompleteStreamError)
    assert [(i.type, i.name, i.arguments) for i in err.partial.items] == [
        ("tool_call.delta", "f", "{\"x\":"), ("tool_call.delta", "g", "{\"y\":1")]


def test_buffered_call_arguments_respect_the_limit() -> None:
    body = sse(chunk(choice({"tool_calls": [
        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\":"}},
        {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{\"y\":\"" + "z" * 64}}]})))
    err = failure(body, LimitExceededError, limits=Limits(max_tool_arguments_bytes=32))
    assert err.limit == "max_tool_arguments_bytes"


# -- sniffing, wire models ------------------------------------------------------------
def test_sniff_accepts_chunks_only() -> None:
    ok = [json.dumps(SEED_TEXT[0]), json.dumps({"choices": [], "prompt_filter_results": []})]
    no = ["[DONE]", "not json", "[]", json.dumps({"type": "message_start", "message": {}}),
          json.dumps({"type": "response.created", "choices": []}),
          json.dumps({"candidates": []})]
    assert all(OpenAIChatDecoder.sniff(ServerSentEvent(data=d)) for d in ok)
    assert not any(OpenAIChatDecoder.sniff(ServerSentEvent(data=d)) for d in no)
    assert detect_dialect(ServerSentEvent(data=ok[0]), "sse") == "openai-chat"
    auto = StreamDecoder("auto", clock=lambda: 0)
    auto.feed(sse(*SEED_TEXT, "[DONE]"))
    auto.close()
    assert auto.dialect == "openai-chat" and auto.message.text.startswith("Server-Sent")


def test_wire_models_parse_every_fixture_payload() -> None:
    for path in sorted(DATA.glob("*.sse")):
        for line in path.read_text().splitlines():
            if line.startswith("data: "):
                model = parse_event(line[6:])
                assert isinstance(model, (ChatCompletionChunk, DoneMarker))
    parsed = OpenAIChatDecoder.parse_wire(json.dumps(SEED_REASONING))
    assert isinstance(parsed, ChatCompletionChunk)
    detail = parsed.choices[0].delta.reasoning_details[0]  # type: ignore[union-attr,index]
    assert detail.text == "The user wants brevity."
    odd = parse_event(json.dumps({"choices": [{"delta": {"reasoning_details": [
        {"type": "reasoning.future", "blob": 1}]}}], "new": True}))
    assert odd.model_extra == {"new": True}  # type: ignore[union-attr]


# -- chunking invariance ---------------------------------------------------------------
BODIES = [sse(*SEED_TEXT, "[DONE]"), sse(SEED_REASONING, "[DONE]"), sse(*SEED_TOOL, "[DONE]")] + [
    fixture(p.name) for p in sorted(DATA.glob("*.sse"))
    if p.name not in ("no_done.sse", "error_mid_stream.sse")]


def _outcome(body: bytes, pieces: list[bytes]) -> Any:
    try:
        return [e.to_dict() for e in decode(body, pieces)]
    except Exception as exc:  # the same error, with the same partial
        return type(exc).__name__, str(exc), exc.partial.to_dict()  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.integers(0, len(BODIES) + 1))
def test_any_chunking_gives_the_same_events(data: st.DataObject, which: int) -> None:
    bodies = [*BODIES, fixture("no_done.sse"), fixture("error_mid_stream.sse")]
    body = bodies[which]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert _outcome(body, pieces) == _outcome(body, [body])



# -- fuzz: hostile JSON never escapes as a bare exception ---------------------------
KEYS = ["index", "delta", "content", "reasoning", "reasoning_content", "reasoning_details",
        "tool_calls", "function", "function_call", "arguments", "name", "id", "type", "text",
        "signature", "data", "audio", "images", "image_url", "url", "annotations", "logprobs",
        "finish_reason", "usage", "error", "choices", "refusal", "artifacts", "summary",
        "media_type", "transcript", "message", "code", "metadata", "role", "cost"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(["", "x", "{", "data:a,b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner,
                                                                max_size=4),
    max_leaves=16)


DELTA_KEYS = ["content", "refusal", "reasoning", "reasoning_content", "reasoning_details",
              "tool_calls", "function_call", "annotations", "images", "audio", "artifacts",
              "role", "novel"]
CALL = st.fixed_dictionaries({"index": st.integers(0, 2)}, optional={
    "id": st.sampled_from(["a", "b", "", None]),
    "function": st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(["f", "g", None]),
        "arguments": st.sampled_from(["", "{", "}", "{}", "\"a\":1", "[1]", None])})})
DELTA = st.dictionaries(st.sampled_from(DELTA_KEYS), JSON, max_size=4) | st.fixed_dictionaries(
    {"tool_calls": st.lists(CALL, max_size=3)})
CHUNK = st.builds(
    lambda d, f, i: {"choices": [{"index": i, "delta": d, "finish_reason": f}]},
    DELTA, st.sampled_from([None, "stop", "length", "tool_calls", "error"]), st.integers(0, 1))


@settings(max_examples=150, deadline=None)
@given(payloads=st.lists(JSON | CHUNK, min_size=1, max_size=6), done=st.booleans())
def test_hostile_json_gives_events_or_a_typed_error(payloads: list[Any], done: bool) -> None:
    body = sse(*[json.dumps(p) for p in payloads], *(["[DONE]"] if done else []))
    try:
        decode(body)
    except StreamflowError as exc:
        assert exc.partial is not None
