"""Faults over real IO: a replay-server :class:`Route`, and an async :class:`Source`.

* :func:`fault_route` -- a :class:`~streamflow.servers.replay.Route` for the loopback
  :class:`~streamflow.servers.replay.ReplayServer`: each byte chunk is one HTTP chunk, a
  :class:`Pause` becomes the delay before the next chunk, a :class:`Reset` drops
  the connection mid-body (``abort``). The client is real ``httpx`` over a socket.
* :func:`faulty_source` -- a streamflow source (for :func:`streamflow.run` or your
  own reactivex chain) playing a faulted recording in memory, or wrapping another
  source (an HTTP source: faults on the live bytes). A :class:`Pause` is an
  ``anyio.sleep`` (so the source's idle timeout fires), a :class:`Reset` a
  :class:`~streamflow.core.errors.TransportError`.
* :func:`play` -- the async iterator both use.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel

from ..core.errors import TransportError
from ..core.limits import Limits
from ..reactive._source import Source
from ..servers.replay.routes import Route
from .chunks import Chunk, Pause, Reset, as_chunks
from .operators import RESET_MESSAGE
from .recipes import Chain, Fault, iter_apply

__all__ = ["FaultySource", "fault_route", "faulty_source", "play"]


def fault_route(chunks: bytes | Iterable[Chunk], *faults: Fault, status: int = 200,
                headers: dict[str, str] | None = None,
                content_type: str = "text/event-stream") -> Route:
    """A replay-server route serving ``chunks`` with ``faults`` applied (see module doc)."""
    pieces: list[bytes] = []
    delays: list[float] = []
    wait = 0.0
    abort = False
    for item in iter_apply(chunks, *faults):
        if isinstance(item, Pause):
            wait += item.seconds
        elif isinstance(item, Reset):
            abort = True
            break
        else:
            pieces.append(item)
            delays.append(wait)
            wait = 0.0
    if wait:
        pieces.append(b"")  # a stall before the end of the body
        delays.append(wait)
    return Route(status=status, chunks=pieces, headers=dict(headers or {}),
                 content_type=content_type, delays=delays, abort=abort)


async def play(chunks: AsyncIterable[Chunk] | Iterable[Chunk]) -> AsyncIterator[bytes]:
    """Yield the byte chunks, sleeping at each :class:`Pause`, raising at a :class:`Reset`."""
    if isinstance(chunks, AsyncIterable):
        iterator: Any = chunks
    else:
        iterator = _aiter(chunks)
    async for item in iterator:
        if isinstance(item, Pause):
            await anyio.sleep(item.seconds)
        elif isinstance(item, Reset):
            raise TransportError(RESET_MESSAGE)
        else:
            yield item


async def _aiter(chunks: Iterable[Chunk]) -> AsyncIterator[Chunk]:
    for chunk in chunks:
        await anyio.lowlevel.checkpoint()
        yield chunk


async def _faulted(inner: AsyncIterator[bytes], faults: tuple[Fault, ...]) -> AsyncIterator[Chunk]:
    chain = Chain(faults)
    async for chunk in inner:
        for item in chain.feed(chunk):
            yield item
        if chain.ended:
            break
    for item in chain.close():
        yield item


class FaultySource(Source):
    """A source that plays a recording, or another source's body, with faults applied."""

    def __init__(self, inner: Source | bytes | Iterable[Chunk], faults: tuple[Fault, ...] = (),
                 *, limits: Limits | None = None, framing: str | None = None) -> None:
        inner_limits = inner.limits if isinstance(inner, Source) else None
        super().__init__(limits if limits is not None else inner_limits)
        self.inner = inner if isinstance(inner, Source) else list(as_chunks(inner))
        self.faults = faults
        self.framing = framing or (inner.framing if isinstance(inner, Source) else None)

    def map_error(self, exc: Exception) -> Exception:
        """Errors of a wrapped source are mapped by it."""
        return self.inner.map_error(exc) if isinstance(self.inner, Source) else exc

    def open(self) -> Any:
        """An async context manager yielding the faulted chunks."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        if isinstance(self.inner, Source):
            async with self.inner.open() as body:
                chunks = play(_faulted(body, self.faults))
                try:
                    yield chunks
                finally:
                    with anyio.CancelScope(shield=True):
                        await chunks.aclose()  # type: ignore[attr-defined]
            return
        chunks = play(iter_apply(self.inner, *self.faults))
        try:
            yield chunks
        finally:
            with anyio.CancelScope(shield=True):
                await chunks.aclose()  # type: ignore[attr-defined]


def faulty_source(chunks: Source | bytes | Iterable[Chunk], *faults: Fault,
                  limits: Limits | None = None, framing: str | None = None) -> FaultySource:
    """A source of ``chunks`` (a recording, or another source) with ``faults`` applied."""
    return FaultySource(chunks, faults, limits=limits, framing=framing)
