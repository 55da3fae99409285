"""``streamflow demo --web``: the demo conversation as a local chat page (no build step).

:func:`demo_app` is a starlette app: ``/`` is a plain HTML page, ``/static/`` its
script and stylesheet (shipped in the package, nothing fetched from the internet),
``/api/config`` what the page shows before it asks, and ``POST /api/chat`` the
Agent run of the demo as an AI SDK v5 UI message stream (see
:func:`~streamflow.servers.web.ui_message_stream_response`). With a replay plan the bundled
recordings play over a loopback :class:`~streamflow.demo.server.DemoServer` started
for the app's lifetime; a live plan talks to the provider (same flags as the
terminal demo). A ``--base-url`` server given no ``--model`` is asked which model it
serves (``GET …/models``, what llama.cpp, vLLM and Ollama answer); that model is
named in the header and sent in the requests (if the server does not say, the
header shows the model the stream reports). The page runs the conversation once
per Ask and renders the answer's Markdown itself, building DOM nodes from text
(``textContent``), never parsing model text as HTML. :func:`serve_demo` binds
127.0.0.1, prints the URL and serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import socket
import sys
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from .._extras import require

require("streamflow demo --web", "web", "starlette", "uvicorn", "ag_ui")

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..app.agent import Agent, http_sender
from ..app.providers import Provider
from ..servers.web._drive import agent_run
from ..servers.web.responses import ui_message_stream_response
from . import DEMO_PROMPT
from .plan import Plan, base_url_for
from .server import DemoServer
from .session import PRICES, DemoOptions, demo_provider
from .tools import demo_tools

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


async def served_model(client: httpx.AsyncClient, plan: Plan) -> str | None:
    """The model a ``--base-url`` server says it serves (its first), or ``None``.

    Asks ``GET {base}/models`` (``/v1/models`` on a base without a version), the
    OpenAI-style list llama.cpp, vLLM and Ollama answer; any failure is ``None``.
    """
    if not plan.base_url:
        return None
    base = base_url_for("openai-chat", plan.base_url).rstrip("/")
    headers = {"authorization": f"Bearer {plan.api_key}"} if plan.api_key else {}
    try:
        response = await client.get(base + "/models", headers=headers, timeout=5.0)
        models = response.json()["data"] if response.status_code == 200 else None
        first = models[0]["id"] if isinstance(models, list) and models else None
    except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError):
        return None
    return first if isinstance(first, str) and first.strip() else None


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
            app.state.client = await stack.enter_async_context(httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, read=600.0), trust_env=plan.live))
            app.state.base_url = base_url
            app.state.provider = None  # built on first use: it may ask the server its model
            app.state.model_known = True
            app.state.lock = anyio.Lock()
            yield

    async def provider_of(state: Any) -> Provider:
        async with state.lock:
            if state.provider is None:
                chosen = options
                if plan.live and plan.base_url and not options.model:
                    model = await served_model(state.client, plan)
                    state.model_known = model is not None
                    chosen = dataclasses.replace(options, model=model) if model else options
                state.provider = demo_provider(plan, chosen, state.base_url)
            return state.provider  # type: ignore[no-any-return]

    async def page(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), headers=SECURITY_HEADERS)

    async def config(request: Request) -> Response:
        provider = await provider_of(request.app.state)
        return JSONResponse({
            "prompt": options.prompt or DEMO_PROMPT, "live": plan.live,
            "dialect": plan.dialect, "reason": plan.reason,
            "model": provider.model if request.app.state.model_known else None,
            "prices": None if plan.base_url else PRICES.get(provider.model)})

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
        agent = Agent(await provider_of(state), demo_tools(), http_sender(state.client),
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
