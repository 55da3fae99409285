"""A real loopback HTTP/1.1 server that replays recorded bodies (anyio + h11).

It is what the tests stream from (so the client is real ``httpx`` over a real
socket) and what ``streamflow demo`` plays recordings with::

    routes = {"/v1/messages": Route.from_body(body, delays=0.001)}
    async with ReplayServer(routes) as server:
        async with httpx.AsyncClient() as client:
            await client.post(server.url + "/v1/messages")
        assert server.hits[0].completed

``routes`` maps a path to a :class:`Route` (any method), or to a list of routes
served to successive requests on that path (the last one repeats: ``[Route.error(503,
...), Route.from_body(body)]`` is "fail once, then stream"), or to a function of the
request (its :class:`Hit`: method, path, headers, body) returning the route -- a fake
upstream that answers what it was asked. A single ``Route`` serves every path. Unknown
paths get 404.

Each response body is written with chunked transfer encoding, one HTTP chunk per
``Route.chunks`` entry. While writing, the server also watches the socket: when
the client closes the connection mid-body it stops writing and records
``hit.disconnected = True`` (``await server.wait_disconnect()`` waits for it) -- how
tests assert that a provider would have seen the cancellation.

The server binds 127.0.0.1 on an ephemeral port and runs in the caller's event
loop (asyncio or trio) inside the ``async with`` block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType

import anyio
import h11
from anyio.abc import SocketAttribute, SocketStream, TaskGroup

from .routes import Hit, Route

__all__ = ["Hit", "ReplayServer", "Responder", "Route"]

Responder = Callable[[Hit], Route]
"""A route computed from the request it answers (see the module doc)."""

_NOT_FOUND = Route.error(404, {"error": {"type": "not_found", "message": "no such route"}})


class ReplayServer:
    """Loopback HTTP/1.1 replay server; ``async with`` it, then use :attr:`url`."""

    def __init__(self, routes: Route | Mapping[str, Route | list[Route] | Responder],
                 *, host: str = "127.0.0.1") -> None:
        self.routes = routes
        self.host = host
        self.port = 0
        self.hits: list[Hit] = []
        self._served: dict[str, int] = {}
        self._tg: TaskGroup | None = None
        self._changed: anyio.Event | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> ReplayServer:
        self._changed = anyio.Event()
        listener = await anyio.create_tcp_listener(local_host=self.host, local_port=0)
        self.port = listener.extra(SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._serve_connection)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        """Stop serving. An exception raised in the block propagates as itself (never
        wrapped in an ``ExceptionGroup``), so ``except ProviderError`` around it works."""
        tg, self._tg = self._tg, None
        assert tg is not None, "use `async with ReplayServer(...)`"
        tg.cancel_scope.cancel()
        try:
            await tg.__aexit__(None, None, None)  # the block's own error is not the group's
        except BaseExceptionGroup as group:
            if exc is not None:
                return None  # the block's error wins; the server tasks were cancelled
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return None

    def route_for(self, path: str, hit: Hit | None = None) -> Route:
        """The route that answers the next request for ``path`` (``hit``: the request,
        for a route given as a function of it)."""
        if isinstance(self.routes, Route):
            return self.routes
        entry = self.routes.get(path.split("?", 1)[0])
        if entry is None:
            return _NOT_FOUND
        if isinstance(entry, Route):
            return entry
        if callable(entry):
            return entry(hit if hit is not None else Hit("GET", path, {}))
        n = self._served.get(path, 0)
        self._served[path] = n + 1
        return entry[min(n, len(entry) - 1)]

    async def wait_disconnect(self, timeout: float = 5.0) -> Hit:
        """Wait until some request saw its client disconnect mid-body; returns that hit."""
        with anyio.fail_after(timeout):
            while True:
                for hit in self.hits:
                    if hit.disconnected:
                        return hit
                await self._wait_change()

    async def wait_done(self, timeout: float = 5.0) -> None:
        """Wait until every request so far has finished (completed or disconnected)."""
        with anyio.fail_after(timeout):
            for hit in list(self.hits):
                await hit.done.wait()

    async def _wait_change(self) -> None:
        assert self._changed is not None, "use the server inside `async with`"
        await self._changed.wait()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
        self._changed = anyio.Event()

    # -- one connection -------------------------------------------------------
    async def _serve_connection(self, stream: SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            try:
                while await self._serve_request(conn, stream):
                    conn.start_next_cycle()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError,
                    ConnectionError, h11.RemoteProtocolError):
                pass

    async def _serve_request(self, conn: h11.Connection, stream: SocketStream) -> bool:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive(65536))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            else:  # ConnectionClosed / PAUSED before a request
                return False
        assert request is not None
        hit = Hit(request.method.decode(), request.target.decode(),
                  {k.decode().lower(): v.decode() for k, v in request.headers}, bytes(body))
        self.hits.append(hit)
        self._notify()
        try:
            await self._respond(conn, stream, hit, self.route_for(hit.path, hit))
        finally:
            hit.done.set()
            self._notify()
        return hit.completed and conn.our_state is h11.DONE and conn.their_state is h11.DONE

    async def _respond(self, conn: h11.Connection, stream: SocketStream, hit: Hit,
                       route: Route) -> None:
        hit.status = route.status
        headers = [("content-type", route.content_type), ("transfer-encoding", "chunked"),
                   *route.headers.items()]
        await stream.send(conn.send(h11.Response(status_code=route.status, headers=headers)))
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_client, conn, stream, hit, tg)
            try:
                for i, chunk in enumerate(route.chunks):
                    delay = route.delay(i)
                    if delay > 0:
                        await anyio.sleep(delay)
                    if chunk:
                        await stream.send(conn.send(h11.Data(data=chunk)))
                    hit.chunks_sent = i + 1
                if not route.abort:
                    await stream.send(conn.send(h11.EndOfMessage()))
                    hit.completed = True
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                hit.disconnected = True
            tg.cancel_scope.cancel()
        if route.abort and not hit.disconnected:
            await stream.aclose()  # cut mid-body: no terminating chunk

    @staticmethod
    async def _watch_client(conn: h11.Connection, stream: SocketStream, hit: Hit,
                            tg: TaskGroup) -> None:
        """A request/response client sends nothing while reading: EOF here is a disconnect."""
        while True:
            try:
                data = await stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError,
                    ConnectionError):
                data = b""
            if not data:
                hit.disconnected = True
                tg.cancel_scope.cancel()
                return
            conn.receive_data(data)  # a pipelined request: h11 keeps it for the next cycle
