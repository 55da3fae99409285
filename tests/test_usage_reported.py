"""Issue 34.5: a stream without usage reads as the SDKs read it -- ``message.usage`` is ``None``
(not a ``Usage`` of ``None`` counts) -- while its stop event keeps a usage (seed 001: the stop
event always carries one; a usage that reports nothing), so the ``uni`` wire stays valid.
Every reader of a stream's usage (sinks, the UI targets, the agent total, the encoders) reads
that as no usage."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

import streamflow
from streamflow import LogSink, StreamDecoder, Usage, assemble, encode
from streamflow.core.events import reported_usage
from streamflow.reactive.sinks.stats import StreamStats

CHUNK = {"id": "chatcmpl-q", "object": "chat.completion.chunk", "created": 1790000000,
         "model": "m"}
NO_USAGE = b"".join(b"data: " + json.dumps({**CHUNK, "choices": [c]}).encode() + b"\n\n" for c in (
    {"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None},
    {"index": 0, "delta": {}, "finish_reason": "stop"})) + b"data: [DONE]\n\n"
WITH_USAGE = NO_USAGE.replace(b"data: [DONE]", b"data: " + json.dumps({
    **CHUNK, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1,
                                      "total_tokens": 4}}).encode() + b"\n\ndata: [DONE]")


def events_of(body: bytes, dialect: str = "openai-chat") -> list[Any]:
    decoder = StreamDecoder(dialect)
    return decoder.feed(body) + decoder.close()


def test_no_usage_reported_is_none_as_the_openai_sdk_gives_it() -> None:
    openai = pytest.importorskip("openai")

    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=NO_USAGE)
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    with client.chat.completions.stream(model="m", messages=[
            {"role": "user", "content": "hi"}]) as stream:
        assert stream.get_final_completion().usage is None
    msg = assemble(NO_USAGE, "openai-chat")
    assert msg.complete and msg.text == "Hi"
    assert msg.usage is None and msg.usage_metadata is None
    assert msg.to_dict()["usage_metadata"] is None
    counted = assemble(WITH_USAGE, "openai-chat").usage
    assert counted is not None and (counted.prompt_tokens, counted.response_tokens) == (3, 1)


def test_the_stop_event_still_carries_a_usage_and_uni_stays_valid() -> None:
    stop = events_of(NO_USAGE)[-1]
    assert stop.event_type == "stop" and isinstance(stop.usage_metadata, Usage)
    assert not stop.usage_metadata.reported
    for target in ("uni", "uni-jsonl"):
        body = b"".join(encode(events_of(NO_USAGE), target))
        last = json.loads(body.decode().strip().splitlines()[-1].removeprefix("data: "))
        assert last["event_type"] == "stop" and isinstance(last["usage_metadata"], dict)
        assert assemble(body, target).usage is None


def test_reported_means_any_count_cost_or_raw_object() -> None:
    assert not Usage().reported and reported_usage(Usage()) is None
    assert reported_usage(None) is None
    for usage in (Usage(prompt_tokens=0), Usage(cost=0.0), Usage(provider={}),
                  Usage(cache_write_tokens=2), Usage(thoughts_tokens=1)):
        assert usage.reported and reported_usage(usage) is usage


@pytest.mark.parametrize("target", ["anthropic", "openai-chat", "openai-responses", "gemini",
                                    "ollama"])
def test_no_usage_through_every_target_is_no_usage_or_its_zeros(target: str) -> None:
    back = assemble(b"".join(encode(events_of(NO_USAGE), target)), target)
    usage = back.usage
    if target == "anthropic":  # its usage object is required: written as zeros (ENCODERS.md)
        assert usage is not None and (usage.prompt_tokens, usage.response_tokens) == (0, 0)
    else:
        assert usage is None, usage


def test_sinks_read_no_usage_as_none(caplog: pytest.LogCaptureFixture) -> None:
    stats = StreamStats()
    for event in events_of(NO_USAGE):
        stats.observe(event)
    assert stats.usage is None and stats.input_tokens is None
    assert stats.to_dict()["usage"] is None
    caplog.set_level(logging.INFO, logger="streamflow.test_usage")
    streamflow.run_sync(NO_USAGE, LogSink("streamflow.test_usage"), dialect="openai-chat")
    (record,) = [r for r in caplog.records if r.name == "streamflow.test_usage"]
    assert record.usage is None  # type: ignore[attr-defined]
    assert record.input_tokens is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("target", ["vercel-ui", "ag-ui"])
def test_a_ui_turn_without_usage_says_none(target: str) -> None:
    out = b"".join(encode(events_of(NO_USAGE), target)).decode()
    frames = [json.loads(line[6:]) for line in out.splitlines() if line.startswith("data: {")]
    if target == "vercel-ui":
        meta = [f["messageMetadata"] for f in frames if "messageMetadata" in f][-1]
        streamflow_meta = meta["streamflow"] if "streamflow" in meta else meta
        assert streamflow_meta["usage_metadata"] is None, meta
    else:
        (finished,) = [f for f in frames if f.get("type") == "RUN_FINISHED"]
        assert finished["metadata"]["streamflow"]["usage_metadata"] is None
        assert [set(u) for u in finished["usage"]] == [{"model"}]  # no count in its turn


def test_the_agent_total_of_turns_without_usage_has_no_counts() -> None:
    from streamflow.app.agent import total_usage

    total = total_usage([assemble(NO_USAGE, "openai-chat").usage, None])
    assert (total.prompt_tokens, total.response_tokens, total.cost) == (None, None, None)
    total = total_usage([assemble(NO_USAGE, "openai-chat").usage,
                         assemble(WITH_USAGE, "openai-chat").usage])
    assert (total.prompt_tokens, total.response_tokens) == (3, 1)
