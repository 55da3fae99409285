"""The gateway's upstream transport: httpx over asyncio's own streams when on asyncio.

httpx's default transport reads through anyio, which on asyncio arms a cancel
scope and pauses, then resumes, the socket's reader on every read, which costs
a client measurably more CPU per chunk than this transport (``bench/README.md``,
"Where a gateway event's CPU goes"). :class:`LoopTransport` is httpx's own
``AsyncHTTPTransport`` (its connection pool, HTTP/1.1 parser, TLS context and
exception mapping) with an httpcore network backend that reads from an
``asyncio.StreamReader`` instead: no timer unless httpcore asks for a timeout,
the reader paused only when its buffer is full (``READ_BUFFER`` bytes, so memory
stays bounded). Under another event loop (trio, through anyio) every call goes to
httpcore's anyio backend, as with the default transport.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import ssl
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import httpcore
import httpx
import sniffio
from httpcore._utils import is_socket_readable

READ_BUFFER = 64 * 1024
"""Bytes a connection's reader buffers before it stops reading the socket."""

EXTRA_INFO = {"client_addr": "sockname", "server_addr": "peername"}
"""httpcore's ``get_extra_info`` names -> asyncio's transport names."""

UNBOUNDED = httpx.Limits(max_connections=None)
"""The pool's default: no cap on connections (the gateway's own limits bound requests)."""

_SocketOption = (tuple[int, int, int] | tuple[int, int, bytes | bytearray]
                 | tuple[int, int, None, int])


class _LoopStream(httpcore.AsyncNetworkStream):
    """One connection as an asyncio stream pair, with httpcore's error types."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            if timeout is None:
                return await self._reader.read(max_bytes)
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            async with asyncio.timeout(timeout):
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except (OSError, RuntimeError) as exc:  # RuntimeError: written after the close
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        try:
            await self._writer.start_tls(ssl_context, server_hostname=server_hostname,
                                         ssl_handshake_timeout=timeout)
        except TimeoutError as exc:
            self._writer.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError) as exc:
            self._writer.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # the pool asks of an idle connection: reuse it or not
            return self._readable()
        name = EXTRA_INFO.get(info, info)
        if name in ("ssl_object", "sockname", "peername", "socket"):
            return self._writer.get_extra_info(name)
        return None


    def _readable(self) -> bool:
        """Whether the server closed or said anything since the last response: then the
        pool must not reuse the connection (bytes an upstream sends unasked must never be
        read as the answer to the next request, which may be another client's)."""
        reader = self._reader
        if reader.at_eof() or reader.exception() is not None or self._writer.is_closing():
            return True
        if getattr(reader, "_buffer", None):  # read from the socket already, not asked for
            return True
        # not yet read by the loop: httpcore's own check, as its anyio backend makes it
        return is_socket_readable(self._writer.get_extra_info("socket"))


class LoopBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio streams; on any other loop, anyio's."""

    def __init__(self) -> None:
        self._other = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[_SocketOption] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        if sniffio.current_async_library() != "asyncio":
            return await self._other.connect_tcp(host, port, timeout, local_address,
                                                 socket_options)
        # happy eyeballs as anyio does it, where the loop has it (uvloop's has not)
        eyeballs = ({"happy_eyeballs_delay": 0.25}
                    if isinstance(asyncio.get_running_loop(), asyncio.BaseEventLoop) else {})
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, limit=READ_BUFFER, **eyeballs,
                    local_addr=(local_address, 0) if local_address else None)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _LoopStream(reader, writer)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[_SocketOption] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        return await self._other.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._other.sleep(seconds)


SHARD = 64
"""Requests in flight per httpcore pool of :class:`ShardedPool`."""


class _Released:
    """A response body that tells its :class:`ShardedPool` when it is closed."""

    def __init__(self, stream: Any, pool: ShardedPool, shard: int) -> None:
        self._stream = stream
        self._pool = pool
        self._shard: int | None = shard

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.__aiter__()  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        try:
            if hasattr(self._stream, "aclose"):
                await self._stream.aclose()
        finally:
            if self._shard is not None:
                self._pool.release(self._shard)
                self._shard = None


class ShardedPool:
    """Several httpcore connection pools, each given at most ``shard`` requests at a time.

    httpcore's pool walks every one of its connections whenever a request starts or
    ends: with 3,000 streams open through one pool, that walk was half the gateway's CPU
    (``bench/README.md``, "Servers"). A request goes to the first pool with fewer than
    ``shard`` requests in flight (a new pool when none has), so each walk covers one
    shard's connections, and an idle keep-alive connection is found where requests went
    before. ``make()`` builds one pool.
    """

    def __init__(self, make: Callable[[], httpcore.AsyncConnectionPool],
                 shard: int = SHARD) -> None:
        self._make = make
        self._shard = shard
        self._pools: list[httpcore.AsyncConnectionPool] = []
        self._busy: list[int] = []  # requests in flight per pool

    def _pick(self) -> int:
        """The first pool with room (a new one if none has): requests go where they went
        before, so that pool's kept-alive connections are the ones reused."""
        busy = self._busy
        for shard, count in enumerate(busy):
            if count < self._shard:
                return shard
        self._pools.append(self._make())
        busy.append(0)
        return len(busy) - 1

    def release(self, shard: int) -> None:
        """A request of pool ``shard`` ended (its body was closed)."""
        self._busy[shard] -= 1

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        shard = self._pick()
        self._busy[shard] += 1
        try:
            response = await self._pools[shard].handle_async_request(request)
        except BaseException:
            self.release(shard)
            raise
        response.stream = _Released(response.stream, self, shard)
        return response

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()

    async def __aenter__(self) -> ShardedPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class LoopTransport(httpx.AsyncHTTPTransport):
    """httpx's ``AsyncHTTPTransport`` (no proxy) whose pools connect with :class:`LoopBackend`.

    With no cap on connections (the default) requests are spread over a
    :class:`ShardedPool`; with a cap, one pool enforces it.
    """

    def __init__(self, *, limits: httpx.Limits = UNBOUNDED,
                 verify: ssl.SSLContext | bool = True, http2: bool = False) -> None:
        context = verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify)
        super().__init__(limits=limits, verify=context, http2=http2)
        self._ssl_context = context

        def make() -> httpcore.AsyncConnectionPool:
            return httpcore.AsyncConnectionPool(
                ssl_context=context,
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry, http2=http2,
                network_backend=LoopBackend())

        self._pool: Any = make() if limits.max_connections is not None else ShardedPool(make)


class NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing and sends nothing.

    The gateway's one upstream client serves every client: a cookie an upstream set
    for one request must not ride along on another client's request. Keeping none also
    skips httpx's cookie bookkeeping on every response.
    """

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None
