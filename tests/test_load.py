"""Load: 1,000 concurrent streams through one process against the loopback server.

Every stream gets its own body (its number is in the text, so crossed wires would
show), served in odd-sized chunks by the real replay server and read by real httpx;
each must assemble to exactly what the sans-IO core makes of its recording, with
every event delivered, and the memory held stays bounded (resident set size).
``STREAMFLOW_LOAD_STREAMS`` sets the count (default 1,000 on asyncio; trio runs
250 of them unless the variable is set, to keep the suite fast).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import httpx
import pytest

import streamflow
from streamflow import StreamDecoder
from streamflow.core.events import item_to_dict
from streamflow.reactive.sources import from_httpx
from streamflow.servers.replay import ReplayServer, Route

STREAMS = int(os.environ.get("STREAMFLOW_LOAD_STREAMS", "1000"))
TRIO_STREAMS = STREAMS if "STREAMFLOW_LOAD_STREAMS" in os.environ else min(STREAMS, 250)


def sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


def anthropic_body(n: int) -> bytes:
    deltas = [f"Stream {n}: ", "grüße ", "aus ", "Köln — ", "你好", "!"]
    out = [sse({"type": "message_start", "message": {"id": f"msg_{n}", "model": "m",
                                                     "usage": {"input_tokens": n}}}),
           sse({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})]
    out += [sse({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": d}}) for d in deltas]
    out += [sse({"type": "content_block_stop", "index": 0}),
            sse({"type": "content_block_start", "index": 1, "content_block": {
                "type": "tool_use", "id": f"toolu_{n}", "name": "lookup", "input": {}}}),
            sse({"type": "content_block_delta", "index": 1, "delta": {
                "type": "input_json_delta", "partial_json": '{"n": '}}),
            sse({"type": "content_block_delta", "index": 1, "delta": {
                "type": "input_json_delta", "partial_json": f'{n}}}'}}),
            sse({"type": "content_block_stop", "index": 1}),
            sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                 "usage": {"output_tokens": n % 97}}),
            sse({"type": "message_stop"})]
    return b"".join(out)


def openai_body(n: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({"id": f"gen-{n}", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    parts = [f"Stream {n}: ", "grüße ", "你好", "!"]
    out = [chunk({"role": "assistant", "content": ""}), *(chunk({"content": p}) for p in parts),
           chunk({}, "stop"),
           sse({"id": f"gen-{n}", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": n, "completion_tokens": 9}})]
    return b"".join(out) + b"data: [DONE]\n\n"


def reference(body: bytes) -> tuple[list[dict[str, Any]], int]:
    """Items and event count the sans-IO core makes of a body."""
    decoder = StreamDecoder()
    events = decoder.feed(body) + decoder.close()
    return [item_to_dict(i) for i in decoder.message.items], len(events)


def rss() -> int | None:
    """Resident memory of this process in bytes (Linux), else None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


PER_CLIENT = 50  # httpcore's pool scans all its connections per request: keep pools small


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_thousand_concurrent_streams_each_assemble_correctly(anyio_backend: str) -> None:
    count = STREAMS if anyio_backend == "asyncio" else TRIO_STREAMS
    bodies = {f"/s/{n}": (anthropic_body(n) if n % 2 else openai_body(n))
              for n in range(count)}
    expected = {path: reference(body) for path, body in bodies.items()}
    routes = {path: Route.from_body(body, sizes=(61, 7, 113, 29)) for path, body in
              bodies.items()}
    results: dict[str, tuple[list[dict[str, Any]], int]] = {}
    before = rss()
    peak = before or 0
    finished = anyio.Event()

    async def sample() -> None:
        nonlocal peak
        while not finished.is_set():
            peak = max(peak, rss() or 0)
            await anyio.sleep(0.05)

    async with ReplayServer(routes) as server:
        clients = [httpx.AsyncClient(limits=httpx.Limits(max_connections=PER_CLIENT), timeout=60)
                   for _ in range(max(1, count // PER_CLIENT))]

        async def one(n: int, path: str) -> None:
            client = clients[n % len(clients)]
            events: list[Any] = []
            source = from_httpx(client, lambda: client.build_request("POST", server.url + path))
            message = await streamflow.run(source, events.append)
            results[path] = ([item_to_dict(i) for i in message.items], len(events))

        async with anyio.create_task_group() as tg:
            tg.start_soon(sample)
            async with anyio.create_task_group() as streams:
                for n, path in enumerate(bodies):
                    streams.start_soon(one, n, path)
            finished.set()
        for client in clients:
            await client.aclose()
        await server.wait_done(timeout=30)
        assert all(hit.completed for hit in server.hits)

    assert len(results) == count == len(server.hits)  # nothing lost, nothing twice
    assert results == expected
    if before is not None:  # bounded: well under 200 KiB per concurrent stream
        assert peak - before < count * 200 * 1024, (peak - before) / 2**20
