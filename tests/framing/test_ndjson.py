"""NDJSONParser: one data-only event per non-blank line, chunking invariance, limits."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.core.errors import LimitExceededError
from streamflow.core.limits import Limits
from streamflow.wire.framing import NDJSONParser, ServerSentEvent


def frames(body: bytes, cuts: list[int] | None = None, limits: Limits | None = None) -> list[str]:
    p = NDJSONParser(limits)
    edges = [0, *(cuts or []), len(body)]
    out: list[ServerSentEvent] = []
    for a, b in itertools.pairwise(edges):
        out += p.feed(body[a:b])
    out += p.close()
    assert not p.incomplete
    assert all(f.event == "message" and f.id is None and f.retry is None for f in out)
    return [f.data for f in out]


CASES = {
    b'{"a":1}\n{"b":2}\n': ['{"a":1}', '{"b":2}'],
    b'{"a":1}\r\n{"b":2}\r\n': ['{"a":1}', '{"b":2}'],
    b'\n\n  {"a":1}  \n\t\n': ['{"a":1}'],
    b'{"a":1}\n{"b":2}': ['{"a":1}', '{"b":2}'],  # last line without newline still counts
    b'\xef\xbb\xbf{"a":1}\n': ['{"a":1}'],
    b'{"t":"\xff"}\n': ['{"t":"\ufffd"}'],
    '{"t":"上海🙂"}\n'.encode(): ['{"t":"上海🙂"}'],
    b'{"t":"a\\nb"}\n': ['{"t":"a\\nb"}'],
    b"": [],
    b"data: not json\n": ["data: not json"],  # framing does not judge the payload
}


@pytest.mark.parametrize("body", list(CASES))
def test_lines(body: bytes) -> None:
    assert frames(body) == CASES[body]


def test_lines_are_returned_as_soon_as_they_end() -> None:
    p = NDJSONParser()
    assert p.feed(b'{"a":') == []
    assert p.feed(b'1}\n{"b"') == [ServerSentEvent('{"a":1}')]
    assert p.close() == [ServerSentEvent('{"b"')]
    assert p.close() == []
    with pytest.raises(ValueError):
        p.feed(b"{}\n")


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.text(alphabet='{}":ab 上🙂\t\r', max_size=8), max_size=8),
       eol=st.sampled_from([b"\n", b"\r\n"]), bom=st.booleans(), data=st.data())
def test_any_chunking_gives_the_same_frames(lines: list[str], eol: bytes, bom: bool,
                                            data: st.DataObject) -> None:
    body = (b"\xef\xbb\xbf" if bom else b"") + eol.join(s.encode() for s in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    whole = frames(body)
    assert whole == [s.strip() for s in lines if s.strip()]
    assert frames(body, cuts) == whole
    assert frames(body, list(range(1, len(body)))) == whole


def test_an_endless_line_stops_at_the_limit() -> None:
    p = NDJSONParser(Limits(max_event_bytes=5_000))
    fed = 0
    with pytest.raises(LimitExceededError) as info:
        for _ in range(100_000):
            p.feed(b"x" * 100)
            fed += 100
    assert info.value.limit == "max_event_bytes"
    assert fed <= 5_000


def test_lines_before_an_oversized_line_are_delivered_first() -> None:
    p = NDJSONParser(Limits(max_event_bytes=20))
    assert p.feed(b'{"a":1}\n{"b":2}\n' + b"x" * 50 + b"\n") == [
        ServerSentEvent('{"a":1}'), ServerSentEvent('{"b":2}')]
    with pytest.raises(LimitExceededError):
        p.close()


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.text(alphabet="ab ", max_size=30), max_size=6),
       limit=st.integers(1, 25), data=st.data())
def test_the_limit_is_chunking_invariant(lines: list[str], limit: int,
                                         data: st.DataObject) -> None:
    body = b"\n".join(s.encode() for s in lines)

    def run(cuts: list[int]) -> tuple[list[str], bool]:
        try:
            return frames(body, cuts, Limits(max_event_bytes=limit)), False
        except LimitExceededError:
            return [], True

    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=6)))
    assert run(cuts)[1] == run([])[1] == any(len(s) > limit for s in lines)
