"""Idle-read timeout and overall deadline: typed, partial kept, connection closed (asyncio, trio).

Short timeouts against the loopback server stalling mid-stream; nothing here asserts
how long anything took, only which error came and what it kept.
"""

from __future__ import annotations

import httpx
import pytest
from fault_bodies import TEXT_PARTS, body_for
from fault_cases import text_event

import streamflow
from streamflow import Limits, StreamTimeoutError
from streamflow.core.limits import DEFAULT_LIMITS
from streamflow.faults import ByEvent, Stall, apply, fault_route, faulty_source
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route, split_odd

BODY = body_for("anthropic")
STALL_AT = text_event("anthropic", BODY, 2)  # the stall comes before "Köln — "
STALLED = fault_route(BODY, ByEvent(), Stall(30.0, before=STALL_AT))


def test_defaults_are_documented_and_generous() -> None:
    assert DEFAULT_LIMITS.idle_timeout is not None and DEFAULT_LIMITS.idle_timeout >= 600
    assert DEFAULT_LIMITS.deadline is None
    assert "600" in (Limits.__doc__ or "")


def _request(client: httpx.AsyncClient, server: ReplayServer) -> httpx.Request:
    return client.build_request("POST", server.url + "/v1/messages")


@pytest.mark.anyio
async def test_idle_timeout_between_chunks_keeps_the_partial_and_hangs_up() -> None:
    seen: list[object] = []
    async with ReplayServer(STALLED) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, lambda: _request(client, server),
                            limits=Limits(idle_timeout=0.2))
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source, seen.append)
        hit = await server.wait_disconnect()  # the server, mid-stall, saw the client leave
    error = caught.value
    assert (error.kind, error.seconds) == ("idle", 0.2) and error.retryable
    assert error.partial is not None and error.partial.text == "".join(TEXT_PARTS[:2])
    assert not error.partial.complete and hit.chunks_sent == STALL_AT
    assert all(getattr(e, "event_type", "") != "stop" for e in seen)


@pytest.mark.anyio
async def test_deadline_fires_while_bytes_keep_flowing() -> None:
    slow = Route.from_body(BODY, sizes=(40,), delays=0.02)  # never idle, ~1.5 s in all
    async with ReplayServer(slow) as server, httpx.AsyncClient() as client:
        source = from_httpx(client, lambda: _request(client, server),
                            limits=Limits(idle_timeout=5.0, deadline=0.3))
        with pytest.raises(StreamTimeoutError) as caught:
            await streamflow.run(source)
        hit = await server.wait_disconnect()
    error = caught.value
    assert (error.kind, error.seconds) == ("deadline", 0.3)
    assert error.partial is not None and not error.partial.complete
    assert 0 < hit.chunks_sent < len(slow.chunks)


@pytest.mark.anyio
async def test_idle_timeout_on_an_in_memory_faulty_source() -> None:
    chunks = apply(split_odd(BODY), Stall(30.0, before=40))
    with pytest.raises(StreamTimeoutError) as caught:
        await streamflow.run(faulty_source(chunks, limits=Limits(idle_timeout=0.1)))
    assert caught.value.kind == "idle" and caught.value.partial is not None


@pytest.mark.anyio
async def test_run_limits_reach_the_sources_idle_timer() -> None:
    async with ReplayServer(fault_route(BODY, ByEvent(), Stall(0.6, before=STALL_AT))) \
            as server, httpx.AsyncClient() as client:
        with pytest.raises(StreamTimeoutError):
            await streamflow.run(from_httpx(client, lambda: _request(client, server)),
                                 limits=Limits(idle_timeout=0.1))


@pytest.mark.anyio
async def test_the_idle_limit_not_the_http_client_decides() -> None:
    async with ReplayServer(fault_route(BODY, ByEvent(), Stall(0.4, before=STALL_AT))) \
            as server, httpx.AsyncClient(timeout=0.1) as client:
        message = await streamflow.run(from_httpx(client, lambda: _request(client, server),
                                                  limits=Limits(idle_timeout=5.0)))
    assert message.complete
