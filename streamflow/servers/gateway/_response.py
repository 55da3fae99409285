"""A streaming ASGI response that closes its source however it ends (the client leaving too)."""

from __future__ import annotations

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class EventStreamResponse(StreamingResponse):
    """``StreamingResponse`` that closes its body's async iterator (shielded) however the
    response ends, so the upstream request behind it is closed at once rather than when
    the iterator is collected.

    The body is written in the caller's task: the gateway watches ``http.disconnect``
    itself (``Gateway.serve``, from the moment the request body is read) and cancels
    that task when the client leaves, so the response needs no task group or watcher of
    its own (two tasks and two cancel scopes less per open stream).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.stream_response(send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
        if self.background is not None:
            await self.background()
