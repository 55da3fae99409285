"""The shape every streamflow operator shares: per-subscription state, one hop.

:func:`stateful` builds a pipeable operator from ``setup(observer)``, called once
per subscription (so two subscriptions never share a parser); it returns the
``(on_next, on_error, on_completed)`` the upstream will call (through one guard
object; a streamflow source calls the guard directly). An exception raised by
``on_next``/``on_completed`` goes to the downstream ``on_error`` (which disposes the
upstream), and nothing is delivered after a terminal notification. When the
downstream ``on_error`` itself raises (an observer subscribed with ``on_next`` only),
the upstream is disposed and the error goes to the enclosing :func:`~streamflow.scope`,
which raises it at its exit (outside any scope it propagates to the caller).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import Disposable, SingleAssignmentDisposable

from .._scope import report_unhandled
from .._source import Source

A = TypeVar("A")
B = TypeVar("B")
Operator = Callable[[Observable[A]], Observable[B]]
Handlers = tuple[Callable[[Any], object], Callable[[Exception], None], Callable[[], None]]


class _Guard:
    """One subscription of a :func:`stateful` operator: its handlers behind a stop flag.

    The upstream observer: a streamflow source pushes to it directly (it checks
    ``is_stopped`` before each chunk); any other observable through reactivex's own
    observer. Compiled in the compiled build, so a chunk costs no interpreted frame here.
    """

    def __init__(self, handlers: Handlers, upstream: SingleAssignmentDisposable) -> None:
        self._next, self._error, self._completed = handlers
        self._upstream = upstream
        self.is_stopped = False

    def on_next(self, value: Any) -> None:
        if self.is_stopped:
            return
        try:
            self._next(value)
        except Exception as exc:
            self.on_error(exc)

    def on_error(self, error: Exception) -> None:
        if self.is_stopped:
            return
        self.is_stopped = True
        try:
            self._error(error)
        except Exception as exc:  # the downstream has no on_error: nobody will
            self._upstream.dispose()
            report_unhandled(exc)

    def on_completed(self) -> None:
        if self.is_stopped:
            return
        try:
            self._completed()
        except Exception as exc:
            self.on_error(exc)
        else:
            self.is_stopped = True

    def dispose(self) -> None:
        """Stop, and dispose the upstream subscription."""
        self.is_stopped = True
        self._upstream.dispose()


def guarded(handlers: Handlers) -> _Guard:
    """``handlers`` behind the stop flag a subscription puts them behind: the observer a
    caller that reads its own chunks pushes to (``Run.driven``)."""
    return _Guard(handlers, SingleAssignmentDisposable())


def subscriber(source: Observable[Any], setup: Callable[[abc.ObserverBase[Any]], Handlers]
               ) -> Callable[..., abc.DisposableBase]:
    """The subscribe function of ``source`` piped through a :func:`stateful` operator
    (what an ``Observable`` subclass such as ``pipeline()``'s passes to its base)."""

    def subscribe(observer: abc.ObserverBase[Any],
                  scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
        upstream = SingleAssignmentDisposable()
        guard = _Guard(setup(observer), upstream)
        if isinstance(source, Source):  # ours: it pushes to the guard, no hop between
            try:
                upstream.disposable = source.subscribe_guarded(guard, scheduler)
            except Exception as exc:  # as reactivex's subscribe does: to on_error
                guard.on_error(exc)
        else:
            upstream.disposable = source.subscribe(guard.on_next, guard.on_error,
                                                   guard.on_completed, scheduler=scheduler)
        return Disposable(guard.dispose)

    return subscribe


def stateful(setup: Callable[[abc.ObserverBase[Any]], Handlers]) -> Operator[Any, Any]:
    """A pipeable operator whose state is created by ``setup`` per subscription."""

    def operator(source: Observable[Any]) -> Observable[Any]:
        return Observable(subscriber(source, setup))

    return operator
