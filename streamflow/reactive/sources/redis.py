"""``from_redis``: a stream that a
:class:`~streamflow.reactive.sinks.redis.RedisStreamSink` writes, read
from any process -- replayed from the start or after an event id, then tailed live.

Marble (one subscription = one reader of the key)::

    from_redis(url, key)                   --ev--ev--(beat)--ev--stop|
    from_redis(url, key, last_event_id=i)  (events <= i rebuild the message)--ev--stop|
    producer died (no beat for window)     --ev--ev--#StreamTimeoutError(partial)
    Redis went away (after one retry)      --ev--#TransportError
    entries trimmed before they were read  --ev--#LimitExceededError("redis_maxlen")
    entries lost (a failover, a restart)   --ev--#StreamGapError(missing=ids)
    a cluster node fails over              --ev--(waits for its replica)--ev--stop|
    no such key                            #StreamNotFoundError

``url`` is a Redis URL, a Redis Cluster URL (``redis+cluster://host:port,...``) or a
redis-py client (see :mod:`streamflow.reactive._redis.link`).

The body is the ``uni`` SSE encoding with ``id: <entry id>`` on every event (so
``stream(...).last_event_id`` is the entry id to resume after); heartbeats arrive
as SSE comments. With ``last_event_id``, the events up to it are sent as
``event: replay`` frames (with ``last_event_id`` as their id): the ``uni`` decoder
folds them into the message without delivering them again, so sinks see only the
events after it and ``run()`` still returns the whole message.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager

from ...core.errors import StreamGapError
from ...core.limits import Limits
from ...wire.dialects._frames_out import sse_data, text_bytes
from .._redis.link import RedisTarget
from .._redis.streams import (
    BEAT,
    END,
    EVENT,
    RedisLink,
    entry_key,
    read_batches,
)
from .._source import ChunkStream, Source

__all__ = ["RedisSource", "StreamGapError", "from_redis"]

HEARTBEAT_FRAME = b": heartbeat\n\n"


def sse_frame(entry_id: str, data: str, *, replay: bool = False) -> bytes:
    """One ``uni`` SSE event with the id ``entry_id``; ``replay`` marks one the reader has.

    A replayed event carries the resume point as its id (not its own), so a reader
    cut during the replay still resumes after the right event.
    """
    return sse_data(text_bytes(data), "replay" if replay else None, entry_id, checked=True)


class RedisSource(Source):
    """The entries of one Redis Stream key as ``uni`` SSE bytes (see the module doc).

    ``window`` is the seconds without any entry after which the producer counts as
    gone (default: three of its heartbeats).
    """

    dialect = "uni"
    framing = "sse"

    def __init__(self, url: RedisTarget, key: str, *, last_event_id: str | None = None,
                 window: float | None = None, limits: Limits | None = None,
                 link: RedisLink | None = None) -> None:
        super().__init__(limits)
        self.url = url
        self.key = key
        self.last_event_id = last_event_id or None
        self.window_seconds = window
        self.link = link

    def open(self) -> ChunkStream:
        """Connect, then yield the frames; the connection is closed on exit."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        link = self.link or RedisLink(self.url)
        try:
            yield self._frames(link)
        finally:
            if link is not self.link:
                await link.aclose()

    async def _frames(self, link: RedisLink) -> AsyncGenerator[bytes, None]:
        """One chunk per read: the frames of every entry it returned."""
        last = None if self.last_event_id is None else entry_key(self.last_event_id)
        async with aclosing(read_batches(link, self.key, window=self.window_seconds)) as batches:
            async for batch in batches:
                frames = []
                for entry in batch:
                    if entry.kind in (EVENT, END):
                        if last is not None and entry_key(entry.id) <= last:
                            frames.append(sse_frame(self.last_event_id or "", entry.data,
                                                    replay=True))
                        else:
                            frames.append(sse_frame(entry.id, entry.data))
                    elif entry.kind == BEAT:
                        frames.append(HEARTBEAT_FRAME)
                if frames:
                    yield b"".join(frames)


def from_redis(url: RedisTarget, key: str, *, last_event_id: str | None = None,
               window: float | None = None, limits: Limits | None = None,
               link: RedisLink | None = None) -> RedisSource:
    """A cold source of the stream at Redis ``key`` (``url``: ``redis://host:port/db``, a
    cluster's ``redis+cluster://host:port,host:port``, or a redis-py client).

    Each subscription replays the key from its start (after ``last_event_id``, the
    earlier events only rebuild the message) and tails it until the terminal entry.
    ``window``: seconds without any entry before ``StreamTimeoutError`` (default:
    three of the producer's heartbeats). ``link``: a shared
    :class:`~streamflow.reactive._redis.streams.RedisLink` (one connection pool for many
    readers; by default each subscription opens its own). Subscribe it inside
    ``streamflow.run()`` / ``stream()`` / ``scope()``.
    """
    return RedisSource(url, key, last_event_id=last_event_id, window=window, limits=limits,
                       link=link)
