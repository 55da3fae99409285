"""What happened when in a recorded stream: the facts ``inspect --timeline`` draws.

:func:`build_timeline` re-decodes a :class:`~streamflow.core.recording.Recording`'s
chunks, each stamped with its arrival time, so any Recorder file works (with or
without event lines): the time to the first byte and to the first content
fragment, one :class:`Group` per content group (thinking, text, each tool call)
from its first to its last fragment, the :class:`Stall` s (gaps between chunks
longer than a threshold), and the output tokens spread over the fragments that
carried them, for a tokens-per-second curve (:meth:`StreamTimeline.rate_curve`) and
its mean. Pure data, no terminal involved.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import StreamflowError
from ..core.events import ToolCallItem, UniEvent
from ..wire.decoder import StreamDecoder

if TYPE_CHECKING:
    from ..core.recording import Recording

__all__ = ["DEFAULT_STALL", "Group", "Stall", "StreamTimeline", "build_timeline"]

DEFAULT_STALL = 0.5
CHARS_PER_TOKEN = 4.0  # the estimate when the provider reported no output tokens


@dataclass(slots=True)
class Group:
    """One content group: ``kind``, a ``label``, first/last fragment times, sizes."""

    kind: str
    label: str
    start: float
    end: float
    fragments: int = 0
    chars: int = 0
    arrivals: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Stall:
    """No byte arrived from ``start`` to ``end`` (seconds since the request)."""

    start: float
    end: float

    @property
    def seconds(self) -> float:
        """The length of the gap."""
        return self.end - self.start


@dataclass(slots=True)
class StreamTimeline:
    """A recorded stream on its time axis (seconds since the recorder started)."""

    duration: float
    first_byte: float | None
    first_token: float | None
    groups: list[Group]
    stalls: list[Stall]
    fragments: list[tuple[float, int]]  # (arrival, characters) of every content fragment
    output_tokens: float
    tokens_reported: bool
    chunk_times: list[float]
    dialect: str | None = None
    model: str | None = None
    response_id: str | None = None
    finish_reason: str | None = None
    ended: str = "cut"
    error: str | None = None
    threshold: float = DEFAULT_STALL

    @property
    def chunks(self) -> int:
        """How many body chunks arrived."""
        return len(self.chunk_times)

    @property
    def last_token(self) -> float | None:
        """Arrival of the last content fragment."""
        return self.fragments[-1][0] if self.fragments else None

    def tokens_between(self, start: float, end: float) -> float:
        """Output tokens carried by the fragments arriving in ``[start, end)``."""
        total = sum(chars for _, chars in self.fragments) or 1
        scale = self.output_tokens / total
        return sum(chars for t, chars in self.fragments if start <= t < end) * scale

    def rate_segments(self) -> list[tuple[float, float, float]]:
        """The output rate as ``(start, end, tokens)`` pieces tiling the generation span.

        The tokens of the fragments that arrive at one instant were generated since
        the previous arrival, so they are spread evenly over that gap; the first
        arrival's tokens open the span and have no gap (as the usual "tokens per
        second after the first token"). The pieces are contiguous, from
        ``first_token`` to ``last_token``; none when content arrived at one instant.
        """
        total = sum(chars for _, chars in self.fragments) or 1
        scale = self.output_tokens / total
        arrivals: list[list[float]] = []  # [time, tokens], one per instant, in time order
        for t, chars in sorted(self.fragments, key=lambda fragment: fragment[0]):
            if arrivals and arrivals[-1][0] == t:
                arrivals[-1][1] += chars * scale
            else:
                arrivals.append([t, chars * scale])
        return [(a[0], b[0], b[1]) for a, b in itertools.pairwise(arrivals)]

    def rate_curve(self, columns: int) -> list[float]:
        """tokens/s in each of ``columns`` equal slices of the time axis: the output
        generated within the slice's part of the generation span (see
        :meth:`rate_segments`) over the length of that part; 0 outside the span.

        The span is the disjoint union of those parts, so :attr:`mean_rate` is their
        length-weighted mean and never above the largest of them, the curve's peak.
        """
        if columns <= 0 or self.duration <= 0:
            return []
        step = self.duration / columns
        segments = self.rate_segments()
        out: list[float] = []
        first = 0  # the first segment that may still overlap a column (they are in order)
        for column in range(columns):
            left, right = column * step, (column + 1) * step
            tokens = covered = 0.0
            while first < len(segments) and segments[first][1] <= left:
                first += 1
            for index in range(first, len(segments)):
                start, end, count = segments[index]
                if start >= right:
                    break
                overlap = min(end, right) - max(start, left)
                if overlap > 0:
                    tokens += count * overlap / (end - start)
                    covered += overlap
            out.append(tokens / covered if covered > 0 else 0.0)
        return out

    @property
    def mean_rate(self) -> float | None:
        """Output tokens per second over the generation span: the tokens that arrived
        after the first content fragment over the time from it to the last one (the
        same tokens and time :meth:`rate_curve` divides); ``None`` for no span."""
        segments = self.rate_segments()
        span = segments[-1][1] - segments[0][0] if segments else 0.0
        return sum(count for _, _, count in segments) / span if span > 0 else None


def _size(item: Any) -> int:
    value = getattr(item, item.growing, "")
    return len(value) if isinstance(value, (str, bytes, list)) else 0


class _Builder:
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.groups: list[Group] = []
        self.open: Group | None = None
        self.fragments: list[tuple[float, int]] = []
        self.tokens: int | None = None
        self.meta: dict[str, Any] = {}
        self.finish: str | None = None

    def events(self, t: float, events: list[UniEvent]) -> None:
        for event in events:
            for key in ("id", "model"):
                value = (event.provider or {}).get(key)
                if isinstance(value, str) and key not in self.meta:
                    self.meta[key] = value
            if event.event_type == "stop":
                usage = event.usage_metadata
                if usage is not None and usage.response_tokens is not None:
                    self.tokens = usage.response_tokens
                self.finish = event.finish_reason
            for item in event.content_items:
                self.item(t, item)

    def item(self, t: float, item: Any) -> None:
        kind, _, phase = item.type.partition(".")
        if phase == "done":
            if self.open is not None and self.open.kind == kind:
                if isinstance(item, ToolCallItem) and item.name:
                    self.open.label = item.name
                self.open = None
            return
        group = self.open
        if group is None or group.kind != kind:
            label = item.name if isinstance(item, ToolCallItem) and item.name else kind
            group = self.open = Group(kind, label, t, t)
            self.groups.append(group)
        size = _size(item)
        group.end = t
        group.fragments += 1
        group.chars += size
        group.arrivals.append(t)
        self.fragments.append((t, max(size, 1)))


def build_timeline(recording: Recording, *, threshold: float = DEFAULT_STALL,
                   dialect: str | None = None) -> StreamTimeline:
    """The timeline of ``recording`` (see the module doc); ``threshold``: what counts
    as a stall, in seconds. A stream that failed gives the timeline up to the failure."""
    builder = _Builder(threshold)
    decoder = StreamDecoder(dialect or recording.dialect or "auto", framing=recording.framing)
    error: str | None = None
    last = 0.0
    try:
        for t, chunk in recording.chunks:
            builder.events(t, decoder.feed(chunk))
            last = t
        builder.events(last, decoder.close())
    except StreamflowError as exc:
        builder.events(last, exc.events)
        error = f"{type(exc).__name__}: {exc.message}"
    times = [t for t, _ in recording.chunks]
    stalls = [Stall(a, b) for a, b in itertools.pairwise(times) if b - a > threshold]
    end = recording.end or {}
    duration = max([*times, float(end.get("t") or 0.0), 1e-6])
    chars = sum(size for _, size in builder.fragments)
    reported = builder.tokens is not None
    tokens = float(builder.tokens) if builder.tokens is not None else chars / CHARS_PER_TOKEN
    return StreamTimeline(
        duration=duration, first_byte=times[0] if times else None,
        first_token=builder.fragments[0][0] if builder.fragments else None,
        groups=builder.groups, stalls=stalls, fragments=builder.fragments,
        output_tokens=tokens,
        tokens_reported=reported, chunk_times=times, dialect=decoder.dialect,
        model=builder.meta.get("model"), response_id=builder.meta.get("id"),
        finish_reason=builder.finish, ended=str(end.get("end") or "cut"), error=error,
        threshold=threshold)
