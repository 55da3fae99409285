"""Raw framing: the frames are the body's byte chunks themselves (speech audio, whole documents).

There is nothing to parse and nothing can be cut, so ``incomplete`` is never set;
a body of raw bytes cannot be recognised by :func:`~streamflow.wire.framing.sniff_framing`
(choose a dialect whose framing is ``"raw"`` explicitly). A chunk larger than
``limits.max_event_bytes`` is split into frames of at most that size.
"""

from __future__ import annotations

from ...core.limits import DEFAULT_LIMITS, Limits

__all__ = ["RawFramer"]


class RawFramer:
    """Pass-through framer: ``feed(bytes) -> [bytes]`` (empty chunks give no frame)."""

    __slots__ = ("_max", "closed", "incomplete")

    def __init__(self, limits: Limits | None = None) -> None:
        self._max = (limits or DEFAULT_LIMITS).max_event_bytes
        self.incomplete = False
        self.closed = False

    def feed(self, chunk: bytes) -> list[bytes]:
        """The chunk itself, as one frame (or several when it passes ``max_event_bytes``)."""
        if not chunk:
            return []
        size = self._max
        if len(chunk) <= size:
            return [bytes(chunk)]
        return [bytes(chunk[i:i + size]) for i in range(0, len(chunk), size)]

    def close(self) -> list[bytes]:
        """End of body: nothing is buffered, so nothing is left."""
        self.closed = True
        return []
