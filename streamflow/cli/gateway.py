"""``streamflow gateway``: serve the translating gateway (needs the ``gateway`` extra).

::

    streamflow gateway --listen 127.0.0.1:8787 \\
        --upstream https://generativelanguage.googleapis.com --upstream-dialect gemini \\
        --api-key-env GEMINI_API_KEY

Clients speak Anthropic (``POST /v1/messages``), OpenAI chat
(``/v1/chat/completions``) or OpenAI Responses (``/v1/responses``) to it; the
gateway speaks ``--upstream-dialect`` to ``--upstream`` (a base URL as the official
SDKs take it: OpenAI's ends in ``/v1``). Without ``--api-key-env`` the client's own
key is forwarded. A client option the upstream's format cannot carry is refused
with a 400 naming it; ``--drop-unsupported`` drops such options instead (logged).
Needs the ``gateway`` extra (starlette, uvicorn). Exit codes: 0 after a clean
shutdown (Ctrl-C), 2 bad usage or the extra missing.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..dialects import request_names

__all__ = ["EXTRA", "add_arguments", "run"]

EXTRA = "gateway"
"""The extra this command needs (named when one of its packages is missing)."""


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``streamflow gateway``."""
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
    parser.add_argument("--drop-unsupported", action="store_true",
                        help="drop client options the upstream cannot carry "
                             "(default: refuse the request with a 400 naming them)")
    parser.add_argument("--log-level", default="info",
                        choices=["critical", "error", "warning", "info", "debug"])


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    import uvicorn  # a missing extra is reported by the command line (cli.main)

    from ..gateway import create_app

    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            print(f"streamflow gateway: ${args.api_key_env} is not set", file=sys.stderr)
            return 2
    app = create_app(args.upstream, args.upstream_dialect, api_key=api_key, model=args.model,
                     drop_unsupported=args.drop_unsupported)
    host, port = args.listen
    uvicorn.run(app, host=host, port=port, log_level=args.log_level)
    return 0
