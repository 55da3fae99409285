"""RedisStreamSink -> real redis-server -> from_redis: the same events and message, on any reader.

Runs on asyncio (redis-py's asyncio client) and trio (redis-py's sync client in
worker threads): the conftest's ``anyio_backend`` fixture gives both.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from realdata import DATA
from realredis import Collect, same

import streamflow
from streamflow.core.errors import (
    IncompleteStreamError,
    StreamNotFoundError,
    StreamTimeoutError,
)
from streamflow.reactive._redis.streams import RedisLink
from streamflow.reactive.sinks import RedisStreamSink
from streamflow.reactive.sources import from_async_iterable, from_bytes, from_redis

pytestmark = pytest.mark.anyio

BODY = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()


def recording(name: str) -> bytes:
    return (DATA / name).read_bytes()


async def produce(url: str, key: str, body: bytes = BODY, **options: Any) -> streamflow.Message:
    async with RedisStreamSink(url, key, **options) as sink:
        return await streamflow.run(from_bytes(body, chunk_size=97), sink)


async def entries(url: str, key: str) -> list[tuple[str, dict[str, str]]]:
    link = RedisLink(url)
    try:
        return list(await link.call("xrange", key, "-", "+"))
    finally:
        await link.aclose()


async def test_replay_gives_the_direct_decode(redis_url: str) -> None:
    direct = streamflow.assemble(BODY)
    produced = await produce(redis_url, "k1")
    got = Collect()
    message = await streamflow.run(from_redis(redis_url, "k1"), got)
    assert same(message, direct) and same(produced, direct)
    stored = await entries(redis_url, "k1")
    kinds = [fields["k"] for _, fields in stored]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("event") + 1 == len(got.events)  # + the stop event (the end entry)


async def test_resume_after_an_id_delivers_only_later_events_and_the_whole_message(
        redis_url: str) -> None:
    await produce(redis_url, "k2")
    first = Collect()
    await streamflow.run(from_redis(redis_url, "k2"), first)
    ids = [eid for eid, fields in await entries(redis_url, "k2") if fields["k"] in ("event", "end")]
    cut = len(ids) // 2
    rest = Collect()
    message = await streamflow.run(from_redis(redis_url, "k2", last_event_id=ids[cut - 1]),
                                   rest)
    assert [e.to_dict() for e in rest.events] == [e.to_dict() for e in first.events[cut:]]
    assert same(message, streamflow.assemble(BODY))


async def test_a_live_stream_is_tailed_while_it_is_written(redis_url: str) -> None:
    chunks = [BODY[i:i + 200] for i in range(0, len(BODY), 200)]

    async def slow() -> Any:
        for chunk in chunks:
            await anyio.sleep(0.01)
            yield chunk

    seen: list[float] = []
    result: dict[str, streamflow.Message] = {}

    async def consume() -> None:
        await anyio.sleep(0.05)  # the producer has started: a reader joins mid-stream
        result["m"] = await streamflow.run(from_redis(redis_url, "k3"),
                                           lambda e: seen.append(time.monotonic()))

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        async with RedisStreamSink(redis_url, "k3") as sink:
            await streamflow.run(from_async_iterable(slow), sink)
    assert same(result["m"], streamflow.assemble(BODY))
    assert seen[-1] - seen[0] > 0.05  # events arrived over time, not in one replay


async def test_unknown_key_is_a_typed_error(redis_url: str) -> None:
    with pytest.raises(StreamNotFoundError, match="no stream at Redis key 'nope'") as info:
        await streamflow.run(from_redis(redis_url, "nope"))
    assert info.value.key == "nope" and info.value.partial is not None


async def test_a_failed_stream_ends_with_its_typed_error_and_partial(redis_url: str) -> None:
    cut = BODY[: len(BODY) * 2 // 3]
    with pytest.raises(IncompleteStreamError) as produced:
        await produce(redis_url, "k4", cut)
    with pytest.raises(IncompleteStreamError) as replayed:
        await streamflow.run(from_redis(redis_url, "k4"))
    partial = replayed.value.partial
    assert partial is not None and produced.value.partial is not None
    assert partial.items and same(partial, produced.value.partial)


async def test_a_silent_producer_ends_in_a_timeout_with_the_partial(redis_url: str) -> None:
    """Entries stop and no heartbeat comes (the producer died): StreamTimeoutError in the window."""
    link = RedisLink(redis_url)
    try:
        await link.call("xadd", "k5", {"k": "start", "heartbeat": "0.1"}, id="1-0")
        events = streamflow.StreamDecoder("anthropic").feed(BODY)[:5]
        from streamflow.wire.dialects.uni.decode import to_json
        for n, event in enumerate(events, 1):  # the writer's ids: <ms>-<count>
            await link.call("xadd", "k5", {"k": "event", "d": to_json(event)}, id=f"1-{n}")
    finally:
        await link.aclose()
    started = time.monotonic()
    with pytest.raises(StreamTimeoutError) as info:
        await streamflow.run(from_redis(redis_url, "k5"))
    assert time.monotonic() - started < 2.0  # window: 3 heartbeats of 0.1 s
    assert info.value.partial is not None and info.value.partial.items


async def test_heartbeats_keep_a_thinking_stream_alive(redis_url: str) -> None:
    async def pause() -> Any:
        yield BODY[:300]
        await anyio.sleep(0.6)  # longer than the reader's window (3 x 0.1 s)
        yield BODY[300:]

    result: dict[str, streamflow.Message] = {}

    async def consume() -> None:
        await anyio.sleep(0.02)
        result["m"] = await streamflow.run(from_redis(redis_url, "k6"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        async with RedisStreamSink(redis_url, "k6", heartbeat=0.1) as sink:
            await streamflow.run(from_async_iterable(pause), sink)
    assert same(result["m"], streamflow.assemble(BODY))
    kinds = [f["k"] for _, f in await entries(redis_url, "k6")]
    assert kinds.count("beat") >= 3


async def test_the_key_expires_after_the_terminal_entry(redis_url: str) -> None:
    await produce(redis_url, "k7", ttl=1)
    link = RedisLink(redis_url)
    try:
        assert 0 < await link.call("ttl", "k7") <= 1
    finally:
        await link.aclose()
    await anyio.sleep(1.3)
    with pytest.raises(StreamNotFoundError):
        await streamflow.run(from_redis(redis_url, "k7"))


async def test_maxlen_caps_a_runaway_stream(redis_url: str) -> None:
    delta = (b'data: {"role":"assistant","event_type":"delta","content_items":[{"type":'
             b'"text.delta","text":"x"}],"usage_metadata":null,"finish_reason":null,'
             b'"created_at":1}\n\n')
    with pytest.raises(IncompleteStreamError):
        await produce(redis_url, "k8", delta * 500, maxlen=50)
    assert len(await entries(redis_url, "k8")) == 50
    with pytest.raises(streamflow.LimitExceededError, match="redis_maxlen"):
        await streamflow.run(from_redis(redis_url, "k8"))  # its start is gone: no full replay


async def test_a_bare_sink_in_run_starts_itself(redis_url: str) -> None:
    message = await streamflow.run(from_bytes(BODY), RedisStreamSink(redis_url, "k9"))
    assert same(await streamflow.run(from_redis(redis_url, "k9")), message)


def test_recording_path_exists() -> None:
    assert Path(DATA / "anthropic" / "kitchen_sink.sse").exists()


@pytest.mark.parametrize("restart", [False, True], ids=["killed", "restarted"])
async def test_redis_going_away_under_a_live_stream_is_a_transport_error(
        own_redis: Any, restart: bool) -> None:
    """Redis killed (or killed and restarted empty) under a tailing reader: no hang."""
    url = own_redis.url

    async def endless() -> Any:
        yield BODY[:1200]
        await anyio.sleep(30)  # a model thinking; Redis dies meanwhile
        yield BODY[1200:]

    errors: dict[str, BaseException] = {}
    ready, seen = anyio.Event(), anyio.Event()

    async def consume() -> None:
        try:
            await streamflow.run(from_redis(url, "live"), lambda event: seen.set())
        except streamflow.StreamflowError as exc:
            errors["consumer"] = exc

    async def produce_live() -> None:
        try:
            async with RedisStreamSink(url, "live", heartbeat=0.1) as sink:
                ready.set()
                await streamflow.run(from_async_iterable(endless), sink)
        except streamflow.TransportError as exc:  # its terminal entry cannot be written
            errors["producer"] = exc

    started = time.monotonic()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(produce_live)
            await ready.wait()
            tg.start_soon(consume)
            await seen.wait()  # the reader is tailing, events in hand
            killed = time.monotonic()
            own_redis.stop()  # SIGKILL: connections cut
            if restart:
                own_redis.start()  # same port, empty
            while "consumer" not in errors:
                await anyio.sleep(0.01)
            noticed = time.monotonic() - killed
            tg.cancel_scope.cancel()
    error = errors["consumer"]
    assert isinstance(error, streamflow.TransportError)
    assert error.partial is not None and error.partial.items  # what arrived is kept
    assert noticed < 2.0 and time.monotonic() - started < 8


async def test_redis_down_before_the_start_is_a_transport_error(own_redis: Any) -> None:
    own_redis.stop()
    with anyio.fail_after(10), pytest.raises(streamflow.TransportError, match="redis"):
        await streamflow.run(from_redis(own_redis.url, "any"))
    with anyio.fail_after(10), pytest.raises(streamflow.TransportError, match="redis"):
        async with RedisStreamSink(own_redis.url, "any"):
            pass


async def test_a_tailer_serves_readers_that_join_at_any_time(redis_url: str) -> None:
    """One shared XREAD (Tailer) for several readers of one key: each gets every entry once."""
    from streamflow.reactive._redis.streams import read_batches
    from streamflow.reactive._redis.tailer import Tailer

    chunks = [BODY[i:i + 150] for i in range(0, len(BODY), 150)]

    async def slow() -> Any:
        for chunk in chunks:
            await anyio.sleep(0.005)
            yield chunk

    link = RedisLink(redis_url)
    tailer = Tailer(link)
    got: dict[int, list[str]] = {}

    async def reader(n: int, delay: float) -> None:
        await anyio.sleep(delay)
        got[n] = [e.id async for batch in read_batches(link, "tk", tailer=tailer)
                  for e in batch]

    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(tailer.run)
                async with anyio.create_task_group() as readers:
                    async with RedisStreamSink(redis_url, "tk") as sink:
                        for n, delay in enumerate((0.0, 0.03, 0.08, 0.15)):
                            readers.start_soon(reader, n, delay)
                        await streamflow.run(from_async_iterable(slow), sink)
                tg.cancel_scope.cancel()
    finally:
        await link.aclose()
    every = [eid for eid, _ in await entries(redis_url, "tk")]
    assert all(ids == every for ids in got.values()) and len(got) == 4
    assert not tailer.readers and not tailer.cursors  # readers unsubscribe when done


async def test_a_stalled_tailer_reader_is_dropped_then_catches_up_losing_nothing(
        redis_url: str) -> None:
    """A reader that stops taking entries (a stalled client) is not buffered for without
    bound: past QUEUE batches the shared read drops it, and it catches up from Redis."""
    from streamflow.reactive._redis.streams import read_batches
    from streamflow.reactive._redis.tailer import QUEUE, Tailer

    chunks = [BODY[i:i + 60] for i in range(0, len(BODY), 60)]
    assert len(chunks) > 3 * QUEUE  # enough live batches to overflow the reader's queue

    async def slow() -> Any:
        for chunk in chunks:
            await anyio.sleep(0.01)  # one entry or so per shared read
            yield chunk

    link = RedisLink(redis_url)
    tailer = Tailer(link)
    dropped = False
    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(tailer.run)
                async with RedisStreamSink(redis_url, "stall") as sink:
                    batches = read_batches(link, "stall", tailer=tailer)
                    got = [e.id for e in await batches.__anext__()]
                    await streamflow.run(from_async_iterable(slow), sink)  # reader stalled
                    dropped = "stall" not in tailer.readers
                got += [e.id async for batch in batches for e in batch]
                tg.cancel_scope.cancel()
    finally:
        await link.aclose()
    assert dropped  # the stalled reader held no queue while it did not read
    assert got == [eid for eid, _ in await entries(redis_url, "stall")]  # nothing lost
    assert not tailer.readers and not tailer.cursors
