"""Bytes in, UniEvents out: a framer and a dialect decoder composed, sans-IO.

:class:`StreamDecoder` is the whole core in one object (what the ``pipeline``
operator wraps); :func:`assemble` runs it over a body and returns the final
:class:`~streamflow.message.Message`, or raises the typed error with the partial
message attached.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .dialects import get_dialect, require_dialect
from .dialects.base import Decoder
from .errors import IncompleteStreamError, StreamflowError
from .events import UniEvent
from .framing import make_framer, sniff_framing
from .limits import Limits
from .message import Message

__all__ = ["StreamDecoder", "assemble"]

_BOM = b"\xef\xbb\xbf"


class StreamDecoder:
    """Feed body bytes, get UniEvents; ``dialect="auto"`` detects from the first event.

    ``framing`` overrides the dialect's own framing (``"ndjson"`` reads a recording
    that holds one JSON payload per line). ``options`` go to the dialect decoder.

    Once the stop event is out the stream is over: frames after it (a duplicated
    terminator, trailing keep-alives) are not decoded, only counted in
    ``ignored_frames``, so a stream never yields ``stop`` and then an error.
    """

    ignored_frames = 0
    _frame_id: str | None = None

    def __init__(self, dialect: str = "auto", *, framing: str | None = None,
                 limits: Limits | None = None, clock: Any = None, **options: Any) -> None:
        self.limits = limits
        self._clock = clock
        self._options = options
        self._head = b""
        self.decoder: Decoder | None = None
        self.dialect: str | None = None if dialect == "auto" else dialect
        if self.dialect is not None:
            framing = framing or self._make_decoder(self.dialect).framing
        self.framing: str | None = framing
        self.framer: Any = make_framer(framing, limits) if framing else None

    def _make_decoder(self, name: str) -> Decoder:
        self.decoder = get_dialect(name)(limits=self.limits, clock=self._clock, **self._options)
        return self.decoder

    @property
    def partial(self) -> Message:
        """The message assembled so far (empty before the dialect is known)."""
        return self.decoder.partial if self.decoder is not None else Message()

    @property
    def last_event_id(self) -> str | None:
        """The SSE last-event-id (WHATWG) of the last frame decoded; ``None`` without ids.

        It is the ``id`` in force when that event was dispatched, so a client that
        reconnects with ``Last-Event-ID: <it>`` resumes right after what it decoded.
        """
        return self._frame_id

    @property
    def message(self) -> Message:
        """The message: final once :meth:`close` returned without raising."""
        return self.partial

    def feed(self, chunk: bytes) -> list[UniEvent]:
        """Decode the next chunk of the body."""
        try:
            if self.framer is None:
                self._head += chunk
                if len(self._head) < 3 and _BOM.startswith(self._head):
                    return []  # maybe a BOM split across chunks: wait for the next byte
                framing = sniff_framing(self._head)
                if framing is None:
                    return []
                self.framing = framing
                self.framer = make_framer(framing, self.limits)
                chunk, self._head = self._head, b""
            return self.feed_frames(self.framer.feed(chunk))
        except StreamflowError as exc:
            raise exc.with_partial(self.partial) from exc.__cause__

    def feed_frames(self, frames: Iterable[Any]) -> list[UniEvent]:
        """Decode frames that were framed elsewhere."""
        out: list[UniEvent] = []
        try:
            for frame in frames:
                self._frame_id = getattr(frame, "id", None)
                decoder = self.decoder
                if decoder is None:
                    self.dialect = require_dialect(frame, self.framing or "sse")
                    decoder = self._make_decoder(self.dialect)
                elif decoder.emitter._stopped:
                    self.ignored_frames += 1
                    continue
                out += decoder.feed(frame)
        except StreamflowError as exc:
            exc.events = out + exc.events  # decoded before the failure: not lost
            raise
        return out

    def close(self) -> list[UniEvent]:
        """End of body: flush, and raise ``IncompleteStreamError`` if the stream was cut."""
        try:
            if self.framer is None:
                if not self._head.strip():
                    raise IncompleteStreamError("empty body: no events arrived")
                self.framing = sniff_framing(self._head) or "sse"
                self.framer = make_framer(self.framing, self.limits)
                head, self._head = self._head, b""
                out = self.feed_frames(self.framer.feed(head))
            else:
                out = []
            out += self.feed_frames(self.framer.close())
            if self.decoder is None:
                raise IncompleteStreamError("the body held no events")
            try:
                return out + self.decoder.close()
            except StreamflowError as exc:
                exc.events = out + exc.events
                raise
        except StreamflowError as exc:
            raise exc.with_partial(self.partial) from exc.__cause__


def assemble(chunks: bytes | Iterable[bytes], dialect: str = "auto", *,
             framing: str | None = None, limits: Limits | None = None,
             **options: Any) -> Message:
    """Decode a whole body (bytes or an iterable of chunks) into its final message.

    Raises the typed :mod:`streamflow.errors` error, ``partial`` attached, when the
    stream failed or was cut.
    """
    if isinstance(chunks, str) or not isinstance(chunks, (bytes, bytearray, memoryview, Iterable)):
        raise TypeError(f"assemble() takes the body as bytes or an iterable of bytes chunks, "
                        f"not {type(chunks).__name__} (a str body: pass body.encode())")
    decoder = StreamDecoder(dialect, framing=framing, limits=limits, **options)
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = [bytes(chunks)]
    for chunk in chunks:
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"assemble() takes bytes chunks, got a {type(chunk).__name__} chunk")
        decoder.feed(bytes(chunk))
    decoder.close()
    return decoder.message
