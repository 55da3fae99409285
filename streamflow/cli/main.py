"""The ``streamflow`` command: an argparse front end over a registry of subcommands.

Adding a subcommand is one module plus one line in :data:`COMMANDS`. The module
exposes::

    def add_arguments(parser: argparse.ArgumentParser) -> None: ...   # its options
    def run(args: argparse.Namespace) -> int: ...                      # the exit code
    EXTRA = "gateway"    # optional: the extra to name when an optional package is missing

(``add_parser(subparsers) -> ArgumentParser`` is accepted instead of
``add_arguments`` for a module that wants to build its own sub-parser.) Only the
module of the command being run is imported, so a module may import heavy
libraries at its top, and ``streamflow --help`` stays fast; the registry's help
line is what ``--help`` shows for the others.

Exit codes, the same for every command: 0 success; 1 a stream that failed (a
streamflow error; what arrived before it is still shown or written); 2 bad usage,
input that cannot be read or is not a stream of any known dialect, or a missing
extra (one line naming it: ``pip install 'streamflow-llm[web]'``); 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import Any

from .._extras import extra_for, install_line

__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE",
           "build_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1  # a stream that failed
EXIT_USAGE = 2  # bad usage, unreadable input, not a stream, a missing extra
EXIT_INTERRUPTED = 130
EXIT_CODES = ("Exit codes, the same for every command: 0 success; 1 a stream that failed; "
              "2 bad usage, unreadable input, not a stream of any known dialect, or a "
              "missing extra; 130 interrupted.")

COMMANDS: dict[str, tuple[str, str]] = {
    "convert": ("streamflow.cli.convert", "re-write a recorded body as another target"),
    "demo": ("streamflow.cli.demo", "stream a tool-using conversation end to end (no key needed)"),
    "gateway": ("streamflow.cli.gateway", "serve the Anthropic and OpenAI APIs over any upstream"),
    "inspect": ("streamflow.cli.inspect",
                "decode a recorded response body and print the assembled message"),
    "replay": ("streamflow.cli.replay", "render a recorded response body as it streamed"),
}
"""Subcommand name -> (module, one-line help)."""


def _version() -> str:
    from .. import _build
    from .._extras import VERSION as __version__

    return f"{__version__}, {_build.describe()}"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; the sub-parser of ``command`` (if registered) is complete."""
    parser = argparse.ArgumentParser(
        prog="streamflow",
        description="LLM provider streams as one typed, lossless, provider-neutral event model.",
        epilog=EXIT_CODES)
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

    The codes are those of the module doc: 0 success, 1 a stream that failed, 2 bad
    usage, unreadable input, not a stream, or a missing extra; 130 interrupted.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = _selected(args_list)
    try:
        return _main(args_list, command)
    except KeyboardInterrupt:  # Ctrl-C a command does not handle itself (or at start-up)
        print("streamflow: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ImportError as exc:
        missing = _missing_optional(exc)
        if missing is None:  # not an optional dependency: a real bug, shown as itself
            raise
        module, extra = missing
        extra = getattr(_command_module(command), "EXTRA", None) or extra
        name = f"streamflow {command}" if command in COMMANDS else "streamflow"
        print(f"{name}: {module} is not installed; it comes with the {extra} extra: "
              f"{install_line(extra)} (in a clone: pip install -e '.[{extra}]')",
              file=sys.stderr)
        return EXIT_USAGE


def _missing_optional(exc: BaseException | None) -> tuple[str, str] | None:
    """(top-level module, extra) of the optional package whose absence caused ``exc``."""
    while exc is not None:
        if isinstance(exc, ModuleNotFoundError):
            extra = extra_for(exc.name)
            if extra is not None and exc.name:
                return exc.name.partition(".")[0], extra
        exc = exc.__cause__ or exc.__context__
    return None


def _command_module(command: str | None) -> ModuleType | None:
    """The already imported module of ``command``, if any."""
    if command not in COMMANDS:
        return None
    return sys.modules.get(COMMANDS[command][0])


def _main(args_list: list[str], command: str | None) -> int:
    parser = build_parser(command)
    try:
        args, extras = parser.parse_known_args(args_list)
        if extras:  # the subcommand's own usage, not the top level's
            getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # --help, --version, usage errors
        return _exit_code(exc.code)
    run: Any = args._run
    args._argv = args_list  # the command line as given (a command may start itself again)
    try:
        return int(run(args))
    except BrokenPipeError:
        # The reader went away (``streamflow inspect x | head``): exit quietly.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1
