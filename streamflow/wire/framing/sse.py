"""Server-sent events, parsed exactly by the WHATWG "parse an event stream" rules.

Sans-IO: feed bytes as they arrive, get the events they complete::

    p = SSEParser()
    events = p.feed(b"data: hel")      # []
    events += p.feed(b"lo\\n\\n")        # [ServerSentEvent(event='message', data='hello')]
    events += p.close()                # end of body; p.incomplete tells if an event was cut

The result is the same however the bytes are chunked. Lines are split on the bytes
(CR, LF and ``:`` are ASCII, so they never fall inside a UTF-8 sequence), and a
field's value is decoded as UTF-8 when it is read -- invalid bytes become U+FFFD,
exactly as decoding the whole stream first would give; one leading BOM is dropped.
A CR at the end of one chunk followed by LF at the start of the next is one line end.
An event keeps its data's bytes (:attr:`ServerSentEvent.raw`: what a JSON parser
reads, with no decode and re-encode) and decodes :attr:`ServerSentEvent.data` on
first use.

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

Work is per line (``bytes.split``/``bytes.partition`` in C), never per character.
"""

from __future__ import annotations

from codecs import utf_8_decode
from typing import Any, Final

from ...core.errors import LimitExceededError
from ...core.limits import Limits
from .lines import LineFramer

__all__ = ["SSEParser", "ServerSentEvent"]


class ServerSentEvent:
    """One dispatched event.

    ``data`` is the event's data (its ``data`` lines joined with LF); ``raw`` the same
    as UTF-8 bytes. Build one from either (``ServerSentEvent("hi")`` or
    ``ServerSentEvent(raw=b"hi")``); the other is derived on first use (invalid UTF-8
    in ``raw`` reads as U+FFFD). ``id`` is the last-event-id in force at dispatch
    (``None`` when empty) and ``retry`` the reconnection time in force (the last
    valid ``retry``; ``None`` before any). ``data: [DONE]`` is an ordinary event here.
    Two events are equal when their data, event, id and retry are.
    """

    def __init__(self, data: str | None = None, event: str = "message", id: str | None = None,
                 retry: int | None = None, raw: bytes | None = None) -> None:
        if data is None and raw is None:
            raise TypeError("ServerSentEvent() takes data (str) or raw (bytes)")
        self._data = data
        self._raw = raw
        self.event = event
        self.id = id
        self.retry = retry

    @property
    def data(self) -> str:
        """The event's data, decoded from :attr:`raw` on first use."""
        data = self._data
        if data is None:
            raw = self._raw
            data = self._data = utf_8_decode(raw if raw is not None else b"", "replace", True)[0]
        return data

    @property
    def raw(self) -> bytes:
        """The event's data as UTF-8 bytes (as received, when the parser built it)."""
        raw = self._raw
        if raw is None:
            data = self._data
            raw = self._raw = (data if data is not None else "").encode("utf-8", "surrogatepass")
        return raw

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ServerSentEvent):
            return NotImplemented
        return (self.data == other.data and self.event == other.event and self.id == other.id
                and self.retry == other.retry)

    def __repr__(self) -> str:
        return (f"ServerSentEvent(data={self.data!r}, event={self.event!r}, id={self.id!r}, "
                f"retry={self.retry!r})")


_BOM: Final = b"\xef\xbb\xbf"
_NAMES_KEPT: Final = 64  # event names decoded once and kept (a stream uses a handful)


class SSEParser(LineFramer):
    """Incremental, chunking-invariant SSE parser (see module doc).

    ``limits.max_event_bytes`` bounds one event: its data lines (each value plus its
    line end) plus the line being read, counted in bytes. Passing it raises
    :class:`LimitExceededError` at once, so a body of one endless line fails fast
    with bounded memory. (When events
    completed earlier in the same chunk, they are returned first and the error is
    raised by the next ``feed``/``close``: nothing received before it is lost.)
    ``incomplete`` is set by :meth:`close` when the body ended inside an event (a
    field line, or the start of one, after the last dispatch): that event is discarded.
    """


    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(limits)
        self._head = b""             # the first bytes while they may still be a BOM
        self._started = False        # the leading-BOM check is done
        self._cr = False             # the last bytes ended with CR: a leading LF is its pair
        self._pending: list[bytes] = []  # pieces of the unfinished line
        self._pending_size = 0
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = b""
        self._last_id = ""
        self._retry: int | None = None
        self._dirty = False          # field lines seen since the last dispatch
        self._names: dict[bytes, str] = {}

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse the next bytes of the body; returns the events they complete."""
        self._check_open()
        return self._run(chunk if type(chunk) is bytes else bytes(chunk)) if chunk else []

    def close(self) -> list[ServerSentEvent]:
        """End of body: an unfinished event is discarded (``incomplete``)."""
        if self._error is not None:
            raise self._error
        if self.closed:
            return []
        out = self._run(b"", True)
        self.closed = True
        pending = b"".join(self._pending)
        self.incomplete = self._dirty or (pending[:1] not in (b"", b":"))
        self._pending = []
        self._pending_size = 0
        self._data = []
        self._data_size = 0
        self._event = b""
        self._dirty = False
        return out

    def _drop(self) -> None:
        self._pending, self._data = [], []

    def _name(self, raw: bytes) -> str:
        """An ``event`` value as text (``message`` when empty), decoded once per name."""
        if not raw:
            return "message"
        name = self._names.get(raw)
        if name is None:
            name = utf_8_decode(raw, "replace", True)[0]
            if len(self._names) < _NAMES_KEPT:
                self._names[raw] = name
        return name

    def _parse(self, chunk: Any, final: bool, out: list[Any]) -> None:
        text: bytes = chunk
        if not self._started:
            text = self._head + text
            if len(text) < 3 and _BOM.startswith(text) and not final:
                self._head = text  # maybe a BOM cut by the chunk end: wait for more
                return
            self._started = True
            self._head = b""
            if text.startswith(_BOM):
                text = text[3:]
        if not text:
            return
        if self._cr:
            self._cr = False
            if text[:1] == b"\n":
                text = text[1:]
        # find(), not ``in``: bytes.__contains__ first tries the operand as an integer,
        # and builds (then drops) a TypeError doing so -- a cost on every chunk
        if text.find(b"\r") >= 0:
            self._cr = text[-1:] == b"\r"
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = text.split(b"\n")
        if len(lines) == 1:  # no line end: all of it is the unfinished line
            self._pending.append(text)
            self._pending_size += len(text)
            self._check()
            return
        if self._pending:
            self._pending.append(lines[0])
            lines[0] = b"".join(self._pending)
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
                                None, self._name(event), self._last_id or None, self._retry,
                                data[0] if len(data) == 1 else b"\n".join(data)))
                            data = []
                        size = 0
                        event = b""
                    continue
                if size + len(line) >= limit:
                    raise LimitExceededError("max_event_bytes", limit)
                if line.startswith(b":"):
                    continue
                dirty = True
                if line.startswith(b"data: "):  # the common cases, one slice
                    value = line[6:]
                    data.append(value)
                    size += len(value) + 1
                    continue
                if line.startswith(b"event: "):
                    event = line[7:]
                    continue
                field, colon, value = line.partition(b":")
                if colon and value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    data.append(value)
                    size += len(value) + 1
                elif field == b"event":
                    event = value
                elif field == b"id":
                    if value.find(b"\x00") < 0:
                        self._last_id = utf_8_decode(value, "replace", True)[0]
                elif field == b"retry":
                    if value.isdigit():  # ASCII digits only, for bytes
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
