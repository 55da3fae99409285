"""``H1Transport`` against a scripted loopback server: framing, limits, hostile answers.

The behaviour it shares with ``LoopTransport`` (keep-alive, timeouts, TLS, cookies,
unasked bytes on an idle connection) is tested for both in ``test_transport.py``;
here is what only a hand-driven parser can get wrong. Each server is a real TCP
listener writing the bytes a test gives it; the framing property test feeds the
protocol directly, as a socket would, in every split.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamflow.servers.gateway._h1 import H1Transport, _Pool
from streamflow.servers.gateway._h1_connection import MAX_HEAD, Connection
from streamflow.servers.gateway._transport import READ_BUFFER

pytestmark = pytest.mark.anyio

Answer = list[bytes | float]  # bytes to write, or seconds to wait
OK = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # H1Transport's own path; on trio it hands every request to httpcore


@asynccontextmanager
async def scripted(answer: Callable[[int], Answer]) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server answering its n-th request (counted over all connections) with
    ``answer(n)``, then closing if the answer ends with ``b""``; yields (url, requests)."""
    requests: list[bytes] = []

    async def connection(stream: anyio.abc.SocketStream) -> None:
        buffered = b""
        async with stream:
            while True:
                while b"\r\n\r\n" not in buffered:
                    try:
                        buffered += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
                head, buffered = buffered.split(b"\r\n\r\n", 1)
                requests.append(head)
                steps = answer(len(requests) - 1)
                try:
                    for step in steps:
                        if isinstance(step, float):
                            await anyio.sleep(step)
                        elif step:
                            await stream.send(step)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return
                if steps and steps[-1] == b"":
                    return

    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener, \
            anyio.create_task_group() as group:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        group.start_soon(listener.serve, connection)
        yield f"http://127.0.0.1:{port}", requests
        group.cancel_scope.cancel()


def peer(response: httpx.Response) -> Any:
    return response.extensions["network_stream"].get_extra_info("client_addr")


async def test_content_length_chunked_and_close_delimited_bodies_arrive_whole() -> None:
    answers: list[Answer] = [
        [b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello", 0.02, b" world"],
        [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n", 0.02,
         b"6\r\n world\r\n0\r\n\r\n"],
        [b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nhello", 0.02, b" world", b""],
    ]
    async with scripted(lambda n: answers[n]) as (url, requests), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        bodies = [(await client.get(url)).content for _ in answers]
    assert bodies == [b"hello world"] * 3
    assert len(requests) == 3


async def test_a_body_cut_short_is_a_remote_protocol_error_after_what_arrived() -> None:
    cut = [b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhello", 0.05, b""]
    async with scripted(lambda n: cut) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        got = b""
        async with client.stream("GET", url) as response:
            with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
                async for chunk in response.aiter_raw():
                    got += chunk
    assert got == b"hello"  # nothing received is lost


@pytest.mark.parametrize("answer, match", [
    ([b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\nhello"],
     "not HTTP/1.1"),  # both framings: a smuggling vector, refused
    ([b"SSH-2.0-OpenSSH\r\n\r\n"], "not HTTP/1.1"),
    ([b"HTTP/1.1 101 Switching\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"],
     "switched protocols"),
    ([b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * (MAX_HEAD + 10)], "head is over"),
    ([b"HTTP/1.1 100 Continue\r\n\r\n" * (MAX_HEAD // 20)], "head is over"),
    ([b"HTTP/1.1 200 OK\r\ncontent-le", b""], "without sending a response"),
])
async def test_a_broken_or_hostile_head_is_a_remote_protocol_error(
        answer: Answer, match: str) -> None:
    async with scripted(lambda n: answer) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        with anyio.fail_after(10), pytest.raises(httpx.RemoteProtocolError, match=match):
            await client.get(url)


async def test_informational_answers_are_skipped() -> None:
    early = [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
             + OK]
    async with scripted(lambda n: early) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        response = await client.get(url)
    assert (response.status_code, response.content) == (200, b"hello")
    assert "link" not in response.headers


async def test_a_second_answer_in_the_same_read_spoils_the_connection() -> None:
    """An upstream that answers twice (the second meant to be read as the answer to the
    next request, possibly another client's) loses the connection, not the next client."""
    answers: list[Answer] = [[OK + b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged"],
                             [b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nreal"]]
    async with scripted(lambda n: answers[n]) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        first = await client.get(url)
        second = await client.get(url)
    assert (first.content, second.content) == (b"hello", b"real")
    assert peer(first) != peer(second)


async def test_a_header_that_could_smuggle_a_request_is_never_sent() -> None:
    async with scripted(lambda n: [OK]) as (url, requests), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        for headers in ({"x-a": "v\r\nx-evil: 1"}, {"x-a": "v\nGET / HTTP/1.1"},
                        {"x a": "v"}, {"x-a": "v\x00"}):
            with pytest.raises(httpx.LocalProtocolError):
                await client.get(url, headers=headers)
        assert (await client.get(url, headers={"x-a": "fine"})).content == b"hello"
    assert len(requests) == 1 and b"x-a: fine" in requests[0]


async def test_a_slow_reader_pauses_the_socket_and_memory_stays_bounded() -> None:
    big = b"x" * (40 * READ_BUFFER)
    answer = [b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(big), big]
    async with scripted(lambda n: answer) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        async with client.stream("GET", url) as response:
            connection = response.extensions["network_stream"]
            chunks = response.aiter_raw()
            got = [await chunks.__anext__()]
            await anyio.sleep(0.3)  # the server keeps writing; we do not read
            assert connection.paused
            assert connection.buffered <= READ_BUFFER + 512 * 1024  # one socket read past
            got += [chunk async for chunk in chunks]
    assert b"".join(got) == big


async def test_an_abandoned_body_closes_its_connection_and_the_next_request_gets_a_new_one(
        ) -> None:
    slow = [b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello", 5.0, b"world"]
    answers: list[Answer] = [slow, [OK]]
    async with scripted(lambda n: answers[n]) as (url, _), \
            httpx.AsyncClient(transport=H1Transport()) as client:
        async with client.stream("GET", url) as first:
            await first.aiter_raw().__anext__()
        with anyio.fail_after(2):
            second = await client.get(url)
    assert second.content == b"hello" and peer(first) != peer(second)


async def test_an_idle_connection_past_keepalive_expiry_is_not_reused() -> None:
    limits = httpx.Limits(max_connections=None, keepalive_expiry=0.1)
    async with scripted(lambda n: [OK]) as (url, _), \
            httpx.AsyncClient(transport=H1Transport(limits=limits)) as client:
        first, again = await client.get(url), await client.get(url)
        await anyio.sleep(0.3)
        late = await client.get(url)
    assert peer(first) == peer(again) != peer(late)


async def test_head_and_capped_pools_go_through_httpcore() -> None:
    answers: list[Answer] = [[b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"], [OK]]
    async with scripted(lambda n: answers[n]) as (url, _):
        async with httpx.AsyncClient(transport=H1Transport()) as client:
            head = await client.head(url)  # a HEAD's length describes a body never sent
        capped = H1Transport(limits=httpx.Limits(max_connections=4))
        async with httpx.AsyncClient(transport=capped) as client:
            response = await client.get(url)
    assert head.status_code == 200 and head.content == b""
    assert type(response.extensions["network_stream"]).__name__ == "_LoopStream"


# -- the framing, fed as a socket would feed it, in any split


class _Socket:
    """What a protocol needs of its transport, recording what it is asked."""

    def __init__(self) -> None:
        self.closed = self.paused = False

    def get_extra_info(self, name: str) -> None:
        return None

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def close(self) -> None:
        self.closed = True


ANSWERS = [
    b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n"
    b"0\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world",
]


def _feed(answer: bytes, cuts: list[int]) -> tuple[bytes, Connection]:
    async def run() -> tuple[bytes, Connection]:
        connection = Connection(_Pool(httpx.Limits()), (b"http", "x", 80))
        connection.connection_made(_Socket())
        connection.start(httpx.Request("GET", "http://x/"))
        bounds = [0, *sorted(set(cuts)), len(answer)]
        for start, end in itertools.pairwise(bounds):
            connection.data_received(answer[start:end])
        return b"".join(connection.chunks), connection  # read, not taken: no resume
    return asyncio.run(run())


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ANSWERS), st.lists(st.integers(0, 200), max_size=12))
def test_any_split_of_an_answer_gives_the_same_body_and_end(answer: bytes,
                                                            cuts: list[int]) -> None:
    body, connection = _feed(answer, [c for c in cuts if c < len(answer)])
    assert body == b"hello world"
    assert connection.done and connection.keep and connection.error is None
    assert connection.head.result() == (200, b"OK")


def test_a_body_of_tiny_chunks_pauses_the_socket_as_early_as_a_body_of_big_ones() -> None:
    """One byte per chunk costs an object per byte: the queue counts it, so the socket
    pauses long before 64 KiB of such chunks pile up."""
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    body, connection = _feed(head + b"1\r\nx\r\n" * 20_000, [len(head)])
    assert len(body) == 20_000 and connection.transport.paused


def test_trailers_are_dropped_not_added_to_the_head() -> None:
    answer = (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nb\r\nhello world\r\n"
              b"0\r\n" + b"x-trailer: 1\r\n" * 50 + b"\r\n")
    body, connection = _feed(answer, [60, 120])
    assert body == b"hello world" and connection.done
    assert [name for name, _ in connection.headers] == [b"transfer-encoding"]
