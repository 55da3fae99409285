"""Server-sent events, parsed exactly by the WHATWG "parse an event stream" rules.

Sans-IO: feed bytes as they arrive, get the events they complete::

    p = SSEParser()
    events = p.feed(b"data: hel")      # []
    events += p.feed(b"lo\\n\\n")        # [ServerSentEvent(event='message', data='hello')]
    events += p.close()                # end of body; p.incomplete tells if an event was cut

The result is the same however the bytes are chunked: UTF-8 is decoded
incrementally (invalid bytes become U+FFFD, one leading BOM is dropped), and a CR
at the end of one chunk followed by LF at the start of the next is one line end.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ..errors import LimitExceededError
from ..limits import DEFAULT_LIMITS, Limits

__all__ = ["ServerSentEvent", "SSEParser"]


@dataclass(slots=True, frozen=True)
class ServerSentEvent:
    """One dispatched event.

    ``id`` is the last-event-id in force at dispatch (``None`` when empty) and
    ``retry`` the reconnection time in force (the last valid ``retry``; ``None``
    before any). ``data: [DONE]`` is an ordinary event here.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEParser:
    """Incremental, chunking-invariant SSE parser (see module doc).

    ``limits.max_event_bytes`` bounds one event (its pending line plus its data, in
    characters); passing it raises :class:`LimitExceededError` at once, so a body of
    one endless line fails fast with bounded memory.
    """

    __slots__ = ("_decoder", "_bom_checked", "_cr_pending", "_pending", "_data", "_data_size",
                 "_event", "_last_id", "_retry", "_dirty", "_max", "incomplete", "closed")

    def __init__(self, limits: Limits | None = None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._bom_checked = False
        self._cr_pending = False
        self._pending = ""
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._last_id = ""
        self._retry: int | None = None
        self._dirty = False  # field lines seen since the last dispatch
        self._max = (limits or DEFAULT_LIMITS).max_event_bytes
        self.incomplete = False
        self.closed = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse the next bytes of the body; returns the events they complete."""
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> list[ServerSentEvent]:
        """End of body: flush the decoder; an unfinished event is discarded (``incomplete``)."""
        out = self._feed_text(self._decoder.decode(b"", True))
        self.closed = True
        self.incomplete = bool(self._pending) or self._dirty
        self._pending = ""
        self._data = []
        self._data_size = 0
        self._event = ""
        self._dirty = False
        return out

    def _feed_text(self, text: str) -> list[ServerSentEvent]:
        if not text:
            return []
        if not self._bom_checked:
            self._bom_checked = True
            if text[0] == "\ufeff":
                text = text[1:]
        if self._cr_pending:
            self._cr_pending = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            if text[-1] == "\r":
                self._cr_pending = True
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            self._pending += text
            self._check()
            return []
        lines = text.split("\n")
        lines[0] = self._pending + lines[0]
        self._pending = lines.pop()
        out: list[ServerSentEvent] = []
        for line in lines:
            if not line:
                if self._dirty:
                    self._dispatch(out)
                continue
            if line[0] == ":":
                continue
            self._dirty = True
            field, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if field == "data":
                self._data.append(value)
                self._data_size += len(value) + 1
                self._check()
            elif field == "event":
                self._event = value
            elif field == "id":
                if "\x00" not in value:
                    self._last_id = value
            elif field == "retry":
                if value.isdigit() and value.isascii():
                    self._retry = int(value)
        self._check()
        return out

    def _check(self) -> None:
        if len(self._pending) + self._data_size > self._max:
            raise LimitExceededError("max_event_bytes", self._max)

    def _dispatch(self, out: list[ServerSentEvent]) -> None:
        self._dirty = False
        data = self._data
        event = self._event
        self._data = []
        self._data_size = 0
        self._event = ""
        if not data:
            return
        out.append(ServerSentEvent(
            data=data[0] if len(data) == 1 else "\n".join(data),
            event=event or "message",
            id=self._last_id or None,
            retry=self._retry,
        ))
