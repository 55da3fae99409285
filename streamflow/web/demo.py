"""``streamflow demo --web``: the demo conversation as a local chat page (no build step).

:func:`demo_app` is a starlette app: ``/`` is a plain HTML page, ``/static/`` its
script and stylesheet (shipped in the package, nothing fetched from the internet),
``/api/config`` what the page shows before it asks, and ``POST /api/chat`` the
Agent run of the demo as an AI SDK v5 UI message stream (see
:func:`~streamflow.web.ui_message_stream_response`). With a replay plan the bundled
recordings play over a loopback :class:`~streamflow.demo.server.DemoServer` started
for the app's lifetime; a live plan talks to the provider (same flags as the
terminal demo). The page inserts model text as text nodes, never as HTML.
:func:`serve_demo` binds 127.0.0.1, prints the URL and serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..agent import Agent, http_sender
from ..demo import DEMO_PROMPT
from ..demo.plan import Plan
from ..demo.server import DemoServer
from ..demo.session import PRICES, DemoOptions, _provider
from ..demo.tools import demo_tools
from .drive import agent_run
from .responses import ui_message_stream_response

__all__ = ["demo_app", "serve_demo"]

STATIC = resources.files(__package__) / "static"
MAX_PROMPT = 4000  # characters of a live prompt the page may send
# The page runs only its own script; model text could not run anything even if it
# were inserted as HTML (it is not: the script uses text nodes).
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'self'; img-src 'self' data:; media-src 'self' "
                                "data:; object-src 'none'; base-uri 'none'; frame-ancestors "
                                "'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def demo_app(plan: Plan, options: DemoOptions | None = None) -> Starlette:
    """The chat page app for ``plan`` (replay or live) with the terminal demo's ``options``."""
    options = options or DemoOptions()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            base_url = None
            if not plan.live:
                server = DemoServer(plan.dialect, fast=options.fast)
                await stack.enter_async_context(server)
                base_url = server.base_url
            app.state.provider = _provider(plan, options, base_url)
            app.state.client = await stack.enter_async_context(httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, read=600.0), trust_env=plan.live))
            yield

    async def page(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), headers=SECURITY_HEADERS)

    async def config(request: Request) -> Response:
        provider = request.app.state.provider
        return JSONResponse({
            "prompt": options.prompt or DEMO_PROMPT, "live": plan.live,
            "dialect": plan.dialect, "reason": plan.reason, "model": provider.model,
            "prices": PRICES.get(provider.model)})

    async def chat(request: Request) -> Response:
        prompt = options.prompt or DEMO_PROMPT
        if plan.live:
            try:
                asked = (await request.json()).get("prompt")
            except (ValueError, AttributeError):
                asked = None
            if isinstance(asked, str) and asked.strip():
                prompt = asked.strip()[:MAX_PROMPT]
        state = request.app.state
        agent = Agent(state.provider, demo_tools(), http_sender(state.client),
                      max_turns=options.max_turns)
        return ui_message_stream_response(agent_run(agent, prompt))

    return Starlette(routes=[
        Route("/", page),
        Route("/api/config", config),
        Route("/api/chat", chat, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[(__package__, "static")]), name="static"),
    ], lifespan=lifespan)


def serve_demo(args: argparse.Namespace, plan: Plan) -> int:
    """Serve the page on 127.0.0.1 (``args.port``, 0: any free port) until Ctrl-C; exit code."""
    options = DemoOptions(fast=args.fast, prompt=args.prompt, model=args.model,
                          max_turns=args.max_turns, thinking_budget=args.thinking_budget)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts
    except OSError as exc:
        print(f"streamflow demo: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 2
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    where = "live" if plan.live else "bundled recording"
    print(f"streamflow demo · {plan.dialect} · {where} ({plan.reason})", file=sys.stderr)
    print(f"open {url} in your browser (Ctrl-C stops)", flush=True)
    config: Any = uvicorn.Config(demo_app(plan, options), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0
