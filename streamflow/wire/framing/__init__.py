"""Framers: byte stream in, frames out (sans-IO; chunking never changes the result).

Every framer has ``feed(chunk: bytes) -> list[frame]``, ``close() -> list[frame]`` and
an ``incomplete`` flag set by ``close()`` when an unfinished frame was discarded.
Add a framing by writing one module and one line in :data:`FRAMERS`.

:data:`CUT` is what the ``frame`` operator emits last when that flag is set, so a
``decode`` downstream knows the body ended inside a frame as the fused decode does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ...core.limits import Limits
from .eventstream import EventStreamMessage, EventStreamParser, is_prelude
from .ndjson import NDJSONParser
from .raw import RawFramer
from .sse import ServerSentEvent, SSEParser

__all__ = [
    "CUT",
    "BodyCut",
    "FRAMERS",
    "Frame",
    "Framer",
    "EventStreamParser",
    "NDJSONParser",
    "RawFramer",
    "SSEParser",
    "ServerSentEvent",
    "make_framer",
    "sniff_framing",
]


#: What a framer yields: an SSE event (SSE, NDJSON), an event-stream message, raw bytes.
Frame = ServerSentEvent | EventStreamMessage | bytes


class BodyCut:
    """The body ended inside a frame (the framer discarded it): the last item of the
    ``frame`` operator for such a body. ``decode`` and ``parse_wire`` take it; a
    consumer of frames of its own skips it (``item is CUT``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "CUT"


CUT = BodyCut()
"""The one :class:`BodyCut`."""


class Framer(Protocol):
    """What every framer is: bytes in, frames out (see the module doc)."""

    incomplete: bool

    def feed(self, chunk: bytes) -> Sequence[Frame]:
        """Frame the next bytes; returns the frames they complete."""

    def close(self) -> Sequence[Frame]:
        """End of body: the frames still held; sets ``incomplete`` if one was cut."""


FRAMERS: dict[str, Callable[[Limits | None], Framer]] = {
    "sse": SSEParser,
    "ndjson": NDJSONParser,
    "eventstream": EventStreamParser,
    "raw": RawFramer,
}


def make_framer(name: str, limits: Limits | None = None) -> Framer:
    """A new framer by registry name (``"sse"``, ``"ndjson"``...)."""
    try:
        factory = FRAMERS[name]
    except KeyError:
        raise ValueError(f"unknown framing {name!r}; known: {', '.join(sorted(FRAMERS))}") from None
    return factory(limits)


def sniff_framing(head: bytes) -> str | None:
    """Guess the framing from the first bytes of a body (``None``: need more bytes).

    A body starting with ``{`` is JSON lines; anything else textual is SSE.
    Framings registered later may add their own test here. A body opening with an
    AWS event-stream prelude whose CRC checks out is ``eventstream``.
    """
    if head[:1] in (b"\x00", b"\x01", b"\x02"):  # a u32 length under 48 MiB: binary?
        if len(head) < 12:
            return None
        if is_prelude(head):
            return "eventstream"
    stripped = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not stripped:
        return None
    if stripped[:1] in (b"{", b"["):
        return "ndjson"
    return "sse"
