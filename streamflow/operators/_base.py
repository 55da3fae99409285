"""The shape every streamflow operator shares: per-subscription state, one hop.

:func:`stateful` builds a pipeable operator from ``setup(observer)``, called once
per subscription (so two subscriptions never share a parser); it returns the
``(on_next, on_error, on_completed)`` the upstream will call. An exception raised by
``on_next``/``on_completed`` goes to the downstream ``on_error`` (which disposes the
upstream), and nothing is delivered after a terminal notification.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from reactivex import Observable, abc

__all__ = ["Handlers", "Operator", "stateful"]

A = TypeVar("A")
B = TypeVar("B")
Operator = Callable[[Observable[A]], Observable[B]]
Handlers = tuple[Callable[[Any], None], Callable[[Exception], None], Callable[[], None]]


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

            def fail(error: Exception) -> None:
                nonlocal done
                if not done:
                    done = True
                    on_error(error)

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

            return source.subscribe(next_, fail, complete, scheduler=scheduler)

        return Observable(subscribe)

    return operator
