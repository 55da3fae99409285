"""StreamStats, the figures render, log and OTel report: the gaps between chunks (p50,
p99) from an injected clock, the attempts and stalls from retry and continuation notices
and from a failover chain's stop, and what a whole restart forgets that a continuation
keeps."""

from __future__ import annotations

from typing import Any

import pytest
from continued_stream import ERROR, Clock, continued_call, delivery

from streamflow.core.delivery import DELIVERY, MAX_GAPS
from streamflow.core.errors import IncompleteStreamError, ProviderError, StreamTimeoutError
from streamflow.core.events import TextItem, UniEvent, Usage
from streamflow.core.outcome import StreamRestart
from streamflow.reactive.sinks.stats import StreamStats


def text(value: str, *, done: bool = False) -> UniEvent:
    return UniEvent("delta", [TextItem("text.done" if done else "text.delta", value)])


def stop(provider: dict[str, Any] | None = None) -> UniEvent:
    return UniEvent("stop", [], Usage(prompt_tokens=3, response_tokens=4), "stop", 0, provider)


def timed(stats: StreamStats, clock: Clock, script: list[tuple[float, UniEvent]]) -> None:
    for at, event in script:
        clock.now = at
        stats.observe(event)


def restart(error: Exception, attempt: int = 2, *, groups: int | None = 0,
            endpoint: str | None = "backup") -> StreamRestart:
    return StreamRestart(error, attempt, 0, 0.0, groups=groups, endpoint=endpoint)


# -- the gaps between chunks -----------------------------------------------------------

def test_inter_chunk_p50_and_p99_come_from_the_gaps_between_content_fragments() -> None:
    clock = Clock()
    stats = StreamStats(clock=clock)
    timed(stats, clock, [(1.0, text("a")), (1.25, text("b")), (1.75, text("c")),
                         (2.0, text("d")), (4.0, text("e"))])  # gaps .25 .5 .25 2.0
    assert stats.ttft_s == 1.0
    assert stats.gap_s(0.5) == 0.5 and stats.gap_s(0.99) == 2.0
    data = stats.to_dict()
    assert (data["inter_chunk_p50_s"], data["inter_chunk_p99_s"]) == (0.5, 2.0)


def test_a_groups_end_and_the_stop_are_no_chunk_of_content() -> None:
    """A slow ``.done`` or stop (usage counted late) must not show as a stall in p99."""
    clock = Clock()
    stats = StreamStats(clock=clock)
    timed(stats, clock, [(1.0, text("a")), (1.5, text("b")), (9.0, text("ab", done=True)),
                         (20.0, stop())])
    assert stats.gap_s(0.5) == stats.gap_s(0.99) == 0.5
    assert stats.to_dict()["inter_chunk_p99_s"] == 0.5


def test_no_gap_before_two_fragments() -> None:
    clock = Clock()
    stats = StreamStats(clock=clock)
    assert stats.to_dict()["inter_chunk_p50_s"] is None
    timed(stats, clock, [(0.5, text("only")), (0.7, text("only", done=True)), (0.8, stop())])
    data = stats.to_dict()
    assert data["ttft_s"] == 0.5
    assert data["inter_chunk_p50_s"] is None and data["inter_chunk_p99_s"] is None


def test_a_long_stream_keeps_its_quantiles_in_bounded_memory() -> None:
    import random

    draw = random.Random(7)
    clock = Clock()
    stats = StreamStats(clock=clock)
    now = 0.0
    for _ in range(5 * MAX_GAPS):
        now += 1.0 if draw.random() < 0.03 else 0.01  # about 3 % of the gaps are stalls
        clock.now = now
        stats.observe(text("x"))
    assert len(stats.cadence.gaps) <= MAX_GAPS
    assert stats.gap_s(0.5) == pytest.approx(0.01)
    assert stats.gap_s(0.99) == pytest.approx(1.0)


def test_a_periodic_stall_in_a_long_stream_shows_in_p99() -> None:
    clock = Clock()
    stats = StreamStats(clock=clock)
    now = 0.0
    for i in range(5 * MAX_GAPS):
        now += 1.0 if i % 32 == 3 else 0.01  # one stall every 32 chunks: 3 % of the gaps
        clock.now = now
        stats.observe(text("x"))
    assert stats.gap_s(0.99) == pytest.approx(1.0)


# -- attempts and stalls ---------------------------------------------------------------

@pytest.mark.parametrize(("error", "stalled"), [
    (StreamTimeoutError("idle", 2.0), True),
    (StreamTimeoutError("first_chunk", 5.0), True),
    (StreamTimeoutError("deadline", 60.0), False),  # out of time, not a stall
    (IncompleteStreamError("cut"), False),
    (ProviderError("overloaded", type="overloaded_error"), False),
])
@pytest.mark.parametrize("groups", [None, 0, 1])
def test_every_notice_counts_an_attempt_and_a_stall_only_for_a_stall_timeout(
        error: Exception, stalled: bool, groups: int | None) -> None:
    stats = StreamStats(clock=Clock())
    stats.restart(restart(error, groups=groups))
    stats.restart(restart(error, 3, groups=groups))
    data = stats.to_dict()
    assert data["attempts"] == 3
    assert data["stalls"] == (2 if stalled else 0)


def test_a_failover_stop_counts_the_attempts_that_failed_before_any_output() -> None:
    """Attempts that failed before a byte send no notice: only the stop's record knows."""
    stats = StreamStats(clock=Clock())
    stats.observe(text("hi"))
    stats.observe(stop({DELIVERY: delivery(stalls=2, attempts=3)}))
    assert (stats.attempts, stats.stalls) == (3, 2)
    assert (stats.to_dict()["attempts"], stats.to_dict()["stalls"]) == (3, 2)


def test_notices_and_the_stops_record_of_the_same_attempts_are_not_added_up() -> None:
    stats = StreamStats(clock=Clock())
    for item in continued_call():  # a notice (a stall) and a stop recording the same two
        if isinstance(item, StreamRestart):
            stats.restart(item)
        else:
            stats.observe(item)
    assert (stats.attempts, stats.stalls) == (2, 1)


@pytest.mark.parametrize("record", [None, "not a record", {"attempts": [], "stalls": "2"},
                                    {"attempts": "x", "stalls": 1.5}])
def test_a_stop_without_a_usable_record_leaves_the_counts(record: Any) -> None:
    stats = StreamStats(clock=Clock())
    stats.restart(restart(ERROR))
    stats.observe(stop({DELIVERY: record} if record is not None else None))
    assert (stats.attempts, stats.stalls) == (2, 1)


def test_reset_starts_the_next_stream_with_one_attempt_and_no_stall() -> None:
    stats = StreamStats(clock=Clock())
    stats.restart(restart(ERROR))
    stats.observe(stop({DELIVERY: delivery()}))
    stats.reset()
    assert (stats.attempts, stats.stalls) == (1, 0)


# -- a whole restart forgets, a continuation keeps -------------------------------------

def test_a_whole_restart_forgets_the_failed_attempt() -> None:
    clock = Clock()
    stats = StreamStats(clock=clock)
    timed(stats, clock, [(0.5, UniEvent("delta", [TextItem("text.delta", "Hel")],
                                        provider={"id": "msg_a", "model": "m-a"})),
                         (0.6, text("lo"))])
    clock.now = 3.0
    stats.restart(restart(ProviderError("overloaded", type="overloaded_error"), groups=None))
    timed(stats, clock, [(4.0, UniEvent("delta", [TextItem("text.delta", "Hi")],
                                        provider={"id": "msg_b", "model": "m-b"})),
                         (4.5, text(" there")), (5.0, stop())])
    assert stats.ttft_s == 4.0  # from the stream's start to the new attempt's first token
    assert stats.id == "msg_b" and stats.model == "m-b"
    assert stats.fragments == {"text": 2}  # the failed attempt's two are gone
    assert stats.gap_s(0.5) == stats.gap_s(0.99) == 0.5  # no gap of the failed attempt
    assert stats.attempts == 2


def test_a_continuation_keeps_the_first_token_and_the_gap_across_the_failover() -> None:
    clock = Clock()
    stats = StreamStats(clock=clock)
    timed(stats, clock, [(0.5, UniEvent("delta", [TextItem("text.delta", "The answer is ")],
                                        provider={"id": "msg_1", "model": "primary-model"})),
                         (0.75, text("surely "))])
    clock.now = 2.75
    stats.restart(restart(ERROR, groups=0))
    timed(stats, clock, [(3.0, text("forty-two.")), (3.5, stop())])
    assert stats.ttft_s == 0.5  # the user saw the first token at 0.5 s, whatever came after
    assert stats.id == "msg_1" and stats.model == "primary-model"
    assert stats.fragments == {"text": 3}
    assert sorted(stats.cadence.gaps) == [0.25, 2.25]  # the failover's gap is one the user saw
    assert stats.gap_s(0.99) == 2.25
    assert (stats.attempts, stats.stalls) == (2, 1)


def test_a_continuation_that_drops_a_call_keeps_the_text_before_it() -> None:
    clock = Clock(0.0)
    stats = StreamStats(clock=clock)
    for n, item in enumerate(continued_call(), 1):
        clock.now = n / 4
        if isinstance(item, StreamRestart):
            stats.restart(item)
        else:
            stats.observe(item)
    assert stats.ttft_s == 0.25 and stats.id == "msg_1"
    assert stats.tool_names == ["get_weather"] and stats.items["text"] == 1
    assert stats.finish_reason == "tool_call" and stats.output_tokens == 12


def test_the_calls_a_continuation_drops_and_gets_again_are_counted_once() -> None:
    stats = StreamStats(clock=Clock())
    items = continued_call(whole_call_first=True)
    for item in items:
        if isinstance(item, StreamRestart):
            stats.restart(item)
        else:
            stats.observe(item)
    assert stats.tool_names == ["lookup", "get_weather"]
    assert stats.items == {"text": 1, "tool_call": 2}
