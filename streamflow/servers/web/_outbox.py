"""The bounded hand-over of body chunks from the producer (a stream, an Agent run) to a response."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator

import anyio


class Outbox:
    """A queue of body chunks: ``await put`` waits while ``capacity`` chunks are unsent.

    :meth:`put_nowait` never waits (for the few chunks a synchronous callback writes,
    such as a turn's tool results); the reader iterates until :meth:`close`.
    """

    def __init__(self, capacity: int = 64) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._chunks: deque[bytes] = deque()
        self._closed = False
        self._changed = anyio.Event()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    @property
    def full(self) -> bool:
        """Whether ``capacity`` chunks are unsent (:meth:`put` would wait)."""
        return len(self._chunks) >= self.capacity and not self._closed

    async def put(self, data: bytes) -> None:
        """Queue ``data`` (``b""`` is skipped), waiting while the queue is full."""
        while self.full:
            await self._changed.wait()
        self.put_nowait(data)

    def put_nowait(self, data: bytes) -> None:
        """Queue ``data`` at once, full or not."""
        if data and not self._closed:
            self._chunks.append(data)
            self._notify()

    def close(self) -> None:
        """No more chunks: the reader stops after the queued ones."""
        self._closed = True
        self._notify()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            if self._chunks:
                data = self._chunks.popleft()
                self._notify()
                yield data
            elif self._closed:
                return
            else:
                await self._changed.wait()
