"""Terminal render sink: a UniEvent stream drawn live with rich, safely.

:class:`RenderSink` is a plain observer (``on_next``/``on_error``/``on_completed``),
so it subscribes to a reactivex observable directly or goes to
:func:`streamflow.run`. On a terminal it shows:

* the answer as Markdown, typewriter style: finished blocks (paragraphs, closed code
  fences) are printed to scrollback once and only the open block is re-rendered,
  at most ``fps`` times a second (clock injectable), so cost stays linear;
* visible thinking, dimmed, under its own heading, apart from the answer;
* one live line per tool call, its name and the arguments parsed so far
  (:meth:`ArgumentBuffer.snapshot`, once per frame), then the final arguments;
* a footer: model, input/output tokens, time to first token, tokens/s, cost.

A cancelled stream (``on_error(CancelledStreamError)`` or :meth:`interrupted`)
keeps the partial answer on screen, marked *interrupted*; any other error shows
the partial answer and a red error line. With ``plain=True`` (the default when the
console is not a terminal) only the answer text is written, as it arrives, with
no escape codes (a blank line separates the answers of successive streams); footer
and error lines go to ``err_file`` (stderr).

All model text goes through :mod:`streamflow.reactive.sinks.sanitize` first and becomes
rich ``Text``/``Markdown`` (never markup); Markdown links are shown as text plus
URL, never as terminal hyperlinks.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.text import Text

from ...core._tools import ToolResult
from ...core.errors import CancelledStreamError
from ...core.events import UniEvent
from ...core.outcome import StreamRestart
from ...core.partial_json import ArgumentBuffer
from ._render_groups import GroupDrawer
from ._render_live import LiveScreen, PlainWriter
from ._render_markdown import BlockSplitter
from ._render_parts import error_line, fit_line, format_footer, note_width, result_line, show_result
from .base import BaseSink
from .sanitize import StreamSanitizer, sanitize
from .stats import Clock, StreamStats

__all__ = ["RenderSink", "error_line", "format_footer"]


class RenderSink(GroupDrawer, BaseSink):
    """Draws one stream at a time on ``console`` (see the module doc).

    ``model``/``dialect`` name the request for the footer until the provider reports
    its model; ``prices`` (USD per million input, output tokens) gives a cost when
    the provider reports none. The sink can be reused for the next stream after
    it ended; call :meth:`reset` right before a new request so timings restart.
    """

    def __init__(self, console: Console | None = None, *, plain: bool | None = None,
                 markdown: bool = True, show_thinking: bool = True, show_footer: bool = True,
                 fps: float = 15.0, clock: Clock = time.monotonic, model: str | None = None,
                 dialect: str | None = None, prices: tuple[float, float] | None = None,
                 err_file: TextIO | None = None, sanitize: bool = True,
                 code_theme: str = "monokai") -> None:
        self.console = console if console is not None else Console()
        self.plain = (not self.console.is_terminal) if plain is None else plain
        self.markdown = markdown
        self.show_thinking = show_thinking
        self.show_footer = show_footer
        self.interval = 1.0 / fps if fps > 0 else 0.0
        self.clock = clock
        self.prices = prices
        self.code_theme = code_theme
        self._err_file = err_file
        self._sanitizing = sanitize
        self.stats = StreamStats(dialect=dialect, request_model=model, clock=clock)
        self._screen = LiveScreen(self.console, self._live_view)
        self._plain_out = PlainWriter(self.console)
        self._finished = False
        self.reset()

    # ------------------------------------------------------------------ state

    def reset(self) -> None:
        """Forget the previous stream and restart the clock (call before a request)."""
        self._screen.stop(restore=False)  # the terminal stays quiet until the stream ends
        self.stats.reset()
        self._kind: str | None = None
        self._splitter = BlockSplitter()
        self._san: StreamSanitizer = self._new_sanitizer()
        self._tool: tuple[str, ArgumentBuffer] | None = None
        self._grown = self._grown_text = False
        self._later: list[str] = []  # notes shown under the footer (an answer continued)
        self._last_frame = float("-inf")
        self._plain_out.new_stream()
        self._finished = False

    @property
    def err_file(self) -> TextIO:
        """Where plain mode writes footer and error lines."""
        return self._err_file if self._err_file is not None else sys.stderr

    # --------------------------------------------------------------- observer

    @property
    def finished(self) -> bool:
        """True once the answer was drawn to its end."""
        return self._finished

    takes_discards = True

    def on_restart(self, notice: StreamRestart) -> None:
        """A retry: note it and draw the new attempt below the old one. A continuation:
        a group it drops is shown cut, with the note under it; one that drops nothing
        leaves the text flowing and notes the attempt under the footer."""
        if notice.whole:
            self._restart(notice)
            return
        self.stats.restart(notice)
        error = notice.error
        line = (f"↻ {type(error).__name__}: {getattr(error, 'message', error)} — continued "
                f"on {notice.endpoint or 'another attempt'} (attempt {notice.attempt}")
        line += f", {notice.groups} unfinished group(s) asked for again)" if notice.groups \
            else ")"
        if not notice.groups:
            self._later.append(line)
            return
        self._close_group(cut=True)
        self._screen.stop(restore=False)
        if self.plain:
            self._plain_out.end_line()
        self.note(line, style="yellow")

    def on_event(self, event: UniEvent) -> None:
        """Draw one event."""
        if self._finished:
            self.reset()
        self.stats.observe(event)
        if event.event_type == "stop":
            self._end(None)
            return
        for item in event.content_items:
            self._item(item)
        self._frame()

    def on_error(self, error: BaseException) -> None:
        """Keep the partial answer and mark it interrupted or failed."""
        if not self._finished:
            self._end(error)

    def on_completed(self) -> None:
        """End of stream (a no-op after the stop event was drawn)."""
        if not self._finished:
            self._end(None)

    def _restart(self, notice: StreamRestart) -> None:
        self._close_group(cut=True)
        self._screen.stop(restore=False)
        if self.plain:
            self._plain_out.end_line()
        error = notice.error
        self.note(f"↻ {type(error).__name__}: {getattr(error, 'message', error)} — retrying "
                  f"(attempt {notice.attempt}, after {notice.delay:.1f}s)", style="yellow")
        self.stats.restart()
        self._splitter = BlockSplitter()
        self._san = self._new_sanitizer()

    def interrupted(self) -> None:
        """The user pressed Ctrl-C: same as ``on_error(CancelledStreamError)``."""
        self.on_error(CancelledStreamError("interrupted by the user"))

    def on_tool_result(self, result: ToolResult) -> None:
        """Show one tool result: ``✓ name → result`` (see :mod:`.render_tools`), on one
        line cut to the terminal's width (piped: the preview length)."""
        width = note_width(self.console, self.plain, self.err_file)
        if width is None:
            show_result(self, result)
            return
        line, style = result_line(result, preview=max(width, 1) * 4)
        self.note(fit_line(line, width), style=style)

    def note(self, text: str, style: str = "dim") -> None:
        """Print a line of the caller's own (tool results...), sanitised."""
        line = sanitize(text)
        if self.plain:
            self._err(line)
        else:
            self._print(Text(line, style=style))

    # ---------------------------------------------------------------- display

    def _frame(self) -> None:
        """Re-render the open tail, at most once per ``1/fps`` seconds."""
        if self.plain or self._finished:
            return
        now = self.clock()
        if now - self._last_frame < self.interval:
            return
        self._last_frame = now
        self._screen.show(self._live_view())

    def _err(self, line: str) -> None:
        self.err_file.write(line + "\n")
        self.err_file.flush()

    def _end(self, error: BaseException | None) -> None:
        self.stats.finish(error)
        self._close_group(cut=True)
        self._screen.stop()
        self._finished = True
        received = self.stats.events > 0
        footer = format_footer(self.stats, self.prices, None if self.plain else
                               self.console.width) if self.show_footer else ""
        later, self._later = self._later, []
        if self.plain:
            self._plain_out.end_line(flush=True)
            if error is not None:
                self._err(error_line(error, received=received))
            if footer and (error is None or received):
                self._err(footer)
            for line in later:
                self.note(line, style="yellow")
            return
        if error is not None:
            style = "bold yellow" if isinstance(error, CancelledStreamError) else "bold red"
            self._print(Text(error_line(error, received=received), style=style), gap=True)
        if footer:
            self._print(Text(footer, style="dim", no_wrap=True, overflow="ellipsis"), gap=True)
        for line in later:
            self.note(line, style="yellow")
