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

from .decoder import StreamDecoder, lending
from .errors import CancelledStreamError, StreamflowError
from .events import UniEvent
from .limits import Limits
from .message import Assembler, Message
from .operators import Handlers, Operator, stateful
from .operators.pipeline import DecodedObservable, subscribe_decoder
from .outcome import StreamFailure, StreamRestart
from .sinks.base import AsyncSink, AsyncSinkFeeder, SinkError
from .sources.bridge import scope
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


class _Callable:
    """A plain callable used as a sink: ``on_next`` only."""

    def __init__(self, fn: Any) -> None:
        self.on_next = fn
        self.sink = fn

    def on_error(self, error: Exception) -> None:
        """Ignored."""

    def on_completed(self) -> None:
        """Ignored."""


class _FanOut(abc.ObserverBase[Any]):
    """The one observer of the upstream: assembles the message and feeds every sink."""

    def __init__(self, sinks: tuple[Any, ...]) -> None:
        self.assembler = Assembler()
        self.decoder: StreamDecoder | None = None  # lent by the pipeline run() subscribes
        self.feeders: list[AsyncSinkFeeder] = []
        self.targets: list[Any] = []
        for sink in sinks:
            if isinstance(sink, AsyncSink):
                feeder = AsyncSinkFeeder(sink)
                self.feeders.append(feeder)
                self.targets.append(feeder)
            elif hasattr(sink, "on_next"):
                self.targets.append(sink)
            elif callable(sink):
                self.targets.append(_Callable(sink))
            else:
                raise TypeError(f"not a sink: {sink!r}")
        self.failures: list[tuple[Any, BaseException]] = []
        self.error: Exception | None = None
        self.converted: StreamFailure | None = None
        self.finished = False
        self.seen = False  # a UniEvent of the current attempt went by
        self.foreign: str | None = None  # the type of the first item that is no UniEvent
        self.done: anyio.Event | None = None
        self.front = False  # the decoder is run()'s front's own (it emits straight here)

    def _detach(self, target: Any, exc: BaseException) -> None:
        self.targets = [t for t in self.targets if t is not target]
        if isinstance(target, AsyncSinkFeeder):
            target.detach(exc)
        else:
            self.failures.append((getattr(target, "sink", target), exc))

    def on_next(self, value: Any) -> None:
        if self.finished:
            return
        if type(value) is UniEvent:
            self.seen = True
            if self.decoder is None:  # else the decoder's emitter already assembles
                self.assembler.feed(value)
        elif isinstance(value, StreamRestart):
            self.assembler = Assembler()
            self.decoder = None  # the restarted stream is assembled here (or lent again)
            self.seen = False
        elif isinstance(value, StreamFailure):
            self.converted = value
        elif self.foreign is None:  # a Block of group_by_block()...: sinks may want it
            self.foreign = type(value).__name__
        for target in self.targets:
            try:
                target.on_next(value)
            except Exception as exc:
                self._detach(target, exc)

    def _end(self, method: str, *args: Any) -> None:
        self.finished = True
        for target in self.targets:
            try:
                getattr(target, method)(*args)
            except Exception as exc:
                if not (args and exc is args[0]):  # re-raising the error it got: not a failure
                    self._detach(target, exc)
        if self.done is not None:
            self.done.set()

    def on_error(self, error: Exception) -> None:
        if self.finished:
            return
        if isinstance(error, StreamflowError):
            error.with_partial(self.message)
        self.error = error
        self._end("on_error", error)

    def on_completed(self) -> None:
        if not self.finished:
            self._end("on_completed")

    @property
    def message(self) -> Message:
        """The message so far: the lent decoder's, else assembled here."""
        return self.decoder.partial if self.decoder is not None else self.assembler.message

    def adopt(self, decoder: StreamDecoder) -> None:
        """Use the lent decoder's own assembled state (one assembly per stream, not two).

        Only before the first event of an attempt: a retry re-subscribes the pipeline,
        which lends its new decoder; a pipeline some sink runs once events flow (a task
        that inherited run's context) is not this stream's and is ignored. So is any
        decoder upstream of the front's own (:meth:`adopt_front`).
        """
        if not self.seen and not self.front:
            self.decoder = decoder

    def adopt_front(self, decoder: StreamDecoder) -> None:
        """The decoder of run()'s front (a byte source, or the ``pipeline()`` run was
        given): this stream's for sure, so it emits here directly (this observer
        ignores what comes after its end, as the hop it skips would)."""
        self.front = True
        self.decoder = decoder
        decoder.emit = self.on_next

    def result(self) -> Message:
        """The message, or the error the module doc describes."""
        for feeder in self.feeders:
            if feeder.failure is not None:
                self.failures.append((feeder.sink, feeder.failure))
        message = self.message
        error = self.error or (self.converted.error if self.converted else None)
        if error is None and not message.complete and self.foreign and not message.items:
            raise _not_an_event(self.foreign)
        if error is None and not message.complete:
            error = CancelledStreamError("the stream completed before its stop event "
                                         "(an operator such as take() ended it)", partial=message)
        if error is not None:
            if self.failures:
                error.sink_errors = list(self.failures)  # type: ignore[attr-defined]
            raise error
        if self.failures:
            raise SinkError(self.failures, partial=message)
        return message


def _not_an_event(name: str) -> TypeError:
    """The error for a stream of items run() cannot assemble (Blocks, strings...)."""
    hint = (": run() assembles the message from UniEvents -- pass the UniEvent stream and "
            "apply group_by_block() inside a sink (see examples/per_block_ui.py)"
            if name == "Block" else "")
    return TypeError(f"run() takes a source of bytes or UniEvents; it got {name} items "
                     f"and no UniEvent{hint}")


def _front(source: Any, dialect: str, framing: str | None, limits: Limits | None,
           options: dict[str, Any], fan: _FanOut) -> Observable[Any]:
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
    fan = _FanOut(sinks)
    fan.done = anyio.Event()
    async with scope(limits) as owner:
        for feeder in fan.feeders:
            owner.pressure.append(feeder)
            owner.task_group.start_soon(feeder.consume,
                                        name=f"streamflow-sink:{type(feeder.sink).__name__}")
        with lending(fan.adopt):
            subscription = _front(source, dialect, framing, limits, options, fan).subscribe(fan)
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
    fan = _FanOut(sinks)
    with lending(fan.adopt):
        _front(source, dialect, framing, limits, options, fan).subscribe(fan)
    if not fan.finished:
        raise RuntimeError("the source did not finish synchronously: use `await run(...)`")
    return fan.result()
