"""Sources over data already at hand: bytes, sync iterables, async iterables.

Marble (one subscription)::

    from_bytes(b"abcdef", chunk_size=4)     --b"abcd"--b"ef"--|
    from_iterable([b"a", b"b"])             --b"a"--b"b"--|
    from_async_iterable(agen_factory)       --...awaited chunks...--|

Inside a scope (``run()`` / ``async with scope()``) each pumps from an anyio task
and yields to the loop after every chunk; outside one the synchronous sources push
in the subscribing thread (see :mod:`streamflow.reactive._source`).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any

import anyio
import anyio.to_thread
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.scheduler import CurrentThreadScheduler

from ...core.errors import StreamflowError
from ...core.limits import DEFAULT_LIMITS, Limits
from .._source import ChunkStream, Source

__all__ = [
    "AsyncIterableSource",
    "SyncSource",
    "from_async_iterable",
    "from_bytes",
    "from_iterable",
]

Opener = Callable[[], AbstractContextManager[Iterable[bytes]]]


class SyncSource(Source):
    """Chunks from a synchronous opener: ``opener()`` is a context manager of an iterable.

    ``blocking=True`` (a sync HTTP client) runs opening, each read and closing in a
    worker thread when pumped inside a scope; otherwise the iterable is read in the
    event-loop thread (in-memory data).
    """

    def __init__(self, opener: Opener, *, blocking: bool = False, limits: Limits | None = None,
                 framing: str | None = None) -> None:
        super().__init__(limits)
        self.opener = opener
        self.blocking = blocking
        self.framing = framing

    def subscribe_sync(self, observer: abc.ObserverBase[bytes]) -> abc.DisposableBase:
        """Push every chunk in this thread, on reactivex's trampoline.

        The loop runs once the whole subscription chain is wired (like
        ``reactivex.from_iterable``), so a downstream ``take(n)`` disposes it early.
        """
        disposed = [False]

        def push(_: abc.SchedulerBase, __: Any = None) -> None:
            try:
                with self.opener() as chunks:
                    for chunk in chunks:  # the check inlined: it runs once per chunk
                        if disposed[0] or getattr(observer, "is_stopped", False):
                            return
                        if chunk:
                            observer.on_next(chunk)
            except StreamflowError as exc:
                observer.on_error(exc)
            except Exception as exc:
                observer.on_error(self.map_error(exc))
            else:
                observer.on_completed()

        CurrentThreadScheduler.singleton().schedule(push)
        return Disposable(lambda: disposed.__setitem__(0, True))

    def open(self) -> ChunkStream:
        """The body as an async iterator (reads in a worker thread when ``blocking``)."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        if not self.blocking:
            with self.opener() as chunks:
                yield _aiter(iter(chunks))
            return
        manager = await anyio.to_thread.run_sync(self.opener)
        try:
            chunks = await anyio.to_thread.run_sync(manager.__enter__)
            yield _thread_iter(iter(chunks))
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(manager.__exit__, None, None, None)


async def _aiter(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _thread_iter(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    while True:
        chunk = await anyio.to_thread.run_sync(next, chunks, None)
        if chunk is None:
            return
        yield chunk


class AsyncIterableSource(Source):
    """Chunks from an async iterable; ``factory()`` is called once per subscription.

    An async generator is closed (``aclose``) when the subscription ends or is disposed.
    It may wait on anything, so the default limits apply (600 s idle).
    """

    default_limits = DEFAULT_LIMITS

    def __init__(self, factory: Callable[[], AsyncIterable[bytes]], *,
                 limits: Limits | None = None, framing: str | None = None) -> None:
        super().__init__(limits)
        self.factory = factory
        self.framing = framing

    def open(self) -> ChunkStream:
        """Open the iterable (closing it on exit)."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        iterator = aiter(self.factory())
        try:
            yield iterator
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()


def from_bytes(body: bytes, *, chunk_size: int | None = None,
               limits: Limits | None = None, framing: str | None = None) -> SyncSource:
    """A body already in memory, as one chunk or as ``chunk_size`` pieces."""
    data = bytes(body)
    size = chunk_size or max(1, len(data))
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    return SyncSource(lambda: nullcontext(pieces), limits=limits, framing=framing)


def from_iterable(chunks: Iterable[bytes] | Callable[[], Iterable[bytes]], *,
                  limits: Limits | None = None, framing: str | None = None) -> SyncSource:
    """Chunks from an iterable (or a factory of one, re-called per subscription).

    A one-shot iterator (a generator object) can only be read by one subscription;
    pass a factory to subscribe more than once.
    """
    factory: Callable[[], Any] = chunks if callable(chunks) else (lambda: chunks)
    return SyncSource(lambda: nullcontext(factory()), limits=limits, framing=framing)


def from_async_iterable(chunks: AsyncIterable[bytes] | Callable[[], AsyncIterable[bytes]], *,
                        limits: Limits | None = None,
                        framing: str | None = None) -> AsyncIterableSource:
    """Chunks from an async iterable (or a factory of one, re-called per subscription)."""
    factory: Callable[[], AsyncIterable[bytes]] = (
        chunks if callable(chunks) else (lambda: chunks))  # type: ignore[assignment,return-value]
    return AsyncIterableSource(factory, limits=limits, framing=framing)
