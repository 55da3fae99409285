"""The translating gateway: an ASGI app (starlette) speaking three client dialects.

::

    from streamflow.servers.gateway import create_app
    app = create_app("https://generativelanguage.googleapis.com", "gemini",
                     api_key=os.environ["GEMINI_API_KEY"])
    # uvicorn.run(app), or mount it: fastapi_app.mount("/llm", app)

Every registered request side with a ``client_path`` is a client route
(``streamflow.wire.dialects.REQUESTS``): ``POST /v1/messages`` (Anthropic),
``/v1/chat/completions`` (OpenAI chat) and ``/v1/responses`` (OpenAI Responses).
Each reads the client's request with its dialect's parser, restores the replay
state the gateway packed into earlier answers (``gateway._carry``),
sends the request to the upstream in the upstream's dialect (a request already in
the upstream's dialect goes on as it is, forced to stream), decodes the upstream's
stream and writes it back through the one encode routine
(:class:`~streamflow.wire.dialects.encoder.BodyWriter`) with the client dialect's
encoder as it arrives. ``stream: false`` gets the dialect's non-streaming body.
``GET /v1/models`` lists the upstream's models in the client's shape
(``gateway._models``).

Nothing the client asked for is lost on the way: an option the upstream's dialect
cannot carry (``response_format`` towards Anthropic, ``stop`` towards Responses,
``n > 1`` anywhere the choices would be merged...) is refused with a 400 naming
it, unless the app was made with ``drop_unsupported=True`` (``streamflow gateway
--drop-unsupported``), which drops them (logged). Errors before the answer are
the client dialect's status and envelope (``gateway._envelopes``);
a failure mid-stream is the encoder's in-band error event, never a silent end.
Each request has its own decoder, carrier and encoder, so concurrent requests
never mix.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message as Message_
from starlette.types import Receive, Scope, Send

from ...app.failover import Failover
from ...app.providers import HTTPRequest
from ...core.errors import RequestError, StreamflowError
from ...core.events import UniEvent
from ...core.limits import DEFAULT_LIMITS, Limits
from ...core.requests import ChatRequest
from ...wire.dialects import REQUESTS, get_encoder, get_request
from ...wire.dialects.encoder import BodyWriter
from ...wire.redaction import redacting_logger
from ._carry import Carrier, process_key, restore
from ._envelopes import error_response
from ._models import ModelsRoute, models_routes
from ._response import EventStreamResponse
from ._upstream import Relayed, Upstream
from .limits import (
    DEFAULT_GATEWAY_LIMITS,
    ClientDisconnected,
    GatewayLimits,
    check_ranges,
    parse_body,
    read_body,
)

log = redacting_logger("streamflow.servers.gateway")  # no credential in a line
DROP_LINES = 16
"""The most options ``drop_unsupported`` logs one line each for, per request (the
rest in one more line): a body of a thousand unknown keys is not a thousand lines."""


def client_routes() -> dict[str, str]:
    """Path -> the client dialect it speaks: every registered format with a ``client_path``."""
    out: dict[str, str] = {}
    for name in REQUESTS:
        side = get_request(name)
        if side.client_path and side.parse is not None:
            out[side.client_path] = name
    return out


class Gateway:
    """The request handlers over one :class:`Upstream` and its ``fallbacks``
    (``create_app`` wraps them in an app).

    ``drop_unsupported`` drops the client options the upstream cannot carry instead
    of refusing the request (see the module doc); ``limits`` bound each client
    request (:class:`~streamflow.servers.gateway.limits.GatewayLimits`); ``carry_key``
    signs replay-state tokens (``gateway._carry``; default: a random
    per-process key, with a logged warning); ``sinks()`` gives each answer's own sinks
    (sync sinks: a ``LogSink``, an ``OtelSink``...), fed the upstream's events as the run
    core feeds any run's, beside the client's body. ``failover`` is the chain every
    answer goes through -- its settings and its breaker; its endpoints are the upstream
    and the fallbacks, written per request -- default: one attempt at the upstream alone.
    """

    def __init__(self, upstream: Upstream, *, drop_unsupported: bool = False,
                 limits: GatewayLimits = DEFAULT_GATEWAY_LIMITS,
                 carry_key: bytes | None = None,
                 sinks: Callable[[], Iterable[Any]] | None = None,
                 fallbacks: Sequence[Upstream] = (),
                 failover: Failover | None = None) -> None:
        self.upstream = upstream
        self.fallbacks = list(fallbacks)
        self.drop_unsupported = drop_unsupported
        self.limits = limits
        self.carry_key = carry_key or process_key()
        self.sinks = sinks
        every = [upstream, *self.fallbacks]
        self.failover = (failover or Failover([u.endpoint({}) for u in every], tries=1)
                         ).bound([u.endpoint({}) for u in every])
        self.stream_dialects = {get_request(u.dialect).stream_dialect for u in every}


    def handler(self, dialect: str) -> ClientRoute:
        """The ASGI endpoint of client dialect ``dialect``."""
        return ClientRoute(self, dialect)

    async def serve(self, scope: Scope, receive: Receive, send: Send, dialect: str) -> None:
        """Read, check and answer one request, releasing the upstream if the client leaves.

        The body is read within the limits (:func:`~streamflow.servers.gateway.limits.read_body`);
        from then on ``http.disconnect`` is watched in every phase (before the
        upstream's headers, while its error body is read, during a non-streaming
        answer, mid-stream): the client leaving cancels the request, which closes
        the upstream response. An unexpected exception (a bug of ours) is logged
        with its traceback and answered as an enveloped 500 naming a request id.
        """
        request_id = "req_sf" + secrets.token_hex(8)
        headers = Headers(scope=scope)
        try:
            declared = headers.get("content-length")
            size = int(declared) if declared and declared.isdigit() else None
            raw = await read_body(receive, self.limits, size)
        except ClientDisconnected:
            return
        except RequestError as exc:
            await _error(dialect, exc)(scope, receive, send)
            return

        async def never() -> Message_:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async with anyio.create_task_group() as group:
            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                log.info("%s: the client left; the upstream request is released", request_id)
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                response = await self.answer(raw, headers, dialect)
            except Exception:
                log.exception("%s: the gateway failed on a request", request_id)
                response = _error(dialect, StreamflowError(
                    f"the gateway failed on this request (request id {request_id})"),
                    status=500)
            await response(scope, never, send)
            group.cancel_scope.cancel()

    async def answer(self, raw: bytes, headers: Headers, dialect: str) -> Response:
        """The response to one client request whose body was read (see the module doc)."""
        side = get_request(dialect)
        # one dialect end to end: the client's own body goes upstream, nothing is packed
        same = self.stream_dialects == {side.stream_dialect}
        try:
            body = await parse_body(raw, self.limits)
            assert side.parse is not None  # client routes are formats with a parser
            chat = side.parse(body)
            if not chat.stream and side.reply is None:
                raise RequestError(f"{dialect} answers only streams here: send stream: true")
            check_ranges(chat, self.limits)
            self.check(chat)
            if not same:
                restore(chat, self.carry_key)
            primary = self.upstream.request(chat, headers)
            chain = self.chain(chat, headers, _passthrough(primary, body, chat.model)
                               if same else primary)
        except (ValueError, StreamflowError) as exc:
            # whatever refused the request before it went upstream is the client's fault
            error = exc if isinstance(exc, RequestError) else RequestError(
                exc.message if isinstance(exc, StreamflowError) else
                f"request body is not JSON: {exc}")
            return _error(dialect, error)
        # the client's dialect against any upstream's that differs (fidelity packed)
        carrier = Carrier(side.stream_dialect, next(
            (d for d in sorted(self.stream_dialects) if d != side.stream_dialect),
            side.stream_dialect), self.carry_key)
        if not chat.stream:
            relayed = Relayed(chain, chat, self._sinks())
            try:
                message = await relayed.message()
            except StreamflowError as exc:
                return _error(dialect, exc)
            finally:
                with anyio.CancelScope(shield=True):
                    await relayed.aclose()
            if carrier.active:
                message = replace(message, items=[carrier.item(i) for i in message.items])
            assert side.reply is not None  # checked before the request went upstream
            return JSONResponse(side.reply(message))
        writer = BodyWriter(get_encoder(side.stream_dialect)())
        body_sink = _Body(writer, carrier.event if carrier.active else None)
        relayed = Relayed(chain, chat, (body_sink, *self._sinks()))
        try:
            await relayed.start()
        except StreamflowError as exc:
            with anyio.CancelScope(shield=True):
                await relayed.aclose()
            return _error(dialect, exc)
        return EventStreamResponse(_encode(relayed, body_sink, writer),
                                   media_type=writer.encoder.media_type,
                                   headers={"cache-control": "no-cache"})

    def chain(self, chat: ChatRequest, headers: Headers, first: HTTPRequest) -> Failover:
        """This request's failover chain: the upstream (``first`` is its request as it
        goes: the client's own body when the dialects match), then each fallback that
        can carry what the client asked for (the others are left out, logged)."""
        endpoints = [self.upstream.endpoint(headers, passthrough=first, turns=len(chat.turns))]
        for fallback in self.fallbacks:
            lost = get_request(fallback.dialect).unsupported(chat)
            if lost:
                log.info("fallback %s left out of this request: it cannot carry %s",
                         fallback.name, ", ".join(k[:64] for k in lost[:DROP_LINES]))
                continue
            endpoints.append(fallback.endpoint(headers))
        return self.failover.bound(endpoints)

    def _sinks(self) -> tuple[Any, ...]:
        """This answer's own sinks (:attr:`sinks`)."""
        return tuple(self.sinks()) if self.sinks is not None else ()

    def check(self, chat: ChatRequest) -> None:
        """Refuse (``RequestError``, a 400) what the upstream cannot carry, or drop it.

        Several choices (``n > 1``) are carried apart only by an OpenAI chat upstream
        (the client's body goes on as it is); elsewhere they would be merged.
        """
        upstream = get_request(self.upstream.dialect)
        lost = upstream.unsupported(chat)
        if lost and self.drop_unsupported:
            for key in lost[:DROP_LINES]:  # a client's own names: shown as inert, short reprs
                log.info("dropped %r: the %s upstream cannot carry it", key[:64], upstream.name)
            if len(lost) > DROP_LINES:
                log.info("dropped %d more options the %s upstream cannot carry",
                         len(lost) - DROP_LINES, upstream.name)
            upstream.drop(chat, lost)
        elif lost:
            raise RequestError(f"the {upstream.name} upstream cannot carry "
                                f"{', '.join(lost)}; leave {'it' if len(lost) == 1 else 'them'}"
                                " out (or start the gateway with --drop-unsupported)")


class ClientRoute:
    """The ASGI app of one client route (a callable object: starlette passes it raw ASGI)."""

    def __init__(self, gateway: Gateway, dialect: str) -> None:
        self.gateway = gateway
        self.dialect = dialect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.gateway.serve(scope, receive, send, self.dialect)


def _passthrough(built: HTTPRequest, body: Any, model: str) -> HTTPRequest:
    """The client's own body (same dialect as the upstream), forced to stream with usage."""
    raw = dict(body)
    raw["stream"] = True
    raw["model"] = model
    if "stream_options" in built.json:
        raw["stream_options"] = {**(raw.get("stream_options") or {}), "include_usage": True}
    return HTTPRequest(built.url, built.headers, raw, built.method)


def _error(dialect: str, error: StreamflowError, *, status: int | None = None) -> JSONResponse:
    if not isinstance(error, RequestError) and status is None:
        log.warning("upstream failure answered to the client: %s", error)
    code, envelope = error_response(dialect, error, status=status)
    headers = {}
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    return JSONResponse(envelope, status_code=code, headers=headers)


class _Body:
    """The client's body, written by a sync sink as the run's events arrive; the relay
    takes what it wrote after each upstream chunk (:meth:`written`)."""

    __slots__ = ("convert", "out", "writer")

    def __init__(self, writer: BodyWriter, convert: Callable[[UniEvent], UniEvent] | None
                 ) -> None:
        self.writer = writer
        self.convert = convert
        self.out: list[bytes] = []

    def on_next(self, event: Any) -> None:
        if type(event) is UniEvent:
            data = self.writer.feed(event if self.convert is None else self.convert(event))
            if data:
                self.out.append(data)

    def on_error(self, error: Exception) -> None:
        """The relay writes the in-band error (after the run settled)."""

    def on_completed(self) -> None:
        """Nothing more: the stop event wrote the body's end."""

    def written(self) -> bytes:
        """What was written since the last call (``b""``: nothing)."""
        if not self.out:
            return b""
        data = self.out[0] if len(self.out) == 1 else b"".join(self.out)
        self.out.clear()
        return data


async def _encode(relayed: Relayed, body: _Body, writer: BodyWriter) -> AsyncIterator[bytes]:
    """The client's body: the answer (its first chunk already read) through the driven
    run into the client's encoder, written after each chunk; a failure (a cut body with
    no fallback left included) as the in-band error, which ends the body (the response
    has started)."""
    try:
        async for chunk in relayed.relay(body.written):
            yield chunk
        outcome = relayed.outcome(body)
        error: StreamflowError | None = None
        if isinstance(outcome, StreamflowError):
            error = outcome
            log.info("upstream stream failed after the answer started: %s", error)
        elif isinstance(outcome, BaseException):
            raise outcome  # a bug of ours: as itself
        tail, _ = writer.close(error)
        yield body.written() + tail
    finally:
        with anyio.CancelScope(shield=True):
            await relayed.aclose()


def create_app(upstream: str | Upstream, upstream_dialect: str | None = None, *,
               api_key: str | None = None, model: str | None = None,
               client: httpx.AsyncClient | None = None,
               limits: Limits = DEFAULT_LIMITS, drop_unsupported: bool = False,
               request_limits: GatewayLimits = DEFAULT_GATEWAY_LIMITS,
               carry_key: bytes | None = None,
               sinks: Callable[[], Iterable[Any]] | None = None,
               fallbacks: Sequence[Upstream] = (),
               failover: Failover | None = None) -> Starlette:
    """A starlette app translating every client dialect (:func:`client_routes`) to ``upstream``.

    ``upstream`` is the upstream API's base URL (with ``upstream_dialect``) or an
    :class:`Upstream`. ``drop_unsupported`` drops client options the upstream
    cannot carry instead of answering 400 (see the module doc). ``limits`` bound
    what is read from the upstream, ``request_limits`` what is accepted from a
    client (:class:`~streamflow.servers.gateway.limits.GatewayLimits`); ``carry_key`` signs
    replay-state tokens (give every instance behind one address the same key;
    default: a random per-process key, with a logged warning); ``sinks()`` gives each
    answer's own sync sinks (``lambda: [LogSink("gateway")]``). ``fallbacks`` are the
    upstreams an answer goes on at when the upstream fails (in order, any dialect);
    ``failover`` how: tries per upstream, backoff, first-chunk and stall timeouts, the
    breaker (a :class:`~streamflow.app.failover.Failover`, whose own endpoints are
    replaced by these; default: one try each). The app closes the HTTP clients it made
    when its lifespan ends (when mounted in another app, they live as long as the
    process).
    """
    if isinstance(upstream, str):
        if not upstream_dialect:
            raise ValueError("create_app needs upstream_dialect with an upstream URL")
        upstream = Upstream(upstream, upstream_dialect, api_key=api_key, model=model,
                            client=client, limits=limits)
    every = [upstream, *fallbacks]
    for one in every:
        get_request(one.dialect)  # an upstream needs a request side: fail here, not per request
    target = upstream
    gateway = Gateway(target, drop_unsupported=drop_unsupported, limits=request_limits,
                      carry_key=carry_key, sinks=sinks, fallbacks=fallbacks, failover=failover)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for one in every:
                await one.aclose()

    routes = [Route(path, gateway.handler(dialect), methods=["POST"])
              for path, dialect in client_routes().items()]
    routes += [Route(path, ModelsRoute(target, dialects, request_limits), methods=["GET"])
               for path, dialects in models_routes().items()]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.gateway = gateway
    return app
