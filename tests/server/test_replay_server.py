"""The loopback replay server: real sockets, chunked bodies, statuses, and what it observes."""

from __future__ import annotations

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamflow.servers.replay import ReplayServer, Route, split_odd

pytestmark = pytest.mark.anyio
BODY = b"event: ping\ndata: {\"type\": \"ping\"}\n\n" * 40


@given(st.binary(max_size=300), st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_split_odd_keeps_every_byte(body: bytes, sizes: list[int]) -> None:
    pieces = split_odd(body, sizes)
    assert b"".join(pieces) == body
    assert all(pieces)


async def test_body_arrives_whole_in_several_chunks() -> None:
    async with ReplayServer({"/v1/messages": Route.from_body(BODY)}) as server:
        assert server.url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as client, \
                client.stream("POST", server.url + "/v1/messages", json={"q": 1}) as response:
            pieces = [piece async for piece in response.aiter_raw()]
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["transfer-encoding"] == "chunked"
    assert b"".join(pieces) == BODY
    assert len(pieces) > 1
    hit = server.hits[0]
    assert (hit.method, hit.path, hit.json()) == ("POST", "/v1/messages", {"q": 1})
    assert hit.completed and not hit.disconnected
    assert hit.chunks_sent == len(split_odd(BODY))


async def test_route_list_answers_successive_requests_and_repeats_the_last() -> None:
    routes = {"/x": [Route.error(503, {"error": {"message": "busy"}},
                                 headers={"retry-after": "1"}),
                     Route(chunks=[b"ok"], content_type="text/plain")]}
    async with ReplayServer(routes) as server, httpx.AsyncClient() as client:
        first = await client.get(server.url + "/x")
        second = await client.get(server.url + "/x")
        third = await client.get(server.url + "/x")
        missing = await client.get(server.url + "/nowhere")
    assert (first.status_code, first.json(), first.headers["retry-after"]) == (
        503, {"error": {"message": "busy"}}, "1")
    assert first.headers["content-type"] == "application/json"
    assert (second.status_code, second.text, third.text) == (200, "ok", "ok")
    assert missing.status_code == 404


async def test_server_observes_a_client_that_leaves_mid_body() -> None:
    async with ReplayServer(Route.from_body(BODY, delays=0.01)) as server:
        async with httpx.AsyncClient() as client, \
                client.stream("GET", server.url + "/any") as response:
            async for _ in response.aiter_raw():
                break
        hit = await server.wait_disconnect()
        await server.wait_done()
    assert hit.disconnected and not hit.completed
    assert hit.chunks_sent < len(split_odd(BODY))


async def test_abort_cuts_the_body_without_its_terminating_chunk() -> None:
    async with ReplayServer(Route(chunks=[b"data: 1\n\n", b"data: 2"], abort=True)) as server:
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(server.url + "/")
        await server.wait_done()
    assert server.hits[0].chunks_sent == 2
    assert not server.hits[0].completed


async def test_per_chunk_delays_follow_the_list() -> None:
    route = Route(chunks=[b"a", b"b", b"c"], delays=[0.0, 0.05])
    assert [route.delay(i) for i in range(3)] == [0.0, 0.05, 0.0]
    async with ReplayServer(route) as server, httpx.AsyncClient() as client:
        start = anyio.current_time()
        response = await client.get(server.url + "/")
        assert anyio.current_time() - start >= 0.04
    assert response.text == "abc"
