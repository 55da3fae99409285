"""Chunk lists with markers, and the framing-aware event splitter the faults build on.

A fault-injected body is a list of :data:`Chunk`: ``bytes`` pieces, in order, with
two markers the player honours -- :class:`Pause` (wait before the next piece: a
stalled provider) and :class:`Reset` (the connection drops here, without the end
of the HTTP body). The replay server turns them into route delays and an abort,
:func:`~streamflow.faults.serve.faulty_source` into ``anyio.sleep`` and a
:class:`~streamflow.core.errors.TransportError`; :func:`payload` drops them for the
sans-IO core (``assemble(payload(chunks))``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Chunk",
    "EventSplitter",
    "Pause",
    "Reset",
    "as_chunks",
    "body",
    "mid_char_offset",
    "mid_event_offset",
    "payload",
    "split_events",
]


@dataclass(frozen=True, slots=True)
class Pause:
    """Marker: the server sends nothing for ``seconds`` before the next piece."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Reset:
    """Marker: the connection drops here (no end of body; the client sees a transport error)."""


Chunk = bytes | Pause | Reset


def as_chunks(chunks: bytes | Iterable[Chunk]) -> Iterable[Chunk]:
    """A body given as one ``bytes`` object is one chunk; an iterable is used as it is."""
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        return [bytes(chunks)]
    return chunks


def payload(chunks: bytes | Iterable[Chunk]) -> list[bytes]:
    """The byte pieces only (markers dropped), e.g. to feed :func:`streamflow.assemble`."""
    return [c for c in as_chunks(chunks) if isinstance(c, bytes)]


def body(chunks: bytes | Iterable[Chunk]) -> bytes:
    """All byte pieces joined."""
    return b"".join(payload(chunks))


_SSE_BOUNDARY = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")


class EventSplitter:
    """Cuts a byte stream into whole framed events, bytes unchanged (sans-IO).

    ``sse``: an event ends at a blank line (any of LF, CRLF, CR line ends);
    ``ndjson``: a line; ``eventstream``: one length-prefixed AWS message; ``raw``:
    each chunk as it came. ``feed`` returns the events it completes, ``close`` the
    unfinished rest (as one last piece, when there is one).
    """

    def __init__(self, framing: str = "sse") -> None:
        if framing not in ("sse", "ndjson", "eventstream", "raw"):
            raise ValueError(f"unknown framing {framing!r}")
        self.framing = framing
        self._buf = bytearray()
        self._scan = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The whole events ``chunk`` completes."""
        if self.framing == "raw":
            return [bytes(chunk)] if chunk else []
        self._buf += chunk
        if self.framing == "sse":
            return self._sse(final=False)
        if self.framing == "ndjson":
            return self._lines()
        return self._messages()

    def close(self) -> list[bytes]:
        """End of input: what is left (an unfinished event) as one piece."""
        out = self._sse(final=True) if self.framing == "sse" else []
        if self._buf:
            out.append(bytes(self._buf))
        self._buf = bytearray()
        self._scan = 0
        return out

    def _sse(self, final: bool) -> list[bytes]:
        out: list[bytes] = []
        buf = self._buf
        start = 0
        for match in _SSE_BOUNDARY.finditer(buf, max(0, self._scan)):
            end = match.end()
            if not final and end == len(buf) and buf[end - 1:end] == b"\r":
                break  # maybe the first half of a CRLF: wait for the next byte
            if match.start() < start:
                continue
            out.append(bytes(buf[start:end]))
            start = end
        if start:
            del buf[:start]
        self._scan = max(0, len(buf) - 3)
        return out

    def _lines(self) -> list[bytes]:
        buf = self._buf
        cut = buf.rfind(b"\n")
        if cut < 0:
            return []
        whole = bytes(buf[:cut + 1])
        del buf[:cut + 1]
        return whole.splitlines(keepends=True)

    def _messages(self) -> list[bytes]:
        out: list[bytes] = []
        buf = self._buf
        pos = 0
        while len(buf) - pos >= 4:
            size = int.from_bytes(buf[pos:pos + 4], "big")
            if size < 16 or len(buf) - pos < size:
                break
            out.append(bytes(buf[pos:pos + size]))
            pos += size
        del buf[:pos]
        return out


def split_events(chunks: bytes | Iterable[Chunk], framing: str = "sse") -> list[bytes]:
    """The body re-cut into one piece per framed event (markers dropped)."""
    splitter = EventSplitter(framing)
    out: list[bytes] = []
    for chunk in payload(chunks):
        out += splitter.feed(chunk)
    return out + splitter.close()


def mid_char_offset(data: bytes, start: int = 0) -> int:
    """An offset inside the first multi-byte UTF-8 character at or after ``start``.

    Cutting there leaves half a character (``ValueError`` when there is none).
    """
    for i in range(start, len(data)):
        if data[i] >= 0xC0:
            return i + 1
    raise ValueError("no multi-byte UTF-8 character after the offset")


def mid_event_offset(data: bytes, index: int, framing: str = "sse") -> int:
    """The offset halfway through framed event ``index`` of ``data`` (to cut mid-event)."""
    events = split_events(data, framing)
    if not 0 <= index < len(events):
        raise IndexError(f"the body has {len(events)} events, no event {index}")
    before = sum(len(e) for e in events[:index])
    return before + max(1, len(events[index]) // 2)
