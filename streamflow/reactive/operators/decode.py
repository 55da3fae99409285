"""``decode(dialect="auto")``: frames (or wire models) -> UniEvent delta/stop events.

Marble (anthropic)::

    frames:      --start--block_start--delta("Hi")--block_stop-----------message_stop--|
    decode():    ---------------------text.delta("Hi")--text.done("Hi")--stop----------|

Why it starts from frames, not from :func:`parse_wire`'s models: the dialect decoder
reads each JSON payload once into plain dicts (``pydantic_core.from_json``) and maps
it by hand, which is about 3x cheaper per event than validating a pydantic model and
walking it. ``parse_wire`` keeps the typed schema for applications that want it; wire
models are accepted here too (re-serialised to JSON) so both compose.

A thin wrapper over :class:`streamflow.StreamDecoder` (its ``feed_frames``), so it
gives the very events and outcome ``pipeline`` gives: frames after ``stop`` are
ignored, an upstream error after ``stop`` (a framing error of the trailing bytes)
completes the stream. Every error reaches ``on_error`` as a typed streamflow error
with ``partial`` attached. At the end of the frames the decoder checks the
terminator (``IncompleteStreamError`` if it never came).
"""

from __future__ import annotations

from typing import Any

from reactivex import abc

from ...core.events import UniEvent
from ...core.limits import Limits
from ...wire.decoder import StreamDecoder
from ._base import Handlers, Operator, stateful
from .pipeline import decoder_handlers

__all__ = ["decode"]


def decode(dialect: str = "auto", *, framing: str = "sse", limits: Limits | None = None,
              **options: Any) -> Operator[Any, UniEvent]:
    """An operator from frames (or wire models) to UniEvents; ``options`` go to the decoder."""
    StreamDecoder(dialect, framing=framing, limits=limits, **options)  # fail fast on bad names

    def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
        decoder = StreamDecoder(dialect, framing=framing, limits=limits, emit=observer.on_next,
                                **options)
        return decoder_handlers(decoder, observer, frames=True)

    return stateful(setup)
