"""Stop from anywhere: a producer runs until its stop key appears in Redis.

:meth:`~streamflow.servers.web.resume.ResumableStreams.stop` sets ``<prefix>stop:<stream
key>``; the producer of that stream, on whichever instance, checks it every
:data:`STOP_POLL` seconds while it runs and is cancelled when it is there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from ...core.errors import StreamflowError
from ...reactive._redis.link import RedisLink

STOP_POLL = 0.25
"""Seconds between a producer's checks of its stop key."""


def stop_key(prefix: str, stream_key: str) -> str:
    """The key whose presence stops the producer of ``stream_key``."""
    return f"{prefix}stop:{stream_key}"


async def request_stop(link: RedisLink, pointer: str, prefix: str, ttl: float) -> bool:
    """Set the stop key of the stream the chat ``pointer`` names (it lives ``ttl`` seconds,
    a minute at least); False when the chat has no stream."""
    key = await link.call("get", pointer)
    if not key:
        return False
    key = key.decode() if isinstance(key, bytes) else str(key)
    await link.call("set", stop_key(prefix, key), "1", ex=max(60, int(ttl)))
    return True


async def until_stopped(link: RedisLink, stop_key: str,
                        work: Callable[[], Awaitable[None]]) -> bool:
    """Run ``work()`` until it returns or ``stop_key`` exists; True when it was stopped.

    ``work`` should handle its own errors (one raised here arrives in an exception group).
    """
    stopped = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal stopped
            while True:
                await anyio.sleep(STOP_POLL)
                try:
                    if await link.call("exists", stop_key):
                        stopped = True
                        group.cancel_scope.cancel()
                        return
                except StreamflowError:
                    pass  # a Redis hiccup: look again next time

        group.start_soon(watch)
        try:
            await work()
        finally:
            group.cancel_scope.cancel()
    return stopped
