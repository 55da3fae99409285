"""The faults: small recipes whose ``start()`` gives a fresh push-based state per stream.

A state has ``feed(chunk) -> list[Chunk]``, ``close() -> list[Chunk]`` and ``ended``
(the body ends here: feed nothing more, then ``close``). Markers
(:class:`~streamflow.faults.chunks.Pause`, :class:`~streamflow.faults.chunks.Reset`)
pass through every fault unchanged and are not counted as chunks. The same states
drive the pure functions (:func:`apply`), the reactivex operator and the sources
and routes, so a fault gives the same bytes everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from .chunks import Chunk, EventSplitter, Pause, Reset, as_chunks

__all__ = [
    "ByEvent",
    "Chain",
    "Cut",
    "Drip",
    "Duplicate",
    "Fault",
    "FaultState",
    "Stall",
    "Swap",
    "apply",
    "iter_apply",
]


class FaultState(Protocol):
    """Per-stream state of a fault."""

    ended: bool

    def feed(self, chunk: Chunk) -> list[Chunk]:
        """Take the next chunk (or marker); return what goes on the wire instead."""
        ...

    def close(self) -> list[Chunk]:
        """End of the input: what is still held back."""
        ...


class Fault(Protocol):
    """A fault recipe; :meth:`start` is called once per stream (per subscription)."""

    def start(self) -> FaultState:
        """A fresh state."""
        ...


class _State:
    """Base of the fault states: markers pass, nothing after ``ended``."""

    ended = False

    def feed(self, chunk: Chunk) -> list[Chunk]:
        if self.ended:
            return []
        return [chunk] if not isinstance(chunk, bytes) else self.bytes_(chunk)

    def bytes_(self, chunk: bytes) -> list[Chunk]:
        return [chunk]

    def close(self) -> list[Chunk]:
        return [] if self.ended else self.rest()

    def rest(self) -> list[Chunk]:
        return []


@dataclass(frozen=True)
class Cut:
    """The body ends after ``after`` bytes (mid-event, mid-UTF-8 character: your choice).

    ``reset=False``: the server ends the body cleanly there (the client sees EOF);
    ``reset=True``: the connection drops there (a :class:`Reset` marker: the client
    sees a transport error).
    """

    after: int
    reset: bool = False

    def start(self) -> FaultState:
        """A fresh state."""
        fault = self

        class State(_State):
            seen = 0

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                room = fault.after - self.seen
                if len(chunk) < room:
                    self.seen += len(chunk)
                    return [chunk]
                self.ended = True
                out: list[Chunk] = [chunk[:room]] if room > 0 else []
                return [*out, Reset()] if fault.reset else out

        return State()


@dataclass(frozen=True)
class ByEvent:
    """Re-cut the body into one chunk per framed event (so chunk faults hit whole events)."""

    framing: str = "sse"

    def start(self) -> FaultState:
        """A fresh state."""
        splitter = EventSplitter(self.framing)

        class State(_State):
            def bytes_(self, chunk: bytes) -> list[Chunk]:
                return list(splitter.feed(chunk))

            def rest(self) -> list[Chunk]:
                return list(splitter.close())

        return State()


@dataclass(frozen=True)
class Duplicate:
    """Send chunk ``index`` twice (with :class:`ByEvent` first: event ``index``)."""

    index: int

    def start(self) -> FaultState:
        """A fresh state."""
        index = self.index

        class State(_State):
            n = 0

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                self.n += 1
                return [chunk, chunk] if self.n - 1 == index else [chunk]

        return State()


@dataclass(frozen=True)
class Swap:
    """Reorder: send chunk ``index + 1`` before chunk ``index``."""

    index: int

    def start(self) -> FaultState:
        """A fresh state."""
        index = self.index

        class State(_State):
            n = 0
            held: bytes | None = None

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                self.n += 1
                if self.n - 1 == index:
                    self.held = chunk
                    return []
                if self.held is not None:
                    held, self.held = self.held, None
                    return [chunk, held]
                return [chunk]

            def rest(self) -> list[Chunk]:
                return [self.held] if self.held is not None else []

        return State()


@dataclass(frozen=True)
class Stall:
    """Send nothing for ``seconds`` before chunk ``before`` (past the end: before EOF)."""

    seconds: float
    before: int = 0

    def start(self) -> FaultState:
        """A fresh state."""
        fault = self

        class State(_State):
            n = 0
            done = False

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                self.n += 1
                if self.n - 1 == fault.before:
                    self.done = True
                    return [Pause(fault.seconds), chunk]
                return [chunk]

            def rest(self) -> list[Chunk]:
                return [] if self.done else [Pause(fault.seconds)]

        return State()


@dataclass(frozen=True)
class Drip:
    """Send the body one byte per chunk."""

    def start(self) -> FaultState:
        """A fresh state."""

        class State(_State):
            def bytes_(self, chunk: bytes) -> list[Chunk]:
                return [chunk[i:i + 1] for i in range(len(chunk))]

        return State()


class Chain:
    """Several fault states in a row (the output of one is the input of the next)."""

    def __init__(self, faults: Iterable[Fault]) -> None:
        self.states = [f.start() for f in faults]

    @property
    def ended(self) -> bool:
        """True once any fault ended the body, or a :class:`Reset` went out."""
        return any(s.ended for s in self.states)

    def feed(self, chunk: Chunk) -> list[Chunk]:
        """Push one chunk through every fault."""
        items: list[Chunk] = [chunk]
        for state in self.states:
            out: list[Chunk] = []
            for item in items:
                out += state.feed(item)
            items = out
        return items

    def close(self) -> list[Chunk]:
        """End of input: flush every fault in order."""
        items: list[Chunk] = []
        for state in self.states:
            out: list[Chunk] = []
            for item in items:
                out += state.feed(item)
            items = out + state.close()
        return items


def iter_apply(chunks: bytes | Iterable[Chunk], *faults: Fault) -> Iterator[Chunk]:
    """Lazily apply ``faults`` in order (reads only as far as the faults need)."""
    chain = Chain(faults)
    for chunk in as_chunks(chunks):
        for out in chain.feed(chunk):
            yield out
            if isinstance(out, Reset):
                return
        if chain.ended:
            break
    for out in chain.close():
        yield out
        if isinstance(out, Reset):
            return


def apply(chunks: bytes | Iterable[Chunk], *faults: Fault) -> list[Chunk]:
    """The chunks with ``faults`` applied in order (pure; see the package doc)."""
    return list(iter_apply(chunks, *faults))
