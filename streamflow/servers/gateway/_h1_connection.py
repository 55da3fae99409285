"""One upstream connection of :class:`~._h1.H1Transport`: an asyncio Protocol feeding llhttp.

httptools' parser (llhttp, in C) is fed each socket read in ``data_received``; its
callbacks collect the head and queue the body, and wake the one task reading it.
The rules that keep a hostile or broken upstream from reaching another client are
here (see :mod:`._h1` for the list): bytes that arrive while no request is
waiting, or after its answer ended, spoil the connection; the head is bounded by
``MAX_HEAD``; the socket is paused while ``READ_BUFFER`` bytes wait to be read.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Protocol

import httptools
import httpx

from ._transport import EXTRA_INFO, READ_BUFFER

MAX_HEAD = 64 * 1024
"""Bytes a response head (with any ``1xx`` before it) may take."""

CHUNK_COST = 64
"""Bytes one queued chunk counts beyond its length (its object), so a body of tiny chunks
pauses the socket as soon as one of big ones would."""

Origin = tuple[bytes, str, int]


class Keeper(Protocol):
    """Where idle connections wait (the transport's pool)."""

    def put(self, connection: Connection) -> None: ...

    def forget(self, connection: Connection) -> None: ...


class Connection(asyncio.Protocol):
    """One upstream connection; the parser's callbacks fill the queue its reader takes."""

    def __init__(self, pool: Keeper, origin: Origin) -> None:
        self.pool, self.origin = pool, origin
        self.loop = asyncio.get_running_loop()
        self.transport: Any = None
        self.parser = httptools.HttpResponseParser(self)
        self.busy = self.closed = self.spoiled = self.write_paused = False
        self.idle_since = 0.0
        self.request: httpx.Request | None = None
        self.can_write: asyncio.Future[None] | None = None
        self._begin()

    def _begin(self) -> None:
        self.head: asyncio.Future[tuple[int, bytes]] = self.loop.create_future()
        self.headers: list[tuple[bytes, bytes]] = []
        self.reason = b""
        self.chunks: deque[bytes] = deque()
        self.buffered = self.head_bytes = 0
        self.done = self.keep = self.paused = False
        self.to_close = True  # an answer without framing ends with the connection
        self.error: Exception | None = None
        self.waiter: asyncio.Future[None] | None = None

    def start(self, request: httpx.Request) -> None:
        """Take the connection for ``request`` (a fresh answer state)."""
        if self.closed or self.spoiled:
            raise httpx.RemoteProtocolError("the upstream closed the connection", request=request)
        self._begin()
        self.request, self.busy = request, True

    # -- asyncio.Protocol
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.busy or self.done:  # unasked: never to be read as the next answer
            self.spoiled = True
            if not self.busy:
                self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError:
            raise  # our own bug: let it surface
        except httptools.HttpParserUpgrade:
            self.fail(httpx.RemoteProtocolError(
                "the upstream switched protocols (101), which the gateway does not speak",
                request=self.request))
        except httptools.HttpParserError as exc:
            self.fail(httpx.RemoteProtocolError(f"the upstream's answer is not HTTP/1.1: {exc}",
                                                request=self.request))
        if not self.head.done():
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD:
                self.fail(httpx.RemoteProtocolError(
                    f"the upstream's response head is over {MAX_HEAD} bytes",
                    request=self.request))
        elif self.buffered > READ_BUFFER and not self.paused and not self.closed:
            self.paused = True
            self.transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        if self.busy and not self.done and self.error is None:
            if self.head.done() and self.to_close and exc is None:
                self.done = True  # the body was everything up to the close
            elif exc is not None:
                self.fail(httpx.ReadError(str(exc) or type(exc).__name__, request=self.request))
            elif self.head.done():
                self.fail(httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body",
                    request=self.request))
            else:
                self.fail(httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=self.request))
        self._wake()
        if self.can_write is not None and not self.can_write.done():
            self.can_write.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.can_write is not None and not self.can_write.done():
            self.can_write.set_result(None)

    # -- httptools callbacks
    def on_message_begin(self) -> None:
        if self.done:  # a second answer to one request
            self.spoiled = True

    def on_status(self, part: bytes) -> None:
        if not self.head.done():
            self.reason += part

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.head.done():  # (a chunked body's trailers are dropped, not piled up)
            self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.done:
            return
        status = self.parser.get_status_code()
        if status < 200:  # informational: its end comes, then the real head
            self.headers, self.reason = [], b""
            return
        framing = {name.lower(): value for name, value in self.headers
                   if name.lower() in (b"content-length", b"transfer-encoding")}
        chunked = framing.get(b"transfer-encoding", b"").rstrip().lower().endswith(b"chunked")
        self.to_close = not (status in (204, 304) or chunked or b"content-length" in framing)
        self.head.set_result((status, self.reason))

    def on_body(self, body: bytes) -> None:
        if not self.done:
            self.chunks.append(body)
            self.buffered += len(body) + CHUNK_COST
            self._wake()

    def on_message_complete(self) -> None:
        if self.head.done() and not self.done:  # (not the end of a 1xx answer)
            self.done = True
            self.keep = self.parser.should_keep_alive()
            self._wake()

    # -- the request's side
    def fail(self, error: Exception) -> None:
        """End the answer with ``error`` and close the connection."""
        if self.error is None:
            self.error = error
            if not self.head.done():
                self.head.set_exception(error)
        self._wake()
        self.close()

    def close(self) -> None:
        self.closed = True
        self.pool.forget(self)
        if not self.head.done():  # nobody will wait for it
            self.head.cancel()
        if self.transport is not None:
            self.transport.close()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def send(self, data: bytes, timeout: float | None) -> None:
        """Write the request; wait while the socket's buffer is full."""
        self.transport.write(data)
        if self.write_paused and not self.closed:
            self.can_write = self.loop.create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self.can_write
            except TimeoutError:
                raise httpx.WriteTimeout("the upstream did not take the request in time",
                                         request=self.request) from None

    async def response_head(self, timeout: float | None) -> tuple[int, bytes]:
        """The final status and reason (headers in ``self.headers``)."""
        try:
            async with asyncio.timeout(timeout):
                return await self.head
        except TimeoutError:
            raise httpx.ReadTimeout("no response head in time", request=self.request) from None

    async def wait(self, timeout: float | None) -> None:
        """Until the body has more bytes, ends, or fails."""
        self.waiter = self.loop.create_future()
        try:
            if timeout is None:
                await self.waiter
            else:
                async with asyncio.timeout(timeout):
                    await self.waiter
        except TimeoutError:
            raise httpx.ReadTimeout("no body bytes in time", request=self.request) from None
        finally:
            self.waiter = None

    def take(self) -> bytes:
        """Everything queued, as one chunk; the socket resumed once there is room."""
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        if self.paused and not self.closed:
            self.paused = False
            self.transport.resume_reading()
        return data

    def get_extra_info(self, info: str) -> Any:
        """httpcore's names (``client_addr``, ``server_addr``) or the transport's."""
        name = EXTRA_INFO.get(info, info)
        return self.transport.get_extra_info(name) if self.transport is not None else None
