"""Newline-delimited JSON (Ollama, and ``.jsonl`` recordings of SSE payloads).

Each non-blank line becomes a data-only :class:`~streamflow.wire.framing.sse.ServerSentEvent`
so every dialect reads one frame type: a JSON-lines body is a stream of data
payloads. LF or CRLF end a line (surrounding whitespace is dropped); UTF-8 is
decoded incrementally with U+FFFD for invalid bytes and one leading BOM dropped;
an unterminated last line is still delivered by :meth:`NDJSONParser.close`
(NDJSON has no blank-line dispatch), and ``incomplete`` is never set: a cut last
line is the dialect's to reject (it is not valid JSON).
"""

from __future__ import annotations

import codecs
from typing import Any

from ...core.errors import LimitExceededError
from ...core.limits import Limits
from .lines import LineFramer
from .sse import ServerSentEvent

__all__ = ["NDJSONParser"]


class NDJSONParser(LineFramer):
    """Incremental JSON-lines framer: ``feed(bytes) -> list[ServerSentEvent]``.

    ``limits.max_event_bytes`` bounds one line (in characters); an endless line
    raises :class:`LimitExceededError` as soon as it passes the limit (lines completed
    before it in the same chunk are returned first; the next call raises).
    """


    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(limits)
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._pending: list[str] = []
        self._pending_size = 0

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Frame the next bytes; returns one event per completed non-blank line."""
        self._check_open()
        return self._run(self._decoder.decode(chunk), final=False)

    def close(self) -> list[ServerSentEvent]:
        """End of body: the last line is delivered even without its newline."""
        if self._error is not None:
            raise self._error
        if self.closed:
            return []
        self.closed = True
        return self._run(self._decoder.decode(b"", True), final=True)

    def _drop(self) -> None:
        self._pending = []

    def _parse(self, text: str, final: bool, out: list[Any]) -> None:
        if "\n" not in text and not final:
            if text:
                self._pending.append(text)
                self._pending_size += len(text)
                if self._pending_size > self._max:
                    raise LimitExceededError("max_event_bytes", self._max)
            return
        if self._pending:
            self._pending.append(text)
            text = "".join(self._pending)
            self._pending = []
            self._pending_size = 0
        lines = text.split("\n")
        if not final:
            last = lines.pop()
            if last:
                self._pending = [last]
                self._pending_size = len(last)
        for line in lines:
            if len(line) > self._max:
                raise LimitExceededError("max_event_bytes", self._max)
            line = line.strip()
            if line:
                out.append(ServerSentEvent(data=line))
        if self._pending_size > self._max:
            raise LimitExceededError("max_event_bytes", self._max)
