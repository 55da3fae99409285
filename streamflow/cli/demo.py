"""``streamflow demo``: a two-turn, tool-using conversation, streamed, rendered, end to end.

With no API key it needs no network: a loopback replay server (real HTTP/1.1,
chunked, realistic pauses) plays the bundled recordings; with a key, or
``--base-url`` for any compatible server, the same command talks to the real
provider (see :mod:`streamflow.demo.plan` for the rules). Turn 1 thinks, speaks and
calls ``get_weather``; the dispatch sink runs it; the result goes back in the
provider's dialect; turn 2 answers; each turn ends with its usage footer.

Output piped (not a terminal): the answer text alone on stdout, everything else
(header, tool results, footers) on stderr. Ctrl-C stops the stream, closes the
connection, keeps the partial answer on screen marked as interrupted, exits 130.
Exit codes: 0 done, 1 the stream or the provider failed, 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

import anyio
from rich.console import Console

from ..app.providers import PROVIDERS
from ..core.errors import LimitExceededError, StreamflowError
from ..demo import DEMO_DIALECTS
from ..demo.plan import choose
from ..demo.session import DemoOptions, run_demo
from ..reactive.sinks.render import RenderSink

__all__ = ["EXIT_INTERRUPTED", "add_arguments", "run"]

EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow demo``."""
    parser.add_argument("--dialect", choices=list(PROVIDERS), default=None,
                        help="provider API to speak (default: anthropic; openai-chat with "
                             "--base-url)")
    parser.add_argument("--fast", action="store_true",
                        help="replay without the recorded pauses")
    parser.add_argument("--offline", action="store_true",
                        help="use the bundled recording even when an API key is set")
    parser.add_argument("--base-url", default=None, metavar="URL",
                        help="a compatible server to stream from (llama.cpp, vLLM, Ollama: "
                             "http://127.0.0.1:8080/v1)")
    parser.add_argument("--model", default=None, help="model name for a live provider")
    parser.add_argument("--prompt", default=None,
                        help="your own question (live providers only)")
    parser.add_argument("--max-turns", type=_positive, default=4, metavar="N",
                        help="stop after N requests (default: 4)")
    parser.add_argument("--thinking-budget", type=_non_negative, default=1024, metavar="TOKENS",
                        help="Anthropic extended thinking budget, 0 to disable (default: 1024)")
    parser.add_argument("--plain", action="store_true", default=None,
                        help="plain text output even on a terminal")
    parser.add_argument("--web", action="store_true",
                        help="serve the conversation as a chat page on 127.0.0.1 instead")
    parser.add_argument("--port", type=int, default=0, help="port for --web (default: any free)")
    parser.add_argument("--record", metavar="DIR", default=None,
                        help="record each turn to DIR/turnN.sfrec.jsonl (for replay and "
                             "inspect --timeline)")


def _at_least(low: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
    return value


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _at_least(1, text)


def _non_negative(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _at_least(0, text)


def _single(error: Exception) -> Exception:
    """The one error inside (nested) single-error exception groups, else ``error``."""
    while isinstance(error, ExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


async def _main(args: argparse.Namespace, render: RenderSink, state: dict[str, Any]) -> None:
    plan = state["plan"]
    options = DemoOptions(fast=args.fast, prompt=args.prompt, model=args.model,
                          max_turns=args.max_turns, thinking_budget=args.thinking_budget,
                          record=args.record)
    failure: list[Exception] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch_interrupt, tg.cancel_scope, state)
        try:
            await run_demo(plan, render, options)
        except Exception as exc:  # re-raised below, not wrapped in an ExceptionGroup
            failure.append(_single(exc))
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]


async def _watch_interrupt(scope: anyio.CancelScope, state: dict[str, Any]) -> None:
    """Turn SIGINT into a clean cancellation of the run (connection closed, partial kept)."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                state["interrupted"] = True
                scope.cancel()
                return
    except NotImplementedError:  # no signal receiver here (Windows): KeyboardInterrupt
        await anyio.sleep_forever()


def run(args: argparse.Namespace) -> int:
    """Run the demo; the exit code."""
    try:
        plan = choose(os.environ, dialect=args.dialect, base_url=args.base_url,
                      offline=args.offline)
    except ValueError as exc:
        print(f"streamflow demo: {exc}", file=sys.stderr)
        return 2
    if args.prompt and not plan.live:
        print("streamflow demo: --prompt needs a live provider (set ANTHROPIC_API_KEY or "
              "OPENAI_API_KEY, or pass --base-url); the bundled recording answers its own "
              "question", file=sys.stderr)
        return 2
    if plan.dialect not in DEMO_DIALECTS and not plan.live:
        print(f"streamflow demo: no bundled recording for {plan.dialect}", file=sys.stderr)
        return 2
    if args.web:
        from ..demo._web import serve_demo  # a missing web extra: one line (cli.main)

        return serve_demo(args, plan)
    render = RenderSink(Console(highlight=False), plain=args.plain)
    state: dict[str, Any] = {"plan": plan, "interrupted": False}
    try:
        anyio.run(_main, args, render, state)
    except KeyboardInterrupt:
        state["interrupted"] = True
    except LimitExceededError as exc:
        if exc.limit != "max_turns":
            render.on_error(exc)
            return 1
        turns = f"{exc.maximum} turn{'s' if exc.maximum != 1 else ''}"
        render.note(f"✖ stopped after {turns}: the model still asks for tools "
                    "(--max-turns)", style="red")
        return 1
    except StreamflowError as exc:
        render.on_error(exc)  # no-op when the render sink already showed it with the partial
        return 1
    if state["interrupted"]:
        render.interrupted()
        return EXIT_INTERRUPTED
    return 0
