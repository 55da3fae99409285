"""The sink protocol: what an application subscribes to a stream of UniEvents.

Two kinds of sink, both driven by :func:`streamflow.run`:

* :class:`Sink` -- synchronous ``on_next(event)`` / ``on_error(error)`` /
  ``on_completed()``, exactly a reactivex observer, so any ``Observer`` fits and a
  sink works with plain ``observable.subscribe(sink)`` too. It is called on the hot
  path, from the task that reads the body: it must not block (render, count, log).
  :class:`BaseSink` gives no-op defaults to subclass.
* :class:`AsyncSink` -- for sinks that must ``await`` (run a tool, write to a
  websocket). ``run()`` gives each one a bounded anyio memory object stream of
  ``buffer`` events and a consumer task that awaits :meth:`AsyncSink.on_event` per
  event and :meth:`AsyncSink.on_end` once (a sink that can take an event without
  waiting says so in :meth:`AsyncSink.on_event_nowait`, called from the reader's
  task while nothing is buffered: no buffer, no wake-up). When the buffer is full,
  ``policy`` says what happens to the reader:

  - ``"wait"`` (default): backpressure -- the reader stops reading the body after
    the current chunk until the sink caught up (TCP flow control does the rest);
  - ``"drop"``: the event is dropped for this sink and counted in ``sink.dropped``;
  - ``"error"``: the sink fails with ``LimitExceededError(limit="sink_buffer")``.

Failure rule (what ``run()`` does when a sink raises): the failing sink is detached
(it gets no further event; an :class:`AsyncSink` still gets ``on_end(error)``), the
other sinks and the stream go on to the end, and ``run()`` then raises
:class:`SinkError` listing every failure -- unless the stream itself failed, whose
error wins and carries the sink failures in ``sink_errors``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from typing import Any, Literal, Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ...core.errors import LimitExceededError, SinkError
from ...core.events import UniEvent
from ...core.outcome import StreamFailure, StreamRestart

__all__ = ["AsyncSink", "AsyncSinkFeeder", "BaseSink", "OverflowPolicy", "Sink", "SinkError"]

OverflowPolicy = Literal["wait", "drop", "error"]


@runtime_checkable
class Sink(Protocol):
    """A synchronous subscriber (any reactivex observer): called from the reader task."""

    def on_next(self, event: Any) -> None:
        """One item: a UniEvent (or a StreamFailure/StreamRestart notice, see operators)."""

    def on_error(self, error: Exception) -> None:
        """The stream failed; ``error.partial`` holds what arrived."""

    def on_completed(self) -> None:
        """The stream ended normally."""


class BaseSink:
    """A :class:`Sink` with no-op methods: override what you need.

    The failure and restart handling every sink shares lives here, once:
    :meth:`on_next` hands a UniEvent to :meth:`on_event`, ends like
    :meth:`on_error` on a :class:`~streamflow.core.outcome.StreamFailure` notice
    (``on_error("convert")``), and passes a
    :class:`~streamflow.core.outcome.StreamRestart` to :meth:`on_restart` unless the
    sink already :attr:`finished`.

    ``takes_discards``: whether the sink handles a continuation's ``StreamRestart``
    (a failover chain dropping a group it gave: ``notice.groups`` of them, the last
    ``notice.discard`` items). ``True``: it gets a continuing stream's every event as it
    comes, and must drop what a notice names. ``False`` (the default): ``run()`` gives
    it a continuing stream through a :class:`~streamflow.core.continuation.Holdback`,
    in which nothing is ever dropped (a tool call then arrives when it is whole).
    """

    takes_discards: bool = False

    @property
    def finished(self) -> bool:
        """True once this sink saw its stream end (a late restart is then ignored)."""
        return False

    def on_next(self, event: Any) -> None:
        """Route one item: a UniEvent, a failure notice or a restart notice."""
        if type(event) is UniEvent:
            self.on_event(event)
        elif isinstance(event, StreamFailure):
            self.on_error(event.error)
        elif isinstance(event, StreamRestart):
            if not self.finished:
                self.on_restart(event)

    def on_event(self, event: UniEvent) -> None:
        """Handle one UniEvent (override)."""

    def on_restart(self, notice: StreamRestart) -> None:
        """A retry starts a new attempt of the stream (override)."""

    def on_error(self, error: Exception) -> None:
        """Not handled here: re-raise it (reactivex's default).

        ``run()`` raises the stream's error anyway and does not count this as a sink
        failure; under a bare ``scope()`` the error is raised at the scope's exit, so
        it never vanishes. Override to handle it.
        """
        raise error

    def on_completed(self) -> None:
        """Nothing to do."""


class AsyncSink(ABC):
    """A sink that awaits; fed through a bounded buffer (see the module doc for ``policy``)."""

    buffer: int = 128
    policy: OverflowPolicy = "wait"
    dropped: int = 0

    @abstractmethod
    async def on_event(self, event: Any) -> None:
        """Handle one item, in stream order."""

    async def on_end(self, error: BaseException | None) -> None:  # noqa: B027 - optional hook
        """Called once after the last item: ``None`` on success, else the error."""

    def on_event_nowait(self, event: Any) -> bool:
        """Take one item at once, in the reader's task, if that needs no waiting.

        Return True when the item was handled (``on_event`` is then not called for
        it), False to have it go through the buffer to ``on_event``. ``run()`` offers
        an item here only when nothing sent earlier is still buffered or being
        handled, so the order holds. The default takes nothing. A sink whose
        ``on_event`` rarely waits (it queues for a task of its own, or only records)
        overrides it: the item skips the buffer and the consumer task's wake-up. An
        exception fails the sink as one from ``on_event`` does.
        """
        return False


class AsyncSinkFeeder:
    """The synchronous observer face of one :class:`AsyncSink` (used by ``run()``).

    ``on_next`` never blocks: it sends without waiting, or applies the policy when
    the buffer is full (``"wait"`` parks the event in ``overflow`` and the reader
    awaits :meth:`relieve` before its next chunk). :meth:`consume` is the consumer
    task; :meth:`finish` flushes and closes after the stream's terminal event.
    """

    def __init__(self, sink: AsyncSink) -> None:
        self.sink = sink
        send, receive = anyio.create_memory_object_stream[Any](max(0, sink.buffer))
        self._send: MemoryObjectSendStream[Any] = send
        self._receive: MemoryObjectReceiveStream[Any] = receive
        self.overflow: deque[Any] = deque()
        self._unhandled = 0  # items sent to the buffer whose on_event has not returned
        self.failure: BaseException | None = None
        self._end: BaseException | None = None
        sink.dropped = 0

    def on_next(self, event: Any) -> None:
        """Hand one item to the sink's buffer, applying the overflow policy."""
        if self.failure is not None:
            return
        if self.overflow:
            self.overflow.append(event)
            return
        if self._unhandled == 0:
            try:
                if self.sink.on_event_nowait(event):
                    return
            except Exception as exc:
                self.detach(exc)
                return
        try:
            self._send.send_nowait(event)
            self._unhandled += 1
        except anyio.WouldBlock:
            policy = self.sink.policy
            if policy == "wait":
                self.overflow.append(event)
            elif policy == "drop":
                self.sink.dropped += 1
            else:
                raise LimitExceededError("sink_buffer", self.sink.buffer) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the consumer failed; its failure is recorded

    def on_error(self, error: Exception) -> None:
        """Remember the stream's error for ``on_end``."""
        self._end = error

    def on_completed(self) -> None:
        """Nothing until :meth:`finish`."""

    def detach(self, error: BaseException) -> None:
        """Fail this sink: no more events; ``on_end(error)`` still runs."""
        if self.failure is None:
            self.failure = error
        self._end = error
        self.overflow.clear()
        self._send.close()

    async def relieve(self) -> None:
        """Wait until the parked events fit in the buffer (the ``"wait"`` backpressure)."""
        while self.overflow:
            try:
                await self._send.send(self.overflow[0])
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.overflow.clear()
                return
            self._unhandled += 1
            self.overflow.popleft()

    async def finish(self) -> None:
        """After the stream's terminal event: flush what is parked, then close the buffer."""
        await self.relieve()
        self._send.close()

    async def consume(self) -> None:
        """The consumer task: await ``on_event`` per item, then ``on_end`` once.

        What is already buffered is taken without a trip through the event loop per
        item (at most ``buffer`` items, since the producer cannot refill it meanwhile);
        the task waits, and so yields, only when the buffer is empty.
        """
        receive = self._receive
        with receive:
            try:
                while True:
                    try:
                        event = receive.receive_nowait()
                    except anyio.WouldBlock:
                        try:
                            event = await receive.receive()
                        except anyio.EndOfStream:
                            break
                    except anyio.EndOfStream:
                        break
                    try:
                        await self.sink.on_event(event)
                    finally:
                        self._unhandled -= 1
            except Exception as exc:
                self.failure = self.failure or exc
                self._end = exc
        try:
            await self.sink.on_end(self._end)
        except Exception as exc:
            self.failure = self.failure or exc
