"""THE chunk pump: one idle timeout, deadline and error mapping for every byte reader.

Sources (``run()`` over ``from_httpx``) and the gateway's upstream read a body through
the same :class:`~streamflow.reactive._scope.ChunkReader`, so the same dripping server gives
both the same typed errors -- the deadline included (asyncio and trio).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from anyio.abc import SocketStream

import streamflow
from streamflow import Endpoint, Failover, Limits, StreamTimeoutError, TransportError
from streamflow.app.providers import HTTPRequest
from streamflow.core.requests import ChatRequest
from streamflow.reactive._chunk_reader import ChunkReader
from streamflow.reactive.sources import from_httpx
from streamflow.servers.gateway._upstream import Relayed, Upstream
from tests.sources.test_http_timeouts import hostile

pytestmark = pytest.mark.anyio

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
START = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1",'
         b'"type":"message","role":"assistant","model":"claude","content":[],'
         b'"usage":{"input_tokens":7,"output_tokens":0}}}\n\n')


async def drip_pings(stream: SocketStream) -> None:
    """A 200 that starts a message, then pings every 0.1 s forever: never idle."""
    await stream.send(HEAD + START)
    while True:
        await anyio.sleep(0.1)
        await stream.send(b'event: ping\ndata: {"type":"ping"}\n\n')


async def start_then_silence(stream: SocketStream) -> None:
    await stream.send(HEAD + START)
    await anyio.sleep(30)


async def start_then_hang_up(stream: SocketStream) -> None:
    await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                      b"content-length: 10000\r\n\r\n" + START)


async def via_run(url: str, limits: Limits) -> BaseException:
    async with httpx.AsyncClient(timeout=None) as http:
        source = from_httpx(http, http.build_request("POST", url + "/v1/messages"),
                            limits=limits)
        with pytest.raises(streamflow.StreamflowError) as caught:
            await streamflow.run(source)
    return caught.value


async def via_upstream(url: str, limits: Limits) -> BaseException:
    upstream = Upstream(url + "/v1/messages", "anthropic", limits=limits)
    request = HTTPRequest(url + "/v1/messages", {}, {})
    chain = Failover([Endpoint("anthropic", lambda chat: request, send=upstream.send,
                               limits=limits)])
    relayed = Relayed(chain, ChatRequest(), ())  # the gateway's answer: its driven run
    try:
        with pytest.raises(streamflow.StreamflowError) as caught:
            await relayed.message()  # the driven run's outcome, raised
    finally:
        await relayed.aclose()
        await upstream.aclose()
    return caught.value


@pytest.mark.parametrize("read", [via_run, via_upstream], ids=["source", "gateway"])
async def test_the_deadline_ends_a_stream_that_never_goes_idle(read: object) -> None:
    async with hostile(drip_pings) as url:
        started = time.monotonic()
        error = await read(url, Limits(idle_timeout=5, deadline=0.6))  # type: ignore[operator]
    assert time.monotonic() - started < 3
    assert isinstance(error, StreamTimeoutError)
    assert (error.kind, error.seconds) == ("deadline", 0.6)
    assert error.partial is not None and error.partial.id == "m1"
    usage = error.partial.usage_metadata  # the counts of message_start, not final
    assert usage is not None and usage.prompt_tokens == 7 and not usage.final


@pytest.mark.parametrize("read", [via_run, via_upstream], ids=["source", "gateway"])
async def test_an_idle_gap_is_the_idle_timeout_with_the_partial(read: object) -> None:
    async with hostile(start_then_silence) as url:
        error = await read(url, Limits(idle_timeout=0.4, deadline=20))  # type: ignore[operator]
    assert isinstance(error, StreamTimeoutError)
    assert (error.kind, error.seconds) == ("idle", 0.4)
    assert error.partial is not None and error.partial.id == "m1"


@pytest.mark.parametrize("read", [via_run, via_upstream], ids=["source", "gateway"])
async def test_a_dropped_connection_is_a_transport_error_with_the_partial(read: object) -> None:
    async with hostile(start_then_hang_up) as url:
        error = await read(url, Limits(idle_timeout=5))  # type: ignore[operator]
    assert isinstance(error, TransportError)
    assert error.partial is not None and error.partial.id == "m1"


async def test_reader_maps_transport_errors_and_passes_our_own() -> None:
    async def failing(exc: Exception) -> AsyncIterator[bytes]:
        yield b"x"
        raise exc

    reader = ChunkReader(Limits(idle_timeout=1), lambda exc: TransportError(f"mapped {exc}"))
    chunks = failing(OSError("reset"))
    assert await reader.next(chunks) == b"x"
    with pytest.raises(TransportError, match="mapped reset") as caught:
        await reader.next(chunks)
    assert isinstance(caught.value.__cause__, OSError)
    ours = failing(ValueError("a bug of ours"))  # the mapper returns it unchanged
    reader = ChunkReader(None, lambda exc: exc)
    await reader.next(ours)
    with pytest.raises(ValueError, match="a bug of ours") as bug:
        await reader.next(ours)
    assert bug.value.__cause__ is None  # never its own cause
