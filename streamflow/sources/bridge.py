"""The bridge between anyio tasks and reactivex observers (no reactivex scheduler involved).

reactivex schedulers are asyncio-centric; streamflow does not use them. Instead:

* A :class:`Scope` owns an anyio task group. ``streamflow.run()`` opens one; an
  application that subscribes by hand opens one with ``async with scope():``. The
  scope is found through a context variable, so an observable subscribed anywhere
  inside it (through any chain of operators) finds it, and so do the tasks it starts.
* A :class:`Source` is a cold observable of body chunks. Subscribing it inside a
  scope starts one *pump* task in the scope's task group; the pump reads the next
  chunk (awaiting the network), pushes it **synchronously** with ``observer.on_next``
  (so the whole operator chain and every sync sink run in the pump task, with no
  queue and no thread hop), then awaits ``anyio.lowlevel.checkpoint()`` so a fast
  replay never starves other tasks, and the scope's backpressure hook (AsyncSinks
  with ``policy="wait"``). End of body -> ``on_completed``; a failure -> ``on_error``
  with a typed streamflow error.
* Disposing the subscription calls ``CancelScope.cancel()`` on the pump's own cancel
  scope (also valid before the pump started, and from inside an ``on_next`` --
  ``take(n)`` disposes that way). The pump's ``finally`` closes the body -- for HTTP
  the response, shielded from the cancellation -- which is the only cancellation
  signal a provider ever sees. A disposed pump delivers nothing more.
* Only anyio APIs are used, so this runs on asyncio and trio alike. Dispose from the
  event-loop thread (reactivex disposes synchronously, so this holds unless you
  add a thread-pool scheduler yourself).

Without a scope, a :class:`Source` over in-memory data pushes synchronously in the
subscribing thread (plain reactivex behaviour, handy in scripts and sync tests); an
async source raises :class:`NoScopeError` through ``on_error``.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from ..errors import NoScopeError, StreamflowError, StreamTimeoutError
from ..limits import Limits

__all__ = ["ChunkStream", "NoScopeError", "Scope", "Source", "current_scope", "report_unhandled",
           "scope"]

ChunkStream = AbstractAsyncContextManager[AsyncIterator[bytes]]
_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("streamflow_scope",
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

    async def relieve(self) -> None:
        """Await the backpressure hooks that have parked events (cheap when none has)."""
        for hook in self.pressure:
            if hook.overflow:
                await hook.relieve()


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


class Source(Observable[bytes]):
    """A cold observable of body chunks: one subscription = one read of the body.

    Subclasses implement :meth:`open` -- an async context manager yielding an async
    iterator of chunks; it is entered once per subscription inside the pump and
    always exited (closing the body). ``limits`` gives the idle-read timeout between
    chunks and the overall deadline (network sources default to ``DEFAULT_LIMITS``:
    600 s idle, no deadline; in-memory ones to none). ``framing`` is a hint (``"ndjson"`` for a
    ``.jsonl`` recording) that ``run()`` passes to the pipeline.
    """

    framing: str | None = None
    default_limits: Limits | None = None  # network sources: DEFAULT_LIMITS (idle 600 s)

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__()
        self.limits = limits

    def open(self) -> ChunkStream:
        """Open the body (one call per subscription)."""
        raise NotImplementedError

    def map_error(self, exc: Exception) -> Exception:
        """Turn a transport library's exception into a streamflow error (default: as is)."""
        return exc

    def subscribe_sync(self, observer: abc.ObserverBase[bytes]) -> abc.DisposableBase:
        """Subscription without a scope: async sources cannot run without a task group."""
        raise NoScopeError(f"{type(self).__name__} is asynchronous: subscribe it inside "
                           "`await streamflow.run(...)` or `async with streamflow.scope():`")

    def subscribe_guarded(self, observer: Any,
                          scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        """Subscribe an observer that guards itself (a streamflow operator's: it ignores
        what comes after its end and has ``is_stopped``), with no reactivex observer
        wrapped around it. The pushing starts as it does for ``subscribe``."""
        return self._subscribe_core(observer, scheduler)

    def _subscribe_core(self, observer: abc.ObserverBase[bytes],
                        scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        current = current_scope()
        if current is None:
            return self.subscribe_sync(observer)
        return current.spawn(lambda cancel: self._pump(observer, cancel, current),
                             f"streamflow-pump:{type(self).__name__}")

    async def _pump(self, observer: abc.ObserverBase[bytes], cancel: anyio.CancelScope,
                    owner: Scope) -> None:
        limits = self.limits or owner.limits or self.default_limits
        idle = limits.idle_timeout if limits is not None else None
        total = limits.deadline if limits is not None else None
        error: Exception | None = None
        deadline = anyio.CancelScope(
            deadline=anyio.current_time() + total if total is not None else float("inf"))
        try:
            with deadline:
                async with self.open() as chunks:
                    iterator = chunks.__aiter__()
                    while True:
                        if idle is None:
                            chunk = await anext(iterator, None)
                        else:
                            with anyio.move_on_after(idle) as waited:
                                chunk = await anext(iterator, None)
                            if waited.cancelled_caught:
                                raise StreamTimeoutError("idle", idle)
                        if chunk is None:
                            break
                        if chunk:
                            observer.on_next(chunk)
                        if cancel.cancel_called:
                            return
                        await anyio.lowlevel.checkpoint()
                        if owner.pressure:
                            await owner.relieve()
            if deadline.cancelled_caught:
                assert total is not None
                error = StreamTimeoutError("deadline", total)
        except StreamflowError as exc:
            error = exc
        except Exception as exc:
            error = self.map_error(exc)
        if cancel.cancel_called:
            return
        try:
            if error is None:
                observer.on_completed()
            else:
                observer.on_error(error)
        except Exception as exc:  # an observer without on_error re-raises: surface it
            owner.report(exc)
