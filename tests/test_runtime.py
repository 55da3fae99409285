"""run(): one upstream, many sinks, the sink failure rule, cancellation, AsyncSink policies."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import reactivex.operators as ops

import streamflow
from streamflow import (
    CancelledStreamError,
    LimitExceededError,
    ProviderError,
    UniEvent,
)
from streamflow.reactive.operators import StreamFailure, on_error, pipeline
from streamflow.reactive.sinks import AsyncSink, BaseSink, SinkError
from streamflow.reactive.sources import from_bytes, from_httpx
from streamflow.servers.replay import ReplayServer, Route

DATA = Path(__file__).resolve().parent / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
LONG = (DATA / "long_text.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()


class Recorder(BaseSink):
    """A sync sink that keeps everything it is told."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.ends: list[Any] = []

    def on_next(self, event: Any) -> None:
        self.items.append(event)

    def on_error(self, error: Exception) -> None:
        self.ends.append(error)

    def on_completed(self) -> None:
        self.ends.append("completed")


class Exploding(Recorder):
    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def on_next(self, event: Any) -> None:
        if len(self.items) == self.after:
            raise RuntimeError("sink bug")
        super().on_next(event)


class Slow(AsyncSink):
    """An AsyncSink that takes its time per event."""

    def __init__(self, buffer: int, policy: Any, delay: float = 0.001,
                 fail_at: int | None = None) -> None:
        self.buffer, self.policy, self.delay, self.fail_at = buffer, policy, delay, fail_at
        self.items: list[Any] = []
        self.ended: list[Any] = []

    async def on_event(self, event: Any) -> None:
        if self.fail_at is not None and len(self.items) == self.fail_at:
            raise ValueError("tool crashed")
        await anyio.sleep(self.delay)
        self.items.append(event)

    async def on_end(self, error: BaseException | None) -> None:
        self.ended.append(error)


def streamflow_tasks() -> list[str]:
    return [t.name for t in anyio.get_running_tasks() if t.name.startswith("streamflow-")]


@pytest.mark.anyio
async def test_one_request_feeds_every_sink_the_same_items() -> None:
    ui, seen, tools = Recorder(), [], Slow(buffer=4, policy="wait", delay=0)
    async with ReplayServer(Route.from_body(TURN)) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", server.url + "/v1/messages"))
        message = await streamflow.run(source, ui, seen.append, tools)
    assert len(server.hits) == 1
    assert ui.items == seen == tools.items and len(seen) == 17
    assert ui.ends == ["completed"] and tools.ended == [None]
    assert message.complete and message.tool_calls[0].arguments["city"] == "Paris"


@pytest.mark.anyio
async def test_a_failing_sink_is_detached_and_reported_after_the_stream() -> None:
    bad, good = Exploding(after=3), Recorder()
    with pytest.raises(SinkError) as caught:
        await streamflow.run(from_bytes(TURN, chunk_size=50), bad, good)
    assert len(bad.items) == 3 and bad.ends == []
    assert len(good.items) == 17 and good.ends == ["completed"]
    [(sink, error)] = caught.value.errors
    assert sink is bad and isinstance(error, RuntimeError)
    assert caught.value.partial is not None and caught.value.partial.complete


@pytest.mark.anyio
async def test_the_stream_error_wins_and_lists_sink_failures() -> None:
    with pytest.raises(ProviderError) as caught:
        await streamflow.run(from_bytes(BROKEN), Exploding(after=0), Recorder())
    assert caught.value.partial is not None and caught.value.partial.text == "Partial answer"
    assert [type(e) for _, e in caught.value.sink_errors] == [RuntimeError]


@pytest.mark.anyio
async def test_converted_failure_reaches_sinks_as_an_item_and_run_still_raises() -> None:
    sink = Recorder()
    with pytest.raises(ProviderError):
        await streamflow.run(from_bytes(BROKEN).pipe(pipeline(), on_error("convert")), sink)
    assert isinstance(sink.items[-1], StreamFailure) and sink.ends == ["completed"]
    assert sink.items[-1].partial.text == "Partial answer"


@pytest.mark.anyio
async def test_take_in_the_pipeline_ends_early_and_closes_the_connection() -> None:
    sink = Recorder()
    async with ReplayServer(Route.from_body(LONG, delays=0.001)) as server, \
            httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", server.url + "/"))
        with pytest.raises(CancelledStreamError) as caught:
            await streamflow.run(source.pipe(pipeline(), ops.take(5)), sink)
        hit = await server.wait_disconnect()
        assert streamflow_tasks() == []
    assert len(sink.items) == 5 and sink.ends == ["completed"] and not hit.completed
    assert caught.value.partial is not None and caught.value.partial.text == "w0 w1 w2 w3 w4 "


@pytest.mark.anyio
async def test_cancelling_run_closes_the_connection_and_tells_the_sinks() -> None:
    sink, tools = Recorder(), Slow(buffer=8, policy="wait", delay=0)
    async with ReplayServer(Route.from_body(LONG, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", server.url + "/"))
        with anyio.move_on_after(0.3) as timer:
            await streamflow.run(source, sink, tools)
        assert timer.cancelled_caught
        hit = await server.wait_disconnect()
        assert streamflow_tasks() == []
    assert not hit.completed and 0 < len(sink.items) < 300
    assert isinstance(sink.ends[0], CancelledStreamError)
    assert sink.ends[0].partial is not None and sink.ends[0].partial.text.startswith("w0 ")


@pytest.mark.anyio
async def test_wait_policy_applies_backpressure_and_loses_nothing() -> None:
    pushed = 0
    lags: list[int] = []
    slow = Slow(buffer=2, policy="wait")

    def count(_: Any) -> None:
        nonlocal pushed
        pushed += 1

    class Lag(Slow):
        async def on_event(self, event: Any) -> None:
            lags.append(pushed - len(self.items))
            await super().on_event(event)

    lagging = Lag(buffer=2, policy="wait")
    await streamflow.run(from_bytes(LONG, chunk_size=40), count, slow, lagging)
    assert len(slow.items) == len(lagging.items) == pushed == 302
    assert max(lags) <= 2 + 2 + 1  # buffer + one chunk's events + the one in hand
    assert slow.dropped == 0


@pytest.mark.anyio
async def test_drop_policy_counts_what_it_drops() -> None:
    slow = Slow(buffer=1, policy="drop", delay=0.002)
    message = await streamflow.run(from_bytes(LONG, chunk_size=4096), slow)
    assert slow.dropped > 0 and len(slow.items) + slow.dropped == 302
    assert slow.ended == [None] and message.complete


@pytest.mark.anyio
async def test_error_policy_fails_only_that_sink() -> None:
    slow, other = Slow(buffer=1, policy="error", delay=0.002), Recorder()
    with pytest.raises(SinkError) as caught:
        await streamflow.run(from_bytes(LONG, chunk_size=4096), slow, other)
    [(sink, error)] = caught.value.errors
    assert sink is slow and isinstance(error, LimitExceededError)
    assert error.limit == "sink_buffer" and slow.ended == [error]
    assert len(other.items) == 302 and other.ends == ["completed"]


@pytest.mark.anyio
async def test_an_async_sink_that_raises_is_detached() -> None:
    crashing, other = Slow(buffer=4, policy="wait", delay=0, fail_at=2), Recorder()
    with pytest.raises(SinkError) as caught:
        await streamflow.run(from_bytes(TURN), crashing, other)
    assert isinstance(caught.value.errors[0][1], ValueError)
    assert len(crashing.items) == 2 and isinstance(crashing.ended[0], ValueError)
    assert len(other.items) == 17


@pytest.mark.anyio
async def test_run_accepts_an_event_pipeline_and_a_file_hint(tmp_path: Path) -> None:
    events = from_bytes(TURN, chunk_size=64).pipe(pipeline("anthropic"))
    message = await streamflow.run(events)
    assert message.thinking == "Weather in Paris?"
    with pytest.raises(streamflow.IncompleteStreamError):
        await streamflow.run(from_bytes(b""))


def test_run_sync_for_synchronous_sources() -> None:
    sink = Recorder()
    message = streamflow.run_sync(from_bytes(TURN, chunk_size=10), sink)
    assert message.text.startswith("Let me") and len(sink.items) == 17
    assert all(isinstance(e, UniEvent) for e in sink.items)
    with pytest.raises(TypeError, match="event loop"):
        streamflow.run_sync(from_bytes(TURN), Slow(buffer=1, policy="wait"))


def test_not_a_sink() -> None:
    with pytest.raises(TypeError, match="not a sink"):
        streamflow.run_sync(from_bytes(TURN), 42)


# -- a driven run: the caller's own task reads and pushes (the gateway) ----------------

def _driven(chunks: list[bytes], *sinks: Any) -> tuple[Any, list[Any]]:
    from streamflow.app.runtime import Run

    seen: list[Any] = []
    run = Run(from_bytes(b"".join(chunks)), (seen.append, *sinks), dialect="anthropic")
    feed = run.driven()
    for chunk in chunks:
        feed.on_next(chunk)
    feed.on_completed()
    return run.settle(), seen


@pytest.mark.parametrize("size", [1, 7, 64, 100_000])
def test_a_driven_run_gives_what_run_gives(size: int) -> None:
    from streamflow.demo import recording

    body = recording("anthropic", 1)
    outcome, seen = _driven([body[i:i + size] for i in range(0, len(body), size)])
    events: list[Any] = []
    message = streamflow.run_sync(from_bytes(body), events.append)
    def untimed(evs: list[Any]) -> list[Any]:  # created_at is the clock's
        return [dataclasses.replace(e, created_at=0) for e in evs]

    assert untimed(seen) == untimed(events)
    assert outcome.items == message.items and outcome.usage_metadata == message.usage_metadata


def test_a_driven_run_ends_with_the_typed_error_and_the_partial() -> None:
    from streamflow.demo import recording

    body = recording("anthropic", 1)
    outcome, seen = _driven([body[: len(body) // 2]])
    assert isinstance(outcome, streamflow.IncompleteStreamError)
    assert outcome.partial is not None and outcome.partial.items  # what arrived is kept
    assert seen and all(type(e) is streamflow.UniEvent for e in seen)


def test_a_driven_run_takes_sync_sinks_only() -> None:
    class Later(AsyncSink):
        async def on_event(self, event: Any) -> None:
            pass

    with pytest.raises(TypeError, match="sync sinks only"):
        _driven([b""], Later())
