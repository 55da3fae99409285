"""ResumableStreams in-process (no HTTP): producers outlive their readers, bounded by the deadline.

Runs on asyncio and trio: ResumableStreams uses anyio only, and RedisLink picks
redis-py's asyncio client or its sync client in worker threads.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from realdata import DATA

import streamflow
from streamflow.core.errors import StreamTimeoutError
from streamflow.reactive.sources import from_async_iterable, from_redis
from streamflow.servers.web.resume import ResumableStreams, ResumeRefused

pytestmark = pytest.mark.anyio

BODY = (DATA / "anthropic" / "kitchen_sink.sse").read_bytes()


def slow(delay: float, hang: bool = False) -> Any:
    """The recording in 300-byte chunks; ``hang``: two thirds of it, then silence."""
    body_bytes = BODY[: len(BODY) * 2 // 3] if hang else BODY

    async def body() -> Any:
        for i in range(0, len(body_bytes), 300):
            await anyio.sleep(delay)
            yield body_bytes[i:i + 300]
        if hang:
            await anyio.sleep(3600)

    return from_async_iterable(body)


async def test_the_producer_reads_to_the_end_with_nobody_reading(redis_url: str) -> None:
    streams = ResumableStreams(redis_url, heartbeat=0.2)
    async with streams.running():
        key = (await streams.start("chat-1", slow(0.01))).key
        # nobody reads while it is produced; a client that comes later gets the whole answer
        await anyio.sleep(0.5)
        late = await streamflow.run(from_redis(redis_url, key))
    direct = streamflow.assemble(BODY)
    assert late.complete and late.text == direct.text and late.items == direct.items


async def test_an_endless_upstream_is_cut_by_the_deadline(redis_url: str) -> None:
    streams = ResumableStreams(redis_url, heartbeat=0.2,
                               limits=streamflow.Limits(deadline=0.6))
    async with streams.running():
        key = (await streams.start("chat-2", slow(0.0, hang=True))).key
        with anyio.fail_after(10), pytest.raises(StreamTimeoutError, match="deadline") as info:
            await streamflow.run(from_redis(redis_url, key))
    assert info.value.partial is not None and info.value.partial.items


async def test_a_new_answer_replaces_the_chat_s_latest(redis_url: str) -> None:
    streams = ResumableStreams(redis_url)
    async with streams.running():
        first = await streams.start("chat-3", slow(0.0))
        with pytest.raises(ResumeRefused) as refused:  # the chat's token, or no new answer
            await streams.start("chat-3", slow(0.0))
        assert refused.value.status == 403
        second = await streams.start("chat-3", slow(0.0), token=first.token)
        assert first.key != second.key and second.token == first.token
        assert await streams.link.call("get", "streamflow:chat:chat-3") == second.key
        assert (await streamflow.run(from_redis(redis_url, second.key))).complete


async def test_start_outside_running_is_a_clear_error(redis_url: str) -> None:
    with pytest.raises(RuntimeError, match=r"lifespan=streams\.lifespan"):
        await ResumableStreams(redis_url).start("x", slow(0.0))
