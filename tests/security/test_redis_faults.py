"""Resume when Redis misbehaves: restarts, outages, a cut reply, and trims under a slow reader.

A real redis-server is killed and restarted under a running app (its pooled
connections go stale), stopped outright, reached through a proxy that drops a reply
after Redis executed the command, and made to trim (small ``maxlen``) past a reader
that fell behind. What must hold: a restart costs no request; an outage is a 503 in
the protocol's error shape, never a 500; a retried write is stored once; a trimmed
entry is ``LimitExceededError("redis_maxlen")`` at the batch that would skip it,
never a gap and never a ``ProtocolError`` later. asyncio and trio.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from realredis import (
    CuttingProxy,
    RedisServer,
    assert_refusal,
    live_count,
    own_redis,
    redis_server,
    redis_url,
    running,
    same,
    serving,
)

import streamflow
from streamflow.core.errors import LimitExceededError, ProtocolError
from streamflow.core.events import UniEvent
from streamflow.reactive._redis.link import RedisLink
from streamflow.reactive._redis.streams import entry_key, read_batches
from streamflow.reactive._redis.tailer import Tailer
from streamflow.reactive.sinks import AsyncSink, RedisStreamSink
from streamflow.reactive.sources import from_async_iterable, from_bytes, from_redis
from streamflow.servers.web.resume import ResumableStreams

__all__ = ["own_redis", "redis_server", "redis_url"]

pytestmark = pytest.mark.anyio

DELTAS = 600
MAXLEN = 40


def sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def long_answer(deltas: int = DELTAS) -> list[bytes]:
    """An Anthropic stream of ``deltas`` text deltas, one SSE event per chunk."""
    head = [sse("message_start", {"type": "message_start", "message": {
                "id": "msg_long", "type": "message", "role": "assistant", "model": "m",
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            sse("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}})]
    body = [sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": f"w{n} "}})
            for n in range(deltas)]
    tail = [sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": deltas}}),
            sse("message_stop", {"type": "message_stop"})]
    return head + body + tail


CHUNKS = long_answer()
DIRECT = streamflow.StreamDecoder().feed(b"".join(CHUNKS))


def gated(go: anyio.Event, first: int = 8) -> Any:
    """The long answer: ``first`` chunks, then (once ``go`` is set) the rest at once."""

    async def body() -> AsyncIterator[bytes]:
        for chunk in CHUNKS[:first]:
            yield chunk
        await go.wait()
        yield b"".join(CHUNKS[first:])

    return from_async_iterable(body)


def plain(events: list[UniEvent]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k != "created_at"} for e in events]


async def produce(url: str, key: str, go: anyio.Event, done: anyio.Event) -> None:
    try:
        async with RedisStreamSink(url, key, maxlen=MAXLEN, heartbeat=30) as sink:
            await streamflow.run(gated(go), sink)
    finally:
        done.set()


async def entries_at_least(link: RedisLink, key: str, count: int) -> None:
    with anyio.fail_after(10):
        while int(await link.call("xlen", key) or 0) < count:
            await anyio.sleep(0.01)


@pytest.mark.parametrize("tailed", [False, True], ids=["own-xread", "tailer"])
async def test_a_reader_behind_a_trim_gets_redis_maxlen_at_that_batch(redis_url: str,
                                                                      tailed: bool) -> None:
    link = RedisLink(redis_url)
    tailer = Tailer(link) if tailed else None
    go, done = anyio.Event(), anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            if tailer is not None:
                tg.start_soon(tailer.run)
            tg.start_soon(produce, redis_url, "trim", go, done)
            await entries_at_least(link, "trim", 6)
            batches = read_batches(link, "trim", tailer=tailer)
            first = await batches.__anext__()
            ms = entry_key(first[0].id)[0]
            assert [entry_key(e.id) for e in first] == [(ms, n) for n in range(len(first))]
            go.set()  # the writer goes on far past the reader: maxlen trims what it has not read
            await done.wait()
            with pytest.raises(LimitExceededError) as info:
                await batches.__anext__()
            assert info.value.limit == "redis_maxlen"
            await batches.aclose()
            tg.cancel_scope.cancel()
    finally:
        await link.aclose()


class Slow(AsyncSink):
    """Takes events one at a time; after the third, waits until the producer is done."""

    buffer = 1

    def __init__(self, go: anyio.Event, done: anyio.Event) -> None:
        self.go, self.done = go, done
        self.events: list[UniEvent] = []

    async def on_event(self, event: Any) -> None:
        if type(event) is UniEvent:
            self.events.append(event)
            if len(self.events) == 3:
                self.go.set()
                await self.done.wait()


async def test_a_slow_from_redis_reader_gets_the_typed_error_not_a_gap(redis_url: str) -> None:
    go, done = anyio.Event(), anyio.Event()
    slow = Slow(go, done)
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce, redis_url, "slow", go, done)
        link = RedisLink(redis_url)
        try:
            await entries_at_least(link, "slow", 4)
        finally:
            await link.aclose()
        with pytest.raises(LimitExceededError) as info:
            await streamflow.run(from_redis(redis_url, "slow"), slow)
    assert info.value.limit == "redis_maxlen" and not isinstance(info.value, ProtocolError)
    got = len(slow.events)
    assert 3 <= got < len(DIRECT) - MAXLEN
    assert plain(slow.events) == plain(DIRECT[:got])  # every event up to the trim, no gap
    partial = info.value.partial
    assert partial is not None and not partial.complete
    assert "".join(f"w{n} " for n in range(DELTAS)).startswith(partial.text)


@pytest.mark.parametrize("to", ["uni", "vercel-ui", "ag-ui"])
async def test_a_web_reader_behind_a_trim_ends_with_the_protocol_s_error(redis_url: str,
                                                                         to: str) -> None:
    streams = ResumableStreams(redis_url, maxlen=MAXLEN, heartbeat=30)
    go = anyio.Event()
    async with streams.running():
        started = await streams.start("behind", gated(go))
        response = await streams.response(None, "behind", target=to, token=started.token)
        body = response.body_iterator  # type: ignore[attr-defined]
        head = await body.__anext__()  # what the client read before it stalled
        go.set()
        await live_count(streams, 0)  # the whole answer is written; most of it trimmed
        rest = [chunk async for chunk in body]
    whole = head + b"".join(rest)
    if to == "uni":
        with pytest.raises(LimitExceededError) as info:  # never a ProtocolError
            streamflow.assemble(whole, dialect="uni")
        assert info.value.limit == "redis_maxlen"
        partial = info.value.partial
        assert partial is not None and len(partial.text) < len("".join(
            f"w{n} " for n in range(DELTAS)))
    else:
        last = [line for line in whole.split(b"\n") if line.startswith(b"data:")][-1]
        if to == "vercel-ui":
            last = [line for line in whole.split(b"\n") if b'"type":"error"' in line][-1]
        assert b"redis_maxlen" in last
        assert (b'"type":"error"' if to == "vercel-ui" else b"RUN_ERROR") in last


async def test_a_redis_restart_costs_no_request(own_redis: RedisServer) -> None:
    streams = ResumableStreams(own_redis.url)
    async with serving(streams) as http:
        tokens: dict[str, str] = {}

        async def chat(name: str) -> None:
            started = await http.post(f"/chat/{name}")
            assert started.status_code == 200
            tokens[name] = started.headers["x-resume-token"]
            resumed = await http.get(f"/chat/{name}/stream",
                                     headers={"x-resume-token": tokens[name]})
            assert resumed.status_code == 200 and resumed.content == started.content

        async with anyio.create_task_group() as tg:  # several pooled connections in use
            for n in range(8):
                tg.start_soon(chat, f"warm{n}")
        own_redis.stop()  # SIGKILL, then a fresh, empty Redis on the same port
        own_redis.start()
        statuses: list[int] = []

        async def after(name: str) -> None:
            started = await http.post(f"/chat/{name}")
            statuses.append(started.status_code)
            token = started.headers.get("x-resume-token", "")
            resumed = await http.get(f"/chat/{name}/stream", headers={"x-resume-token": token})
            statuses.append(resumed.status_code)
            if started.status_code == resumed.status_code == 200:
                assert same(streamflow.assemble(resumed.content, dialect="uni"),
                            streamflow.assemble(started.content, dialect="uni"))

        async with anyio.create_task_group() as tg:
            for n in range(30):
                tg.start_soon(after, f"after{n}")
    assert statuses == [200] * 60  # not one request lost to a stale connection


async def test_an_answer_kept_on_disk_is_resumed_across_a_restart(tmp_path: Path) -> None:
    with running(tmp_path, persist=True) as server:
        streams = ResumableStreams(server.url)
        async with serving(streams) as http:
            started = await http.post("/chat/kept")
            token = started.headers["x-resume-token"]
            await live_count(streams, 0)
            server.stop()
            server.start()  # the same data, read back from the append-only file
            resumed = await http.get("/chat/kept/stream", headers={"x-resume-token": token})
            refused = await http.get("/chat/kept/stream")
    assert resumed.status_code == 200 and resumed.content == started.content
    assert refused.status_code == 403  # the token's hash survived too


@pytest.mark.parametrize("to", ["uni", "vercel-ui", "ag-ui"])
async def test_redis_down_is_a_503_in_the_protocol_s_shape(own_redis: RedisServer,
                                                           to: str) -> None:
    streams = ResumableStreams(own_redis.url)
    async with serving(streams) as http:
        token = (await http.post("/chat/up")).headers["x-resume-token"]
        own_redis.stop()
        for response in (await http.post(f"/chat/down?to={to}"),
                         await http.get(f"/chat/up/stream?to={to}",
                                        headers={"x-resume-token": token})):
            message = assert_refusal(response, to, 503, "stream_store_unavailable")
            assert str(own_redis.port) not in message and "127.0.0.1" not in message
        own_redis.start()  # back (empty): the next requests are served again
        assert (await http.post(f"/chat/again?to={to}")).status_code == 200
        assert (await http.get(f"/chat/up/stream?to={to}",
                               headers={"x-resume-token": token})).status_code == 204


async def test_a_write_retried_after_a_lost_reply_is_stored_once(redis_url: str) -> None:
    body = b"".join(CHUNKS[:60] + CHUNKS[-3:])
    direct = streamflow.assemble(body)
    proxy = CuttingProxy(int(redis_url.rsplit(":", 1)[1].split("/")[0]))
    async with anyio.create_task_group() as tg:
        await tg.start(proxy.serve)
        async with RedisStreamSink(proxy.url, "once", heartbeat=30) as sink:
            proxy.cut_next = True  # the reply to the first batch of events is lost
            await streamflow.run(from_bytes(body), sink)
        tg.cancel_scope.cancel()
    assert proxy.cuts == 1
    link = RedisLink(redis_url)
    try:
        stored = await link.call("xrange", "once", "-", "+")
    finally:
        await link.aclose()
    ms = entry_key(stored[0][0])[0]
    assert [entry_key(i) for i, _ in stored] == [(ms, n) for n in range(len(stored))]
    kinds = [fields["k"] for _, fields in stored]
    assert kinds.count("start") == 1 and kinds.count("end") == 1
    assert kinds.count("event") + 1 == len(streamflow.StreamDecoder().feed(body))
    assert same(await streamflow.run(from_redis(redis_url, "once")), direct)


async def test_a_redis_that_never_answers_is_a_transport_error_within_the_timeout() -> None:
    """A peer that accepts and then says nothing (a hung server, a black-holed route): each
    command gives up after the link's socket_timeout, typed, never hanging the reader."""
    held: list[Any] = []

    async def silent(stream: Any) -> None:
        held.append(stream)
        await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, silent)
        link = RedisLink(f"redis://127.0.0.1:{port}/0", socket_timeout=0.3)
        try:
            with anyio.fail_after(5), pytest.raises(streamflow.TransportError) as caught:
                await link.call("xadd", "k", {"k": "event"})
            assert "redis" in str(caught.value)
            with anyio.fail_after(5), pytest.raises(streamflow.TransportError):
                await link.pipeline(("xadd", ("k", {"k": "event"}), {}), transaction=False)
        finally:
            await link.aclose()
        tg.cancel_scope.cancel()
