"""What ``replicas=1`` (WAIT after each batch) costs on a real Redis Cluster on loopback: the
round trip of one batch as the sink sends it, with and without WAIT, and a whole stream.

Marked slow (a measurement, not a check): ``python -m pytest
tests/redis/test_cluster_wait_cost.py -s`` prints the table docs/resume.md quotes.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import pytest
from realcluster import cluster_url, redis_cluster

import streamflow
from streamflow.reactive._redis.link import RedisLink
from streamflow.reactive.sinks import RedisStreamSink
from streamflow.reactive.sources import from_iterable

__all__ = ["cluster_url", "redis_cluster"]

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROUNDS = 400
WAYS = ("pipeline", "node", "wait")  # redis-py's cluster pipeline; one connection; + WAIT 1
DATA = ('{"role":"assistant","event_type":"delta","content_items":[{"type":"text.delta",'
        '"text":"token "}]}')


def batch(key: str, first: int, size: int) -> list[tuple[Any, ...]]:
    """``size`` XADDs and an EXPIRE, as the sink writes a batch."""
    commands: list[tuple[Any, ...]] = [
        ("XADD", key, "MAXLEN", "=", 100_000, f"1-{first + n}", "k", "event", "d", DATA)
        for n in range(size)]
    return [*commands, ("EXPIRE", key, 3600)]


def anthropic_deltas(count: int) -> list[bytes]:
    """An Anthropic answer of ``count`` text deltas, one SSE event per chunk."""

    def sse(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    return [sse("message_start", {"type": "message_start", "message": {
                "id": "msg_cost", "type": "message", "role": "assistant", "model": "m",
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            sse("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}}),
            *[sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": "token "}})
              for _ in range(count)],
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": count}}),
            sse("message_stop", {"type": "message_stop"})]


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:.2f} / {p99 * 1000:.2f}"


async def test_the_cost_of_wait_per_batch(cluster_url: str, anyio_backend: str) -> None:
    link = RedisLink(cluster_url)
    rows = []
    try:
        for size in (1, 16, 128):
            times: dict[str, list[float]] = {way: [] for way in WAYS}
            for way in [*WAYS, *WAYS]:  # interleaved: the same conditions for each
                key = f"cost:{{{size}}}:{way}"
                await link.call("delete", key)
                for round_ in range(ROUNDS // 2):
                    commands = batch(key, 1 + round_ * size, size)
                    started = time.perf_counter()
                    if way == "wait":
                        replies = await link.on_node(key, *commands, wait=(1, 1000))
                        assert replies[-1] == 1  # the replica had the batch
                    elif way == "node":
                        await link.on_node(key, *commands)
                    else:
                        await link.pipeline(*[("execute_command", c, {}) for c in commands],
                                            transaction=False)
                    times[way].append(time.perf_counter() - started)
                await link.call("delete", key)
            added = statistics.median(times["wait"]) - statistics.median(times["node"])
            rows.append(f"| {anyio_backend} | {size} | {quantiles(times['pipeline'])} | "
                        f"{quantiles(times['node'])} | {quantiles(times['wait'])} | "
                        f"{added * 1000:.2f} |")
    finally:
        await link.aclose()
    whole: dict[int, list[float]] = {0: [], 1: []}
    chunks = anthropic_deltas(2000)
    for n, replicas in enumerate((0, 1) * 4):  # the first two warm up
        started = time.perf_counter()
        async with RedisStreamSink(cluster_url, f"whole:{{{n}}}", replicas=replicas) as sink:
            await streamflow.run(from_iterable(chunks), sink)
        if n >= 2:
            whole[replicas].append(time.perf_counter() - started)
        assert sink.unreplicated == 0
    print("\n| backend | entries per batch | cluster pipeline p50 / p99 ms | one connection "
          "p50 / p99 ms | + WAIT 1 p50 / p99 ms | WAIT adds (p50) ms |\n|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"| {anyio_backend} | 2,000 events as fast as they come, replicas=0 / 1 | "
          f"{statistics.median(whole[0]) * 1000:.0f} ms | | "
          f"{statistics.median(whole[1]) * 1000:.0f} ms | |")
