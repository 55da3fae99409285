"""Newline-delimited JSON (Ollama, and ``.jsonl`` recordings of SSE payloads).

Each non-blank line becomes a data-only :class:`~streamflow.framing.sse.ServerSentEvent`
so every dialect reads one frame type: a JSON-lines body is a stream of data
payloads. LF or CRLF end a line; UTF-8 is decoded incrementally with U+FFFD for
invalid bytes; an unterminated last line is still delivered by :meth:`close`
(NDJSON has no blank-line dispatch), and ``incomplete`` is never set.
"""

from __future__ import annotations

import codecs

from ..errors import LimitExceededError
from ..limits import DEFAULT_LIMITS, Limits
from .sse import ServerSentEvent

__all__ = ["NDJSONParser"]


class NDJSONParser:
    """Incremental JSON-lines framer: ``feed(bytes) -> list[ServerSentEvent]``."""

    __slots__ = ("_decoder", "_pending", "_max", "incomplete", "closed")

    def __init__(self, limits: Limits | None = None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._pending = ""
        self._max = (limits or DEFAULT_LIMITS).max_event_bytes
        self.incomplete = False
        self.closed = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Frame the next bytes; returns one event per completed non-blank line."""
        return self._lines(self._decoder.decode(chunk), final=False)

    def close(self) -> list[ServerSentEvent]:
        """End of body: the last line is delivered even without its newline."""
        self.closed = True
        return self._lines(self._decoder.decode(b"", True), final=True)

    def _lines(self, text: str, final: bool) -> list[ServerSentEvent]:
        if "\n" not in text and not final:
            self._pending += text
            if len(self._pending) > self._max:
                raise LimitExceededError("max_event_bytes", self._max)
            return []
        lines = (self._pending + text).split("\n")
        self._pending = "" if final else lines.pop()
        if len(self._pending) > self._max:
            raise LimitExceededError("max_event_bytes", self._max)
        out = []
        for line in lines:
            line = line.strip()
            if line:
                if len(line) > self._max:
                    raise LimitExceededError("max_event_bytes", self._max)
                out.append(ServerSentEvent(data=line))
        return out
