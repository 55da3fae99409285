"""The ``streamflow`` command: an argparse front end over a registry of subcommands.

Adding a subcommand is one module plus one line in :data:`COMMANDS`. The module
exposes::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...   # its options
    def run(args: argparse.Namespace) -> int: ...                      # the exit code

(``add_parser(subparsers) -> ArgumentParser`` is accepted instead of
``add_arguments`` for a module that wants to build its own sub-parser.) Only the
module of the command being run is imported, so a module may import heavy
libraries at its top, and ``streamflow --help`` stays fast; the registry's help
line is what ``--help`` shows for the others.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    "convert": ("streamflow.cli.convert", "re-write a recorded body in another wire format"),
    "demo": ("streamflow.cli.demo", "stream a tool-using conversation end to end (no key needed)"),
    "gateway": ("streamflow.cli.gateway", "serve the Anthropic and OpenAI APIs over any upstream"),
    "inspect": ("streamflow.cli.inspect",
                "decode a recorded response body and print the assembled message"),
    "replay": ("streamflow.cli.replay", "render a recorded response body as it streamed"),
}
"""Subcommand name -> (module, one-line help)."""


def _version() -> str:
    from .. import __version__, _build

    return f"{__version__}, {_build.describe()}"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; the sub-parser of ``command`` (if registered) is complete."""
    parser = argparse.ArgumentParser(
        prog="streamflow",
        description="LLM provider streams as one typed, lossless, provider-neutral event model.")
    parser.add_argument("--version", action="version", version=f"streamflow {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        if name != command:
            subparsers.add_parser(name, help=help_text, description=help_text)
            continue
        module = import_module(module_name)
        if hasattr(module, "add_arguments"):
            sub = subparsers.add_parser(name, help=help_text, description=help_text)
            module.add_arguments(sub)
        else:
            sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run, _parser=sub)
    return parser


def _selected(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the top level has no option taking a value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    0 success, 1 the stream failed (a streamflow error), 2 bad usage or unreadable
    input, 130 interrupted.
    """
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:  # Ctrl-C a command does not handle itself (or at start-up)
        print("streamflow: interrupted", file=sys.stderr)
        return 130


def _main(args_list: list[str]) -> int:
    parser = build_parser(_selected(args_list))
    try:
        args, extras = parser.parse_known_args(args_list)
        if extras:  # the subcommand's own usage, not the top level's
            getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # --help, --version, usage errors
        return _exit_code(exc.code)
    run: Any = args._run
    try:
        return int(run(args))
    except BrokenPipeError:
        # The reader went away (``streamflow inspect x | head``): exit quietly.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1
