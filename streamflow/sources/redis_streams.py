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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from ..errors import (
    LimitExceededError,
    ProtocolError,
    StreamflowError,
    StreamNotFoundError,
    StreamTimeoutError,
    TransportError,
)

__all__ = ["BEAT", "END", "EVENT", "START", "Entry", "RedisLink", "entry_key", "read_entries"]

START, EVENT, BEAT, END = "start", "event", "beat", "end"
DEFAULT_HEARTBEAT = 2.0
WINDOW_BEATS = 3  # a reader gives up after this many heartbeats without an entry
_THREADS = anyio.CapacityLimiter(256)  # trio: worker threads for blocking redis calls


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
                              "pip install 'streamflow[redis]'") from exc
        self.url = url
        self.threaded = not _on_asyncio()
        options: dict[str, Any] = dict(decode_responses=True, socket_timeout=socket_timeout,
                                       socket_connect_timeout=5.0, retry_on_timeout=False)
        if self.threaded:
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
                    functools.partial(method, *args, **kwargs), limiter=_THREADS,
                    abandon_on_cancel=True)
            return await method(*args, **kwargs)
        except Exception as exc:
            raise transport_error(exc) from exc

    async def pipeline(self, *commands: tuple[str, tuple[Any, ...], dict[str, Any]]) -> list[Any]:
        """Several commands in one round trip (a MULTI/EXEC transaction)."""

        def build(pipe: Any) -> Any:
            for name, args, kwargs in commands:
                getattr(pipe, name)(*args, **kwargs)
            return pipe

        try:
            pipe = build(self.client.pipeline(transaction=True))
            if self.threaded:
                return list(await anyio.to_thread.run_sync(pipe.execute, limiter=_THREADS,
                                                           abandon_on_cancel=True))
            return list(await pipe.execute())
        except Exception as exc:
            raise transport_error(exc) from exc

    async def aclose(self) -> None:
        """Close the connections (shielded: it runs in ``finally`` blocks of cancelled tasks)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                if self.threaded:
                    await anyio.to_thread.run_sync(self.client.close, limiter=_THREADS)
                else:
                    await self.client.aclose()
            except Exception:  # closing a dead connection may fail: nothing to do
                pass


def _entry(entry_id: str, fields: dict[str, str]) -> Entry:
    return Entry(entry_id, fields.get("k", ""), fields.get("d", ""), fields)


async def read_entries(link: RedisLink, key: str, *, after: str | None = None,
                       window: float | None = None, count: int = 512) -> AsyncIterator[Entry]:
    """The entries of ``key`` after entry id ``after`` (all when ``None``), live, to the end.

    Raises :class:`StreamNotFoundError` when ``key`` does not exist,
    :class:`LimitExceededError` (``redis_maxlen``) when the entries wanted were
    trimmed away, :class:`StreamTimeoutError` when no entry (event or heartbeat)
    arrives for ``window`` seconds (default: three of the writer's heartbeats), and
    :class:`TransportError` when Redis goes away. Ends after the ``end`` entry.
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
        beat = float(first.fields.get("heartbeat") or DEFAULT_HEARTBEAT)
        window = WINDOW_BEATS * beat
    cursor = after if after is not None else "0-0"
    while True:
        reply = await link.call("xread", {key: cursor}, count=count,
                                block=max(1, int(window * 1000)))
        if not reply:
            raise StreamTimeoutError("idle", window)
        for entry_id, fields in reply[0][1]:
            cursor = entry_id
            entry = _entry(entry_id, fields)
            yield entry
            if entry.kind == END:
                return
