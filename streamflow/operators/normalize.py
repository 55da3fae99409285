"""``normalize(dialect="auto")``: frames (or wire models) -> UniEvent delta/stop events.

Marble (anthropic)::

    frames:      --start--block_start--delta("Hi")--block_stop-----------message_stop--|
    normalize(): ---------------------text.delta("Hi")--text.done("Hi")--stop----------|

Why it starts from frames, not from :func:`decode`'s models: the dialect decoder
reads each JSON payload once into plain dicts (``pydantic_core.from_json``) and maps
it by hand, which is about 3x cheaper per event than validating a pydantic model and
walking it. ``decode`` keeps the typed schema for applications that want it; wire
models are accepted here too (re-serialised to JSON) so both compose.

Every error -- from upstream or from the decoder -- reaches ``on_error`` as a typed
streamflow error with ``partial`` (the message so far) attached. At the end of the
frames the decoder checks the terminator (``IncompleteStreamError`` if it never came).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from reactivex import abc

from ..dialects import get_dialect, require_dialect
from ..dialects.base import Decoder
from ..errors import IncompleteStreamError, StreamflowError
from ..events import UniEvent
from ..framing.sse import ServerSentEvent
from ..limits import Limits
from ._base import Handlers, Operator, stateful

__all__ = ["normalize"]


def _as_frame(item: Any) -> Any:
    if isinstance(item, BaseModel):
        return ServerSentEvent(item.model_dump_json(exclude_unset=True),
                               str(getattr(item, "type", "message")))
    return item


def normalize(dialect: str = "auto", *, framing: str = "sse", limits: Limits | None = None,
              **options: Any) -> Operator[Any, UniEvent]:
    """An operator from frames (or wire models) to UniEvents; ``options`` go to the decoder."""
    if dialect != "auto":
        get_dialect(dialect)

    def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
        decoder: Decoder | None = None
        emit = observer.on_next

        def make(name: str) -> Decoder:
            return get_dialect(name)(limits=limits, **options)

        if dialect != "auto":
            decoder = make(dialect)

        def on_next(item: Any) -> None:
            nonlocal decoder
            frame = _as_frame(item)
            if decoder is None:
                decoder = make(require_dialect(frame, framing))
            for event in decoder.feed(frame):
                emit(event)

        def on_error(error: Exception) -> None:
            if isinstance(error, StreamflowError) and decoder is not None:
                error.with_partial(decoder.partial)
            observer.on_error(error)

        def on_completed() -> None:
            if decoder is None:
                raise IncompleteStreamError("the stream held no events")
            for event in decoder.close():
                emit(event)
            observer.on_completed()

        return on_next, on_error, on_completed

    return stateful(setup)
