"""The hand-over between the reader task and ``async for``: a bounded queue of events.

:class:`Channel` is one more sink of ``run()``'s fan-out (after the caller's
sinks). It keeps each UniEvent with the SSE last-event-id in force when it was
decoded; when ``buffer`` events wait unread it tells the reader to pause (the
scope's backpressure hook, like an ``AsyncSink`` with ``policy="wait"``), so a slow
consumer slows the read instead of growing memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio

from ..events import UniEvent


class Channel:
    """A sync observer queueing UniEvents for an async consumer (see the module doc)."""

    def __init__(self, buffer: int, last_id: Callable[[], str | None]) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        self.buffer = buffer
        self.items: deque[tuple[UniEvent, str | None]] = deque()
        self.ended = False
        self._last_id = last_id
        self._arrived = anyio.Event()
        self._space = anyio.Event()

    # -- observer face (the reader task) ------------------------------------
    def on_next(self, value: object) -> None:
        """Queue a UniEvent (notices such as ``StreamRestart`` are for sinks only)."""
        if type(value) is UniEvent:
            self.items.append((value, self._last_id()))
            self._arrived.set()

    def on_error(self, error: Exception) -> None:
        """The stream ended with an error (the stream object raises it)."""
        self._close()

    def on_completed(self) -> None:
        """The stream ended."""
        self._close()

    def _close(self) -> None:
        self.ended = True
        self._arrived.set()
        self._space.set()

    # -- backpressure hook (Scope.pressure) ---------------------------------
    @property
    def overflow(self) -> bool:
        """True when ``buffer`` events wait unread: the reader pauses."""
        return len(self.items) >= self.buffer and not self.ended

    async def relieve(self) -> None:
        """Wait until the consumer read some of the queue."""
        while self.overflow:
            self._space = anyio.Event()
            await self._space.wait()

    # -- consumer face -----------------------------------------------------
    async def get(self) -> tuple[UniEvent, str | None] | None:
        """The next event and its last-event-id; ``None`` once the stream ended and is read."""
        while not self.items:
            if self.ended:
                return None
            self._arrived = anyio.Event()
            await self._arrived.wait()
        entry = self.items.popleft()
        if len(self.items) < self.buffer:
            self._space.set()
        return entry
