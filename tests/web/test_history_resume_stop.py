"""ResumableStreams.stop and on_finish against a real redis-server: a second instance stops the
answer a first one produces; the upstream closes within a second, readers end with the
cancelled terminal entry after the partial, on_finish hears "aborted" once."""

from __future__ import annotations

import shutil
import time
from typing import Any

import anyio
import pytest
from realdata import DATA
from realredis import redis_server, redis_url  # noqa: F401 - fixtures

import streamflow
from streamflow.core.errors import CancelledStreamError
from streamflow.reactive.sources import from_async_iterable, from_redis
from streamflow.servers.web import Answer
from streamflow.servers.web.resume import ResumableStreams

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs Debian's redis-server")]

BODY = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()


class Upstream:
    """The recording, slowly; notes when the consumer closed it."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.closed_at: float | None = None

    def source(self) -> Any:
        async def body() -> Any:
            try:
                for i in range(0, len(BODY), 200):
                    yield BODY[i:i + 200]
                    await anyio.sleep(self.delay)
            finally:
                self.closed_at = time.monotonic()
        return from_async_iterable(body)


async def test_stop_from_another_instance(redis_url: str) -> None:  # noqa: F811
    finished: list[tuple[Answer, str]] = []
    producer = ResumableStreams(redis_url, heartbeat=0.2,
                                on_finish=lambda a, *, status: finished.append((a, status)))
    other = ResumableStreams(redis_url)
    upstream = Upstream(0.2)
    async with producer.running(), other.running():
        key = (await producer.start("chat-stop", upstream.source())).key
        await anyio.sleep(0.8)  # some of the answer is out
        asked = time.monotonic()
        assert await other.stop("chat-stop")
        with anyio.fail_after(10), pytest.raises(CancelledStreamError) as info:
            await streamflow.run(from_redis(redis_url, key))
        with anyio.fail_after(5):
            while not finished:
                await anyio.sleep(0.05)
    assert upstream.closed_at is not None and upstream.closed_at - asked < 1.0
    assert info.value.partial is not None and info.value.partial.items  # the partial kept
    [(answer, status)] = finished
    assert status == "aborted" and answer.turns


async def test_on_finish_completed_once_and_stop_of_unknown_chat(
        redis_url: str) -> None:  # noqa: F811
    finished: list[str] = []

    async def on_finish(answer: Answer, *, status: str) -> None:
        finished.append(status)

    streams = ResumableStreams(redis_url, on_finish=on_finish)
    async with streams.running():
        assert not await streams.stop("nobody")
        key = (await streams.start("chat-ok", Upstream(0.0).source())).key
        message = await streamflow.run(from_redis(redis_url, key))
        with anyio.fail_after(5):
            while not finished:
                await anyio.sleep(0.05)
        await anyio.sleep(0.3)
    assert message.complete and finished == ["completed"]
