"""How the render sink draws one content group: text and thinking blocks, tool-call lines.

:class:`GroupDrawer` is the half of :class:`~streamflow.reactive.sinks.render.RenderSink` that
turns content items into output: a group opens when an item of another kind arrives,
its text grows through the sanitiser and the block splitter (finished Markdown blocks
printed once, the open tail re-rendered by the live view), and it closes with one full
render of what it still holds. A tool call is one line, its arguments parsed so far.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.text import Text

from ...core.events import ContentItem, ToolCallItem
from ...core.partial_json import ArgumentBuffer
from ._render_live import LiveScreen, PlainWriter
from ._render_markdown import BlockSplitter, BottomLines, LineBreakMarkdown, closed_inline
from ._render_parts import THINKING_STYLE, other_line, tool_line
from .sanitize import StreamSanitizer, sanitize
from .stats import StreamStats


class _Passthrough(StreamSanitizer):
    """``sanitize=False``: text is shown as sent (trusted sources only)."""

    def feed(self, text: str) -> str:
        return text


class GroupDrawer:
    """Content items to screen output, one group at a time (for :class:`RenderSink`)."""

    console: Console
    plain: bool
    markdown: bool
    show_thinking: bool
    code_theme: str
    stats: StreamStats
    _screen: LiveScreen
    _plain_out: PlainWriter
    _kind: str | None
    _splitter: BlockSplitter
    _san: StreamSanitizer
    _tool: tuple[str, ArgumentBuffer] | None
    _grown: bool
    _grown_text: bool
    _sanitizing: bool

    def _new_sanitizer(self) -> StreamSanitizer:
        return StreamSanitizer() if self._sanitizing else _Passthrough()

    def _print(self, renderable: RenderableType, *, gap: bool = False) -> None:
        self._screen.print(renderable, gap=gap)

    # ------------------------------------------------------------------ items

    def _item(self, item: ContentItem) -> None:
        kind, _, phase = item.type.partition(".")
        if kind != self._kind:
            self._close_group()
            self._open_group(kind, item)
        if phase == "done":
            self._done(item)
            return
        if kind == "text":
            self._grow(self._san.feed(item.text))  # type: ignore[union-attr]
        elif kind == "thinking":
            if self.show_thinking and not self.plain:
                self._grow(self._san.feed(item.thinking))  # type: ignore[union-attr]
        elif kind == "tool_call" and self._tool is not None:
            self._tool[1].append(str(item.arguments))  # type: ignore[union-attr]

    def _open_group(self, kind: str, item: ContentItem) -> None:
        self._kind = kind
        self._grown = self._grown_text = False
        if kind == "tool_call" and isinstance(item, ToolCallItem):
            self._tool = (sanitize(item.name), ArgumentBuffer())

    def _grow(self, safe: str) -> None:
        self._grown = True
        if self.plain:
            if safe and self._kind == "text":
                self._plain_out.write(safe)
            return
        if self._kind == "thinking" and not self._grown_text and safe.strip():
            self._print(Text("Thinking", style="dim bold"), gap=True)  # once there is some
            self._screen.headed = True
        self._grown_text = self._grown_text or bool(safe.strip())
        for block in self._splitter.feed(safe):
            self._print(self._block(block), gap=True)

    def _done(self, item: ContentItem) -> None:
        if self._kind in ("text", "thinking"):
            showing = self._kind == "text" or (self.show_thinking and not self.plain)
            if not self._grown and showing:  # a group with no fragments: show the whole item
                self._grow(self._san.feed(str(getattr(item, item.growing))))
            self._close_group()
        elif isinstance(item, ToolCallItem):
            name = self._tool[0] if self._tool else sanitize(item.name)
            self._tool = None
            if not self.plain:
                self._print(tool_line(name, item.arguments, final=True), gap=True)
            self._kind = None
        else:
            if not self.plain:
                self._print(other_line(item), gap=True)
            self._kind = None

    def _close_group(self, cut: bool = False) -> None:
        """Flush what the open group still holds (one full render of the tail); ``cut``:
        the stream ended inside it, so Markdown it left open is closed for the screen."""
        kind, self._kind = self._kind, None
        if kind in ("text", "thinking"):
            self._san.close()
            rest = self._splitter.flush()
            if cut and kind == "text":
                rest = closed_inline(rest)
            if rest.strip() and not self.plain:
                self._print(self._block(rest, kind), gap=True)
        elif kind == "tool_call" and self._tool is not None:
            name, buf = self._tool
            self._tool = None
            if not self.plain:
                line = tool_line(name, buf.snapshot(), final=False,
                                 incomplete=cut or self.stats.done)
                self._print(line, gap=True)
        self._san = self._new_sanitizer()

    # -------------------------------------------------------------- renderers

    def _block(self, text: str, kind: str | None = None) -> RenderableType:
        if (kind or self._kind) == "thinking":
            return Text(text, style=THINKING_STYLE)
        if self.markdown:
            return BottomLines(LineBreakMarkdown(text, code_theme=self.code_theme,
                                                 hyperlinks=False))
        return Text(text)

    def _live_view(self) -> RenderableType | None:
        kind = self._kind
        height = max(1, self.console.size.height - 2)
        if kind in ("text", "thinking"):
            tail = self._splitter.tail(max_lines=height)
            if kind == "text":  # the open block as it will read once closed, not raw marks
                tail = closed_inline(tail)
            return BottomLines(self._block(tail), height) if tail.strip() else None
        if kind == "tool_call" and self._tool is not None:
            return tool_line(self._tool[0], self._tool[1].snapshot(), final=False)
        return None
