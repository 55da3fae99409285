"""SSEParser: the WHATWG "parse an event stream" rules, chunking invariance, limits."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.core.errors import LimitExceededError
from streamflow.core.limits import Limits
from streamflow.wire.framing import ServerSentEvent, SSEParser


def parse(body: bytes, *, chunks: list[int] | None = None,
          limits: Limits | None = None) -> tuple[list[tuple], bool]:
    """Feed ``body`` (cut at ``chunks`` offsets), close; (event, data, id, retry) tuples."""
    p = SSEParser(limits)
    cuts = [0, *(chunks or []), len(body)]
    events: list[ServerSentEvent] = []
    for a, b in itertools.pairwise(cuts):
        events += p.feed(body[a:b])
    events += p.close()
    return [(e.event, e.data, e.id, e.retry) for e in events], p.incomplete


def reference(body: bytes) -> tuple[list[tuple], bool]:
    """A literal, slow transcription of the spec, to compare the parser against."""
    text = body.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    tail = lines.pop()  # the text after the last line end is never a complete line
    data, event, last_id, retry, out = "", "", "", None, []
    seen = False
    for line in lines:
        if line == "":
            seen = False
            if data:
                out.append((event or "message", data[:-1], last_id or None, retry))
            data, event = "", ""
            continue
        if line.startswith(":"):
            continue
        seen = True
        if ":" in line:
            name, value = line.split(":", 1)
            value = value[1:] if value.startswith(" ") else value
        else:
            name, value = line, ""
        if name == "event":
            event = value
        elif name == "data":
            data += value + "\n"
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return out, seen or (tail != "" and not tail.startswith(":"))


# -- one table per rule -----------------------------------------------------------

M = "message"
RULES = {
    # WHATWG examples
    "spec: two-line data joined with LF": (
        b"data: This is the first message.\n\ndata: This is the second message, it\n"
        b"data: has two lines.\n\ndata: This is the third message.\n\n",
        [(M, "This is the first message.", None, None),
         (M, "This is the second message, it\nhas two lines.", None, None),
         (M, "This is the third message.", None, None)]),
    "spec: event types": (
        b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
        [("add", "73857293", None, None), ("remove", "2153", None, None),
         ("add", "113411", None, None)]),
    "spec: stock ticker with ids": (
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n\n",
        [(M, "first event", "1", None), (M, "second event", None, None),
         (M, " third event", None, None)]),
    "spec: bare data fields": (
        b"data\n\ndata\ndata\n\ndata:",
        [(M, "", None, None), (M, "\n", None, None)]),
    "spec: only one leading space is removed": (
        b"data:test\n\ndata: test\n\ndata:  test\n\n",
        [(M, "test", None, None), (M, "test", None, None), (M, " test", None, None)]),
    # line ends
    "CRLF line ends": (b"data: a\r\n\r\ndata: b\r\n\r\n",
                       [(M, "a", None, None), (M, "b", None, None)]),
    "CR line ends": (b"data: a\r\rdata: b\r\r", [(M, "a", None, None), (M, "b", None, None)]),
    "mixed line ends": (b"data: a\r\ndata: b\rdata: c\n\r\n", [(M, "a\nb\nc", None, None)]),
    "CR then CRLF is two line ends": (b"data: a\r\r\n", [(M, "a", None, None)]),
    "LF CR is two line ends": (b"data: a\n\r", [(M, "a", None, None)]),
    "Unicode line separators are not line ends": (
        "data: a\u2028b\u0085c\x0bd\x0ce\n\n".encode(),
        [(M, "a\u2028b\u0085c\x0bd\x0ce", None, None)]),
    # fields
    "comments are ignored": (b": hi\n:\ndata: x\n: mid\n\n", [(M, "x", None, None)]),
    "first colon splits": (b"data: a:b\ndata::c\n\n", [(M, "a:b\n:c", None, None)]),
    "no colon: whole line is the field": (b"data\n\n", [(M, "", None, None)]),
    "field names are exact": (b"Data: x\ndata : y\n data: z\nDATA: w\n\n", []),
    "unknown fields are ignored": (b"foo: bar\ndata: x\nbaz\n\n", [(M, "x", None, None)]),
    "empty data buffer dispatches nothing": (b"event: x\n\nid: 3\n\nretry: 5\n\n\n\n", []),
    "event defaults to message; empty event is message": (
        b"event:\ndata: a\n\nevent: e\nevent: f\ndata: b\n\ndata: c\n\n",
        [(M, "a", None, None), ("f", "b", None, None), (M, "c", None, None)]),
    "event keeps inner spaces": (b"event:  sp ace \ndata: a\n\n", [(" sp ace ", "a", None, None)]),
    "id persists, is reset by an empty id": (
        b"id: 7\ndata: a\n\ndata: b\n\nid:\ndata: c\n\n",
        [(M, "a", "7", None), (M, "b", "7", None), (M, "c", None, None)]),
    "id set by an event without data still applies": (
        b"id: 9\n\ndata: a\n\n", [(M, "a", "9", None)]),
    "id with NUL is ignored": (b"id: 1\n\nid: a\x00b\ndata: x\n\n", [(M, "x", "1", None)]),
    "retry must be ASCII digits": (
        "retry: 1000\ndata: a\n\nretry: 10a\ndata: b\n\nretry: -1\nretry: 1.5\nretry:\n"
        "retry: \u0661\u0662\nretry:  5\ndata: c\n\nretry: 0\ndata: d\n\n".encode(),
        [(M, "a", None, 1000), (M, "b", None, 1000), (M, "c", None, 1000), (M, "d", None, 0)]),
    "[DONE] is an ordinary event": (b"data: [DONE]\n\n", [(M, "[DONE]", None, None)]),
    "NUL in data is kept": (b"data: a\x00b\n\n", [(M, "a\x00b", None, None)]),
    # decoding
    "one leading BOM is stripped": (b"\xef\xbb\xbfdata: a\n\n", [(M, "a", None, None)]),
    "a second BOM is part of the field name": (b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n", []),
    "a BOM later is data": (b"data: \xef\xbb\xbfa\n\n", [(M, "\ufeffa", None, None)]),
    "invalid UTF-8 becomes U+FFFD": (
        b"data: \xff\xfeok\xc3\n\ndata: \xe2\x82\n\n",
        [(M, "\ufffd\ufffdok\ufffd", None, None), (M, "\ufffd", None, None)]),
    "multi-byte UTF-8": ("data: 上海 🙂 é\n\n".encode(), [(M, "上海 🙂 é", None, None)]),
}


@pytest.mark.parametrize("name", list(RULES))
def test_rule(name: str) -> None:
    body, expected = RULES[name]
    assert parse(body)[0] == expected
    assert parse(body) == reference(body)


INCOMPLETE = {
    b"": False,
    b"data: a\n\n": False,
    b"data: a\n\n: keep-alive": False,
    b"data: a\n\n:": False,
    b"data: a\n\ndata: b\n": True,
    b"data: a\n\ndata: b": True,
    b"data: a\n\nevent: x\n": True,
    b"data: a\n\nid: 4": True,
    b"data: a\n\nd": True,
    b"data: a\n\n\xe2\x82": True,  # a cut character is U+FFFD, the start of a line
}


@pytest.mark.parametrize("body", list(INCOMPLETE))
def test_unfinished_event_is_discarded_and_flagged(body: bytes) -> None:
    events, incomplete = parse(body)
    assert incomplete is INCOMPLETE[body]
    assert events == ([(M, "a", None, None)] if body else [])
    assert reference(body) == (events, incomplete)


def test_feed_returns_events_as_soon_as_they_complete() -> None:
    p = SSEParser()
    assert p.feed(b"data: hel") == []
    assert p.feed(b"lo\n") == []
    assert p.feed(b"\n") == [ServerSentEvent(data="hello")]
    assert p.feed(b"event: x\ndata: 1\n\ndata: 2\r") == [ServerSentEvent("1", "x")]
    assert p.feed(b"\r") == [ServerSentEvent("2")]
    assert p.close() == [] and not p.incomplete


def test_an_event_keeps_its_data_bytes_as_received_and_decodes_them_on_demand() -> None:
    body = b"data: caf\xc3\xa9 \xff\ndata: x\n\n"
    (event,) = SSEParser().feed(body)
    assert event.raw == b"caf\xc3\xa9 \xff\nx"  # the bytes, invalid ones too
    assert event.data == "caf\u00e9 \ufffd\nx"
    assert event == ServerSentEvent("caf\u00e9 \ufffd\nx") == ServerSentEvent(raw=event.raw)
    assert repr(event) == (f"ServerSentEvent(data={event.data!r}, event='message', id=None, "
                           "retry=None)")


def test_an_event_built_from_text_gives_its_utf8_bytes() -> None:
    assert ServerSentEvent("上 🙂", "e").raw == "上 🙂".encode()
    assert ServerSentEvent(raw=b"a", event="e") != ServerSentEvent("a")  # the event differs
    with pytest.raises(TypeError):
        ServerSentEvent()


def test_close_is_idempotent_and_feed_after_close_is_refused() -> None:
    p = SSEParser()
    p.feed(b"data: a\n\ndata: b")
    assert p.close() == []
    assert p.incomplete
    assert p.close() == []
    with pytest.raises(ValueError):
        p.feed(b"\n\n")


# -- chunking invariance ------------------------------------------------------------

TRICKY = ("\ufeffevent: é\r\ndata: 上\r\ndata: 🙂\r\rid: \u00e9\r\n\r\n: c\rretry: 12\n"
          "data:x\n\n").encode() + b"data: \xf0\x9f\x99\n\r\n"


def test_every_split_point_gives_the_same_events() -> None:
    whole = parse(TRICKY)
    assert whole[0][0] == ("é", "上\n🙂", None, None)
    for cut in range(len(TRICKY) + 1):
        assert parse(TRICKY, chunks=[cut]) == whole, cut
        for cut2 in range(cut, min(cut + 5, len(TRICKY) + 1)):
            assert parse(TRICKY, chunks=[cut, cut2]) == whole, (cut, cut2)


def test_one_byte_at_a_time() -> None:
    assert parse(TRICKY, chunks=list(range(1, len(TRICKY)))) == parse(TRICKY)


LINE = st.one_of(
    st.sampled_from(["", ":", ": c", "data", "data:", "data: ", "event: e", "event:",
                     "id: 1", "id", "id: a\x00", "retry: 5", "retry: x", "x: y", "\ufeff",
                     "data: [DONE]"]),
    st.builds(lambda f, v: f"{f}:{v}", st.sampled_from(["data", "event", "id", "retry", "z"]),
              st.text(alphabet=" :ab\x00é上🙂\u2028\r", max_size=6)),
)
EOL = st.sampled_from(["\n", "\r", "\r\n"])
JUNK = st.sampled_from([b"", b"\xff", b"\xe4\xb8", b"\xef\xbb\xbf", b"\xc3"])


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    parts = [draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))]
    for _ in range(draw(st.integers(0, 14))):
        parts.append(draw(LINE).encode() + draw(JUNK) + draw(EOL).encode())
    parts.append(draw(LINE).encode() if draw(st.booleans()) else b"")
    return b"".join(parts)


@settings(max_examples=300, deadline=None)
@given(body=bodies(), data=st.data())
def test_random_chunkings_agree_with_the_whole_and_the_reference(body: bytes,
                                                                 data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    whole = parse(body)
    assert whole == reference(body)
    assert parse(body, chunks=cuts) == whole


# -- limits -------------------------------------------------------------------------

def test_an_endless_line_stops_at_the_limit_with_bounded_memory() -> None:
    p = SSEParser(Limits(max_event_bytes=10_000))
    p.feed(b"data: ")
    fed = 0
    with pytest.raises(LimitExceededError) as info:
        for _ in range(1_000_000):
            p.feed(b"x" * 100)
            fed += 100
    assert info.value.limit == "max_event_bytes"
    assert 9_800 <= fed <= 10_000  # raised on the chunk that crossed the limit
    with pytest.raises(LimitExceededError):  # and stays failed
        p.close()


def test_many_data_lines_count_towards_one_event() -> None:
    p = SSEParser(Limits(max_event_bytes=1_000))
    with pytest.raises(LimitExceededError):
        for _ in range(1_000):
            p.feed(b"data: " + b"y" * 50 + b"\n")


def test_events_under_the_limit_pass_and_the_limit_is_per_event() -> None:
    body = b"".join(b"data: " + b"z" * 90 + b"\n\n" for _ in range(100))
    events, _ = parse(body, limits=Limits(max_event_bytes=100))
    assert len(events) == 100


def test_events_before_an_oversized_one_in_the_same_chunk_are_delivered() -> None:
    p = SSEParser(Limits(max_event_bytes=50))
    body = b"data: a\n\ndata: b\n\ndata: " + b"x" * 100 + b"\n\n"
    assert [e.data for e in p.feed(body)] == ["a", "b"]
    with pytest.raises(LimitExceededError):
        p.feed(b"data: c\n\n")


@settings(max_examples=150, deadline=None)
@given(body=bodies(), limit=st.integers(1, 40), data=st.data())
def test_the_limit_is_chunking_invariant(body: bytes, limit: int, data: st.DataObject) -> None:
    def run(chunks: list[int]) -> tuple[list[str], bool]:
        p = SSEParser(Limits(max_event_bytes=limit))
        cuts = [0, *chunks, len(body)]
        got: list[str] = []
        try:
            for a, b in itertools.pairwise(cuts):
                got += [e.data for e in p.feed(body[a:b])]
            got += [e.data for e in p.close()]
        except LimitExceededError:
            return got, True
        return got, False

    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=6)))
    assert run(cuts) == run([]) == run(list(range(1, len(body))))
