"""LogSink: one structured record per stream, never one per token."""

from __future__ import annotations

import json
import logging

import pytest
import reactivex

from streamflow.app.runtime import run
from streamflow.core.errors import CancelledStreamError, ProviderError
from streamflow.core.events import UniEvent, Usage
from streamflow.reactive.operators.on_error import StreamFailure, StreamRestart
from streamflow.reactive.sinks.log import LogSink
from streamflow.reactive.sources import from_iterable
from streamflow.wire.dialects.base import Emitter

LOGGER = "streamflow.test"


class Ticker:
    def __init__(self, step: float = 0.25) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def events(words: int = 100, *, stop: bool = True) -> list[UniEvent]:
    em = Emitter()
    em.note({"id": "msg_42", "model": "claude-test-1"})
    em.thinking("hmm")
    for i in range(words):
        em.text(f"w{i} ")
    em.tool_call('{"x": 1}', "lookup", "call_1", new=True)
    if stop:
        em.stop(Usage(prompt_tokens=20, response_tokens=120, cached_tokens=4), "tool_call")
    return em.drain()


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER]


def test_one_info_record_per_stream_with_json_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    sink = LogSink(LOGGER, dialect="anthropic", model="claude-req", clock=Ticker())
    reactivex.from_iterable(events()).subscribe(sink)
    (record,) = records(caplog)  # 100 tokens, one record
    assert record.levelno == logging.INFO
    fields = record.__dict__
    assert fields["id"] == "msg_42" and fields["model"] == "claude-test-1"
    assert fields["request_model"] == "claude-req" and fields["dialect"] == "anthropic"
    assert fields["finish_reason"] == "tool_call" and fields["status"] == "completed"
    assert fields["usage"]["prompt_tokens"] == 20 and fields["output_tokens"] == 120
    assert fields["items"] == {"thinking": 1, "text": 1, "tool_call": 1}
    assert fields["fragments"]["text"] == 100
    assert fields["ttft_s"] == pytest.approx(0.25) and fields["duration_s"] > fields["ttft_s"]
    assert fields["error_type"] is None
    json.dumps(fields["streamflow"])  # JSON-friendly as a whole
    assert fields["streamflow"] == sink.to_dict()
    assert "msg_42" in record.getMessage() and "finish=tool_call" in record.getMessage()


def test_failure_logs_error_with_type_and_message(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sink = LogSink(LOGGER, clock=Ticker())
    for event in events(stop=False)[:5]:
        sink.on_next(event)
    sink.on_error(ProviderError("Overloaded", code=529, type="overloaded_error"))
    sink.on_completed()  # nothing more after the end
    (record,) = records(caplog)
    assert record.levelno == logging.ERROR
    assert record.__dict__["error_type"] == "ProviderError"
    assert record.__dict__["error_message"] == "Overloaded"
    assert record.__dict__["error"]["error_type"] == "overloaded_error"
    assert record.__dict__["status"] == "error" and record.__dict__["finish_reason"] is None


def test_cancel_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sink = LogSink(LOGGER, clock=Ticker())
    sink.on_next(events()[0])
    sink.on_error(CancelledStreamError("user pressed Ctrl-C"))
    (record,) = records(caplog)
    assert record.levelno == logging.WARNING and record.__dict__["status"] == "cancelled"


def test_converted_failure_and_retries_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sink = LogSink(LOGGER, clock=Ticker())
    failure = ProviderError("boom", code=500)
    sink.on_next(events()[0])
    sink.on_next(StreamRestart(error=failure, attempt=2, discard=1, delay=0.5))
    sink.on_next(events()[1])
    sink.on_next(StreamFailure(error=failure, partial=None))  # type: ignore[arg-type]
    sink.on_completed()
    (record,) = records(caplog)
    assert record.levelno == logging.ERROR and record.__dict__["attempts"] == 2
    assert record.__dict__["events"] == 1  # the failed first attempt is not counted


@pytest.mark.anyio
async def test_with_run_and_reused_for_the_next_stream(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sink = LogSink(logging.getLogger(LOGGER), extra={"session": "s1"})
    for _ in range(2):
        reactivex.from_iterable(events(3)).subscribe(sink)
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_9",'
            b'"model":"m","usage":{"input_tokens":1}}}\n\nevent: message_stop\n'
            b'data: {"type":"message_stop"}\n\n')
    await run(from_iterable([body]), sink, dialect="anthropic")
    got = records(caplog)
    assert len(got) == 3 and all(r.__dict__["session"] == "s1" for r in got)
    assert got[2].__dict__["id"] == "msg_9"
