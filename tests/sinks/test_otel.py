"""OtelSink: one GenAI-semconv client span per stream, ended on complete, error or cancel."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import reactivex

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from streamflow.app.runtime import run
from streamflow.core.errors import CancelledStreamError, ProviderError
from streamflow.core.events import UniEvent, Usage
from streamflow.reactive.operators.on_error import StreamRestart
from streamflow.reactive.sinks import semconv as sc
from streamflow.reactive.sinks.otel import OtelSink
from streamflow.reactive.sources import from_iterable
from streamflow.wire.dialects.base import Emitter


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


def events(*, stop: bool = True) -> list[UniEvent]:
    em = Emitter()
    em.note({"id": "msg_7", "model": "claude-sonnet-test-20250101"})
    em.thinking("plan")
    em.text("Hello")
    if stop:
        raw = {"input_tokens": 10, "cache_creation_input_tokens": 5}
        em.stop(Usage(prompt_tokens=25, response_tokens=40, cached_tokens=10, thoughts_tokens=8,
                      cost=0.002, provider=raw), "stop")
    return em.drain()


def only_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_completed_stream_span(exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
    sink = OtelSink(dialect="anthropic", model="claude-sonnet-test", tracer_provider=provider)
    reactivex.from_iterable(events()).subscribe(sink)
    span = only_span(exporter)
    assert span.name == "chat claude-sonnet-test"
    assert span.kind == SpanKind.CLIENT
    assert span.status.status_code == StatusCode.UNSET
    assert attrs(span) == {
        sc.GEN_AI_OPERATION_NAME: "chat",
        sc.GEN_AI_PROVIDER_NAME: "anthropic",
        sc.STREAMFLOW_DIALECT: "anthropic",
        sc.GEN_AI_REQUEST_MODEL: "claude-sonnet-test",
        sc.GEN_AI_RESPONSE_ID: "msg_7",
        sc.GEN_AI_RESPONSE_MODEL: "claude-sonnet-test-20250101",
        sc.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
        sc.GEN_AI_USAGE_INPUT_TOKENS: 25,
        sc.GEN_AI_USAGE_OUTPUT_TOKENS: 40,
        sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: 10,
        sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: 5,
        sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: 8,
        sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: attrs(span)[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK],
        sc.STREAMFLOW_INTER_CHUNK_P50: attrs(span)[sc.STREAMFLOW_INTER_CHUNK_P50],
        sc.STREAMFLOW_INTER_CHUNK_P99: attrs(span)[sc.STREAMFLOW_INTER_CHUNK_P99],
        sc.STREAMFLOW_ATTEMPTS: 1,
        sc.STREAMFLOW_STALLS: 0,
        sc.STREAMFLOW_COST: 0.002,
    }
    assert span.end_time is not None and span.start_time is not None
    assert span.end_time >= span.start_time


def test_error_ends_span_with_error_type(exporter: InMemorySpanExporter,
                                          provider: TracerProvider) -> None:
    sink = OtelSink(dialect="openai-chat", tracer_provider=provider)
    for event in events(stop=False):
        sink.on_next(event)
    sink.on_error(ProviderError("rate limited", code=429))
    sink.on_completed()  # ignored: the span already ended
    span = only_span(exporter)
    assert span.name == "chat claude-sonnet-test-20250101"  # the response model names it
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "rate limited"
    assert attrs(span)[sc.ERROR_TYPE] == "ProviderError"
    assert attrs(span)[sc.GEN_AI_PROVIDER_NAME] == "openai"
    assert sc.GEN_AI_RESPONSE_FINISH_REASONS not in attrs(span)
    assert [e.name for e in span.events] == ["exception"]


def test_cancel_sets_error_type_cancelled(exporter: InMemorySpanExporter,
                                          provider: TracerProvider) -> None:
    sink = OtelSink(dialect="gemini", model="gemini-x", tracer_provider=provider)
    sink.on_next(events(stop=False)[0])
    sink.on_error(CancelledStreamError("Ctrl-C"))
    span = only_span(exporter)
    assert attrs(span)[sc.ERROR_TYPE] == "cancelled"
    assert attrs(span)[sc.GEN_AI_PROVIDER_NAME] == "gcp.gemini"
    assert span.status.status_code == StatusCode.ERROR


def test_error_before_any_event_still_gives_a_span(exporter: InMemorySpanExporter,
                                                   provider: TracerProvider) -> None:
    sink = OtelSink(dialect="bedrock", model="nova", tracer_provider=provider)
    sink.on_error(ProviderError("denied", code=403))
    span = only_span(exporter)
    assert span.name == "chat nova" and attrs(span)[sc.GEN_AI_PROVIDER_NAME] == "aws.bedrock"


def test_retries_are_span_events_and_each_stream_gets_a_span(
        exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
    sink = OtelSink(dialect="ollama", model="llama3", tracer_provider=provider)
    sink.on_next(events()[0])
    sink.on_next(StreamRestart(error=ProviderError("x", code=503), attempt=2, discard=1,
                               delay=0.1))
    reactivex.from_iterable(events()).subscribe(sink)
    reactivex.from_iterable(events()).subscribe(sink)
    spans = exporter.get_finished_spans()
    assert len(spans) == 2
    assert [e.name for e in spans[0].events] == [sc.STREAMFLOW_RETRY_EVENT]
    assert attrs(spans[0])[sc.GEN_AI_PROVIDER_NAME] == "ollama"


@pytest.mark.anyio
async def test_span_with_run(exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_9",'
            b'"model":"claude-m","usage":{"input_tokens":3}}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"Hi"}}\n\n'
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
            b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
            b'"end_turn"},"usage":{"output_tokens":2}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    await run(from_iterable([body]), OtelSink(dialect="anthropic", tracer_provider=provider),
              dialect="anthropic")
    span = only_span(exporter)
    assert attrs(span)[sc.GEN_AI_RESPONSE_ID] == "msg_9"
    assert attrs(span)[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 2
    assert attrs(span)[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)


def test_provider_names_follow_semconv() -> None:
    assert sc.provider_name("openai_chat") == "openai"
    assert sc.provider_name("openai-responses") == "openai"
    assert sc.provider_name("my-local") == "my-local"
    assert sc.provider_name(None) is None


def test_missing_opentelemetry_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    with pytest.raises(ImportError, match=r"streamflow-llm\[otel\]"):
        OtelSink(dialect="anthropic")
