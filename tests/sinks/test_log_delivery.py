"""LogSink over an answer a failover chain continued: one record with the attempts, the
stalls and the gaps between chunks (p50, p99), read from an injected clock (asyncio, trio).
"""

from __future__ import annotations

import logging

import pytest
from continued_stream import (
    Clock,
    ContinuingSource,
    continued_call,
    continued_text,
    delivery,
    paced,
    second_attempt,
)

import streamflow
from streamflow.core.delivery import DELIVERY
from streamflow.core.errors import ProviderError
from streamflow.core.events import TextItem, UniEvent, Usage
from streamflow.core.outcome import StreamRestart
from streamflow.reactive.sinks.log import LogSink

LOGGER = "streamflow.test.delivery"


def the_record(caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    return record


@pytest.mark.anyio
async def test_a_continued_answer_logs_two_attempts_one_stall_and_its_cadence(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    sink = LogSink(LOGGER, dialect="anthropic", clock=clock)
    message = await streamflow.run(ContinuingSource(continued_call(), on_emit=paced(clock)),
                                   sink)
    fields = the_record(caplog).__dict__
    assert fields["status"] == "completed" and fields["finish_reason"] == "tool_call"
    assert fields["attempts"] == 2 and fields["stalls"] == 1
    # content at .25 .5 | 1.0 1.25 | (2 s of failover) 3.5 3.75: gaps .25 .5 .25 2.25 .25
    assert fields["ttft_s"] == 0.25
    assert fields["inter_chunk_p50_s"] == 0.25 and fields["inter_chunk_p99_s"] == 2.25
    assert fields["duration_s"] == 4.25
    assert fields["tools"] == [c.name for c in message.tool_calls] == ["get_weather"]
    assert fields["id"] == "msg_1" and fields["output_tokens"] == 12
    assert fields["streamflow"]["stalls"] == 1  # the JSON formatters' one dict, too


@pytest.mark.anyio
async def test_a_continuation_of_text_keeps_the_first_token_time(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    sink = LogSink(LOGGER, clock=clock)
    message = await streamflow.run(ContinuingSource(continued_text(), on_emit=paced(clock)),
                                   sink)
    fields = the_record(caplog).__dict__
    assert message.text == "The answer is forty-two."
    assert fields["ttft_s"] == 0.25  # not the continuation's first token (2.5 s)
    assert fields["inter_chunk_p99_s"] == 2.25  # the failover: the one gap the user waited
    assert fields["fragments"] == {"text": 2} and fields["items"] == {"text": 1}
    assert (fields["attempts"], fields["stalls"]) == (2, 1)


def test_the_stops_record_counts_attempts_that_never_gave_output(
        caplog: pytest.LogCaptureFixture) -> None:
    """Two endpoints failed before their first byte (no notice reached the sink); the
    third answered: the record says three attempts, two of them stalls."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    sink = LogSink(LOGGER, clock=Clock())
    for event in [UniEvent("delta", [TextItem("text.delta", "Hi")]),
                  UniEvent("stop", [], Usage(), "stop", 0,
                           {DELIVERY: delivery(stalls=2, attempts=3)})]:
        sink.on_next(event)
    sink.on_completed()
    fields = the_record(caplog).__dict__
    assert (fields["attempts"], fields["stalls"]) == (3, 2)


def test_a_whole_restart_still_forgets_the_failed_attempt_in_the_record(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    sink = LogSink(LOGGER, clock=clock)
    tick = paced(clock)
    failed = UniEvent("delta", [TextItem("text.delta", "Hel")],
                      provider={"id": "msg_a", "model": "m-a"})
    notice = StreamRestart(ProviderError("overloaded", type="overloaded_error"), 2, 1, 0.5)
    for item in [failed, notice, *second_attempt()]:
        tick(item)
        sink.on_next(item)
    sink.on_completed()
    fields = the_record(caplog).__dict__
    assert fields["attempts"] == 2 and fields["stalls"] == 1  # the stop's record: 1 stall
    assert fields["id"] is None  # msg_a was the failed attempt's
    assert fields["ttft_s"] == 2.5  # the new attempt's first token, from the stream's start
    assert "text" not in fields["fragments"]
