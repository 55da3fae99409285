"""``streamflow inspect``: decode a recorded response body and print the assembled message.

The body is read in chunks and fed to :class:`~streamflow.wire.decoder.StreamDecoder`, so
inspecting a recording goes through exactly the code a live stream does: same
framing rules, same dialect detection, same typed errors. ``--json`` prints
``Message.to_dict()`` (plus ``"error"`` when the stream failed); the default is a
short human summary. Model text is untrusted: control characters are shown as
visible ``\\xNN`` escapes, never written raw to the terminal.

``FILE`` may be ``-`` (standard input), the name of a bundled recording
(``anthropic-turn1.sse``: see :mod:`streamflow.cli.bundled`), or a streamflow
recording (``.sfrec.jsonl``, written by :class:`~streamflow.reactive.sinks.recorder.Recorder`):
its chunks are decoded with the dialect and framing its header names, and the
summary says how the recorded stream ended.

Exit codes: 0 the stream decoded completely; 1 it failed (the partial message is
still printed, the error goes to stderr, or into the JSON); 2 the file could not
be read, or is not a stream of any known dialect (what was tried is listed).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from ..core.errors import StreamflowError
from ..wire.decoder import StreamDecoder
from ..wire.dialects import dialect_names
from ..wire.framing import FRAMERS
from .bundled import bundled_help, resolve_path, why_unreadable
from .detect import EXIT_NOT_A_STREAM, not_a_stream
from .summary import InspectResult, escape_for_terminal, render, render_error
from .timeline_model import DEFAULT_STALL

if TYPE_CHECKING:
    pass

__all__ = ["InspectResult", "add_arguments", "inspect_body", "render", "run", "escape_for_terminal",
           "to_json"]

CHUNK_SIZE = 1 << 16
NDJSON_SUFFIXES = (".jsonl", ".ndjson")

_C1_IN_JSON = re.compile("[\x7f-\x9f]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow inspect``."""
    parser.add_argument("file", metavar="FILE",
                        help="the raw response body as recorded, - to read standard input, "
                             f"or a bundled recording ({bundled_help()})")
    parser.add_argument("--dialect", default="auto", choices=["auto", *dialect_names()],
                        help="dialect (default: detected from the first event)")
    parser.add_argument("--framing", default="auto", choices=["auto", *FRAMERS],
                        help="byte framing (default: the dialect's own; ndjson for .jsonl files)")
    parser.add_argument("--json", action="store_true",
                        help="print the message as JSON (Message.to_dict(), plus 'error')")
    parser.add_argument("--timeline", action="store_true",
                        help="draw a Recorder file's stream on its time axis: time to first "
                             "token, one bar per content group, stalls, tokens/s")
    parser.add_argument("--timeline-svg", metavar="OUT.svg", default=None,
                        help="write the timeline picture as SVG")
    parser.add_argument("--stall", type=float, default=DEFAULT_STALL, metavar="SECONDS",
                        help="a gap between chunks that counts as a stall (default: "
                             f"{DEFAULT_STALL:g})")
    parser.add_argument("--complete-last-event", action="store_true",
                        help="treat the end of the file as the end of a last SSE event that "
                             "lacks its blank line (recordings stored without it)")


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
    if result.hint:
        out["hint"] = result.hint
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


def _is_terminal(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _looks_like_recording(path: str) -> bool:
    with open(path, "rb") as f:
        return b"streamflow_recording" in f.readline(4096)


def _read(args: argparse.Namespace) -> InspectResult:
    """Decode ``args.file`` (a recording, a raw body, or ``-``); ``OSError`` propagates."""
    options = {"complete_last_event": args.complete_last_event}
    if args.file == "-":
        return inspect_body(sys.stdin.buffer, args.dialect,
                            resolve_framing(args.framing, args.file), **options)
    path = resolve_path(args.file)
    if path is None:
        raise FileNotFoundError(2, why_unreadable(args.file), args.file)
    if _looks_like_recording(str(path)):
        from ..core.recording import read_recording  # (the sinks package loads anyio)

        recording = read_recording(str(path))
        dialect = recording.dialect if args.dialect == "auto" and recording.dialect \
            else args.dialect
        framing = args.framing if args.framing != "auto" else recording.framing
        result = inspect_body(io.BytesIO(recording.body), dialect, framing, **options)
        result.recording = recording
        return result
    with open(path, "rb") as source:
        return inspect_body(source, args.dialect, resolve_framing(args.framing, args.file),
                            **options)


def run(args: argparse.Namespace) -> int:
    """Execute ``streamflow inspect``; returns the exit code."""
    try:
        result = _read(args)
    except OSError as exc:
        print(f"streamflow inspect: cannot read {args.file}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except ValueError as exc:  # a recording with a broken line
        print(f"streamflow inspect: {args.file}: {exc}", file=sys.stderr)
        return 2
    verdict = not_a_stream(result.error, args.dialect if result.recording is None else
                           result.recording.dialect or args.dialect,
                           result.dialect, result.framing)
    if verdict is not None:
        if args.json:
            print(to_json(result))
        for line in verdict.lines(args.file):
            print(f"streamflow inspect: {line}" if not line.startswith(" ") else line,
                  file=sys.stderr)
        return EXIT_NOT_A_STREAM
    if args.timeline or args.timeline_svg:
        from .timeline import show_timeline

        return show_timeline(args, result)
    if args.json:
        print(to_json(result))
    else:
        print(render(result, _is_terminal(sys.stdout)))
        if result.error is not None:
            print(render_error(result, _is_terminal(sys.stderr)), file=sys.stderr)
    return 0 if result.error is None else 1
