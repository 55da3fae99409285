"""The upstream side of the gateway: one streaming httpx request, read as a run reads it.

:class:`Upstream` holds where requests go (base URL, dialect, credentials, an
``httpx.AsyncClient``). :meth:`Upstream.open` sends a request through
:class:`~streamflow.reactive.sources.http.AsyncHTTPSource` (status checked before any byte
is parsed: a non-2xx answer raises ``HTTPStatusError`` with the upstream's envelope
read) and yields an :class:`Opened` answer: :meth:`Opened.relay` reads it with THE chunk
reader (idle timeout, deadline, typed errors) into a driven
:class:`~streamflow.app.runtime.Run` -- the run core's decoder, fan-out and outcome,
fed from the response's own task -- and yields what the run's sinks wrote after each
chunk. Leaving the ``async with`` closes the upstream response, so a cancelled client
request closes the upstream connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import httpx

from ...app.providers import HTTPRequest
from ...app.runtime import Run
from ...core.errors import RequestError, SinkError
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.message import Message
from ...core.requests import ChatRequest
from ...reactive._chunk_reader import ChunkReader
from ...reactive.sources.http import AsyncHTTPSource
from ...wire.dialects import credential_headers, get_request
from ...wire.redaction import (
    REDACTED,
    redact_headers,
    redact_url,
    redacting_logger,
    scrub_error,
    secrets_in,
)
from ._h1 import H1Transport
from ._transport import NoCookies

log = redacting_logger("streamflow.servers.gateway")


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
    async def open(self, request: HTTPRequest) -> AsyncIterator[Opened]:
        """Send ``request``; yield its answer, opened (see the module doc)."""
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
                yield Opened(source, reader, chunks, secrets,
                             get_request(self.dialect).stream_dialect, self.limits)
        except httpx.HTTPError as exc:
            raise scrub_error(source.map_error(exc), secrets) from exc


@dataclass
class Opened:
    """An upstream answer whose status was checked, still to be read (see the module doc)."""

    source: AsyncHTTPSource
    reader: ChunkReader
    chunks: AsyncIterator[bytes]
    secrets: frozenset[str]
    dialect: str
    limits: Limits

    def run(self, *sinks: object) -> Run:
        """The run of this answer into ``sinks`` (sync sinks), decoded with the upstream's
        codec."""
        return Run(self.source, sinks, dialect=self.dialect, limits=self.limits,
                   caller="the gateway")

    async def relay(self, run: Run, written: Callable[[], bytes]) -> AsyncIterator[bytes]:
        """Read the answer into ``run`` (from :meth:`run`), chunk by chunk in this task;
        after each chunk, yield ``written()`` (what the run's sinks wrote), when any."""
        feed = run.driven()
        error: Exception | None = None
        try:
            while (chunk := await self.reader.next(self.chunks)) is not None:
                if chunk:
                    feed.on_next(chunk)
                data = written()
                if data:
                    yield data
                if run.fan.finished:  # a stream that failed is over
                    break
        except Exception as exc:  # as the run's own reader task does: the mapped error
            error = self.reader.mapped(exc)
        finally:
            self.reader.close()
        if error is not None:
            feed.on_error(error)
        else:
            feed.on_completed()

    def outcome(self, run: Run, *ours: object) -> Message | BaseException:
        """How the answer read into ``run`` ended, for the client: the message, or the
        stream's error (no credential of the request in it). A failure of the app's own
        sinks is logged, never the client's (the stream went to its end); one of ``ours``
        (the gateway's body writer) is raised as the bug it is."""
        outcome = run.settle()
        if isinstance(outcome, SinkError):
            for sink, exc in outcome.errors:
                if any(sink is own for own in ours):
                    raise exc
            log.warning("a gateway sink failed: %s", outcome)
            assert outcome.partial is not None  # a SinkError's partial is the whole message
            return outcome.partial
        if isinstance(outcome, BaseException):
            scrub_error(outcome, self.secrets)
        return outcome

    async def message(self, run: Run) -> Message:
        """Read the whole answer into ``run``: its message, or its error raised
        (see :meth:`outcome`)."""
        async for _ in self.relay(run, bytes):
            pass
        outcome = self.outcome(run)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


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
