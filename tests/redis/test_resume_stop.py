"""web._resume_stop against a real redis-server: one watch per process stops exactly the answers
whose stop key appears, whichever instance set it, and a Redis away stops nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from realcluster import cluster_url, redis_cluster  # noqa: F401 - fixtures
from realredis import own_redis, redis_server, redis_url  # noqa: F401 - fixtures

import streamflow
from streamflow.core.errors import CancelledStreamError
from streamflow.reactive._redis.link import RedisLink
from streamflow.reactive.sources import from_async_iterable, from_redis
from streamflow.servers.web._resume_stop import STOP_POLL, StopWatch, stop_key
from streamflow.servers.web.resume import ResumableStreams

pytestmark = pytest.mark.anyio

CHUNK = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":'
         b'"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,'
         b'"output_tokens":0}}}\n\n')
TEXT = (b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n')
REST = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
        b'{"type":"text_delta","text":"hi"}}\n\nevent: content_block_stop\ndata: {"type":'
        b'"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta",'
        b'"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\nevent: message_stop\n'
        b'data: {"type":"message_stop"}\n\n')


def held(release: anyio.Event) -> Any:
    """An answer whose upstream sends its start, then waits for ``release`` to finish."""
    async def body() -> Any:
        yield CHUNK
        yield TEXT
        await release.wait()
        yield REST
    return from_async_iterable(body)


async def test_stopping_some_of_many_answers_stops_exactly_those(
        redis_url: str) -> None:  # noqa: F811
    await some_of_many_stopped(redis_url)


async def test_stopping_some_of_many_answers_on_a_redis_cluster(
        cluster_url: str) -> None:  # noqa: F811
    """The same on the six-node cluster: the stop keys' slots are spread over its nodes."""
    await some_of_many_stopped(cluster_url)


async def some_of_many_stopped(url: str) -> None:
    producer = ResumableStreams(url, max_live=None)
    other = ResumableStreams(url)  # another instance sets the stop keys
    release = anyio.Event()
    count = 40
    async with producer.running(), other.running():
        keys = [(await producer.start(f"chat-{i}", held(release))).key for i in range(count)]
        await anyio.sleep(0.3)
        asked = time.monotonic()
        for i in range(0, count, 4):
            assert await other.stop(f"chat-{i}")
        results: dict[int, Any] = {}

        async def read(i: int) -> None:
            try:
                results[i] = await streamflow.run(from_redis(url, keys[i]))
            except CancelledStreamError as error:
                results[i] = error

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                for i in range(0, count, 4):
                    group.start_soon(read, i)
            stopped_within = time.monotonic() - asked
            release.set()  # the others finish now
            async with anyio.create_task_group() as group:
                for i in range(count):
                    if i % 4:
                        group.start_soon(read, i)
    assert stopped_within < 1.0 + 4 * STOP_POLL
    for i in range(count):
        if i % 4 == 0:
            assert isinstance(results[i], CancelledStreamError), i
            assert results[i].partial is not None  # what was out is kept
        else:
            assert isinstance(results[i], streamflow.Message) and results[i].complete, i
            assert results[i].text == "hi"


async def test_a_redis_away_stops_nothing_and_a_stop_after_it_is_back_still_works(
        own_redis: Any) -> None:  # noqa: F811
    link = RedisLink(own_redis.url, socket_timeout=2.0)
    watch = StopWatch(link, poll=0.05)
    outcome: list[bool] = []
    go_on = anyio.Event()

    async def work() -> None:
        await go_on.wait()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(watch.run)

            async def produce(key: str) -> None:
                outcome.append(await watch.until_stopped(key, work))

            group.start_soon(produce, stop_key("t:", "a"))
            await anyio.sleep(0.3)  # looked a few times: nothing there
            own_redis.stop()
            await anyio.sleep(0.5)  # the looks fail meanwhile
            assert outcome == []  # not stopped by a failing Redis
            go_on.set()
            with anyio.fail_after(5):
                while not outcome:
                    await anyio.sleep(0.02)
            assert outcome == [False]  # it ran to its end

            own_redis.start()  # the same port
            go_on = anyio.Event()
            group.start_soon(produce, stop_key("t:", "b"))
            with anyio.fail_after(15):
                while True:  # the link reconnects on its own
                    try:
                        await link.call("set", stop_key("t:", "b"), "1")
                        break
                    except streamflow.StreamflowError:
                        await anyio.sleep(0.1)
                while len(outcome) < 2:
                    await anyio.sleep(0.02)
            assert outcome == [False, True]
            group.cancel_scope.cancel()
    finally:
        await link.aclose()


def test_waiting_answers_share_their_stop_checks(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m bench.idle`` runs; 200 waiting answers hold far fewer Redis connections
    than answers (with a check per answer, 300 held 73 here)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench import idle

    assert idle.main(["--answers", "200", "--seconds", "1"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "200" and int(cells[5].replace(",", "")) < 20, row
