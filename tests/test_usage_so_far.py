"""Usage so far (issue 28 req 7): a partial message keeps every count reported before the
cut and says it is not final; ``cache_write_tokens`` is decoded and written back."""

from __future__ import annotations

from pathlib import Path

import pytest

import streamflow
from streamflow import IncompleteStreamError, StreamDecoder, Usage
from streamflow.core.events import usage_from_dict, usage_to_dict
from streamflow.wire.dialects.anthropic.encode import anthropic_usage_json
from streamflow.wire.dialects.bedrock.decode import bedrock_usage
from streamflow.wire.dialects.openai_chat.decode import openai_usage
from streamflow.wire.dialects.openai_chat.encode import openai_usage_json

DATA = Path(__file__).parent / "data"
KITCHEN = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()


def cut_partial(body: bytes, dialect: str) -> streamflow.Message:
    decoder = StreamDecoder(dialect)
    decoder.feed(body)
    with pytest.raises(IncompleteStreamError) as caught:
        decoder.close()
    assert caught.value.partial is not None
    return caught.value.partial


def test_anthropic_cut_before_message_delta_keeps_message_start_counts() -> None:
    partial = cut_partial(KITCHEN[:KITCHEN.index(b"event: message_delta")], "anthropic")
    usage = partial.usage_metadata
    assert usage is not None and not usage.final
    assert (usage.prompt_tokens, usage.cached_tokens, usage.cache_write_tokens) == (75, 20, 5)
    assert usage.response_tokens == 1
    assert usage.provider is not None and usage.provider["input_tokens"] == 50


def test_anthropic_cut_after_message_delta_keeps_its_counts_too() -> None:
    cut = KITCHEN.index(b"event: message_stop")
    usage = cut_partial(KITCHEN[:cut], "anthropic").usage_metadata
    assert usage is not None and not usage.final
    assert (usage.response_tokens, usage.thoughts_tokens, usage.prompt_tokens) == (87, 12, 75)


def test_the_stop_events_usage_is_final_and_carries_cache_writes() -> None:
    message = streamflow.assemble(KITCHEN, "anthropic")
    usage = message.usage_metadata
    assert usage is not None and usage.final
    assert (usage.cache_write_tokens, usage.cached_tokens, usage.prompt_tokens) == (5, 20, 75)


def test_a_partial_before_any_count_has_no_usage() -> None:
    partial = cut_partial(b"event: ping\ndata: {\"type\": \"ping\"}\n\n", "anthropic")
    assert partial.usage_metadata is None


def test_gemini_cut_keeps_the_cumulative_counts_so_far() -> None:
    body = (b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],'
            b'"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":1},'
            b'"modelVersion":"gemini-x","responseId":"r1"}\r\n\r\n')
    decoder = StreamDecoder("gemini")
    decoder.feed(body)
    usage = decoder.partial.usage_metadata
    assert usage is not None and not usage.final
    assert (usage.prompt_tokens, usage.response_tokens) == (9, 1)


def test_openai_usage_chunk_before_a_cut_is_kept_not_final() -> None:
    body = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
            b'"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},'
            b'"finish_reason":"stop"}]}\n\n'
            b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
            b'"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":2,'
            b'"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":4}}}\n\n')
    usage = cut_partial(body, "openai-chat").usage_metadata
    assert usage is not None and not usage.final
    assert (usage.prompt_tokens, usage.cached_tokens, usage.cache_write_tokens) == (30, 10, 4)
    final = streamflow.assemble(body + b"data: [DONE]\n\n", "openai-chat").usage_metadata
    assert final is not None and final.final and final.cache_write_tokens == 4


def test_cache_writes_cross_dialects_through_the_encoders() -> None:
    usage = bedrock_usage({"inputTokens": 10, "outputTokens": 3, "cacheReadInputTokens": 6,
                           "cacheWriteInputTokens": 2})
    assert (usage.cache_write_tokens, usage.prompt_tokens) == (2, 18)
    anthropic = anthropic_usage_json(usage)
    assert anthropic["cache_creation_input_tokens"] == 2
    assert anthropic["cache_read_input_tokens"] == 6 and anthropic["input_tokens"] == 10
    chat = openai_usage_json(usage)
    assert chat is not None and chat["prompt_tokens_details"]["cache_write_tokens"] == 2
    assert openai_usage(chat).cache_write_tokens == 2


def test_anthropic_round_trip_keeps_cache_writes() -> None:
    events = StreamDecoder("anthropic").feed(KITCHEN)
    body = b"".join(streamflow.encode(events, "anthropic"))
    again = streamflow.assemble(body, "anthropic").usage_metadata
    assert again is not None and again.cache_write_tokens == 5 and again.prompt_tokens == 75


def test_usage_json_says_when_it_is_not_final() -> None:
    so_far = Usage(prompt_tokens=5, cache_write_tokens=1).so_far()
    data = usage_to_dict(so_far)
    assert data is not None and data["final"] is False and data["cache_write_tokens"] == 1
    assert usage_from_dict(data) == so_far
    final = usage_to_dict(Usage(prompt_tokens=5))
    assert final is not None and "final" not in final and "cache_write_tokens" not in final
