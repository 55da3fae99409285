"""OtelSink's GenAI client metrics, read back with opentelemetry-sdk's InMemoryMetricReader."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from streamflow.core.errors import ProviderError
from streamflow.core.events import UniEvent, Usage
from streamflow.reactive.sinks import semconv as sc
from streamflow.reactive.sinks.otel import OtelSink
from streamflow.wire.dialects.base import Emitter


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def sink(reader: InMemoryMetricReader) -> OtelSink:
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    return OtelSink(dialect="anthropic", model="claude-test", tracer_provider=spans,
                    meter_provider=MeterProvider(metric_readers=[reader]))


def events(*, usage: bool = True) -> list[UniEvent]:
    em = Emitter()
    em.note({"id": "msg_7", "model": "claude-test-2025"})
    em.text("Hello")
    em.stop(Usage(prompt_tokens=25, response_tokens=40) if usage else None, "stop")
    return em.drain()


def points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Every histogram point by metric name: (attributes, the point)."""
    data = reader.get_metrics_data()
    out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                out[metric.name] = [(dict(p.attributes or {}), p)
                                    for p in metric.data.data_points]
    return out


def test_a_stream_records_duration_tokens_and_time_to_first_chunk(
        reader: InMemoryMetricReader, sink: OtelSink) -> None:
    reactivex.from_iterable(events()).subscribe(sink)
    got = points(reader)
    base = {sc.GEN_AI_OPERATION_NAME: "chat", sc.GEN_AI_PROVIDER_NAME: "anthropic",
            sc.GEN_AI_REQUEST_MODEL: "claude-test", sc.GEN_AI_RESPONSE_MODEL: "claude-test-2025"}
    (duration,) = got[sc.GEN_AI_CLIENT_OPERATION_DURATION]
    assert duration[0] == base and duration[1].count == 1
    assert isinstance(duration[1], HistogramDataPoint)
    assert list(duration[1].explicit_bounds) == list(sc.DURATION_BUCKETS)
    tokens = {a[sc.GEN_AI_TOKEN_TYPE]: p.sum for a, p in got[sc.GEN_AI_CLIENT_TOKEN_USAGE]}
    assert tokens == {"input": 25, "output": 40}
    assert all({k: v for k, v in a.items() if k != sc.GEN_AI_TOKEN_TYPE} == base
               for a, _ in got[sc.GEN_AI_CLIENT_TOKEN_USAGE])
    (first,) = got[sc.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK]
    assert first[0] == base and first[1].count == 1
    assert first[1].sum <= duration[1].sum


def test_a_failed_stream_records_its_error_type_and_no_tokens(
        reader: InMemoryMetricReader, sink: OtelSink) -> None:
    sink.on_error(ProviderError("rate limited", code=429))
    got = points(reader)
    (duration,) = got[sc.GEN_AI_CLIENT_OPERATION_DURATION]
    assert duration[0][sc.ERROR_TYPE] == "ProviderError"
    assert sc.GEN_AI_CLIENT_TOKEN_USAGE not in got
    assert sc.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK not in got  # no chunk came


def test_each_stream_of_a_reused_sink_is_one_measurement(
        reader: InMemoryMetricReader, sink: OtelSink) -> None:
    reactivex.from_iterable(events()).subscribe(sink)
    reactivex.from_iterable(events(usage=False)).subscribe(sink)
    got = points(reader)
    assert got[sc.GEN_AI_CLIENT_OPERATION_DURATION][0][1].count == 2
    assert sum(p.count for _, p in got[sc.GEN_AI_CLIENT_TOKEN_USAGE]) == 2  # 1st stream only


def test_metrics_can_be_turned_off(reader: InMemoryMetricReader) -> None:
    sink = OtelSink(dialect="anthropic", tracer_provider=TracerProvider(), metrics=False,
                    meter_provider=MeterProvider(metric_readers=[reader]))
    reactivex.from_iterable(events()).subscribe(sink)
    assert points(reader) == {}
