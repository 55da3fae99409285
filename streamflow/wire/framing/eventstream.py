"""AWS ``application/vnd.amazon.eventstream`` binary framing, sans-IO.

Each message on the wire is::

    total length  u32 BE   (the whole message, these 4 bytes and the final CRC included)
    headers length u32 BE
    prelude CRC32 u32 BE   (over the 8 bytes above)
    headers                (name length u8, UTF-8 name, type u8, typed value) *
    payload
    message CRC32 u32 BE   (over every byte before it)

Header value types: 0 true, 1 false, 2 byte (i8), 3 short (i16), 4 integer (i32),
5 long (i64), 6 byte array (u16 length), 7 string (u16 length, UTF-8),
8 timestamp (i64 milliseconds since the epoch, kept as ``int``), 9 UUID (16 bytes,
kept as :class:`uuid.UUID`).

The prelude CRC is checked as soon as 12 bytes are buffered, so a corrupted length
fails at once instead of stalling the stream; the message CRC is checked before a
message is delivered. Any chunking of the body gives the same messages. A framing
error found while messages were completed in the same :meth:`feed` is raised at the
next ``feed``/``close``, so messages already received are never lost.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from ...core.errors import FramingError, LimitExceededError, StreamflowError
from ...core.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "PRELUDE_BYTES",
    "EventStreamMessage",
    "EventStreamParser",
    "encode_message",
    "is_prelude",
]

PRELUDE_BYTES = 12
_MIN_MESSAGE = PRELUDE_BYTES + 4
_U32 = struct.Struct(">I")
_PRELUDE = struct.Struct(">III")
_FIXED: dict[int, struct.Struct] = {
    2: struct.Struct(">b"), 3: struct.Struct(">h"), 4: struct.Struct(">i"),
    5: struct.Struct(">q"), 8: struct.Struct(">q"),
}

HeaderValue = bool | int | bytes | str | uuid.UUID


@dataclass(slots=True, frozen=True)
class EventStreamMessage:
    """One decoded message: typed ``headers`` and the raw ``payload`` bytes."""

    headers: dict[str, HeaderValue]
    payload: bytes

    @property
    def data(self) -> bytes:
        """The payload (the name every frame type shares for its body)."""
        return self.payload

    @property
    def event_type(self) -> str | None:
        """The ``:event-type`` header, when it is a string."""
        value = self.headers.get(":event-type")
        return value if isinstance(value, str) else None

    @property
    def message_type(self) -> str | None:
        """The ``:message-type`` header (``event``, ``exception`` or ``error``)."""
        value = self.headers.get(":message-type")
        return value if isinstance(value, str) else None


def is_prelude(head: bytes) -> bool:
    """True if ``head`` starts with a plausible event-stream prelude with a valid CRC."""
    if len(head) < PRELUDE_BYTES:
        return False
    total, headers_len, crc = _PRELUDE.unpack_from(head)
    return (zlib.crc32(head[:8]) == crc and total >= _MIN_MESSAGE
            and headers_len <= total - _MIN_MESSAGE)


class EventStreamParser:
    """Incremental event-stream framer: ``feed(bytes) -> list[EventStreamMessage]``.

    ``limits.max_event_bytes`` bounds one message's total length (checked from its
    prelude, before buffering it): :class:`LimitExceededError`. A bad CRC, an
    impossible length or a malformed header is a :class:`FramingError`.
    """

    __slots__ = ("_buf", "_error", "_max", "closed", "incomplete")

    def __init__(self, limits: Limits | None = None) -> None:
        self._buf = bytearray()
        self._max = (limits or DEFAULT_LIMITS).max_event_bytes
        self._error: StreamflowError | None = None
        self.incomplete = False
        self.closed = False

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """Frame the next bytes; returns the messages they complete."""
        self._raise_pending()
        self._buf += chunk
        return self._drain()

    def close(self) -> list[EventStreamMessage]:
        """End of body: leftover bytes mean the last message was cut (``incomplete``)."""
        self._raise_pending()
        self.closed = True
        self.incomplete = bool(self._buf)
        self._buf = bytearray()
        return []

    def _raise_pending(self) -> None:
        if self._error is not None:
            raise self._error

    def _drain(self) -> list[EventStreamMessage]:
        out: list[EventStreamMessage] = []
        buf = self._buf
        pos = 0
        try:
            while len(buf) - pos >= PRELUDE_BYTES:
                total, headers_len = self._prelude(buf, pos)
                if len(buf) - pos < total:
                    break
                out.append(_message(bytes(buf[pos:pos + total]), headers_len))
                pos += total
        except StreamflowError as exc:
            self._error = exc  # sticky: the byte stream cannot be resynchronised
            if not out:
                raise
            # deliver what arrived first; the error is raised on the next call
        finally:
            del buf[:pos]
        return out

    def _prelude(self, buf: bytearray, pos: int) -> tuple[int, int]:
        total, headers_len, crc = _PRELUDE.unpack_from(buf, pos)
        if zlib.crc32(buf[pos:pos + 8]) != crc:
            raise FramingError("event-stream prelude CRC mismatch")
        if total < _MIN_MESSAGE or headers_len > total - _MIN_MESSAGE:
            raise FramingError(
                f"event-stream lengths impossible: total {total}, headers {headers_len}")
        if total > self._max:
            raise LimitExceededError("max_event_bytes", self._max)
        return total, headers_len


def _message(raw: bytes, headers_len: int) -> EventStreamMessage:
    (crc,) = _U32.unpack_from(raw, len(raw) - 4)
    if zlib.crc32(memoryview(raw)[:-4]) != crc:
        raise FramingError("event-stream message CRC mismatch")
    headers = _headers(raw[PRELUDE_BYTES:PRELUDE_BYTES + headers_len])
    return EventStreamMessage(headers, raw[PRELUDE_BYTES + headers_len:-4])


def _headers(raw: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    pos, end = 0, len(raw)
    try:
        while pos < end:
            size = raw[pos]
            raw_name = raw[pos + 1:pos + 1 + size]
            if len(raw_name) != size:
                raise FramingError("event-stream header name runs past the headers")
            name = raw_name.decode("utf-8")
            pos += 1 + size
            kind = raw[pos]
            pos += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                fixed = _FIXED[kind]
                (value,) = fixed.unpack_from(raw, pos)
                pos += fixed.size
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", raw, pos)
                blob = raw[pos + 2:pos + 2 + length]
                if len(blob) != length:
                    raise FramingError("event-stream header value runs past the headers")
                value = blob.decode("utf-8") if kind == 7 else blob
                pos += 2 + length
            elif kind == 9:
                if pos + 16 > end:
                    raise FramingError("event-stream header value runs past the headers")
                value = uuid.UUID(bytes=raw[pos:pos + 16])
                pos += 16
            else:
                raise FramingError(f"event-stream header {name!r} has unknown type {kind}")
            if pos > end:
                raise FramingError("event-stream header runs past the headers")
            if name in headers:
                raise FramingError(f"event-stream header {name!r} repeated")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise FramingError(f"malformed event-stream headers ({exc})") from None
    return headers


def _encode_header(name: str, value: Any) -> bytes:
    kind: int
    if isinstance(value, tuple):
        kind, value = value
    elif isinstance(value, bool):
        kind = 0 if value else 1
    elif isinstance(value, int):
        kind = 4 if -(2**31) <= value < 2**31 else 5
    elif isinstance(value, bytes):
        kind = 6
    elif isinstance(value, uuid.UUID):
        kind = 9
    else:
        kind, value = 7, str(value)
    raw_name = name.encode("utf-8")
    out = bytes([len(raw_name)]) + raw_name + bytes([kind])
    if kind in _FIXED:
        return out + _FIXED[kind].pack(value)
    if kind in (6, 7):
        blob = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return out + struct.pack(">H", len(blob)) + blob
    if kind == 9:
        return out + value.bytes
    return out  # 0 / 1: the type is the value


def encode_message(headers: dict[str, Any], payload: bytes = b"") -> bytes:
    """Encode one event-stream message (for tests, fixtures and servers).

    Header values map to their natural type (``str`` string, ``bytes`` byte array,
    ``bool``, ``int`` integer/long, :class:`uuid.UUID`); a ``(type_code, value)``
    tuple forces a type (``(8, ms)`` timestamp, ``(2, n)`` byte, ``(3, n)`` short).
    """
    raw_headers = b"".join(_encode_header(k, v) for k, v in headers.items())
    total = _MIN_MESSAGE + len(raw_headers) + len(payload)
    prelude = struct.pack(">II", total, len(raw_headers))
    body = prelude + _U32.pack(zlib.crc32(prelude)) + raw_headers + payload
    return body + _U32.pack(zlib.crc32(body))
