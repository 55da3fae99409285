"""Every fault, every dialect, over a real socket: httpx against the loopback replay server.

Same outcome as in memory (test_fault_outcomes.py), the same partial message, no
stop before the error, the connection closed (the server saw the body complete, its
own abort, or the client leave mid-body) and no task left running -- on asyncio and trio.
"""

from __future__ import annotations

import httpx
import pytest
from fault_bodies import EXPECTED_TEXT, available, body_for
from fault_cases import (
    CASES,
    check_outcome,
    decode_in_memory,
    items,
    live_tasks,
    sans_io_chunks,
    settle,
)

import streamflow
from streamflow import IncompleteStreamError, StreamflowError, TransportError
from streamflow.faults import Cut, Drip, Stall, fault_route, faulty_source, inject
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route, split_odd

pytestmark = pytest.mark.anyio
CONTENT_TYPES = {"bedrock": "application/vnd.amazon.eventstream",
                 "ollama": "application/x-ndjson", "uni-jsonl": "application/x-ndjson"}


# one byte per HTTP chunk is slow to serve: drip over the socket for one dialect per framing
DRIP_OVER_HTTP = ("anthropic", "ollama", "bedrock")
MATRIX = [(d, n) for d in available() for n in CASES if n != "drip" or d in DRIP_OVER_HTTP]


@pytest.mark.parametrize(("dialect", "name"), MATRIX)
async def test_fault_over_the_loopback_server(dialect: str, name: str) -> None:
    make, expect = CASES[name]
    body = body_for(dialect)
    faults = make(dialect, body)
    extra: tuple = ()
    if name == "provider_error_then_more":  # hold the rest back: the client must hang up
        extra = (Stall(2.0, before=faults[0].after + 1),)  # type: ignore[attr-defined]
    route = fault_route(split_odd(body), *faults, *extra,
                        content_type=CONTENT_TYPES.get(dialect, "text/event-stream"))
    seen: list[object] = []
    async with ReplayServer({"/v1/stream": route}) as server:
        baseline = await live_tasks(0.02)  # let started tasks start
        async with httpx.AsyncClient() as client:
            source = from_httpx(client, lambda: client.build_request(
                "POST", server.url + "/v1/stream"))
            try:
                outcome: object = await streamflow.run(source, seen.append, dialect=dialect)
            except StreamflowError as exc:
                outcome = exc
        await server.wait_done()
        assert await settle(baseline) == set()
    check_outcome(dialect, name, seen, outcome, expect(dialect))
    _, reference = decode_in_memory(dialect, sans_io_chunks(dialect, body, faults))
    got = outcome.partial if isinstance(outcome, StreamflowError) else outcome
    ref = reference.partial if isinstance(reference, StreamflowError) else reference
    assert got is not None and ref is not None and items(got) == items(ref)
    (hit,) = server.hits
    if name == "cut_reset":
        assert not hit.completed and not hit.disconnected  # the server dropped it
    elif name == "provider_error_then_more":
        assert hit.disconnected and hit.chunks_sent < len(route.chunks)
    elif name == "duplicate_text_event" and isinstance(outcome, StreamflowError):
        assert hit.completed or hit.disconnected  # a race: the error may beat the last chunk
    else:
        assert hit.completed


async def test_faults_on_live_bytes_wrap_an_http_source() -> None:
    body = body_for("anthropic")
    slow = Route.from_body(body, sizes=(50,), delays=0.01)
    async with ReplayServer(slow) as server, httpx.AsyncClient() as client:
        live = from_httpx(client, lambda: client.build_request("POST", server.url + "/v1"))
        with pytest.raises(TransportError) as caught:
            await streamflow.run(faulty_source(live, Cut(700, reset=True)))
        hit = await server.wait_disconnect()  # the real response was closed mid-body
    assert caught.value.partial is not None and not caught.value.partial.complete
    assert hit.chunks_sent < len(slow.chunks)


async def test_the_inject_operator_ends_the_body_and_closes_the_response() -> None:
    body = body_for("openai-chat")
    slow = Route.from_body(body, sizes=(50,), delays=0.01)
    seen: list[object] = []
    async with ReplayServer(slow) as server, httpx.AsyncClient() as client:
        live = from_httpx(client, lambda: client.build_request("POST", server.url + "/v1"))
        with pytest.raises(IncompleteStreamError) as caught:
            await streamflow.run(live.pipe(inject(Drip(), Cut(400))), seen.append,
                                 dialect="openai-chat")
        hit = await server.wait_disconnect()
    partial = caught.value.partial
    assert partial is not None and partial.text and EXPECTED_TEXT.startswith(partial.text)
    assert hit.chunks_sent < len(slow.chunks)
    assert all(getattr(e, "event_type", "") == "delta" for e in seen)
