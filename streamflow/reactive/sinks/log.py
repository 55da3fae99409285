"""Structured log sink: one stdlib ``logging`` record per stream, never one per token.

When the stream ends, :class:`LogSink` logs a single record -- ``INFO`` when it
completed, ``WARNING`` when it was cancelled, ``ERROR`` when it failed -- whose
message reads well in a console and whose ``extra=`` fields carry the facts for
JSON log formatters::

    id, model, request_model, dialect, status, finish_reason, usage (dict),
    input_tokens, output_tokens, duration_s, ttft_s, events, items (done items by
    kind), fragments (deltas by kind), tools (tool call names), attempts
    (1 + retries), error_type, error_message, error (dict),
    streamflow (all of the above as one dict)

Provider strings are untrusted: in the message every control character of the id,
model, tool names and error message is shown as a visible escape
(:func:`~streamflow.reactive.sinks.sanitize.escape_controls`), so a newline in a model name
cannot forge a second record and no escape sequence reaches a console; the
``extra`` fields keep the raw values for structured formatters.

Every value is JSON-friendly (str, int, float, None, dicts and lists of those);
:meth:`LogSink.to_dict` returns the same dict at any time. No credential is in a
record: the fields and ``extra`` go through :func:`streamflow.wire.redaction.redact_value`
(a key in an error message, a ``?key=`` URL, an ``authorization`` field masked).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ...core.errors import CancelledStreamError
from ...core.events import JSONDict, UniEvent
from ...core.outcome import StreamRestart
from ...wire.redaction import redact_value
from .base import BaseSink
from .sanitize import escape_controls
from .stats import Clock, StreamStats

__all__ = ["LogSink"]

DEFAULT_LOGGER = "streamflow.stream"


class LogSink(BaseSink):
    """Logs one record per stream to ``logger`` (a name or a ``Logger``).

    ``dialect``/``model`` describe the request (the response's own model wins when
    the provider reports it); ``extra`` is merged into every record. Reusable: the
    next event after an ended stream starts a new one (call :meth:`reset` right
    before the request for exact timings).
    """

    def __init__(self, logger: logging.Logger | str | None = None, *, dialect: str | None = None,
                 model: str | None = None, level: int = logging.INFO,
                 extra: JSONDict | None = None, clock: Clock = time.monotonic) -> None:
        if isinstance(logger, logging.Logger):
            self.logger = logger
        else:
            self.logger = logging.getLogger(logger or DEFAULT_LOGGER)
        self.level = level
        self.extra = dict(extra or {})
        self.stats = StreamStats(dialect=dialect, request_model=model, clock=clock)

    def reset(self) -> None:
        """Start a new stream (restarts the clock)."""
        self.stats.reset()

    @property
    def finished(self) -> bool:
        """True once the stream's record was written."""
        return self.stats.done

    takes_discards = True

    def on_restart(self, notice: StreamRestart) -> None:
        """Count an attempt (the record's ``attempts``, ``stalls``); the stream's clock
        keeps running."""
        self.stats.restart(notice)

    def on_event(self, event: UniEvent) -> None:
        """Count the event (no record is written per event)."""
        if self.stats.done:
            self.stats.reset()
        self.stats.observe(event)

    def on_error(self, error: Exception) -> None:
        """Log the failed or cancelled stream."""
        self._emit(error)

    def on_completed(self) -> None:
        """Log the completed stream."""
        self._emit(None)

    def to_dict(self) -> JSONDict:
        """The record's fields (JSON-friendly)."""
        data = self.stats.to_dict()
        usage = data["usage"] or {}
        error = data["error"] or {}
        data.update(
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("response_tokens"),
            error_type=error.get("type"),
            error_message=error.get("message"),
        )
        cleaned: JSONDict = redact_value(data)
        return cleaned

    def _emit(self, error: BaseException | None) -> None:
        if self.stats.done:
            return
        self.stats.finish(error)
        data = self.to_dict()
        if error is None:
            level = self.level
        elif isinstance(error, CancelledStreamError):
            level = max(self.level, logging.WARNING)
        else:
            level = max(self.level, logging.ERROR)
        if not self.logger.isEnabledFor(level):
            return
        extra = {**redact_value(self.extra), **data, "streamflow": data}
        self.logger.log(level, "%s", _summary(data), extra=extra)


def _summary(data: JSONDict) -> str:
    """``stream msg_1 (claude-x) completed in 1.53s: 12 in / 345 out, finish=stop``.

    Every provider string is escaped (see the module doc).
    """
    model = _safe(data["model"]) or "unknown model"
    head = f"stream {_safe(data['id']) or '-'} ({model}) {data['status']}"
    parts = [f"{head} in {data['duration_s']:.2f}s"]
    if data["ttft_s"] is not None:
        parts.append(f"ttft={data['ttft_s']:.2f}s")
    if data["input_tokens"] is not None or data["output_tokens"] is not None:
        parts.append(f"tokens={data['input_tokens']}/{data['output_tokens']}")
    if data["finish_reason"]:
        parts.append(f"finish={_safe(data['finish_reason'])}")
    if data.get("tools"):
        parts.append(f"tools={','.join(_safe(name) for name in data['tools'])}")
    if data["error_type"]:
        parts.append(f"error={_safe(data['error_type'])}: {_safe(data['error_message'])}")
    return ", ".join(parts)


def _safe(value: Any) -> str:
    return escape_controls(str(value)) if value is not None else ""
