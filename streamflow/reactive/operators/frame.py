"""``frame(framing="sse")``: body bytes -> frames (``ServerSentEvent``), chunking-invariant.

Marble::

    bytes:   --b"data: he"--b"llo\\n\\ndata: x\\n"--b"\\n"--|
    frame(): ------------------SSE("hello")-----------SSE("x")--|

The framing is pluggable by registry name (``"sse"``, ``"ndjson"``, later
``"eventstream"``...) or ``"auto"`` (sniffed from the first bytes). Each
subscription gets its own framer. A framing error or limit goes downstream as
``on_error``; at the end of the body a cut event is discarded (WHATWG rule), the
marker :data:`~streamflow.wire.framing.CUT` is emitted in its place, and the stream
completes -- a ``decode`` downstream lets the dialect decide whether that end was
premature, exactly as the fused ``pipeline`` does.
"""

from __future__ import annotations

from typing import Any

from reactivex import abc

from ...core.limits import Limits
from ...wire.decoder import StreamDecoder
from ...wire.framing import CUT, make_framer
from ._base import Handlers, Operator, stateful

__all__ = ["frame"]


def frame(framing: str = "sse", *, limits: Limits | None = None) -> Operator[bytes, Any]:
    """An operator from body chunks to frames of ``framing`` (or ``"auto"``)."""
    if framing != "auto":
        make_framer(framing, limits)  # fail fast on an unknown name

    def setup(observer: abc.ObserverBase[Any]) -> Handlers:
        # the framing stage of the one decode loop (sniffing included), nothing else
        decoder = StreamDecoder(framing=None if framing == "auto" else framing, limits=limits)
        emit = observer.on_next

        def on_next(chunk: bytes) -> None:
            for item in decoder.frames(chunk):
                emit(item)

        def on_completed() -> None:
            for item in decoder.end_frames(empty_ok=True):
                emit(item)
            if decoder.framer is not None and decoder.framer.incomplete:
                emit(CUT)
            observer.on_completed()

        return on_next, observer.on_error, on_completed

    return stateful(setup)
