"""``streamflow inspect``: decode a recorded response body and print the assembled message.

The body is read in chunks and fed to :class:`~streamflow.decoder.StreamDecoder`, so
inspecting a recording goes through exactly the code a live stream does: same
framing rules, same dialect detection, same typed errors. ``--json`` prints
``Message.to_dict()`` (plus ``"error"`` when the stream failed); the default is a
short human summary. Model text is untrusted: control characters are shown as
visible ``\\xNN`` escapes, never written raw to the terminal.

Exit codes: 0 the stream decoded completely; 1 it failed (the partial message is
still printed, the error goes to stderr, or into the JSON); 2 the file could not
be read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

from ..decoder import StreamDecoder
from ..dialects import dialect_names
from ..errors import IncompleteStreamError, ProviderError, StreamflowError
from ..events import (
    ContentItem,
    EmbeddingItem,
    InlineDataItem,
    InlineThinkingItem,
    TextItem,
    ThinkingItem,
    ToolCallItem,
)
from ..framing import FRAMERS
from ..message import Message

__all__ = ["InspectResult", "add_arguments", "inspect_body", "render", "run", "sanitize",
           "to_json"]

CHUNK_SIZE = 1 << 16
NDJSON_SUFFIXES = (".jsonl", ".ndjson")
CUT_EVENT_HINT = ("the body ends inside an unterminated SSE event (no blank line after it), "
                  "which the SSE rules discard; if this recording lost its final blank line, "
                  "rerun with --complete-last-event")

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1_IN_JSON = re.compile("[\x7f-\x9f]")


def sanitize(text: str) -> str:
    """``text`` made safe for a terminal: C0/C1 controls except newline and tab become ``\\xNN``.

    An ESC sequence thus loses its ESC and prints as inert text (``\\x1b[2J``).
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow inspect``."""
    parser.add_argument("file", metavar="FILE",
                        help="the raw response body as recorded, or - to read standard input")
    parser.add_argument("--dialect", default="auto", choices=["auto", *dialect_names()],
                        help="wire format (default: detected from the first event)")
    parser.add_argument("--framing", default="auto", choices=["auto", *FRAMERS],
                        help="byte framing (default: the dialect's own; ndjson for .jsonl files)")
    parser.add_argument("--json", action="store_true",
                        help="print the message as JSON (Message.to_dict(), plus 'error')")
    parser.add_argument("--complete-last-event", action="store_true",
                        help="treat the end of the file as the end of a last SSE event that "
                             "lacks its blank line (recordings stored without it)")


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


def resolve_framing(framing: str, filename: str) -> str | None:
    """The framing to force: the explicit choice, ``ndjson`` for a ``.jsonl`` file, else None."""
    if framing != "auto":
        return framing
    return "ndjson" if filename.lower().endswith(NDJSON_SUFFIXES) else None


def inspect_body(source: BinaryIO, dialect: str = "auto", framing: str | None = None, *,
                 complete_last_event: bool = False) -> InspectResult:
    """Decode the body read from ``source``; a streamflow error is returned, not raised.

    ``OSError`` from reading ``source`` propagates.
    """
    decoder = StreamDecoder(dialect, framing=framing)
    error: StreamflowError | None = None
    try:
        while chunk := source.read(CHUNK_SIZE):
            decoder.feed(chunk)
        if complete_last_event and decoder.framing == "sse":
            decoder.feed(b"\n\n")
        decoder.close()
    except StreamflowError as exc:
        error = exc
    message = error.partial if error is not None and error.partial is not None \
        else decoder.message
    return InspectResult(message, error, decoder.dialect, decoder.framing,
                         bool(getattr(decoder.framer, "incomplete", False)))


def _error_dict(result: InspectResult) -> dict[str, Any] | None:
    if result.error is None:
        return None
    out = result.error.to_dict()
    if result.cut_event and isinstance(result.error, IncompleteStreamError):
        out["hint"] = CUT_EVENT_HINT
    return out


def to_json(result: InspectResult) -> str:
    """``Message.to_dict()`` as indented JSON, with ``"error"`` added when the stream failed.

    Non-ASCII text stays readable; C1 controls are escaped (JSON already escapes C0).
    """
    data = result.message.to_dict()
    error = _error_dict(result)
    if error is not None:
        data["error"] = error
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return _C1_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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
    return [prefix + line if line else prefix.rstrip() for line in sanitize(text).split("\n")]


def _notes(title: str, data: dict[str, Any] | None) -> str:
    if not data:
        return ""
    parts = [f"{k} ({len(v)} chars)" if isinstance(v, str) else k for k, v in data.items()]
    return f"  {title}: {', '.join(sanitize(p) for p in parts)}"


def _item_lines(item: ContentItem, style: _Style) -> list[str]:
    tag = item.kind + (", unfinished" if item.type.endswith(".delta") else "")
    head = style.bold(f"[{tag}]")
    body: list[str] = []
    if isinstance(item, ThinkingItem):
        body = [style.dim(line) for line in _indent(item.thinking, "  | ")]
    elif isinstance(item, TextItem):
        body = _indent(item.text)
    elif isinstance(item, ToolCallItem):
        head += f" {sanitize(item.name)}  id={sanitize(item.tool_call_id)}"
        args = item.arguments
        shown = json.dumps(args, indent=2, ensure_ascii=False) if isinstance(args, dict) else args
        body = _indent(shown) if shown else []
    elif isinstance(item, InlineDataItem):
        head += f" {sanitize(item.mime_type) or '?'}, {len(item.data)} bytes"
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
    return sanitize(", ".join(parts))


def render(result: InspectResult, colour: bool = False) -> str:
    """The human-readable summary of a decoded body (stdout part; errors are separate)."""
    style = _Style(colour)
    msg = result.message
    dialect = result.dialect or "not detected"
    lines = [
        f"id        {sanitize(msg.id or '-')}",
        f"model     {sanitize(msg.model or '-')}",
        f"dialect   {dialect}" + (f" ({result.framing} framing)" if result.framing else ""),
        f"status    {'complete' if msg.complete else 'partial (the stream failed)'}",
        "",
    ]
    for item in msg.items:
        lines += _item_lines(item, style)
    if not msg.items:
        lines.append(style.dim("(no items)"))
    lines += ["", f"usage     {_usage_line(msg)}", f"finish    {msg.finish_reason or '-'}"]
    extras = _extras_line(msg.provider)
    if extras:
        lines.append(style.dim(f"provider  {extras}"))
    return "\n".join(lines)


def render_error(result: InspectResult, colour: bool = False) -> str:
    """The stderr lines for a failed stream: the error, and a hint when there is one."""
    error = result.error
    if error is None:
        return ""
    name = type(error).__name__
    if isinstance(error, ProviderError) and (error.type or error.code is not None):
        name += f" [{error.type or error.code}]"
    lines = [_Style(colour).red(f"error: {name}: {sanitize(error.message)}")]
    hint = (_error_dict(result) or {}).get("hint")
    if hint:
        lines.append(f"hint: {hint}")
    return "\n".join(lines)


def _is_terminal(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def run(args: argparse.Namespace) -> int:
    """Execute ``streamflow inspect``; returns the exit code."""
    framing = resolve_framing(args.framing, args.file)
    try:
        if args.file == "-":
            result = inspect_body(sys.stdin.buffer, args.dialect, framing,
                                  complete_last_event=args.complete_last_event)
        else:
            with open(args.file, "rb") as source:
                result = inspect_body(source, args.dialect, framing,
                                      complete_last_event=args.complete_last_event)
    except OSError as exc:
        print(f"streamflow inspect: cannot read {args.file}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    if args.json:
        print(to_json(result))
    else:
        print(render(result, _is_terminal(sys.stdout)))
        if result.error is not None:
            print(render_error(result, _is_terminal(sys.stderr)), file=sys.stderr)
    return 0 if result.error is None else 1
