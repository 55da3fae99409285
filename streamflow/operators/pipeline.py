"""``pipeline(dialect="auto")``: body bytes -> UniEvents in ONE reactive hop.

Marble::

    bytes:      --b'event: message_start\\ndata: {..}\\n\\n'--b'...text_delta "Hi"...'--...--|
    pipeline(): ------------------------------------------text.delta("Hi")--text.done--stop--|

The common case of ``frame() -> normalize()`` fused: it wraps one
:class:`streamflow.StreamDecoder` (framer + dialect decoder, sans-IO) per
subscription, so the per-token work stays in the core and the reactive layer costs
one hop per event, not three (each reactivex hop is 1-2 µs). ``framing=None`` uses
the dialect's own framing, sniffing it when the dialect is ``"auto"``. Errors reach
``on_error`` typed, with ``partial`` attached -- upstream ones (``TransportError``,
timeouts) too -- and only after every event decoded before the failure, even one
from the same chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reactivex import abc

from ..decoder import StreamDecoder
from ..errors import StreamflowError
from ..events import UniEvent
from ..limits import Limits
from ._base import Handlers, Operator, stateful

__all__ = ["EmittingDecoder", "pipeline"]


class EmittingDecoder(StreamDecoder):
    """A StreamDecoder that hands each frame's events to ``emit`` as soon as they exist.

    ``StreamDecoder.feed`` returns a chunk's events only once the whole chunk
    decoded, so a frame failing late in a chunk would hide the events before it;
    here nothing decoded is ever held back (``feed`` returns ``[]``), and
    :meth:`rescue` emits what a failing frame had produced before it raised.
    """

    def __init__(self, emit: Callable[[UniEvent], None], dialect: str = "auto", *,
                 framing: str | None = None, limits: Limits | None = None,
                 **options: Any) -> None:
        super().__init__(dialect, framing=framing, limits=limits, **options)
        self.emit = emit

    def feed(self, chunk: bytes) -> list[UniEvent]:
        """Decode the next chunk, emitting each event as soon as its frame is decoded.

        Once framing and dialect are known (after the first frame), frames go
        straight from the framer to the dialect decoder: this runs once per chunk
        and once per frame, so it skips the generic layers of ``StreamDecoder``.
        """
        decoder, framer = self.decoder, self.framer
        if decoder is None or framer is None:
            return super().feed(chunk)  # sniffing the framing or the dialect
        emit, decode, emitter = self.emit, decoder.feed, decoder.emitter
        try:
            for frame in framer.feed(chunk):
                self._frame_id = getattr(frame, "id", None)
                if emitter._stopped:  # after stop: counted, never decoded
                    self.ignored_frames += 1
                    continue
                for event in decode(frame):
                    emit(event)
        except StreamflowError as exc:
            raise exc.with_partial(self.partial) from exc.__cause__
        return []

    def feed_frames(self, frames: Iterable[Any]) -> list[UniEvent]:
        """Decode frames one by one, emitting their events at once."""
        emit, feed = self.emit, super().feed_frames
        for frame in frames:
            for event in feed((frame,)):
                emit(event)
        return []

    def end(self) -> None:
        """End of body: flush and check the terminator, emitting the last events."""
        for event in self.close():
            self.emit(event)

    def rescue(self, error: Exception) -> None:
        """Before ``on_error``: emit what the failing frame produced; attach the partial."""
        if isinstance(error, StreamflowError):
            pending, error.events = error.events, []
            for event in pending:
                self.emit(event)
            error.with_partial(self.partial)


def pipeline(dialect: str = "auto", framing: str | None = None, limits: Limits | None = None,
             **options: Any) -> Operator[bytes, UniEvent]:
    """An operator from body chunks to UniEvents (frame + decode + normalize fused)."""
    StreamDecoder(dialect, framing=framing, limits=limits, **options)  # fail fast on bad names

    def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
        state = EmittingDecoder(observer.on_next, dialect, framing=framing, limits=limits,
                                **options)

        def on_error(error: Exception) -> None:
            state.rescue(error)
            observer.on_error(error)

        def on_completed() -> None:
            state.end()
            observer.on_completed()

        def on_next(chunk: bytes) -> None:
            state.feed(chunk)

        return on_next, on_error, on_completed

    return stateful(setup)
