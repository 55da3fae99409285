"""The gateway's upstream transports against real servers: httpx over asyncio streams
(``LoopTransport``) and llhttp under a Protocol (``H1Transport``), the same behaviour."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from security.hostile import serve

from streamflow.servers.gateway._h1 import H1Transport
from streamflow.servers.gateway._transport import READ_BUFFER, LoopTransport

pytestmark = pytest.mark.anyio

# the name of the network stream each transport reports on asyncio (on trio both use anyio's)
Kind = type[LoopTransport]
STREAM = {LoopTransport: "_LoopStream", H1Transport: "Connection"}


@pytest.fixture(params=[LoopTransport, H1Transport], ids=["loop", "h1"])
def Transport(request: pytest.FixtureRequest) -> Kind:
    return request.param  # type: ignore[no-any-return]


async def _answer(scope: Any, receive: Any, send: Any) -> None:
    """``/stream?n=N&size=S``: N chunks of S bytes; ``/slow``: headers, then nothing for 5 s."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    query = dict(p.split("=") for p in scope["query_string"].decode().split("&") if p)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    if scope["path"] == "/slow":
        await anyio.sleep(5)
    for i in range(int(query.get("n", 3))):
        await send({"type": "http.response.body", "more_body": True,
                    "body": str(i % 10).encode() * int(query.get("size", 10))})
    await send({"type": "http.response.body", "body": b""})


def _peer(response: httpx.Response) -> Any:
    stream = response.extensions["network_stream"]
    return stream.get_extra_info("client_addr")


async def test_it_streams_every_byte_and_reuses_the_kept_alive_connection(
        Transport: Kind, anyio_backend: str) -> None:
    async with serve(_answer) as url, \
            httpx.AsyncClient(transport=Transport()) as client:
        bodies, ports, streams = [], [], set()
        for _ in range(3):
            async with client.stream("GET", url + "/stream?n=50&size=1000") as response:
                ports.append(_peer(response))
                streams.add(type(response.extensions["network_stream"]).__name__)
                bodies.append(b"".join([c async for c in response.aiter_raw()]))
    expected = b"".join(str(i % 10).encode() * 1000 for i in range(50))
    assert bodies == [expected] * 3
    assert len(set(ports)) == 1, "a kept-alive connection was not reused"
    # asyncio's own streams on asyncio; anyio's (httpx's default) on any other loop
    assert streams == {STREAM[Transport] if anyio_backend == "asyncio" else "AnyIOStream"}


def test_the_gateway_reads_its_upstream_through_the_h1_transport() -> None:
    from streamflow.servers.gateway import Upstream
    client = Upstream("http://127.0.0.1:9", "openai-chat").http_client()
    assert isinstance(client._transport, H1Transport)


async def test_a_body_larger_than_the_read_buffer_arrives_whole(Transport: Kind) -> None:
    size = 4 * READ_BUFFER
    async with serve(_answer) as url, \
            httpx.AsyncClient(transport=Transport()) as client:
        response = await client.get(url + f"/stream?n=8&size={size}")
    assert len(response.content) == 8 * size


async def test_a_connection_the_server_closed_while_idle_is_replaced(Transport: Kind) -> None:
    async with serve(_answer, timeout_keep_alive=0.2) as url, \
            httpx.AsyncClient(transport=Transport()) as client:
        first = await client.get(url + "/stream")
        await anyio.sleep(0.6)  # uvicorn closes the idle kept-alive connection
        second = await client.get(url + "/stream")
    assert first.content == second.content == b"0" * 10 + b"1" * 10 + b"2" * 10


async def test_a_read_timeout_is_httpx_read_timeout(Transport: Kind) -> None:
    async with serve(_answer) as url, httpx.AsyncClient(
            transport=Transport(), timeout=httpx.Timeout(5.0, read=0.3)) as client:
        async with client.stream("GET", url + "/slow") as response:
            with pytest.raises(httpx.ReadTimeout):
                await response.aread()


async def test_a_refused_connection_is_httpx_connect_error(Transport: Kind) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with httpx.AsyncClient(transport=Transport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


def _certificate(folder: Path) -> tuple[Path, Path] | None:
    key, cert = folder / "key.pem", folder / "cert.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return key, cert


async def test_https_goes_through_tls_with_the_given_context(
        Transport: Kind, tmp_path: Path) -> None:
    pair = _certificate(tmp_path)
    if pair is None:
        pytest.skip("openssl is not installed (it makes the test's certificate)")
    key, cert = pair
    trusted = ssl.create_default_context(cafile=str(cert))
    async with serve(_answer, ssl_keyfile=str(key), ssl_certfile=str(cert)) as url:
        url = url.replace("http://", "https://")
        async with httpx.AsyncClient(transport=Transport(verify=trusted)) as client:
            response = await client.get(url + "/stream")
            assert response.content.startswith(b"0" * 10)
        async with httpx.AsyncClient(transport=Transport()) as untrusting:
            with pytest.raises(httpx.ConnectError):
                await untrusting.get(url + "/stream")


async def test_an_upstream_cookie_never_reaches_another_request(Transport: Kind) -> None:
    """One upstream client serves every client: a Set-Cookie must not be replayed."""
    from streamflow.servers.gateway import create_app

    seen: list[bytes | None] = []

    async def upstream(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        seen.append(dict(scope["headers"]).get(b"cookie"))
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream"), (b"set-cookie", b"session=alice; Path=/")]})
        await send({"type": "http.response.body",
                    "body": b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"})

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    async with serve(upstream) as upstream_url, \
            serve(create_app(upstream_url + "/v1", "openai-chat")) as url, \
            httpx.AsyncClient() as client:
        for _ in range(2):
            answer = await client.post(url + "/v1/chat/completions", json=body)
            assert b"hi" in answer.content
    assert seen == [None, None]


def test_it_connects_under_uvloop_too(Transport: Kind) -> None:
    """uvloop's loop (uvicorn's choice when installed) has no happy-eyeballs option."""
    uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed")

    async def fetch(url: str) -> bytes:
        async with httpx.AsyncClient(transport=Transport()) as client:
            response = await client.get(url + "/stream?n=5&size=100")
            assert type(response.extensions["network_stream"]).__name__ == STREAM[Transport]
            return response.content

    async def main() -> bytes:
        async with serve(_answer) as url:
            return await fetch(url)

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        body = runner.run(main())
    assert body == b"".join(str(i).encode() * 100 for i in range(5))


async def test_bytes_an_upstream_sends_unasked_are_never_read_as_the_next_answer(
        Transport: Kind) -> None:
    """A kept-alive connection the server wrote to while idle is discarded, not reused:
    otherwise a hostile upstream could answer the next request (another client's) ahead."""
    answers = {"n": 0}

    async def connection(stream: anyio.abc.SocketStream) -> None:
        buffered = b""
        async with stream:
            while True:
                try:
                    buffered += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                if b"\r\n\r\n" not in buffered:
                    continue
                buffered = buffered.split(b"\r\n\r\n", 1)[1]
                answers["n"] += 1
                body = b"real %d" % answers["n"]
                await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s"
                                  % (len(body), body))
                await anyio.sleep(0.05)  # then, unasked, a forged answer on the idle connection
                try:
                    await stream.send(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged")
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener, \
            anyio.create_task_group() as group:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        group.start_soon(listener.serve, connection)
        async with httpx.AsyncClient(transport=Transport()) as client:
            first = await client.get(f"http://127.0.0.1:{port}/")
            await anyio.sleep(0.3)
            second = await client.get(f"http://127.0.0.1:{port}/")
        group.cancel_scope.cancel()
    assert first.content == b"real 1"
    assert second.content == b"real 2"


async def test_many_concurrent_streams_spread_over_pools_and_reuse_their_connections() -> None:
    """150 streams at once (three pools' worth, SHARD each at most), every byte delivered;
    then 150 more: every one on a connection kept alive from the first burst."""
    from streamflow.servers.gateway._transport import SHARD, ShardedPool

    expected = b"".join(str(i % 10).encode() * 100 for i in range(5))
    async with serve(_answer) as url, \
            httpx.AsyncClient(transport=LoopTransport(), timeout=30) as client:
        first: set[Any] = set()

        async def one(seen: set[Any]) -> None:
            async with client.stream("GET", url + "/stream?n=5&size=100") as response:
                seen.add(_peer(response))
                assert b"".join([c async for c in response.aiter_raw()]) == expected

        async with anyio.create_task_group() as tg:
            for _ in range(150):
                tg.start_soon(one, first)
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool, ShardedPool) and len(pool._pools) >= 150 // SHARD
        assert pool._busy == [0] * len(pool._busy)  # every request released its pool
        second: set[Any] = set()
        async with anyio.create_task_group() as tg:
            for _ in range(150):
                tg.start_soon(one, second)
    assert len(first) == 150
    assert second <= first  # no new connection: the kept-alive ones served them


async def test_a_failed_or_abandoned_request_releases_its_pool() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # nothing listens here once the socket is closed
    transport = LoopTransport()
    async with serve(_answer) as url, httpx.AsyncClient(transport=transport) as client:
        for _ in range(100):
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{closed}/")
        for _ in range(100):  # the body is left unread: closing the response releases it
            async with client.stream("GET", url + "/stream?n=50&size=1000"):
                pass
        pool = transport._pool  # type: ignore[attr-defined]
        assert pool._busy == [0] * len(pool._busy) and len(pool._pools) == 1
