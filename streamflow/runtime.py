"""``run()``: one upstream, several sinks, one assembled message.

::

    message = await streamflow.run(from_httpx(client, request), ui, log, tools)

``run`` subscribes to ``source`` exactly once -- one HTTP request, however many
sinks -- and fans every item out to the sinks in the order given (a multicast like
``publish()`` + ``connect()``, with a failure rule per sink). ``source`` is an
observable of body chunks (``bytes``: decoded with ``pipeline(dialect, framing,
limits)``; the framing hint of a ``from_file`` source is used) or of UniEvents (a
pipeline you composed yourself). Sinks are :class:`~streamflow.sinks.Sink`
observers, plain callables (``on_next`` only) or :class:`~streamflow.sinks.AsyncSink`
(each fed by a bounded buffer and a consumer task, see :mod:`streamflow.sinks.base`).

Outcome:

* the stop event arrived -> the final :class:`~streamflow.Message` is returned;
* the stream failed -> that typed error is raised with ``partial`` (the message so
  far); with ``on_error("convert")`` the sinks get the ``StreamFailure`` item and
  completion, and ``run`` still raises the error;
* the stream completed without a stop event (``take(n)`` in your pipeline) ->
  ``CancelledStreamError`` with the partial message;
* a sink raised -> it is detached, the others and the stream go on, and ``run``
  raises :class:`~streamflow.sinks.SinkError` at the end (the stream's own error
  wins when there is one; it then lists the sink failures in ``sink_errors``);
* ``run`` itself is cancelled (a timeout around it, Ctrl-C) -> the subscription is
  disposed, which cancels the reader task and closes the HTTP response; sync sinks
  get ``on_error(CancelledStreamError)``; the cancellation propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from reactivex import Observable, abc

from ._scope import scope
from .decoder import StreamDecoder
from .errors import CancelledStreamError
from .fanout import FanOut
from .limits import Limits
from .message import Message
from .operators import Handlers, Operator, stateful
from .operators.pipeline import DecodedObservable, subscribe_decoder
from .sinks.base import AsyncSink
from .sources.coerce import as_source

__all__ = ["as_events", "run", "run_sync"]


def as_events(dialect: str = "auto", framing: str | None = None, limits: Limits | None = None,
              *, lend_to: Callable[[StreamDecoder], None] | None = None,
              **options: Any) -> Operator[Any, Any]:
    """Decode ``bytes`` items like ``pipeline()``; pass anything else through (run's front).

    ``lend_to`` is handed the decoder of a byte stream (``run()`` reads its message).
    """

    def setup(observer: abc.ObserverBase[Any]) -> Handlers:
        handlers: Handlers | None = None
        decided = False

        def make() -> Handlers:
            return subscribe_decoder(observer, dialect, framing, limits, options,
                                     lend_to=lend_to)

        def on_next(item: Any) -> None:
            nonlocal handlers, decided
            if not decided:
                decided = True
                if isinstance(item, (bytes, bytearray, memoryview)):
                    handlers = make()
            if handlers is None:
                observer.on_next(item)
            else:
                handlers[0](bytes(item))

        def on_error(error: Exception) -> None:
            if handlers is None:
                observer.on_error(error)
            else:
                handlers[1](error)

        def on_completed() -> None:
            nonlocal handlers
            if not decided:  # an empty body: let the decoder say so
                handlers = make()
            if handlers is None:
                observer.on_completed()
            else:
                handlers[2]()

        return on_next, on_error, on_completed

    return stateful(setup)


def _front(source: Any, dialect: str, framing: str | None, limits: Limits | None,
           options: dict[str, Any], fan: FanOut) -> Observable[Any]:
    source = as_source(source)
    if isinstance(source, DecodedObservable):  # a pipeline(): its decoder emits to the fan
        return source.lent_to(fan.adopt_front)
    framing = framing or getattr(source, "framing", None)
    if dialect == "auto":  # a source that knows its dialect (from_redis: uni) says so
        dialect = getattr(source, "dialect", None) or dialect
    return source.pipe(as_events(dialect, framing, limits, lend_to=fan.adopt_front, **options))


async def run(source: Any, *sinks: Any, dialect: str = "auto",
              framing: str | None = None, limits: Limits | None = None,
              **options: Any) -> Message:
    """Subscribe once to ``source``, feed every sink, return the assembled message.

    Args:
        source: what to read -- a streamflow source (``from_httpx(client, request)``,
            ``from_bytes``, ``ReplaySource``...), a pipeline of UniEvents you composed,
            ``bytes``, an (async) iterable of ``bytes``, or an ``httpx.Response``
            opened with ``stream=True``. Anything else is a ``TypeError``.
        *sinks: observers (``on_next``/``on_error``/``on_completed``), plain callables
            (``on_next`` only) or :class:`~streamflow.sinks.AsyncSink` instances, fed
            every item in this order.
        dialect: the wire format of a byte source; ``"auto"`` detects it.
        framing: override the dialect's framing (``"ndjson"`` for ``.jsonl``).
        limits: :class:`~streamflow.Limits` for the decoder and the read timeouts.
        **options: passed to the dialect decoder.

    Returns the final :class:`~streamflow.Message`; raises the stream's typed error
    (``.partial`` attached), ``SinkError`` when a sink raised, or ``CancelledStreamError``
    when the stream ended before its stop event (see the module doc).
    """
    fan = FanOut(sinks)
    fan.done = anyio.Event()
    async with scope(limits) as owner:
        for feeder in fan.feeders:
            owner.pressure.append(feeder)
            owner.task_group.start_soon(feeder.consume,
                                        name=f"streamflow-sink:{type(feeder.sink).__name__}")
        subscription = fan.subscribe_to(_front(source, dialect, framing, limits, options, fan))
        try:
            await fan.done.wait()
        except BaseException:
            subscription.dispose()
            if not fan.finished:
                fan.on_error(CancelledStreamError("run() was cancelled"))
            for feeder in fan.feeders:
                feeder.detach(CancelledStreamError("run() was cancelled"))
            raise
        subscription.dispose()  # ended early (an error, a failed Block subscriber): close now
        for feeder in fan.feeders:
            await feeder.finish()
    return fan.result()


def run_sync(source: Any, *sinks: Any, dialect: str = "auto",
             framing: str | None = None, limits: Limits | None = None,
             **options: Any) -> Message:
    """:func:`run` without an event loop, for synchronous sources and sync sinks.

    Args:
        source: ``bytes``, an iterable of ``bytes``, ``from_bytes``/``from_file``/
            ``ReplaySource``, ``from_httpx`` with a sync ``httpx.Client``, or a
            synchronous pipeline of UniEvents; they push in this thread. An async
            source fails with ``NoScopeError`` (use ``await run(...)``).
        *sinks: sync sinks (an ``AsyncSink`` is a ``TypeError``).
        dialect, framing, limits, **options: as for :func:`run`.
    """
    if any(isinstance(s, AsyncSink) for s in sinks):
        raise TypeError("AsyncSink needs an event loop: use `await streamflow.run(...)`")
    fan = FanOut(sinks)
    fan.subscribe_to(_front(source, dialect, framing, limits, options, fan))
    if not fan.finished:
        raise RuntimeError("the source did not finish synchronously: use `await run(...)`")
    return fan.result()
