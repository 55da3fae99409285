"""What the line-based framers (SSE, NDJSON) share: opening, the sticky error, the limit rule.

A subclass implements :meth:`LineFramer._parse` (bytes or text in, frames appended to
``out``) and :meth:`LineFramer._drop` (free the unfinished frame). This base gives
them one behaviour: ``feed`` after ``close`` is a ``ValueError`` (a bug of the
caller); a :class:`~streamflow.core.errors.LimitExceededError` is sticky, and when
frames completed before it in the same call they are returned first and the error
is raised by the next ``feed``/``close`` -- nothing received before it is lost.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import LimitExceededError
from ...core.limits import DEFAULT_LIMITS, Limits

__all__ = ["LineFramer"]


class LineFramer:
    """Base of :class:`~streamflow.wire.framing.sse.SSEParser` and
    :class:`~streamflow.wire.framing.ndjson.NDJSONParser` (see the module doc)."""


    def __init__(self, limits: Limits | None = None) -> None:
        self._max = (limits or DEFAULT_LIMITS).max_event_bytes
        self._error: LimitExceededError | None = None
        self.incomplete = False
        self.closed = False

    def _check_open(self) -> None:
        """Raise the pending limit error, or ``ValueError`` for ``feed`` after ``close``."""
        if self._error is not None:
            raise self._error
        if self.closed:
            raise ValueError(f"{type(self).__name__}.feed() after close()")

    def _run(self, text: Any, final: bool = False) -> list[Any]:
        """Parse ``text`` (bytes or str: what the subclass reads); a limit error after
        complete frames is raised on the next call."""
        out: list[Any] = []
        try:
            self._parse(text, final, out)
        except LimitExceededError as exc:
            self._error = exc
            self._drop()  # free the oversized frame at once
            if not out:
                raise
        return out

    def _parse(self, text: Any, final: bool, out: list[Any]) -> None:
        raise NotImplementedError

    def _drop(self) -> None:
        raise NotImplementedError
