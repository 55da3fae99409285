"""No log or trace injection: provider strings reach a log line or span name escaped.

Each escape class a hostile provider could put into a response id, a model name,
a tool name or an error message is tried; the formatted record must stay one line
with no control character, while the structured ``extra`` fields keep the raw value.
"""

from __future__ import annotations

import io
import logging
import re

import pytest
import reactivex
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from streamflow.core.errors import ProviderError
from streamflow.core.events import UniEvent, Usage
from streamflow.reactive.sinks import semconv as sc
from streamflow.reactive.sinks.log import LogSink
from streamflow.reactive.sinks.otel import OtelSink
from streamflow.reactive.sinks.sanitize import escape_controls
from streamflow.wire.dialects.base import Emitter

ESCAPES = {
    "newline forging a record": "m\nINFO auth user=admin login ok",
    "CSI 2J clear screen": "m\x1b[2J\x1b[H",
    "OSC 52 clipboard": "m\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "OSC 8 hyperlink": "m\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "OSC 0 title": "m\x1b]0;pwned\x07",
    "DCS": "m\x1bP1$qm\x1b\\",
    "APC": "m\x1b_payload\x1b\\",
    "ESC c reset": "m\x1bc",
    "raw C1 CSI U+009B": "m\x9b2J",
    "raw C1 OSC U+009D and ST U+009C": "m\x9d0;title\x9c",
    "bidi override U+202E": "m\u202etxt.exe",
    "backspace": "admin\x08\x08\x08\x08\x08guest",
    "carriage return": "ok\rERROR forged",
}
# what must never reach a formatted line: C0 (but the record's own end), DEL, C1, bidi
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def hostile_stream(value: str) -> list[UniEvent]:
    em = Emitter()
    em.note({"id": f"msg_{value}", "model": value})
    em.text("hi")
    em.tool_call("{}", f"tool_{value}", "call_1", new=True)
    em.stop(Usage(prompt_tokens=1, response_tokens=2), "tool_call")
    return em.drain()


def formatted(sink: LogSink,
              stream: reactivex.Observable[UniEvent]) -> tuple[str, logging.LogRecord]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    captured: list[logging.LogRecord] = []
    handler.addFilter(lambda record: captured.append(record) or True)
    sink.logger.addHandler(handler)
    sink.logger.setLevel(logging.INFO)
    sink.logger.propagate = False
    try:
        stream.subscribe(sink)
    finally:
        sink.logger.removeHandler(handler)
    (record,) = captured
    return out.getvalue(), record


@pytest.mark.parametrize("value", list(ESCAPES.values()), ids=list(ESCAPES))
def test_log_line_escapes_every_provider_string(value: str) -> None:
    sink = LogSink(f"streamflow.inject.{abs(hash(value))}", dialect="anthropic")
    text, record = formatted(sink, reactivex.from_iterable(hostile_stream(value)))
    assert text.count("\n") == 1 and text.endswith("\n")  # one record, one line
    assert UNSAFE.search(text[:-1]) is None
    assert escape_controls(value) in text
    assert f"tools=tool_{escape_controls(value)}" in text
    assert record.model == value and record.id == f"msg_{value}"  # type: ignore[attr-defined]
    assert record.tools == [f"tool_{value}"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", list(ESCAPES.values()), ids=list(ESCAPES))
def test_log_line_escapes_the_error_message(value: str) -> None:
    sink = LogSink(f"streamflow.inject.err.{abs(hash(value))}")
    failing = reactivex.from_iterable(hostile_stream(value)[:2]).pipe(
        lambda source: reactivex.concat(source, reactivex.throw(
            ProviderError(f"overloaded {value}", type=value))))
    text, record = formatted(sink, failing)
    assert text.count("\n") == 1 and UNSAFE.search(text[:-1]) is None
    assert f"overloaded {escape_controls(value)}" in text
    assert record.levelno == logging.ERROR
    assert record.error_message == f"overloaded {value}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", list(ESCAPES.values()), ids=list(ESCAPES))
def test_span_name_escapes_the_model(value: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OtelSink(dialect="anthropic", tracer_provider=provider)
    reactivex.from_iterable(hostile_stream(value)).subscribe(sink)
    (span,) = exporter.get_finished_spans()
    assert UNSAFE.search(span.name) is None
    assert span.name == f"chat {escape_controls(value)}"
    assert (span.attributes or {})[sc.GEN_AI_RESPONSE_MODEL] == value  # raw attribute


def test_requested_model_in_the_span_name_is_escaped_too() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OtelSink(model="x\x1b]0;t\x07\ny", tracer_provider=provider)
    sink.on_error(ProviderError("bad\r\nthing"))
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat x\\x1b]0;t\\x07\\ny"
    assert span.status.description == "bad\\r\\nthing"
