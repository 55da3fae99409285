"""ASGI responses for starlette / FastAPI: a stream or an Agent run as a UI protocol body.

::

    @app.post("/api/chat")
    async def chat() -> Response:
        return ui_message_stream_response(from_httpx(client, request))   # useChat reads it

Each response runs its producer while it writes the body and watches the client: when
the client disconnects, the producer is cancelled, which closes the upstream HTTP
request (the provider sees the connection go).

``on_finish(answer, *, status)`` is called exactly once per answer, when it ends:
``"completed"``, ``"failed"`` (a typed error ended it; ``answer`` is the partial)
or ``"aborted"`` (the client left; the partial). ``answer`` is an
:class:`~streamflow.servers.web.Answer`; :func:`~streamflow.servers.web.to_ui_message`
makes it the ``UIMessage`` the user saw, to store with the chat.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ...core.limits import Limits
from ...core.structured import OutputFrom
from ...wire.targets._ui_run import UIRunEncoder
from ...wire.targets.ag_ui.encode import AGUIEncoder
from ...wire.targets.vercel_ui.encode import CURRENT_AI_SDK, AISDKMajor, VercelUIEncoder
from ...wire.targets.vercel_ui.encode import HEADERS as UI_MESSAGE_STREAM_HEADERS
from ._answer import AnswerRecorder, FinishStatus, OnFinish, call_on_finish
from ._drive import produce
from ._outbox import Outbox

__all__ = ["UI_MESSAGE_STREAM_HEADERS", "EncodedStreamResponse", "ag_ui_response",
           "ui_message_stream_response"]


class EncodedStreamResponse(Response):
    """Streams ``source`` through ``encoder`` (a ``run=True`` UI encoder) as the body."""

    def __init__(self, source: Any, encoder: UIRunEncoder, *, dialect: str = "auto",
                 limits: Limits | None = None, headers: Mapping[str, str] | None = None,
                 status_code: int = 200, on_finish: OnFinish | None = None) -> None:
        self.source = source
        self.on_finish = on_finish
        if encoder.message_id is None:  # named here, so the page and on_finish agree
            encoder.message_id = f"msg-{uuid.uuid4().hex}"
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
        recorder = AnswerRecorder(self.encoder.message_id)
        status: FinishStatus = "aborted"  # unless the producer ran to its end
        async with anyio.create_task_group() as tg:

            async def producer() -> None:
                nonlocal status
                try:
                    await produce(self.source, self.encoder, outbox, dialect=self.dialect,
                                  limits=self.limits, also=(recorder,))
                    status = "failed" if recorder.answer.error is not None else "completed"
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
                status = "aborted"
            tg.cancel_scope.cancel()
        with anyio.CancelScope(shield=True):
            await call_on_finish(self.on_finish, recorder.finish(), status)


def ui_message_stream_response(source: Any, *, dialect: str = "auto",
                               limits: Limits | None = None, message_id: str | None = None,
                               headers: Mapping[str, str] | None = None, output: Any = None,
                               output_from: OutputFrom = "auto",
                               on_finish: OnFinish | None = None,
                               ai_sdk: AISDKMajor = CURRENT_AI_SDK) -> EncodedStreamResponse:
    """The AI SDK UI message stream of ``source`` (what ``useChat`` reads).

    ``ai_sdk`` is the client's major, 5, 6 or 7 (the current one, the default): 5 writes
    only what v5 knows; 6 and 7 add the chunks those know (an approval request as
    ``tool-approval-request``, the run's ``finishReason`` on ``finish``).

    ``source`` is a byte source (decoded with ``dialect``), a source of UniEvents, or
    an :func:`~streamflow.servers.web.agent_run` (every turn one step of the same message).
    ``output`` (a structured output's type, as for ``streamflow.stream``) adds the
    partial object as a ``data-output`` part (id ``output``), replaced in place as it
    grows and validated at the end. Headers: ``text/event-stream``,
    ``x-vercel-ai-ui-message-stream: v1``, ``cache-control: no-cache``,
    ``x-accel-buffering: no``. ``on_finish``: see the module doc.
    """
    encoder = VercelUIEncoder(run=True, message_id=message_id, ai_sdk=ai_sdk, output=output,
                              output_from=output_from)
    return EncodedStreamResponse(source, encoder,
                                 dialect=dialect, limits=limits,
                                 headers={**UI_MESSAGE_STREAM_HEADERS, **(headers or {})},
                                 on_finish=on_finish)


def ag_ui_response(source: Any, *, dialect: str = "auto", limits: Limits | None = None,
                   thread_id: str | None = None, run_id: str | None = None,
                   message_id: str | None = None, headers: Mapping[str, str] | None = None,
                   output: Any = None, output_from: OutputFrom = "auto",
                   on_finish: OnFinish | None = None) -> EncodedStreamResponse:
    """The AG-UI event stream of ``source`` (same sources as :func:`ui_message_stream_response`).

    ``thread_id``/``run_id`` go on ``RUN_STARTED``/``RUN_FINISHED`` (take them from
    the client's ``RunAgentInput``; generated when omitted). ``output`` (a structured
    output's type) makes the run's state ``{"output": <the object so far>}``: a
    ``STATE_SNAPSHOT``, then ``STATE_DELTA`` JSON Patches, the validated object last.
    """
    encoder = AGUIEncoder(run=True, message_id=message_id, thread_id=thread_id, run_id=run_id,
                          output=output, output_from=output_from)
    return EncodedStreamResponse(source, encoder, dialect=dialect, limits=limits,
                                 headers={"x-accel-buffering": "no", **(headers or {})},
                                 on_finish=on_finish)
