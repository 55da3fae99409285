"""The dialect-aware faults: they know which event ends a stream and how errors look.

Both re-cut the body into framed events (:class:`~streamflow.faults.chunks.EventSplitter`
with the dialect's framing) and use the dialect's
:class:`~streamflow.faults.profiles.Profile`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .chunks import Chunk, EventSplitter
from .profiles import ErrorSpec, profile_for
from .recipes import FaultState, _State

__all__ = ["DropTerminator", "InsertError"]


@dataclass(frozen=True)
class DropTerminator:
    """Drop the dialect's terminating event (``message_stop``, ``data: [DONE]``,
    ``response.completed``, the ``done: true`` line...) and everything after it.

    Dialects without a known terminator lose their last framed event.
    """

    dialect: str

    def start(self) -> FaultState:
        """A fresh state."""
        profile = profile_for(self.dialect)
        splitter = EventSplitter(profile.framing)
        is_end = profile.is_terminator

        class State(_State):
            held: bytes | None = None   # lookahead when the terminator is "the last event"

            def events(self, events: list[bytes]) -> list[Chunk]:
                out: list[Chunk] = []
                for event in events:
                    if is_end is None:
                        if self.held is not None:
                            out.append(self.held)
                        self.held = event
                    elif is_end(event):
                        self.ended = True
                        return out
                    else:
                        out.append(event)
                return out

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                return self.events(splitter.feed(chunk))

            def rest(self) -> list[Chunk]:
                return self.events(splitter.close())  # ``held`` (the last event) is dropped

        return State()


@dataclass(frozen=True)
class InsertError:
    """After the first ``after`` framed events, the provider's in-band error event.

    The body ends after the error (as providers do) unless ``keep_rest``, which sends
    the rest of the recording after it (a decoder must still never emit ``stop``).
    """

    dialect: str
    after: int = 0
    error: ErrorSpec = field(default_factory=ErrorSpec)
    keep_rest: bool = False

    def start(self) -> FaultState:
        """A fresh state."""
        profile = profile_for(self.dialect)
        if profile.error_event is None:
            raise ValueError(f"dialect {self.dialect!r} has no in-band error to inject")
        error = profile.error_event(self.error)
        splitter = EventSplitter(profile.framing)
        fault = self

        class State(_State):
            n = 0
            inserted = False

            def events(self, events: list[bytes], final: bool) -> list[Chunk]:
                out: list[Chunk] = []
                for event in events:
                    if self.n == fault.after and not self.inserted:
                        out.append(error)
                        self.inserted = True
                        if not fault.keep_rest:
                            self.ended = True
                            return out
                    out.append(event)
                    self.n += 1
                if final and not self.inserted:
                    out.append(error)
                return out

            def bytes_(self, chunk: bytes) -> list[Chunk]:
                return self.events(splitter.feed(chunk), False)

            def rest(self) -> list[Chunk]:
                return self.events(splitter.close(), True)

        return State()
