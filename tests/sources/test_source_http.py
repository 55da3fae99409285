"""from_httpx against the real loopback server, on asyncio and trio."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
import reactivex.operators as ops

import streamflow
from streamflow import (
    HTTPStatusError,
    Limits,
    ProviderError,
    StreamTimeoutError,
    TransportError,
)
from streamflow.reactive.operators import pipeline
from streamflow.reactive.sources import from_httpx, scope
from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
DATA = Path(__file__).resolve().parents[1] / "data" / "reactive"
TURN = (DATA / "turn.sse").read_bytes()
LONG = (DATA / "long_text.sse").read_bytes()


def post(client: httpx.AsyncClient | httpx.Client, server: ReplayServer,
         path: str = "/v1/messages") -> httpx.Request:
    return client.build_request("POST", server.url + path, json={"stream": True})


async def test_full_stream_gives_the_message() -> None:
    async with ReplayServer(Route.from_body(TURN)) as server, httpx.AsyncClient() as client:
        message = await streamflow.run(from_httpx(client, post(client, server)))
    assert message.complete
    assert message.thinking == "Weather in Paris?"
    assert message.text == "Let me check the weather in Paris — un instant."
    assert message.tool_calls[0].arguments == {"city": "Paris", "units": "metric"}
    assert message.usage_metadata is not None and message.usage_metadata.response_tokens == 42


@pytest.mark.parametrize(("route", "status", "type_", "text", "retry_after"), [
    (Route.error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                  "message": "Number of requests exceeded"}},
                 headers={"retry-after": "7", "request-id": "req_1"}),
     429, "rate_limit_error", "Number of requests exceeded", 7.0),
    (Route.error(503, {"error": {"message": "The engine is overloaded", "type": "server_error",
                                 "code": None}}),
     503, "server_error", "The engine is overloaded", None),
    (Route.error(400, {"message": "Malformed input request"},
                 headers={"x-amzn-errortype": "ValidationException:http://internal"}),
     400, "ValidationException", "Malformed input request", None),
    (Route.error(502, "Bad gateway from the proxy"), 502, None, "Bad gateway from the proxy",
     None),
])
async def test_non_2xx_before_the_stream_is_a_typed_http_error(
        route: Route, status: int, type_: str | None, text: str,
        retry_after: float | None) -> None:
    seen: list[object] = []
    async with ReplayServer(route) as server, httpx.AsyncClient() as client:
        with pytest.raises(HTTPStatusError) as caught:
            await streamflow.run(from_httpx(client, post(client, server)), seen.append)
    error = caught.value
    assert (error.status, error.type, error.message.endswith(text)) == (status, type_, True)
    assert error.retry_after == retry_after
    assert error.retryable == (status in (429, 502, 503))
    assert seen == [] and error.partial is not None and error.partial.items == []


async def test_error_event_after_200_is_a_provider_error_with_the_partial() -> None:
    body = (DATA / "error_after_text.sse").read_bytes()
    async with ReplayServer(Route.from_body(body)) as server, httpx.AsyncClient() as client:
        with pytest.raises(ProviderError) as caught:
            await streamflow.run(from_httpx(client, post(client, server)))
    assert caught.value.type == "overloaded_error" and caught.value.retryable
    assert caught.value.partial is not None and caught.value.partial.text == "Partial answer"
    assert not isinstance(caught.value, HTTPStatusError)


async def test_connection_dropped_mid_body_is_a_transport_error_with_the_partial() -> None:
    cut = TURN[: TURN.index(b"in Paris")]
    async with ReplayServer(Route.from_body(cut, abort=True)) as server, \
            httpx.AsyncClient() as client:
        with pytest.raises(TransportError) as caught:
            await streamflow.run(from_httpx(client, post(client, server)))
    assert caught.value.partial is not None
    assert caught.value.partial.text == "Let me check the weather "
    assert isinstance(caught.value.__cause__, httpx.HTTPError)


def streamflow_tasks() -> list[str]:
    """Names of the running tasks streamflow started (pumps, timers, sink consumers)."""
    return [t.name for t in anyio.get_running_tasks() if t.name.startswith("streamflow-")]


async def _cancel_and_check(make_pipeline: object, server: ReplayServer,
                            client: httpx.AsyncClient, dispose_after: int | None) -> list[object]:
    got: list[object] = []
    async with scope() as owner:
        observable = from_httpx(client, post(client, server)).pipe(make_pipeline)  # type: ignore[arg-type]
        subscription = observable.subscribe(got.append)
        if dispose_after is not None:
            while len(got) < dispose_after:
                await anyio.sleep(0.005)
            assert streamflow_tasks() == ["streamflow-pump:AsyncHTTPSource"]
            subscription.dispose()
    hit = await server.wait_disconnect()
    assert owner.pumps == 0
    assert streamflow_tasks() == []
    assert not hit.completed
    return got


async def test_dispose_mid_stream_closes_the_connection_and_leaves_no_task() -> None:
    async with ReplayServer(Route.from_body(LONG, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        got = await _cancel_and_check(pipeline(), server, client, dispose_after=5)
    assert 5 <= len(got) < 300


async def test_take_n_closes_the_connection_and_leaves_no_task() -> None:
    async with ReplayServer(Route.from_body(LONG, delays=0.002)) as server, \
            httpx.AsyncClient() as client:
        got = await _cancel_and_check(
            lambda source: source.pipe(pipeline(), ops.take(4)), server, client, None)
    assert len(got) == 4


async def test_idle_timeout_between_chunks() -> None:
    route = Route(chunks=[TURN[:200], TURN[200:]], delays=[0.0, 2.0])
    async with ReplayServer(route) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, post(client, server), limits=Limits(idle_timeout=0.05))
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source)
        await server.wait_disconnect()
    assert (caught.value.kind, caught.value.seconds) == ("idle", 0.05)
    assert caught.value.partial is not None


async def test_overall_deadline() -> None:
    async with ReplayServer(Route.from_body(LONG, sizes=(400,), delays=0.01)) as server, \
            httpx.AsyncClient() as client:
        source = from_httpx(client, post(client, server), limits=Limits(deadline=0.1))
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source)
        await server.wait_disconnect()
    assert caught.value.kind == "deadline"
    assert caught.value.partial is not None and caught.value.partial.text.startswith("w0 ")


async def test_sync_client_inside_run_reads_in_worker_threads() -> None:
    async with ReplayServer(Route.from_body(TURN)) as server:
        with httpx.Client() as client:
            message = await streamflow.run(from_httpx(client, post(client, server)))
    assert message.tool_calls[0].name == "get_weather"


async def test_sync_client_without_event_loop_and_its_errors() -> None:
    routes = {"/ok": Route.from_body(TURN),
              "/busy": Route.error(529, {"type": "error", "error": {
                  "type": "overloaded_error", "message": "Overloaded"}})}

    def blocking(url: str) -> streamflow.Message:
        with httpx.Client() as client:
            return streamflow.run_sync(from_httpx(client, client.build_request("POST", url)))

    async with ReplayServer(routes) as server:
        message = await anyio.to_thread.run_sync(blocking, server.url + "/ok")
        with pytest.raises(HTTPStatusError) as caught:
            await anyio.to_thread.run_sync(blocking, server.url + "/busy")
    assert message.text.startswith("Let me check")
    assert (caught.value.status, caught.value.type, caught.value.retryable) == (
        529, "overloaded_error", True)


async def test_request_factory_is_called_per_subscription() -> None:
    calls: list[int] = []
    async with ReplayServer(Route.from_body(TURN)) as server, httpx.AsyncClient() as client:
        def build() -> httpx.Request:
            calls.append(1)
            return post(client, server)
        source = from_httpx(client, build)
        await streamflow.run(source)
        await streamflow.run(source)
    assert len(calls) == 2 and len(server.hits) == 2
