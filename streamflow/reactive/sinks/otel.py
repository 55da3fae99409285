"""OpenTelemetry sink: one GenAI client span and its metrics per stream (extra ``otel``).

:class:`OtelSink` needs ``opentelemetry-api`` (``pip install 'streamflow-llm[otel]'``);
it is imported when the sink is created, with a clear error when missing. Spans
are named ``chat {model}`` (control characters in the model shown as visible
escapes, :func:`~streamflow.reactive.sinks.sanitize.escape_controls`; attributes keep the
raw strings) and carry the GenAI semantic-convention attributes
(names in :mod:`streamflow.reactive.sinks.semconv`)::

    gen_ai.operation.name           "chat"
    gen_ai.provider.name            from the dialect (anthropic, openai, gcp.gemini,
                                    aws.bedrock, ollama...)
    gen_ai.request.model            the model asked for (when given)
    gen_ai.response.id / .model     what the provider reported
    gen_ai.response.finish_reasons  [the UniEvent finish reason]
    gen_ai.usage.input_tokens / output_tokens
    gen_ai.usage.cache_read.input_tokens / cache_creation.input_tokens /
    gen_ai.usage.reasoning.output_tokens   when the provider counts them
    gen_ai.response.time_to_first_chunk    seconds to the first content fragment
    streamflow.inter_chunk.p50 / .p99      seconds between content fragments
    streamflow.attempts / streamflow.stalls   requests made for the answer (a retry or a
                                    failover chain's), those ended by a stall timeout

and records the GenAI client metrics (histograms, with the conventions' bucket
boundaries) through ``meter_provider`` (default: the global one)::

    gen_ai.client.operation.duration            s, every stream (error.type when it failed)
    gen_ai.client.token.usage                   {token}, gen_ai.token.type input / output
    gen_ai.client.operation.time_to_first_chunk s, when a content fragment arrived
    gen_ai.client.operation.time_per_output_chunk s, each gap after the first fragment
                                                (the stream's sample: at most 16,384)

each with ``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model`` and ``gen_ai.response.model`` where known.

The span starts at the sink's creation time (create it right before the request,
or call :meth:`OtelSink.reset`) and ends on the stop/complete, on an error (status
ERROR, ``error.type`` = the exception class name, exception recorded) or on
cancellation (``error.type = "cancelled"``). A new attempt adds a ``streamflow.retry``
span event (a continuation's with the groups it dropped and its endpoint). It is a
child of ``parent`` (a span) when given, else of the current span. An Agent run's
``invoke_agent`` and ``execute_tool`` spans are
:class:`~streamflow.reactive.sinks.otel_agent.AgentTelemetry`'s.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from ...core.errors import CancelledStreamError, StreamflowError
from ...core.events import UniEvent
from ...core.outcome import StreamRestart
from ...wire.redaction import redact_text, scrub_error
from . import semconv as sc
from .base import BaseSink
from .sanitize import escape_controls
from .stats import StreamStats

__all__ = ["ClientMetrics", "OtelSink"]

INSTRUMENTATION = "streamflow"


def _trace_api() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        raise ImportError("OtelSink needs the OpenTelemetry API: "
                          "pip install 'streamflow-llm[otel]' (opentelemetry-api)") from None
    return trace


def record_exception(span: Any, error: BaseException) -> None:
    """``span.record_exception(error)`` with no credential in the event: the error is
    scrubbed first and its message and stack trace masked again as written."""
    scrub_error(error)
    stack = "".join(traceback.format_exception(error))
    span.record_exception(error, attributes={"exception.message": redact_text(str(error)),
                                             "exception.stacktrace": redact_text(stack)})


class ClientMetrics:
    """The GenAI client histograms of one meter (see the module doc)."""

    def __init__(self, meter_provider: Any = None, meter: Any = None) -> None:
        _trace_api()
        from opentelemetry import metrics

        if meter is None:
            meter = metrics.get_meter(INSTRUMENTATION, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            sc.GEN_AI_CLIENT_OPERATION_DURATION, unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=sc.DURATION_BUCKETS)
        self.tokens = meter.create_histogram(
            sc.GEN_AI_CLIENT_TOKEN_USAGE, unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=sc.TOKEN_BUCKETS)
        self.first_chunk = meter.create_histogram(
            sc.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK, unit="s",
            description="Time to receive the first chunk in a streaming response",
            explicit_bucket_boundaries_advisory=sc.DURATION_BUCKETS)
        self.per_chunk = meter.create_histogram(
            sc.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK, unit="s",
            description="Time per output chunk after the first one in a streaming response",
            explicit_bucket_boundaries_advisory=sc.DURATION_BUCKETS)

    def record(self, stats: StreamStats, attributes: dict[str, Any],
               error_type: str | None) -> None:
        """One finished stream: its duration, token counts, time to first chunk and the
        time per output chunk (each gap of the stream's sample of gaps)."""
        base = dict(attributes)
        if stats.response_model:
            base[sc.GEN_AI_RESPONSE_MODEL] = stats.response_model
        timed = {**base, sc.ERROR_TYPE: error_type} if error_type else base
        self.duration.record(stats.duration_s, timed)
        if stats.ttft_s is not None:
            self.first_chunk.record(stats.ttft_s, base)
        for gap in stats.cadence.gaps:
            self.per_chunk.record(gap, base)
        usage = stats.usage
        if usage is not None:
            for kind, count in ((sc.TOKEN_TYPE_INPUT, usage.prompt_tokens),
                                (sc.TOKEN_TYPE_OUTPUT, usage.response_tokens)):
                if type(count) is int:
                    self.tokens.record(count, {**base, sc.GEN_AI_TOKEN_TYPE: kind})


class OtelSink(BaseSink):
    """Emits one span per stream through ``tracer`` (default: the global tracer provider).

    ``tracer_provider`` or ``tracer`` select where spans go (tests pass an SDK
    provider with an in-memory exporter), ``meter_provider`` or ``metrics`` where the
    metrics go (``metrics=False``: none). Reusable: after a stream ended, the next
    event starts a new span.
    """

    def __init__(self, *, dialect: str | None = None, model: str | None = None,
                 tracer: Any = None, tracer_provider: Any = None,
                 operation: str = sc.OPERATION_CHAT, meter_provider: Any = None,
                 metrics: ClientMetrics | bool = True, parent: Any = None) -> None:
        trace = _trace_api()
        self._trace = trace
        if tracer is None:
            tracer = trace.get_tracer(INSTRUMENTATION, tracer_provider=tracer_provider)
        self.tracer = tracer
        self.operation = operation
        self.metrics: ClientMetrics | None = (
            metrics if isinstance(metrics, ClientMetrics)
            else ClientMetrics(meter_provider) if metrics else None)
        self.parent = parent
        self.stats = StreamStats(dialect=dialect, request_model=model, clock=time.monotonic)
        self.span: Any = None
        self.reset()

    def reset(self) -> None:
        """Start timing a new stream (its span opens at the first event or the end)."""
        self.stats.reset()
        self.span = None
        self._start_ns = time.time_ns()

    def _common(self) -> dict[str, Any]:
        """The attributes of the span and the metrics known before the response."""
        stats = self.stats
        attributes: dict[str, Any] = {sc.GEN_AI_OPERATION_NAME: self.operation}
        provider = sc.provider_name(stats.dialect)
        if provider:
            attributes[sc.GEN_AI_PROVIDER_NAME] = provider
        if stats.request_model:
            attributes[sc.GEN_AI_REQUEST_MODEL] = stats.request_model
        return attributes

    def _open(self) -> Any:
        if self.span is None:
            stats = self.stats
            attributes = self._common()
            if stats.dialect:
                attributes[sc.STREAMFLOW_DIALECT] = stats.dialect
            model = stats.request_model or stats.response_model
            context = (self._trace.set_span_in_context(self.parent)
                       if self.parent is not None else None)
            self.span = self.tracer.start_span(
                escape_controls(sc.span_name(model, self.operation)), context=context,
                kind=self._trace.SpanKind.CLIENT, attributes=attributes,
                start_time=self._start_ns)
        return self.span

    @property
    def finished(self) -> bool:
        """True once the span ended."""
        return self.stats.done

    takes_discards = True

    def on_restart(self, notice: StreamRestart) -> None:
        """Add a ``streamflow.retry`` span event (a continuation's endpoint and the groups
        it dropped with it); the span goes on."""
        attributes: dict[str, Any] = {sc.STREAMFLOW_RETRY_ATTEMPT: notice.attempt,
                                      sc.ERROR_TYPE: type(notice.error).__name__}
        if not notice.whole:
            attributes[sc.STREAMFLOW_RETRY_DROPPED] = notice.groups
            if notice.endpoint:
                attributes[sc.STREAMFLOW_RETRY_ENDPOINT] = escape_controls(notice.endpoint)
        self._open().add_event(sc.STREAMFLOW_RETRY_EVENT, attributes)
        self.stats.restart(notice)

    def on_event(self, event: UniEvent) -> None:
        """Observe an event; the first one opens the span."""
        if self.stats.done:
            self.reset()
        self.stats.observe(event)
        self._open()

    def on_error(self, error: Exception) -> None:
        """End the span as failed (or cancelled)."""
        self._end(error)

    def on_completed(self) -> None:
        """End the span as completed."""
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        stats = self.stats
        if stats.done:
            return
        stats.finish(error)
        span = self._open()
        span.set_attributes(self._response_attributes())
        error_type: str | None = None
        if error is not None:
            cancelled = isinstance(error, CancelledStreamError)
            error_type = sc.ERROR_CANCELLED if cancelled else type(error).__name__
            span.set_attribute(sc.ERROR_TYPE, error_type)
            message = error.message if isinstance(error, StreamflowError) else str(error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR,
                                               escape_controls(redact_text(message))))
            if not cancelled:
                record_exception(span, error)
        span.end()
        if self.metrics is not None:
            self.metrics.record(stats, self._common(), error_type)

    def _response_attributes(self) -> dict[str, Any]:
        stats = self.stats
        out: dict[str, Any] = {}
        if stats.id:
            out[sc.GEN_AI_RESPONSE_ID] = stats.id
        if stats.response_model:
            out[sc.GEN_AI_RESPONSE_MODEL] = stats.response_model
        if stats.finish_reason:
            out[sc.GEN_AI_RESPONSE_FINISH_REASONS] = [stats.finish_reason]
        if stats.ttft_s is not None:
            out[sc.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = stats.ttft_s
        for key, q in ((sc.STREAMFLOW_INTER_CHUNK_P50, 0.5), (sc.STREAMFLOW_INTER_CHUNK_P99, 0.99)):
            gap = stats.gap_s(q)
            if gap is not None:
                out[key] = gap
        out[sc.STREAMFLOW_ATTEMPTS] = stats.attempts
        out[sc.STREAMFLOW_STALLS] = stats.stalls
        usage = stats.usage
        if usage is not None:
            raw = usage.provider or {}
            counters = {
                sc.GEN_AI_USAGE_INPUT_TOKENS: usage.prompt_tokens,
                sc.GEN_AI_USAGE_OUTPUT_TOKENS: usage.response_tokens,
                sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: usage.cached_tokens,
                sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: usage.thoughts_tokens,
                sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS:
                    raw.get("cache_creation_input_tokens") if isinstance(raw, dict) else None,
            }
            out.update({k: v for k, v in counters.items() if type(v) is int})
            if usage.cost is not None:
                out[sc.STREAMFLOW_COST] = float(usage.cost)
        return out
