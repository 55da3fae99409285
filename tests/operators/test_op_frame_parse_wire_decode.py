"""frame, parse_wire and decode, alone and composed; each keeps its state per subscription."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import reactivex
from hypothesis import given, settings
from hypothesis import strategies as st
from reactivex.subject import Subject

import streamflow
from streamflow import IncompleteStreamError, ProtocolError
from streamflow.reactive.operators import decode, frame, parse_wire
from streamflow.reactive.sources import from_bytes
from streamflow.wire.dialects.anthropic.wire import (
    ContentBlockDeltaEvent,
    MessageStartEvent,
    PingEvent,
    TextDelta,
)
from streamflow.wire.framing import SSEParser

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
CLOCK = {"clock": lambda: 1000}


def collect(observable: Any) -> tuple[list[Any], list[Exception]]:
    items: list[Any] = []
    errors: list[Exception] = []
    observable.subscribe(items.append, errors.append)
    return items, errors


def whole_frames() -> list[Any]:
    parser = SSEParser()
    return parser.feed(TURN) + parser.close()


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 300))
def test_frame_is_chunking_invariant(size: int) -> None:
    frames, errors = collect(from_bytes(TURN, chunk_size=size).pipe(frame()))
    assert errors == [] and frames == whole_frames()


def test_frame_auto_sniffs_ndjson() -> None:
    body = b'{"type":"ping"}\n{"type":"message_stop"}\n'
    frames, _ = collect(from_bytes(body, chunk_size=3).pipe(frame("auto")))
    assert [f.data for f in frames] == ['{"type":"ping"}', '{"type":"message_stop"}']


def test_frame_rejects_an_unknown_framing_at_once() -> None:
    with pytest.raises(ValueError, match="unknown framing"):
        frame("carrier-pigeon")


def test_decode_gives_typed_wire_models() -> None:
    models, errors = collect(from_bytes(TURN).pipe(frame(), parse_wire("anthropic")))
    assert errors == []
    assert isinstance(models[0], MessageStartEvent) and models[0].message.id == "msg_r1"
    assert any(isinstance(m, PingEvent) for m in models)
    texts = [m.delta.text for m in models
             if isinstance(m, ContentBlockDeltaEvent) and isinstance(m.delta, TextDelta)]
    assert "".join(texts) == "Let me check the weather in Paris — un instant."


def test_decode_auto_detects_and_bad_json_is_a_protocol_error_keeping_the_raw() -> None:
    body = TURN.split(b"\n\n")[0] + b"\n\nevent: content_block_start\ndata: {not json\n\n"
    models, errors = collect(from_bytes(body).pipe(frame(), parse_wire()))
    assert isinstance(models[0], MessageStartEvent)
    assert isinstance(errors[0], ProtocolError) and errors[0].raw == "{not json"


def test_decode_from_frames_matches_the_core() -> None:
    events, errors = collect(from_bytes(TURN, chunk_size=17).pipe(frame(), decode(**CLOCK)))
    expected = streamflow.StreamDecoder(**CLOCK)
    assert errors == []
    assert [e.to_dict() for e in events] == [
        e.to_dict() for e in expected.feed(TURN) + expected.close()]


def test_decode_accepts_decoded_wire_models() -> None:
    from_models, _ = collect(from_bytes(TURN).pipe(frame(), parse_wire("anthropic"),
                                                   decode("anthropic", **CLOCK)))
    from_frames, _ = collect(from_bytes(TURN).pipe(frame(), decode(**CLOCK)))
    assert [e.to_dict() for e in from_models] == [e.to_dict() for e in from_frames]


def test_decode_missing_terminator_keeps_the_partial() -> None:
    cut = TURN[: TURN.index(b"event: content_block_start\ndata: {\"type\": \"content_block_start"
                            b"\", \"index\": 2")]
    events, errors = collect(from_bytes(cut).pipe(frame(), decode()))
    assert isinstance(errors[0], IncompleteStreamError)
    assert errors[0].partial is not None
    assert errors[0].partial.text == "Let me check the weather in Paris — un instant."
    assert events[-1].content_items[0].type == "text.done"


def test_decode_and_frame_keep_state_per_subscription() -> None:
    """Two subscriptions through the SAME operator objects, fed interleaved, stay apart."""
    ops = (frame(), decode(**CLOCK))
    one: Subject[bytes] = Subject()
    two: Subject[bytes] = Subject()
    got_one, _ = collect(one.pipe(*ops))
    got_two, _ = collect(two.pipe(*ops))
    other = (DATA / "long_text.sse").read_bytes()
    half = len(TURN) // 2
    one.on_next(TURN[:half])
    two.on_next(other[: len(other) // 2])
    one.on_next(TURN[half:])
    two.on_next(other[len(other) // 2:])
    one.on_completed()
    two.on_completed()
    assert got_one[-1].event_type == got_two[-1].event_type == "stop"
    assert got_one[-1].provider["id"] == "msg_r1" and got_two[-1].provider["id"] == "msg_long"


def test_upstream_errors_reach_decode_with_the_partial() -> None:
    head = TURN[: TURN.index(b"in Paris")]
    failing = reactivex.concat(from_bytes(head), reactivex.throw(
        streamflow.TransportError("reset")))
    _, errors = collect(failing.pipe(frame(), decode()))
    assert isinstance(errors[0], streamflow.TransportError)
    assert errors[0].partial is not None and errors[0].partial.thinking == "Weather in Paris?"


def test_the_wire_models_are_reached_through_the_registry() -> None:
    from streamflow.wire.dialects import wire_models

    anthropic = wire_models("anthropic")
    models, _ = collect(from_bytes(TURN).pipe(frame(), parse_wire("anthropic")))
    assert all(type(m).__module__ == anthropic.__name__ for m in models)
    assert anthropic.MessageStartEvent is MessageStartEvent
    with pytest.raises(ValueError, match="no typed wire models"):
        wire_models("ollama")
    with pytest.raises(ValueError, match="unknown dialect"):
        wire_models("nope")
