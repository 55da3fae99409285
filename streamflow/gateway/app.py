"""The translating gateway: an ASGI app (starlette) speaking three client dialects.

::

    from streamflow.gateway import create_app
    app = create_app("https://generativelanguage.googleapis.com", "gemini",
                     api_key=os.environ["GEMINI_API_KEY"])
    # uvicorn.run(app), or mount it: fastapi_app.mount("/llm", app)

``POST /v1/messages`` (Anthropic), ``/v1/chat/completions`` (OpenAI chat) and
``/v1/responses`` (OpenAI Responses) each read the client's request in its own
format (:mod:`streamflow.providers.formats`), restore the replay state the gateway
packed into earlier answers (:mod:`streamflow.gateway.carry`), send the request
to the upstream in the upstream's dialect (a request already in the upstream's
dialect goes on as it is, forced to stream), decode the upstream's stream and
write it back with the client dialect's encoder as it arrives. ``stream: false``
gets the dialect's non-streaming body. Errors before the answer are the client
dialect's status and envelope (:mod:`streamflow.gateway.envelopes`); a failure
mid-stream is the encoder's in-band error event, never a silent end. Each request
has its own decoder, carrier and encoder, so concurrent requests never mix.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..dialects import get_encoder
from ..dialects.encoder import Encoder
from ..errors import ProtocolError, StreamflowError
from ..events import UniEvent
from ..limits import DEFAULT_LIMITS, Limits
from ..message import Assembler, Message
from ..providers import HTTPRequest
from ..providers.formats import parse_request
from .bodies import message_body
from .carry import Carrier, restore
from .envelopes import error_response
from .response import EventStreamResponse
from .upstream import Upstream

__all__ = ["CLIENT_ROUTES", "Gateway", "create_app"]

CLIENT_ROUTES: dict[str, str] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
}
"""Path -> the client dialect it speaks."""


class Gateway:
    """The request handlers over one :class:`Upstream` (``create_app`` wraps them in an app)."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    def handler(self, dialect: str) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint of client dialect ``dialect``."""
        async def endpoint(request: Request) -> Response:
            return await self.handle(request, dialect)
        return endpoint

    async def handle(self, request: Request, dialect: str) -> Response:
        """Answer one client request of ``dialect`` (see the module doc)."""
        try:
            body = json.loads(await request.body() or b"null")
            chat = parse_request(dialect, body)
        except (ValueError, StreamflowError) as exc:
            error = exc if isinstance(exc, StreamflowError) else ProtocolError(
                f"request body is not JSON: {exc}")
            return _error(dialect, error, client_side=True)
        same = dialect == self.upstream.dialect
        if not same:
            restore(chat)
        try:
            upstream_request = self.upstream.request(chat, request.headers)
        except StreamflowError as exc:
            return _error(dialect, exc, client_side=True)
        if same:
            upstream_request = _passthrough(upstream_request, body, chat.model)
        stack = AsyncExitStack()
        try:
            batches = await stack.enter_async_context(self.upstream.open(upstream_request))
        except StreamflowError as exc:
            await stack.aclose()
            return _error(dialect, exc)
        carrier = Carrier(dialect, self.upstream.dialect)
        if not chat.stream:
            async with stack:
                try:
                    message = await _collect(batches, carrier)
                except StreamflowError as exc:
                    return _error(dialect, exc)
            return JSONResponse(message_body(dialect, message))
        encoder = get_encoder(dialect)()
        return EventStreamResponse(_encode(batches, carrier, encoder, stack),
                                   media_type=encoder.media_type,
                                   headers={"cache-control": "no-cache"})


def _passthrough(built: HTTPRequest, body: Any, model: str) -> HTTPRequest:
    """The client's own body (same dialect as the upstream), forced to stream with usage."""
    raw = dict(body)
    raw["stream"] = True
    raw["model"] = model
    if "stream_options" in built.json:
        raw["stream_options"] = {**(raw.get("stream_options") or {}), "include_usage": True}
    return HTTPRequest(built.url, built.headers, raw, built.method)


def _error(dialect: str, error: StreamflowError, *, client_side: bool = False) -> JSONResponse:
    status, envelope = error_response(dialect, error, client_side=client_side)
    headers = {}
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    return JSONResponse(envelope, status_code=status, headers=headers)


async def _collect(batches: AsyncIterator[list[UniEvent]], carrier: Carrier) -> Message:
    assembler = Assembler()
    async for events in batches:
        for event in events:
            assembler.feed(carrier.event(event))
    return assembler.message


async def _encode(batches: AsyncIterator[list[UniEvent]], carrier: Carrier, encoder: Encoder,
                  stack: AsyncExitStack) -> AsyncIterator[bytes]:
    """The client's body: each batch re-encoded as it arrives; a failure as the in-band error."""
    try:
        try:
            async for events in batches:
                out = b"".join([encoder.feed(carrier.event(e)) for e in events])
                if out:
                    yield out
        except StreamflowError as exc:
            head = b"".join([encoder.feed(carrier.event(e)) for e in exc.events])
            yield head + encoder.fail(exc)
    finally:
        with anyio.CancelScope(shield=True):
            await stack.aclose()


def create_app(upstream: str | Upstream, upstream_dialect: str | None = None, *,
               api_key: str | None = None, model: str | None = None,
               client: httpx.AsyncClient | None = None,
               limits: Limits = DEFAULT_LIMITS) -> Starlette:
    """A starlette app translating the three client dialects to ``upstream``.

    ``upstream`` is the upstream API's base URL (with ``upstream_dialect``) or an
    :class:`Upstream`. The app closes the HTTP client it made when its lifespan
    ends (when mounted in another app, the client lives as long as the process).
    """
    if isinstance(upstream, str):
        if not upstream_dialect:
            raise ValueError("create_app needs upstream_dialect with an upstream URL")
        upstream = Upstream(upstream, upstream_dialect, api_key=api_key, model=model,
                            client=client, limits=limits)
    target = upstream
    gateway = Gateway(target)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await target.aclose()

    routes = [Route(path, gateway.handler(dialect), methods=["POST"])
              for path, dialect in CLIENT_ROUTES.items()]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.gateway = gateway
    return app
