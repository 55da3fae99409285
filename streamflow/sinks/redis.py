"""``RedisStreamSink``: a stream written to a Redis Stream, so any process can replay and tail it.

::

    async with RedisStreamSink("redis://127.0.0.1:6379", "answer:42", ttl=600) as sink:
        await streamflow.run(source, sink)       # readers: streamflow.sources.from_redis

Entries (see :mod:`streamflow.sources.redis_streams`): a ``start`` entry when the sink
starts, one ``event`` entry per UniEvent in the ``uni`` encoding, a ``beat`` entry
every ``heartbeat`` seconds while live, and the terminal ``end`` entry -- the stop
event, or the typed error (its partial message is the events before it, all in the
stream). Then the key expires after ``ttl`` seconds. Every ``XADD`` trims the
stream to ``maxlen`` entries (exactly), so a runaway stream cannot grow without
bound; while live, each heartbeat renews the expiry, so the key of a producer that
died (SIGKILL) still goes away.

The sink never stops the upstream: ``run()`` reads it to its end (bounded by the
``deadline`` of its limits) whether or not anyone is reading the key, so a client
that comes later gets the whole answer.

Without ``async with``, passing the sink to ``run()`` starts it on the first item
and runs its heartbeat in ``run()``'s task group.
"""

from __future__ import annotations

import json
import math
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ..errors import CancelledStreamError, StreamflowError
from ..events import UniEvent
from ..sources.bridge import current_scope
from ..sources.redis_streams import BEAT, DEFAULT_HEARTBEAT, END, EVENT, START, RedisLink
from .base import AsyncSink

__all__ = ["RedisStreamSink"]


def _json(item: UniEvent | StreamflowError) -> str:
    """The uni JSON of an event, or of an error with its partial's provider data."""
    from ..dialects.uni.decode import to_json

    text = to_json(item)
    partial = getattr(item, "partial", None)
    if isinstance(item, StreamflowError) and partial is not None and partial.provider:
        provider = json.dumps(partial.provider, ensure_ascii=False, separators=(",", ":"),
                              default=str)
        text = text[:-1] + ',"provider":' + provider + "}"
    return text


class RedisStreamSink(AsyncSink):
    """Write one stream to the Redis Stream ``key`` at ``url`` (see the module doc).

    * ``maxlen`` -- entries kept at most (older ones are trimmed); default 100,000.
    * ``ttl`` -- seconds the key lives after the terminal entry (and after the last
      heartbeat of a producer that died); default one hour.
    * ``heartbeat`` -- seconds between heartbeat entries while live; readers give
      up after three missed beats.
    """

    buffer = 1024

    def __init__(self, url: str, key: str, *, maxlen: int = 100_000, ttl: float = 3600.0,
                 heartbeat: float = DEFAULT_HEARTBEAT) -> None:
        if maxlen < 2:
            raise ValueError("maxlen must leave room for the start and end entries")
        self.url = url
        self.key = key
        self.maxlen = maxlen
        self.ttl = max(1, math.ceil(ttl))
        self.heartbeat = heartbeat
        self.last_id: str | None = None  # id of the last entry written
        self.finished = False
        self._link: RedisLink | None = None
        self._beat: anyio.CancelScope | None = None
        self._group: Any = None

    async def start(self, task_group: TaskGroup | None = None) -> str:
        """Write the ``start`` entry and start the heartbeat; returns the entry id.

        The heartbeat runs in ``task_group`` (default: the current streamflow scope's).
        Starting twice does nothing.
        """
        if self._link is not None:
            return self.last_id or ""
        self._link = RedisLink(self.url)
        await self._add(START, heartbeat=repr(self.heartbeat), maxlen=str(self.maxlen))
        group = task_group
        if group is None:
            scope = current_scope()
            if scope is None:
                raise RuntimeError("RedisStreamSink.start() needs a task group: use "
                                   "`async with sink:` or pass it to streamflow.run()")
            group = scope.task_group
        self._beat = anyio.CancelScope()
        group.start_soon(self._heartbeat, self._beat, name=f"streamflow-heartbeat:{self.key}")
        return self.last_id or ""

    async def _heartbeat(self, cancel: anyio.CancelScope) -> None:
        with cancel:
            while not self.finished:
                await anyio.sleep(self.heartbeat)
                if self.finished:
                    return
                try:
                    await self._add(BEAT)
                except StreamflowError:
                    return  # Redis is gone: the next event write reports it

    async def _add(self, kind: str, data: str | None = None, **extra: str) -> None:
        assert self._link is not None
        fields = {"k": kind, **extra}
        if data is not None:
            fields["d"] = data
        # a live key outlives its last write by ttl + a few beats; the terminal write sets ttl
        expire = self.ttl if kind == END else self.ttl + math.ceil(3 * self.heartbeat)
        entry_id, _ = await self._link.pipeline(
            ("xadd", (self.key, fields), {"maxlen": self.maxlen, "approximate": False}),
            ("expire", (self.key, expire), {}))
        self.last_id = str(entry_id)

    async def on_event(self, event: Any) -> None:
        """Write one UniEvent (the stop event is the terminal entry); other items are skipped."""
        if self.finished or type(event) is not UniEvent:
            return
        await self.start()
        if event.event_type == "stop":
            await self._finish(_json(event))
        else:
            await self._add(EVENT, _json(event))

    async def on_end(self, error: BaseException | None) -> None:
        """Write the terminal error entry (unless ``stop`` was written), set the expiry, stop."""
        if not self.finished:
            if error is None:
                error = CancelledStreamError("the stream ended before its stop event")
            if not isinstance(error, StreamflowError):
                error = CancelledStreamError(f"the producer failed: {error!r}")
            await self.start()
            await self._finish(_json(error))
        await self.aclose()

    async def _finish(self, data: str) -> None:
        self.finished = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            await self._add(END, data)

    async def aclose(self) -> None:
        """Stop the heartbeat and close the connection (the entries stay until they expire)."""
        self.finished = True
        if self._beat is not None:
            self._beat.cancel()
        if self._link is not None:
            await self._link.aclose()

    async def __aenter__(self) -> RedisStreamSink:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        try:
            await self.start(self._group)
        except BaseException:
            await self._group.__aexit__(None, None, None)  # nothing was started in it
            raise
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        try:
            if not self.finished:
                try:
                    await self.on_end(exc if isinstance(exc, Exception) else
                                      CancelledStreamError("the producer was cancelled"))
                except StreamflowError:
                    if exc is None:
                        raise  # else the exception on its way out says more
            await self.aclose()
        finally:  # the heartbeat is cancelled: the group just waits for it to end
            await self._group.__aexit__(None, None, None)
        return None
