"""Stopping an answer from any instance: a stop key in Redis, watched by one poll per process.

:meth:`~web.resume.ResumableStreams.stop` sets the stop key of the chat's stream
(:func:`request_stop`); the instance producing it -- whichever it is -- sees it within
:data:`STOP_POLL` seconds and cancels the producer. One :class:`StopWatch` per app asks
Redis about every answer it produces in one pipelined round trip per poll (split by node
on a cluster), where a poll per answer cost a round trip per answer four times a second
(1,000 waiting answers: 85 % of a core against 27-35 %, ``python -m bench.idle``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from ...core.errors import StreamflowError
from ...reactive._redis.link import RedisLink

STOP_POLL = 0.25
"""Seconds between two looks at the stop keys of a process's answers."""
ROUND = 1000
"""Stop keys asked about in one pipeline (a larger set takes several)."""


def stop_key(prefix: str, stream_key: str) -> str:
    """The key whose presence stops the producer of ``stream_key`` (in its slot on a
    cluster: the prefix has no hash tag, so the stream key's is the first)."""
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


class StopWatch:
    """The stop keys of the answers this process produces, looked at every ``poll`` seconds.

    Run :meth:`run` in a long-lived task group (``ResumableStreams`` does); a producer
    runs its work through :meth:`until_stopped`. A Redis that fails a look is looked at
    again next time (a stop then takes a little longer; nothing is stopped by mistake).
    """

    def __init__(self, link: RedisLink, *, poll: float = STOP_POLL) -> None:
        self.link = link
        self.poll = poll
        self._watched: dict[str, anyio.CancelScope] = {}  # stop key -> its producer's scope
        self._some = anyio.Event()  # set while something is watched

    async def run(self) -> None:
        """Look at the watched stop keys every ``poll`` seconds, until cancelled."""
        while True:
            if not self._watched:
                self._some = anyio.Event()
                await self._some.wait()
            await anyio.sleep(self.poll)
            keys = list(self._watched)
            for start in range(0, len(keys), ROUND):
                await self._look(keys[start:start + ROUND])

    async def _look(self, keys: list[str]) -> None:
        """Cancel the producers whose stop key exists among ``keys``."""
        try:
            found = await self.link.pipeline(*[("exists", (key,), {}) for key in keys],
                                             transaction=False)
        except StreamflowError:
            return  # a Redis hiccup: look again next time
        for key, present in zip(keys, found, strict=True):
            scope = self._watched.get(key) if present else None
            if scope is not None:
                scope.cancel()

    async def until_stopped(self, key: str, work: Callable[[], Awaitable[None]]) -> bool:
        """Run ``work()`` until it returns or the stop key ``key`` exists; True when it
        was stopped. A cancellation from outside (the app shuts down) goes on as itself."""
        with anyio.CancelScope() as scope:
            self._watched[key] = scope
            self._some.set()
            try:
                await work()
            finally:
                if self._watched.get(key) is scope:
                    del self._watched[key]
        return scope.cancel_called
