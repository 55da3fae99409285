"""The one-line pieces the render sink draws: tool calls, media, errors, the footer.

Every string that came from the model or the provider is sanitised here too.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from ..errors import CancelledStreamError, StreamflowError
from ..events import ContentItem
from .sanitize import sanitize
from .stats import StreamStats

__all__ = ["THINKING_STYLE", "error_line", "format_footer", "other_line", "tool_line"]

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


def error_line(error: BaseException) -> str:
    """``⏹ interrupted`` for a cancel, else ``✖ Type: message`` (sanitised)."""
    if isinstance(error, CancelledStreamError):
        return "⏹ interrupted — partial answer above"
    message = error.message if isinstance(error, StreamflowError) else str(error)
    retry = " (retryable)" if getattr(error, "retryable", False) else ""
    return sanitize(f"✖ {type(error).__name__}: {message}{retry}")


def format_footer(stats: StreamStats, prices: tuple[float, float] | None = None) -> str:
    """``model · 12 in · 345 out · TTFT 0.42s · 85.3 tok/s · $0.0012 · stop``."""
    parts: list[str] = [sanitize(stats.model or "unknown model")]
    if stats.input_tokens is not None:
        parts.append(f"{stats.input_tokens:,} in")
    if stats.output_tokens is not None:
        parts.append(f"{stats.output_tokens:,} out")
    if stats.ttft_s is not None:
        parts.append(f"TTFT {stats.ttft_s:.2f}s")
    rate = stats.tokens_per_s
    if rate is not None:
        parts.append(f"{rate:.1f} tok/s")
    cost = stats.cost(prices)
    if cost is not None:
        parts.append(f"${cost:.4f}")
    if stats.finish_reason:
        parts.append(stats.finish_reason)
    return " · ".join(parts)
