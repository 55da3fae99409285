"""``streamflow gateway``: serve the translating gateway (needs the ``gateway`` extra).

::

    streamflow gateway --listen 127.0.0.1:8787 \\
        --upstream https://generativelanguage.googleapis.com --upstream-dialect gemini \\
        --api-key-env GEMINI_API_KEY

Clients speak Anthropic (``POST /v1/messages``), OpenAI chat
(``/v1/chat/completions``) or OpenAI Responses (``/v1/responses``) to it; the
gateway speaks ``--upstream-dialect`` to ``--upstream`` (a base URL as the official
SDKs take it: OpenAI's ends in ``/v1``). Without ``--api-key-env`` the client's own
key is forwarded. A client option the upstream's dialect cannot carry is refused
with a 400 naming it; ``--drop-unsupported`` drops such options instead (one INFO
line per option, shown at the default ``--log-level info``).
``--fallback URL --fallback-dialect D`` (repeatable; ``--fallback-key-env``,
``--fallback-model`` by position) adds upstreams an answer goes on at when the ones
before fail -- before the first byte, or mid-answer, continued where it stopped
(:mod:`streamflow.app.failover`); ``--tries``, ``--first-chunk-timeout`` and
``--stall-timeout`` say when. ``--carry-key-env`` names the variable holding the key
that signs replay-state
tokens (give every instance behind one address the same key; without it a random
per-process key is used, with a warning). The request limits (``--max-body-bytes``,
``--max-json-depth``...) and the server's timeouts and caps (``--header-timeout``,
``--keep-alive-timeout``, ``--max-connections``, ``--max-header-bytes``) default to
the values in ``docs/SECURITY.md``. ``--workers N`` runs N gateway processes on one
listening socket, restarted if they die (``cli._workers``). Needs the ``gateway`` extra (starlette,
uvicorn). Exit codes: 0 after a clean shutdown (Ctrl-C), 2 bad usage or the
extra missing.
"""

from __future__ import annotations

import argparse
import copy
import os
import socket
import sys
from typing import Any

from ..wire.dialects import request_names

__all__ = ["EXTRA", "add_arguments", "run"]

EXTRA = "gateway"
"""The extra this command needs (named when one of its packages is missing)."""


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def _workers(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes (1 or more), "
                                         f"got {value!r}")
    return int(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow gateway`` (the defaults need the extra)."""
    from ..servers.gateway.limits import DEFAULT_GATEWAY_LIMITS
    from ..servers.gateway.server import DEFAULT_SERVER_LIMITS, HTTP_PARSERS

    parser.add_argument("--listen", type=_listen, default=("127.0.0.1", 8787),
                        metavar="HOST:PORT", help="where to listen (default: 127.0.0.1:8787)")
    parser.add_argument("--upstream", required=True, metavar="URL",
                        help="the upstream API's base URL")
    parser.add_argument("--upstream-dialect", required=True, choices=sorted(request_names()),
                        help="the dialect the upstream speaks")
    parser.add_argument("--api-key-env", metavar="VAR",
                        help="environment variable holding the upstream's API key "
                             "(default: forward the client's key)")
    parser.add_argument("--model", help="use this upstream model whatever the client asks for")
    chain = parser.add_argument_group(
        "failover (an answer goes on at a fallback when the upstream fails, even mid-answer)")
    chain.add_argument("--fallback", action="append", default=[], metavar="URL",
                       help="a fallback upstream's base URL, tried after the upstream (and "
                            "the fallbacks before it); repeatable, each with its "
                            "--fallback-dialect")
    chain.add_argument("--fallback-dialect", action="append", default=[],
                       choices=sorted(request_names()),
                       help="the dialect of the --fallback of the same position")
    chain.add_argument("--fallback-key-env", action="append", default=[], metavar="VAR",
                       help="the variable holding the API key of the --fallback of the same "
                            "position ('-': forward the client's key, the default)")
    chain.add_argument("--fallback-model", action="append", default=[], metavar="MODEL",
                       help="the model the --fallback of the same position is asked for "
                            "('-': the client's)")
    chain.add_argument("--tries", type=_workers, default=1, metavar="N",
                       help="attempts each upstream gets before the next (default: 1)")
    chain.add_argument("--first-chunk-timeout", type=float, metavar="S",
                       help="seconds an upstream has to send its first chunk (then the "
                            "next is tried)")
    chain.add_argument("--stall-timeout", type=float, metavar="S",
                       help="seconds without a chunk before an upstream counts as stalled "
                            "(default: the idle timeout, 600)")
    parser.add_argument("--drop-unsupported", action="store_true",
                        help="drop client options the upstream cannot carry "
                             "(default: refuse the request with a 400 naming them)")
    parser.add_argument("--carry-key-env", metavar="VAR",
                        help="environment variable holding the key signing replay-state tokens "
                             "(default: a random per-process key)")
    request, server = DEFAULT_GATEWAY_LIMITS, DEFAULT_SERVER_LIMITS
    limits = parser.add_argument_group("limits (see docs/SECURITY.md)")
    for flag, kind, default, words in (
            ("--max-body-bytes", int, request.max_body_bytes, "request body size (413 over it)"),
            ("--body-timeout", float, request.body_timeout, "seconds to receive a body (408)"),
            ("--max-json-depth", int, request.max_json_depth, "JSON nesting depth"),
            ("--max-items", int, request.max_items, "elements of any one JSON array"),
            ("--max-messages", int, request.max_messages, "messages of one request"),
            ("--max-tokens", int, request.max_tokens, "largest output-token count forwarded"),
            ("--header-timeout", float, server.header_timeout,
             "seconds to receive a request's head"),
            ("--keep-alive-timeout", float, server.keep_alive_timeout,
             "seconds an idle kept-alive connection stays open"),
            ("--max-connections", int, server.max_connections,
             "concurrent connections (503 over it)"),
            ("--max-header-bytes", int, server.max_header_bytes,
             "size of a request's line and headers")):
        limits.add_argument(flag, type=kind, default=default, metavar="N",
                            help=f"{words} (default: {default})")
    parser.add_argument("--http", default="auto", choices=HTTP_PARSERS,
                        help="uvicorn's HTTP parser, both with the limits above (default: "
                             "httptools when it is installed, else h11)")
    parser.add_argument("--workers", type=_workers, default=1, metavar="N",
                        help="gateway processes sharing the listening socket, restarted if "
                             "they die (default: 1; about one per core)")
    parser.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker's socket
    parser.add_argument("--log-level", default="info",
                        choices=["critical", "error", "warning", "info", "debug"],
                        help="the server's and the gateway's log lines on stderr (default: "
                             "info, which shows each dropped option)")


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging configuration plus the ``streamflow`` loggers (the gateway's
    ``streamflow.servers.gateway``: dropped options, upstream failures, a client that left) on
    the same handler, at ``level``; without it their INFO lines went nowhere. Every
    handler masks credentials (:class:`streamflow.wire.redaction.RedactingFilter`)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["streamflow"] = {"handlers": ["default"], "level": level.upper(),
                                       "propagate": False}
    # no credential in any line on stderr, uvicorn's included (an access line's ?key=)
    config.setdefault("filters", {})["redact"] = {"()": "streamflow.wire.redaction.RedactingFilter"}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact")
    return config


def _fallbacks(args: argparse.Namespace) -> list[Any]:
    """The ``--fallback`` upstreams, each with the options of its position (``ValueError``:
    a dialect missing, an option for no fallback, a key variable not set)."""
    from ..servers.gateway import Upstream

    urls, dialects = args.fallback, args.fallback_dialect
    if len(dialects) != len(urls):
        raise ValueError(f"{len(urls)} --fallback but {len(dialects)} --fallback-dialect: "
                         "give each fallback its dialect")
    for flag, values in (("--fallback-key-env", args.fallback_key_env),
                         ("--fallback-model", args.fallback_model)):
        if len(values) > len(urls):
            raise ValueError(f"more {flag} than --fallback")
    out = []
    for i, (url, dialect) in enumerate(zip(urls, dialects, strict=True)):
        variable = args.fallback_key_env[i] if i < len(args.fallback_key_env) else "-"
        key = None
        if variable != "-":
            key = os.environ.get(variable)
            if not key:
                raise ValueError(f"${variable} is not set")
        model = args.fallback_model[i] if i < len(args.fallback_model) else "-"
        out.append(Upstream(url, dialect, api_key=key, model=None if model == "-" else model))
    return out


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    import uvicorn  # a missing extra is reported by the command line (cli.main)

    from ..servers.gateway import create_app
    from ..servers.gateway.limits import GatewayLimits
    from ..servers.gateway.server import ServerLimits, server_config

    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            print(f"streamflow gateway: ${args.api_key_env} is not set", file=sys.stderr)
            return 2
    carry_key = None
    if args.carry_key_env:
        carry_key = os.environ.get(args.carry_key_env, "").encode()
        if not carry_key:
            print(f"streamflow gateway: ${args.carry_key_env} is not set", file=sys.stderr)
            return 2
    request_limits = GatewayLimits(
        max_body_bytes=args.max_body_bytes, body_timeout=args.body_timeout,
        max_json_depth=args.max_json_depth, max_items=args.max_items,
        max_messages=args.max_messages, max_tokens=args.max_tokens)
    server = ServerLimits(header_timeout=args.header_timeout,
                          keep_alive_timeout=args.keep_alive_timeout,
                          max_connections=args.max_connections,
                          max_header_bytes=args.max_header_bytes)
    host, port = args.listen
    if args.workers > 1 and args.listen_fd is None:
        from ._workers import supervise
        return supervise(args._argv, host, port, args.workers, args.carry_key_env)
    try:
        fallbacks = _fallbacks(args)
    except ValueError as exc:
        print(f"streamflow gateway: {exc}", file=sys.stderr)
        return 2
    from ..app.failover import Failover
    from ..servers.gateway import Upstream

    upstream = Upstream(args.upstream, args.upstream_dialect, api_key=api_key, model=args.model)
    failover = Failover([u.endpoint({}) for u in (upstream, *fallbacks)], tries=args.tries,
                        first_chunk_timeout=args.first_chunk_timeout,
                        stall_timeout=args.stall_timeout)
    app = create_app(upstream, drop_unsupported=args.drop_unsupported,
                     request_limits=request_limits, carry_key=carry_key, fallbacks=fallbacks,
                     failover=failover)
    if args.listen_fd is not None:  # a worker of --workers: serve the parent's socket
        from ._workers import die_with_parent
        die_with_parent()
        config = uvicorn.Config(app, log_level=args.log_level,
                                log_config=_log_config(args.log_level),
                                **server_config(server, args.http))
        uvicorn.Server(config).run(sockets=[socket.socket(fileno=args.listen_fd)])
        return 0
    uvicorn.run(app, host=host, port=port, log_level=args.log_level,
                log_config=_log_config(args.log_level), **server_config(server, args.http))
    return 0
