"""``encode(target, **flavour)``: UniEvents -> the body bytes of a target, as they come.

Marble::

    events:            --delta--delta--stop--|
    encode("openai-chat"): --b1-----b2-----b3+[DONE]--|

A thin wrapper of the one encode routine,
:class:`~streamflow.wire.dialects.encoder.BodyWriter`, over a sans-IO
:class:`~streamflow.wire.dialects.encoder.Encoder` (one per subscription): each
event's bytes are emitted at once (nothing when an event writes nothing yet).
A :class:`~streamflow.core.errors.StreamflowError` from upstream is written as the
target's in-band error event, then passed on, so the consumer (a server, a
file) gets a well-formed body *and* knows the stream failed. An upstream that
completes without a stop event (``take(n)``, a cut source) gets the in-band
error of an :class:`~streamflow.core.errors.IncompleteStreamError`, which is then
raised: never a silent end, the same end as ``streamflow.encode()``, the gateway
and the web responses. Other exceptions (bugs) pass through untouched.
"""

from __future__ import annotations

from typing import Any

from reactivex import abc

from ...core.events import UniEvent
from ...wire.dialects import get_encoder
from ...wire.dialects.encoder import BodyWriter
from ._base import Handlers, Operator, stateful

__all__ = ["encode"]


def encode(target: str, **flavour: Any) -> Operator[UniEvent, bytes]:
    """An operator writing ``target``'s body (a name of ``ENCODERS``: a dialect or a UI
    target) from UniEvents."""
    cls = get_encoder(target)
    cls(**flavour)  # bad options fail here, when the pipeline is built

    def setup(observer: abc.ObserverBase[bytes]) -> Handlers:
        writer = BodyWriter(cls(**flavour))
        emit = observer.on_next

        def on_next(event: UniEvent) -> None:
            chunk = writer.feed(event)
            if chunk:
                emit(chunk)

        def end(error: Exception | None) -> None:
            tail, raised = writer.close(error)
            if tail:
                emit(tail)
            if raised is None:
                observer.on_completed()
            else:
                observer.on_error(raised)

        def on_error(error: Exception) -> None:
            end(error)

        def on_completed() -> None:
            end(None)

        return on_next, on_error, on_completed

    return stateful(setup)
