"""Sources over an httpx streaming response (async and sync clients).

Marble (one subscription = one HTTP request)::

    from_httpx(client, request)   --chunk--chunk--chunk--|
    non-2xx answer                #HTTPStatusError(status, type, message, retry_after)
    dropped mid-body              --chunk--#TransportError
    disposed (take(n), Ctrl-C)    --chunk--  (response closed: the provider sees the disconnect)

The status is checked before any byte reaches the parser: a non-2xx answer's body
(at most 64 KiB) is read for its error envelope (:mod:`streamflow.sources.http_errors`).
``request`` is an ``httpx.Request`` (``client.build_request(...)``) or a factory of
one, called per subscription (so a retry sends a fresh request). The response is
always closed when the subscription ends: on completion, on error, and on dispose
(shielded from the cancellation that dispose is).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx

from ..limits import DEFAULT_LIMITS, Limits
from .bridge import ChunkStream, Source
from .http_body import body_chunks, body_chunks_sync
from .http_errors import MAX_ERROR_BODY, status_error, transport_error
from .iterables import SyncSource

__all__ = ["AsyncHTTPSource", "from_httpx"]

RequestLike = httpx.Request | Callable[[], httpx.Request]


def _request(request: RequestLike, read: float | None) -> httpx.Request:
    """The request to send, with ``read`` as its read timeout.

    httpx's default read timeout (5 s) would cut a stream while the model thinks:
    async sources leave it to their own idle timer (``read=None``); a sync client
    blocks in a worker thread, so its read timeout is the idle limit itself.
    """
    req = request() if callable(request) else request
    timeout = dict(req.extensions.get("timeout") or {})
    timeout["read"] = read
    req.extensions["timeout"] = timeout
    return req


async def _read_error_body(response: httpx.Response) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= MAX_ERROR_BODY:
            break
    return bytes(body[:MAX_ERROR_BODY])


def _read_error_body_sync(response: httpx.Response) -> bytes:
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) >= MAX_ERROR_BODY:
            break
    return bytes(body[:MAX_ERROR_BODY])


class AsyncHTTPSource(Source):
    """The body of one ``httpx.AsyncClient`` request per subscription."""

    default_limits = DEFAULT_LIMITS

    def __init__(self, client: httpx.AsyncClient, request: RequestLike, *,
                 limits: Limits | None = None) -> None:
        super().__init__(limits)
        self.client = client
        self.request = request

    def map_error(self, exc: Exception) -> Exception:
        """httpx exceptions -> ``TransportError`` / ``StreamTimeoutError``."""
        return transport_error(exc)

    def open(self) -> ChunkStream:
        """Send the request; yield the body chunks; close the response on exit."""
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        response = await self.client.send(_request(self.request, None), stream=True)
        try:
            if not response.is_success:
                body = await _read_error_body(response)
                raise status_error(response.status_code, response.headers, body)
            yield body_chunks(response)  # bounded pieces: a gzip bomb cannot balloon
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()


def _sync_opener(client: httpx.Client, request: RequestLike,
                 limits: Limits | None) -> Callable[[], object]:
    idle = (limits or DEFAULT_LIMITS).idle_timeout

    @contextmanager
    def opener() -> Iterator[Iterator[bytes]]:
        response = client.send(_request(request, idle), stream=True)
        try:
            if not response.is_success:
                raise status_error(response.status_code, response.headers,
                                   _read_error_body_sync(response))
            yield body_chunks_sync(response)
        finally:
            response.close()
    return opener


def from_httpx(client: httpx.AsyncClient | httpx.Client, request: RequestLike, *,
               limits: Limits | None = None) -> Source:
    """A cold source of the response body of ``request`` sent with ``client``.

    With an ``AsyncClient`` it must be subscribed inside ``streamflow.run()`` or
    ``async with streamflow.scope()``. With a sync ``httpx.Client`` it also works
    without any event loop (pushing in the subscribing thread); inside a scope
    each blocking read runs in a worker thread, and a dispose takes effect once the
    read in progress returns (bounded by the client's read timeout).
    """
    if isinstance(client, httpx.AsyncClient):
        return AsyncHTTPSource(client, request, limits=limits)
    source = SyncSource(_sync_opener(client, request, limits), blocking=True,  # type: ignore[arg-type]
                        limits=limits)
    source.map_error = transport_error  # type: ignore[method-assign]
    source.default_limits = DEFAULT_LIMITS
    return source
