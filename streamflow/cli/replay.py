"""``streamflow replay FILE``: render a recorded response as it streamed.

``FILE`` is a streamflow recording (``.sfrec.jsonl``, written by
:class:`~streamflow.reactive.sinks.recorder.Recorder`: chunks with their arrival times) or a
raw response body (``.sse``, ``.jsonl``, ``.bin``...), or the name of a bundled
demo recording (``anthropic-turn1.sse``). It goes through the same pipeline and the
same render sink as a live stream: ``--speed 1`` keeps the recorded pace (raw
bodies: one event every ``--interval`` seconds), ``--speed 4`` is four times
faster, ``--speed 0`` as fast as possible. The tool calls it shows are not run.

Exit codes: 0 the stream ended normally, 1 it failed (the partial answer stays on
screen with the error), 2 the file could not be read or is not a stream of any
known dialect (checked before anything is drawn), 130 interrupted.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

import anyio
from rich.console import Console

from ..app.runtime import run as run_stream
from ..core.errors import StreamflowError
from ..reactive.sinks.render import RenderSink
from ..reactive.sources.replay import ReplaySource
from ..wire.dialects import dialect_names
from ..wire.framing import FRAMERS
from .bundled import bundled_help, resolve_path, why_unreadable
from .detect import EXIT_NOT_A_STREAM, probe

__all__ = ["add_arguments", "resolve_path", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow replay``."""
    parser.add_argument("file", metavar="FILE",
                        help="a streamflow recording, a raw response body, or a bundled "
                             f"recording ({bundled_help()})")
    parser.add_argument("--speed", type=float, default=1.0, metavar="X",
                        help="pace: 1 as recorded, 2 twice as fast, 0 as fast as possible")
    parser.add_argument("--interval", type=float, default=0.02, metavar="SECONDS",
                        help="gap between the events of a raw body at speed 1 (default: 0.02)")
    parser.add_argument("--dialect", default="auto", choices=["auto", *dialect_names()],
                        help="dialect (default: the recording's, else detected)")
    parser.add_argument("--framing", default=None, choices=list(FRAMERS),
                        help="byte framing (default: the dialect's own; ndjson for .jsonl)")
    parser.add_argument("--plain", action="store_true", default=None,
                        help="plain text output even on a terminal")
    parser.add_argument("--no-thinking", action="store_true", help="hide visible reasoning")


async def _replay(source: ReplaySource, render: RenderSink, dialect: str,
                  state: dict[str, Any]) -> None:
    failure: list[Exception] = []
    async with anyio.create_task_group() as tg:
        async def watch() -> None:
            try:
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        state["interrupted"] = True
                        tg.cancel_scope.cancel()
                        return
            except NotImplementedError:
                await anyio.sleep_forever()

        tg.start_soon(watch)
        try:
            await run_stream(source, render, dialect=dialect, framing=source.framing)
        except Exception as exc:  # re-raised below, not wrapped in an ExceptionGroup
            failure.append(exc)
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]


def run(args: argparse.Namespace) -> int:
    """Replay the file; the exit code."""
    path = resolve_path(args.file)
    if path is None:
        print(f"streamflow replay: cannot read {args.file}: {why_unreadable(args.file)}",
              file=sys.stderr)
        return 2
    try:
        source = ReplaySource(path, speed=args.speed or None, interval=args.interval,
                              dialect=None if args.dialect == "auto" else args.dialect,
                              framing=args.framing)
    except (OSError, ValueError) as exc:
        print(f"streamflow replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    dialect = source.dialect or "auto"
    verdict = probe((chunk for _, chunk in source.timeline), source.framing) \
        if dialect == "auto" else None
    if verdict is not None:
        for line in verdict.lines(args.file):
            print(line if line.startswith(" ") else f"streamflow replay: {line}",
                  file=sys.stderr)
        return EXIT_NOT_A_STREAM
    render = RenderSink(Console(highlight=False), plain=args.plain,
                        show_thinking=not args.no_thinking, dialect=source.dialect)
    state: dict[str, Any] = {"interrupted": False}
    try:
        anyio.run(_replay, source, render, dialect, state)
    except KeyboardInterrupt:
        state["interrupted"] = True
    except StreamflowError as exc:
        render.on_error(exc)
        return 1
    if state["interrupted"]:
        render.interrupted()
        return 130
    return 0
