"""The render sink's two outputs: a terminal's screen, and plain text for anything else.

On a terminal, blocks are printed to scrollback with one live region below them:
Finished blocks are printed once (a blank line between blocks, none right after a
heading); the open tail is shown in a transient rich ``Live`` region, redrawn only
when the sink asks (it limits the rate) and made current before every print, since
rich redraws the region then.

When the console is not a terminal (or ``plain=True``), :class:`PlainWriter` writes
text fragments to the console's file unchanged (already sanitised), a blank line
between the answers of successive streams, a stream's last line always ended.

While the sink draws, the terminal is told (:class:`QuietInterrupt`) not to echo
what is typed (``^C`` included) and not to discard queued output on an interrupt:
rich pads the region's lines to the full width, so two echoed characters would
wrap the cursor onto a new line, erasing the region would then miss its top line,
and a stale copy of the answer would stay above the final one. Typed-ahead input
is kept, and echoed by the shell that reads it.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

try:
    import termios
except ImportError:  # Windows: no terminal modes to set
    termios = None  # type: ignore[assignment]



class QuietInterrupt:
    """Clears ``ECHO`` and sets ``NOFLSH`` on a terminal between :meth:`enter` and
    :meth:`leave` (a no-op when ``file`` is no terminal of our foreground job)."""

    def __init__(self, file: IO[str] | Any) -> None:
        self._fd: int | None = None
        self._saved: list[Any] | None = None
        try:
            fd = file.fileno()
        except (AttributeError, OSError, ValueError):
            return
        if termios is not None and os.isatty(fd):
            self._fd = fd

    def enter(self) -> None:
        """Stop the echo (``^C`` too) and the output flush, saving the modes to restore."""
        fd = self._fd
        if fd is None or self._saved is not None:
            return
        try:
            if os.tcgetpgrp(fd) != os.getpgrp():
                return  # a background job may not change the terminal
            saved = termios.tcgetattr(fd)
            quiet = list(saved)
            quiet[3] = (quiet[3] & ~termios.ECHO) | termios.NOFLSH
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        except (OSError, termios.error):
            return
        self._saved = saved
        atexit.register(self.leave)

    def leave(self) -> None:
        """Restore the terminal modes :meth:`enter` changed."""
        if self._fd is None or self._saved is None:
            return
        saved, self._saved = self._saved, None
        atexit.unregister(self.leave)
        try:
            termios.tcsetattr(self._fd, termios.TCSANOW, saved)
        except (OSError, termios.error):
            pass


class _View:
    """The live region's content, swapped in place (rich redraws it on every print)."""

    renderable: RenderableType = ""

    def __rich__(self) -> RenderableType:
        return self.renderable


class LiveScreen:
    """Prints to ``console`` above a live region showing ``view()`` (``None``: nothing)."""

    def __init__(self, console: Console, view: Callable[[], RenderableType | None]) -> None:
        self.console = console
        self._view_of = view
        self._live: Live | None = None
        self._view = _View()
        self._printed = False
        self.headed = False  # a heading was just printed: no gap before its first block
        self._quiet = QuietInterrupt(console.file)

    def print(self, renderable: RenderableType, *, gap: bool = False) -> None:
        """Print to scrollback; ``gap``: a blank line first (unless first or after a heading)."""
        if gap and self._printed and not self.headed:
            renderable = Group(Text(""), renderable)
        if self._live is not None:  # the print redraws the live view: make it current
            self._view.renderable = self._view_of() or ""
        elif self.console.is_terminal:
            self._quiet.enter()
        self.console.print(renderable)
        self._printed = True
        self.headed = False

    def show(self, view: RenderableType | None) -> None:
        """Redraw the live region with ``view`` (started on the first non-empty view)."""
        if self._live is None:
            if view is None:
                return
            self._live = Live(self._view, console=self.console, auto_refresh=False,
                              transient=True, redirect_stdout=False, redirect_stderr=False)
            if self.console.is_terminal:
                self._quiet.enter()
            self._live.start()
        self._view.renderable = view or ""
        self._live.refresh()

    def stop(self, *, restore: bool = True) -> None:
        """Remove the live region (the printed blocks stay); ``restore``: the terminal
        modes too (not between a reset and the next stream's first event)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        if restore:
            self._quiet.leave()


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
