"""A streamflow stream stored in a Redis Stream: the entry layout, and the client both ends use.

One stream key holds one answer, in order::

    <id>  k=start  heartbeat=2.0            written before the upstream is read
    <id>  k=event  d={uni JSON}             one per UniEvent (streamflow.dialects.uni)
    <id>  k=beat                            every ``heartbeat`` seconds while live
    <id>  k=end    d={stop event | {"error": {...}}}   the terminal entry, then EXPIRE

The entry id is the event id: a reader that saw ``<id>`` continues with ``XREAD``
after it, on any machine. Writers are :class:`~streamflow.sinks.redis.RedisStreamSink`;
readers are :func:`~streamflow.sources.redis.from_redis` and
:mod:`streamflow.web.resume`, all through :func:`read_entries`.

redis-py's asyncio client is asyncio-only, so :class:`RedisLink` uses it on asyncio
and redis-py's *sync* client in anyio worker threads on trio (same commands, same
replies). ``redis`` is imported on first connection (the ``redis`` extra).
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from ..errors import (
    LimitExceededError,
    ProtocolError,
    StreamflowError,
    StreamNotFoundError,
    StreamTimeoutError,
    TransportError,
)

__all__ = ["BEAT", "END", "EVENT", "START", "Entry", "RedisLink", "Tailer", "entry_key",
           "read_batches", "read_entries"]

START, EVENT, BEAT, END = "start", "event", "beat", "end"
DEFAULT_HEARTBEAT = 2.0
WINDOW_BEATS = 3  # a reader gives up after this many heartbeats without an entry
MAX_BLOCK = 10.0  # seconds one XREAD blocks at most (below the socket timeout)
BATCH = 512  # entries per read
MAX_CONNECTIONS = 10_000  # one per blocked reader: a pool must not cap live streams
THREADS = 256  # trio: worker threads of one RedisLink for its blocking redis calls


@dataclass(frozen=True, slots=True)
class Entry:
    """One stream entry: ``id``, ``kind`` (start/event/beat/end), ``data`` (uni JSON or "")."""

    id: str
    kind: str
    data: str
    fields: dict[str, str]


def entry_key(entry_id: str) -> tuple[int, int]:
    """``"1700000000000-3"`` -> ``(1700000000000, 3)``, for ordering; ProtocolError if not an id."""
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        raise ProtocolError(f"not a Redis stream entry id: {entry_id!r}") from None


def transport_error(exc: Exception) -> StreamflowError:
    """A redis-py exception as a streamflow error (connection trouble -> TransportError)."""
    import redis.exceptions as rexc

    if isinstance(exc, StreamflowError):
        return exc
    if isinstance(exc, (rexc.ConnectionError, rexc.TimeoutError, OSError)):
        return TransportError(f"redis: {exc or type(exc).__name__}")
    if isinstance(exc, rexc.ResponseError):
        return ProtocolError(f"redis refused a command: {exc}")
    return TransportError(f"redis: {type(exc).__name__}: {exc}")


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RedisLink:
    """redis-py on the running anyio backend; ``await link.call("xadd", ...)``.

    ``url`` is a ``redis://`` URL. Commands fail at once on a lost connection (no
    retries: a reader must learn that Redis went away, as a :class:`TransportError`).
    ``socket_timeout`` bounds every reply; readers set it above their ``BLOCK``.
    """

    def __init__(self, url: str, *, socket_timeout: float | None = 30.0) -> None:
        try:
            import redis
            import redis.asyncio
            from redis.backoff import NoBackoff
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("streamflow's Redis support needs redis-py: "
                              "pip install 'streamflow-llm[redis]'") from exc
        self.url = url
        self.threaded = not _on_asyncio()
        options: dict[str, Any] = dict(decode_responses=True, socket_timeout=socket_timeout,
                                       socket_connect_timeout=5.0, retry_on_timeout=False,
                                       max_connections=MAX_CONNECTIONS)
        if self.threaded:
            self.threads = anyio.CapacityLimiter(THREADS)
            self.client: Any = redis.Redis.from_url(
                url, retry=redis.retry.Retry(NoBackoff(), 0), **options)
        else:
            from redis.asyncio.retry import Retry

            self.client = redis.asyncio.Redis.from_url(url, retry=Retry(NoBackoff(), 0),
                                                       **options)

    async def call(self, command: str, *args: Any, **kwargs: Any) -> Any:
        """Run one redis-py command (``"xadd"``, ``"xread"``...); errors -> streamflow errors."""
        try:
            method = getattr(self.client, command)
            if self.threaded:
                return await anyio.to_thread.run_sync(
                    functools.partial(method, *args, **kwargs), limiter=self.threads,
                    abandon_on_cancel=True)
            return await method(*args, **kwargs)
        except Exception as exc:
            raise transport_error(exc) from exc

    async def pipeline(self, *commands: tuple[str, tuple[Any, ...], dict[str, Any]],
                       transaction: bool = True) -> list[Any]:
        """Several commands in one round trip (a MULTI/EXEC transaction unless told not)."""

        def build(pipe: Any) -> Any:
            for name, args, kwargs in commands:
                getattr(pipe, name)(*args, **kwargs)
            return pipe

        try:
            pipe = build(self.client.pipeline(transaction=transaction))
            if self.threaded:
                return list(await anyio.to_thread.run_sync(pipe.execute, limiter=self.threads,
                                                           abandon_on_cancel=True))
            return list(await pipe.execute())
        except Exception as exc:
            raise transport_error(exc) from exc

    async def aclose(self) -> None:
        """Close the connections (shielded: it runs in ``finally`` blocks of cancelled tasks)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if self.threaded:
                    await anyio.to_thread.run_sync(self.client.close, limiter=self.threads)
                else:
                    await self.client.aclose()
            except Exception:  # closing a dead connection may fail: nothing to do
                pass


def _entry(entry_id: str, fields: dict[str, str]) -> Entry:
    return Entry(entry_id, fields.get("k", ""), fields.get("d", ""), fields)


async def read_entries(link: RedisLink, key: str, *, after: str | None = None,
                       window: float | None = None, tailer: Tailer | None = None
                       ) -> AsyncIterator[Entry]:
    """:func:`read_batches`, one entry at a time."""
    async for batch in read_batches(link, key, after=after, window=window, tailer=tailer):
        for entry in batch:
            yield entry


async def read_batches(link: RedisLink, key: str, *, after: str | None = None,
                       window: float | None = None, tailer: Tailer | None = None
                       ) -> AsyncIterator[list[Entry]]:
    """The entries of ``key`` after entry id ``after`` (all when ``None``), live, to the end.

    Each batch is what one read returned. Raises :class:`StreamNotFoundError` when
    ``key`` does not exist, :class:`LimitExceededError` (``redis_maxlen``) when the
    entries wanted were trimmed away, :class:`StreamTimeoutError` when no entry
    (event or heartbeat) arrives for ``window`` seconds (default: three of the
    writer's heartbeats), and :class:`TransportError` when Redis goes away. Ends
    after the ``end`` entry. With a :class:`Tailer`, the live part comes from its
    one shared ``XREAD`` instead of one blocked connection per reader.
    """
    head = await link.call("xrange", key, "-", "+", count=1)
    if not head:
        raise StreamNotFoundError(f"no stream at Redis key {key!r} (never started, or expired)",
                                  key=key)
    first = _entry(*head[0])
    if first.kind != START and (after is None or entry_key(after) < entry_key(first.id)):
        length = await link.call("xlen", key)
        raise LimitExceededError("redis_maxlen", int(length or 0))
    if window is None:
        window = WINDOW_BEATS * float(first.fields.get("heartbeat") or DEFAULT_HEARTBEAT)
    cursor = after if after is not None else "0-0"
    if tailer is not None:
        async for batch in tailer.follow(key, cursor, window):
            yield batch
        return
    silent = 0.0  # seconds Redis had nothing new while we waited (not our own busy time)
    while True:
        wait = min(window - silent, MAX_BLOCK)
        reply = await link.call("xread", {key: cursor}, count=BATCH,
                                block=max(1, int(wait * 1000)))
        if not reply:
            await _still_there(link, key)
            silent += wait
            if silent >= window:
                raise StreamTimeoutError("idle", window)
            continue
        silent = 0.0
        batch = _until_end([_entry(*pair) for pair in reply[0][1]])
        yield batch
        if batch[-1].kind == END:
            return
        cursor = batch[-1].id


async def _still_there(link: RedisLink, key: str) -> None:
    """A live key that vanished: Redis restarted without persistence (or was flushed)."""
    if not await link.call("exists", key):
        raise TransportError(f"the stream {key!r} vanished from Redis while being read "
                             "(a restart without persistence, or a flush)")


def _until_end(batch: list[Entry]) -> list[Entry]:
    for index, entry in enumerate(batch):
        if entry.kind == END:
            return batch[:index + 1]
    return batch


class Tailer:
    """One ``XREAD BLOCK`` over every key this process tails, fanned out to its readers.

    Run :meth:`run` in a long-lived task group (``ResumableStreams`` does); readers
    call :meth:`follow`. A reader first catches up by itself (non-blocking reads),
    then takes the live entries the shared read hands it, skipping what it has.
    """

    def __init__(self, link: RedisLink, *, block: float = 0.1) -> None:
        self.link = link
        self.block = block
        self.cursors: dict[str, str] = {}
        self.readers: dict[str, set[MemoryObjectSendStream[Any]]] = {}
        self._changed = anyio.Event()

    async def run(self) -> None:
        """The shared read loop (until cancelled); a Redis failure ends the current readers."""
        while True:
            if not self.cursors:
                await self._changed.wait()
                self._changed = anyio.Event()
                continue
            try:
                reply = await self.link.call("xread", dict(self.cursors), count=BATCH,
                                             block=max(1, int(self.block * 1000)))
            except StreamflowError as error:
                self._broadcast(error)
                await anyio.sleep(self.block)
                continue
            for key, pairs in reply or []:
                if key in self.cursors and pairs:
                    self.cursors[key] = pairs[-1][0]
                    batch = [_entry(*pair) for pair in pairs]
                    for send in self.readers.get(key, ()):
                        send.send_nowait(batch)

    def _broadcast(self, error: StreamflowError) -> None:
        for senders in self.readers.values():
            for send in senders:
                send.send_nowait(error)

    async def follow(self, key: str, cursor: str, window: float) -> AsyncIterator[list[Entry]]:
        """The entries of ``key`` after ``cursor``: caught up alone, then from the shared read."""
        send, receive = anyio.create_memory_object_stream[Any](math.inf)
        self.readers.setdefault(key, set()).add(send)
        self.cursors.setdefault(key, cursor)
        self._changed.set()
        try:
            while True:  # catch up on our own: everything up to now
                reply = await self.link.call("xread", {key: cursor}, count=BATCH)
                if not reply:
                    break
                batch = _until_end([_entry(*pair) for pair in reply[0][1]])
                yield batch
                if batch[-1].kind == END:
                    return
                cursor = batch[-1].id
            mine = entry_key(cursor)
            while True:
                item: Any = None
                with anyio.move_on_after(window):
                    item = await receive.receive()
                if not isinstance(item, (list, StreamflowError)):
                    await _still_there(self.link, key)
                    raise StreamTimeoutError("idle", window)
                if isinstance(item, StreamflowError):
                    raise item
                batch = _until_end([e for e in item if entry_key(e.id) > mine])
                if batch:
                    yield batch
                    if batch[-1].kind == END:
                        return
                    mine = entry_key(batch[-1].id)
        finally:
            senders = self.readers.get(key, set())
            senders.discard(send)
            if not senders:
                self.readers.pop(key, None)
                self.cursors.pop(key, None)
            send.close()
            receive.close()
