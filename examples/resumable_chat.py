"""A chat app whose answers survive reconnects, other instances and restarts (Redis Streams).

Run two instances against one Redis (see docs/resume.md)::

    REDIS_URL=redis://127.0.0.1:6399/0 uvicorn examples.resumable_chat:app --port 8001
    REDIS_URL=redis://127.0.0.1:6399/0 uvicorn examples.resumable_chat:app --port 8002

``POST /chat/{chat_id}`` starts a fresh answer (a bundled recording replayed at
``STREAMFLOW_DELAY`` seconds per SSE event, no API key) and streams it, with the
chat's resume token in the ``x-resume-token`` response header; ``GET
/chat/{chat_id}/stream`` resumes it on any instance -- after the ``Last-Event-ID``
header when there is one -- for a request that presents the token again (the
``x-resume-token`` header, or ``?resume_token=``), or answers 204 when there is
nothing to resume. A later ``POST`` to the same chat needs the token too.
``?to=vercel-ui`` or ``?to=ag-ui`` picks a UI protocol (default ``uni``);
``/ui/chat/...`` is the same in the AI SDK's UI message stream, at the paths
``useChat`` (``DefaultChatTransport({api: "/ui/chat"})``) resumes from.

Chat ids are ``[A-Za-z0-9_-]{1,128}``; at most ``STREAMFLOW_MAX_LIVE`` answers are
produced at once (default 1000), ``STREAMFLOW_MAX_LIVE_PER_CLIENT`` per client
address (default 16); refusals are 400/403/429 in the protocol's error shape (see
docs/SECURITY.md). ``STREAMFLOW_RECORDING`` replays another recording.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from streamflow.demo import resolve_recording
from streamflow.reactive.sources import from_async_iterable
from streamflow.servers.web.resume import ResumableStreams

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
DELAY = float(os.environ.get("STREAMFLOW_DELAY", "0.05"))
HEARTBEAT = float(os.environ.get("STREAMFLOW_HEARTBEAT", "2"))
RECORDING = os.environ.get("STREAMFLOW_RECORDING")
MAX_LIVE = int(os.environ.get("STREAMFLOW_MAX_LIVE", "1000"))
MAX_LIVE_PER_CLIENT = int(os.environ.get("STREAMFLOW_MAX_LIVE_PER_CLIENT", "16"))

streams = ResumableStreams(REDIS_URL, heartbeat=HEARTBEAT, max_live=MAX_LIVE,
                           max_live_per_client=MAX_LIVE_PER_CLIENT)


def recording() -> bytes:
    """The body to replay: ``STREAMFLOW_RECORDING`` (a file, or a bundled recording's name)
    or the bundled demo's first turn."""
    return resolve_recording(RECORDING or "anthropic-turn1.sse").read_bytes()


async def slow_upstream() -> AsyncIterator[bytes]:
    """The recording, one SSE event per ``DELAY`` seconds: a model that takes its time."""
    for event in recording().split(b"\n\n"):
        if event.strip():
            await anyio.sleep(DELAY)
            yield event + b"\n\n"


def protocol(request: Request) -> str | None:
    """The ``?to=`` protocol of the request (``uni`` by default), ``None`` if unknown."""
    to = request.query_params.get("to", "uni")
    return to if to in ("uni", "vercel-ui", "ag-ui") else None


async def chat(request: Request) -> Response:
    """Start a fresh answer for the chat and stream it."""
    to = protocol(request)
    if to is None:
        return PlainTextResponse("unknown protocol: use uni, vercel-ui or ag-ui", 400)
    return await streams.create(request, request.path_params["chat_id"],
                                from_async_iterable(slow_upstream), target=to)


async def resume(request: Request) -> Response:
    """The chat's latest answer, after ``Last-Event-ID``; 204 when there is none."""
    to = protocol(request)
    if to is None:
        return PlainTextResponse("unknown protocol: use uni, vercel-ui or ag-ui", 400)
    return await streams.response(request, request.path_params["chat_id"], target=to)


async def ui_chat(request: Request) -> Response:
    """The same in the AI SDK's UI message stream (``useChat`` with ``api: "/ui/chat"``)."""
    return await streams.create(request, request.path_params["chat_id"],
                                from_async_iterable(slow_upstream), target="vercel-ui")


async def ui_resume(request: Request) -> Response:
    """The AI SDK's resume request (``GET {api}/{chatId}/stream``); 204 when nothing to resume."""
    return await streams.response(request, request.path_params["chat_id"], target="vercel-ui")


app = Starlette(routes=[Route("/chat/{chat_id}", chat, methods=["POST"]),
                        Route("/chat/{chat_id}/stream", resume),
                        Route("/ui/chat/{chat_id}", ui_chat, methods=["POST"]),
                        Route("/ui/chat/{chat_id}/stream", ui_resume)],
                lifespan=streams.lifespan)
