"""Linear-cost streaming Markdown: finished blocks out once, only the open tail kept.

:class:`BlockSplitter` takes text fragments and returns each Markdown block as soon
as it is finished -- a paragraph (or list, heading, table) when a blank line ends
it, a fenced code block when its closing fence line is complete. What is still
open stays in the splitter as the *tail*, the only part a live view re-renders.
Work per fragment is proportional to the fragment (lines are split once), so a
long answer costs linear time, not one re-parse of the whole answer per token.

:class:`BottomLines` shows the last lines of a renderable, so a live tail taller
than the terminal keeps its newest lines in view.

:class:`LineBreakMarkdown` is rich's ``Markdown`` keeping the model's single line
breaks (a poem, one number a line): CommonMark would join them into one line
("soft breaks"); chat output means them as written, as piped output shows them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.segment import Segment

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")


class BlockSplitter:
    """Feed text; get finished Markdown blocks; read the open tail at any time."""

    __slots__ = ("_fence", "_lines", "_partial")

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._partial: list[str] = []
        self._fence: str | None = None

    @property
    def in_fence(self) -> bool:
        """True while a fenced code block is open."""
        return self._fence is not None

    def feed(self, text: str) -> list[str]:
        """Add ``text``; returns the blocks it finished (without trailing newline)."""
        if "\n" not in text:
            if text:
                self._partial.append(text)
            return []
        out: list[str] = []
        pieces = text.split("\n")
        for i, piece in enumerate(pieces[:-1]):
            if i == 0 and self._partial:
                self._partial.append(piece)
                piece = "".join(self._partial)
                self._partial = []
            block = self._line(piece)
            if block is not None:
                out.append(block)
        if pieces[-1]:
            self._partial.append(pieces[-1])
        return out

    def _line(self, line: str) -> str | None:
        """Take one complete line; returns a finished block, if any."""
        if self._fence is not None:
            self._lines.append(line)
            close = _CLOSE.match(line)
            if close and close.group(1)[0] == self._fence[0] and len(close.group(1)) >= len(
                    self._fence):
                self._fence = None
                return self._take()
            return None
        if not line.strip():
            return self._take() if self._lines else None
        match = _FENCE.match(line)
        if match:
            before = self._take() if self._lines else None
            self._fence = match.group(1)
            self._lines.append(line)
            return before  # the fence opener never closes a block itself
        self._lines.append(line)
        return None

    def _take(self) -> str:
        block = "\n".join(self._lines)
        self._lines = []
        return block

    def tail(self, max_lines: int | None = None) -> str:
        """The open block as text; with ``max_lines``, only its last lines.

        A cropped open code block keeps its opening fence line so it still renders
        as code.
        """
        lines = self._lines
        partial = "".join(self._partial)
        if self._partial:
            self._partial = [partial]
        if max_lines is not None and len(lines) + 1 > max_lines:
            keep = lines[len(lines) - max(0, max_lines - 1):] if max_lines > 1 else []
            if self._fence is not None and lines and keep and keep[0] is not lines[0]:
                keep = [lines[0], *keep[1:]]
            lines = keep
        if not lines:
            return partial
        return "\n".join(lines) + ("\n" + partial if partial else "")

    def flush(self) -> str:
        """Everything still open (the stream ended); the splitter is reset."""
        text = self.tail()
        self._lines, self._partial, self._fence = [], [], None
        return text


class BottomLines:
    """Render ``renderable`` without its leading blank lines, keeping its last ``max_height``.

    (rich's Markdown opens a list with a blank line; blocks printed one by one would
    otherwise get a double gap.)
    """

    def __init__(self, renderable: RenderableType, max_height: int | None = None) -> None:
        self.renderable = renderable
        self.max_height = max_height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=False)
        start = 0
        while start < len(lines) and not "".join(seg.text for seg in lines[start]).strip():
            start += 1
        if self.max_height is not None:
            start = max(start, len(lines) - self.max_height)
        for line in lines[start:]:
            yield from line
            yield Segment.line()


class LineBreakMarkdown(Markdown):
    """``Markdown`` whose soft line breaks are hard ones (see the module doc)."""

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        _harden(self.parsed)


def _harden(tokens: Iterable[Any]) -> None:
    for token in tokens:
        if token.type == "softbreak":
            token.type = "hardbreak"
        if token.children:
            _harden(token.children)


_CODE_SPAN = re.compile(r"`[^`\n]*`")


def closed_inline(text: str) -> str:
    """``text`` as a block cut mid-stream shows it: an emphasis (``**``) or a code span
    (`````) still open is closed, so the cut answer prints as Markdown, not as raw marks.
    Text in a fenced block is left as it is (an open fence renders as code anyway)."""
    if _FENCE.match(text.lstrip()):
        return text
    bare = _CODE_SPAN.sub("", text)
    end = ""
    if bare.count("`") % 2:
        end += "`"
        bare = bare[:bare.rindex("`")]
    if bare.count("**") % 2:
        end += "**"
    return text.rstrip() + end if end else text
