"""OtelSink over an answer a failover chain continued: the span's attempts, stalls and
inter-chunk p50/p99, the retry span event of a continuation, and the
``gen_ai.client.operation.time_per_output_chunk`` histogram (one record per gap), read
back with opentelemetry-sdk's in-memory exporter and reader (asyncio, trio)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from continued_stream import (
    Clock,
    ContinuingSource,
    continued_call,
    continued_text,
    delivery,
    paced,
    second_attempt,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import streamflow
from streamflow.core.delivery import DELIVERY
from streamflow.core.errors import ProviderError
from streamflow.core.events import TextItem, UniEvent, Usage
from streamflow.core.outcome import StreamRestart
from streamflow.reactive.sinks import semconv as sc
from streamflow.reactive.sinks.otel import OtelSink


class Telemetry:
    """An OtelSink wired to in-memory spans and metrics, timed by ``clock``."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer = TracerProvider()
        tracer.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.clock = Clock()
        self.sink = OtelSink(dialect="anthropic", model="claude-test", tracer_provider=tracer,
                             meter_provider=MeterProvider(metric_readers=[self.reader]))
        self.sink.stats.clock = self.clock
        self.sink.reset()  # the stream's clock starts at the injected 0.0

    def span(self) -> ReadableSpan:
        (span,) = self.spans.get_finished_spans()
        return span

    def attrs(self) -> dict[str, Any]:
        return dict(self.span().attributes or {})

    def histogram(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += list(metric.data.data_points)
        return found

    def feed(self, items: list[Any]) -> None:
        tick = paced(self.clock)
        for item in items:
            tick(item)
            self.sink.on_next(item)
        self.sink.on_completed()


@pytest.mark.anyio
async def test_a_continued_answers_span_names_its_attempts_stalls_and_cadence() -> None:
    otel = Telemetry()
    await streamflow.run(ContinuingSource(continued_call(), on_emit=paced(otel.clock)),
                         otel.sink)
    attrs = otel.attrs()
    assert attrs[sc.STREAMFLOW_ATTEMPTS] == 2 and attrs[sc.STREAMFLOW_STALLS] == 1
    # content at .25 .5 | 1.0 1.25 | (2 s of failover) 3.5 3.75: gaps .25 .5 .25 2.25 .25
    assert attrs[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == 0.25
    assert attrs[sc.STREAMFLOW_INTER_CHUNK_P50] == 0.25
    assert attrs[sc.STREAMFLOW_INTER_CHUNK_P99] == 2.25
    assert attrs[sc.GEN_AI_RESPONSE_ID] == "msg_1"
    assert attrs[sc.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)


@pytest.mark.anyio
async def test_a_continuation_is_a_retry_event_with_its_dropped_groups_and_endpoint() -> None:
    otel = Telemetry()
    await streamflow.run(ContinuingSource(continued_call()), otel.sink)
    (event,) = otel.span().events
    assert event.name == sc.STREAMFLOW_RETRY_EVENT
    assert dict(event.attributes or {}) == {
        sc.STREAMFLOW_RETRY_ATTEMPT: 2, sc.ERROR_TYPE: "StreamTimeoutError",
        sc.STREAMFLOW_RETRY_DROPPED: 1, sc.STREAMFLOW_RETRY_ENDPOINT: "backup"}


def test_a_continuation_that_drops_nothing_says_zero_groups() -> None:
    otel = Telemetry()
    otel.feed(continued_text())
    (event,) = otel.span().events
    assert dict(event.attributes or {})[sc.STREAMFLOW_RETRY_DROPPED] == 0
    assert otel.span().attributes[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == 0.25  # type: ignore[index]


def test_a_whole_restarts_event_names_no_groups_and_no_endpoint() -> None:
    otel = Telemetry()
    failed = UniEvent("delta", [TextItem("text.delta", "Hel")])
    otel.feed([failed, StreamRestart(ProviderError("down", code=503), 2, 1, 0.5),
               *second_attempt()])
    (event,) = otel.span().events
    assert dict(event.attributes or {}) == {sc.STREAMFLOW_RETRY_ATTEMPT: 2,
                                           sc.ERROR_TYPE: "ProviderError"}
    attrs = otel.attrs()
    assert attrs[sc.STREAMFLOW_ATTEMPTS] == 2
    assert attrs[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] == 2.5  # the new attempt's token


def test_an_endpoint_name_cannot_put_control_characters_in_the_event() -> None:
    otel = Telemetry()
    items = continued_text(endpoint="evil\x1b[2J\nname")
    otel.feed(items)
    (event,) = otel.span().events
    endpoint = str(dict(event.attributes or {})[sc.STREAMFLOW_RETRY_ENDPOINT])
    assert "\x1b" not in endpoint and "\n" not in endpoint and "evil" in endpoint


def test_the_stops_record_gives_the_spans_attempts_and_stalls() -> None:
    otel = Telemetry()
    otel.feed([UniEvent("delta", [TextItem("text.delta", "Hi")]),
               UniEvent("stop", [], Usage(), "stop", 0,
                        {DELIVERY: delivery(stalls=2, attempts=3)})])
    attrs = otel.attrs()
    assert (attrs[sc.STREAMFLOW_ATTEMPTS], attrs[sc.STREAMFLOW_STALLS]) == (3, 2)


def test_a_plain_stream_has_one_attempt_no_stall_and_no_gap_attribute_for_one_chunk() -> None:
    otel = Telemetry()
    otel.feed([UniEvent("delta", [TextItem("text.delta", "Hi")]),
               UniEvent("stop", [], Usage(), "stop")])
    attrs = otel.attrs()
    assert (attrs[sc.STREAMFLOW_ATTEMPTS], attrs[sc.STREAMFLOW_STALLS]) == (1, 0)
    assert sc.STREAMFLOW_INTER_CHUNK_P50 not in attrs  # no gap with a single chunk
    assert sc.STREAMFLOW_INTER_CHUNK_P99 not in attrs
    assert otel.histogram(sc.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK) == []


# -- gen_ai.client.operation.time_per_output_chunk -----------------------------------------

def test_time_per_output_chunk_records_each_gap_once() -> None:
    otel = Telemetry()
    otel.feed(continued_call())
    (point,) = otel.histogram(sc.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK)
    assert point.count == 5  # six content fragments: five gaps
    assert point.sum == pytest.approx(0.25 + 0.5 + 0.25 + 2.25 + 0.25)
    assert (point.min, point.max) == (0.25, 2.25)
    assert list(point.explicit_bounds) == list(sc.DURATION_BUCKETS)
    attributes = dict(point.attributes)
    assert attributes[sc.GEN_AI_RESPONSE_MODEL] == "primary-model"
    assert attributes[sc.GEN_AI_REQUEST_MODEL] == "claude-test"
    assert attributes[sc.GEN_AI_PROVIDER_NAME] == "anthropic"


def test_a_whole_restart_records_only_the_last_attempts_gaps() -> None:
    otel = Telemetry()
    first = [UniEvent("delta", [TextItem("text.delta", w)]) for w in ("a", "b", "c")]
    otel.feed([*first, StreamRestart(ProviderError("down", code=503), 2, 3, 0.5),
               *second_attempt()])
    (point,) = otel.histogram(sc.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK)
    assert point.count == 1  # the new attempt's two fragments: one gap
    assert point.sum == pytest.approx(0.25)


def test_each_stream_of_a_reused_sink_adds_its_own_gaps() -> None:
    otel = Telemetry()
    otel.feed(continued_call())
    for item in continued_text():  # a second stream, untimed: its one gap is 0 s
        otel.sink.on_next(item)
    otel.sink.on_completed()
    (point,) = otel.histogram(sc.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK)
    assert point.count == 5 + 1  # the text stream: two fragments, one gap
