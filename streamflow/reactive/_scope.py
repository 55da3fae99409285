"""The scope async sources run in, and THE chunk pump every byte reader uses.

reactivex schedulers are asyncio-centric; streamflow does not use them. Instead:

* A :class:`Scope` owns an anyio task group. ``streamflow.run()`` opens one; an
  application that subscribes by hand opens one with ``async with scope():``. The
  scope is found through a context variable, so an observable subscribed anywhere
  inside it (through any chain of operators) finds it, and so do the tasks it starts.
* ``ChunkReader`` (``streamflow.reactive._chunk_reader``) reads the next chunk of a body
  under the stream's :class:`~streamflow.Limits`: the idle timeout between chunks,
  the overall deadline (counted from the reader's creation, so it covers sending the
  request), and the transport's exceptions mapped to typed streamflow errors. It is
  the only code that applies those rules: every :class:`~streamflow.reactive._source.Source`'s
  pump (:func:`pump`) and the gateway's upstream read through it.
* :func:`pump` is a source's task: it reads each chunk, pushes it **synchronously**
  with ``observer.on_next`` (so the whole operator chain and every sync sink run in
  the pump task, no queue, no thread hop), then awaits a checkpoint (a fast replay
  never starves other tasks) and the scope's backpressure hooks (AsyncSinks with
  ``policy="wait"``). End of body -> ``on_completed``; a failure -> ``on_error``
  with a typed error. Disposing the subscription cancels the pump's cancel scope
  (also valid before it started, and from inside an ``on_next``: ``take(n)``); the
  body's context manager is always exited -- for HTTP the response is closed,
  shielded -- which is the only cancellation signal a provider ever sees. A
  cancelled pump delivers nothing more.

Only anyio APIs are used, so this runs on asyncio and trio alike.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from reactivex import abc
from reactivex.disposable import Disposable

from ..core.limits import Limits
from ._chunk_reader import ChunkReader, ChunkStream, unmapped

_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("streamflow.reactive._scope",
                                                                      default=None)


class Scope:
    """A task group that async sources pump in, plus the reader's backpressure hooks."""

    def __init__(self, task_group: TaskGroup, limits: Limits | None = None) -> None:
        self.task_group = task_group
        self.limits = limits  # run(limits=...): timeouts for sources that set none
        self.pressure: list[Any] = []   # objects with ``overflow`` and ``async relieve()``
        self.unhandled: list[BaseException] = []
        self.pumps = 0                   # pump tasks alive (tests assert none is left)

    def spawn(self, pump: Callable[[anyio.CancelScope], Awaitable[None]],
              name: str = "streamflow-pump") -> Disposable:
        """Start ``pump(cancel_scope)`` as a task named ``name``; the disposable cancels it."""
        cancel = anyio.CancelScope()
        self.pumps += 1

        async def run() -> None:
            try:
                with cancel:
                    await pump(cancel)
            finally:
                self.pumps -= 1

        self.task_group.start_soon(run, name=name)
        return Disposable(cancel.cancel)

    def report(self, error: BaseException) -> None:
        """An error no observer handled: cancel the scope's block, raise it at its exit."""
        self.unhandled.append(error)
        self.task_group.cancel_scope.cancel()

    def end(self, observer: abc.ObserverBase[Any], error: Exception | None,
            cancel: anyio.CancelScope) -> None:
        """End ``observer`` as a task of this scope that fed it ended: with ``error`` or
        completed; nothing once ``cancel`` was called (the subscriber disposed of it); an
        observer that raises (one without ``on_error`` re-raises) is :meth:`report` ed."""
        if cancel.cancel_called:
            return
        try:
            if error is None:
                observer.on_completed()
            else:
                observer.on_error(error)
        except Exception as exc:
            self.report(exc)

    def pressed(self) -> bool:
        """Whether a backpressure hook has parked events (the reader must wait for it)."""
        return any(hook.overflow for hook in self.pressure)

    async def relieve(self) -> None:
        """Await the backpressure hooks that have parked events (cheap when none has)."""
        for hook in self.pressure:
            if hook.overflow:
                await hook.relieve()

    async def pace(self, reader: ChunkReader) -> None:
        """Between two chunks ``reader`` read: let the loop's other tasks run (a fast
        replay never starves them), then wait for the backpressure hooks that parked
        events, within the reader's deadline."""
        await anyio.lowlevel.checkpoint()
        if self.pressure and self.pressed():
            await reader.wait(self.relieve)


@asynccontextmanager
async def scope(limits: Limits | None = None) -> AsyncIterator[Scope]:
    """Open a :class:`Scope`: sources subscribed inside pump in its task group.

    ``limits`` gives the idle-read timeout and deadline of sources that were not
    given their own (``run(limits=...)`` passes its limits here).

    On exit it waits for the pumps still running (dispose them to stop early). An
    exception raised in the block is re-raised here as itself, not in a group. An
    error no observer handled -- a stream's ``ProviderError`` reaching an observer
    subscribed with ``on_next`` only, a failing ``Block`` subscriber -- cancels the
    block at once and is raised here, so it never vanishes.
    """
    try:
        async with anyio.create_task_group() as tg:
            current = Scope(tg, limits)
            token = _SCOPE.set(current)
            try:
                yield current
            finally:
                _SCOPE.reset(token)
    except BaseExceptionGroup as group:  # one plain error: raise it as itself
        if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
            raise group.exceptions[0] from None
        raise
    if current.unhandled:
        raise current.unhandled[0]


def current_scope() -> Scope | None:
    """The innermost open scope of this context (``None`` outside any)."""
    return _SCOPE.get()


def report_unhandled(error: BaseException) -> None:
    """Hand an error no observer handled to the current scope; outside one, raise it."""
    current = _SCOPE.get()
    if current is None:
        raise error
    current.report(error)


async def pump(body: Callable[[], ChunkStream], observer: abc.ObserverBase[bytes],
               cancel: anyio.CancelScope, owner: Scope, limits: Limits | None,
               map_error: Callable[[Exception], Exception] = unmapped) -> None:
    """Read ``body()`` chunk by chunk into ``observer`` (see the module doc)."""
    reader = ChunkReader(limits, map_error)
    error: Exception | None = None
    try:
        async with AsyncExitStack() as stack:
            chunks = await reader.open(stack, body())
            while (chunk := await reader.next(chunks)) is not None:
                if chunk:
                    observer.on_next(chunk)
                if cancel.cancel_called:
                    return
                await owner.pace(reader)
    except Exception as exc:
        error = reader.mapped(exc)
    finally:
        reader.close()
    owner.end(observer, error, cancel)
