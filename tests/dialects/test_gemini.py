"""The gemini dialect: authored fixtures, real recordings, streamed arguments, hostile input.

Fixtures in tests/data/gemini/ were written for these tests: data-only SSE with
CRLF line ends, as ``streamGenerateContent?alt=sse`` sends it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import framing_for, real_body

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
from streamflow.core.message import Assembler, Message
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import detect_dialect, get_dialect
from streamflow.wire.dialects.gemini._args import ArgsWriter, parse_json_path
from streamflow.wire.dialects.gemini.decode import GeminiDecoder
from streamflow.wire.dialects.gemini.wire import ErrorResponse, GenerateContentResponse, parse_event
from streamflow.wire.framing import ServerSentEvent, SSEParser

DATA = Path(__file__).resolve().parent.parent / "data" / "gemini"


def body(name: str) -> bytes:
    return (DATA / name).read_bytes()


def decode(data: bytes, pieces: list[bytes] | None = None, framing: str | None = None,
           **options: Any) -> list[UniEvent]:
    dec = StreamDecoder("gemini", framing=framing, clock=lambda: 0, **options)
    events: list[UniEvent] = []
    for piece in pieces if pieces is not None else [data]:
        events += dec.feed(piece)
    return events + dec.close()


def assembled(events: list[UniEvent]) -> Message:
    """Feed events through a fresh Assembler: it enforces the UniEvent grammar."""
    asm = Assembler()
    for event in events:
        assert event.event_type == "stop" or len(event.content_items) == 1
        asm.feed(event)
    return asm.message


def failure(data: bytes, kind: type[Exception], **options: Any) -> Any:
    with pytest.raises(kind) as info:
        decode(data, **options)
    return info.value


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events).encode()


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "responseId": "rid", "modelVersion": "m", **extra}


def payloads(data: bytes) -> list[dict[str, Any]]:
    parser = SSEParser()
    return [json.loads(f.data) for f in parser.feed(data) + parser.close()]


# -- authored fixtures ----------------------------------------------------------
def test_thinking_signatures_and_parallel_calls_without_ids() -> None:
    events = decode(body("thinking_parallel_calls.sse"))
    msg = assembled(events)
    first = dict(events[0].provider or {})
    assert first.pop("usage_so_far")["prompt_tokens"] == 40  # the first chunk's count
    assert first == {"id": "resp-G1", "model": "gemini-2.5-flash"}
    thought, text, call1, call2 = msg.items
    assert thought.thinking == "**Weighing the request**\nTwo cities, so two calls."
    assert thought.fidelity == {"thought_signature": "c2lnLXRoaW5raW5n"}
    assert text.text == "Let me check both." and text.fidelity is None
    assert (call1.name, call1.arguments) == ("get_weather", {"city": "Paris"})
    assert call1.fidelity == {"thought_signature": "c2lnLWNhbGwtMQ=="}
    assert call2.arguments == {"city": "Tokyo", "unit": "c"} and call2.fidelity is None
    # made-up ids are stable (same body, same ids), distinct, and flagged
    assert (call1.tool_call_id, call2.tool_call_id) == ("call_resp-G1_0_0", "call_resp-G1_0_1")
    assert call1.provider == {"synthetic_id": True}
    assert msg.finish_reason == "tool_call"
    usage = msg.usage_metadata
    assert (usage.prompt_tokens, usage.cached_tokens, usage.thoughts_tokens,
            usage.response_tokens) == (40, 16, 50, 80)
    assert usage.provider["totalTokenCount"] == 120


def test_signature_is_never_thinking_text() -> None:
    events = decode(body("thinking_parallel_calls.sse"))
    thinking = [e.item for e in events if e.item is not None and e.item.kind == "thinking"]
    assert "".join(i.thinking for i in thinking if i.type == "thinking.delta") == \
        "**Weighing the request**\nTwo cities, so two calls."
    assert [i.fidelity is not None for i in thinking] == [False, True, True]


def test_streamed_partial_args_become_json_text_fragments() -> None:
    events = decode(body("streamed_args.sse"))
    fragments = [e.item for e in events if e.item is not None and e.item.type == "tool_call.delta"]
    assert fragments[0].name == "create_event" and fragments[0].tool_call_id == "fc-7"
    assert fragments[0].fidelity == {"thought_signature": "c2lnLXN0cmVhbQ=="}
    assert all(f.name == "" and f.tool_call_id == "" for f in fragments[1:])
    text = "".join(str(f.arguments) for f in fragments)
    expected = {"title": 'Team "sync"', "when": {"day": "Mon", "hour": 9},
                "attendees": ["ann", "bob"], "remote": True, "room": None}
    assert json.loads(text) == expected
    msg = assembled(events)
    (call,) = msg.tool_calls
    assert call.arguments == expected and call.provider is None
    assert msg.finish_reason == "tool_call"


def test_usage_after_the_finish_reason_is_read_and_max_tokens_is_length() -> None:
    events = decode(body("max_tokens_usage_after.sse"))
    msg = assembled(events)
    assert msg.text == "Once upon a time" and msg.finish_reason == "length"
    assert msg.usage_metadata.prompt_tokens == 5 and msg.usage_metadata.response_tokens == 4
    assert events[-1].provider["finish_reason"] == "MAX_TOKENS"


def test_safety_finish_is_unknown_with_the_raw_reason_and_ratings_kept() -> None:
    msg = assembled(decode(body("safety.sse")))
    assert msg.text == "Step one is" and msg.finish_reason == "unknown"
    assert msg.provider["finish_reason"] == "SAFETY"
    assert msg.provider["candidate"]["finishMessage"] == "Blocked for safety."
    assert msg.provider["candidate"]["safetyRatings"][0]["probability"] == "HIGH"


def test_in_band_error_is_a_provider_error_keeping_the_text() -> None:
    err = failure(body("error_mid_stream.sse"), ProviderError)
    assert (err.code, err.type) == (503, "UNAVAILABLE") and err.retryable
    assert err.partial.text == "Partial" and not err.partial.complete


def test_blocked_prompt_is_a_provider_error_not_a_cut_stream() -> None:
    err = failure(body("prompt_blocked.sse"), ProviderError)
    assert (err.code, err.type) == ("PROHIBITED_CONTENT", "prompt_blocked")
    assert not err.retryable and err.partial.id == "resp-G6"


def test_other_candidates_follow_candidate_zero_tagged() -> None:
    events = decode(body("two_candidates.sse"))
    texts = [(e.item.type, e.item.text, e.item.provider) for e in events if e.item is not None]
    assert texts == [("text.delta", "Red", None), ("text.delta", " apples.", None),
                     ("text.done", "Red apples.", None),
                     ("text.delta", "Blue", {"candidate_index": 1}),
                     ("text.delta", " skies.", None),
                     ("text.done", "Blue skies.", {"candidate_index": 1})]
    assert events[-1].provider["candidates"] == [{"index": 1, "finish_reason": "STOP"}]


def test_inline_data_code_parts_citations_and_a_lone_signature() -> None:
    msg = assembled(decode(body("parts_mix.sse")))
    text, image, audio, last = msg.items
    assert text.text == "Here is a plot"
    assert text.provider == {"citations": [{"startIndex": 0, "endIndex": 9,
                                            "uri": "https://example.org/doc"}]}
    assert (image.data, image.mime_type) == (b"\x89PNG\r\n\x1a\n-tiny-", "image/png")
    assert (audio.data, audio.mime_type) == (b"\x00\x01\x02\x03\x04\x05", "audio/L16;rate=24000")
    assert last.text == "Done." and last.fidelity == {"thought_signature": "c2lnLWFsb25l"}
    code, result = msg.provider["extra_parts"]
    assert code["part"]["executableCode"]["code"] == "print(1+1)" and code["item_index"] == 2
    assert result["part"]["codeExecutionResult"]["output"] == "2\n"


def test_no_finish_reason_is_an_incomplete_stream() -> None:
    data = body("thinking_parallel_calls.sse")
    cut = data[: data.rindex(b"data: ")]
    dec = StreamDecoder("gemini", clock=lambda: 0)
    events = dec.feed(cut)
    with pytest.raises(IncompleteStreamError) as info:
        dec.close()
    assert all(e.event_type == "delta" for e in events)
    partial = info.value.partial
    assert partial.thinking.startswith("**Weighing") and partial.text == "Let me check both."
    assert not partial.complete


def test_streamed_call_cut_by_the_finish_raises_in_place_of_its_done() -> None:
    data = sse(chunk({"functionCall": {"name": "f", "id": "c", "willContinue": True,
                                       "partialArgs": [{"jsonPath": "$.a", "stringValue": "x",
                                                        "willContinue": True}]}}),
               chunk(finish="MAX_TOKENS"))
    err = failure(data, ToolCallArgumentParseError)
    assert err.tool_call_id == "c" and err.partial.items[-1].arguments == '{"a":"x'


def test_parts_arriving_while_a_call_streams_are_held_until_it_ends() -> None:
    data = sse(chunk({"functionCall": {"name": "f", "willContinue": True}}),
               chunk({"text": "between"}),
               chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.n", "numberValue": 1}]}}),
               chunk({"text": " and after"}, finish="STOP"))
    msg = assembled(decode(data))
    assert [i.type for i in msg.items] == ["tool_call.done", "text.done"]
    assert msg.tool_calls[0].arguments == {"n": 1} and msg.text == "between and after"


def test_continuation_chunks_repeating_the_name_are_one_call_other_values_kept() -> None:
    data = sse(chunk({"functionCall": {"name": "f", "id": "c1", "willContinue": True}}),
               chunk({"functionCall": {"name": "f", "id": "c2", "willContinue": True,
                                       "partialArgs": [{"jsonPath": "$.a", "boolValue": False}]},
                      "thoughtSignature": "s1"}),
               chunk({"functionCall": {}, "thoughtSignature": "s2"}, finish="STOP"))
    (call,) = assembled(decode(data)).tool_calls
    assert (call.name, call.tool_call_id, call.arguments) == ("f", "c1", {"a": False})
    assert call.fidelity == {"thought_signature": "s1"}
    assert call.provider == {"id": "c2", "thought_signatures": ["s2"]}


def test_a_second_signature_starts_a_new_group() -> None:
    data = sse(chunk({"text": "a", "thoughtSignature": "s1"}, {"text": "b"},
                     {"text": "c", "thoughtSignature": "s2"}, finish="STOP"))
    msg = assembled(decode(data))
    assert [(i.text, i.fidelity) for i in msg.items] == [
        ("ab", {"thought_signature": "s1"}), ("c", {"thought_signature": "s2"})]


def test_images_are_one_item_each_audio_chunks_join() -> None:
    png = {"inlineData": {"mimeType": "image/png", "data": "AAE="}}
    wav = {"inlineData": {"mimeType": "audio/wav", "data": "AA=="}}
    msg = assembled(decode(sse(chunk(png, png, wav, wav, finish="STOP"))))
    assert [(i.mime_type, i.data) for i in msg.items] == [
        ("image/png", b"\x00\x01"), ("image/png", b"\x00\x01"), ("audio/wav", b"\x00\x00")]


def test_held_candidates_count_against_the_message_limit() -> None:
    big = {"candidates": [{"index": 1, "content": {"parts": [{"text": "x" * 50}]}}]}
    err = failure(sse(big), LimitExceededError, limits=Limits(max_message_bytes=40))
    assert err.limit == "max_message_bytes"


@pytest.mark.parametrize("bad", [
    '{"candidates": [{"content": {"parts": [{"text": 5}]}}]}',
    '{"candidates": {"0": {}}}',
    '{"candidates": [{"content": {"parts": [{"functionCall": []}]}}]}',
    '{"candidates": [{"content": {"parts": [{"inlineData": {"mimeType": "a/b", "data": "@@"}}]}}]}',
    '{"usageMetadata": {"promptTokenCount": "9"}}',
    '{"candidates": [{"content": {"parts": [{"thoughtSignature": 7}]}}]}',
    '[1]',
    'nope',
])
def test_hostile_events_are_protocol_errors(bad: str) -> None:
    head = sse(chunk({"text": "kept"}))
    err = failure(head + f"data: {bad}\r\n\r\n".encode(), ProtocolError)
    assert err.partial.text == "kept"


def test_partial_args_out_of_document_order_are_protocol_errors() -> None:
    writer = ArgsWriter()
    writer.feed({"jsonPath": "$.a.x", "numberValue": 1})
    writer.feed({"jsonPath": "$.b", "numberValue": 2})
    with pytest.raises(ProtocolError):
        writer.feed({"jsonPath": "$.a.y", "numberValue": 3})
    with pytest.raises(ProtocolError):
        ArgsWriter().feed({"jsonPath": "$.list[1]", "stringValue": "skipped index 0"})
    with pytest.raises(ProtocolError):
        parse_json_path("a.b")
    assert parse_json_path("$.a['b c'][2].d") == ("a", "b c", 2, "d")


# -- real recordings --------------------------------------------------------------
def test_real_text_stream_with_crlf() -> None:
    rel = "gemini/pyd_google_model_stream.sse"
    msg = assembled(decode(real_body(rel), framing=framing_for(rel)))
    assert msg.text == "The capital of France is Paris.\n"
    assert (msg.id, msg.model) == ("w1peaMz6INOvnvgPgYfPiQY", "gemini-2.0-flash-exp")
    # cumulative usage: the last one counts (the first chunks said 15 prompt tokens)
    assert msg.usage_metadata.prompt_tokens == 13 and msg.usage_metadata.response_tokens == 8
    assert msg.finish_reason == "stop"


def test_real_reasoning_stream_signature_on_an_empty_text_part() -> None:
    rel = "gemini/vercel_google_reasoning.jsonl"
    msg = assembled(decode(real_body(rel), framing=framing_for(rel)))
    (text,) = msg.items
    assert text.text.startswith('There are **3** "r"s in strawberry.')
    assert text.fidelity["thought_signature"].startswith("Eo0HCooHAb4")
    assert msg.thinking == ""
    assert (msg.usage_metadata.thoughts_tokens, msg.usage_metadata.response_tokens) == (256, 285)


def test_real_recordings_are_detected_automatically() -> None:
    for rel in ("gemini/pyd_google_model_stream.sse", "gemini/vercel_google_reasoning.jsonl"):
        dec = StreamDecoder("auto", framing=framing_for(rel))
        dec.feed(real_body(rel))
        dec.close()
        assert dec.dialect == "gemini"


# -- sniffing and wire models ------------------------------------------------------
def test_sniff_claims_gemini_chunks_only() -> None:
    ours = [ServerSentEvent('{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}'),
            ServerSentEvent('{"promptFeedback":{"blockReason":"SAFETY"}}'),
            ServerSentEvent('{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}')]
    others = [ServerSentEvent('{"type":"message_start","message":{}}', "message_start"),
              ServerSentEvent('{"id":"c","object":"chat.completion.chunk","choices":[]}'),
              ServerSentEvent('{"error":{"message":"m","type":"invalid_request_error"}}'),
              ServerSentEvent('{"type":"response.created","response":{}}'),
              ServerSentEvent('{"model":"llama3","message":{"content":"x"},"done":false}'),
              ServerSentEvent("[DONE]")]
    assert all(GeminiDecoder.sniff(f) for f in ours)
    assert not any(GeminiDecoder.sniff(f) for f in others)
    assert [detect_dialect(f, "sse") for f in ours] == ["gemini"] * 3
    for name in ("anthropic", "openai-chat", "openai-responses"):
        assert not any(get_dialect(name).sniff(f) for f in ours)


def test_wire_models_validate_every_fixture_payload() -> None:
    for path in sorted(DATA.iterdir()):
        for ev in payloads(path.read_bytes()):
            model = parse_event(json.dumps(ev))
            assert isinstance(model, ErrorResponse if "error" in ev else GenerateContentResponse)
    model = parse_event(body("streamed_args.sse").split(b"\r\n")[0][6:])
    assert isinstance(model, GenerateContentResponse)
    part = model.candidates[0].content.parts[0]  # type: ignore[index, union-attr]
    assert part.function_call.will_continue and part.thought_signature == "c2lnLXN0cmVhbQ=="


# -- properties ------------------------------------------------------------------
COMPLETE = ["thinking_parallel_calls.sse", "streamed_args.sse", "max_tokens_usage_after.sse",
            "two_candidates.sse", "parts_mix.sse", "safety.sse"]


def outcome(data: bytes, pieces: list[bytes] | None = None) -> Any:
    try:
        return [e.to_dict() for e in decode(data, pieces)]
    except StreamflowError as exc:
        return (type(exc).__name__, exc.message, exc.partial.to_dict() if exc.partial else None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from([*COMPLETE, "error_mid_stream.sse"]))
def test_any_chunking_gives_the_same_events(data: st.DataObject, name: str) -> None:
    whole = body(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=12)))
    pieces = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    assert outcome(whole, pieces) == outcome(whole)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_partial_args_split_anywhere_give_the_same_arguments(data: st.DataObject) -> None:
    value = data.draw(st.text(max_size=20))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(value)), max_size=4)))
    chunks = [value[a:b] for a, b in zip([0, *cuts], [*cuts, len(value)], strict=True)]
    partial = [{"jsonPath": "$.s", "stringValue": c, "willContinue": True} for c in chunks]
    partial.append({"jsonPath": "$.n[0]", "numberValue": 1.5})
    msg = assembled(decode(sse(
        chunk({"functionCall": {"name": "f", "willContinue": True, "partialArgs": partial}}),
        chunk({"functionCall": {}}, finish="STOP"))))
    assert msg.tool_calls[0].arguments == {"s": value, "n": [1.5]}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


def _mutate(data: st.DataObject, node: Any) -> None:
    """Replace, delete or retype one value somewhere inside ``node``."""
    while True:
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and data.draw(st.booleans()):
            node = child
            continue
        action = data.draw(st.sampled_from(["replace", "delete"]))
        if action == "delete" and isinstance(node, dict):
            del node[key]
        else:
            node[key] = data.draw(JSON)
        return


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(COMPLETE))
def test_hostile_json_gives_only_streamflow_errors(data: st.DataObject, name: str) -> None:
    events = payloads(body(name))
    _mutate(data, events[data.draw(st.integers(0, len(events) - 1))])
    try:
        result = decode(sse(*events))
    except StreamflowError as exc:
        assert exc.partial is not None
    else:
        assert assembled(result).complete  # what decodes still follows the grammar
