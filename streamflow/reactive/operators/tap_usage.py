"""``tap_usage(callback)``: call back with the final :class:`~streamflow.Usage`, once per stream.

Marble::

    events:         --delta--delta--stop(usage)--|
    tap_usage(cb):  --delta--delta--stop(usage)--|     cb(usage) called as stop passes

Every event passes through unchanged (the same objects). The callback gets the
stop event's usage -- read from the final event, never summed -- including
``cost`` where the provider reports one (OpenRouter), exactly once per
subscription. A stream that ends without a stop event (error, ``take(n)``,
dispose) has no final usage: the callback is not called, and the error's
``partial`` message says what was received. An exception raised by the callback
fails the stream like any operator error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reactivex import abc

from ...core.events import UniEvent, Usage
from ._base import Handlers, Operator, stateful

__all__ = ["tap_usage"]


def tap_usage(callback: Callable[[Usage], Any]) -> Operator[UniEvent, UniEvent]:
    """An operator that passes events through and reports the final usage once."""

    def setup(observer: abc.ObserverBase[UniEvent]) -> Handlers:
        called = False
        emit = observer.on_next

        def on_next(event: UniEvent) -> None:
            nonlocal called
            if not called and getattr(event, "event_type", None) == "stop":
                called = True
                callback(event.usage_metadata or Usage())
            emit(event)

        return on_next, observer.on_error, observer.on_completed

    return stateful(setup)
