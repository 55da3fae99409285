"""``streamflow convert``: a recorded body re-written as another target.

``streamflow convert FILE|- --target TARGET [--from auto] [-o OUT] [--option KEY=VALUE]``
reads the body in chunks through :class:`~streamflow.wire.decoder.StreamDecoder` and
writes each event's bytes through the target's encoder as it is decoded (never the
whole body in memory). A stream that fails is written with the target's in-band
error event, and the error is reported on stderr. ``--option`` passes an encoder
flavour (``--option reasoning=reasoning_content`` for openai-chat).

``FILE`` may be ``-`` (standard input) or the name of a bundled recording
(``anthropic-turn1.sse``). Some targets need an extra (``ag-ui``: the ``web`` extra);
without it the command says so in one line.

Exit codes: 0 converted; 1 the stream failed (the body written so far ends with the
target's error event); 2 the input could not be read, is not a stream of any known
dialect (nothing is written), or an option is wrong.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO, Literal, get_args, get_origin, get_type_hints

from ..core.errors import StreamflowError
from ..core.events import UniEvent
from ..wire.decoder import StreamDecoder
from ..wire.dialects import dialect_names, encoder_names, get_encoder
from ..wire.framing import FRAMERS
from .bundled import bundled_help, resolve_path, why_unreadable
from .detect import EXIT_NOT_A_STREAM, not_a_stream
from .inspect import CHUNK_SIZE, resolve_framing

__all__ = ["add_arguments", "convert_body", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow convert``."""
    parser.add_argument("file", metavar="FILE",
                        help="the raw response body as recorded, - to read standard input, "
                             f"or a bundled recording ({bundled_help()})")
    parser.add_argument("--target", "--to", dest="target", required=True, choices=encoder_names(),
                        metavar="TARGET", help=f"what to write: {', '.join(encoder_names())}")
    parser.add_argument("--from", dest="source", default="auto",
                        choices=["auto", *dialect_names()],
                        help="source dialect (default: detected from the first event)")
    parser.add_argument("--framing", default="auto", choices=["auto", *FRAMERS],
                        help="source framing (default: the dialect's own; ndjson for .jsonl)")
    parser.add_argument("-o", "--output", default="-", metavar="OUT",
                        help="where to write the converted body (default: standard output)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an encoder option (flavour), e.g. reasoning=reasoning_content")


def _events(source: BinaryIO, decoder: StreamDecoder) -> Iterator[UniEvent]:
    while chunk := source.read(CHUNK_SIZE):
        yield from decoder.feed(chunk)
    yield from decoder.close()


def convert_body(source: BinaryIO, out: BinaryIO, target: str, source_dialect: str = "auto",
                 framing: str | None = None, **flavour: Any) -> StreamflowError | None:
    """Re-write the body read from ``source`` in ``target`` onto ``out``, as it decodes.

    Returns the stream's error (already written in-band), or ``None``. A body that
    is no stream of any known dialect (``source_dialect="auto"`` detected nothing)
    writes nothing and returns its error too. ``OSError`` from reading or writing
    propagates; a bad flavour raises ``TypeError``.
    """
    encoder = get_encoder(target)(**flavour)
    decoder = StreamDecoder(source_dialect, framing=framing)
    return _convert(source, out, encoder, decoder, source_dialect)


def _convert(source: BinaryIO, out: BinaryIO, encoder: Any, decoder: StreamDecoder,
             source_dialect: str) -> StreamflowError | None:
    events = _events(source, decoder)
    try:
        while True:
            try:
                event = next(events)
            except StopIteration:
                return None
            chunk = encoder.feed(event)
            if chunk:
                out.write(chunk)
                out.flush()
    except StreamflowError as exc:
        if not_a_stream(exc, source_dialect, decoder.dialect, decoder.framing) is not None:
            return exc  # bad input, not a failed stream: nothing to write
        for event in exc.events:  # decoded in the failing feed: delivered first
            out.write(encoder.feed(event))
        out.write(encoder.fail(exc))
        out.flush()
        return exc


class _OptionError(ValueError):
    """An ``--option`` the target does not take, or a value it cannot have."""


def _encoder_options(target: str) -> dict[str, inspect.Parameter]:
    """The options of target ``target`` a command line can set, by name: its encoder's
    keyword parameters of type ``str``, ``bool``, ``int``, ``str | None`` or a
    ``Literal`` (not, say, ``output``, a Python type)."""
    init = get_encoder(target).__init__
    hints = get_type_hints(init)
    return {name: param.replace(annotation=hints.get(name))
            for name, param in inspect.signature(init).parameters.items()
            if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)
            and name != "self" and _settable(hints.get(name))}


def _settable(hint: Any) -> bool:
    return hint in (str, bool, int, str | None) or get_origin(hint) is Literal


def _shape(param: inspect.Parameter) -> str:
    hint = param.annotation
    if hint is bool:
        values = "true|false"
    elif hint is int:
        values = "N"
    elif get_origin(hint) is Literal:
        values = "|".join(map(str, get_args(hint)))
    else:
        values = "TEXT"
    default = param.default
    shown = "" if default is None or default is param.empty else \
        f" (default {str(default).lower() if isinstance(default, bool) else default})"
    return f"{param.name}={values}{shown}"


def _describe_options(target: str) -> str:
    """``target``'s options in one phrase, for a usage error."""
    options = _encoder_options(target)
    if not options:
        return f"{target} takes no options"
    return f"{target} takes {', '.join(_shape(p) for p in options.values())}"


def _value(param: inspect.Parameter, value: str) -> Any:
    hint = param.annotation
    if hint is bool:
        if value.lower() not in ("true", "false"):
            raise _OptionError(f"--option {param.name} takes true or false, got {value!r}")
        return value.lower() == "true"
    if hint is int:
        try:
            return int(value)
        except ValueError:
            raise _OptionError(f"--option {param.name} takes a whole number, "
                               f"got {value!r}") from None
    if get_origin(hint) is Literal:
        choices = {str(choice): choice for choice in get_args(hint)}  # Literal[5, 6, 7] too
        if value not in choices:
            raise _OptionError(f"--option {param.name} takes one of "
                               f"{', '.join(choices)}, got {value!r}")
        return choices[value]
    return value


def _parse_options(target: str, pairs: list[str]) -> dict[str, Any]:
    """The ``--option KEY=VALUE`` pairs as target ``target``'s encoder keywords, typed.

    :class:`_OptionError` names a pair that is no ``KEY=VALUE``, an option ``target`` does
    not take (with the ones it does) or a value of the wrong kind.
    """
    options = _encoder_options(target)
    flavour: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _OptionError(f"--option takes KEY=VALUE, got {pair!r}")
        if key not in options:
            raise _OptionError(f"unknown --option {key!r}: {_describe_options(target)}")
        flavour[key] = _value(options[key], value)
    return flavour


def _open(name: str, mode: str, std: BinaryIO, verb: str) -> BinaryIO | None:
    """The file ``name`` (``-``: ``std``), or ``None`` after saying why it cannot be opened.

    An input may be the name of a bundled recording.
    """
    if name == "-":
        return std
    path = resolve_path(name) if mode == "rb" else None
    if mode == "rb" and path is None:
        print(f"streamflow convert: cannot read {name}: {why_unreadable(name)}",
              file=sys.stderr)
        return None
    try:
        return open(path or name, mode)  # type: ignore[return-value]  # binary: BinaryIO
    except OSError as exc:
        print(f"streamflow convert: cannot {verb} {name}: {exc.strerror or exc}",
              file=sys.stderr)
        return None


def _usage_error(args: argparse.Namespace, message: str) -> int:
    """What argparse does for a bad argument: the usage, the error, exit 2."""
    parser = getattr(args, "_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"streamflow convert: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Execute ``streamflow convert``; returns the exit code."""
    framing = resolve_framing(args.framing, args.file)
    try:
        flavour = _parse_options(args.target, args.option)
        get_encoder(args.target)(**flavour)  # an encoder's own check of a value (TypeError)
    except (TypeError, _OptionError) as exc:
        return _usage_error(args, f"{exc}: {_describe_options(args.target)}"
                            if isinstance(exc, TypeError) else str(exc))
    source = _open(args.file, "rb", sys.stdin.buffer, "read")
    if source is None:
        return 2
    out = _open(args.output, "wb", sys.stdout.buffer, "write")
    if out is None:
        return 2
    decoder = StreamDecoder(args.source, framing=framing)
    try:
        error = _convert(source, out, get_encoder(args.target)(**flavour), decoder, args.source)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
        if out is not sys.stdout.buffer:
            out.close()
    verdict = not_a_stream(error, args.source, decoder.dialect, decoder.framing)
    if verdict is not None:
        for line in verdict.lines(args.file, flag="--from"):
            print(line if line.startswith(" ") else f"streamflow convert: {line}",
                  file=sys.stderr)
        return EXIT_NOT_A_STREAM
    if error is not None:
        print(f"streamflow convert: the stream failed: {type(error).__name__}: {error.message}",
              file=sys.stderr)
        return 1
    return 0
