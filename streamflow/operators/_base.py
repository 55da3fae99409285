"""The shape every streamflow operator shares: per-subscription state, one hop.

:func:`stateful` builds a pipeable operator from ``setup(observer)``, called once
per subscription (so two subscriptions never share a parser); it returns the
``(on_next, on_error, on_completed)`` the upstream will call. An exception raised by
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
from reactivex.disposable import SingleAssignmentDisposable

from ..sources.bridge import report_unhandled

__all__ = ["Handlers", "Operator", "stateful"]

A = TypeVar("A")
B = TypeVar("B")
Operator = Callable[[Observable[A]], Observable[B]]
Handlers = tuple[Callable[[Any], object], Callable[[Exception], None], Callable[[], None]]


def stateful(setup: Callable[[abc.ObserverBase[Any]], Handlers]) -> Operator[Any, Any]:
    """A pipeable operator whose state is created by ``setup`` per subscription."""

    def operator(source: Observable[Any]) -> Observable[Any]:
        def subscribe(observer: abc.ObserverBase[Any],
                      scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
            on_next, on_error, on_completed = setup(observer)
            done = False

            def next_(value: Any) -> None:
                if done:
                    return
                try:
                    on_next(value)
                except Exception as exc:
                    fail(exc)

            upstream = SingleAssignmentDisposable()

            def fail(error: Exception) -> None:
                nonlocal done
                if not done:
                    done = True
                    try:
                        on_error(error)
                    except Exception as exc:  # the downstream has no on_error: nobody will
                        upstream.dispose()
                        report_unhandled(exc)

            def complete() -> None:
                nonlocal done
                if done:
                    return
                try:
                    on_completed()
                except Exception as exc:
                    fail(exc)
                else:
                    done = True

            upstream.disposable = source.subscribe(next_, fail, complete, scheduler=scheduler)
            return upstream

        return Observable(subscribe)

    return operator
