"""``from_async(fn)``: an async generator function over UniEvents, as an operator.

::

    async def redact(events: AsyncIterator[UniEvent]) -> AsyncIterator[UniEvent]:
        async for event in events:
            if event.text and "secret" in event.text:
                continue
            yield event

    source.pipe(pipeline(), from_async(redact))           # reactive style
    async with streamflow.stream(source, transforms=[redact]) as s: ...

The ecosystem's composition idiom (the one ``anyio``/``aiostream`` users write), with
the rules of every other operator: one call of ``fn`` -- so one generator and its
local state -- per subscription; what it yields goes downstream in order; the
upstream's error is raised inside ``fn`` by its ``async for`` (catch it to convert
or retry, or let it propagate) and ends the stream typed, ``partial`` attached;
an exception ``fn`` raises ends the stream through ``on_error``; ``fn`` returning
completes the stream and disposes the upstream (``take(n)`` written by hand closes
the HTTP response at once). Disposing the subscription cancels the generator's
task (its ``finally`` blocks run) and the upstream. The generator runs in a task of
the enclosing :func:`~streamflow.scope` (``run()``, ``stream()``); at most
``buffer`` events wait for it before the reader pauses (the scope's backpressure
hook), so a slow generator slows the read instead of growing memory. Outside a
scope the subscription fails with ``NoScopeError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SingleAssignmentDisposable

from ...core.errors import NoScopeError
from ...core.events import UniEvent
from .._queue import END, BoundedQueue
from .._scope import current_scope
from ._base import Operator

__all__ = ["from_async"]

AsyncTransform = Callable[[AsyncIterator[UniEvent]], AsyncIterator[Any]]


class _Inbox(BoundedQueue):
    """The upstream's items, queued for the generator; the scope's backpressure hook."""

    def on_next(self, value: Any) -> None:
        self.put(value)

    def on_error(self, error: Exception) -> None:
        self.close(error)

    def on_completed(self) -> None:
        self.close()

    async def events(self) -> AsyncIterator[Any]:
        """The items in order; the upstream's error raised after the items before it."""
        while (item := await self.take()) is not END:
            yield item
        if self.error is not None:
            raise self.error


def from_async(fn: AsyncTransform, *, buffer: int = 256) -> Operator[UniEvent, Any]:
    """The operator running ``fn(events)`` once per subscription (see the module doc)."""
    if not callable(fn):
        raise TypeError(f"from_async() takes an async generator function, not {fn!r}")
    if buffer < 1:
        raise ValueError("buffer must be at least 1")
    name = getattr(fn, "__name__", type(fn).__name__)

    def operator(source: Observable[UniEvent]) -> Observable[Any]:
        def subscribe(observer: abc.ObserverBase[Any],
                      scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
            owner = current_scope()
            if owner is None:
                observer.on_error(NoScopeError(
                    f"from_async({name}) runs its generator in a task: subscribe it inside "
                    "`await streamflow.run(...)`, `streamflow.stream(...)` or "
                    "`async with streamflow.scope():`"))
                return Disposable()
            inbox = _Inbox(buffer)
            upstream = SingleAssignmentDisposable()

            async def drive(cancel: anyio.CancelScope) -> None:
                error: Exception | None = None
                owner.pressure.append(inbox)
                generator = fn(inbox.events())
                try:
                    async for out in generator:
                        observer.on_next(out)
                        if cancel.cancel_called:
                            return
                except Exception as exc:
                    error = exc
                finally:
                    owner.pressure.remove(inbox)
                    upstream.dispose()  # fn is done with its input: stop reading
                    aclose = getattr(generator, "aclose", None)
                    if aclose is not None:
                        with anyio.CancelScope(shield=True):
                            await aclose()
                owner.end(observer, error, cancel)

            task = owner.spawn(drive, f"streamflow-operator:{name}")
            upstream.disposable = source.subscribe(inbox.on_next, inbox.on_error,
                                                   inbox.on_completed, scheduler=scheduler)
            return CompositeDisposable(upstream, task)

        return Observable(subscribe)

    return operator
