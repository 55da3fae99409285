"""Every wait of an HTTP exchange is bounded, over real loopback sockets (asyncio and trio).

The servers here misbehave on purpose at the socket level: they accept and never
answer, drip the response headers, or drip a 503's error body; a listener whose
backlog is full never completes the TCP handshake.
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

import streamflow
from streamflow import HTTPStatusError, Limits, StreamTimeoutError, TransportError
from streamflow.reactive.sources import from_httpx

pytestmark = pytest.mark.anyio
Handler = Callable[[SocketStream], Awaitable[None]]
IDLE = 0.4


@asynccontextmanager
async def hostile(handler: Handler) -> AsyncIterator[str]:
    """A loopback TCP server running ``handler`` per connection; yields its base URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def serve(stream: SocketStream) -> None:
        async with stream:
            await stream.receive(65536)  # the request
            try:
                await handler(stream)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the client hung up, as it should

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            tg.cancel_scope.cancel()


async def silent(stream: SocketStream) -> None:
    await anyio.sleep(30)


async def drip_headers(stream: SocketStream) -> None:
    for byte in b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-pad: " + b"a" * 200:
        await stream.send(bytes([byte]))
        await anyio.sleep(0.1)  # each read is quick; the headers never end


async def drip_503(stream: SocketStream) -> None:
    await stream.send(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                      b"content-length: 500\r\n\r\n")
    for byte in b'{"error": {"message": "overloaded", "type": "server_error"}}' + b" " * 400:
        await stream.send(bytes([byte]))
        await anyio.sleep(0.15)


async def stalled_503(stream: SocketStream) -> None:
    await stream.send(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 500\r\n\r\n"
                      b'{"error": ')
    await anyio.sleep(30)


async def run_against(url: str, *, client: httpx.AsyncClient | None = None) -> None:
    async with client or httpx.AsyncClient(timeout=None) as http:
        source = from_httpx(http, http.build_request("POST", url + "/v1/messages"),
                            limits=Limits(idle_timeout=IDLE))
        await streamflow.run(source)


async def test_no_response_headers_is_an_idle_timeout_naming_the_request() -> None:
    async with hostile(silent) as url:
        started = time.monotonic()
        with pytest.raises(StreamTimeoutError) as caught:
            await run_against(url)
    assert time.monotonic() - started < IDLE + 2
    error = caught.value
    assert (error.kind, error.seconds) == ("idle", IDLE)
    assert f"no response headers from POST {url}/v1/messages" in error.message
    assert error.partial is not None and error.partial.items == []


async def test_headers_dripped_forever_are_bounded_as_a_whole() -> None:
    async with hostile(drip_headers) as url:
        started = time.monotonic()
        with pytest.raises(StreamTimeoutError) as caught:
            await run_against(url)
    assert time.monotonic() - started < IDLE + 2
    assert "no response headers" in caught.value.message


async def test_error_body_dripped_forever_times_out_with_the_bytes_received() -> None:
    async with hostile(drip_503) as url:
        started = time.monotonic()
        with pytest.raises(StreamTimeoutError) as caught:
            await run_against(url)
    assert time.monotonic() - started < IDLE + 2
    error = caught.value
    assert f"HTTP 503 from POST {url}/v1/messages" in error.message
    assert "its error body unfinished after" in error.message and "'{\"e" in error.message
    assert isinstance(error.__cause__, HTTPStatusError) and error.__cause__.status == 503
    assert error.retryable


async def test_error_body_that_stalls_times_out_too() -> None:
    async with hostile(stalled_503) as url:
        with pytest.raises(StreamTimeoutError) as caught:
            await run_against(url)
    assert "HTTP 503" in caught.value.message and "after 10 bytes" in caught.value.message


async def test_connect_that_never_completes_is_a_connect_timeout() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(5):  # fill the accept backlog: later handshakes get no answer
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=0.3))
        with pytest.raises(StreamTimeoutError) as caught:
            await run_against(f"http://127.0.0.1:{port}", client=client)
    finally:
        for sock in [*fillers, listener]:
            sock.close()
    assert caught.value.kind == "connect"
    assert f"POST http://127.0.0.1:{port}/v1/messages" in caught.value.message


def test_connect_timeout_default_applies_when_the_client_sets_none() -> None:
    from streamflow.reactive.sources.http import CONNECT_TIMEOUT, _request

    request = httpx.Client(timeout=None).build_request("GET", "http://127.0.0.1:9/")
    timeout = _request(request, 3.0).extensions["timeout"]
    assert (timeout["connect"], timeout["read"], timeout["write"]) == (CONNECT_TIMEOUT, 3.0, 3.0)


async def test_refused_connection_is_a_transport_error_naming_the_request() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(TransportError) as caught:
        await run_against(f"http://127.0.0.1:{port}")
    assert f"(POST http://127.0.0.1:{port}/v1/messages)" in caught.value.message


async def test_sync_client_is_bounded_too() -> None:
    def blocking(url: str) -> None:
        with httpx.Client(timeout=None) as client:
            source = from_httpx(client, client.build_request("POST", url),
                                limits=Limits(idle_timeout=IDLE))
            streamflow.run_sync(source)

    async with hostile(silent) as url:
        with pytest.raises(StreamTimeoutError) as caught:
            await anyio.to_thread.run_sync(blocking, url + "/a")
        assert "no response headers from POST" in caught.value.message
    async with hostile(drip_503) as url:
        with pytest.raises(StreamTimeoutError) as caught:
            await anyio.to_thread.run_sync(blocking, url + "/b")
        assert "HTTP 503" in caught.value.message
