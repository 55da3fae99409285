"""``run()``: one upstream, several sinks, one assembled message.

::

    message = await streamflow.run(from_httpx(client, request), ui, log, tools)

``run`` subscribes to ``source`` exactly once -- one HTTP request, however many
sinks -- and fans every item out to the sinks in the order given (a multicast like
``publish()`` + ``connect()``, with a failure rule per sink). ``source`` is an
observable of body chunks (``bytes``: decoded with ``pipeline(dialect, framing,
limits)``; the framing hint of a ``from_file`` source is used) or of UniEvents (a
pipeline you composed yourself). Sinks are :class:`~streamflow.reactive.sinks.Sink`
observers, plain callables (``on_next`` only) or :class:`~streamflow.reactive.sinks.AsyncSink`
(each fed by a bounded buffer and a consumer task, see :mod:`streamflow.reactive.sinks.base`).

Outcome:

* the stop event arrived -> the final :class:`~streamflow.Message` is returned;
* the stream failed -> that typed error is raised with ``partial`` (the message so
  far); with ``on_error("convert")`` the sinks get the ``StreamFailure`` item and
  completion, and ``run`` still raises the error;
* the stream completed without a stop event (``take(n)`` in your pipeline) ->
  ``CancelledStreamError`` with the partial message;
* a sink raised -> it is detached, the others and the stream go on, and ``run``
  raises :class:`~streamflow.reactive.sinks.SinkError` at the end (the stream's own error
  wins when there is one; it then lists the sink failures in ``sink_errors``);
* ``run`` itself is cancelled (a timeout around it, Ctrl-C) -> the subscription is
  disposed, which cancels the reader task and closes the HTTP response; sync sinks
  get ``on_error(CancelledStreamError)``; the cancellation propagates.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, cast

import anyio
from reactivex import Observable, abc

from ..core.errors import CancelledStreamError
from ..core.limits import Limits
from ..core.message import Message
from ..reactive._fanout import FanOut
from ..reactive._scope import Scope, scope
from ..reactive.operators import Handlers
from ..reactive.operators._base import guarded, subscriber
from ..reactive.operators.from_async import from_async
from ..reactive.operators.pipeline import DecodedObservable, decoder_handlers
from ..reactive.sinks.base import AsyncSink
from ..reactive.sources._coerce import as_source
from ..reactive.types import SinkLike, SourceLike
from ..wire.decoder import Emit, StreamDecoder
from ..wire.redaction import sending_to, source_secrets

__all__ = ["Run", "run", "run_sync"]


class Run:
    """One run of ``source`` into ``sinks``: THE object ``run``, ``run_sync``, ``stream``,
    ``stream_sync`` and ``Agent`` drive.

    It owns the fan-out (:attr:`fan`), starts the AsyncSinks' feeders in the scope it
    is given, builds the decoder of a byte source itself -- emitting straight to the
    fan-out, which reads the message that decoder assembles (one assembly, no hop) --
    and turns the stream's end into the outcome (the module doc's rules).
    ``pipeline()`` handed as ``source`` is unwrapped: its bytes are decoded here.
    """

    def __init__(self, source: Any, sinks: tuple[Any, ...] = (), *, dialect: str = "auto",
                 framing: str | None = None, limits: Limits | None = None,
                 options: dict[str, Any] | None = None, caller: str = "run()",
                 transforms: Sequence[Any] = ()) -> None:
        self.source: Observable[Any] = as_source(source, caller=caller)
        # a failover chain's source may drop groups it gave: sinks that cannot take that
        # back get it through a Holdback (reactive._fanout)
        self.fan = FanOut(sinks, continuing=bool(getattr(self.source, "continues", False)))
        known = source_secrets(None)  # the enclosing with_secrets blocks' (an Agent's turn)
        #: the credential values the run's sources reported sending (report_sent)
        self.sent: set[str] = set()
        self.fan.secrets = lambda: source_secrets(self.source) | known | frozenset(self.sent)
        self.transforms = [as_operator(t) for t in transforms]
        self._decoder: StreamDecoder | None = None
        self.dialect, self.framing, self.limits = dialect, framing, limits
        self.options = options or {}
        self.subscription: abc.DisposableBase | None = None
        self.outcome: Message | BaseException | None = None

    @property
    def decoder(self) -> StreamDecoder | None:
        """The decoder of a byte source, once built (``None`` for a stream of UniEvents)."""
        return self._decoder

    def make_decoder(self, dialect: str, framing: str | None, limits: Limits | None,
                     options: dict[str, Any], emit: Emit | None = None) -> StreamDecoder:
        """The run's decoder, emitting to ``emit`` (default: the fan-out), its message the
        run's -- unless ``transforms`` stand between it and the fan-out, which then
        assembles what they pass on."""
        decoder = StreamDecoder(dialect, framing=framing, limits=limits,
                                emit=emit or self.fan.on_next, **options)
        self._decoder = decoder
        if not self.transforms:
            self.fan.decoder = decoder
        return decoder

    def _front(self) -> Observable[Any]:
        """``source`` with its bytes decoded (anything else passes to the fan-out as is)."""
        source, dialect, framing = self.source, self.dialect, self.framing
        limits, options = self.limits, self.options
        always = isinstance(source, DecodedObservable)
        if isinstance(source, DecodedObservable):  # a pipeline(): decode its bytes here
            piped = source
            source, dialect, framing = piped.upstream, piped.dialect, piped.framing
            limits, options = piped.limits, piped.options
        else:
            framing = framing or getattr(source, "framing", None)
            if dialect == "auto":  # a source that knows its dialect (from_redis: uni) says so
                dialect = getattr(source, "dialect", None) or dialect

        def setup(observer: abc.ObserverBase[Any]) -> Handlers:
            handlers: Handlers | None = None
            decided = False

            def make() -> Handlers:
                emit = observer.on_next if self.transforms else None  # else straight to the fan
                return decoder_handlers(self.make_decoder(dialect, framing, limits, options,
                                                          emit), observer)

            def on_next(item: Any) -> None:
                nonlocal handlers, decided
                if not decided:
                    decided = True
                    if always or isinstance(item, (bytes, bytearray, memoryview)):
                        handlers = make()
                if handlers is None:
                    observer.on_next(item)
                else:
                    handlers[0](item if type(item) is bytes else bytes(item))

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

        front: Observable[Any] = Observable(subscriber(source, setup))
        return front.pipe(*self.transforms) if self.transforms else front

    @property
    def events(self) -> bool:
        """Whether the source gives UniEvents, not bytes (a failover chain's)."""
        return bool(getattr(self.source, "gives_events", False))

    def driven(self) -> abc.ObserverBase[Any]:
        """The run fed from its caller's own task: a pull loop that pushes (the gateway
        reads a chunk, feeds it here, writes what its sinks made of it, then reads the
        next). The observer a byte source's subscription pushes to -- ``on_next(chunk)``,
        ``on_error``, ``on_completed``, behind the same stop flag -- wired to the run's
        decoder and fan-out exactly as :meth:`start` wires them; for a source of
        UniEvents (:attr:`events`: the gateway's failover relay) the fan-out itself, the
        caller decoding. The outcome is :meth:`settle`. Sync sinks only (an AsyncSink's
        feeder needs a scope: ``TypeError``)."""
        if self.fan.feeders:
            raise TypeError("a driven run takes sync sinks only (an AsyncSink needs run())")
        fan = cast(abc.ObserverBase[Any], self.fan)
        if self.events:  # the caller decodes (a failover chain's relay emits UniEvents)
            return cast(abc.ObserverBase[Any], guarded((fan.on_next, fan.on_error,
                                                        fan.on_completed)))
        decoder = self.make_decoder(self.dialect, self.framing, self.limits, self.options)
        return cast(abc.ObserverBase[bytes], guarded(decoder_handlers(decoder, fan)))

    # -- lifecycle -----------------------------------------------------------
    def start(self, owner: Scope | None) -> None:
        """Start the AsyncSinks' feeders in ``owner`` (``None``: sync), then subscribe once."""
        if owner is not None:
            self.fan.done = anyio.Event()
            for feeder in self.fan.feeders:
                owner.pressure.append(feeder)
                owner.task_group.start_soon(feeder.consume,
                                            name=f"streamflow-sink:{type(feeder.sink).__name__}")
        with sending_to(self.sent):  # the tasks the subscription starts report to it too
            if self.events and not self.transforms:
                # a failover chain's source: its splice emits straight to the fan-out and
                # assembles the message (as a run's own decoder does), no hop between
                self.subscription = self.source.subscribe_guarded(  # type: ignore[attr-defined]
                    self.fan)
                self.fan.decoder = getattr(self.source, "continuation", None)
            else:
                self.subscription = self._front().subscribe(cast(abc.ObserverBase[Any],
                                                                 self.fan))

    def cancel(self, why: str) -> None:
        """Stop now: dispose the subscription (closing the body), sinks told ``why``."""
        if self.subscription is not None:
            self.subscription.dispose()
        if not self.fan.finished:
            self.fan.on_error(CancelledStreamError(why))
        for feeder in self.fan.feeders:
            feeder.detach(CancelledStreamError(why))

    async def finish(self) -> Message | BaseException:
        """After the terminal event: let the AsyncSinks finish; the outcome (kept)."""
        if self.outcome is None:
            if self.subscription is not None:  # ended early (an error...): close now
                self.subscription.dispose()
            for feeder in self.fan.feeders:
                await feeder.finish()
            self.outcome = self.settle()
        return self.outcome

    def settle(self) -> Message | BaseException:
        """The final message, or the error the stream ends with (returned, not raised)."""
        try:
            return self.fan.result()
        except Exception as error:
            return error

    async def complete(self) -> Message:
        """``run()``: open a scope, read the stream to its end, the message or the error."""
        async with scope(self.limits) as owner:
            self.start(owner)
            assert self.fan.done is not None
            try:
                await self.fan.done.wait()
            except BaseException:
                self.cancel("run() was cancelled")
                raise
            outcome = await self.finish()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def as_operator(transform: Any) -> Any:
    """A transform given to ``run``/``stream``: an async generator function over UniEvents
    (:func:`~streamflow.reactive.operators.from_async`) or a pipeable operator, as an operator."""
    if inspect.isasyncgenfunction(transform):
        return from_async(transform)
    if not callable(transform):
        raise TypeError(f"a transform is an operator or an async generator function, "
                        f"not {transform!r}")
    return transform


async def run(source: SourceLike, *sinks: SinkLike, dialect: str = "auto",
              framing: str | None = None, limits: Limits | None = None,
              transforms: Sequence[Any] = (), **options: Any) -> Message:
    """Subscribe once to ``source``, feed every sink, return the assembled message.

    Args:
        source: what to read -- a streamflow source (``from_httpx(client, request)``,
            ``from_bytes``, ``ReplaySource``...), a pipeline of UniEvents you composed,
            ``bytes``, an (async) iterable of ``bytes``, or an ``httpx.Response``
            opened with ``stream=True``. Anything else is a ``TypeError``.
        *sinks: observers (``on_next``/``on_error``/``on_completed``), plain callables
            (``on_next`` only) or :class:`~streamflow.reactive.sinks.AsyncSink` instances, fed
            every item in this order.
        dialect: the dialect of a byte source; ``"auto"`` detects it.
        framing: override the dialect's framing (``"ndjson"`` for ``.jsonl``).
        limits: :class:`~streamflow.Limits` for the decoder and the read timeouts.
        transforms: operators applied to the UniEvents before the sinks, in order:
            pipeable operators or async generator functions over UniEvents
            (:func:`~streamflow.reactive.operators.from_async`); the message is assembled from
            what they pass on.
        **options: passed to the dialect decoder.

    Returns the final :class:`~streamflow.Message`; raises the stream's typed error
    (``.partial`` attached), ``SinkError`` when a sink raised, or ``CancelledStreamError``
    when the stream ended before its stop event (see the module doc).
    """
    return await Run(source, sinks, dialect=dialect, framing=framing, limits=limits,
                     options=options, transforms=transforms).complete()


def run_sync(source: SourceLike, *sinks: SinkLike, dialect: str = "auto",
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
    job = Run(source, sinks, dialect=dialect, framing=framing, limits=limits, options=options)
    job.start(None)
    if not job.fan.finished:
        raise RuntimeError("the source did not finish synchronously: use `await run(...)`")
    outcome = job.settle()
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome
