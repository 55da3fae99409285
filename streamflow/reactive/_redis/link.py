"""``RedisLink``: the redis-py client both ends of a Redis stream use, on either anyio backend.

redis-py's asyncio client is asyncio-only, so :class:`RedisLink` uses it on asyncio
and redis-py's *sync* client in anyio worker threads on trio (same commands, same
replies). ``redis`` is imported on first connection (the ``redis`` extra).

A command that meets a dropped connection (a pooled connection gone stale when Redis
restarted, a cut socket) is sent once more on a fresh connection after a short
backoff -- redis-py's own ``Retry`` with ``ExponentialBackoff`` on ``ConnectionError``
and ``TimeoutError`` -- so a restart costs no request; when that fails too, the
caller gets a :class:`~streamflow.core.errors.TransportError`. Commands sent twice must be
harmless: the writer chooses its entry ids (see :mod:`streamflow.reactive._redis.streams`),
so a repeated ``XADD`` is refused by Redis instead of stored twice.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import anyio
import anyio.to_thread

from ..._extras import require
from ...core.errors import ProtocolError, StreamflowError, TransportError

MAX_CONNECTIONS = 10_000  # one per blocked reader: a pool must not cap live streams
THREADS = 256  # trio: worker threads of one RedisLink for its blocking redis calls
RETRIES = 1  # a command is sent at most this many more times after a connection error
BACKOFF_BASE = 0.1  # seconds: the retry waits min(BACKOFF_CAP, base * 2**failures), 0.2 s
BACKOFF_CAP = 1.0


def transport_error(exc: BaseException) -> StreamflowError:
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

    ``url`` is a ``redis://`` URL. A command is retried once on a fresh connection
    (see the module doc); ``socket_timeout`` bounds every reply (readers set it
    above their ``BLOCK``): on asyncio as one ``asyncio.timeout`` around the whole
    call, since redis-py's own socket timeout starts a task per command
    (``asyncio.wait_for``) and arms a second timer per reply (about 6 % of the CPU of
    ``bench.redis``'s burst). A call cut by it closes its connection (redis-py
    drops a connection whose command or reply was interrupted) and is a
    :class:`~streamflow.core.errors.TransportError`.
    """

    def __init__(self, url: str, *, socket_timeout: float | None = 30.0) -> None:
        require("streamflow's Redis support", "redis", "redis")
        import redis
        import redis.asyncio
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as LostConnection
        from redis.exceptions import TimeoutError as NoReply

        self.url = url
        self.threaded = not _on_asyncio()
        self.reply_timeout = None if self.threaded else socket_timeout  # ours, on asyncio
        backoff = ExponentialBackoff(cap=BACKOFF_CAP, base=BACKOFF_BASE)
        options: dict[str, Any] = dict(decode_responses=True,
                                       socket_timeout=socket_timeout if self.threaded else None,
                                       socket_connect_timeout=5.0,
                                       retry_on_error=[LostConnection, NoReply],
                                       max_connections=MAX_CONNECTIONS)
        if self.threaded:
            self.threads = anyio.CapacityLimiter(THREADS)
            self.client: Any = redis.Redis.from_url(
                url, retry=redis.retry.Retry(backoff, RETRIES), **options)
        else:
            from redis.asyncio.retry import Retry

            self.client = redis.asyncio.Redis.from_url(url, retry=Retry(backoff, RETRIES),
                                                       **options)

    async def call(self, command: str, *args: Any, **kwargs: Any) -> Any:
        """Run one redis-py command (``"xadd"``, ``"xread"``...); errors -> streamflow errors."""
        try:
            method = getattr(self.client, command)
            if self.threaded:
                return await anyio.to_thread.run_sync(
                    functools.partial(method, *args, **kwargs), limiter=self.threads,
                    abandon_on_cancel=True)
            if self.reply_timeout is None:
                return await method(*args, **kwargs)
            async with asyncio.timeout(self.reply_timeout):
                return await method(*args, **kwargs)
        except TimeoutError as exc:  # ours (asyncio.timeout), or a socket's own
            raise self._no_reply(exc) from None
        except Exception as exc:
            raise transport_error(exc) from exc

    def _no_reply(self, exc: TimeoutError) -> StreamflowError:
        if self.reply_timeout is None:
            return transport_error(exc)
        return TransportError(f"redis: no reply within {self.reply_timeout:g} s")

    async def pipeline(self, *commands: tuple[str, tuple[Any, ...], dict[str, Any]],
                       transaction: bool = True, raise_on_error: bool = True) -> list[Any]:
        """Several commands in one round trip (a MULTI/EXEC transaction unless told not).

        ``raise_on_error=False``: a command Redis refused is its reply (a redis-py
        ``ResponseError``; a :class:`~streamflow.core.errors.ProtocolError` for a lone
        command) instead of failing the whole call. A lone command outside a
        transaction is sent as itself: a redis-py pipeline of one costs a live reader
        about 0.1 ms more (``bench/README.md``, Redis Streams).
        """
        if len(commands) == 1 and not transaction:
            name, args, kwargs = commands[0]
            try:
                return [await self.call(name, *args, **kwargs)]
            except ProtocolError as refused:  # Redis refused it
                if raise_on_error:
                    raise
                return [refused]

        def build(pipe: Any) -> Any:
            for name, args, kwargs in commands:
                getattr(pipe, name)(*args, **kwargs)
            return pipe

        try:
            pipe = build(self.client.pipeline(transaction=transaction))
            if self.threaded:
                run = functools.partial(pipe.execute, raise_on_error=raise_on_error)
                return list(await anyio.to_thread.run_sync(run, limiter=self.threads,
                                                           abandon_on_cancel=True))
            async with asyncio.timeout(self.reply_timeout):
                return list(await pipe.execute(raise_on_error=raise_on_error))
        except TimeoutError as exc:  # ours (asyncio.timeout), or a socket's own
            raise self._no_reply(exc) from None
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
