"""The base of every byte source: a cold observable of body chunks, read by THE pump.

A :class:`Source` subscribed inside a :class:`~streamflow.reactive._scope.Scope` starts one
pump task in the scope's task group (:func:`streamflow.reactive._scope.pump`: the idle
timeout, the deadline, typed errors, cancellation on dispose). Without a scope, a
source over in-memory data pushes synchronously in the subscribing thread (plain
reactivex behaviour, handy in scripts and sync tests); an async source raises
:class:`~streamflow.core.errors.NoScopeError` through ``on_error``.
"""

from __future__ import annotations

from typing import Any

import anyio
from reactivex import Observable, abc

from ..core.errors import NoScopeError
from ..core.limits import Limits
from ._scope import ChunkStream, Scope, current_scope, pump


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
        await pump(self.open, observer, cancel, owner,
                   self.limits or owner.limits or self.default_limits, self.map_error)
