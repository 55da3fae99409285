"""A bounded queue from a sync producer to one async consumer: the scope's backpressure hook.

:class:`BoundedQueue` is what ``stream()``'s channel and ``operators.from_async``'s inbox
share: the producer :meth:`~BoundedQueue.put` s items and :meth:`~BoundedQueue.close` s
the queue (with the error that ended it, if any); when ``buffer`` items wait unread,
:attr:`~BoundedQueue.overflow` tells the reader task to pause (``Scope.pressure``) until
the consumer :meth:`~BoundedQueue.take` s some, so a slow consumer slows the read instead
of growing memory.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

import anyio

END: Final = object()
"""What :meth:`BoundedQueue.take` returns once the queue is closed and empty."""


class BoundedQueue:
    """Items for one async consumer; ``buffer`` (at least 1) unread items pause the producer."""

    def __init__(self, buffer: int) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        self.buffer = buffer
        self.items: deque[Any] = deque()
        self.ended = False
        self.error: Exception | None = None
        self._arrived = anyio.Event()
        self._space = anyio.Event()

    def put(self, item: Any) -> None:
        """Queue ``item`` (never blocks: the reader pauses on :attr:`overflow` instead)."""
        self.items.append(item)
        self._arrived.set()

    def close(self, error: Exception | None = None) -> None:
        """No more items; ``error`` is what ended the producer (``None``: it completed)."""
        self.error = error
        self.ended = True
        self._arrived.set()
        self._space.set()

    @property
    def overflow(self) -> bool:
        """True when ``buffer`` items wait unread: the reader pauses."""
        return len(self.items) >= self.buffer and not self.ended

    async def relieve(self) -> None:
        """Wait until the consumer took some of the queue."""
        while self.overflow:
            self._space = anyio.Event()
            await self._space.wait()

    async def take(self) -> Any:
        """The next item, waiting for one; :data:`END` once closed and empty."""
        while not self.items:
            if self.ended:
                return END
            self._arrived = anyio.Event()
            await self._arrived.wait()
        item = self.items.popleft()
        if len(self.items) < self.buffer:
            self._space.set()
        return item
