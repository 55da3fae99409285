"""One decode loop: every entry point gives the same events and the same outcome.

``StreamDecoder`` is the only code that frames, sniffs, decodes, ignores what
follows ``stop`` and raises; ``assemble``, ``frame() | decode()``, ``pipeline()``
and ``run_sync`` wrap it. Over the fault bodies of every dialect -- whole, cut at
any byte, with a doubled terminator, with garbage or an oversized line after the
end, mutated -- and any chunking, all five must agree on the events, on the error
(type and message) or its absence, and on the final or partial message. No other
exception than a streamflow error may come out for bad input.
"""

from __future__ import annotations

from typing import Any

import reactivex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import fault_bodies

from streamflow import StreamDecoder, StreamflowError, assemble
from streamflow.app.runtime import run_sync
from streamflow.core.events import UniEvent
from streamflow.core.limits import Limits
from streamflow.reactive.operators import decode, frame, pipeline
from streamflow.reactive.sources import from_iterable
from streamflow.wire.dialects import get_dialect

BODIES = fault_bodies()
DIALECTS = BODIES.available()
LIMITS = Limits(max_event_bytes=4096)
Outcome = tuple[list[Any], Any, Any]


def _event(e: UniEvent) -> Any:
    d = e.to_dict()
    d.pop("created_at", None)
    return d


def _message(m: Any) -> Any:
    if m is None:
        return None
    d = m.to_dict()
    d.pop("created_at", None)
    return d


def _error(exc: BaseException) -> Any:
    assert isinstance(exc, StreamflowError), f"a bare {type(exc).__name__} escaped: {exc!r}"
    return (type(exc).__name__, str(exc))


def via_decoder(chunks: list[bytes], dialect: str) -> Outcome:
    dec = StreamDecoder(dialect, limits=LIMITS)
    events: list[UniEvent] = []
    try:
        for chunk in chunks:
            events += dec.feed(chunk)
        events += dec.close()
    except StreamflowError as exc:
        return [_event(e) for e in events + exc.events], _error(exc), _message(exc.partial)
    return [_event(e) for e in events], None, _message(dec.message)


def via_assemble(chunks: list[bytes], dialect: str) -> tuple[Any, Any]:
    try:
        return None, _message(assemble(chunks, dialect, limits=LIMITS))
    except StreamflowError as exc:
        return _error(exc), _message(exc.partial)


def via_operators(chunks: list[bytes], ops: list[Any]) -> Outcome:
    events: list[UniEvent] = []
    errors: list[BaseException] = []
    done: list[bool] = []
    reactivex.from_iterable(chunks).pipe(*ops).subscribe(
        events.append, errors.append, lambda: done.append(True))
    assert len(errors) + len(done) == 1, "exactly one terminal notification"
    assert not (errors and any(e.event_type == "stop" for e in events)), "stop AND an error"
    if errors:
        exc = errors[0]
        return [_event(e) for e in events], _error(exc), _message(getattr(exc, "partial", None))
    return [_event(e) for e in events], None, None


def via_run_sync(chunks: list[bytes], dialect: str) -> Outcome:
    events: list[UniEvent] = []
    try:
        message = run_sync(from_iterable(chunks).pipe(pipeline(dialect, limits=LIMITS)),
                           events.append)
    except StreamflowError as exc:
        return [_event(e) for e in events], _error(exc), _message(exc.partial)
    return [_event(e) for e in events], None, _message(message)


def check_all_agree(chunks: list[bytes], dialect: str) -> None:
    events, error, message = via_decoder(chunks, dialect)
    assert via_assemble(chunks, dialect) == (error, message)
    framing = get_dialect(dialect).framing
    piped = via_operators(chunks, [pipeline(dialect, limits=LIMITS)])
    split = via_operators(chunks, [frame(framing, limits=LIMITS),
                                   decode(dialect, framing=framing, limits=LIMITS)])
    for got in (piped, split):
        assert got[0] == events
        assert got[1] == error
        if error is not None:
            assert got[2] == message
    assert via_run_sync(chunks, dialect) == (events, error, message)
    if any(e["event_type"] == "stop" for e in events):
        assert error is None, "a stream ends with stop or with an exception, never both"


def _chunked(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    out, last = [], 0
    for p in points:
        out.append(body[last:p])
        last = p
    out.append(body[last:])
    return [c for c in out if c]


def _last_frame(body: bytes, dialect: str) -> bytes:
    framing = get_dialect(dialect).framing
    if framing == "eventstream":
        pos, last = 0, b""
        while pos < len(body):
            size = int.from_bytes(body[pos:pos + 4], "big")
            last = body[pos:pos + size]
            pos += size
        return last
    sep = b"\n" if framing == "ndjson" else b"\n\n"
    parts = [p for p in body.split(sep) if p.strip()]
    return parts[-1] + sep


MUTATIONS = ["whole", "cut", "double_end", "garbage_after", "long_line_after", "flip"]


@st.composite
def bodies(draw: st.DrawFn) -> tuple[list[bytes], str]:
    dialect = draw(st.sampled_from(DIALECTS))
    body = BODIES.body_for(dialect)
    how = draw(st.sampled_from(MUTATIONS))
    if how == "cut":
        body = body[:draw(st.integers(0, len(body)))]
    elif how == "double_end":
        body += _last_frame(body, dialect)
    elif how == "garbage_after":
        body += draw(st.binary(min_size=1, max_size=64))
    elif how == "long_line_after":
        body += b"data: " + b"x" * 5000
    elif how == "flip" and body:
        i = draw(st.integers(0, len(body) - 1))
        body = body[:i] + bytes([draw(st.integers(0, 255))]) + body[i + 1:]
    cuts = draw(st.lists(st.integers(0, 10**6), max_size=12))
    return _chunked(body, cuts), dialect


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
def test_every_entry_point_gives_the_same_events_and_outcome(case: tuple[list[bytes], str]
                                                             ) -> None:
    chunks, dialect = case
    check_all_agree(chunks, dialect)


def test_a_doubled_message_stop_is_ignored_by_every_entry_point() -> None:
    body = BODIES.body_for("anthropic")
    body += b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
    check_all_agree([body], "anthropic")
    events, error, _ = via_decoder([body], "anthropic")
    assert error is None and events[-1]["event_type"] == "stop"


def test_nothing_raises_after_stop_and_what_follows_is_counted() -> None:
    for dialect in DIALECTS:
        body = BODIES.body_for(dialect)
        for tail in (b"data: " + b"x" * 5000, b"\x00\x00\x00\x10garbage-after-end",
                     b"{not json\n", _last_frame(body, dialect)):
            dec = StreamDecoder(dialect, limits=LIMITS)
            events = dec.feed(body)
            if not dec.stopped:
                continue  # gemini has no terminator: it stops at the end of the body
            events += dec.feed(tail) + dec.feed(tail) + dec.close()
            assert events[-1].event_type == "stop", dialect
            assert dec.message.complete
            assert dec.ignored_frames + dec.ignored_bytes > 0, (dialect, tail[:20])
            check_all_agree([body, tail], dialect)


def test_run_sync_handed_a_pipelines_events_does_not_assemble_them_again() -> None:
    """Item 15: run decodes a pipeline()'s bytes with its own decoder, whose emitter
    already assembles; the fan-out reads that message."""
    from streamflow.app.runtime import Run
    from streamflow.reactive._fanout import FanOut

    def run_fan(source: Any) -> FanOut:  # what run_sync does, keeping the fan-out to look at
        job = Run(source, (lambda _: None,))
        job.start(None)
        return job.fan

    body = BODIES.body_for("anthropic")
    fan = run_fan(from_iterable([body]).pipe(pipeline("anthropic")))
    message = fan.result()
    assert message.complete and message.text == BODIES.EXPECTED_TEXT
    assert fan.decoder is not None and fan.assembler.message.items == []  # never fed
    # a stream of UniEvents from elsewhere is still assembled by the fan-out itself
    events = StreamDecoder("anthropic").feed(body)
    fan = run_fan(reactivex.from_iterable(events))
    assert fan.decoder is None and fan.result().text == BODIES.EXPECTED_TEXT
    assert fan.assembler.message.text == BODIES.EXPECTED_TEXT


def test_a_body_ending_inside_a_frame_is_judged_alike_split_or_fused() -> None:
    """``frame()`` hands ``decode()`` the cut (``CUT``): a body cut inside its last frame
    (bedrock's metadata, with the usage) raises split as it does fused."""
    for dialect in DIALECTS:
        body = BODIES.body_for(dialect)
        last = _last_frame(body, dialect)
        check_all_agree([body[:len(body) - len(last) // 2]], dialect)
    body = BODIES.body_for("bedrock")
    _, error, _ = via_decoder([body[:len(body) - 3]], "bedrock")
    assert error is not None and "cut inside its last frame" in error[1], error
