"""The two notices a stream can carry besides UniEvents (sans-IO, shared by every layer).

``on_error("convert")`` ends a failed stream with a :class:`StreamFailure` item
instead of an error; ``on_error("retry", after_output=True)`` announces a new
attempt with a :class:`StreamRestart`. They live here, under both the operators
that write them and the sinks and ``run()`` that read them, so no sink imports an
operator.
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
    """``on_error("retry", after_output=True)`` restarts: drop the last ``discard`` items.

    ``attempt`` is the number of the attempt about to start (2, 3...), ``delay``
    the seconds waited before it, ``error`` what failed.
    """

    error: Exception
    attempt: int
    discard: int
    delay: float
