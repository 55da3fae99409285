"""Sources over an httpx streaming response (async and sync clients).

Marble (one subscription = one HTTP request)::

    from_httpx(client, request)   --chunk--chunk--chunk--|
    non-2xx answer                #HTTPStatusError(status, type, message, retry_after)
    no connection / no headers    #TransportError / #StreamTimeoutError("idle")
    dropped mid-body              --chunk--#TransportError
    disposed (take(n), Ctrl-C)    --chunk--  (response closed: the provider sees the disconnect)

Every wait of the exchange is bounded: connecting by the request's connect timeout
(:data:`CONNECT_TIMEOUT` when it has none), the response headers and a non-2xx
error body (at most 64 KiB, read for its envelope, :mod:`streamflow.reactive.sources._http_errors`)
each by the idle timeout as a whole, and every body read by the idle timeout.
Each error names the method and URL, and a timeout says what had arrived; none holds
a credential: every error the source raises is scrubbed of the request's own
credential values (its key header, a ``?key=`` in its URL, wherever they appear: an
upstream echoing the key in its error body included) and of anything shaped like one
(:func:`streamflow.wire.redaction.scrub_error`), and :attr:`AsyncHTTPSource.secrets`
tells the run those values, so the errors the decoder raises later are scrubbed too.
``request`` is an ``httpx.Request`` (``client.build_request(...)``) or a factory of
one, called per subscription (so a retry sends a fresh request). The response is
always closed when the subscription ends: on completion, on error, and on dispose
(shielded from the cancellation that dispose is).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx

from ...core.limits import DEFAULT_LIMITS, Limits
from ...wire.redaction import redacting_logger, report_sent, scrub_error, secrets_in
from .._scope import ChunkStream, current_scope
from .._source import Source
from ._http_body import body_chunks, body_chunks_sync
from ._http_errors import (
    MAX_ERROR_BODY,
    error_body_timeout,
    headers_timeout,
    status_error,
    transport_error,
)
from .iterables import SyncSource

__all__ = ["CONNECT_TIMEOUT", "AsyncHTTPSource", "from_httpx"]

RequestLike = httpx.Request | Callable[[], httpx.Request]
redacting_logger("httpx")  # httpx logs each request's URL at INFO: a ``?key=`` masked there too
CONNECT_TIMEOUT = 10.0
"""Seconds to connect when the client sets no connect timeout (``timeout=None``)."""


def _request(request: RequestLike, idle: float | None, *, read: bool = True) -> httpx.Request:
    """The request to send, every network wait of it bounded.

    httpx's default read timeout (5 s) would cut a stream while the model thinks:
    each read waits up to the idle limit instead (``read=False``: no read timeout at
    httpx's level, for the async source, whose every wait streamflow bounds itself --
    the head and an error body within ``idle`` in all, each body read by the chunk
    reader -- so a read arms no second timer). A connect (and pool) timeout the
    client left unset becomes :data:`CONNECT_TIMEOUT`, an unset write timeout the
    idle limit.
    """
    req = request() if callable(request) else request
    timeout = dict(req.extensions.get("timeout") or {})
    timeout["read"] = idle if read else None
    for key, default in (("connect", CONNECT_TIMEOUT), ("pool", CONNECT_TIMEOUT),
                         ("write", idle)):
        if timeout.get(key) is None:
            timeout[key] = default
    req.extensions["timeout"] = timeout
    return req


def _where(request: httpx.Request) -> str:
    return f"{request.method} {request.url}"


async def _read_error_body(response: httpx.Response, idle: float | None) -> bytes:
    """The error body (64 KiB at most), read within ``idle`` seconds in all."""
    body = bytearray()
    try:
        with anyio.fail_after(idle):
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= MAX_ERROR_BODY:
                    break
    except (TimeoutError, httpx.TimeoutException):
        timeout = error_body_timeout(response, bytes(body), idle or 0.0)
        raise timeout from timeout.__cause__
    except httpx.HTTPError as exc:
        raise transport_error(exc, _where(response.request)) from exc
    return bytes(body[:MAX_ERROR_BODY])


def _read_error_body_sync(response: httpx.Response, idle: float | None) -> bytes:
    body = bytearray()
    started = time.monotonic()
    try:
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= MAX_ERROR_BODY:
                break
            if idle is not None and time.monotonic() - started > idle:
                raise TimeoutError
    except (TimeoutError, httpx.TimeoutException):
        timeout = error_body_timeout(response, bytes(body), idle or 0.0)
        raise timeout from timeout.__cause__
    except httpx.HTTPError as exc:
        raise transport_error(exc, _where(response.request)) from exc
    return bytes(body[:MAX_ERROR_BODY])


async def _body(response: httpx.Response,
                secrets: frozenset[str] = frozenset()) -> AsyncGenerator[bytes, None]:
    """The body chunks; an httpx failure becomes a typed error naming the request."""
    try:
        async for chunk in body_chunks(response):  # bounded pieces: a gzip bomb cannot balloon
            yield chunk
    except httpx.HTTPError as exc:
        raise scrub_error(transport_error(exc, _where(response.request)), secrets) from exc


def _secrets(request: httpx.Request) -> frozenset[str]:
    """The request's credential values, told to the run reading the source."""
    found = secrets_in(request.headers, request.url)
    report_sent(found)
    return found


class AsyncHTTPSource(Source):
    """The body of one ``httpx.AsyncClient`` request per subscription.

    ``secrets`` are the credential values of the request last sent (see the module doc).
    """

    default_limits = DEFAULT_LIMITS

    def __init__(self, client: httpx.AsyncClient, request: RequestLike, *,
                 limits: Limits | None = None) -> None:
        super().__init__(limits)
        self.client = client
        self.request = request
        self.secrets: frozenset[str] = frozenset()

    def map_error(self, exc: Exception) -> Exception:
        """httpx exceptions -> ``TransportError`` / ``StreamTimeoutError``."""
        return transport_error(exc)

    def open(self) -> ChunkStream:
        """Send the request; yield the body chunks; close the response on exit."""
        return self._open()

    def _idle(self) -> float | None:
        owner = current_scope()
        limits = self.limits or (owner.limits if owner is not None else None) \
            or self.default_limits
        return limits.idle_timeout

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[AsyncIterator[bytes]]:
        idle = self._idle()
        request = _request(self.request, idle, read=False)
        self.secrets = secrets = _secrets(request)
        try:
            with anyio.fail_after(idle):
                response = await self.client.send(request, stream=True)
        except (TimeoutError, httpx.ReadTimeout):
            raise scrub_error(headers_timeout(request, idle or 0.0), secrets) from None
        except httpx.HTTPError as exc:
            raise scrub_error(transport_error(exc, _where(request)), secrets) from exc
        body = _body(response, secrets)
        try:
            if not response.is_success:
                try:
                    raise status_error(response.status_code, response.headers,
                                       await _read_error_body(response, idle),
                                       where=_where(request))
                except Exception as exc:
                    scrub_error(exc, secrets)
                    raise
            yield body
        finally:
            with anyio.CancelScope(shield=True):
                await body.aclose()
                await response.aclose()


def _sync_opener(client: httpx.Client, request: RequestLike, limits: Limits | None,
                 told: Callable[[frozenset[str]], None]) -> Callable[[], object]:
    idle = (limits or DEFAULT_LIMITS).idle_timeout

    @contextmanager
    def opener() -> Iterator[Iterator[bytes]]:
        req = _request(request, idle)
        secrets = _secrets(req)
        told(secrets)
        try:
            response = client.send(req, stream=True)
        except httpx.ReadTimeout:
            raise scrub_error(headers_timeout(req, idle or 0.0), secrets) from None
        except httpx.HTTPError as exc:
            raise scrub_error(transport_error(exc, _where(req)), secrets) from exc
        try:
            if not response.is_success:
                try:
                    raise status_error(response.status_code, response.headers,
                                       _read_error_body_sync(response, idle), where=_where(req))
                except Exception as exc:
                    scrub_error(exc, secrets)
                    raise
            yield _body_sync(response, secrets)
        finally:
            response.close()
    return opener


def _body_sync(response: httpx.Response, secrets: frozenset[str]) -> Iterator[bytes]:
    try:
        yield from body_chunks_sync(response)
    except httpx.HTTPError as exc:
        raise scrub_error(transport_error(exc, _where(response.request)), secrets) from exc


def from_httpx(client: httpx.AsyncClient | httpx.Client, request: RequestLike, *,
               limits: Limits | None = None) -> Source:
    """A cold source of the response body of ``request`` sent with ``client``.

    With an ``AsyncClient`` it must be subscribed inside ``streamflow.run()`` or
    ``async with streamflow.scope()``. With a sync ``httpx.Client`` it also works
    without any event loop (pushing in the subscribing thread); inside a scope
    each blocking read runs in a worker thread, and a dispose takes effect once the
    read in progress returns (bounded by the idle limit, the read timeout here).
    """
    if isinstance(client, httpx.AsyncClient):
        return AsyncHTTPSource(client, request, limits=limits)

    def told(secrets: frozenset[str]) -> None:
        source.secrets = secrets  # type: ignore[attr-defined]

    source = SyncSource(_sync_opener(client, request, limits, told), blocking=True,  # type: ignore[arg-type]
                        limits=limits)
    source.secrets = frozenset()  # type: ignore[attr-defined]
    source.map_error = transport_error  # type: ignore[method-assign]
    source.default_limits = DEFAULT_LIMITS
    return source
