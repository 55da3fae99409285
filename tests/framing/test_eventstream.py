"""The AWS event-stream framer: CRCs, typed headers, limits, chunking; botocore as the oracle."""

from __future__ import annotations

import struct
import uuid
import zlib

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from realdata import real_path

from streamflow.core.errors import FramingError, LimitExceededError, StreamflowError
from streamflow.core.limits import Limits
from streamflow.wire.framing import make_framer, sniff_framing
from streamflow.wire.framing.eventstream import (
    EventStreamMessage,
    EventStreamParser,
    encode_message,
)

EVENT = {":event-type": "contentBlockDelta", ":content-type": "application/json",
         ":message-type": "event"}


def parse(body: bytes, chunks: list[int] | None = None, **kw: object) -> list[EventStreamMessage]:
    """Frame ``body`` fed in pieces of the given sizes (whole when None), then close."""
    parser = EventStreamParser(**kw)  # type: ignore[arg-type]
    out: list[EventStreamMessage] = []
    pos = 0
    for size in chunks or [len(body)]:
        out += parser.feed(body[pos:pos + size])
        pos += size
    out += parser.feed(body[pos:])
    return out + parser.close()


def botocore_messages(body: bytes) -> list[tuple[dict, bytes]]:
    buf = EventStreamBuffer()
    buf.add_data(body)
    return [(m.headers, m.payload) for m in buf]


def as_botocore(msg: EventStreamMessage) -> tuple[dict, bytes]:
    """Our typed header values in botocore's representation (UUIDs as 16 raw bytes)."""
    headers = {k: (v.bytes if isinstance(v, uuid.UUID) else v) for k, v in msg.headers.items()}
    return headers, msg.payload


def test_real_converse_recording_frames_like_botocore() -> None:
    body = real_path("bedrock/pyd_bedrock_converse_stream.bin").read_bytes()
    ours = parse(body)
    assert [as_botocore(m) for m in ours] == botocore_messages(body)
    assert ours[0].event_type == "messageStart" and ours[-1].event_type == "metadata"
    assert len(ours) == 33


def test_every_header_type_round_trips_and_botocore_agrees() -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    headers = {"t": True, "f": False, "byte": (2, -5), "short": (3, -300), "int": 70_000,
               "long": 2**40, "blob": b"\x00\xff", "str": "héllo", "ts": (8, 1_700_000_000_123),
               "id": ident}
    body = encode_message(headers, b'{"x":1}')
    (msg,) = parse(body)
    assert msg.headers == {"t": True, "f": False, "byte": -5, "short": -300, "int": 70_000,
                           "long": 2**40, "blob": b"\x00\xff", "str": "héllo",
                           "ts": 1_700_000_000_123, "id": ident}
    assert msg.payload == msg.data == b'{"x":1}'
    assert [as_botocore(msg)] == botocore_messages(body)


names = st.text(min_size=1, max_size=8)
messages = st.lists(
    st.tuples(st.dictionaries(names,
                              st.one_of(st.text(max_size=20), st.binary(max_size=20),
                                        st.booleans(), st.integers(-(2**63), 2**63 - 1)),
                              max_size=4),
              st.binary(max_size=300)),
    min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=messages, cuts=st.lists(st.integers(0, 64), max_size=40))
def test_any_chunking_gives_the_same_messages(msgs: list, cuts: list[int]) -> None:
    body = b"".join(encode_message(h, p) for h, p in msgs)
    whole = parse(body)
    assert [(m.headers, m.payload) for m in whole] == [(h, p) for h, p in msgs]
    assert parse(body, cuts) == whole
    assert parse(body, [1] * len(body)) == whole


@settings(max_examples=120, deadline=None)
@given(msgs=messages, data=st.data())
def test_a_corrupted_byte_anywhere_is_a_framing_error_after_the_good_messages(
        msgs: list, data: st.DataObject) -> None:
    encoded = [encode_message(h, p) for h, p in msgs]
    body = bytearray(b"".join(encoded))
    where = data.draw(st.integers(0, len(body) - 1))
    body[where] ^= data.draw(st.integers(1, 255))
    good = 0
    while where >= len(encoded[good]):  # messages wholly before the corruption
        where -= len(encoded[good])
        good += 1
    parser = EventStreamParser()
    out: list[EventStreamMessage] = []
    with pytest.raises(FramingError):
        out += parser.feed(bytes(body))
        out += parser.close()
    assert [(m.headers, m.payload) for m in out] == [(h, p) for h, p in msgs[:good]]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.lists(st.integers(1, 50), max_size=10))
def test_random_bytes_give_only_typed_errors(junk: bytes, cuts: list[int]) -> None:
    try:
        parse(junk, cuts)
    except StreamflowError as exc:
        assert isinstance(exc, (FramingError, LimitExceededError))


def test_payload_corruption_is_caught_by_the_message_crc() -> None:
    body = bytearray(encode_message(EVENT, b'{"delta":{"text":"hi"}}'))
    body[-8] ^= 0x01
    with pytest.raises(FramingError, match="message CRC"):
        parse(bytes(body))


def test_prelude_crc_is_checked_before_the_message_arrives() -> None:
    body = bytearray(encode_message(EVENT, b"x" * 100))
    body[3] ^= 0x40
    parser = EventStreamParser()
    with pytest.raises(FramingError, match="prelude CRC"):
        parser.feed(bytes(body[:12]))  # a corrupted length never stalls the stream


def _prelude(total: int, headers_len: int) -> bytes:
    head = struct.pack(">II", total, headers_len)
    return head + struct.pack(">I", zlib.crc32(head))


@pytest.mark.parametrize(("total", "headers_len"), [(10, 0), (15, 0), (20, 5), (16, 1)])
def test_impossible_lengths_are_framing_errors(total: int, headers_len: int) -> None:
    with pytest.raises(FramingError, match="impossible"):
        EventStreamParser().feed(_prelude(total, headers_len))


def test_a_message_above_max_event_bytes_fails_from_its_prelude() -> None:
    parser = EventStreamParser(Limits(max_event_bytes=1000))
    with pytest.raises(LimitExceededError) as info:
        parser.feed(_prelude(5000, 0))
    assert info.value.limit == "max_event_bytes"
    assert parse(encode_message({}, b"x" * 900), limits=Limits(max_event_bytes=1000))


@pytest.mark.parametrize("headers", [
    b"\x01a\x0a",                      # type 10 does not exist
    b"\x01a\x07\x00\x09abc",           # string longer than the headers
    b"\x05ab",                         # name runs past the headers
    b"\x01a\x04\x00\x01",              # int32 cut short
    b"\x01a\x09" + b"\x00" * 8,        # uuid cut short
    b"\x01a\x07\x00\x02\xff\xfe",      # string is not UTF-8
    b"\x01a\x00\x01a\x01",             # header repeated
])
def test_malformed_headers_are_framing_errors(headers: bytes) -> None:
    total = 16 + len(headers)
    body = _prelude(total, len(headers)) + headers
    body += struct.pack(">I", zlib.crc32(body))
    with pytest.raises(FramingError):
        parse(body)


def test_messages_before_an_error_in_the_same_chunk_are_delivered_first() -> None:
    good = encode_message(EVENT, b"first")
    bad = bytearray(encode_message(EVENT, b"second"))
    bad[-1] ^= 0xFF
    parser = EventStreamParser()
    (msg,) = parser.feed(good + bytes(bad))
    assert msg.payload == b"first"
    with pytest.raises(FramingError):
        parser.close()
    with pytest.raises(FramingError):  # the stream cannot be resynchronised
        parser.feed(good)


def test_close_marks_a_cut_message_incomplete() -> None:
    body = encode_message(EVENT, b"payload")
    parser = make_framer("eventstream")
    assert parser.feed(body[:-3]) == []
    assert parser.close() == []
    assert parser.incomplete
    whole = make_framer("eventstream")
    assert len(whole.feed(body)) == 1
    whole.close()
    assert not whole.incomplete


def test_sniff_framing_recognises_an_event_stream_prelude() -> None:
    body = encode_message(EVENT, b"{}")
    assert sniff_framing(body[:11]) is None  # not enough bytes to check the CRC yet
    assert sniff_framing(body[:12]) == "eventstream"
    assert sniff_framing(b"\x00\x00\x00\x20" + b"\x00" * 8) != "eventstream"  # CRC mismatch
    assert sniff_framing(b"data: {}\n\n") == "sse"
    assert sniff_framing(b'{"model": "x"}\n') == "ndjson"


def test_raw_framer_passes_chunks_through() -> None:
    raw = make_framer("raw", Limits(max_event_bytes=4))
    assert raw.feed(b"") == []
    assert raw.feed(b"abcdefghij") == [b"abcd", b"efgh", b"ij"]
    assert raw.close() == [] and not raw.incomplete
