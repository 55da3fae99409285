"""A chat app whose answers survive reconnects, other instances and restarts (Redis Streams).

Run two instances against one Redis (see README, "Survive reconnects and restarts")::

    REDIS_URL=redis://127.0.0.1:6399/0 uvicorn examples.resumable_chat:app --port 8001
    REDIS_URL=redis://127.0.0.1:6399/0 uvicorn examples.resumable_chat:app --port 8002

``POST /chat/{chat_id}`` starts a fresh answer (a bundled recording replayed at
``STREAMFLOW_DELAY`` seconds per SSE event, no API key) and streams it;
``GET /chat/{chat_id}/stream`` resumes it on any instance -- after the
``Last-Event-ID`` header when there is one -- or answers 204 when there is nothing
to resume. ``?to=vercel-ui`` or ``?to=ag-ui`` picks a UI protocol (default ``uni``);
``/ui/chat/...`` is the same in the AI SDK's UI message stream, at the paths
``useChat`` (``DefaultChatTransport({api: "/ui/chat"})``) posts to and resumes from.
``STREAMFLOW_RECORDING`` replays another recording.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from streamflow.sources import from_async_iterable
from streamflow.web.resume import ResumableStreams

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
DELAY = float(os.environ.get("STREAMFLOW_DELAY", "0.05"))
HEARTBEAT = float(os.environ.get("STREAMFLOW_HEARTBEAT", "2"))
RECORDING = os.environ.get("STREAMFLOW_RECORDING")

streams = ResumableStreams(REDIS_URL, heartbeat=HEARTBEAT)


def recording() -> bytes:
    """The body to replay: ``STREAMFLOW_RECORDING`` or the bundled demo's first turn."""
    if RECORDING:
        return Path(RECORDING).read_bytes()
    return (files("streamflow.demo") / "recordings" / "anthropic-turn1.sse").read_bytes()


async def slow_upstream() -> AsyncIterator[bytes]:
    """The recording, one SSE event per ``DELAY`` seconds: a model that takes its time."""
    for event in recording().split(b"\n\n"):
        if event.strip():
            await anyio.sleep(DELAY)
            yield event + b"\n\n"


async def chat(request: Request) -> Response:
    """Start a fresh answer for the chat and stream it."""
    chat_id = request.path_params["chat_id"]
    await streams.start(chat_id, from_async_iterable(slow_upstream))
    return await streams.response(request, chat_id, to=request.query_params.get("to", "uni"))


async def resume(request: Request) -> Response:
    """The chat's latest answer, after ``Last-Event-ID``; 204 when there is none."""
    return await streams.response(request, request.path_params["chat_id"],
                                  to=request.query_params.get("to", "uni"))


async def ui_chat(request: Request) -> Response:
    """The same in the AI SDK's UI message stream (``useChat`` with ``api: "/ui/chat"``)."""
    chat_id = request.path_params["chat_id"]
    await streams.start(chat_id, from_async_iterable(slow_upstream))
    return await streams.response(request, chat_id, to="vercel-ui")


async def ui_resume(request: Request) -> Response:
    """The AI SDK's resume request (``GET {api}/{chatId}/stream``); 204 when nothing to resume."""
    return await streams.response(request, request.path_params["chat_id"], to="vercel-ui")


app = Starlette(routes=[Route("/chat/{chat_id}", chat, methods=["POST"]),
                        Route("/chat/{chat_id}/stream", resume),
                        Route("/ui/chat/{chat_id}", ui_chat, methods=["POST"]),
                        Route("/ui/chat/{chat_id}/stream", ui_resume)],
                lifespan=streams.lifespan)
