"""The hand-over between the reader task and ``async for``: a bounded queue of events.

:class:`Channel` is one more sink of ``run()``'s fan-out (after the caller's
sinks). It keeps each UniEvent with the SSE last-event-id in force when it was
decoded; when ``buffer`` events wait unread it tells the reader to pause (the
scope's backpressure hook, like an ``AsyncSink`` with ``policy="wait"``), so a slow
consumer slows the read instead of growing memory.
"""

from __future__ import annotations

from collections.abc import Callable

from ...core.events import UniEvent
from ...reactive._queue import END, BoundedQueue


class Channel(BoundedQueue):
    """A sync observer queueing UniEvents for an async consumer (see the module doc)."""

    def __init__(self, buffer: int, last_id: Callable[[], str | None]) -> None:
        super().__init__(buffer)
        self._last_id = last_id

    # -- observer face (the reader task) ------------------------------------
    def on_next(self, value: object) -> None:
        """Queue a UniEvent (notices such as ``StreamRestart`` are for sinks only)."""
        if type(value) is UniEvent:
            self.put((value, self._last_id()))

    def on_error(self, error: Exception) -> None:
        """The stream ended with an error (the stream object raises it)."""
        self.close()

    def on_completed(self) -> None:
        """The stream ended."""
        self.close()

    # -- consumer face -----------------------------------------------------
    async def get(self) -> tuple[UniEvent, str | None] | None:
        """The next event and its last-event-id; ``None`` once the stream ended and is read."""
        entry = await self.take()
        return None if entry is END else entry  # type: ignore[no-any-return]
