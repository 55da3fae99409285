"""The render sink's plain output: answer text written as it arrives, no escape codes.

Used when the console is not a terminal (or ``plain=True``): text fragments go to
the console's file unchanged (already sanitised), a blank line separates the
answers of successive streams, and a stream's last line is always ended.
"""

from __future__ import annotations

from rich.console import Console


class PlainWriter:
    """Writes answer text to ``console.file``, tracking line ends and stream gaps."""

    __slots__ = ("_gap", "_newline", "_texted", "console")

    def __init__(self, console: Console) -> None:
        self.console = console
        self._newline = True
        self._gap = False
        self._texted = False

    def new_stream(self) -> None:
        """A new stream begins: a blank line before its text if the last one wrote any."""
        self._newline = True
        self._gap = self._texted
        self._texted = False

    def write(self, safe: str) -> None:
        """Write one (sanitised) text fragment and flush."""
        file = self.console.file
        if self._gap:  # a new stream after an earlier one: one blank line
            self._gap = False
            file.write("\n")
        self._texted = True
        file.write(safe)
        file.flush()
        self._newline = safe.endswith("\n")

    def end_line(self, *, flush: bool = False) -> None:
        """End the current line if text left it open."""
        if not self._newline:
            self.console.file.write("\n")
            if flush:
                self.console.file.flush()
            self._newline = True
