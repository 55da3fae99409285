"""Telling a body that is no LLM stream at all from a stream that failed (inspect, replay).

A file that no dialect recognises -- a README, a binary, an unrelated JSON file --
is bad input, not a failed stream: the commands say so, list the framings and
dialects they tried, and exit 2 (not 1 with "partial (the stream failed)").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.errors import (
    DialectDetectionError,
    FramingError,
    IncompleteStreamError,
    StreamflowError,
)
from ..wire.decoder import StreamDecoder
from ..wire.dialects import dialect_names, get_dialect
from .summary import escape_for_terminal

__all__ = ["EXIT_NOT_A_STREAM", "NotAStream", "not_a_stream", "probe"]

EXIT_NOT_A_STREAM = 2
_FRAMING_NAMES = {"sse": "SSE", "ndjson": "NDJSON", "eventstream": "AWS event-stream"}


@dataclass(frozen=True, slots=True)
class NotAStream:
    """Why a body is no stream: ``framing`` it was read as, ``reason``, the error."""

    framing: str | None
    reason: str
    error: StreamflowError

    def lines(self, name: str, flag: str = "--dialect") -> list[str]:
        """The lines to print for the file ``name`` (stderr); ``flag`` is the command's
        option naming the dialect to read (``convert``: ``--from``)."""
        read_as = _FRAMING_NAMES.get(self.framing or "", self.framing or "bytes")
        return [f"{escape_for_terminal(name)} is not a stream of any known dialect "
                f"(read as {read_as}: {self.reason})",
                f"  tried: {tried()}",
                f"  if it is one, name its dialect with {flag} NAME"]


def tried() -> str:
    """The auto-detected dialects grouped by framing, in detection order."""
    groups: dict[str, list[str]] = {}
    for name in dialect_names():
        framing = get_dialect(name).framing
        if framing in _FRAMING_NAMES:
            groups.setdefault(framing, []).append(name)
    return "; ".join(f"{', '.join(names)} ({_FRAMING_NAMES[framing]})"
                     for framing, names in groups.items())


def not_a_stream(error: StreamflowError | None, dialect: str, detected: str | None,
                 framing: str | None) -> NotAStream | None:
    """The verdict when ``dialect="auto"`` found no dialect at all; ``None`` otherwise."""
    if error is None or dialect != "auto" or detected is not None:
        return None
    if isinstance(error, DialectDetectionError):
        raw = error.raw if isinstance(error.raw, str) else repr(error.raw)
        shown = (raw or "")[:60]
        return NotAStream(framing, f"its first event matched no dialect: {shown!r}", error)
    if isinstance(error, FramingError):
        return NotAStream(framing, f"no valid frame ({error.message})", error)
    if isinstance(error, IncompleteStreamError):
        empty = error.message.startswith("empty body")
        return NotAStream(framing, "the file is empty" if empty else "it holds no event", error)
    return None


def probe(chunks: Iterable[bytes], framing: str | None = None) -> NotAStream | None:
    """Read ``chunks`` only until a dialect is detected; the verdict if none ever is."""
    decoder = StreamDecoder("auto", framing=framing)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            if decoder.dialect is not None:
                return None
        decoder.close()
    except StreamflowError as exc:
        return not_a_stream(exc, "auto", decoder.dialect, decoder.framing)
    return None
