"""Bedrock ConverseStream and InvokeModelWithResponseStream, checked against botocore's decoding."""

from __future__ import annotations

import base64
import json
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.exceptions import EventStreamError
from botocore.parsers import EventStreamJSONParser
from hypothesis import given, settings
from hypothesis import strategies as st
from realdata import DATA, real_body, real_path

from streamflow import StreamDecoder, assemble
from streamflow.core.errors import (
    IncompleteStreamError,
    ProtocolError,
    ProviderError,
    StreamflowError,
)
from streamflow.core.events import InlineThinkingItem, ThinkingItem, ToolCallItem, UniEvent
from streamflow.reactive.sources._http_errors import status_error
from streamflow.wire.framing.eventstream import encode_message
from streamflow.wire.framing.sse import ServerSentEvent

MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")


def event(event_type: str, payload: Any) -> bytes:
    """One ConverseStream event message as the service frames it."""
    return encode_message({":event-type": event_type, ":content-type": "application/json",
                           ":message-type": "event"}, json.dumps(payload).encode())


def exception(kind: str, message: str) -> bytes:
    return encode_message({":exception-type": kind, ":content-type": "application/json",
                           ":message-type": "exception"},
                          json.dumps({"message": message}).encode())


def fixture(name: str) -> list[Any]:
    return json.loads((DATA / "bedrock" / name).read_text())


def converse_body(name: str = "converse_thinking_tools.json") -> bytes:
    return b"".join(event(kind, payload) for kind, payload in fixture(name))


def botocore_events(body: bytes, operation: str = "ConverseStream") -> list[dict]:
    """What boto3 hands a user for this body."""
    op = MODEL.operation_model(operation)
    shape = op.output_shape.members[op.output_shape.serialization["payload"]]

    class Raw:
        def stream(self) -> Any:
            yield body

        def close(self) -> None:
            pass

    return list(EventStream(Raw(), shape, EventStreamJSONParser(), operation))


def botocore_summary(events: list[dict]) -> dict[str, Any]:
    """Assemble boto3's events the way a boto3 user would."""
    text, thinking, signature, tools, usage, stop = [], [], None, {}, None, None
    for ev in events:
        if "contentBlockStart" in ev:
            start = ev["contentBlockStart"]
            tools[start["contentBlockIndex"]] = dict(start["start"]["toolUse"], input="")
        elif "contentBlockDelta" in ev:
            body = ev["contentBlockDelta"]
            delta, index = body["delta"], body["contentBlockIndex"]
            text.append(delta.get("text", ""))
            reasoning = delta.get("reasoningContent", {})
            thinking.append(reasoning.get("text", ""))
            signature = reasoning.get("signature", signature)
            if "toolUse" in delta:
                tools[index]["input"] += delta["toolUse"]["input"]
        elif "messageStop" in ev:
            stop = ev["messageStop"]["stopReason"]
        elif "metadata" in ev:
            usage = ev["metadata"]["usage"]
    calls = [(t["toolUseId"], t["name"], json.loads(t["input"])) for _, t in sorted(tools.items())]
    return {"text": "".join(text), "thinking": "".join(thinking), "signature": signature,
            "calls": calls, "usage": usage, "stop": stop}


def test_real_converse_stream_matches_botocore() -> None:
    body = real_path("bedrock/pyd_bedrock_converse_stream.bin").read_bytes()
    expected = botocore_summary(botocore_events(body))
    message = assemble(body)  # detected: eventstream framing, bedrock dialect
    assert message.complete and message.finish_reason == "stop"
    assert message.text == expected["text"]
    assert message.text.startswith("The capital of France is Paris.")
    usage = message.usage_metadata
    assert usage is not None
    assert (usage.prompt_tokens, usage.response_tokens) == (
        expected["usage"]["inputTokens"], expected["usage"]["outputTokens"])
    assert message.provider["stop_reason"] == "end_turn"
    assert message.provider["metrics"] == {"latencyMs": 522}
    # botocore drops serverToolUsage (not in its model); we keep the raw usage whole
    assert usage.provider == {"inputTokens": 13, "outputTokens": 82, "serverToolUsage": {},
                              "totalTokens": 95}
    assert "p" not in message.provider  # the random padding is the one thing not kept


def test_real_http_error_before_the_stream_maps_to_a_typed_error() -> None:
    body = real_body("bedrock/pyd_bedrock_streaming_error.json")
    headers = {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/"
               "com.amazon.bedrock/", "x-amzn-RequestId": "7d1e-req"}
    err = status_error(400, headers, body)
    assert err.status == 400
    assert err.type == "ValidationException"
    assert "The provided model identifier is invalid." in err.message
    assert err.request_id == "7d1e-req"
    assert not err.retryable


def test_reasoning_text_and_parallel_tool_calls_match_botocore() -> None:
    body = converse_body()
    expected = botocore_summary(botocore_events(body))
    message = assemble(body, "bedrock")
    thinking, text, first, second = message.items
    assert isinstance(thinking, ThinkingItem)
    assert thinking.thinking == expected["thinking"] == "The user wants the weather in two cities."
    assert thinking.fidelity == {"signature": expected["signature"]}
    assert text.type == "text.done" and message.text == expected["text"]
    calls = [(c.tool_call_id, c.name, c.arguments) for c in message.tool_calls]
    assert calls == expected["calls"]
    assert isinstance(first, ToolCallItem) and first.arguments == {"city": "Paris", "unit": "C"}
    assert isinstance(second, ToolCallItem) and second.tool_call_id == "tooluse_0sl0"
    assert message.finish_reason == "tool_call"
    usage = message.usage_metadata
    assert usage is not None
    assert (usage.prompt_tokens, usage.cached_tokens, usage.response_tokens) == (1142, 1100, 87)
    assert message.provider["metrics"] == {"latencyMs": 912}


def test_event_sequence_follows_the_grammar_with_name_and_id_on_the_first_fragment() -> None:
    dec = StreamDecoder("bedrock", clock=lambda: 7)
    events = dec.feed(converse_body()) + dec.close()
    kinds = [ev.item.type if ev.item else ev.event_type for ev in events]
    assert kinds == ["thinking.delta"] * 3 + ["thinking.done"] + ["text.delta"] * 2 + \
        ["text.done"] + ["tool_call.delta"] * 3 + ["tool_call.done"] + \
        ["tool_call.delta"] * 2 + ["tool_call.done", "stop"]
    opener = events[7].item
    assert isinstance(opener, ToolCallItem)
    assert (opener.name, opener.tool_call_id, opener.arguments) == ("get_weather",
                                                                     "tooluse_pAr1s", "")
    later = events[8].item
    assert isinstance(later, ToolCallItem) and later.name == "" and later.tool_call_id == ""
    assert events[2].item.fidelity == {"signature": "EqQBCkYIBRgCKkBsig=="}  # type: ignore[union-attr]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 200), max_size=30))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    body = converse_body()
    whole = StreamDecoder("auto", clock=lambda: 0)
    expected = whole.feed(body) + whole.close()
    dec = StreamDecoder("auto", clock=lambda: 0)
    got: list[UniEvent] = []
    pos = 0
    for size in cuts:
        got += dec.feed(body[pos:pos + size])
        pos += size
    got += dec.feed(body[pos:]) + dec.close()
    assert got == expected and dec.dialect == "bedrock"


def test_redacted_reasoning_is_kept_as_inline_thinking_bytes() -> None:
    secret = b"\x01opaque-reasoning\xff"
    body = b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {
            "redactedContent": base64.b64encode(secret).decode()}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hi"}}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}),
    ])
    boto = next(e for e in botocore_events(body) if "contentBlockDelta" in e)
    message = assemble(body, "bedrock")
    item = message.items[0]
    assert isinstance(item, InlineThinkingItem)
    assert item.data == secret == boto["contentBlockDelta"]["delta"]["reasoningContent"][
        "redactedContent"]
    assert message.text == "Hi"


@pytest.mark.parametrize(("raw", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"), ("tool_use", "tool_call"),
    ("guardrail_intervened", "unknown"), ("content_filtered", "unknown"),
])
def test_finish_reasons(raw: str, finish: str) -> None:
    body = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x"}}) + \
        event("messageStop", {"stopReason": raw, "additionalModelResponseFields": {"k": 1}}) + \
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}})
    message = assemble(body, "bedrock")
    assert message.finish_reason == finish
    assert message.provider["stop_reason"] == raw
    assert message.provider["additionalModelResponseFields"] == {"k": 1}


def test_in_band_exception_is_a_provider_error_with_the_partial() -> None:
    body = event("messageStart", {"role": "assistant"}) + event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Half an ans"}}) + \
        exception("throttlingException", "Too many tokens, please wait.")
    with pytest.raises(EventStreamError) as boto:
        botocore_events(body)
    with pytest.raises(ProviderError) as info:
        assemble(body)
    err = info.value
    assert err.message == boto.value.response["Error"]["Message"]
    assert err.type == "ThrottlingException"  # botocore: "throttlingException" (the member name)
    assert boto.value.response["Error"]["Code"].lower() == err.type.lower()
    assert err.retryable
    assert err.partial is not None and err.partial.text == "Half an ans"
    assert not err.partial.complete


def test_model_stream_error_keeps_the_original_status() -> None:
    body = encode_message({":exception-type": "modelStreamErrorException",
                           ":message-type": "exception"},
                          b'{"message":"boom","originalStatusCode":529,"originalMessage":"x"}')
    with pytest.raises(ProviderError) as info:
        assemble(body, "bedrock")
    assert info.value.code == 529 and info.value.retryable


def test_error_message_type_uses_its_headers() -> None:
    body = encode_message({":message-type": "error", ":error-code": "InternalFailure",
                           ":error-message": "try again"})
    with pytest.raises(ProviderError, match="try again") as info:
        assemble(body, "bedrock")
    assert info.value.type == "InternalFailure"


def test_cut_stream_is_incomplete_and_keeps_the_text() -> None:
    body = converse_body()
    cut = body[: body.index(b"contentBlockStart")]  # stops inside the third block's message
    with pytest.raises(IncompleteStreamError) as info:
        assemble(cut, "bedrock")
    partial = info.value.partial
    assert partial is not None and partial.text == "Checking both cities now."
    assert partial.thinking == "The user wants the weather in two cities."


def test_message_stop_without_metadata_stops_at_close_with_unknown_usage() -> None:
    body = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}) + \
        event("messageStop", {"stopReason": "end_turn"})
    dec = StreamDecoder("bedrock")
    assert [ev.event_type for ev in dec.feed(body)] == ["delta", "delta"]
    (stop,) = dec.close()
    assert stop.event_type == "stop" and stop.finish_reason == "stop"
    assert stop.usage_metadata is not None and stop.usage_metadata.prompt_tokens is None


def test_unknown_events_and_server_tool_blocks_are_kept() -> None:
    body = b"".join([
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {
            "toolResult": {"toolUseId": "srv_1", "type": "web_search"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
            "toolResult": [{"json": {"hits": 2}}]}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "A"}}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"citation": {
            "title": "doc", "location": {"web": {"url": "https://x"}}}}}),
        event("futureEvent", {"something": 1}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}),
    ])
    message = assemble(body, "bedrock")
    assert message.text == "A"
    assert message.items[0].provider == {"citations": [{"title": "doc", "location": {
        "web": {"url": "https://x"}}}]}
    (block,) = message.provider["extra_blocks"]
    assert block["start"]["toolResult"]["toolUseId"] == "srv_1"
    assert block["deltas"] == [{"toolResult": [{"json": {"hits": 2}}]}]
    assert message.provider["unknown_events"] == [{"event_type": "futureEvent",
                                                   "payload": {"something": 1}}]


@pytest.mark.parametrize("body", [
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": 5}}),
    event("contentBlockDelta", {"contentBlockIndex": "0", "delta": {"text": "x"}}),
    event("contentBlockDelta", {"delta": {"text": "x"}}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
    encode_message({":event-type": "messageStart", ":message-type": "event"}, b"not json"),
    encode_message({":event-type": "messageStart", ":message-type": "event"}, b"[1]"),
    event("contentBlockStop", {"contentBlockIndex": 0}) +
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "late"}}),
    event("messageStop", {"stopReason": "end_turn"}) + event("messageStop", {"stopReason": "x"}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "reasoningContent": {"redactedContent": "@@not base64@@"}}}),
])
def test_hostile_events_are_protocol_errors(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        assemble(body, "bedrock")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(
    st.sampled_from(["messageStart", "contentBlockStart", "contentBlockDelta",
                     "contentBlockStop", "messageStop", "metadata", "chunk"]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                     st.sampled_from(["contentBlockIndex", "delta", "text", "toolUse", "input",
                                      "start", "stopReason", "usage", "reasoningContent",
                                      "signature", "bytes"]), inner, max_size=3),
                 max_leaves=8)), max_size=6))
def test_fuzzed_payloads_raise_only_streamflow_errors(events: list) -> None:
    body = b"".join(event(kind, payload) for kind, payload in events)
    for dialect in ("bedrock", "bedrock-invoke"):
        try:
            assemble(body, dialect)
        except StreamflowError:
            pass


# -- InvokeModelWithResponseStream -------------------------------------------------
def chunk(native: dict[str, Any]) -> bytes:
    data = base64.b64encode(json.dumps(native).encode()).decode()
    return encode_message({":event-type": "chunk", ":content-type": "application/json",
                           ":message-type": "event"},
                          json.dumps({"bytes": data, "p": "abcdefgh"}).encode())


def test_invoke_stream_decodes_like_the_native_anthropic_stream() -> None:
    natives = fixture("invoke_anthropic_tools.json")
    body = b"".join(chunk(n) for n in natives)
    boto = botocore_events(body, "InvokeModelWithResponseStream")
    assert [json.loads(e["chunk"]["bytes"]) for e in boto] == natives
    dec = StreamDecoder("auto", clock=lambda: 3)
    events = dec.feed(body) + dec.close()
    assert dec.dialect == "bedrock-invoke"
    native = StreamDecoder("anthropic", clock=lambda: 3)
    expected = native.feed_frames([ServerSentEvent(json.dumps(n), n["type"]) for n in natives])
    expected += native.close()
    assert events == expected
    message = dec.message
    assert message.thinking == "Two lookups, in parallel."
    assert message.items[0].fidelity == {"signature": "ErUBCkYIBxgCsig"}
    assert [c.arguments for c in message.tool_calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert message.finish_reason == "tool_call"
    assert message.usage_metadata is not None and message.usage_metadata.response_tokens == 96
    assert message.provider["message_stop"]["amazon-bedrock-invocationMetrics"][
        "invocationLatency"] == 2011


def test_invoke_stream_errors() -> None:
    natives = fixture("invoke_anthropic_tools.json")
    cut = b"".join(chunk(n) for n in natives[:8])
    with pytest.raises(IncompleteStreamError) as info:
        assemble(cut, "bedrock-invoke")
    assert info.value.partial is not None and info.value.partial.text == "Let me check."
    with pytest.raises(ProviderError) as err:
        assemble(cut + exception("modelTimeoutException", "slow"), "bedrock-invoke")
    assert err.value.type == "ModelTimeoutException"
    assert err.value.partial is not None and err.value.partial.text == "Let me check."
    with pytest.raises(ProtocolError, match="only Anthropic"):
        assemble(chunk({"generation": "Hi", "stop_reason": None}), "bedrock-invoke")
    with pytest.raises(ProtocolError, match="base64"):
        assemble(encode_message({":event-type": "chunk", ":message-type": "event"},
                                b'{"bytes": "%%%"}'), "bedrock-invoke")


def test_wire_models_parse_every_event() -> None:
    from streamflow.wire.dialects.bedrock.decode import BedrockDecoder
    from streamflow.wire.framing.eventstream import EventStreamParser

    frames = EventStreamParser().feed(converse_body())
    models = [type(BedrockDecoder.parse_wire(f)).__name__ for f in frames]
    assert models[:3] == ["MessageStartEvent", "ContentBlockDeltaEvent", "ContentBlockDeltaEvent"]
    assert models[-2:] == ["MessageStopEvent", "MetadataEvent"]


def test_image_blocks_become_inline_data() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    body = b"".join([
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {"image": {"format": "png"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"image": {
            "source": {"bytes": base64.b64encode(png[:5]).decode()}}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"image": {
            "source": {"bytes": base64.b64encode(png[5:]).decode()}}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}),
    ])
    (image,) = assemble(body, "bedrock").items
    assert image.type == "inline_data.done"
    assert (image.data, image.mime_type) == (png, "image/png")  # type: ignore[union-attr]
