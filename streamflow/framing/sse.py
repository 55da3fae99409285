"""Server-sent events, parsed exactly by the WHATWG "parse an event stream" rules.

Sans-IO: feed bytes as they arrive, get the events they complete::

    p = SSEParser()
    events = p.feed(b"data: hel")      # []
    events += p.feed(b"lo\\n\\n")        # [ServerSentEvent(event='message', data='hello')]
    events += p.close()                # end of body; p.incomplete tells if an event was cut

The result is the same however the bytes are chunked: UTF-8 is decoded
incrementally (invalid bytes become U+FFFD, one leading BOM is dropped), and a CR
at the end of one chunk followed by LF at the start of the next is one line end.

The rules applied to each line (WHATWG HTML, "Parsing an event stream"):

* an empty line dispatches the event: nothing when no ``data`` line was seen, else
  the ``data`` values joined with ``\\n``, ``event`` (``message`` when unset or
  empty), the last event id (``None`` when empty) and the last valid ``retry``;
* a line starting with ``:`` is a comment;
* otherwise the first ``:`` splits field from value (no colon: the whole line is the
  field, the value is empty) and one space after the colon is dropped;
* ``event`` sets the type; ``data`` appends a line; ``id`` sets the last event id
  unless it holds NUL; ``retry`` applies only when it is ASCII digits; any other
  field is ignored.

Work is per line (``str.split``/``str.partition`` in C), never per character.
"""

from __future__ import annotations

from codecs import utf_8_decode
from dataclasses import dataclass
from typing import Any

from ..errors import LimitExceededError
from ..limits import Limits
from .lines import LineFramer

__all__ = ["SSEParser", "ServerSentEvent"]


@dataclass(slots=True)
class ServerSentEvent:
    """One dispatched event.

    ``id`` is the last-event-id in force at dispatch (``None`` when empty) and
    ``retry`` the reconnection time in force (the last valid ``retry``; ``None``
    before any). ``data: [DONE]`` is an ordinary event here. (Not frozen, and its
    ``__init__`` written out: one is built per event, and that is 3x cheaper.)
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None

    def __init__(self, data: str, event: str = "message", id: str | None = None,
                 retry: int | None = None) -> None:
        self.data = data
        self.event = event
        self.id = id
        self.retry = retry


class SSEParser(LineFramer):
    """Incremental, chunking-invariant SSE parser (see module doc).

    ``limits.max_event_bytes`` bounds one event: its data lines (each value plus its
    line end) plus the line being read, counted in characters. Passing it raises
    :class:`LimitExceededError` at once, so a body of one endless line fails fast
    with bounded memory. (When events
    completed earlier in the same chunk, they are returned first and the error is
    raised by the next ``feed``/``close``: nothing received before it is lost.)
    ``incomplete`` is set by :meth:`close` when the body ended inside an event (a
    field line, or the start of one, after the last dispatch): that event is discarded.
    """


    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(limits)
        self._tail = b""             # bytes of a UTF-8 sequence cut by the chunk end
        self._started = False        # the leading-BOM check is done
        self._cr = False             # the last text ended with CR: a leading LF is its pair
        self._pending: list[str] = []  # pieces of the unfinished line
        self._pending_size = 0
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._last_id = ""
        self._retry: int | None = None
        self._dirty = False          # field lines seen since the last dispatch

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse the next bytes of the body; returns the events they complete."""
        self._check_open()
        # incremental UTF-8 decoding, as codecs' IncrementalDecoder does it, minus a call
        data = self._tail + chunk if self._tail else chunk
        text, used = utf_8_decode(data, "replace", False)
        self._tail = bytes(data[used:]) if used < len(data) else b""
        return self._run(text) if text else []

    def close(self) -> list[ServerSentEvent]:
        """End of body: flush the decoder; an unfinished event is discarded (``incomplete``)."""
        if self._error is not None:
            raise self._error
        if self.closed:
            return []
        out = self._run(utf_8_decode(self._tail, "replace", True)[0])
        self._tail = b""
        self.closed = True
        pending = "".join(self._pending)
        self.incomplete = self._dirty or (pending[:1] not in ("", ":"))
        self._pending = []
        self._pending_size = 0
        self._data = []
        self._data_size = 0
        self._event = ""
        self._dirty = False
        return out

    def _drop(self) -> None:
        self._pending, self._data = [], []

    def _parse(self, text: str, final: bool, out: list[Any]) -> None:
        if not text:
            return
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if self._cr:
            self._cr = False
            if text[:1] == "\n":
                text = text[1:]
        if "\r" in text:
            self._cr = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            if text:
                self._pending.append(text)
                self._pending_size += len(text)
                self._check()
            return
        lines = text.split("\n")
        if self._pending:
            self._pending.append(lines[0])
            lines[0] = "".join(self._pending)
            self._pending = []
            self._pending_size = 0
        last = lines.pop()
        limit = self._max
        # the per-line state lives in locals while the lines are read (written back at
        # the end, even on error), and events are dispatched inline: this loop runs
        # once per line of the body, so attribute traffic and calls are the cost
        data, size, dirty, event = self._data, self._data_size, self._dirty, self._event
        try:
            for line in lines:
                if not line:  # dispatch
                    if dirty:
                        dirty = False
                        if data:
                            out.append(ServerSentEvent(
                                data[0] if len(data) == 1 else "\n".join(data),
                                event or "message", self._last_id or None, self._retry))
                            data = []
                        size = 0
                        event = ""
                    continue
                if size + len(line) >= limit:
                    raise LimitExceededError("max_event_bytes", limit)
                if line[0] == ":":
                    continue
                dirty = True
                if line.startswith("data: "):  # the common cases, one slice
                    value = line[6:]
                    data.append(value)
                    size += len(value) + 1
                    continue
                if line.startswith("event: "):
                    event = line[7:]
                    continue
                field, colon, value = line.partition(":")
                if colon and value[:1] == " ":
                    value = value[1:]
                if field == "data":
                    data.append(value)
                    size += len(value) + 1
                elif field == "event":
                    event = value
                elif field == "id":
                    if "\x00" not in value:
                        self._last_id = value
                elif field == "retry":
                    if value.isascii() and value.isdigit():
                        self._retry = int(value)
        finally:
            self._data, self._data_size, self._dirty, self._event = data, size, dirty, event
        if last:
            self._pending = [last]
            self._pending_size = len(last)
            self._check()

    def _check(self) -> None:
        # the unfinished line will count at least its length plus its line end
        if self._data_size + self._pending_size >= self._max:
            raise LimitExceededError("max_event_bytes", self._max)
