"""``pipeline(dialect="auto")``: body bytes -> UniEvents in ONE reactive hop.

Marble::

    bytes:      --b'event: message_start\\ndata: {..}\\n\\n'--b'...text_delta "Hi"...'--...--|
    pipeline(): ------------------------------------------text.delta("Hi")--text.done--stop--|

The common case of ``frame() -> normalize()`` fused: it wraps one
:class:`streamflow.StreamDecoder` (framer + dialect decoder, sans-IO) per
subscription, handing it ``observer.on_next`` as its ``emit``, so the per-token work
stays in the core and the reactive layer costs one hop per event, not three (each
reactivex hop is 1-2 µs). ``framing=None`` uses
the dialect's own framing, sniffing it when the dialect is ``"auto"``. Errors reach
``on_error`` typed, with ``partial`` attached -- upstream ones (``TransportError``,
timeouts) too -- and only after every event decoded before the failure, even one
from the same chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from reactivex import Observable, abc

from ..decoder import StreamDecoder, lend
from ..events import UniEvent
from ..framing.sse import ServerSentEvent
from ..limits import Limits
from ._base import Handlers, Operator, stateful

__all__ = ["DecodedObservable", "as_frame", "pipeline", "subscribe_decoder"]


def subscribe_decoder(observer: abc.ObserverBase[Any], dialect: str, framing: str | None,
                      limits: Limits | None, options: dict[str, Any], *,
                      frames: bool = False,
                      lend_to: Callable[[StreamDecoder], None] | None = None) -> Handlers:
    """The handlers of one subscription: a :class:`StreamDecoder` emitting to ``observer``.

    The shared body of ``pipeline``, ``normalize`` (``frames=True``: items are frames)
    and ``run()``'s front: ``on_next`` feeds, ``on_completed`` closes (the decoder
    raises if the stream was cut), ``on_error`` passes the upstream error on with
    ``partial`` attached -- or completes when the stream had already stopped (a
    stream never ends with both). The decoder is lent to a ``run()`` subscribing now
    (or handed to ``lend_to``: ``run()``'s own front).
    """
    decoder = StreamDecoder(dialect, framing=framing, limits=limits, emit=observer.on_next,
                            **options)
    if lend_to is None:
        lend(decoder)
    else:
        lend_to(decoder)
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
    """An operator from body chunks to UniEvents (frame + decode + normalize fused).

    Args:
        dialect: the wire format (``"anthropic"``, ``"openai-chat"``, ``"gemini"``...);
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
    """What ``pipeline()`` returns: the UniEvents decoded from ``source``'s body chunks.

    ``run()`` given one subscribes :meth:`lent_to` instead (the same pipeline, its
    decoder handed to ``run``), so the events go from the decoder to ``run``'s sinks
    with no hop between, and the message is assembled once.
    """

    def __init__(self, source: Observable[bytes], dialect: str, framing: str | None,
                 limits: Limits | None, options: dict[str, Any],
                 lend_to: Callable[[StreamDecoder], None] | None = None) -> None:
        def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
            return subscribe_decoder(observer, dialect, framing, limits, options,
                                     lend_to=lend_to)

        super().__init__(stateful(setup)(source)._subscribe_core)
        self._args = (source, dialect, framing, limits, options)

    def lent_to(self, borrower: Callable[[StreamDecoder], None]) -> DecodedObservable:
        """The same pipeline, its decoder handed to ``borrower`` at each subscription."""
        return DecodedObservable(*self._args, lend_to=borrower)
