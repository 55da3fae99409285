"""The upstream side of the gateway: where answers come from, read as a run reads them.

:class:`Upstream` holds where requests go (base URL, dialect, credentials, an
``httpx.AsyncClient``); the gateway's upstream and its fallbacks are each one, and
each client request makes them the endpoints of a failover chain
(:meth:`Upstream.endpoint`: its request written with the client's headers).
:class:`Relayed` is one client request's answer: THE failover relay
(:meth:`~streamflow.app.failover.Failover.relay`: every attempt read by THE chunk
reader and decoded by THE decode loop into the answer's continuation) feeding a driven
:class:`~streamflow.app.runtime.Run` -- the run core's fan-out and outcome -- from the
response's own task. :meth:`Relayed.start` reads until the first chunk, so a failure
before it (every endpoint tried) is the client's HTTP error; :meth:`Relayed.relay`
yields what the run's sinks wrote after each chunk. Closing it closes the upstream
response, so a cancelled client request closes the upstream connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import httpx

from ...app.failover import Endpoint, Failover, FailoverSource
from ...app.providers import HTTPRequest
from ...app.runtime import Run
from ...core.continuation import Continuation
from ...core.errors import RequestError, SinkError, StreamflowError
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.message import Message
from ...core.requests import ChatRequest
from ...reactive.sources.http import AsyncHTTPSource
from ...wire.dialects import credential_headers, get_request
from ...wire.redaction import (
    REDACTED,
    redact_headers,
    redact_url,
    redacting_logger,
    scrub_error,
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
    when set. ``prefill`` says whether the upstream continues a final assistant turn
    (``None``: its dialect's default; a llama.cpp server does: ``True``), for an answer
    a failover chain continues there. ``client`` is created on first use (and closed by
    :meth:`aclose`) unless one is given; the one made here reads through the private
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
    prefill: bool | None = None
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

    @property
    def name(self) -> str:
        """The upstream as the delivery records, logs and the breaker name it (no
        credential: the URL's credential parameters masked)."""
        return f"{self.dialect}@{redact_url(self.url)}"

    def send(self, request: HTTPRequest) -> AsyncHTTPSource:
        """The source of ``request``'s answer through this upstream's client (status
        checked before any byte is parsed: a non-2xx answer raises ``HTTPStatusError``
        with the upstream's envelope read); read within the attempt's limits (this
        upstream's, with the chain's timeouts)."""
        client = self.http_client()
        return AsyncHTTPSource(
            client, lambda: client.build_request(request.method, parsed_url(request.url),
                                                 headers=request.headers, content=request.body))

    def endpoint(self, client_headers: Mapping[str, str], *,
                 passthrough: HTTPRequest | None = None, turns: int = 0) -> Endpoint:
        """This upstream as an endpoint of one client request's chain: its requests
        written with the client's headers (:meth:`request`); ``passthrough`` is sent as
        it is for the request itself (``turns`` turns: no continuation's prefix added)."""
        def build(chat: ChatRequest) -> HTTPRequest:
            if passthrough is not None and len(chat.turns) == turns:
                return passthrough
            return self.request(chat, client_headers)

        return Endpoint(self.dialect, build, name=self.name, prefill=self.prefill,
                        limits=self.limits, send=self.send)


class Relayed:
    """One client request's answer through ``chain`` into a driven run of ``sinks`` (sync
    sinks), read in the caller's task (see the module doc)."""

    def __init__(self, chain: Failover, chat: ChatRequest, sinks: tuple[object, ...]) -> None:
        self.source = FailoverSource(chain, chat)  # never subscribed: what the run reads of it
        self.run = Run(self.source, sinks, caller="the gateway")
        self.feed = self.run.driven()
        self.splice = Continuation(chat, self.feed.on_next, clock=chain.clock,
                                   instruction=chain.instruction)
        self.run.fan.decoder = self.splice  # the answer's message is the splice's
        self._relay = chain.relay(self.splice, sent=self.source.note_secrets)
        self._ended = False

    async def start(self) -> None:
        """Read until the answer's first chunk: a failure with no output before it (the
        chain tried what it could) is raised, for the client's status and envelope, and
        the run ends with it (its sinks see the failed answer); one after output ends
        the answer when it is relayed (what came first is the client's, then the
        in-band error)."""
        try:
            await anext(self._relay)
        except StopAsyncIteration:
            self._end(None)
        except StreamflowError as error:
            self._end(error)
            if not self.splice.has_output:
                raise scrub_error(error, self.source.secrets) from None

    async def relay(self, written: Callable[[], bytes]) -> AsyncIterator[bytes]:
        """The rest of the answer, read into the run in this task (after :meth:`start`):
        after each chunk, ``written()`` (what the run's sinks wrote), when any."""
        data = written()  # what the first chunk made
        if data:
            yield data
        error: Exception | None = None
        if not self._ended:
            try:
                async for _ in self._relay:
                    data = written()
                    if data:
                        yield data
            except StreamflowError as exc:  # the chain's failure, with the answer's partial
                error = exc
            self._end(error)

    def _end(self, error: Exception | None) -> None:
        if not self._ended:
            self._ended = True
            if error is None:
                self.feed.on_completed()
            else:
                self.feed.on_error(error)

    def outcome(self, *ours: object) -> Message | BaseException:
        """How the answer ended, for the client: the message, or the stream's error (no
        credential of its requests in it). A failure of the app's own sinks is logged,
        never the client's (the stream went to its end); one of ``ours`` (the gateway's
        body writer) is raised as the bug it is."""
        outcome = self.run.settle()
        if isinstance(outcome, SinkError):
            for sink, exc in outcome.errors:
                if any(sink is own for own in ours):
                    raise exc
            log.warning("a gateway sink failed: %s", outcome)
            assert outcome.partial is not None  # a SinkError's partial is the whole message
            return outcome.partial
        if isinstance(outcome, BaseException):
            scrub_error(outcome, self.source.secrets)
        return outcome

    async def message(self) -> Message:
        """Read the whole answer: its message, or its error raised (see :meth:`outcome`)."""
        await self.start()
        async for _ in self.relay(bytes):
            pass
        outcome = self.outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def aclose(self) -> None:
        """Close the upstream response (a client gone, the answer read)."""
        await self._relay.aclose()  # type: ignore[attr-defined]


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
