"""The two notices a stream can carry besides UniEvents (sans-IO, shared by every layer).

``on_error("convert")`` ends a failed stream with a :class:`StreamFailure` item
instead of an error; ``on_error("retry", after_output=True)`` announces a new
attempt with a :class:`StreamRestart`, and so does a failover chain that continues
an answer (a continuation: it drops only the groups it cannot continue). They live
here, under both the operators that write them and the sinks and ``run()`` that read
them, so no sink imports an operator.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import StreamflowError
from .message import Message

__all__ = ["StreamFailure", "StreamRestart"]


@dataclass(frozen=True, slots=True)
class StreamFailure:
    """The last item of a stream converted by ``on_error("convert")``; completion follows."""

    error: StreamflowError
    partial: Message


@dataclass(frozen=True, slots=True)
class StreamRestart:
    """A new attempt of the stream starts: drop the last ``discard`` items.

    Two kinds, told apart by ``groups``:

    * a restart (``groups is None``, :attr:`whole`): ``on_error("retry", after_output=True)``
      starts the stream over; ``discard`` is every item the failed attempt gave;
    * a continuation (``groups`` set): a failover chain (:mod:`streamflow.app.failover`)
      goes on with the same answer from another attempt. The last ``groups`` content
      groups (the open one counted) are dropped -- a tool call, a thinking block cut
      before its end -- ``discard`` being their items; ``groups == 0`` drops nothing (the
      answer's text goes on where it stopped). What came before stays.

    ``attempt`` is the number of the attempt about to start (2, 3...), ``delay`` the
    seconds waited before it, ``error`` what failed, ``endpoint`` where the next attempt
    goes (a continuation's endpoint name).
    """

    error: Exception
    attempt: int
    discard: int
    delay: float
    groups: int | None = None
    endpoint: str | None = None

    @property
    def whole(self) -> bool:
        """True for a restart from the start (everything before it is dropped)."""
        return self.groups is None
