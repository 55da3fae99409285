"""Reading streamflow recordings (the format is documented in :mod:`.recorder`).

:func:`read_recording` turns a file (or lines) into a :class:`Recording`: the header,
the timed chunks, the timed events and the end line. A ``restart`` line drops what
came before it, so a recording of a retried request reads as its last attempt; a
continuation's (with ``groups``) drops only the events it names, so a continued answer
reads as the answer.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from .events import JSONDict, UniEvent, event_from_dict

__all__ = ["FORMAT_VERSION", "MAGIC", "Recording", "is_recording", "read_recording"]

FORMAT_VERSION = 1
MAGIC = "streamflow_recording"


@dataclass
class Recording:
    """A recording read back: header, timed chunks, timed events, the end line."""

    header: JSONDict
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    events: list[tuple[float, UniEvent]] = field(default_factory=list)
    end: JSONDict | None = None
    attempts: int = 1

    @property
    def dialect(self) -> str | None:
        """The dialect named when recording (``None``: detect it)."""
        return self.header.get("dialect")

    @property
    def framing(self) -> str | None:
        """The framing named when recording (``None``: sniff it)."""
        return self.header.get("framing")

    @property
    def meta(self) -> JSONDict:
        """The free-form metadata of the header."""
        return dict(self.header.get("meta") or {})

    @property
    def body(self) -> bytes:
        """All chunks joined: the body as the provider sent it."""
        return b"".join(c for _, c in self.chunks)

    def delays(self) -> list[float]:
        """Seconds before each chunk (the first one from the start)."""
        out, last = [], 0.0
        for t, _ in self.chunks:
            out.append(max(0.0, t - last))
            last = t
        return out


def is_recording(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` starts with a streamflow recording header."""
    with open(path, "rb") as f:
        head = f.readline(4096)
    return head.lstrip().startswith(b"{") and MAGIC.encode() in head


def read_recording(source: str | os.PathLike[str] | Iterable[str]) -> Recording:
    """Read a recording (a path or lines of text); ``ValueError`` if it is not one."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            return _parse(f)
    return _parse(source)


def _parse(lines: Iterable[str]) -> Recording:
    recording: Recording | None = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"recording line {number}: not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"recording line {number}: not a JSON object")
        if recording is None:
            version = obj.get(MAGIC)
            if not isinstance(version, int):
                raise ValueError("not a streamflow recording: the first line has no "
                                 f"{MAGIC!r} header")
            if version > FORMAT_VERSION:
                raise ValueError(f"recording format {version} is newer than this streamflow "
                                 f"reads ({FORMAT_VERSION})")
            recording = Recording(header=obj)
            continue
        try:
            t = float(obj.get("t", 0.0))
            if not math.isfinite(t):
                raise ValueError(f"time {obj.get('t')!r} is not a finite number")
            if "chunk" in obj:
                recording.chunks.append((t, base64.b64decode(obj["chunk"], validate=True)))
            elif "event" in obj:
                recording.events.append((t, event_from_dict(obj["event"])))
            elif "end" in obj:
                recording.end = obj
            elif "restart" in obj:
                recording.attempts = int(obj["restart"])
                if obj.get("groups") is None:  # a retry: the attempt starts over
                    recording.chunks.clear()
                    recording.events.clear()
                else:  # a continuation: only the events it dropped go
                    discard = int(obj.get("discard") or 0)
                    if not 0 <= discard <= len(recording.events):
                        raise ValueError(f"a continuation drops {discard} events of "
                                         f"{len(recording.events)}")
                    del recording.events[len(recording.events) - discard:]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"recording line {number}: {exc}") from None
    if recording is None:
        raise ValueError("not a streamflow recording: the file is empty")
    return recording
