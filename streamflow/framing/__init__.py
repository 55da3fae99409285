"""Framers: byte stream in, frames out (sans-IO; chunking never changes the result).

Every framer has ``feed(chunk: bytes) -> list[frame]``, ``close() -> list[frame]`` and
an ``incomplete`` flag set by ``close()`` when an unfinished frame was discarded.
Add a framing by writing one module and one line in :data:`FRAMERS`.
"""

from __future__ import annotations

from typing import Any, Callable

from ..limits import Limits
from .ndjson import NDJSONParser
from .sse import ServerSentEvent, SSEParser

__all__ = ["ServerSentEvent", "SSEParser", "NDJSONParser", "FRAMERS", "make_framer", "sniff_framing"]

FRAMERS: dict[str, Callable[..., Any]] = {
    "sse": SSEParser,
    "ndjson": NDJSONParser,
}


def make_framer(name: str, limits: Limits | None = None) -> Any:
    """A new framer by registry name (``"sse"``, ``"ndjson"``...)."""
    try:
        factory = FRAMERS[name]
    except KeyError:
        raise ValueError(f"unknown framing {name!r}; known: {', '.join(sorted(FRAMERS))}") from None
    return factory(limits)


def sniff_framing(head: bytes) -> str | None:
    """Guess the framing from the first bytes of a body (``None``: need more bytes).

    A body starting with ``{`` is JSON lines; anything else textual is SSE.
    Framings registered later may add their own test here.
    """
    stripped = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if not stripped:
        return None
    if stripped[:1] in (b"{", b"["):
        return "ndjson"
    return "sse"
