"""A streaming ASGI response that stops, and closes its source, the moment the client leaves."""

from __future__ import annotations

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class EventStreamResponse(StreamingResponse):
    """``StreamingResponse`` that always watches for ``http.disconnect``, on every ASGI server.

    When the client disconnects the body is cancelled and its async iterator closed
    (shielded), whatever the server's ASGI spec version, so the upstream request
    behind it is closed at once rather than when the iterator is collected.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as tg:
                async def stream() -> None:
                    await self.stream_response(send)
                    tg.cancel_scope.cancel()

                tg.start_soon(stream)
                await self.listen_for_disconnect(receive)
                tg.cancel_scope.cancel()
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
        if self.background is not None:
            await self.background()
