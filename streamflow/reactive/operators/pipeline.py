"""``pipeline(dialect="auto")``: body bytes -> UniEvents in ONE reactive hop.

Marble::

    bytes:      --b'event: message_start\\ndata: {..}\\n\\n'--b'...text_delta "Hi"...'--...--|
    pipeline(): ------------------------------------------text.delta("Hi")--text.done--stop--|

The common case of ``frame() -> decode()`` fused: it wraps one
:class:`streamflow.StreamDecoder` (framer + dialect decoder, sans-IO) per
subscription, handing it ``observer.on_next`` as its ``emit``, so the per-token work
stays in the core and the reactive layer costs one hop per event, not three.
``framing=None`` uses
the dialect's own framing, sniffing it when the dialect is ``"auto"``. Errors reach
``on_error`` typed, with ``partial`` attached -- upstream ones (``TransportError``,
timeouts) too -- and only after every event decoded before the failure, even one
from the same chunk.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from reactivex import Observable, abc

from ...core.events import UniEvent
from ...core.limits import Limits
from ...wire.decoder import StreamDecoder
from ...wire.framing import CUT
from ...wire.framing.sse import ServerSentEvent
from ._base import Handlers, Operator, subscriber

__all__ = ["DecodedObservable", "as_frame", "decoder_handlers", "pipeline"]


def decoder_handlers(decoder: StreamDecoder, observer: abc.ObserverBase[Any], *,
                     frames: bool = False) -> Handlers:
    """The handlers of one subscription feeding ``decoder`` (built by the caller, emitting
    where the caller chose: ``observer.on_next``, or ``run()``'s fan-out).

    The shared body of ``pipeline``, ``decode`` (``frames=True``: items are frames)
    and ``run()``'s front: ``on_next`` feeds, ``on_completed`` closes (the decoder
    raises if the stream was cut), ``on_error`` passes the upstream error on with
    ``partial`` attached -- or completes when the stream had already stopped (a
    stream never ends with both).
    """
    close = decoder.close_frames if frames else decoder.close

    def on_error(error: Exception) -> None:
        failed = decoder.fail(error)
        if failed is None:
            observer.on_completed()
        else:
            observer.on_error(failed)

    def on_completed() -> None:
        close()
        observer.on_completed()

    if frames:
        def on_next(item: Any) -> None:
            if item is CUT:  # the frame operator's body ended inside a frame
                decoder.mark_cut()
                return
            decoder.feed_frames((as_frame(item),))

        return on_next, on_error, on_completed
    return decoder.feed, on_error, on_completed  # feed returns [] with emit: nothing to pass


def as_frame(item: Any) -> Any:
    """A frame as it is, a typed wire model as the SSE frame it came in."""
    if isinstance(item, BaseModel):
        return ServerSentEvent(item.model_dump_json(exclude_unset=True),
                               str(getattr(item, "type", "message")))
    return item


def pipeline(dialect: str = "auto", framing: str | None = None, limits: Limits | None = None,
             **options: Any) -> Operator[bytes, UniEvent]:
    """An operator from body chunks to UniEvents (frame + decode fused).

    Args:
        dialect: the source's dialect (``"anthropic"``, ``"openai-chat"``, ``"gemini"``...);
            ``"auto"`` detects it from the first event.
        framing: override the dialect's framing (``"ndjson"`` reads a ``.jsonl``
            recording); ``None`` uses the dialect's own, sniffed for ``"auto"``.
        limits: :class:`~streamflow.Limits` bounding event, argument and message sizes.
        **options: passed to the dialect decoder.

    An unknown dialect name is a ``ValueError`` at once, not on subscription.
    """
    StreamDecoder(dialect, framing=framing, limits=limits, **options)  # fail fast on bad names

    def operator(source: Observable[bytes]) -> Observable[UniEvent]:
        return DecodedObservable(source, dialect, framing, limits, options)

    return operator


class DecodedObservable(Observable[UniEvent]):
    """What ``pipeline()`` returns: the UniEvents decoded from ``upstream``'s body chunks.

    It keeps its parts (``upstream``, ``dialect``, ``framing``, ``limits``,
    ``options``) so ``run()`` given one decodes ``upstream`` itself, with its own
    decoder emitting straight to the sinks (no hop between, the message assembled once).
    """

    def __init__(self, upstream: Observable[bytes], dialect: str, framing: str | None,
                 limits: Limits | None, options: dict[str, Any]) -> None:
        def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
            decoder = StreamDecoder(dialect, framing=framing, limits=limits,
                                    emit=observer.on_next, **options)
            return decoder_handlers(decoder, observer)

        super().__init__(subscriber(upstream, setup))
        self.upstream = upstream
        self.dialect = dialect
        self.framing = framing
        self.limits = limits
        self.options = options
