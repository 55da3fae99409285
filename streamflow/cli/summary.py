"""The human summary ``streamflow inspect`` prints: the message, item by item, sanitised.

Model and provider text is untrusted: control characters are shown as visible
``\\xNN`` escapes (:func:`escape_for_terminal`), never written raw to the terminal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import IncompleteStreamError, ProviderError, StreamflowError
from ..core.events import (
    ContentItem,
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ..core.message import Message

if TYPE_CHECKING:
    from ..core.recording import Recording

__all__ = ["InspectResult", "render", "render_error", "escape_for_terminal"]

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_for_terminal(text: str) -> str:
    """``text`` made safe for a terminal: C0/C1 controls except newline and tab become ``\\xNN``.

    An ESC sequence thus loses its ESC and prints as inert text (``\\x1b[2J``).
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class _Style:
    """ANSI styling, or none at all when not writing to a terminal."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)


def _indent(text: str, prefix: str = "  ") -> list[str]:
    lines = escape_for_terminal(text).split("\n")
    return [prefix + line if line else prefix.rstrip() for line in lines]


def _notes(title: str, data: dict[str, Any] | None) -> str:
    if not data:
        return ""
    parts = [f"{k} ({len(v)} chars)" if isinstance(v, str) else k for k, v in data.items()]
    return f"  {title}: {', '.join(escape_for_terminal(p) for p in parts)}"


def _item_lines(item: ContentItem, style: _Style) -> list[str]:
    tag = item.kind + (", unfinished" if item.type.endswith(".delta") else "")
    head = style.bold(f"[{tag}]")
    body: list[str] = []
    if isinstance(item, ThinkingItem):
        body = [style.dim(line) for line in _indent(item.thinking, "  | ")]
    elif isinstance(item, TextItem):
        body = _indent(item.text)
    elif isinstance(item, ToolCallItem):
        head += f" {escape_for_terminal(item.name)}  id={escape_for_terminal(item.tool_call_id)}"
        args = item.arguments
        shown = json.dumps(args, indent=2, ensure_ascii=False) if isinstance(args, dict) else args
        body = _indent(shown) if shown else []
    elif isinstance(item, InlineDataItem):
        head += f" {escape_for_terminal(item.mime_type) or '?'}, {len(item.data)} bytes"
    elif isinstance(item, InlineThinkingItem):
        head += f" {len(item.data)} bytes, opaque"
    elif isinstance(item, EmbeddingItem):
        head += f" {len(item.embedding)} dimensions"
    head += style.dim(_notes("fidelity", item.fidelity) + _notes("provider", item.provider))
    return [head, *body]


def _usage_line(message: Message) -> str:
    usage = message.usage_metadata
    if usage is None:
        return "-"
    parts = [f"{label} {value}" for label, value in (
        ("prompt", usage.prompt_tokens), ("cached", usage.cached_tokens),
        ("response", usage.response_tokens), ("thoughts", usage.thoughts_tokens),
        ("cost", usage.cost)) if value is not None]
    return ", ".join(parts) or "-"


def _extras_line(provider: dict[str, Any]) -> str:
    parts = []
    for key, value in provider.items():
        if key in ("id", "model"):
            continue
        if isinstance(value, (list, dict)):
            parts.append(f"{key}=[{len(value)}]")
        else:
            parts.append(f"{key}={value}")
    return escape_for_terminal(", ".join(parts))


def render(result: InspectResult, colour: bool = False) -> str:
    """The human-readable summary of a decoded body (stdout part; errors are separate)."""
    style = _Style(colour)
    msg = result.message
    dialect = result.dialect or "not detected"
    lines = [
        f"id        {escape_for_terminal(msg.id or '-')}",
        f"model     {escape_for_terminal(msg.model or '-')}",
        f"dialect   {dialect}" + (f" ({result.framing} framing)" if result.framing else ""),
        f"status    {'complete' if msg.complete else 'partial (the stream failed)'}",
    ]
    if result.recording is not None:
        lines.append(f"recorded  {_recorded(result.recording)}")
    lines.append("")
    for item in msg.items:
        lines += _item_lines(item, style)
    if not msg.items:
        lines.append(style.dim("(no items)"))
    lines += ["", f"usage     {_usage_line(msg)}", f"finish    {msg.finish_reason or '-'}"]
    extras = _extras_line(msg.provider)
    if extras:
        lines.append(style.dim(f"provider  {extras}"))
    return "\n".join(lines)


def _recorded(recording: Recording) -> str:
    end = recording.end or {}
    how = escape_for_terminal(str(end.get("end") or "cut (no end line)"))
    last = max([t for t, _ in recording.chunks] + [float(end.get("t") or 0.0)])
    chunks = len(recording.chunks)
    extra = f", attempt {recording.attempts}" if recording.attempts > 1 else ""
    return f"{how} after {last:.2f}s, {chunks} chunk{'s' if chunks != 1 else ''}{extra}"


def render_error(result: InspectResult, colour: bool = False) -> str:
    """The stderr lines for a failed stream: the error, and a hint when there is one."""
    error = result.error
    if error is None:
        return ""
    name = type(error).__name__
    if isinstance(error, ProviderError) and (error.type or error.code is not None):
        name += f" [{error.type or error.code}]"
    lines = [_Style(colour).red(f"error: {name}: {escape_for_terminal(error.message)}")]
    hint = result.hint
    if hint:
        lines.append(f"hint: {hint}")
    return "\n".join(lines)


CUT_EVENT_HINT = ("the body ends inside an unterminated SSE event (no blank line after it), "
                  "which the SSE rules discard; if this recording lost its final blank line, "
                  "rerun with --complete-last-event")


@dataclass(slots=True)
class InspectResult:
    """What decoding a body gave: the (possibly partial) message and the error, if any.

    ``cut_event`` is True when the body ended inside an unterminated framed event,
    which the framing rules discarded.
    """

    message: Message
    error: StreamflowError | None = None
    dialect: str | None = None
    framing: str | None = None
    cut_event: bool = False
    recording: Recording | None = None

    @property
    def hint(self) -> str | None:
        """What to try when the body was cut inside its last event."""
        if self.cut_event and isinstance(self.error, IncompleteStreamError):
            return CUT_EVENT_HINT
        return None
