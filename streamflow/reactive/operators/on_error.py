"""``on_error(policy)``: what a failed stream does -- raise, convert, or retry.

Marble::

    upstream:               --e1--e2--#ProviderError
    on_error("raise"):      --e1--e2--#ProviderError              (the default: unchanged)
    on_error("convert"):    --e1--e2--StreamFailure(err, partial)--|
    on_error("retry"):      #503 ...backoff... --e1--e2--stop--|   (no output yet: transparent)
    retry, after_output:    --e1--#503 --StreamRestart(discard=1)-- ...backoff... --e1--e2--stop--|

Place it after ``pipeline()``/``decode()``, which attach ``partial`` to every error.

* ``"convert"``: a typed streamflow error becomes the item :class:`StreamFailure`
  (error + partial message), then completion -- for sinks that want failures as
  data (a chat UI shows the partial answer and a notice). Any other exception (a
  bug) still goes to ``on_error``.
* ``"retry"``: a *retryable* error (``error.retryable``: HTTP 429/5xx, overloaded,
  transport drops, timeouts, cut streams) re-runs the request -- by calling
  ``request()`` for a fresh observable, or by re-subscribing upstream (for a
  ``from_httpx`` source that sends the request again). Only before any output by
  default, so the consumer never sees a duplicate; with ``after_output=True`` a
  :class:`StreamRestart` item first tells the app to discard the ``discard`` items it
  got from the failed attempt (all of them: each attempt is a whole new stream).
  The delay before attempt ``n+1`` is ``backoff(n)`` (default 0.5 s doubling, 30 s
  cap), raised to the server's ``retry_after`` when it sent one; an error whose
  ``retry_after`` exceeds ``max_delay`` is raised instead. ``sleep`` is injectable
  (tests); inside a scope the wait is an anyio task, cancelled by dispose.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SerialDisposable

from ...core.errors import StreamflowError
from ...core.message import Message
from ...core.outcome import StreamFailure, StreamRestart
from .._scope import current_scope
from ._base import Handlers, Operator, stateful

__all__ = ["StreamFailure", "StreamRestart", "exponential_backoff", "on_error"]

Policy = Literal["raise", "convert", "retry"]


def exponential_backoff(base: float = 0.5, factor: float = 2.0,
                        cap: float = 30.0) -> Callable[[int], float]:
    """``attempt -> min(cap, base * factor ** (attempt - 1))`` seconds."""
    return lambda attempt: min(cap, base * factor ** (attempt - 1))


def on_error(policy: Policy = "raise", *, request: Callable[[], Observable[Any]] | None = None,
             max_attempts: int = 3, after_output: bool = False,
             backoff: Callable[[int], float] | None = None, max_delay: float = 60.0,
             sleep: Callable[[float], Awaitable[Any]] | None = None,
             retry_on: Callable[[Exception], bool] | None = None) -> Operator[Any, Any]:
    """An operator applying the error ``policy`` (see the module doc)."""
    if policy == "raise":
        return lambda source: source
    if policy == "convert":
        return stateful(_convert)
    if policy != "retry":
        raise ValueError(f"unknown on_error policy {policy!r}")
    return _Retry(request, max_attempts, after_output, backoff or exponential_backoff(),
                  max_delay, sleep or anyio.sleep,
                  retry_on or (lambda e: bool(getattr(e, "retryable", False)))).operator


def _convert(observer: abc.ObserverBase[Any]) -> Handlers:
    def on_error(error: Exception) -> None:
        if not isinstance(error, StreamflowError):
            observer.on_error(error)
            return
        observer.on_next(StreamFailure(error, error.partial or Message()))
        observer.on_completed()
    return observer.on_next, on_error, observer.on_completed


@dataclass
class _Retry:
    request: Callable[[], Observable[Any]] | None
    max_attempts: int
    after_output: bool
    backoff: Callable[[int], float]
    max_delay: float
    sleep: Callable[[float], Awaitable[Any]]
    retry_on: Callable[[Exception], bool]

    def delay(self, attempt: int, error: Exception) -> float | None:
        """Seconds before the next attempt, or ``None`` to give up."""
        delay = self.backoff(attempt)
        after = getattr(error, "retry_after", None)
        if after is not None:
            if after > self.max_delay:
                return None
            delay = max(delay, float(after))
        return delay

    def operator(self, source: Observable[Any]) -> Observable[Any]:
        def subscribe(observer: abc.ObserverBase[Any],
                      scheduler: abc.SchedulerBase | None = None) -> abc.DisposableBase:
            inner, timer = SerialDisposable(), SerialDisposable()
            attempt, emitted, started = 1, 0, 0

            def start(observable: Observable[Any]) -> None:
                nonlocal emitted, started
                emitted, started = 0, started + 1
                mine = started
                subscription = observable.subscribe(on_next, on_err, observer.on_completed,
                                                    scheduler=scheduler)
                if mine == started:  # a synchronous failure may already have started the next
                    inner.disposable = subscription

            def on_next(value: Any) -> None:
                nonlocal emitted
                emitted += 1
                observer.on_next(value)

            def on_err(error: Exception) -> None:
                nonlocal attempt
                delay = None
                if (attempt < self.max_attempts and self.retry_on(error)
                        and (self.after_output or not emitted)):
                    delay = self.delay(attempt, error)
                if delay is None:
                    observer.on_error(error)
                    return
                attempt += 1
                if emitted:
                    observer.on_next(StreamRestart(error, attempt, emitted, delay))
                timer.disposable = self._later(delay, lambda: start(
                    self.request() if self.request is not None else source))

            start(source)
            return CompositeDisposable(inner, timer)

        return Observable(subscribe)

    def _later(self, delay: float, action: Callable[[], None]) -> abc.DisposableBase:
        owner = current_scope()
        if owner is None:  # synchronous use: block this thread, like the source does
            if delay > 0:
                time.sleep(delay)
            action()
            return Disposable()

        async def wait(_: anyio.CancelScope) -> None:
            await self.sleep(delay)
            action()
        return owner.spawn(wait, "streamflow-retry-timer")
