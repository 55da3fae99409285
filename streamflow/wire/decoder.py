"""Bytes in, UniEvents out: THE decode loop of streamflow, sans-IO.

:class:`StreamDecoder` is the only code that frames, sniffs the framing and the
dialect, decodes, ignores what follows ``stop`` and raises. Everything else wraps
it: :func:`assemble` (a loop over ``feed``), the ``pipeline``, ``frame`` and
``decode`` operators and ``run()``'s :class:`~streamflow.app.runtime.Run` (an ``emit``
callback each, given when the decoder is built: ``run()``'s emits straight to its fan-out).

The outcome rule (of the UniEvent model): a stream ends with ``stop`` or with an exception,
never both. Once the stop event is out, nothing raises: later frames are counted
in :attr:`StreamDecoder.ignored_frames` and later bytes in ``ignored_bytes``,
never framed, decoded or raised -- a duplicated terminator, an oversized trailing
line, garbage after an event-stream's last frame are all ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from mypy_extensions import mypyc_attr

from ..core.errors import IncompleteStreamError, ProtocolError, StreamflowError
from ..core.events import UniEvent
from ..core.limits import Limits
from ..core.message import Message
from .dialects import get_dialect, require_dialect
from .dialects.base import Decoder
from .framing import Frame, Framer, make_framer, sniff_framing
from .framing.sse import ServerSentEvent, SSEParser

__all__ = ["StreamDecoder", "assemble"]

_BOM: Final = b"\xef\xbb\xbf"
Emit = Callable[[UniEvent], Any]


@mypyc_attr(allow_interpreted_subclasses=True)  # the pipeline operator subclasses it
class StreamDecoder:
    """Feed body bytes (or frames), get UniEvents; ``dialect="auto"`` detects from the first frame.

    ``framing`` overrides the dialect's own framing (``"ndjson"`` reads a recording
    that holds one JSON payload per line); ``options`` go to the dialect decoder.
    ``feed``/``feed_frames``/``close`` return the events they decoded -- or, with
    ``emit``, hand each event to ``emit`` as soon as its frame is decoded and return
    ``[]`` (so a frame failing late in a chunk never hides the events before it).
    An error raised carries ``partial``, and (without ``emit``) in ``events`` the
    events decoded in the same call before it.
    """

    def __init__(self, dialect: str = "auto", *, framing: str | None = None,
                 limits: Limits | None = None, clock: Any = None,
                 emit: Emit | None = None, **options: Any) -> None:
        self.limits = limits
        self.emit = emit
        self.ignored_frames = 0
        self.ignored_bytes = 0
        self._clock = clock
        self._options = options
        self._head = b""
        self._stopped = False
        self._cut = False
        self.decoder: Decoder | None = None
        self.dialect: str | None = None if dialect == "auto" else dialect
        self._explicit = self.dialect is not None
        self._frame_id: str | None = None
        self.framing: str | None = framing
        if self.dialect is not None:
            self.framing = framing or get_dialect(self.dialect).framing
            self._make_decoder(self.dialect)
        self.framer: Framer | None = make_framer(self.framing, limits) if self.framing else None

    def _make_decoder(self, name: str) -> Decoder:
        decoder = get_dialect(name)(limits=self.limits, clock=self._clock, **self._options)
        decoder.framed_as = self.framing or decoder.framing
        self.decoder = decoder
        return decoder

    @property
    def partial(self) -> Message:
        """The message assembled so far (empty before the dialect is known)."""
        return self.decoder.partial if self.decoder is not None else Message()

    @property
    def message(self) -> Message:
        """The message: final once :meth:`close` returned without raising."""
        return self.partial

    @property
    def last_event_id(self) -> str | None:
        """The SSE last-event-id (WHATWG) of the last frame decoded; ``None`` without ids.

        It is the ``id`` in force when that event was dispatched, so a client that
        reconnects with ``Last-Event-ID: <it>`` resumes right after what it decoded.
        """
        return self._frame_id

    @property
    def stopped(self) -> bool:
        """True once the stop event was decoded: the rest of the body is ignored."""
        return self._stopped

    # -- framing ----------------------------------------------------------------
    def frames(self, chunk: bytes) -> Sequence[Frame]:
        """Frame the next chunk, sniffing the framing from the first bytes if unknown."""
        framer = self.framer
        if framer is None:
            self._head += chunk
            if len(self._head) < 3 and _BOM.startswith(self._head):
                return []  # maybe a BOM split across chunks: wait for the next byte
            framing = sniff_framing(self._head)
            if framing is None:
                return []
            self.framing = framing
            framer = self.framer = make_framer(framing, self.limits)
            chunk, self._head = self._head, b""
        return framer.feed(chunk)

    def end_frames(self, *, empty_ok: bool = False) -> list[Frame]:
        """End of body for the framer: the frames it still held (an empty body raises
        ``IncompleteStreamError`` unless ``empty_ok``)."""
        frames: list[Frame] = []
        if self.framer is None:
            if not empty_ok and not self._head.strip():
                raise IncompleteStreamError("empty body: no events arrived")
            self.framing = sniff_framing(self._head) or "sse"
            self.framer = make_framer(self.framing, self.limits)
            head, self._head = self._head, b""
            frames = list(self.framer.feed(head))
        return [*frames, *self.framer.close()]

    # -- decoding ---------------------------------------------------------------
    def feed(self, chunk: bytes) -> list[UniEvent]:
        """Decode the next chunk of the body."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes, got {type(chunk).__name__}")
        if self._stopped:
            self.ignored_bytes += len(chunk)
            return []
        out: list[UniEvent] = []
        framer = self.framer
        try:
            if isinstance(framer, SSEParser):  # the common framing: a native call, compiled
                self._decode(framer.feed(chunk), out)
            else:
                self._decode(framer.feed(chunk) if framer is not None else self.frames(chunk),
                             out)
        except StreamflowError as exc:
            self._failed(exc, out)
        return out

    def feed_frames(self, frames: Iterable[Any]) -> list[UniEvent]:
        """Decode frames that were framed elsewhere (the ``decode`` operator)."""
        out: list[UniEvent] = []
        try:
            self._decode(frames, out)
        except StreamflowError as exc:
            self._failed(exc, out)
        return out

    def close(self) -> list[UniEvent]:
        """End of body: flush, and raise ``IncompleteStreamError`` if the stream was cut."""
        return self._end(framed_here=True)

    def mark_cut(self) -> None:
        """The body of the frames fed here ended inside a frame (framed elsewhere: the
        ``frame`` operator's :data:`~streamflow.wire.framing.CUT`)."""
        self._cut = True

    def close_frames(self) -> list[UniEvent]:
        """End of frames framed elsewhere: check the terminator."""
        return self._end(framed_here=False)

    def _end(self, framed_here: bool) -> list[UniEvent]:
        out: list[UniEvent] = []
        if self._stopped:
            return out
        try:
            if framed_here:
                self._decode(self.end_frames(), out)
            if self.decoder is None:
                raise IncompleteStreamError("the body held no events" if framed_here
                                            else "the stream held no events")
            self.decoder.cut = self._cut or bool(framed_here and self.framer is not None
                                                 and self.framer.incomplete)
            self._deliver(self.decoder.close(), out)
        except StreamflowError as exc:
            self._failed(exc, out)
        return out

    def fail(self, error: Exception) -> Exception | None:
        """An error from upstream (transport, timeout...): ``partial`` attached.

        ``None`` once the stream stopped: it is complete, and ends as such.
        """
        if self._stopped:
            return None
        if isinstance(error, StreamflowError):
            error.attach(self.partial)
        return error

    def _deliver(self, events: list[UniEvent], out: list[UniEvent]) -> None:
        if events:
            if events[-1].event_type == "stop":
                self._stopped = True
            emit = self.emit
            if emit is None:
                out += events
            else:
                for event in events:
                    emit(event)

    def _decode(self, frames: Iterable[Any], out: list[UniEvent]) -> None:
        decoder = self.decoder
        emit = self.emit
        ticked = False  # one clock read per chunk (at its first frame): its events arrived together
        for frame in frames:
            if self._stopped:
                self.ignored_frames += 1  # after stop: counted, never decoded
                continue
            if decoder is None:
                self.dialect = require_dialect(frame, self.framing or "sse")
                decoder = self._make_decoder(self.dialect)
            if not ticked:
                decoder.tick()
                ticked = True
            # an SSE frame's id read natively (compiled), any other frame's by name
            self._frame_id = frame.id if isinstance(frame, ServerSentEvent) else getattr(
                frame, "id", None)
            events = decoder.feed_at(frame)
            if events:  # the hot path of every entry point: once per frame
                if events[-1].event_type == "stop":
                    self._stopped = True
                if emit is None:
                    out += events
                else:
                    for event in events:
                        emit(event)

    def _failed(self, exc: StreamflowError, out: list[UniEvent]) -> None:
        """Deliver what came before ``exc``; raise it unless the stream had stopped."""
        pending, exc.events = exc.events, []
        self._deliver(pending, out)
        if self._stopped or (self.decoder is not None and self.decoder.stopped):
            self._stopped = True
            return  # the stream is complete: what failed after stop is ignored
        self._hint(exc).attach(self.partial)
        if self.emit is None:
            exc.events = out[:]
            out.clear()
        raise exc


    def _hint(self, exc: StreamflowError) -> StreamflowError:
        """Nothing understood with a dialect chosen by hand (bad frames, or frames the
        dialect ignores until the body ends): suggest ``dialect="auto"``."""
        partial = self.partial
        if (self._explicit and isinstance(exc, (ProtocolError, IncompleteStreamError))
                and not partial.items and partial.id is None and "dialect=" not in exc.message):
            exc.message = (f'{exc.message} (is the body really {self.dialect!r}? '
                           f'dialect="auto" detects the dialect)')
            exc.args = (exc.message,)
        return exc


def assemble(chunks: bytes | Iterable[bytes], dialect: str = "auto", *,
             framing: str | None = None, limits: Limits | None = None,
             **options: Any) -> Message:
    """Decode a whole body (bytes or an iterable of chunks) into its final message.

    Raises the typed :mod:`streamflow.core.errors` error, ``partial`` attached, when the
    stream failed or was cut.
    """
    if isinstance(chunks, str) or not isinstance(chunks, (bytes, bytearray, memoryview, Iterable)):
        raise TypeError(f"assemble() takes the body as bytes or an iterable of bytes chunks, "
                        f"not {type(chunks).__name__} (a str body: pass body.encode())")
    decoder = StreamDecoder(dialect, framing=framing, limits=limits, **options)
    # items typed as object: compiled code would otherwise reject a str chunk with its own
    # TypeError before this clearer one
    body: Iterable[object] = (
        [bytes(chunks)] if isinstance(chunks, (bytes, bytearray, memoryview)) else chunks)
    for chunk in body:
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"assemble() takes bytes chunks, got a {type(chunk).__name__} chunk")
        decoder.feed(bytes(chunk))
    decoder.close()
    return decoder.message
