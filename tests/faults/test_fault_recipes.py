"""The fault transforms themselves: exact bytes, the same in every form (pure, operator, route)."""

from __future__ import annotations

import pytest
import reactivex
from fault_bodies import available, body_for
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow import ProviderError, StreamDecoder
from streamflow.faults import (
    PROFILES,
    ByEvent,
    Cut,
    Drip,
    DropTerminator,
    Duplicate,
    InsertError,
    Pause,
    Reset,
    Stall,
    Swap,
    apply,
    body,
    by_event,
    cut,
    drip,
    drop_terminator,
    duplicate,
    fault_route,
    inject,
    insert_error,
    iter_apply,
    mid_char_offset,
    mid_event_offset,
    payload,
    profile_for,
    split_events,
    stall,
    swap,
)
from streamflow.servers.replay import split_odd
from streamflow.wire.dialects import dialect_names
from streamflow.wire.framing import SSEParser

SSE = b"event: a\ndata: 1\n\n: comment\n\ndata: 2\r\n\r\ndata: 3\r\rdata: 4\n\n"


def test_cut_keeps_exactly_the_first_n_bytes_across_chunks() -> None:
    chunks = [b"abc", b"def", b"ghi"]
    assert cut(chunks, 5) == [b"abc", b"de"]
    assert cut(chunks, 6) == [b"abc", b"def"]
    assert cut(chunks, 0) == []
    assert cut(chunks, 5, reset=True) == [b"abc", b"de", Reset()]
    assert cut(chunks, 100) == chunks  # a body shorter than the cut is left alone


def test_cut_stops_reading_a_lazy_body_at_the_cut() -> None:
    pulled = []

    def endless():
        for i in range(10**9):
            pulled.append(i)
            yield b"x" * 10

    assert body(iter_apply(endless(), Cut(25))) == b"x" * 25
    assert len(pulled) == 3


def test_split_events_cuts_at_blank_lines_of_any_line_ending() -> None:
    assert split_events(SSE) == [b"event: a\ndata: 1\n\n", b": comment\n\n", b"data: 2\r\n\r\n",
                                 b"data: 3\r\r", b"data: 4\n\n"]
    assert split_events(b"data: 1\n\ndata: cut") == [b"data: 1\n\n", b"data: cut"]
    assert split_events(b'{"a":1}\n{"b":2}\n{"c"', "ndjson") == [b'{"a":1}\n', b'{"b":2}\n',
                                                                b'{"c"']


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=12))
def test_event_splitting_is_chunking_invariant_and_lossless(sizes: list[int]) -> None:
    events = split_events(split_odd(SSE, sizes))
    assert events == split_events(SSE)
    assert b"".join(events) == SSE
    # each piece is exactly one SSE dispatch (or a comment): the parser agrees
    parsed = [SSEParser().feed(e) for e in events]
    assert [len(p) for p in parsed] == [1, 0, 1, 1, 1]


def test_duplicate_and_swap_hit_chunks_or_whole_events() -> None:
    chunks = [b"a", b"b", b"c"]
    assert duplicate(chunks, 1) == [b"a", b"b", b"b", b"c"]
    assert swap(chunks, 0) == [b"b", b"a", b"c"]
    assert swap(chunks, 2) == chunks  # nothing after the last chunk to swap with
    events = split_events(SSE)
    assert apply(split_odd(SSE), ByEvent(), Duplicate(2)) == [*events[:3], events[2],
                                                             *events[3:]]
    assert by_event([SSE]) == events


def test_drip_sends_one_byte_per_chunk() -> None:
    assert drip([b"ab", b"", b"c"]) == [b"a", b"b", b"c"]


def test_stall_is_a_pause_marker_before_the_chunk() -> None:
    assert stall([b"a", b"b"], 2.5, before=1) == [b"a", Pause(2.5), b"b"]
    assert stall([b"a"], 1.0, before=5) == [b"a", Pause(1.0)]  # before the end of the body
    assert payload([b"a", Pause(1.0), b"b", Reset()]) == [b"a", b"b"]


@pytest.mark.parametrize("dialect", available())
def test_drop_terminator_removes_exactly_the_terminating_event(dialect: str) -> None:
    whole = body_for(dialect)
    framing = profile_for(dialect).framing
    events = split_events(whole, framing)
    kept = body(drop_terminator(split_odd(whole), dialect))
    assert whole.startswith(kept) and len(kept) < len(whole)
    assert split_events(kept, framing) == events[:len(split_events(kept, framing))]
    decoder = StreamDecoder(dialect)
    decoder.feed(kept)  # everything before the terminator decodes fine...
    assert decoder.decoder is not None and not decoder.decoder.stopped  # ...but never stops


@pytest.mark.parametrize("dialect", available())
def test_insert_error_writes_the_dialects_own_in_band_error(dialect: str) -> None:
    whole = body_for(dialect)
    framing = profile_for(dialect).framing
    events = split_events(whole, framing)
    broken = body(insert_error(whole, dialect, after=2, code=529, message="busy"))
    assert broken.startswith(b"".join(events[:2]))
    decoder = StreamDecoder(dialect)
    with pytest.raises(ProviderError) as caught:
        decoder.feed(broken)
        decoder.close()
    assert "busy" in caught.value.message


def test_insert_error_refuses_a_dialect_without_in_band_errors() -> None:
    with pytest.raises(ValueError, match="no in-band error"):
        apply([b"x"], InsertError("speech"))


def test_mid_char_and_mid_event_offsets() -> None:
    data = "data: Grüße\n\ndata: x\n\n".encode()
    at = mid_char_offset(data)
    with pytest.raises(UnicodeDecodeError):
        data[:at].decode()
    assert mid_event_offset(data, 1) == len(b"data: Gr\xc3\xbc\xc3\x9fe\n\n") + 4
    with pytest.raises(IndexError):
        mid_event_offset(data, 2)


FAULT_SETS = [
    (Cut(300),), (Cut(300, reset=True),), (DropTerminator("anthropic"),),
    (ByEvent(), Duplicate(3)), (ByEvent(), Swap(7)), (InsertError("anthropic", after=6),),
    (Drip(), Cut(50)), (InsertError("anthropic", after=4, keep_rest=True), Drip()),
]


@pytest.mark.parametrize("faults", FAULT_SETS)
def test_operator_gives_the_same_bytes_as_the_pure_function(faults: tuple) -> None:
    source = split_odd(body_for("anthropic"))
    expected = apply(source, *faults)
    got: list[bytes] = []
    errors: list[Exception] = []
    reactivex.from_iterable(source).pipe(inject(*faults)).subscribe(
        got.append, errors.append)
    assert got == payload(expected)
    assert bool(errors) == (Reset() in expected)


def test_operator_refuses_a_stall() -> None:
    with pytest.raises(TypeError, match="Stall"):
        inject(Stall(1.0))


def test_route_turns_markers_into_delays_and_an_abort() -> None:
    route = fault_route([b"a", b"b", b"c"], Stall(0.5, before=1), Cut(2, reset=True))
    assert route.chunks == [b"a", b"b"]
    assert list(route.delays) == [0.0, 0.5]  # type: ignore[arg-type]
    assert route.abort
    end = fault_route([b"a"], Stall(2.0, before=9))
    assert end.chunks == [b"a", b""] and list(end.delays) == [0.0, 2.0]  # type: ignore[arg-type]
    assert not end.abort


@pytest.mark.parametrize("dialect", [d for d in PROFILES if d in dialect_names()])
def test_every_profiled_error_event_decodes_to_a_provider_error(dialect: str) -> None:
    alone = body(insert_error(b"", dialect, code=503, message="gone away"))
    decoder = StreamDecoder(dialect)
    with pytest.raises(ProviderError) as caught:
        decoder.feed(alone)
        decoder.close()
    assert "gone away" in caught.value.message
