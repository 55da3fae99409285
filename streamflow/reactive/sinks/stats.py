"""Per-stream facts the render, log and OpenTelemetry sinks all report.

:class:`StreamStats` watches UniEvents (O(1) per event) and keeps the response
id and model, the usage and finish reason of the stop event, the time to the
first content fragment and the gaps between fragments (p50, p99: a
:class:`~streamflow.core.delivery.Cadence`), the duration, counts of fragments and
finished items per kind, the names of the tool calls, and the attempts and stalls
(from the retry notices, and from the stop event's
:data:`~streamflow.core.delivery.DELIVERY` when a failover chain delivered it, which
also counts the attempts that failed before any output). The clock is injectable so
tests never read wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...core.delivery import DELIVERY, Cadence
from ...core.errors import CancelledStreamError, StreamflowError, StreamTimeoutError
from ...core.events import JSONDict, UniEvent, Usage, reported_usage, usage_to_dict
from ...core.outcome import StreamRestart

__all__ = ["Clock", "StreamStats"]

Clock = Callable[[], float]


class StreamStats:
    """What is known about one stream so far; :meth:`start` begins the clock.

    ``model`` prefers the model the provider reported over ``request_model``.
    """

    _group_open: bool  # the last content group seen is still open

    def __init__(self, *, dialect: str | None = None, request_model: str | None = None,
                 clock: Clock = time.monotonic) -> None:
        self.dialect = dialect
        self.request_model = request_model
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        """Forget everything and restart the clock (for the next stream)."""
        self.started = self.clock()
        self.attempts = 1
        self.stalls = 0
        self.ended_at: float | None = None
        self.error: BaseException | None = None
        self._forget()

    start = reset

    def restart(self, notice: StreamRestart | None = None) -> None:
        """A new attempt: a retry starts the stream over (keep the start time, forget the
        failed attempt); a continuation (``notice.groups`` set) goes on with what it kept."""
        self.attempts += 1
        error = notice.error if notice is not None else None
        if isinstance(error, StreamTimeoutError) and error.kind in ("idle", "first_chunk"):
            self.stalls += 1
        if notice is None or notice.whole:
            self._forget()
            return
        for _ in range(min(notice.groups or 0, len(self._groups))):  # dropped: not counted
            kind = self._groups.pop()
            if self._group_open:
                self._group_open = False
                continue
            self.items[kind] -= 1
            if kind == "tool_call" and self.tool_names:
                self.tool_names.pop()

    @property
    def first_token_at(self) -> float | None:
        """When the first content fragment arrived (``None`` before)."""
        return self.cadence.first

    def _forget(self) -> None:
        self.cadence = Cadence(self.started)
        self.id: str | None = None
        self.response_model: str | None = None
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.events = 0
        self.fragments: dict[str, int] = {}
        self.items: dict[str, int] = {}
        self.tool_names: list[str] = []
        self._groups: list[str] = []  # each content group's kind, in order
        self._group_open = False

    @property
    def model(self) -> str | None:
        """The response model when the provider named it, else the requested one."""
        return self.response_model or self.request_model

    @property
    def done(self) -> bool:
        """True once the stream completed, failed or was cancelled."""
        return self.ended_at is not None

    def observe(self, event: UniEvent) -> None:
        """Take one event."""
        self.events += 1
        meta = event.provider
        if meta:
            if self.id is None and isinstance(meta.get("id"), str):
                self.id = meta["id"]
            if self.response_model is None and isinstance(meta.get("model"), str):
                self.response_model = meta["model"]
        if event.event_type == "stop":
            self.usage = reported_usage(event.usage_metadata)  # None: none reported
            self.finish_reason = event.finish_reason
            delivery = meta.get(DELIVERY) if meta else None
            if isinstance(delivery, dict):  # the source counted every attempt it made
                attempts, stalls = delivery.get("attempts"), delivery.get("stalls")
                if isinstance(attempts, list) and attempts:
                    self.attempts = max(self.attempts, len(attempts))
                if type(stalls) is int:
                    self.stalls = max(self.stalls, stalls)
            return
        for item in event.content_items:
            kind, _, phase = item.type.partition(".")
            if phase == "done":
                self.items[kind] = self.items.get(kind, 0) + 1
                if kind == "tool_call":
                    self.tool_names.append(str(getattr(item, "name", "")))
                self._group_open = False
            else:
                if not self._group_open:
                    self._group_open = True
                    self._groups.append(kind)
                self.fragments[kind] = self.fragments.get(kind, 0) + 1
                self.cadence.content(self.clock())

    def finish(self, error: BaseException | None = None) -> None:
        """Mark the end of the stream (once; later calls are ignored)."""
        if self.ended_at is None:
            self.ended_at = self.clock()
            self.error = error

    @property
    def cancelled(self) -> bool:
        """True when the stream ended by cancellation."""
        return isinstance(self.error, CancelledStreamError)

    @property
    def duration_s(self) -> float:
        """Seconds from start to end (or to now while running)."""
        end = self.ended_at if self.ended_at is not None else self.clock()
        return max(0.0, end - self.started)

    @property
    def ttft_s(self) -> float | None:
        """Seconds from start to the first content fragment."""
        if self.first_token_at is None:
            return None
        return max(0.0, self.first_token_at - self.started)

    def gap_s(self, q: float) -> float | None:
        """The ``q`` quantile of the gaps between content fragments (0.5, 0.99...)."""
        return self.cadence.gap_s(q)

    @property
    def input_tokens(self) -> int | None:
        """Prompt tokens from the stop event's usage."""
        return self.usage.prompt_tokens if self.usage else None

    @property
    def output_tokens(self) -> int | None:
        """Response tokens from the stop event's usage."""
        return self.usage.response_tokens if self.usage else None

    @property
    def generation_s(self) -> float | None:
        """Seconds from the first content fragment to the end (or to now)."""
        if self.first_token_at is None:
            return None
        end = self.ended_at if self.ended_at is not None else self.clock()
        return max(0.0, end - self.first_token_at)

    @property
    def tokens_per_s(self) -> float | None:
        """Output tokens per second of generation (first fragment to end)."""
        out = self.output_tokens
        if out is None or self.first_token_at is None:
            return None
        end = self.ended_at if self.ended_at is not None else self.clock()
        span = end - self.first_token_at
        return out / span if span > 0 else None

    def cost(self, prices: tuple[float, float] | None = None) -> float | None:
        """Provider-reported cost, else ``prices`` (USD per million input, output tokens)."""
        if self.usage is not None and self.usage.cost is not None:
            return self.usage.cost
        if prices is None or self.input_tokens is None or self.output_tokens is None:
            return None
        return (self.input_tokens * prices[0] + self.output_tokens * prices[1]) / 1e6

    def error_dict(self) -> JSONDict | None:
        """The error as ``{"type", "message", ...}`` (``None`` when there was none)."""
        err = self.error
        if err is None:
            return None
        if isinstance(err, StreamflowError):
            return err.to_dict()
        return {"type": type(err).__name__, "message": str(err)}

    def to_dict(self) -> JSONDict:
        """Everything above as JSON-friendly values."""
        out: dict[str, Any] = {
            "id": self.id,
            "model": self.model,
            "request_model": self.request_model,
            "dialect": self.dialect,
            "usage": usage_to_dict(self.usage),
            "finish_reason": self.finish_reason,
            "duration_s": round(self.duration_s, 6),
            "ttft_s": None if self.ttft_s is None else round(self.ttft_s, 6),
            "inter_chunk_p50_s": _rounded(self.gap_s(0.5)),
            "inter_chunk_p99_s": _rounded(self.gap_s(0.99)),
            "events": self.events,
            "attempts": self.attempts,
            "stalls": self.stalls,
            "fragments": dict(self.fragments),
            "items": dict(self.items),
            "tools": list(self.tool_names),
            "status": self.status,
            "error": self.error_dict(),
        }
        return out

    @property
    def status(self) -> str:
        """``running``, ``completed``, ``cancelled`` or ``error``."""
        if self.ended_at is None:
            return "running"
        if self.error is None:
            return "completed"
        return "cancelled" if self.cancelled else "error"


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 6)
