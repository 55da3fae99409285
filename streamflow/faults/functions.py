"""The faults as plain functions on chunk lists (sans-IO friendly, no event loop needed).

Each returns a new list of :data:`~streamflow.faults.chunks.Chunk`; feed
``payload(result)`` to :func:`streamflow.assemble` or a ``StreamDecoder``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .chunks import Chunk
from .dialect_faults import DropTerminator, InsertError
from .profiles import ErrorSpec
from .recipes import (
    ByEvent,
    Cut,
    Drip,
    Duplicate,
    Stall,
    Swap,
    apply,
)

__all__ = ["by_event", "cut", "drip", "drop_terminator", "duplicate", "insert_error", "stall",
           "swap"]

Body = bytes | Iterable[Chunk]


def cut(chunks: Body, after: int, *, reset: bool = False) -> list[Chunk]:
    """The body ends after ``after`` bytes (``reset``: the connection drops there)."""
    return apply(chunks, Cut(after, reset))


def by_event(chunks: Body, framing: str = "sse") -> list[Chunk]:
    """One chunk per framed event."""
    return apply(chunks, ByEvent(framing))


def drop_terminator(chunks: Body, dialect: str) -> list[Chunk]:
    """Without the dialect's terminating event (and anything after it)."""
    return apply(chunks, DropTerminator(dialect))


def duplicate(chunks: Body, index: int) -> list[Chunk]:
    """Chunk ``index`` sent twice."""
    return apply(chunks, Duplicate(index))


def swap(chunks: Body, index: int) -> list[Chunk]:
    """Chunks ``index`` and ``index + 1`` in the wrong order."""
    return apply(chunks, Swap(index))


def insert_error(chunks: Body, dialect: str, after: int = 0, *, code: int = 503,
                 type: str | None = None, message: str = "Overloaded (injected fault)",
                 keep_rest: bool = False) -> list[Chunk]:
    """The dialect's in-band provider error after the first ``after`` events."""
    return apply(chunks, InsertError(dialect, after, ErrorSpec(code, type, message), keep_rest))


def stall(chunks: Body, seconds: float, before: int = 0) -> list[Chunk]:
    """A :class:`~streamflow.faults.chunks.Pause` of ``seconds`` before chunk ``before``."""
    return apply(chunks, Stall(seconds, before))


def drip(chunks: Body) -> list[Chunk]:
    """One byte per chunk."""
    return apply(chunks, Drip())
