"""ASGI responses for starlette / FastAPI: a stream or an Agent run as a UI protocol body.

::

    @app.post("/api/chat")
    async def chat() -> Response:
        return ui_message_stream_response(from_httpx(client, request))   # useChat reads it

Each response runs its producer while it writes the body and watches the client: when
the client disconnects, the producer is cancelled, which closes the upstream HTTP
request (the provider sees the connection go).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..limits import Limits
from ..targets._ui_run import UIRunEncoder
from ..targets.ag_ui.encode import AGUIEncoder
from ..targets.vercel_ui.encode import HEADERS as UI_MESSAGE_STREAM_HEADERS
from ..targets.vercel_ui.encode import VercelUIEncoder
from .drive import produce
from .outbox import Outbox

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "EncodedStreamResponse", "ag_ui_response",
           "ui_message_stream_response"]


class EncodedStreamResponse(Response):
    """Streams ``source`` through ``encoder`` (a ``run=True`` UI encoder) as the body."""

    def __init__(self, source: Any, encoder: UIRunEncoder, *, dialect: str = "auto",
                 limits: Limits | None = None, headers: Mapping[str, str] | None = None,
                 status_code: int = 200) -> None:
        self.source = source
        self.encoder = encoder
        self.dialect = dialect
        self.limits = limits
        self.status_code = status_code
        self.media_type = encoder.media_type
        self.background = None
        self.init_headers({"content-type": encoder.media_type, "cache-control": "no-cache",
                           **(headers or {})})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        outbox = Outbox()
        async with anyio.create_task_group() as tg:

            async def producer() -> None:
                try:
                    await produce(self.source, self.encoder, outbox, dialect=self.dialect,
                                  limits=self.limits)
                finally:
                    outbox.close()

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch_disconnect)
            tg.start_soon(producer)
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            try:
                async for data in outbox:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except OSError:  # the client is gone (ASGI 2.4 servers say so on send)
                pass
            tg.cancel_scope.cancel()


def ui_message_stream_response(source: Any, *, dialect: str = "auto",
                               limits: Limits | None = None, message_id: str | None = None,
                               headers: Mapping[str, str] | None = None) -> EncodedStreamResponse:
    """The AI SDK v5 UI message stream of ``source`` (what ``useChat`` reads).

    ``source`` is a byte source (decoded with ``dialect``), a source of UniEvents, or
    an :func:`~streamflow.web.agent_run` (every turn one step of the same message).
    Headers: ``text/event-stream``, ``x-vercel-ai-ui-message-stream: v1``,
    ``cache-control: no-cache``, ``x-accel-buffering: no``.
    """
    return EncodedStreamResponse(source, VercelUIEncoder(run=True, message_id=message_id),
                                 dialect=dialect, limits=limits,
                                 headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})})


def ag_ui_response(source: Any, *, dialect: str = "auto", limits: Limits | None = None,
                   thread_id: str | None = None, run_id: str | None = None,
                   message_id: str | None = None,
                   headers: Mapping[str, str] | None = None) -> EncodedStreamResponse:
    """The AG-UI event stream of ``source`` (same sources as :func:`ui_message_stream_response`).

    ``thread_id``/``run_id`` go on ``RUN_STARTED``/``RUN_FINISHED`` (take them from
    the client's ``RunAgentInput``; generated when omitted).
    """
    encoder = AGUIEncoder(run=True, message_id=message_id, thread_id=thread_id, run_id=run_id)
    return EncodedStreamResponse(source, encoder, dialect=dialect, limits=limits,
                                 headers={"x-accel-buffering": "no", **(headers or {})})
