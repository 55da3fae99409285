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

import anyio
import pytest
import sniffio

from streamflow import Limits, StreamTimeoutError
from streamflow.reactive._chunk_reader import ChunkReader

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
