"""THE chunk reader: a body's next chunk under the idle timeout and the deadline.

:class:`ChunkReader` is the only code that applies :class:`~streamflow.Limits`'
``idle_timeout``, ``deadline`` and ``first_chunk_timeout`` to a body and maps a
transport's exceptions to typed streamflow errors: every source's pump
(``streamflow.reactive._scope.pump``), the gateway's upstream and every attempt of a
failover chain (:mod:`streamflow.app.failover`) read through it. Until the first
chunk arrived, a wait is also bounded by the first-chunk limit (counted, like the
deadline, from the reader's creation).

On asyncio it keeps **one timer per reader**, not one per chunk: a read notes the
time it started and the limit it must end by (``min(start + idle, deadline)``);
the timer, armed for the earliest limit, re-arms itself for the current one when
it finds a later read in progress, and cancels the read's task only when the read
it interrupts is past its limit -- the same ``task.cancel()`` / ``uncancel()``
protocol ``asyncio.timeout`` uses, so cancellation from anywhere else passes
through untouched. A read thus costs a clock read and a few assignments, where an
anyio cancel scope per read armed and cancelled a timer every chunk (what it saves
is in ``bench/README.md``). On every other loop (trio) each read runs in an anyio
``move_on_after`` scope.

No timer or scope spans a ``yield`` of the caller: :meth:`ChunkReader.next` is
safe inside async generators (the gateway's), and the timer never interrupts
anything but a read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import NoReturn

import anyio
import sniffio

from ..core.errors import StreamflowError, StreamTimeoutError
from ..core.limits import Limits

ChunkStream = AbstractAsyncContextManager[AsyncIterator[bytes]]


def unmapped(exc: Exception) -> Exception:
    """The default ``map_error``: ``exc`` itself."""
    return exc


class ChunkReader:
    """Reads a body's chunks under ``limits``: idle timeout, deadline, typed errors.

    The deadline counts from the reader's creation. ``map_error`` turns a transport
    library's exception into a streamflow error (a streamflow error passes as is).
    Call :meth:`close` when done (it drops the timer; :func:`~streamflow.reactive._scope.pump`
    and the gateway do).
    """

    def __init__(self, limits: Limits | None,
                 map_error: Callable[[Exception], Exception] = unmapped) -> None:
        self.idle = limits.idle_timeout if limits is not None else None
        self.total = limits.deadline if limits is not None else None
        self.first = limits.first_chunk_timeout if limits is not None else None
        self.map_error = map_error
        self._loop: asyncio.AbstractEventLoop | None = (
            asyncio.get_running_loop() if sniffio.current_async_library() == "asyncio"
            else None)
        now = self._loop.time() if self._loop is not None else anyio.current_time()
        self.ends_at = now + self.total if self.total is not None else float("inf")
        #: loop time the first chunk must arrive by (``inf`` once it arrived, or unbounded)
        self.first_by = now + self.first if self.first is not None else float("inf")
        self._timer: asyncio.TimerHandle | None = None
        self._reading: asyncio.Task[object] | None = None  # the task inside a read, if any
        self._limit = 0.0  # loop time the current read must end by
        self._fired = False  # the timer cancelled the current read
        self._timed = self.idle is not None or self.total is not None or self.first is not None

    def _window(self) -> float:
        """Seconds the next wait may take: the idle timeout or what is left of the deadline
        (or of the first-chunk limit, before the first chunk)."""
        left = min(self.ends_at, self.first_by) - anyio.current_time()
        return left if self.idle is None else min(self.idle, left)

    def _timeout(self) -> StreamTimeoutError:
        now = anyio.current_time()
        if self.total is not None and now >= self.ends_at:
            return StreamTimeoutError("deadline", self.total)
        if self.first is not None and now >= self.first_by:
            return StreamTimeoutError("first_chunk", self.first)
        assert self.idle is not None
        return StreamTimeoutError("idle", self.idle)

    def _arrived(self, chunk: bytes | None) -> bytes | None:
        """A read's result: the first chunk lifts the first-chunk limit."""
        if chunk:
            self.first_by = float("inf")
        return chunk

    def mapped(self, exc: Exception) -> Exception:
        """``exc`` as the typed error the stream ends with."""
        return exc if isinstance(exc, StreamflowError) else self.map_error(exc)

    def _raise(self, exc: Exception) -> NoReturn:
        error = self.mapped(exc)
        if error is exc:
            raise exc
        raise error from exc

    async def open(self, stack: AsyncExitStack, body: ChunkStream) -> AsyncIterator[bytes]:
        """Enter ``body`` on ``stack`` within the deadline and the first-chunk limit (an
        HTTP source bounds its headers by the idle timeout itself); its chunk iterator."""
        with anyio.move_on_after(min(self.ends_at, self.first_by) - anyio.current_time()
                                 ) as waited:
            try:
                chunks = await stack.enter_async_context(body)
            except Exception as exc:
                self._raise(exc)
        if waited.cancelled_caught:
            raise self._timeout()
        return chunks.__aiter__()

    async def next(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The next chunk (``None`` at the end of the body); a timeout or failure raises."""
        loop = self._loop
        if loop is None:
            return await self._next_in_scope(chunks)
        if not self._timed:
            try:
                return await anext(chunks, None)
            except Exception as exc:
                self._raise(exc)
        task = asyncio.current_task()
        assert task is not None
        now = loop.time()
        limit = self.ends_at if self.idle is None else min(now + self.idle, self.ends_at)
        if self.first_by < limit:
            limit = self.first_by
        if limit <= now:
            raise self._timeout()
        self._limit = limit
        self._reading = task
        cancelling = task.cancelling()
        if self._timer is None:
            self._timer = loop.call_at(limit, self._expire)
        try:
            chunk = await anext(chunks, None)
        except asyncio.CancelledError:
            if self._fired:
                self._fired = False
                if task.uncancel() <= cancelling:  # ours alone: a timeout, not a cancel
                    raise self._timeout() from None
            raise
        except Exception as exc:
            self._raise(exc)
        finally:
            self._reading = None
            if self._fired:  # the read ended before our cancel reached it: take it back
                self._fired = False
                task.uncancel()
        if chunk and self.first is not None:
            self.first_by = float("inf")
        return chunk

    def _expire(self) -> None:
        """The timer: cancel a read past its limit, or wait for the current read's limit."""
        self._timer = None
        task = self._reading
        if task is None:
            return  # between reads: the next read arms a timer again
        assert self._loop is not None
        if self._loop.time() < self._limit:
            self._timer = self._loop.call_at(self._limit, self._expire)
            return
        self._fired = True
        task.cancel()

    async def _next_in_scope(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        with anyio.move_on_after(self._window()) as waited:
            try:
                return self._arrived(await anext(chunks, None))
            except Exception as exc:
                self._raise(exc)
        raise self._timeout() if waited.cancelled_caught else AssertionError("unreachable")

    async def wait(self, pending: Callable[[], Awaitable[None]]) -> None:
        """Await ``pending()`` (backpressure) within the deadline."""
        with anyio.move_on_after(self.ends_at - anyio.current_time()) as waited:
            await pending()
        if waited.cancelled_caught and self.total is not None:
            raise StreamTimeoutError("deadline", self.total)

    def close(self) -> None:
        """Drop the timer (a finished reader holds nothing on the loop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
