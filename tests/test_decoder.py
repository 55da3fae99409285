"""StreamDecoder and assemble(): bytes to UniEvents to a Message, however the body is chunked."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import DATA, REAL, framing_for, real_body

from streamflow import (
    DialectDetectionError,
    IncompleteStreamError,
    LimitExceededError,
    Limits,
    Message,
    ProtocolError,
    StreamDecoder,
    StreamflowError,
    TextItem,
    assemble,
)

OWN = sorted((DATA / "anthropic").glob("*.sse"))
RECORDED = ["sdk_basic_response.sse", "sdk_tool_use_response.sse", "sdk_refusal_response.sse",
            "pyd_thinking_part_stream.sse", "vercel_anthropic_text.jsonl"]
BODIES: dict[str, tuple[bytes, str | None]] = {p.name: (p.read_bytes(), None) for p in OWN}
if (REAL / "anthropic").exists():
    BODIES.update({name: (real_body(f"anthropic/{name}"), framing_for(name))
                   for name in RECORDED})


def chunked(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges)]


def run(chunks: list[bytes], framing: str | None = None,
        **kw: Any) -> tuple[list[dict[str, Any]], Message]:
    """All events (JSON form) and the final message, with a fixed clock."""
    dec = StreamDecoder(framing=framing, clock=lambda: 1, **kw)
    events = [e for c in chunks for e in dec.feed(c)] + dec.close()
    return [e.to_dict() for e in events], dec.message


def without_time(m: Message) -> dict[str, Any]:
    out = m.to_dict()
    out.pop("created_at")
    return out


@pytest.mark.parametrize("name", list(BODIES))
def test_auto_detection_reads_every_anthropic_body(name: str) -> None:
    body, framing = BODIES[name]
    m = assemble(body, framing=framing)
    assert m.complete and m.items and m.finish_reason is not None
    dec = StreamDecoder()
    dec.feed(body)
    dec.close()
    assert dec.dialect == "anthropic" and dec.framing == (framing or "sse")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_gives_the_same_events_and_message(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(BODIES)))
    body, framing = BODIES[name]
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=30))
    whole_events, whole = run([body], framing)
    events, m = run(chunked(body, cuts), framing)
    assert events == whole_events
    assert without_time(m) == without_time(whole)
    assert without_time(assemble(chunked(body, cuts), framing=framing)) == without_time(whole)


@pytest.mark.parametrize("name", [p.name for p in OWN])
def test_one_byte_at_a_time(name: str) -> None:
    body, _ = BODIES[name]
    assert run([body[i:i + 1] for i in range(len(body))]) == run([body])


@pytest.mark.parametrize("bom_cut", [1, 2, 3])
def test_a_bom_split_across_chunks_does_not_change_the_framing(bom_cut: int) -> None:
    lines = b"\xef\xbb\xbf" + (DATA / "anthropic" / "seed000_text.sse").read_bytes()
    jsonl = b"\xef\xbb\xbf" + b"\n".join(
        json.dumps(e).encode() for e in (
            {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": "ok"}},
            {"type": "content_block_stop", "index": 0}, {"type": "message_stop"}))
    dec = StreamDecoder()
    dec.feed(jsonl[:bom_cut])
    dec.feed(jsonl[bom_cut:])
    dec.close()
    assert dec.framing == "ndjson" and dec.message.text == "ok"
    assert run([lines[:bom_cut], lines[bom_cut:]])[1].text == "Hello, how can I help?"


def test_every_cut_of_a_body_fails_typed_and_keeps_a_prefix_of_the_message() -> None:
    body = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()
    full = assemble(body).items
    end = body.rindex(b"event: message_stop")
    for cut in range(0, len(body)):
        try:
            m = assemble(body[:cut])
        except StreamflowError as exc:
            assert isinstance(exc, (IncompleteStreamError, ProtocolError)), (cut, exc)
            assert exc.partial is not None and not exc.partial.complete
            done = [i for i in exc.partial.items if i.type.endswith(".done")]
            assert done == full[:len(done)], cut
            assert len(exc.partial.items) - len(done) <= 1  # at most the open group
        else:
            assert cut > end and m.items == full


@pytest.mark.parametrize(("body", "error", "match"), [
    (b"", IncompleteStreamError, "empty body"),
    (b"  \r\n\n", IncompleteStreamError, "empty body"),
    (b": keep-alive\n\n: again\n\n", IncompleteStreamError, "no events"),
    (b"data: hello\n\n", DialectDetectionError, "cannot detect"),
    (b'{"foo": 1}\n', DialectDetectionError, "ndjson"),
])
def test_bodies_that_hold_no_message(body: bytes, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as info:
        assemble(body)
    assert info.value.partial == Message()


def test_limits_fail_typed_with_what_came_before() -> None:
    body = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()
    cases = {  # limit -> (limits, the kinds of the partial message's items)
        "max_groups": (Limits(max_groups=2), ["thinking.done", "inline_thinking.done"]),
        "max_message_bytes": (Limits(max_message_bytes=40), ["thinking.done"]),
        # the server tool's JSON input (kept in provider) counts too, and comes first
        "max_tool_arguments_bytes": (Limits(max_tool_arguments_bytes=10),
                                     ["thinking.done", "inline_thinking.done"]),
        "max_event_bytes": (Limits(max_event_bytes=250), []),  # message_start is the longest
    }
    for limit, (limits, kinds) in cases.items():
        for chunks in ([body], [body[i:i + 7] for i in range(0, len(body), 7)]):
            with pytest.raises(LimitExceededError) as info:
                assemble(chunks, limits=limits)
            err = info.value
            assert err.limit == limit and err.partial is not None and not err.partial.complete
            assert [i.type for i in err.partial.items] == kinds, limit


def test_an_oversized_event_after_text_in_one_chunk_keeps_the_text() -> None:
    head = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":""}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"before"}}\n\n')
    with pytest.raises(LimitExceededError) as info:
        assemble(head + b"data: " + b"x" * 500 + b"\n\n", limits=Limits(max_event_bytes=200))
    assert info.value.partial is not None
    assert info.value.partial.items == [TextItem("text.delta", "before")]


def test_explicit_dialect_and_framing_and_frames_fed_directly() -> None:
    path = DATA / "anthropic" / "seed000_thinking.sse"
    dec = StreamDecoder("anthropic")
    assert dec.framing == "sse" and dec.dialect == "anthropic"
    assert dec.partial.items == []
    events = dec.feed(path.read_bytes()) + dec.close()
    assert events[-1].event_type == "stop" and dec.message.complete
    assert assemble(path.read_bytes(), "anthropic").thinking == "I should answer briefly."
    with pytest.raises(ValueError, match="unknown dialect"):
        StreamDecoder("nope")


def test_the_clock_is_read_once_per_chunk_and_stamps_its_events() -> None:
    """Events completed by one chunk carry that chunk's arrival time (one clock read)."""
    body = (DATA / "anthropic" / "seed000_text.sse").read_bytes()
    frames = body.split(b"\n\n")
    first, rest = b"\n\n".join(frames[:4]) + b"\n\n", b"\n\n".join(frames[4:])
    reads: list[int] = []

    def clock() -> int:
        reads.append(len(reads) + 100)
        return reads[-1]

    dec = StreamDecoder("anthropic", clock=clock)
    a = dec.feed(first)
    dec.feed(b"")  # completes no frame: no read
    b = dec.feed(rest)
    assert len(a) >= 2 and len(b) >= 2
    assert {e.created_at for e in a} == {100} and {e.created_at for e in b} == {101}
    assert len(reads) == 2
