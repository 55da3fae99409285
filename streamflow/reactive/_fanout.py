"""``run()``'s fan-out: the one observer of the upstream, feeding every sink in order.

It assembles the message (or reads the one its run's decoder assembles: the
:class:`~streamflow.app.runtime.Run` sets :attr:`FanOut.decoder` when it builds the
decoder that emits here, or to a failover chain's continuation), detaches a sink that
raised, and turns the stream's end into ``run()``'s outcome (:meth:`FanOut.result`,
rules in :mod:`streamflow.app.runtime`).

A continuing stream (a failover chain's, ``continuing=True``) may drop groups it gave
(a continuation's :class:`~streamflow.core.outcome.StreamRestart`): a sink that takes
such drops says so (``takes_discards = True``: render, log, OTel, recorder, a lazy tool
dispatcher) and gets every event live; any other sink, and ``stream()``'s queue, gets
the stream through a :class:`~streamflow.core.continuation.Holdback`, which never gives
what will be dropped.

Compiled in the compiled build (every event of ``run()`` passes here): a plain class
registered as a reactivex observer, calling each sink's bound ``on_next`` it keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import FunctionType
from typing import Any

import anyio
from reactivex import abc

from ..core.continuation import Holdback
from ..core.errors import CancelledStreamError, StreamflowError
from ..core.events import UniEvent
from ..core.message import Assembler, Message
from ..core.outcome import StreamFailure, StreamRestart
from ..wire.redaction import scrub_error
from .sinks.base import AsyncSink, AsyncSinkFeeder, SinkError


def _no_secrets() -> Iterable[str]:
    return ()


class _Callable:
    """A plain callable used as a sink: ``on_next`` only."""

    def __init__(self, fn: Any) -> None:
        # an object with a Python __call__: its bound method, looked up once (not per call)
        self.on_next = fn.__call__ if isinstance(type(fn).__dict__.get("__call__"),
                                                 FunctionType) else fn
        self.sink = fn

    def on_error(self, error: Exception) -> None:
        """Ignored."""

    def on_completed(self) -> None:
        """Ignored."""


class FanOut:
    """The one observer of the upstream: assembles the message and feeds every sink."""

    def __init__(self, sinks: tuple[Any, ...], *, continuing: bool = False) -> None:
        self.assembler = Assembler()
        #: what assembles the message upstream, when something does (the run's own
        #: decoder emitting here, a failover chain's continuation): its ``partial`` is read
        self.decoder: Any = None
        self.continuing = continuing
        self.feeders: list[AsyncSinkFeeder] = []
        self.targets: list[Any] = []
        self.nexts: list[Callable[[Any], object]] = []  # each target's on_next, bound once
        for sink in sinks:
            if isinstance(sink, AsyncSink):
                feeder = AsyncSinkFeeder(sink)
                self.feeders.append(feeder)
                self.add(feeder)
            elif hasattr(sink, "on_next"):
                self.add(sink)
            elif callable(sink):
                self.add(_Callable(sink))
            else:
                raise TypeError(f"not a sink: {sink!r}")
        self.failures: list[tuple[Any, BaseException]] = []
        self.error: Exception | None = None
        self.converted: StreamFailure | None = None
        self.finished = False
        self.foreign: str | None = None  # the type of the first item that is no UniEvent
        self.done: anyio.Event | None = None
        #: the credential values the run's source sent (the Run sets it): a stream's
        #: error is scrubbed of them, and of anything shaped like one, before any sink
        #: sees it (:func:`streamflow.wire.redaction.scrub_error`)
        self.secrets: Callable[[], Iterable[str]] = _no_secrets

    def add(self, target: Any) -> None:
        """Feed ``target`` (an observer) too, after the others (through a
        :class:`~streamflow.core.continuation.Holdback` when the stream is continuing and
        the target does not take discards)."""
        inner = getattr(target, "sink", target)
        if self.continuing and not getattr(inner, "takes_discards", False):
            target = Holdback(target)
        self.targets.append(target)
        self.nexts.append(target.on_next)

    def _detach(self, target: Any, exc: BaseException) -> None:
        kept = [i for i, t in enumerate(self.targets) if t is not target]
        self.targets = [self.targets[i] for i in kept]
        self.nexts = [self.nexts[i] for i in kept]
        if isinstance(target, Holdback):
            target = target.target
        if isinstance(target, AsyncSinkFeeder):
            target.detach(exc)
        else:
            self.failures.append((getattr(target, "sink", target), exc))

    def on_next(self, value: Any) -> None:
        if self.finished:
            return
        if type(value) is UniEvent:
            if self.decoder is None:  # else the run's decoder already assembles it
                self.assembler.feed(value)
        elif isinstance(value, StreamRestart):
            scrub_error(value.error, self.secrets())  # what failed: a sink may write it
            if value.groups is None:
                self.assembler = Assembler()
                self.decoder = None  # the restarted stream is assembled here
            elif self.decoder is None:  # a continuation: what it drops, dropped here too
                self.assembler.drop(value.groups)
        elif isinstance(value, StreamFailure):
            scrub_error(value.error, self.secrets())
            self.converted = value
        elif self.foreign is None:  # a Block of group_by_block()...: sinks may want it
            self.foreign = type(value).__name__
        targets, nexts = self.targets, self.nexts  # a detach replaces both lists
        for i in range(len(nexts)):
            try:
                nexts[i](value)
            except Exception as exc:
                self._detach(targets[i], exc)

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
        scrub_error(error, self.secrets())
        if isinstance(error, StreamflowError):
            error.with_partial(self.message)
        self.error = error
        self._end("on_error", error)

    def on_completed(self) -> None:
        if not self.finished:
            self._end("on_completed")

    @property
    def message(self) -> Message:
        """The message so far: the run's decoder's, else assembled here."""
        return self.decoder.partial if self.decoder is not None else self.assembler.message

    def result(self) -> Message:
        """The message, or the error the module doc describes."""
        for feeder in self.feeders:
            if feeder.failure is not None:
                self.failures.append((feeder.sink, feeder.failure))
        message = self.message
        error = self.error or (self.converted.error if self.converted else None)
        if error is None and not message.complete and self.foreign and not message.items:
            raise not_an_event(self.foreign)
        if error is None and not message.complete:
            error = CancelledStreamError("the stream completed before its stop event "
                                         "(an operator such as take() ended it)", partial=message)
        if error is not None:
            if self.failures and isinstance(error, StreamflowError):
                error.sink_errors = list(self.failures)
            raise error
        if self.failures:
            raise SinkError(self.failures, partial=message)
        return message


abc.ObserverBase.register(FanOut)  # an observer to reactivex (a compiled class has no ABC base)


def not_an_event(name: str) -> TypeError:
    """The error for a stream of items run() cannot assemble (Blocks, strings...)."""
    hint = (": run() assembles the message from UniEvents -- pass the UniEvent stream and "
            "apply group_by_block() inside a sink (see examples/per_block_ui.py)"
            if name == "Block" else "")
    return TypeError(f"run() takes a source of bytes or UniEvents; it got {name} items "
                     f"and no UniEvent{hint}")
