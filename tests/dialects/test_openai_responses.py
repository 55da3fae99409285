"""The openai-responses dialect: authored fixtures, real recordings, hostile input.

Fixtures in tests/data/openai_responses/ were written for these tests (named
``event:`` + ``data:`` SSE with ``sequence_number``, except interleaved_calls.sse,
which is data-only, without sequence numbers and partly without indices).
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
    ProtocolError,
    ProviderError,
    StreamflowError,
    ToolCallArgumentParseError,
)
from streamflow.core.events import UniEvent
from streamflow.core.message import Assembler, Message
from streamflow.wire.decoder import StreamDecoder
from streamflow.wire.dialects import detect_dialect, get_dialect
from streamflow.wire.dialects.openai_responses.decode import OpenAIResponsesDecoder
from streamflow.wire.dialects.openai_responses.wire import (
    DeltaEvent,
    LifecycleEvent,
    UnknownEvent,
    parse_event,
)
from streamflow.wire.framing import ServerSentEvent, SSEParser

DATA = Path(__file__).resolve().parent.parent / "data" / "openai_responses"


def body(name: str) -> bytes:
    return (DATA / name).read_bytes()


def decode(data: bytes, pieces: list[bytes] | None = None, dialect: str = "openai-responses",
           framing: str | None = None) -> list[UniEvent]:
    """All events of a body (whole or in ``pieces``), clock fixed at 0."""
    dec = StreamDecoder(dialect, framing=framing, clock=lambda: 0)
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


def failure(data: bytes, kind: type[Exception], framing: str | None = None) -> Any:
    with pytest.raises(kind) as info:
        decode(data, framing=framing)
    return info.value


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


def payloads(data: bytes) -> list[dict[str, Any]]:
    parser = SSEParser()
    return [json.loads(f.data) for f in parser.feed(data) + parser.close()]


# -- authored fixtures ----------------------------------------------------------
def test_reasoning_summary_encrypted_content_annotations_and_parallel_calls() -> None:
    events = decode(body("reasoning_parallel_tools.sse"))
    msg = assembled(events)
    assert events[0].provider == {"id": "resp_A1", "model": "gpt-5-mini-2025-08-07"}
    assert [i.type for i in msg.items] == ["thinking.done", "thinking.done",
                                           "inline_thinking.done", "text.done",
                                           "tool_call.done", "tool_call.done"]
    s0, s1, secret, text, call1, call2 = msg.items
    assert s0.thinking == "**Planning**\n\nThe user wants the weather in two cities."
    assert s0.provider == {"item_id": "rs_A1", "summary_index": 0}
    assert s1.thinking == "I will call get_weather twice."
    # the encrypted reasoning is kept byte for byte, with the item id to send it back
    assert secret.data == b"gAAAAABo-ENCRYPTED-REASONING-A1=="
    assert secret.fidelity == {"id": "rs_A1"}
    assert text.text == "Checking both cities [1]."
    assert text.provider["annotations"][0]["url"] == "https://weather.example/paris"
    assert len(text.provider["annotations"]) == 1  # annotation.added and part.done not doubled
    assert (call1.name, call1.tool_call_id, call1.arguments) == ("get_weather", "call_A1",
                                                                 {"city": "Paris"})
    assert (call2.tool_call_id, call2.arguments) == ("call_A2", {"city": "Tokyo", "unit": "c"})
    stop = events[-1]
    assert stop.finish_reason == "tool_call"
    usage = stop.usage_metadata
    assert (usage.prompt_tokens, usage.cached_tokens, usage.thoughts_tokens,
            usage.response_tokens) == (120, 64, 128, 210)
    assert msg.provider["service_tier"] == "auto" and msg.provider["status"] == "completed"
    # noise is not data: obfuscation padding never reaches an item
    assert all("obfuscation" not in json.dumps(e.to_dict()) for e in events)


def test_tool_call_name_and_id_only_on_the_first_fragment() -> None:
    events = decode(body("reasoning_parallel_tools.sse"))
    calls = [e.item for e in events if e.item is not None and e.item.type == "tool_call.delta"]
    assert [(c.name, c.tool_call_id, c.arguments) for c in calls] == [
        ("get_weather", "call_A1", ""), ("", "", '{"city":'), ("", "", '"Paris"}'),
        ("get_weather", "call_A2", ""), ("", "", '{"city":"Tokyo",'), ("", "", '"unit":"c"}')]


def test_interleaved_calls_without_sequence_numbers_come_out_one_after_the_other() -> None:
    events = decode(body("interleaved_calls.sse"))
    kinds = [(e.item.type, e.item.tool_call_id) for e in events if e.item is not None]
    assert kinds == [("tool_call.delta", "call_B1"), ("tool_call.delta", ""),
                     ("tool_call.delta", ""), ("tool_call.done", "call_B1"),
                     ("tool_call.delta", "call_B2"), ("tool_call.delta", ""),
                     ("tool_call.delta", ""), ("tool_call.done", "call_B2")]
    msg = assembled(events)
    assert [c.arguments for c in msg.tool_calls] == [{"q": "a"}, {"q": "b"}]
    assert msg.finish_reason == "tool_call"


def test_refusal_is_its_own_text_group_and_max_output_tokens_is_length() -> None:
    msg = assembled(decode(body("refusal_incomplete.sse")))
    refusal, text = msg.items
    assert refusal.text == "I can't help with that."
    assert refusal.provider == {"item_id": "msg_C1", "phase": "final_answer", "refusal": True}
    assert text.text == "But here is" and "refusal" not in text.provider
    assert msg.finish_reason == "length"
    assert msg.provider["incomplete_details"] == {"reason": "max_output_tokens"}


def test_custom_tool_reasoning_text_server_tools_image_and_unknown_events() -> None:
    msg = assembled(decode(body("custom_tool_server_tools.sse")))
    thought, opaque, custom, image = msg.items
    assert thought.thinking == "Need to run code."
    assert opaque.data == b"" and opaque.fidelity == {"id": "rs_D1"}
    assert custom.arguments == {"input": 'print("hi")\nx = "a\\\\b"'}
    assert custom.provider == {"item_id": "ctc_D1", "custom": True}
    assert image.data == b"\x89PNG\r\n\x1a\n-fake-image-bytes-"
    assert image.mime_type == "image/png" and image.provider["revised_prompt"] == "a red square"
    (search,) = msg.provider["extra_items"]
    assert search["type"] == "web_search_call" and search["output_index"] == 1
    unknown = [e["type"] for e in msg.provider["unknown_events"]]
    assert unknown == ["response.web_search_call.in_progress",
                       "response.web_search_call.searching",
                       "response.web_search_call.completed",
                       "response.image_generation_call.partial_image",
                       "response.future_thing.happened"]
    assert msg.finish_reason == "tool_call"


def test_failed_response_is_a_provider_error_keeping_the_partial_text() -> None:
    err = failure(body("failed.sse"), ProviderError)
    assert (err.code, err.type, err.request_id) == ("server_error", "server_error", "resp_E1")
    assert err.retryable
    assert err.partial.text == "Partial ans" and not err.partial.complete
    assert err.partial.id == "resp_E1"


def test_error_event_is_a_provider_error() -> None:
    err = failure(body("error_event.sse"), ProviderError)
    assert err.code == "rate_limit_exceeded" and err.retryable
    assert err.message == "Rate limit reached for gpt-5-mini."


def test_call_cut_by_max_output_tokens_raises_in_place_of_its_done() -> None:
    err = failure(body("incomplete_call.sse"), ToolCallArgumentParseError)
    assert (err.name, err.tool_call_id) == ("write_file", "call_G1")
    (cut,) = err.partial.items
    assert cut.type == "tool_call.delta" and cut.arguments == '{"path": "/tmp/'


def test_a_body_cut_before_the_terminal_event_is_incomplete() -> None:
    data = body("reasoning_parallel_tools.sse")
    cut = data[: data.index(b'"delta":"\\"Paris\\"}"')]  # mid-event, mid-call
    dec = StreamDecoder("openai-responses", clock=lambda: 0)
    events = dec.feed(cut)
    with pytest.raises(IncompleteStreamError) as info:
        dec.close()
    assert all(e.event_type == "delta" for e in events)
    partial = info.value.partial
    assert partial.thinking.startswith("**Planning**")
    assert partial.text == "Checking both cities [1]."
    assert partial.items[-1].type == "tool_call.delta"
    assert partial.items[-1].arguments == '{"city":'
    assert not partial.complete


def test_items_that_arrive_only_whole_are_still_items() -> None:
    item_msg = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "hi", "annotations": []}]}
    call = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f",
            "arguments": '{"a":1}'}
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": [
        {"type": "summary_text", "text": "thought"}], "encrypted_content": "ENC"}
    done = [{"type": "response.output_item.done", "output_index": n, "item": it}
            for n, it in enumerate((reasoning, item_msg))]
    completed = {"type": "response.completed", "response": {
        "id": "r", "status": "completed", "output": [reasoning, item_msg, call]}}
    msg = assembled(decode(sse(*done, completed)))
    assert [i.type for i in msg.items] == ["thinking.done", "inline_thinking.done", "text.done",
                                           "tool_call.done"]
    assert msg.thinking == "thought" and msg.text == "hi"
    assert msg.items[1].data == b"ENC" and msg.tool_calls[0].arguments == {"a": 1}


def test_text_given_only_by_done_events_is_not_lost_nor_doubled() -> None:
    base = {"item_id": "m", "output_index": 0, "content_index": 0}
    events = decode(sse(
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "m", "type": "message", "content": []}},
        {"type": "response.output_text.done", **base, "text": "whole"},
        {"type": "response.content_part.done", **base,
         "part": {"type": "output_text", "text": "whole", "annotations": [{"type": "x"}]}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}}))
    (text,) = assembled(events).items
    assert text.text == "whole" and text.provider["annotations"] == [{"type": "x"}]


def test_event_after_the_terminal_event_is_ignored_never_an_error_after_stop() -> None:
    data = body("interleaved_calls.sse") + sse({"type": "response.output_text.delta",
                                               "delta": "late"})
    dec = StreamDecoder("openai-responses", clock=lambda: 0)
    events = dec.feed(data) + dec.close()
    assert events[-1].event_type == "stop" and dec.ignored_frames == 1
    assert dec.message.complete and len(dec.message.tool_calls) == 2


@pytest.mark.parametrize("bad", [
    '{"type": "response.output_text.delta", "output_index": 0, "delta": 5}',
    '{"type": "response.output_item.added", "output_index": "0", "item": {}}',
    '{"type": "response.completed", "response": []}',
    '{"type": "response.completed", "response": {"usage": {"input_tokens": "many"}}}',
    '[1, 2]',
    '{"no": "type"}',
    'not json',
])
def test_hostile_events_are_protocol_errors(bad: str) -> None:
    head = sse({"type": "response.created", "response": {"id": "r", "model": "m"}})
    err = failure(head + f"data: {bad}\n\n".encode(), ProtocolError)
    assert err.partial is not None and err.partial.id == "r"


# -- real recordings --------------------------------------------------------------
def test_real_text_stream() -> None:
    rel = "openai_responses/pyd_responses_stream.sse"
    msg = assembled(decode(real_body(rel), framing=framing_for(rel)))
    assert msg.text == "The capital of France is Paris."
    assert msg.id == "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed"
    assert msg.model == "gpt-4o-2024-08-06" and msg.finish_reason == "stop"
    assert msg.usage_metadata.prompt_tokens == 278 and msg.usage_metadata.response_tokens == 9


def test_real_error_then_failed() -> None:
    rel = "openai_responses/vercel_responses_error.jsonl"
    err = failure(real_body(rel), ProviderError, framing=framing_for(rel))
    assert err.code == "insufficient_quota" and not err.retryable
    assert err.message.startswith("You exceeded your current quota")
    assert err.partial.model == "gpt-5-nano-2025-08-07"


def test_real_recordings_are_detected_automatically() -> None:
    for rel in ("openai_responses/pyd_responses_stream.sse",
                "openai_responses/vercel_responses_error.jsonl"):
        dec = StreamDecoder("auto", framing=framing_for(rel))
        try:
            dec.feed(real_body(rel))
        except ProviderError:
            pass
        assert dec.dialect == "openai-responses"


# -- sniffing and wire models ------------------------------------------------------
def test_sniff_claims_responses_events_only() -> None:
    ours = [ServerSentEvent('{"type":"response.created","response":{}}', "response.created"),
            ServerSentEvent('{"type":"response.created","response":{}}'),
            ServerSentEvent('{"type":"error","sequence_number":0,"code":"x","message":"m"}')]
    others = [ServerSentEvent('{"type":"message_start","message":{}}', "message_start"),
              ServerSentEvent('{"type":"error","error":{"type":"overloaded_error"}}', "error"),
              ServerSentEvent('{"id":"c","object":"chat.completion.chunk","choices":[]}'),
              ServerSentEvent('{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}'),
              ServerSentEvent("[DONE]")]
    assert all(OpenAIResponsesDecoder.sniff(f) for f in ours)
    assert not any(OpenAIResponsesDecoder.sniff(f) for f in others)
    assert [detect_dialect(f, "sse") for f in ours] == ["openai-responses"] * 3
    for name in ("anthropic", "openai-chat"):
        assert not any(get_dialect(name).sniff(f) for f in ours[1:])


def test_wire_models_validate_every_fixture_payload() -> None:
    for path in sorted(DATA.iterdir()):
        for ev in payloads(path.read_bytes()):
            model = parse_event(json.dumps(ev))
            assert model.type == ev["type"]  # type: ignore[attr-defined]
    assert isinstance(parse_event('{"type":"response.created","response":{"id":"r"}}'),
                      LifecycleEvent)
    assert isinstance(parse_event('{"type":"response.output_text.delta","delta":"x"}'),
                      DeltaEvent)
    assert isinstance(parse_event('{"type":"response.new_thing","x":1}'), UnknownEvent)


# -- properties ------------------------------------------------------------------
COMPLETE = ["reasoning_parallel_tools.sse", "interleaved_calls.sse", "refusal_incomplete.sse",
            "custom_tool_server_tools.sse"]


def outcome(data: bytes, pieces: list[bytes] | None = None) -> Any:
    try:
        return [e.to_dict() for e in decode(data, pieces)]
    except StreamflowError as exc:
        return (type(exc).__name__, exc.message, exc.partial.to_dict() if exc.partial else None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from([*COMPLETE, "failed.sse", "incomplete_call.sse"]))
def test_any_chunking_gives_the_same_events(data: st.DataObject, name: str) -> None:
    whole = body(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=12)))
    pieces = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    assert outcome(whole, pieces) == outcome(whole)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(COMPLETE))
def test_hostile_json_gives_only_streamflow_errors(data: st.DataObject, name: str) -> None:
    events = payloads(body(name))
    n = data.draw(st.integers(0, len(events) - 1))
    target = events[n]
    action = data.draw(st.sampled_from(["replace", "delete", "retype", "nest"]))
    keys = sorted(target)
    key = data.draw(st.sampled_from(keys))
    if action == "replace":
        target[key] = data.draw(JSON)
    elif action == "delete":
        del target[key]
    elif action == "retype":
        target["type"] = data.draw(st.sampled_from(
            ["response.output_text.delta", "response.output_item.done", "response.completed",
             "response.content_part.done", "error", "response.reasoning_summary_text.delta",
             "response.custom_tool_call_input.delta", "x"]))
    else:
        for value in target.values():
            if isinstance(value, dict) and value:
                value[data.draw(st.sampled_from(sorted(value)))] = data.draw(JSON)
    try:
        result = decode(sse(*events))
    except StreamflowError as exc:
        assert exc.partial is not None
    else:
        assert assembled(result).complete  # what decodes still follows the grammar
