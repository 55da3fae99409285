"""on_error(): raise, convert, retry (before output by default; after output when asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import reactivex

import streamflow
from streamflow import HTTPStatusError, ProviderError, TransportError
from streamflow.reactive.operators import StreamFailure, StreamRestart, on_error, pipeline
from streamflow.reactive.sources import from_bytes, from_httpx, scope
from streamflow.servers.replay import ReplayServer, Route

DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
BROKEN = (DATA / "error_after_text.sse").read_bytes()
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def collect(observable: Any) -> tuple[list[Any], list[Exception], list[bool]]:
    items: list[Any] = []
    errors: list[Exception] = []
    done: list[bool] = []
    observable.subscribe(items.append, errors.append, lambda: done.append(True))
    return items, errors, done


class Sleeps:
    """An injected sleep that records the delays and does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await anyio.lowlevel.checkpoint()


def test_raise_is_the_default_and_changes_nothing() -> None:
    items, errors, _ = collect(from_bytes(BROKEN).pipe(pipeline(), on_error()))
    assert isinstance(errors[0], ProviderError) and len(items) == 2


def test_convert_ends_with_a_stream_failure_holding_the_partial() -> None:
    items, errors, done = collect(from_bytes(BROKEN).pipe(pipeline(), on_error("convert")))
    assert (errors, done) == ([], [True])
    failure = items[-1]
    assert isinstance(failure, StreamFailure) and isinstance(failure.error, ProviderError)
    assert failure.partial.text == "Partial answer" and not failure.partial.complete


def test_convert_leaves_bugs_as_errors() -> None:
    items, errors, _ = collect(reactivex.throw(KeyError("bug")).pipe(on_error("convert")))
    assert items == [] and isinstance(errors[0], KeyError)


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="policy"):
        on_error("ignore")  # type: ignore[arg-type]


def test_sync_retry_uses_the_request_factory() -> None:
    calls: list[int] = []

    def again() -> Any:
        calls.append(1)
        return from_bytes(TURN).pipe(pipeline())

    first = reactivex.throw(TransportError("reset"))
    items, errors, done = collect(first.pipe(on_error("retry", request=again,
                                                      backoff=lambda n: 0.0)))
    assert (errors, done, len(calls)) == ([], [True], 1)
    assert items[-1].event_type == "stop"


def routes(*answers: Route) -> dict[str, list[Route]]:
    return {"/v1/messages": list(answers)}


async def run_retry(server: ReplayServer, *sinks: Any, **policy: Any) -> streamflow.Message:
    async with httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", server.url + "/v1/messages"))
        return await streamflow.run(source.pipe(pipeline(), on_error("retry", **policy)), *sinks)


@pytest.mark.anyio
async def test_retry_before_output_is_transparent() -> None:
    sleeps = Sleeps()
    seen: list[Any] = []
    async with ReplayServer(routes(Route.error(503, {"error": {"message": "down"}}),
                                   Route.from_body(TURN))) as server:
        message = await run_retry(server, seen.append, sleep=sleeps, backoff=lambda n: 0.25)
    assert message.text.startswith("Let me check") and len(server.hits) == 2
    assert sleeps.delays == [0.25]
    assert not any(isinstance(i, StreamRestart) for i in seen)


@pytest.mark.anyio
async def test_retry_honours_retry_after() -> None:
    sleeps = Sleeps()
    busy = Route.error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                        "message": "slow"}},
                       headers={"retry-after": "2"})
    async with ReplayServer(routes(busy, Route.from_body(TURN))) as server:
        await run_retry(server, sleep=sleeps, backoff=lambda n: 0.01)
    assert sleeps.delays == [2.0]


@pytest.mark.anyio
async def test_retry_gives_up_on_a_retry_after_beyond_max_delay() -> None:
    busy = Route.error(429, {"error": {"message": "later"}}, headers={"retry-after": "3600"})
    async with ReplayServer(routes(busy, Route.from_body(TURN))) as server:
        with pytest.raises(HTTPStatusError) as caught:
            await run_retry(server, sleep=Sleeps(), max_delay=60)
    assert caught.value.retry_after == 3600 and len(server.hits) == 1


@pytest.mark.anyio
async def test_no_retry_for_a_non_retryable_error_or_past_max_attempts() -> None:
    bad = Route.error(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": "bad"}})
    async with ReplayServer(routes(bad, Route.from_body(TURN))) as server:
        with pytest.raises(HTTPStatusError):
            await run_retry(server, sleep=Sleeps())
    assert len(server.hits) == 1
    sleeps = Sleeps()
    async with ReplayServer(routes(Route.error(529, OVERLOADED))) as server:
        with pytest.raises(HTTPStatusError) as caught:
            await run_retry(server, sleep=sleeps, max_attempts=3)
    assert caught.value.status == 529 and len(server.hits) == 3
    assert sleeps.delays == [0.5, 1.0]  # the default exponential backoff


@pytest.mark.anyio
async def test_no_retry_after_output_by_default() -> None:
    seen: list[Any] = []
    async with ReplayServer(routes(Route.from_body(BROKEN), Route.from_body(TURN))) as server:
        with pytest.raises(ProviderError) as caught:
            await run_retry(server, seen.append, sleep=Sleeps())
    assert len(server.hits) == 1 and len(seen) == 2
    assert caught.value.partial is not None and caught.value.partial.text == "Partial answer"


@pytest.mark.anyio
async def test_retry_after_output_tells_the_app_what_to_discard() -> None:
    seen: list[Any] = []
    async with ReplayServer(routes(Route.from_body(BROKEN), Route.from_body(TURN))) as server:
        message = await run_retry(server, seen.append, sleep=Sleeps(), after_output=True,
                                  backoff=lambda n: 0.0)
    restart = next(i for i in seen if isinstance(i, StreamRestart))
    position = seen.index(restart)
    assert (restart.discard, restart.attempt, position) == (2, 2, 2)
    assert isinstance(restart.error, ProviderError)
    kept = seen[position + 1:]
    assert kept[-1].event_type == "stop" and len(kept) == 17
    assert message.text.startswith("Let me check") and "Partial" not in message.text


@pytest.mark.anyio
async def test_dispose_during_the_backoff_cancels_the_retry() -> None:
    async with ReplayServer(routes(Route.error(503, {"error": {"message": "down"}}),
                                   Route.from_body(TURN))) as server, \
            httpx.AsyncClient() as client:
        source = from_httpx(client, client.build_request("POST", server.url + "/v1/messages"))
        async with scope() as owner:
            subscription = source.pipe(pipeline(), on_error(
                "retry", backoff=lambda n: 30.0)).subscribe()
            while not server.hits or not server.hits[0].done.is_set():
                await anyio.sleep(0.005)
            await anyio.sleep(0.01)
            names = [t.name for t in anyio.get_running_tasks()]
            assert "streamflow-retry-timer" in names
            subscription.dispose()
    assert owner.pumps == 0 and len(server.hits) == 1
    assert not any(t.name.startswith("streamflow-") for t in anyio.get_running_tasks())
