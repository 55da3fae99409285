"""The render sink's screen: blocks printed to scrollback, one live region below them.

Finished blocks are printed once (a blank line between blocks, none right after a
heading); the open tail is shown in a transient rich ``Live`` region, redrawn only
when the sink asks (it limits the rate) and made current before every print, since
rich redraws the region then.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

__all__ = ["LiveScreen"]


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

    def print(self, renderable: RenderableType, *, gap: bool = False) -> None:
        """Print to scrollback; ``gap``: a blank line first (unless first or after a heading)."""
        if gap and self._printed and not self.headed:
            renderable = Group(Text(""), renderable)
        if self._live is not None:  # the print redraws the live view: make it current
            self._view.renderable = self._view_of() or ""
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
            self._live.start()
        self._view.renderable = view or ""
        self._live.refresh()

    def stop(self) -> None:
        """Remove the live region (the printed blocks stay)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
