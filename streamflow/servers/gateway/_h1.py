"""The gateway's upstream HTTP/1.1 client on asyncio: llhttp (httptools) under a Protocol.

httpx's transport reads a streamed body through httpcore and h11: per chunk, an
await on the socket's stream, two passes of h11's state machine and httpcore's
exception mapping: several times the CPU per chunk of httptools parsing the bytes in
the protocol's ``data_received`` and waking the reader once (``bench/README.md``,
"Servers", has the figures). :class:`H1Transport` sends the gateway's requests that way and hands
every other one to :class:`~._transport.LoopTransport` (its parent): a loop other
than asyncio, a ``HEAD`` or ``CONNECT``, a body of unknown length, a cap on
connections (httpcore's pool enforces it), HTTP/2.

What it keeps of httpx's transport, each tested in ``tests/gateway/test_h1.py``
(the connection itself is :mod:`._h1_connection`):

- a kept-alive connection reused per origin (newest first), closed after
  ``keepalive_expiry`` idle, and never reused once the upstream sent a byte or
  closed while it was idle: bytes sent unasked are never read as the next answer
  (which may be another client's);
- the response head bounded (``MAX_HEAD`` bytes, informational ``1xx`` answers
  included), ``101`` refused, anything llhttp cannot parse a ``RemoteProtocolError``;
- the body framed by ``Content-Length``, chunked, or read to the close; one that ends
  early a ``RemoteProtocolError``; what arrived in one socket read handed out as one
  chunk; the socket paused while ``READ_BUFFER`` bytes wait for the reader;
- the request's timeouts (connect with TLS, write, read: the head and each body wait);
- header names and values checked (no CR, LF or NUL): a forwarded value cannot
  smuggle a second request;
- httpx's own exception types, so every caller maps errors as before.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx
import sniffio
from httpcore._utils import is_socket_readable

from ._h1_connection import Connection, Origin
from ._transport import UNBOUNDED, LoopTransport

_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(rb"[^\x00\r\n]*")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_OTHER = frozenset({b"HEAD", b"CONNECT"})  # answers llhttp cannot frame alone


class _Body(httpx.AsyncByteStream):
    """A response body: the connection goes back to the pool once it has been read whole."""

    def __init__(self, connection: Connection, timeout: float | None, keep: bool) -> None:
        self._connection: Connection | None = connection
        self._timeout = timeout
        self._keep = keep  # the request did not ask to close

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (connection := self._connection) is not None:
            if connection.chunks:
                yield connection.take()
            elif connection.error is not None:
                raise connection.error
            elif connection.done:
                self._release()
            else:
                await connection.wait(self._timeout)

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        connection.busy = False
        if (connection.done and connection.keep and self._keep and connection.error is None
                and not connection.spoiled and not connection.closed):
            connection.pool.put(connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        self._release()


class _Pool:
    """Idle kept-alive connections per origin, newest last."""

    def __init__(self, limits: httpx.Limits) -> None:
        self.expiry = limits.keepalive_expiry
        self.keep_at_most = limits.max_keepalive_connections
        self.idle: dict[Origin, dict[Connection, None]] = {}

    def get(self, origin: Origin) -> Connection | None:
        """The newest idle connection to ``origin`` still fit for a request, or None."""
        idle = self.idle.get(origin)
        now = asyncio.get_running_loop().time()
        while idle:
            connection, _ = idle.popitem()
            fresh = self.expiry is None or now - connection.idle_since <= self.expiry
            socket = connection.transport.get_extra_info("socket")
            if fresh and not connection.spoiled and not connection.closed \
                    and not (socket is not None and is_socket_readable(socket)):
                return connection
            connection.close()  # expired, or the upstream spoke or closed while it was idle
        return None

    def put(self, connection: Connection) -> None:
        """Keep ``connection`` idle; the oldest go when expired or over the cap."""
        idle = self.idle.setdefault(connection.origin, {})
        now = connection.idle_since = asyncio.get_running_loop().time()
        cap = self.keep_at_most
        while idle:
            oldest = next(iter(idle))
            if not ((self.expiry is not None and now - oldest.idle_since > self.expiry)
                    or (cap is not None and len(idle) >= cap)):
                break
            oldest.close()
        if cap == 0:
            connection.close()
        else:
            idle[connection] = None

    def forget(self, connection: Connection) -> None:
        idle = self.idle.get(connection.origin)
        if idle is not None:
            idle.pop(connection, None)

    def close(self) -> None:
        for idle in list(self.idle.values()):
            for connection in list(idle):
                connection.close()
        self.idle.clear()


def _head(request: httpx.Request) -> bytes:
    """The request line and header lines; ``LocalProtocolError`` if any could smuggle."""
    method, target = request.method.encode("ascii"), request.url.raw_path
    if not _TOKEN.fullmatch(method) or not _TARGET.fullmatch(target):
        raise httpx.LocalProtocolError("not a valid request line", request=request)
    lines = [method, b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if not _TOKEN.fullmatch(name) or not _FIELD_VALUE.fullmatch(value):
            raise httpx.LocalProtocolError(f"header {name!r} cannot be sent", request=request)
        lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


class H1Transport(LoopTransport):
    """:class:`LoopTransport` whose plain HTTP/1.1 requests on asyncio go through llhttp.

    Takes ``limits`` (with ``max_connections`` set, every request goes to httpcore's
    pool, which enforces it), ``verify`` (an ``SSLContext`` or a bool) and ``http2``
    (then every request goes to httpcore).
    """

    def __init__(self, *, limits: httpx.Limits = UNBOUNDED,
                 verify: ssl.SSLContext | bool = True, http2: bool = False) -> None:
        super().__init__(limits=limits, verify=verify, http2=http2)
        self._fast = limits.max_connections is None and not http2
        self._idle = _Pool(limits)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if (not self._fast or url.raw_scheme not in (b"http", b"https")
                or request.method.encode() in _OTHER or "transfer-encoding" in request.headers
                or not isinstance(request.stream, httpx.ByteStream)
                or sniffio.current_async_library() != "asyncio"):
            return await super().handle_async_request(request)
        timeouts = request.extensions.get("timeout") or {}
        head = _head(request) + request.content
        origin = (url.raw_scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        connection = self._idle.get(origin) or await self._connect(origin, request, timeouts)
        try:
            connection.start(request)
            await connection.send(head, timeouts.get("write"))
            status, reason = await connection.response_head(timeouts.get("read"))
        except BaseException:
            connection.close()
            raise
        keep = request.headers.get("connection", "").lower() != "close"
        version = b"HTTP/" + connection.parser.get_http_version().encode()
        return httpx.Response(status, headers=connection.headers,
                              stream=_Body(connection, timeouts.get("read"), keep),
                              extensions={"http_version": version, "reason_phrase": reason,
                                          "network_stream": connection})

    async def _connect(self, origin: Origin, request: httpx.Request,
                       timeouts: dict[str, float | None]) -> Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        options: dict[str, Any] = {}
        if scheme == b"https":
            options = {"ssl": self._ssl_context, "server_hostname": host}
        if isinstance(loop, asyncio.BaseEventLoop):  # happy eyeballs (uvloop has none)
            options["happy_eyeballs_delay"] = 0.25
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                _, connection = await loop.create_connection(
                    lambda: Connection(self._idle, origin), host, port, **options)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} in time",
                                       request=request) from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return connection

    async def aclose(self) -> None:
        self._idle.close()
        await super().aclose()
