"""The gateway's model list: ``GET /v1/models`` in the client dialect's shape.

SDKs, IDE plugins and chat UIs list the models before they ask anything. Each
request side with a ``client_models_path`` answers there in its own shape
(``RequestSide.models_body``: OpenAI's ``{"object": "list", "data": [...]}``,
Anthropic's page with ``has_more``); dialects sharing a path are told apart by the
fixed headers their SDKs send (``RequestSide.sent_by``: ``anthropic-version``).

The models are the upstream's own list where its request side has one
(``RequestSide.models_url`` / ``read_models``), fetched with the credential a chat
request would carry (the configured key, else the client's); with a configured
``model`` (``streamflow gateway --model``), which answers every request whatever it
names, or an upstream without a list, the list is the model the gateway was started
with (none: an empty list).

The route is no proxy: the URL is the upstream's fixed list path (nothing of the
client's path, query or headers goes on but its key), ``GET`` only, no redirect
followed (the upstream's own client follows none; a redirect is a 502); the
answer is read within :data:`MODELS_TIMEOUT` seconds and :data:`MAX_MODELS_BYTES`,
parsed within the gateway's JSON limits and cut to ``request_base.MAX_MODELS``
entries; an upstream failure is answered with its status
(a 502 or 504 when it has none) in the client's envelope, in the gateway's own
words: nothing the upstream said reaches the client (it may quote a key or its
own addresses; the log has it). The configured model is listed only to a client
that sends a key when the gateway has none configured (an upstream's list: the
upstream judges it).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import httpx
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from ...core.errors import (
    HTTPStatusError,
    LimitExceededError,
    ProtocolError,
    RequestError,
    StreamflowError,
    StreamTimeoutError,
)
from ...reactive.sources.http import AsyncHTTPSource
from ...wire.dialects import REQUESTS, get_dialect, get_request
from ...wire.dialects.request_base import ModelInfo
from ...wire.redaction import redacting_logger
from ._envelopes import error_response
from ._upstream import Upstream, client_key
from .limits import GatewayLimits, parse_body

log = redacting_logger("streamflow.servers.gateway")  # no credential in a line

MODELS_TIMEOUT = 15.0
"""Seconds the upstream has to answer its model list, body included (then a 504)."""
MAX_MODELS_BYTES = 4 << 20
"""The largest model list read from the upstream (then a 502)."""


def models_routes() -> dict[str, list[str]]:
    """Path -> the client dialects listing models there, those with fixed headers first."""
    out: dict[str, list[str]] = {}
    for name in REQUESTS:
        side = get_request(name)
        if side.client_models_path and side.models_body is not None:
            out.setdefault(side.client_models_path, []).append(name)
    for names in out.values():
        names.sort(key=lambda name: -len(get_request(name).headers))
    return out


class ModelsRoute:
    """The ASGI app of one model-list path, answering each client in its dialect."""

    def __init__(self, upstream: Upstream, dialects: list[str], limits: GatewayLimits) -> None:
        self.upstream = upstream
        self.dialects = dialects
        self.limits = limits

    def dialect(self, headers: Mapping[str, str]) -> str:
        """The client dialect of a request with ``headers``."""
        return next((name for name in self.dialects if get_request(name).sent_by(headers)),
                    self.dialects[-1])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        dialect = self.dialect(headers)
        try:
            models = await self.models(headers)
        except RequestError as exc:
            code, envelope = error_response(dialect, exc)
            response = JSONResponse(envelope, status_code=code)
        except StreamflowError as exc:
            log.warning("upstream model list failed: %s", exc)
            status, words = _failure(exc)
            code, envelope = error_response(dialect, StreamflowError(words), status=status)
            retry_after = getattr(exc, "retry_after", None)
            response = JSONResponse(envelope, status_code=code, headers={
                "retry-after": f"{retry_after:g}"} if retry_after is not None else None)
        else:
            side = get_request(dialect)
            assert side.models_body is not None  # routes are made for sides with one
            response = JSONResponse(side.models_body(models))
        await response(scope, receive, send)

    async def models(self, headers: Mapping[str, str]) -> list[ModelInfo]:
        """The models to list for a client request with ``headers`` (see the module doc)."""
        upstream = self.upstream
        key = upstream.api_key or client_key(headers)
        if key is not None and not (key.isascii() and key.isprintable()):
            raise RequestError("the API key holds characters an HTTP header cannot carry", 401)
        side = get_request(upstream.dialect)
        url = side.models_url(upstream.url)
        if upstream.model or url is None:
            if key is None:  # no upstream to judge the client: it shows it has a key at all
                raise RequestError("the request has no API key", 401)
            owner = get_dialect(side.stream_dialect).provider_name or None
            return [ModelInfo(upstream.model, owned_by=owner)] if upstream.model else []
        raw = await self.fetch(url, {"accept": "application/json", **side.credentials(key),
                                     **upstream.headers})
        try:
            body = await parse_body(raw, self.limits)
        except RequestError as exc:
            raise ProtocolError(f"the upstream's model list: {exc.message}") from None
        assert side.read_models is not None  # models_url is None without it
        return side.read_models(body)

    async def fetch(self, url: str, headers: dict[str, str]) -> bytes:
        """The body of ``GET url``, bounded (see the module doc)."""
        client = self.upstream.http_client()
        source = AsyncHTTPSource(client, lambda: client.build_request("GET", url,
                                                                      headers=headers),
                                 limits=self.upstream.limits)
        body = bytearray()
        try:
            with anyio.fail_after(MODELS_TIMEOUT):
                async with source.open() as chunks:
                    async for chunk in chunks:
                        body += chunk
                        if len(body) > MAX_MODELS_BYTES:
                            raise LimitExceededError("models_bytes", MAX_MODELS_BYTES)
        except TimeoutError:
            raise StreamTimeoutError("models", MODELS_TIMEOUT) from None
        except httpx.HTTPError as exc:
            raise source.map_error(exc) from exc
        return bytes(body)


def _failure(error: StreamflowError) -> tuple[int, str]:
    """The status and our own words for an upstream failure: nothing the upstream said
    (it may quote a key or its own addresses), only its status when it had one (a
    redirect is no status to pass on: a 502)."""
    if isinstance(error, HTTPStatusError):
        status = error.status if 400 <= error.status < 600 else 502
        return status, f"the upstream refused to list its models (status {error.status})"
    if isinstance(error, StreamTimeoutError):
        return 504, f"the upstream did not list its models within {MODELS_TIMEOUT:g} s"
    if isinstance(error, LimitExceededError):
        return 502, f"the upstream's model list is over {MAX_MODELS_BYTES >> 20} MiB"
    if isinstance(error, ProtocolError):
        return 502, "the upstream's model list could not be read"
    return 502, "the upstream could not be reached to list its models"
