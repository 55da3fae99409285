"""Two app instances (separate uvicorn processes) and one real Redis: streams survive reconnects.

The app is ``examples/resumable_chat.py``; the clients here are plain httpx, acting
like a browser's EventSource (on reconnect, an event cut in half is dropped and the
last event id is sent as ``Last-Event-ID``). Runs on asyncio: the servers are
uvicorn processes, so the client's event loop does not change what is tested.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
import uuid
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from realredis import EventSourceClient, Instance, same

import streamflow
from streamflow.core.errors import StreamTimeoutError

pytestmark = pytest.mark.anyio

BODY = (files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()
DIRECT = streamflow.assemble(BODY)
STREAMS = int(os.environ.get("STREAMFLOW_TEST_STREAMS", "200"))


@pytest.fixture()
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def pair(redis_server: Any, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Instance, Instance]]:
    """Two instances of the app sharing the session's Redis (their logs in a temp dir)."""
    env = {"STREAMFLOW_DELAY": "0.005", "STREAMFLOW_HEARTBEAT": "5",  # a loaded CI box: 15 s
           "STREAMFLOW_MAX_LIVE_PER_CLIENT": "1000"}  # every test client is 127.0.0.1
    logs = tmp_path_factory.mktemp("instances")
    one = Instance(redis_server.url, logs / "one.log", **env)
    two = Instance(redis_server.url, logs / "two.log", **env)
    try:
        one.wait_ready()
        two.wait_ready()
        yield one, two
    finally:
        one.stop()
        two.stop()


async def resumed_client(http: httpx.AsyncClient, first: Instance, second: Instance,
                         cut: int) -> EventSourceClient:
    chat = uuid.uuid4().hex
    client = EventSourceClient()
    async with http.stream("POST", f"{first.url}/chat/{chat}") as response:
        client.started(response)
        await client.read(response, stop_after=cut)
    async with http.stream("GET", f"{second.url}/chat/{chat}/stream",
                           headers=client.headers) as response:
        assert response.status_code == 200
        await client.read(response)
    client.decoder.close()
    return client


@pytest.mark.slow
async def test_200_streams_each_cut_and_resumed_on_the_other_instance(
        pair: tuple[Instance, Instance]) -> None:
    rng = random.Random(16)
    total = len(streamflow.StreamDecoder().feed(BODY))
    cuts = [rng.randint(0, total - 1) for _ in range(STREAMS)]
    clients: list[EventSourceClient | None] = [None] * STREAMS
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=0)

    async def one(i: int, http: httpx.AsyncClient) -> None:
        first, second = pair if i % 2 else pair[::-1]
        clients[i] = await resumed_client(http, first, second, cuts[i])

    started = time.monotonic()
    with anyio.fail_after(120):
        async with httpx.AsyncClient(timeout=30, limits=limits) as http, \
                anyio.create_task_group() as tg:
            for i in range(STREAMS):
                tg.start_soon(one, i, http)
    elapsed = time.monotonic() - started
    for client in clients:
        assert client is not None
        assert same(client.decoder.message, DIRECT)  # nothing lost, nothing twice
        assert client.events == total
    print(f"200 resumed streams in {elapsed:.1f}s")


async def test_ui_protocol_bytes_resume_exactly_on_the_other_instance(
        pair: tuple[Instance, Instance]) -> None:
    for to in ("vercel-ui", "ag-ui"):
        for cut in (1, 5, 17, 30):
            chat = uuid.uuid4().hex
            client = EventSourceClient()
            async with httpx.AsyncClient(timeout=30) as http:
                async with http.stream("POST", f"{pair[0].url}/chat/{chat}?to={to}") as r:
                    client.started(r)
                    await _read_raw(client, r, stop_after=cut)
                last = client.last_id
                token = {"x-resume-token": client.token}
                async with http.stream("GET", f"{pair[1].url}/chat/{chat}/stream?to={to}",
                                       headers={"last-event-id": last, **token}) as r:
                    await _read_raw(client, r)
                async with http.stream("GET", f"{pair[1].url}/chat/{chat}/stream?to={to}",
                                       headers=token) as r:
                    whole = EventSourceClient()
                    await _read_raw(whole, r)
            assert client.data == whole.data, (to, cut)
            assert client.data[-1] in (b"data: [DONE]", ) or b"RUN_FINISHED" in client.data[-1]


async def _read_raw(client: EventSourceClient, response: httpx.Response,
                    stop_after: int | None = None) -> None:
    """SSE events (no decoding: UI protocols), comments dropped; ``client.last_id`` tracks ids."""
    pending = b""
    async for chunk in response.aiter_raw():
        pending += chunk
        *events, pending = pending.split(b"\n\n")
        for event in events:
            lines = event.split(b"\n")
            ids = [line[4:].strip() for line in lines if line.startswith(b"id:")]
            data = [line for line in lines if line.startswith(b"data:")]
            if ids:
                client.last_id = ids[-1].decode()
            if data:
                client.data.append(b"\n".join(data))
            if stop_after is not None and len(client.data) >= stop_after:
                return


async def test_204_when_there_is_nothing_to_resume(pair: tuple[Instance, Instance]) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{pair[1].url}/chat/{uuid.uuid4().hex}/stream")
    assert response.status_code == 204 and response.content == b""


async def test_a_killed_producer_gives_a_typed_error_in_the_heartbeat_window(
        redis_server: Any, pair: tuple[Instance, Instance], tmp_path: Any) -> None:
    doomed = Instance(redis_server.url, tmp_path / "doomed.log", STREAMFLOW_DELAY="0.3",
                      STREAMFLOW_HEARTBEAT="0.2")
    try:
        doomed.wait_ready()
        chat = uuid.uuid4().hex
        client = EventSourceClient()
        async with httpx.AsyncClient(timeout=30) as http:
            async with http.stream("POST", f"{doomed.url}/chat/{chat}") as response:
                client.started(response)
                await client.read(response, stop_after=3)
            doomed.kill()  # SIGKILL mid-stream: no terminal entry, no more heartbeats
            killed = time.monotonic()
            with pytest.raises(StreamTimeoutError) as info:
                async with http.stream("GET", f"{pair[0].url}/chat/{chat}/stream",
                                       headers=client.headers) as response:
                    await client.read(response)
                client.decoder.close()
            waited = time.monotonic() - killed
            partial = info.value.partial
            assert partial is not None and partial.items and not partial.complete
            assert waited < 0.6 + 2.0  # three 0.2 s heartbeats, plus the request
            fresh = EventSourceClient()  # a new request (with the chat's token) starts afresh
            async with http.stream("POST", f"{pair[1].url}/chat/{chat}",
                                   headers={"x-resume-token": client.token}) as response:
                fresh.started(response)
                await fresh.read(response)
            fresh.decoder.close()
            assert same(fresh.decoder.message, DIRECT)
    finally:
        doomed.stop()


def reconnect(node_dir: Any, api: str, chat: str, token: str = "",
              last_event_id: str = "") -> dict[str, Any]:
    """The real AI SDK's ``DefaultChatTransport.reconnectToStream`` against ``api``, the
    resume token sent the way docs/SECURITY.md shows (``prepareReconnectToStreamRequest``)."""
    script = Path(__file__).resolve().parent / "node" / "reconnect.mjs"
    done = subprocess.run(["node", str(script), str(node_dir), api, chat, token, last_event_id],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


async def test_the_ai_sdk_resumes_a_chat_on_the_other_instance(
        pair: tuple[Instance, Instance], node_clients: Any) -> None:
    """AI SDK v5 resume convention: GET {api}/{chatId}/stream on another instance; 204 -> null."""
    chat = uuid.uuid4().hex
    client = EventSourceClient()
    async with httpx.AsyncClient(timeout=30) as http, \
            http.stream("POST", f"{pair[0].url}/ui/chat/{chat}") as response:
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        client.started(response)
        await _read_raw(client, response, stop_after=6)  # the page reloads here
    api = f"{pair[1].url}/ui/chat"
    token = client.token
    whole = await anyio.to_thread.run_sync(reconnect, node_clients, api, chat, token)
    assert whole["text"] == DIRECT.text  # replayed from the start, folded by readUIMessageStream
    types = [c["type"] for c in whole["chunks"]]
    assert types[0] == "start" and types[-1] == "finish"
    rest = await anyio.to_thread.run_sync(reconnect, node_clients, api, chat, token,
                                          client.last_id)
    assert [c["type"] for c in rest["chunks"]] == types[len(client.data):]  # exactly after it
    none = await anyio.to_thread.run_sync(reconnect, node_clients, api, uuid.uuid4().hex)
    assert none == {"none": True}
    refused = await anyio.to_thread.run_sync(reconnect, node_clients, api, chat)  # no token
    assert refused == {"error": "this chat needs its resume token"}  # the Error useChat shows
