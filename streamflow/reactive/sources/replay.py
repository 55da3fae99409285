"""Play a recorded body back: at its original pace, scaled, or as fast as possible.

Two inputs are understood:

* a streamflow recording (see :mod:`streamflow.reactive.sinks.recorder`): its chunks with
  their recorded arrival times;
* a plain raw body (``.sse``, ``.jsonl``, ``.bin``, anything else): cut into the
  pieces a server would plausibly have sent -- one SSE event (up to its blank
  line) for text bodies, one line for ``.jsonl``, one AWS event-stream message for
  binary bodies that parse as such (else 1 KiB pieces) -- ``interval`` seconds apart.

A path may also name a recording bundled with the package
(``ReplaySource("anthropic-turn1.sse")``), as the commands take it: a file of that
name in the current folder wins (:func:`streamflow.demo.resolve_recording`).

``speed=1.0`` keeps the recorded gaps, ``speed=2.0`` halves them, ``speed=None``
(or ``0``) sends everything at once, still yielding to the event loop between
chunks. Timing follows an absolute schedule (chunk ``i`` is due ``t_i / speed``
after the start), so sleep overshoot does not accumulate.

Recorded times are not trusted: a time that goes backwards counts as no pause, a
time that is not a finite number is a ``ValueError`` (raised when the timeline is
loaded or the replay starts), and a pause longer than ``max_pause`` -- by default
the idle limit in effect (600 s unless the source or ``run()`` set one) -- ends the
replay with :class:`~streamflow.core.errors.StreamTimeoutError` at that point, as the live
stream would have, instead of sleeping (``"t": 1e308`` never hangs).

* :class:`ReplaySource` -- a :class:`~streamflow.reactive._source.Source` for
  :func:`streamflow.run` and reactivex (asyncio and trio; outside a scope, as in
  ``run_sync``, it pushes in the subscribing thread, blocking between chunks);
* :func:`replay_async` -- the same as an async iterator of chunks;
* :func:`replay_sync` -- a plain iterator for sans-IO use (``StreamDecoder.feed``).

``sleep`` and ``clock`` are injectable, so tests check the schedule without waiting.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from reactivex import abc

from ...core.errors import StreamTimeoutError
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.recording import Recording, is_recording, read_recording
from ...wire.recordings import resolve_recording
from .._scope import current_scope
from .._source import Source
from .file import framing_for_path
from .iterables import from_iterable

__all__ = [
    "ReplaySource",
    "Timeline",
    "load_timeline",
    "replay_async",
    "replay_sync",
    "schedule",
    "split_body",
]

Timeline = list[tuple[float, bytes]]
PathLike = str | os.PathLike[str]
DEFAULT_INTERVAL = 0.02
MAX_PAUSE = DEFAULT_LIMITS.idle_timeout
_PIECE = 1024


def split_body(body: bytes, kind: str = "sse") -> list[bytes]:
    """Cut a raw body into plausible wire chunks (``kind``: ``sse``, ``jsonl``, ``bin``)."""
    if kind == "jsonl":
        return body.splitlines(keepends=True)
    if kind == "bin":
        return _split_eventstream(body) or _split_fixed(body)
    out: list[bytes] = []
    start = current = 0
    pos = body.find(b"\n")
    while pos >= 0:
        line_start, start = start, pos + 1
        if body[line_start:start].strip() == b"" and line_start > current:
            out.append(body[current:start])  # an event and the blank line that ends it
            current = start
        pos = body.find(b"\n", start)
    if current < len(body):
        out.append(body[current:])
    return out


def _split_fixed(body: bytes) -> list[bytes]:
    return [body[i:i + _PIECE] for i in range(0, len(body), _PIECE)]


def _split_eventstream(body: bytes) -> list[bytes] | None:
    """AWS event-stream messages (4-byte big-endian total length first), or None."""
    out: list[bytes] = []
    pos = 0
    while pos < len(body):
        if len(body) - pos < 16:
            return None
        size = int.from_bytes(body[pos:pos + 4], "big")
        if size < 16 or pos + size > len(body):
            return None
        out.append(body[pos:pos + size])
        pos += size
    return out


def _kind_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".bin", ".eventstream"):
        return "bin"
    return "sse"


def load_timeline(source: PathLike | Recording | bytes, *,
                  interval: float = DEFAULT_INTERVAL, kind: str = "sse") -> Timeline:
    """``(t, chunk)`` pairs of a recording, a raw body file, or raw body bytes."""
    if isinstance(source, Recording):
        return list(source.chunks)
    if isinstance(source, (bytes, bytearray)):
        pieces = split_body(bytes(source), kind)
    else:
        path = resolve_recording(source)
        if is_recording(path):
            return list(read_recording(path).chunks)
        pieces = split_body(path.read_bytes(), _kind_of(path))
    return [(i * interval, piece) for i, piece in enumerate(pieces)]


def _check_speed(speed: float | None) -> None:
    if speed is not None and not (speed >= 0 and not math.isnan(speed)):
        raise ValueError(f"replay speed must be a number >= 0, not {speed!r}")


def schedule(timeline: Timeline, speed: float | None = 1.0,
             max_pause: float | None = MAX_PAUSE) -> list[float | StreamTimeoutError]:
    """When each chunk is due, in seconds after the start (``speed`` applied).

    A backwards time is no pause; a non-finite time is a ``ValueError``. The entry
    of a chunk after a pause longer than ``max_pause`` is the
    :class:`StreamTimeoutError` to raise there instead (the rest is cut off).
    """
    _check_speed(speed)
    out: list[float | StreamTimeoutError] = []
    last = due = 0.0
    for index, (t, _) in enumerate(timeline):
        if not math.isfinite(t):
            raise ValueError(f"chunk {index}: recorded time {t!r} is not a finite number")
        gap = max(0.0, t - last) / speed if speed else 0.0
        last = max(last, t)
        if max_pause is not None and gap > max_pause:
            error = StreamTimeoutError("idle", max_pause)
            error.message += (f": the recording pauses {gap:g}s before chunk {index} "
                              f"(speed {speed:g})")
            error.args = (error.message,)
            out.append(error)
            break
        due += gap
        out.append(due)
    return out


async def replay_async(timeline: Timeline, *, speed: float | None = 1.0,
                       sleep: Callable[[float], Awaitable[Any]] | None = None,
                       clock: Callable[[], float] | None = None,
                       max_pause: float | None = MAX_PAUSE) -> AsyncIterator[bytes]:
    """Yield the chunks of ``timeline`` on schedule (see the module doc and :func:`schedule`)."""
    sleep = sleep or anyio.sleep
    clock = clock or anyio.current_time
    dues = schedule(timeline, speed, max_pause)
    start = clock()
    for due, (_, chunk) in zip(dues, timeline, strict=False):
        if isinstance(due, StreamTimeoutError):
            raise due
        wait = start + due - clock() if speed else 0.0
        if wait > 0:
            await sleep(wait)
        else:
            await anyio.lowlevel.checkpoint()
        yield chunk


def replay_sync(source: PathLike | Recording | Timeline, *, speed: float | None = None,
                sleep: Callable[[float], Any] = time.sleep,
                clock: Callable[[], float] = time.monotonic,
                interval: float = DEFAULT_INTERVAL,
                max_pause: float | None = MAX_PAUSE) -> Iterator[bytes]:
    """The chunks of a recording or raw body, blocking between them when ``speed`` is set."""
    timeline = source if isinstance(source, list) else load_timeline(source, interval=interval)
    dues = schedule(timeline, speed, max_pause)
    start = clock()
    for due, (_, chunk) in zip(dues, timeline, strict=False):
        if isinstance(due, StreamTimeoutError):
            raise due
        if speed:
            wait = start + due - clock()
            if wait > 0:
                sleep(wait)
        yield chunk


class ReplaySource(Source):
    """A cold source replaying a recording or raw body file (see the module doc).

    ``dialect`` and ``framing`` come from a recording's header, or from the file
    name for raw bodies (:func:`~streamflow.reactive.sources.file.framing_for_path`); pass them
    to override.
    Every subscription replays from the start.
    """

    def __init__(self, source: PathLike | Recording, *, speed: float | None = 1.0,
                 interval: float = DEFAULT_INTERVAL, dialect: str | None = None,
                 framing: str | None = None, limits: Limits | None = None,
                 sleep: Callable[[float], Awaitable[Any]] | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__(limits)
        _check_speed(speed)
        self.speed = speed
        self._sleep = sleep
        self._clock = clock
        recording = source if isinstance(source, Recording) else resolve_recording(source)
        if not isinstance(recording, Recording) and is_recording(recording):
            recording = read_recording(recording)
        if isinstance(recording, Recording):
            self.recording: Recording | None = recording
            self.timeline = list(recording.chunks)
            self.dialect = dialect or recording.dialect
            self.framing = framing or recording.framing
        else:
            path = Path(recording)
            self.recording = None
            self.timeline = load_timeline(path, interval=interval)
            self.dialect = dialect
            self.framing = framing or framing_for_path(path)
        schedule(self.timeline, speed, None)  # a non-finite time fails here, not mid-replay

    def _max_pause(self) -> float | None:
        owner = current_scope()
        limits = self.limits or (owner.limits if owner is not None else None) or DEFAULT_LIMITS
        return limits.idle_timeout

    @property
    def body(self) -> bytes:
        """The whole body replayed."""
        return b"".join(chunk for _, chunk in self.timeline)

    def subscribe_sync(self, observer: abc.ObserverBase[bytes]) -> abc.DisposableBase:
        """Outside a scope: push in this thread, blocking between chunks when ``speed`` is set."""
        chunks = from_iterable(lambda: replay_sync(self.timeline, speed=self.speed,
                                                   max_pause=self._max_pause()))
        return chunks.subscribe_sync(observer)

    def open(self) -> Any:
        """An async context manager yielding the scheduled chunks."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        chunks = replay_async(self.timeline, speed=self.speed, sleep=self._sleep,
                              clock=self._clock, max_pause=self._max_pause())
        try:
            yield chunks
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]
