"""The upstream side of the gateway: one streaming httpx request, decoded by streamflow.

:class:`Upstream` holds where requests go (base URL, dialect, credentials, an
``httpx.AsyncClient``). :meth:`Upstream.open` sends a request through
:class:`~streamflow.reactive.sources.http.AsyncHTTPSource` (status checked before any byte
is parsed: a non-2xx answer raises ``HTTPStatusError`` with the upstream's
envelope read) and yields an async iterator of UniEvent batches decoded by a
:class:`~streamflow.wire.decoder.StreamDecoder`. Leaving the ``async with`` closes the
upstream response, so a cancelled client request closes the upstream connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import httpx

from ...app.providers import HTTPRequest
from ...core.errors import RequestError, StreamflowError
from ...core.events import UniEvent
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.requests import ChatRequest
from ...reactive._chunk_reader import ChunkReader
from ...reactive.sources.http import AsyncHTTPSource
from ...wire.decoder import StreamDecoder
from ...wire.dialects import credential_headers, get_request
from ...wire.redaction import REDACTED, redact_headers, redact_url, scrub_error, secrets_in
from ._h1 import H1Transport
from ._transport import NoCookies


def client_key(headers: Mapping[str, str]) -> str | None:
    """The API key a client sent: a bearer token, or any registered format's key header
    (``x-api-key``, ``x-goog-api-key``...; :func:`~streamflow.wire.dialects.credential_headers`)."""
    auth = headers.get("authorization") or ""
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    for name in sorted(credential_headers() - {"authorization", "proxy-authorization"}):
        if headers.get(name):
            return headers[name]
    return None


@dataclass
class Upstream:
    """The provider API behind the gateway.

    ``api_key`` is sent to the upstream when set; otherwise the client's own key is
    forwarded in the upstream's header. ``model`` replaces the client's model name
    when set. ``client`` is created on first use (and closed by :meth:`aclose`)
    unless one is given; the one made here reads through the private
    ``gateway._h1.H1Transport`` (llhttp under an asyncio Protocol on asyncio, httpx's
    own transport elsewhere: the cheapest read per chunk) and keeps no cookies (one
    client serves every request: an upstream's cookie must not reach another client's
    request).
    """

    url: str
    dialect: str
    api_key: str | None = None
    model: str | None = None
    client: httpx.AsyncClient | None = None
    limits: Limits = DEFAULT_LIMITS
    headers: dict[str, str] = field(default_factory=dict)
    _owned: bool = field(default=False, repr=False)

    def __repr__(self) -> str:
        """No credential: ``api_key='<redacted>'`` when one is set, the URL's credential
        parameters and the extra headers' credential values masked."""
        key = REDACTED if self.api_key else None
        return (f"Upstream(url={redact_url(self.url)!r}, dialect={self.dialect!r}, "
                f"api_key={key!r}, model={self.model!r}, "
                f"headers={redact_headers(self.headers)!r})")

    def http_client(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` requests go through (made on first use)."""
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None),
                                            transport=H1Transport(), cookies=NoCookies())
            self._owned = True
        return self.client

    async def aclose(self) -> None:
        """Close the client if the upstream made it."""
        if self._owned and self.client is not None:
            await self.client.aclose()
            self.client, self._owned = None, False

    def request(self, chat: ChatRequest, client_headers: Mapping[str, str]) -> HTTPRequest:
        """The upstream HTTP request for ``chat`` (credentials resolved, model replaced)."""
        if self.model:
            chat.model = self.model
        key = self.api_key or client_key(client_headers)
        if key is not None and not (key.isascii() and key.isprintable()):
            raise RequestError("the API key holds characters an HTTP header cannot carry", 401)
        request = get_request(self.dialect).http_request(self.url, chat, api_key=key,
                                                         headers=self.headers)
        try:
            parsed_url(request.url)  # a URL httpx cannot send (a huge model name) is a 400
        except httpx.InvalidURL as exc:
            raise RequestError(f"the request makes an upstream URL that cannot be sent: {exc}"
                              ) from None
        return request

    @asynccontextmanager
    async def open(self, request: HTTPRequest) -> AsyncIterator[AsyncIterator[list[UniEvent]]]:
        """Send ``request``; yield its answer as batches of UniEvents (see the module doc)."""
        client = self.http_client()
        source = AsyncHTTPSource(
            client, lambda: client.build_request(request.method, parsed_url(request.url),
                                                 headers=request.headers, content=request.body),
            limits=self.limits)
        reader = ChunkReader(self.limits, source.map_error)  # the deadline counts from here
        secrets = secrets_in(request.headers, request.url)
        try:
            async with AsyncExitStack() as stack:
                chunks = await reader.open(stack, source.open())
                decoder = StreamDecoder(get_request(self.dialect).stream_dialect,
                                        limits=self.limits)  # a codec's own decoder
                yield _events(chunks, decoder, reader, secrets)
        except httpx.HTTPError as exc:
            raise scrub_error(source.map_error(exc), secrets) from exc


CACHED_URL_CHARS = 2048
"""Longer URLs are parsed per request, so hostile model names cannot fill the cache."""


def parsed_url(url: str) -> httpx.URL:
    """``url`` parsed, once for a URL of at most :data:`CACHED_URL_CHARS` (an upstream URL
    differs only by model, on some dialects): half of httpx's cost of building a request
    is parsing its URL. ``httpx.InvalidURL`` if it cannot be sent."""
    return _parsed(url) if len(url) <= CACHED_URL_CHARS else httpx.URL(url)


@lru_cache(maxsize=256)
def _parsed(url: str) -> httpx.URL:
    return httpx.URL(url)


async def _events(chunks: AsyncIterator[bytes], decoder: StreamDecoder, reader: ChunkReader,
                  secrets: frozenset[str]) -> AsyncIterator[list[UniEvent]]:
    """Decode ``chunks`` read by THE chunk reader (idle timeout, deadline, typed errors);
    a failure carries the partial message and none of the request's credentials (an
    upstream's in-band error may quote the key it was sent)."""
    try:
        try:
            while True:
                try:
                    chunk = await reader.next(chunks)
                except StreamflowError as exc:
                    exc.with_partial(decoder.partial)
                    raise
                if chunk is None:
                    break
                events = decoder.feed(chunk)
                if events:
                    yield events
        finally:
            reader.close()
        yield decoder.close()
    except StreamflowError as exc:
        scrub_error(exc, secrets)
        raise
