"""Record a stream: the raw body bytes with arrival times, and the UniEvents they made.

File format (``.sfrec.jsonl``; JSON Lines, ASCII, one object per line)::

    {"streamflow_recording": 1, "dialect": "anthropic", "framing": null,
     "created": "2025-01-31T12:00:00.123456+00:00", "meta": {...}}
    {"t": 0.000000, "chunk": "ZXZlbnQ6IG1lc3NhZ2Vfc3RhcnQK..."}
    {"t": 0.000412, "event": {"role": "assistant", "event_type": "delta", ...}}
    ...
    {"t": 1.532871, "end": "completed"}

* Line 1, the header: ``streamflow_recording`` is the format version (1);
  ``dialect`` and ``framing`` are the names given to the recorder (``null`` when
  auto-detected); ``created`` is the wall-clock start (ISO 8601, UTC); ``meta`` is
  free-form (request parameters, provider URL...), written with no credential in it
  (:func:`streamflow.wire.redaction.redact_value`: an ``authorization`` field, a ``?key=``
  in a URL masked), as is the end line's error.
* ``{"t", "chunk"}``: one body chunk exactly as it arrived, base64; ``t`` is seconds
  since the recorder started (monotonic clock, microsecond precision).
* ``{"t", "event"}``: one UniEvent in its JSON form (:meth:`UniEvent.to_dict`).
* ``{"t", "restart": n}``: attempt ``n`` (2, 3...) of the request starts over (a
  retry re-opened the source); readers drop the chunks and events before it.
  ``{"t", "restart": n, "groups": k, "discard": d, "endpoint": name}``: a failover
  chain continues the answer at attempt ``n`` (at ``endpoint``); readers drop only the
  last ``d`` events (the ``k`` groups it dropped) and keep the rest. Such a recording
  has no chunks (its source gives events).
* ``{"t", "end"}``: the last line, ``"completed"``, ``"cancelled"`` or ``"error"``;
  ``"error"`` adds ``"error": {"type", "message", ...}``, ``"cancelled"`` a
  ``"reason"``. A file without it was cut. ``"completed"`` means the stop event was
  seen (or, recording bytes only, the body was read to its end): a stream that
  ``take(n)`` or a dispose ended early is ``"cancelled"``, as ``run()`` reports it.

Readers ignore keys they do not know, and lines of other shapes, so later versions
can add line kinds. The chunks alone reproduce the stream (replay them through
:class:`~streamflow.reactive.sources.replay.ReplaySource`); the events are what the decoder
made of them when recorded, so a replay can be checked against them.

:class:`Recorder` is both halves: an event sink (``on_next``/``on_error``/
``on_completed``) and a byte tap (:meth:`Recorder.tap` wraps a source;
``tap_async``/``tap_sync`` wrap iterators; ``record_chunk`` by hand)::

    rec = Recorder("run.sfrec.jsonl", dialect="anthropic")
    await streamflow.run(rec.tap(source), rec, RenderSink())
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from typing import IO, Any

import anyio
import reactivex
from reactivex import Observable, abc
from reactivex import operators as ops

from ...core.errors import CancelledStreamError, StreamflowError
from ...core.events import JSONDict, UniEvent
from ...core.outcome import StreamRestart
from ...core.recording import FORMAT_VERSION, MAGIC, Recording, is_recording, read_recording
from ...wire.redaction import REDACTED, ChunkMasker, redact_text, redact_value, source_secrets
from .._source import ChunkStream, Source
from .base import BaseSink
from .stats import Clock

__all__ = ["FORMAT_VERSION", "Recorder", "Recording", "is_recording", "read_recording"]


class Recorder(BaseSink):
    """Writes a recording (format in the module doc) to a path or an open text file.

    The file is written as things happen and closed by ``on_completed``/``on_error``
    (the end line) or :meth:`close`; use it as a context manager when recording
    only bytes.
    """

    def __init__(self, target: str | os.PathLike[str] | IO[str], *, dialect: str | None = None,
                 framing: str | None = None, meta: JSONDict | None = None,
                 clock: Clock = time.monotonic) -> None:
        if isinstance(target, (str, os.PathLike)):
            self._file: IO[str] = open(target, "w", encoding="utf-8", newline="\n")
            self._owned = True
        else:
            self._file = target
            self._owned = False
        self.clock = clock
        self.started = clock()
        self.closed = False
        self.chunks = 0
        self.events = 0
        self.attempts = 0
        self.stopped = False  # the stop event was recorded
        self.cut = False      # the tapped body was abandoned before its end
        self._tapped = False
        #: the credential values the tapped source sent (read when its body starts)
        self._secrets: Callable[[], frozenset[str]] = frozenset
        self._masker: ChunkMasker | None = None
        self._known: list[tuple[str, str]] = []
        created = dt.datetime.now(dt.UTC).isoformat()
        self._write({MAGIC: FORMAT_VERSION, "dialect": dialect, "framing": framing,
                     "created": created, "meta": redact_value(meta or {})})

    # ----------------------------------------------------------------- writing

    def _write(self, obj: JSONDict) -> None:
        if self.closed:
            return
        # ASCII-only lines: a lone surrogate in provider text cannot break the file
        line = json.dumps(obj, separators=(",", ":"), default=str)
        for secret, mask in self._known:  # a key the provider quoted in its events
            line = line.replace(secret, mask)
        self._file.write(line + "\n")

    def _t(self) -> float:
        return round(self.clock() - self.started, 6)

    def record_chunk(self, chunk: bytes) -> None:
        """Record one body chunk, as it arrived (a credential the tapped source sent,
        quoted by the provider, masked: see :class:`~streamflow.wire.redaction.ChunkMasker`)."""
        self.chunks += 1
        if self._masker is None:  # the body starts: the request has been sent
            secrets = self._secrets()
            self._masker = ChunkMasker(secrets)
            self._known = [(json.dumps(s)[1:-1], REDACTED) for s in self._masker.values]
        for t, piece in self._masker.feed(self._t(), chunk):
            self._write_chunk(t, piece)

    def _write_chunk(self, t: float, chunk: bytes) -> None:
        self._write({"t": t, "chunk": base64.b64encode(chunk).decode("ascii")})

    def _flush_chunks(self) -> None:
        """Write the chunks the masker holds (the body ended or starts again)."""
        if self._masker is not None:
            for t, piece in self._masker.flush():
                self._write_chunk(t, piece)
            self._masker = None

    def begin_attempt(self) -> None:
        """A (re)subscription of the tapped source: from the second on, a restart line."""
        self._flush_chunks()
        self.attempts += 1
        if self.attempts > 1:
            self._write({"t": self._t(), "restart": self.attempts})

    def record_event(self, event: UniEvent) -> None:
        """Record one UniEvent."""
        self.events += 1
        if event.event_type == "stop":
            self.stopped = True
        self._write({"t": self._t(), "event": event.to_dict()})

    def close(self, error: BaseException | None = None, *, end: bool = True) -> None:
        """Write the end line (unless ``end=False``) and close the file (idempotent).

        Without ``error``, a stream whose events were recorded but not its stop event,
        or whose tapped body was abandoned, ends as ``"cancelled"``.
        """
        if self.closed:
            return
        self._flush_chunks()
        if error is None and (self.cut or (self.events and not self.stopped)):
            error = CancelledStreamError("the stream ended before its stop event (an operator "
                                         "such as take() or a dispose cut it)")
        if end:
            line: JSONDict = {"t": self._t()}
            if error is None:
                line["end"] = "completed"
            elif isinstance(error, CancelledStreamError):
                line["end"] = "cancelled"
                line["reason"] = redact_text(error.message)
            else:
                line["end"] = "error"
                line["error"] = redact_value(
                    error.to_dict() if isinstance(error, StreamflowError)
                    else {"type": type(error).__name__, "message": str(error)})
            self._write(line)
        self.closed = True
        if self._owned:
            self._file.close()
        else:
            self._file.flush()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self.close(exc)

    # -------------------------------------------------------------- event sink

    def on_event(self, event: UniEvent) -> None:
        """Record a UniEvent."""
        self.record_event(event)

    takes_discards = True

    def on_restart(self, notice: StreamRestart) -> None:
        """Write a restart line when no tap does it; a continuation's line also names the
        groups and items it dropped and the endpoint it went on at."""
        if not self._tapped or not notice.whole:
            self.attempts = notice.attempt
            line: dict[str, Any] = {"t": self._t(), "restart": notice.attempt}
            if not notice.whole:
                line.update(groups=notice.groups, discard=notice.discard,
                            endpoint=notice.endpoint)
            self._write(line)

    def on_error(self, error: Exception) -> None:
        """Write the end line with the error, close the file."""
        self.close(error)

    def on_completed(self) -> None:
        """Write the end line, close the file."""
        self.close()

    # ------------------------------------------------------------------- taps

    def tap(self, source: Observable[bytes]) -> Observable[bytes]:
        """``source`` with every chunk recorded as it passes (a :class:`Source` stays one).

        Every subscription after the first (a retry) writes a restart line first.
        """
        self._tapped = True
        known = source_secrets(None)  # the enclosing with_secrets blocks' (an Agent's turn)
        self._secrets = lambda: source_secrets(source) | known
        if isinstance(source, Source):
            return _TappedSource(source, self)

        def attempt(_: Any) -> Observable[bytes]:
            self.begin_attempt()
            return source

        return reactivex.defer(attempt).pipe(ops.do_action(on_next=self.record_chunk))

    async def tap_async(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        """Pass an async iterator of chunks through, recording each."""
        async for chunk in chunks:
            self.record_chunk(chunk)
            yield chunk

    def tap_sync(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """Pass an iterator of chunks through, recording each."""
        for chunk in chunks:
            self.record_chunk(chunk)
            yield chunk


class _TappedSource(Source):
    """A :class:`Source` whose chunks are recorded; everything else is the inner source's."""

    def __init__(self, inner: Source, recorder: Recorder) -> None:
        super().__init__(inner.limits)
        self.inner = inner
        self.recorder = recorder
        self.framing = inner.framing

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)  # dialect hints and the like

    def open(self) -> ChunkStream:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        """The inner body, recorded; a body abandoned before its end marks the recorder cut.

        A dispose from inside the stream (``take(n)``) exits normally with the body
        unfinished: the recording ends ``"cancelled"`` at once. A cancellation from
        outside may be the overall deadline, whose error the sinks are told next, so
        it only marks the recorder (a later :meth:`Recorder.close` says ``"cancelled"``).
        """
        recorder = self.recorder
        recorder.begin_attempt()
        finished = False

        async def tapped(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
            nonlocal finished
            async for chunk in chunks:
                recorder.record_chunk(chunk)
                yield chunk
            finished = True

        async with self.inner.open() as chunks:
            body = tapped(chunks)
            try:
                yield body
            except anyio.get_cancelled_exc_class():
                recorder.cut = True
                raise
            else:
                if not finished:
                    recorder.close(CancelledStreamError("the stream was disposed before its "
                                                        "end"))
            finally:
                await body.aclose()  # type: ignore[attr-defined]

    def subscribe_sync(self, observer: abc.ObserverBase[bytes]) -> abc.DisposableBase:
        self.recorder.begin_attempt()
        return self.inner.subscribe_sync(_RecordingObserver(observer, self.recorder))

    def map_error(self, exc: Exception) -> Exception:
        return self.inner.map_error(exc)


class _RecordingObserver(abc.ObserverBase[bytes]):
    """Forwards to ``observer``, recording each chunk first (sync subscriptions)."""

    def __init__(self, observer: abc.ObserverBase[bytes], recorder: Recorder) -> None:
        self.observer = observer
        self.recorder = recorder

    @property
    def is_stopped(self) -> bool:
        return bool(getattr(self.observer, "is_stopped", False))

    def on_next(self, value: bytes) -> None:
        self.recorder.record_chunk(value)
        self.observer.on_next(value)

    def on_error(self, error: Exception) -> None:
        self.observer.on_error(error)

    def on_completed(self) -> None:
        self.observer.on_completed()
