"""The one-line pieces the render sink draws: tool calls, tool results, media, errors, the footer.

Every string that came from the model or the provider is sanitised here too. A tool
result is ``✓ name → result`` or ``✖ name → error`` (:meth:`RenderSink.on_tool_result
<streamflow.reactive.sinks.render.RenderSink.on_tool_result>`, called by the
:class:`~streamflow.Agent` after each turn's tools ran, in call order), its text cut to
``RESULT_PREVIEW`` characters (the model gets all of it); in plain mode the line goes to
``err_file``, so stdout keeps the answer only.
"""

from __future__ import annotations

import json
import os
from typing import Any, Protocol, TextIO

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from ...core._tools import ToolResult
from ...core.errors import CancelledStreamError, StreamflowError
from ...core.events import ContentItem
from .sanitize import sanitize
from .stats import StreamStats

THINKING_STYLE = "dim italic"
PREVIEW_CHARS = 400


def tool_line(name: str, args: Any, *, final: bool, incomplete: bool = False) -> Text:
    """``⚙ name {arguments}``: dim while growing (one line), cyan once final."""
    if isinstance(args, str):
        preview = args
    elif args is None:
        preview = "…"
    else:
        preview = json.dumps(args, ensure_ascii=False)
    if len(preview) > PREVIEW_CHARS:
        preview = preview[:PREVIEW_CHARS] + "…"
    line = Text(no_wrap=not final, overflow="ellipsis")
    line.append("⚙ ", style="bold cyan")
    line.append(sanitize(name) or "tool", style="bold")
    line.append(" ")
    line.append(sanitize(preview), style="cyan" if final else "dim")
    if incomplete:
        line.append("  (incomplete)", style="yellow")
    return line


def other_line(item: ContentItem) -> Text:
    """A placeholder for output a terminal cannot show (images, audio, vectors)."""
    kind = item.kind
    if kind == "embedding":
        size = len(getattr(item, "embedding", []) or [])
        return Text(f"[embedding, {size} dimensions]", style="dim")
    data = getattr(item, "data", b"") or b""
    mime = sanitize(str(getattr(item, "mime_type", "") or "")) or "opaque"
    label = "redacted thinking" if kind == "inline_thinking" else mime
    return Text(f"[{label}, {len(data):,} bytes]", style="dim")


def error_line(error: BaseException, *, received: bool = True) -> str:
    """``⏹ interrupted`` for a cancel, else ``✖ Type: message`` (sanitised).

    ``received=False``: nothing of the answer had arrived.
    """
    if isinstance(error, CancelledStreamError):
        return "⏹ interrupted — partial answer above" if received else \
            "⏹ interrupted before the answer began"
    message = error.message if isinstance(error, StreamflowError) else str(error)
    retry = " (retryable)" if getattr(error, "retryable", False) else ""
    return sanitize(f"✖ {type(error).__name__}: {message}{retry}")


MIN_RATE_SECONDS = 0.5
"""tokens/s is shown only for a generation that took at least this long: a replay at
full speed or a cached answer would print a rate no model has."""


def format_footer(stats: StreamStats, prices: tuple[float, float] | None = None,
                  width: int | None = None) -> str:
    """``model · 12 in · 345 out · TTFT 0.42s · 85.3 tok/s · $0.0012 · stop``.

    Only figures that mean something: no model name when none is known, no rate
    for a generation shorter than :data:`MIN_RATE_SECONDS`; ``""`` when nothing is
    known at all. With ``width`` the line fits it: the least telling figures go
    first (rate, TTFT, cost, finish), then the model name is shortened.
    """
    model = sanitize(stats.model or "")
    parts: list[tuple[int, str]] = []  # (drop order: higher goes first, text)
    if stats.input_tokens is not None:
        parts.append((0, f"{stats.input_tokens:,} in"))
    if stats.output_tokens is not None:
        parts.append((0, f"{stats.output_tokens:,} out"))
    if stats.ttft_s is not None:
        parts.append((3, f"TTFT {stats.ttft_s:.2f}s"))
    rate = stats.tokens_per_s
    if rate is not None and (stats.generation_s or 0.0) >= MIN_RATE_SECONDS:
        parts.append((4, f"{rate:.1f} tok/s"))
    cost = stats.cost(prices)
    if cost is not None:
        parts.append((2, f"${cost:.4f}"))
    if stats.finish_reason:
        parts.append((1, sanitize(stats.finish_reason)))
    if not parts and not model:
        return ""
    while True:
        line = " · ".join(([model] if model else []) + [text for _, text in parts])
        if width is None or cell_len(line) <= width or not parts:
            break
        drop = max(range(len(parts)), key=lambda i: (parts[i][0], i))
        if parts[drop][0] == 0:
            break
        del parts[drop]
    if width is not None and cell_len(line) > width and model:
        rest = cell_len(line) - cell_len(model)
        model = set_cell_size(model, max(1, width - rest - 1)).rstrip() + "…"
        line = " · ".join([model] + [text for _, text in parts])
    return line


def note_width(console: Console, plain: bool, err_file: TextIO) -> int | None:
    """The columns a note line may use: the console's, or a terminal's behind ``err_file``
    in plain mode (``None``: piped, no width)."""
    if not plain:
        return console.width
    try:
        return os.get_terminal_size(err_file.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


def fit_line(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs made single spaces) of at most ``width`` cells."""
    line = " ".join(text.split())
    if cell_len(line) > width:
        line = set_cell_size(line, max(0, width - 1)) + "…"
    return line


RESULT_PREVIEW = 110


class _Notes(Protocol):
    def note(self, text: str, style: str = "dim") -> None: ...


def result_line(result: ToolResult, preview: int = RESULT_PREVIEW) -> tuple[str, str]:
    """The line for ``result`` and its style (green for a result, red for an error)."""
    mark, style = ("✖", "red") if result.is_error else ("✓", "green")
    text = result.text
    if len(text) > preview:
        text = text[:preview - 1] + "…"
    return f"{mark} {result.name} → {text}", style


def show_result(sink: _Notes, result: ToolResult) -> None:
    """Draw ``result`` on ``sink`` (anything with ``note(text, style)``)."""
    line, style = result_line(result)
    sink.note(line, style=style)
