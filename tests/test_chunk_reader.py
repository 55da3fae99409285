"""ChunkReader: the idle timeout counts only while a read waits, the deadline always;
a timeout is a typed error and never a cancellation, a cancellation never a timeout.

On asyncio the reader keeps one timer across reads (``streamflow.reactive._chunk_reader``);
on trio one anyio scope per read. Both must behave alike, so every test runs on both.
"""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import anyio
import anyio.abc
import httpx
import pytest
import sniffio
from realdata import DATA

import streamflow
from streamflow import Limits, StreamTimeoutError
from streamflow.reactive._chunk_reader import ChunkReader
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio


async def paced(gaps: list[float]) -> AsyncIterator[bytes]:
    """Chunk ``i`` after ``gaps[i]`` seconds of waiting inside the read."""
    for i, gap in enumerate(gaps):
        await anyio.sleep(gap)
        yield b"%d" % i


def _cancelling() -> int:
    """How many cancellations the current asyncio task carries (0 on trio)."""
    if sniffio.current_async_library() != "asyncio":
        return 0
    task = asyncio.current_task()
    assert task is not None
    return task.cancelling()


async def test_reads_shorter_than_the_idle_timeout_never_time_out_however_long_in_all() -> None:
    reader = ChunkReader(Limits(idle_timeout=0.15))
    chunks = paced([0.05] * 12)  # 0.6 s in all: four idle timeouts' worth
    got = [await reader.next(chunks) for _ in range(12)]
    assert got == [b"%d" % i for i in range(12)]
    assert await reader.next(chunks) is None
    reader.close()


async def test_time_between_reads_is_not_idle_time() -> None:
    reader = ChunkReader(Limits(idle_timeout=0.1))
    chunks = paced([0.0, 0.0, 5.0])
    assert await reader.next(chunks) == b"0"
    await anyio.sleep(0.3)  # the consumer is slow: three idle timeouts outside any read
    assert await reader.next(chunks) == b"1"
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(chunks)  # this one waits: it times out, a full window after it began
    waited = time.monotonic() - started
    assert (caught.value.kind, caught.value.seconds) == ("idle", 0.1)
    assert 0.09 <= waited < 1.0
    assert _cancelling() == 0  # the timeout's own cancellation was taken back
    await anyio.sleep(0.01)  # and the task goes on normally
    reader.close()


async def test_the_deadline_ends_reads_that_are_each_within_the_idle_timeout() -> None:
    started = time.monotonic()
    reader = ChunkReader(Limits(idle_timeout=1, deadline=0.3))
    chunks = paced([0.05] * 100)
    with pytest.raises(StreamTimeoutError) as caught:
        while await reader.next(chunks) is not None:
            pass
    assert (caught.value.kind, caught.value.seconds) == ("deadline", 0.3)
    assert 0.28 <= time.monotonic() - started < 2
    reader.close()


async def test_a_cancelled_read_is_a_cancellation_not_a_timeout() -> None:
    reader = ChunkReader(Limits(idle_timeout=0.2))
    outcome: list[str] = []
    with anyio.move_on_after(0.05) as scope:
        try:
            await reader.next(paced([5.0]))
        except StreamTimeoutError:
            outcome.append("timeout")
    assert scope.cancelled_caught and outcome == []
    assert _cancelling() == 0
    await anyio.sleep(0.3)  # the reader's timer, if still armed, must not cancel this task
    reader.close()


async def test_a_timeout_and_an_outer_cancel_at_once_is_the_cancel() -> None:
    reader = ChunkReader(Limits(idle_timeout=0.05))
    with anyio.move_on_after(0.05) as scope:  # both expire together
        try:
            await reader.next(paced([5.0]))
        except StreamTimeoutError:
            pass  # the timeout won the race: also a correct answer
    assert _cancelling() == 0
    await anyio.sleep(0.01)
    assert scope.deadline <= anyio.current_time()
    reader.close()


async def test_a_closed_reader_holds_nothing_on_the_loop() -> None:
    reader = ChunkReader(Limits(idle_timeout=600))  # the default window: ten minutes
    chunks = paced([0.0, 0.0])
    assert await reader.next(chunks) == b"0"
    assert await reader.next(chunks) == b"1"
    reader.close()
    alive = weakref.ref(reader)
    del reader
    gc.collect()
    assert alive() is None  # no timer keeps a finished reader (and its stream) for 600 s


async def test_a_finished_stream_leaves_no_reader_behind() -> None:
    import streamflow
    from streamflow.reactive.sources import from_async_iterable

    async def body() -> AsyncIterator[bytes]:
        yield b'data: {"type":"ping"}\n\n'

    readers_before = sum(type(o) is ChunkReader for o in gc.get_objects())
    with pytest.raises(streamflow.StreamflowError):  # a body without a stop: incomplete
        await streamflow.run(from_async_iterable(body, limits=Limits(idle_timeout=600)))
    gc.collect()
    assert sum(type(o) is ChunkReader for o in gc.get_objects()) == readers_before


# -- first_chunk_timeout: a body that never starts ---------------------------------------
#
# Limits.first_chunk_timeout bounds the wait for a body's first chunk, counted from the
# reader's creation (the request's send and its headers included); once a chunk came,
# only the idle timeout and the deadline apply.


class _Hangs:
    """A body whose opening (the request sent, its headers awaited) never completes."""

    def __init__(self) -> None:
        self.entered = False
        self.exited = False

    async def __aenter__(self) -> AsyncIterator[bytes]:
        self.entered = True
        await anyio.sleep(30)
        raise AssertionError("the opening was meant to be cut")

    async def __aexit__(self, *exc: object) -> None:
        self.exited = True


class _Opens:
    """A body that takes ``delay`` seconds to open, then gives ``chunks``."""

    def __init__(self, delay: float, chunks: AsyncIterator[bytes]) -> None:
        self.delay = delay
        self.chunks = chunks

    async def __aenter__(self) -> AsyncIterator[bytes]:
        await anyio.sleep(self.delay)
        return self.chunks

    async def __aexit__(self, *exc: object) -> None:
        pass


async def test_the_first_chunk_timeout_fires_when_no_chunk_ever_comes() -> None:
    reader = ChunkReader(Limits(idle_timeout=600, first_chunk_timeout=0.1))
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(paced([30.0]))
    waited = time.monotonic() - started
    assert (caught.value.kind, caught.value.seconds) == ("first_chunk", 0.1)
    assert caught.value.retryable  # a failover chain goes on to the next endpoint
    assert 0.09 <= waited < 2.0  # the first-chunk limit, not the ten-minute idle one
    assert _cancelling() == 0
    await anyio.sleep(0.01)
    reader.close()


async def test_the_first_chunk_timeout_covers_an_opening_that_never_completes() -> None:
    reader = ChunkReader(Limits(idle_timeout=600, first_chunk_timeout=0.1))
    body = _Hangs()
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        async with AsyncExitStack() as stack:
            await reader.open(stack, body)  # type: ignore[arg-type]
    assert (caught.value.kind, caught.value.seconds) == ("first_chunk", 0.1)
    assert body.entered and 0.09 <= time.monotonic() - started < 2.0
    assert _cancelling() == 0
    reader.close()


async def test_the_first_chunk_limit_counts_the_opening_and_the_first_read_together() -> None:
    """Neither the headers (0.15 s) nor the first read (0.15 s) alone passes the 0.25 s
    limit; both together do: the limit is from the request, not per wait."""
    reader = ChunkReader(Limits(idle_timeout=600, first_chunk_timeout=0.25))
    async with AsyncExitStack() as stack:
        chunks = await reader.open(stack, _Opens(0.15, paced([0.15])))  # type: ignore[arg-type]
        with pytest.raises(StreamTimeoutError) as caught:
            await reader.next(chunks)
    assert caught.value.kind == "first_chunk"
    reader.close()


async def test_after_the_first_chunk_only_the_idle_timeout_governs_the_gaps() -> None:
    reader = ChunkReader(Limits(idle_timeout=0.4, first_chunk_timeout=0.1))
    chunks = paced([0.0, 0.2, 0.2, 5.0])  # gaps twice the first-chunk limit, under idle
    assert [await reader.next(chunks) for _ in range(3)] == [b"0", b"1", b"2"]
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(chunks)
    assert (caught.value.kind, caught.value.seconds) == ("idle", 0.4)
    assert time.monotonic() - started >= 0.35  # a full idle window, not the first-chunk one
    reader.close()


async def test_without_an_idle_timeout_a_started_body_may_pause_past_the_first_chunk_limit(
        ) -> None:
    reader = ChunkReader(Limits(idle_timeout=None, first_chunk_timeout=0.05))
    chunks = paced([0.0, 0.3])
    assert await reader.next(chunks) == b"0"
    assert await reader.next(chunks) == b"1"  # six first-chunk limits later: no timeout
    assert await reader.next(chunks) is None
    reader.close()


async def test_an_empty_chunk_is_not_the_first_chunk() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b""
        await anyio.sleep(30)
        yield b"late"

    reader = ChunkReader(Limits(idle_timeout=600, first_chunk_timeout=0.1))
    chunks = body()
    assert await reader.next(chunks) == b""
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(chunks)
    assert caught.value.kind == "first_chunk"
    reader.close()


async def test_an_earlier_deadline_wins_over_the_first_chunk_limit() -> None:
    reader = ChunkReader(Limits(idle_timeout=600, deadline=0.1, first_chunk_timeout=5.0))
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(paced([30.0]))
    assert (caught.value.kind, caught.value.seconds) == ("deadline", 0.1)
    reader.close()


async def test_an_earlier_first_chunk_limit_wins_over_the_deadline() -> None:
    reader = ChunkReader(Limits(idle_timeout=600, deadline=5.0, first_chunk_timeout=0.1))
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as caught:
        await reader.next(paced([30.0]))
    assert caught.value.kind == "first_chunk" and time.monotonic() - started < 2.0
    reader.close()


async def test_an_earlier_deadline_wins_over_a_hanging_opening() -> None:
    reader = ChunkReader(Limits(deadline=0.1, first_chunk_timeout=5.0))
    with pytest.raises(StreamTimeoutError) as caught:
        async with AsyncExitStack() as stack:
            await reader.open(stack, _Hangs())  # type: ignore[arg-type]
    assert caught.value.kind == "deadline"
    reader.close()


async def test_a_cancel_while_waiting_for_the_first_chunk_is_a_cancel() -> None:
    reader = ChunkReader(Limits(first_chunk_timeout=0.3))
    with anyio.move_on_after(0.05) as scope:
        await reader.next(paced([5.0]))
    assert scope.cancelled_caught and _cancelling() == 0
    await anyio.sleep(0.4)  # the first-chunk timer, if still armed, must not cancel this task
    reader.close()


# -- over a real loopback server ---------------------------------------------------------

PATH = "/v1/messages"


def _tool_turn() -> bytes:
    return (DATA / "sinks" / "tool_turn.sse").read_bytes()


async def test_a_server_that_sends_headers_but_no_body_times_out_first_chunk() -> None:
    silent = Route.from_body(_tool_turn(), sizes=(64,), delays=[30.0])  # headers, then nothing
    async with ReplayServer({"/v1/messages": silent}) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, lambda: client.build_request("POST", server.url + PATH),
                            limits=Limits(first_chunk_timeout=0.3))
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source)
        hit = await server.wait_disconnect()  # the request was let go, not left hanging
    assert (caught.value.kind, caught.value.seconds) == ("first_chunk", 0.3)
    assert hit.chunks_sent == 0
    partial = caught.value.partial
    assert partial is not None and not partial.complete and partial.items == []


async def test_a_server_that_never_answers_the_request_times_out_first_chunk() -> None:
    """The request is sent; the server reads it and never writes the status line."""
    requests: list[bytes] = []

    async def never_answers(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            requests.append(await stream.receive())
            with anyio.move_on_after(30):
                try:
                    while await stream.receive():  # until the client hangs up
                        pass
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    pass

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg, httpx.AsyncClient() as client:
        tg.start_soon(listener.serve, never_answers)
        source = from_httpx(client, lambda: client.build_request(
            "POST", f"http://127.0.0.1:{port}/v1/messages", content=b"{}"))
        started = time.monotonic()
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source, dialect="anthropic",
                                 limits=Limits(first_chunk_timeout=0.3))  # run()'s limits
        waited = time.monotonic() - started
        tg.cancel_scope.cancel()
    assert (caught.value.kind, caught.value.seconds) == ("first_chunk", 0.3)
    assert requests and requests[0].startswith(b"POST /v1/messages")
    assert waited < 4.0  # httpx's own 5 s timeout did not decide


async def test_a_slow_but_started_body_outlives_the_first_chunk_limit() -> None:
    body = _tool_turn()
    chunks = [body[i:i + 200] for i in range(0, len(body), 200)]
    slow = Route(chunks=chunks, delays=[0.0] + [0.12] * (len(chunks) - 1))  # each gap > limit
    async with ReplayServer({"/v1/messages": slow}) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, lambda: client.build_request("POST", server.url + PATH),
                            limits=Limits(idle_timeout=5.0, first_chunk_timeout=0.1))
        message = await streamflow.run(source)
    assert message.complete and message.text == "Let me check."
    assert [c.name for c in message.tool_calls] == ["get_weather"]
