"""``streamflow demo --record DIR``: one Recorder file per turn, ``DIR/turn1.sfrec.jsonl``...

:class:`TurnRecorder` is a sink and a sender wrapper at once: :meth:`begin` (called
right before each request) opens the turn's :class:`~streamflow.reactive.sinks.recorder.Recorder`,
so each file's times count from the moment its request was sent; :meth:`wrap` taps
the sender's source so the chunks are recorded as they arrive; the events and the
end line come through the sink methods. ``streamflow inspect --timeline`` draws any
of the files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ..app.providers import HTTPRequest
from ..reactive._source import Source
from ..reactive.sinks.base import BaseSink
from ..reactive.sinks.recorder import Recorder

__all__ = ["TurnRecorder"]


class TurnRecorder(BaseSink):
    """Records every turn of an agent run into ``folder`` (see the module doc)."""

    def __init__(self, folder: str | Path, dialect: str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.dialect = dialect
        self.paths: list[Path] = []
        self.current: Recorder | None = None

    def begin(self, number: int, request: HTTPRequest) -> None:
        """Open turn ``number``'s file (closing a previous one that never ended)."""
        if self.current is not None:
            self.current.close()
        path = self.folder / f"turn{number}.sfrec.jsonl"
        self.paths.append(path)
        self.current = Recorder(path, dialect=self.dialect,
                                meta={"turn": number, "method": request.method,
                                      "url": request.url})

    def wrap(self, send: Callable[[HTTPRequest], Source]) -> Callable[[HTTPRequest], Source]:
        """``send`` with its body recorded into the current turn's file."""
        def recorded(request: HTTPRequest) -> Source:
            source = send(request)
            if self.current is None:
                return source
            return cast(Source, self.current.tap(source))  # a Source stays a Source

        return recorded

    def on_next(self, event: Any) -> None:
        """Record the event in the current turn."""
        if self.current is not None:
            self.current.on_next(event)

    def on_error(self, error: Exception) -> None:
        """End the current turn's file with the error."""
        if self.current is not None:
            self.current.on_error(error)

    def on_completed(self) -> None:
        """End the current turn's file."""
        if self.current is not None:
            self.current.on_completed()

    def close(self) -> None:
        """Close the last file (a run cut short leaves no file open)."""
        if self.current is not None:
            self.current.close()
