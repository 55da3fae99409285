"""``python -m bench.redis``: a stream's trip through Redis Streams, on a real redis-server.

Starts Debian's ``redis-server`` on a free loopback port (temp dir, no persistence),
then, in one asyncio process:

* **the floor** -- redis-py alone: per stream, ``XADD`` a timestamp, ``XREAD BLOCK`` it,
  at each of ``--stream-counts`` (1, 200, 1,000) concurrent streams;
* **added latency** -- at the same stream counts and loads, a producer
  (``run(source, RedisStreamSink)``) and a reader (``run(from_redis(...))``) of the same
  key; the source stamps ``perf_counter_ns()`` into each text delta right before
  pushing it, the reader's sink subtracts it on arrival: p50/p99 over every event,
  for 1 stream (one event every ``--gap`` s) and for more (``--load-events`` each,
  one every ``--load-gap`` s), in a markdown table beside the floor;
* **aggregate events/s** -- ``--streams`` producers writing ``--events`` events each
  as fast as they can while a reader per stream tails it; events delivered to the
  readers per second of wall time, and per CPU second of the process (both ends run
  in it: events/s per core end to end), beside the redis-py floor's same burst.

``--quick`` runs tiny sizes (a smoke test). Absolute figures depend on the machine
(and on what else it runs); ``bench/README.md`` records one run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio

import streamflow
from streamflow.core.events import UniEvent
from streamflow.reactive._redis.streams import RedisLink
from streamflow.reactive.sinks import RedisStreamSink
from streamflow.reactive.sources import from_async_iterable, from_redis


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _delta(text: str) -> bytes:
    return _frame({"role": "assistant", "event_type": "delta",
                   "content_items": [{"type": "text.delta", "text": text}],
                   "usage_metadata": None, "finish_reason": None, "created_at": 1})


def _tail(text: str) -> bytes:
    done = _frame({"role": "assistant", "event_type": "delta",
                   "content_items": [{"type": "text.done", "text": text}],
                   "usage_metadata": None, "finish_reason": None, "created_at": 1})
    stop = _frame({"role": "assistant", "event_type": "stop", "content_items": [],
                   "usage_metadata": {"prompt_tokens": 1, "response_tokens": 1},
                   "finish_reason": "stop", "created_at": 1})
    return done + stop


def stamped(events: int, gap: float) -> Any:
    """A uni body source whose text deltas carry the time they were pushed (ns)."""

    async def body() -> AsyncIterator[bytes]:
        text = []
        for _ in range(events):
            if gap:
                await anyio.sleep(gap)
            piece = f"{time.perf_counter_ns()} "
            text.append(piece)
            yield _delta(piece)
        yield _tail("".join(text))

    return from_async_iterable(body)


class Arrivals:
    """A sink noting, per text delta, now minus the stamp it carries (ns)."""

    def __init__(self, out: list[int]) -> None:
        self.out = out

    def on_next(self, event: Any) -> None:
        if type(event) is UniEvent and event.content_items:
            item = event.content_items[0]
            if item.type == "text.delta":
                self.out.append(time.perf_counter_ns() - int(item.text.split()[0]))

    def on_error(self, error: Exception) -> None:
        pass

    def on_completed(self) -> None:
        pass


async def one_stream(link: RedisLink, key: str, events: int, gap: float,
                     out: list[int], offset: float = 0.0) -> None:
    """A producer and a reader of ``key``; the reader joins right after the start entry.
    The stream starts ``offset`` seconds late (streams spread over one gap, as answers
    of many users are: all at the same instant would measure connection set-up)."""
    await anyio.sleep(offset)
    url = link.url
    async with RedisStreamSink(url, key, heartbeat=5.0, link=link) as sink, \
            anyio.create_task_group() as tg:
        tg.start_soon(lambda: streamflow.run(from_redis(url, key, link=link), Arrivals(out)))
        await streamflow.run(stamped(events, gap), sink)


async def many(url: str, streams: int, events: int, gap: float,
               tag: str) -> tuple[list[int], float]:
    out: list[int] = []
    link = RedisLink(url)  # one connection pool for every producer and reader, as an app would
    await _warm(link.call, 2 * streams)
    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as tg:
        for i in range(streams):
            tg.start_soon(one_stream, link, f"bench:{tag}:{i}", events, gap, out,
                          gap * i / streams)
    many.cpu = time.process_time() - cpu  # type: ignore[attr-defined]
    await link.aclose()
    return out, time.perf_counter() - started


def _ms(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e6


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _warm(call: Any, connections: int) -> None:
    """Open ``connections`` pooled connections first (concurrent PINGs): the rows measure
    a stream's trip, not a pool growing from nothing in the first milliseconds."""
    async with anyio.create_task_group() as tg:
        for _ in range(connections):
            tg.start_soon(call, "ping")


async def raw_floor(url: str, streams: int, events: int, gap: float) -> list[int]:
    """The floor: redis-py alone, per stream ``XADD`` a stamp every ``gap`` s and
    ``XREAD BLOCK`` it in another task (one pool for all, as ``many`` shares one link)."""
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(url, decode_responses=True,
                                          max_connections=2 * streams + 10)
    out: list[int] = []
    tag = time.perf_counter_ns()
    await _warm(lambda command: getattr(client, command)(), 2 * streams)

    async def read(key: str) -> None:
        cursor, seen = "0-0", 0
        while seen < events:
            for _, pairs in await client.xread({key: cursor}, block=1000) or []:
                for entry_id, fields in pairs:
                    out.append(time.perf_counter_ns() - int(fields["t"]))
                    cursor, seen = entry_id, seen + 1

    async def write(key: str, offset: float) -> None:
        await anyio.sleep(offset)  # spread over one gap, as many() does
        for _ in range(events):
            await anyio.sleep(gap)
            await client.xadd(key, {"t": str(time.perf_counter_ns())})

    async with anyio.create_task_group() as tg:
        for i in range(streams):
            tg.start_soon(read, f"bench:raw:{tag}:{i}")
            tg.start_soon(write, f"bench:raw:{tag}:{i}", gap * i / streams)
    await client.aclose()
    return out


async def measure(url: str, counts: list[int], events: int, gap: float, load_events: int,
                  load_gap: float, burst_streams: int, freeze: bool = True) -> dict[str, Any]:
    """Added latency beside the floor at each stream count, then the burst's events/s.

    ``freeze``: after the warm-up, ``gc.freeze()`` -- what a server does once started
    (docs/performance.md, "Scaling the servers"): full collections then skip the objects of the
    imports and the pool, which with 200 live streams halves their pauses here.
    """
    await many(url, 2, 10, 0.0, "warm")  # imports, first connections
    if freeze:
        gc.collect()
        gc.freeze()
    rows: list[dict[str, Any]] = []
    print("| streams | one event per | events | redis-py floor p50 ms | floor p99 ms | "
          "streamflow p50 ms | streamflow p99 ms | p50 / floor p50 | p99 / floor p99 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for streams in counts:
        n, wait = (events, gap) if streams == 1 else (load_events, load_gap)
        floor = await raw_floor(url, streams, n, wait)
        ours, _ = await many(url, streams, n, wait, f"s{streams}")
        row = {"streams": streams, "gap_s": wait, "events": len(ours),
               "floor_events": len(floor), "floor_p50_ms": _ms(floor, 0.5),
               "floor_p99_ms": _ms(floor, 0.99), "p50_ms": _ms(ours, 0.5),
               "p99_ms": _ms(ours, 0.99)}
        rows.append(row)
        print(f"| {streams} | {wait * 1e3:g} ms | {len(ours)}/{streams * n} | "
              f"{row['floor_p50_ms']:.2f} | {row['floor_p99_ms']:.2f} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {row['p50_ms'] / max(row['floor_p50_ms'], 1e-9):.1f} | "
              f"{row['p99_ms'] / max(row['floor_p99_ms'], 1e-9):.1f} |", flush=True)
    cpu, started = time.process_time(), time.perf_counter()
    floor = await raw_floor(url, burst_streams, events, 0.0)
    floor_cpu, floor_seconds = time.process_time() - cpu, time.perf_counter() - started
    burst, seconds = await many(url, burst_streams, events, 0.0, "rate")
    cpu = many.cpu  # type: ignore[attr-defined]
    print(f"\naggregate, {burst_streams} streams:       {len(burst) / seconds:9.0f} events/s "
          f"delivered ({len(burst)} events in {seconds:.2f} s, written and read through Redis)")
    print(f"   per CPU second of this process:   {len(burst) / cpu:9.0f} events/s "
          f"(both ends in one process: events/s per core end to end)")
    print(f"   median per-event trip in that burst: {statistics.median(burst) / 1e6:.1f} ms")
    print(f"   the redis-py floor, same burst:   {len(floor) / floor_seconds:9.0f} events/s, "
          f"{len(floor) / floor_cpu:.0f} per CPU second (XADD and XREAD alone)")
    return {"latency": rows, "burst": {"streams": burst_streams, "events": len(burst),
                                       "seconds": seconds, "cpu_s": cpu,
                                       "per_s": len(burst) / seconds,
                                       "per_cpu_s": len(burst) / cpu,
                                       "floor_per_s": len(floor) / floor_seconds,
                                       "floor_per_cpu_s": len(floor) / floor_cpu}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.redis", description=__doc__)
    parser.add_argument("--stream-counts", default="1,200,1000",
                        help="concurrent streams, one latency row each (default 1,200,1000)")
    parser.add_argument("--streams", type=int, default=200, help="streams of the burst")
    parser.add_argument("--events", type=int, default=200,
                        help="events of the 1-stream row and of each burst stream")
    parser.add_argument("--gap", type=float, default=0.005,
                        help="seconds between events of the 1-stream row")
    parser.add_argument("--load-events", type=int, default=10,
                        help="events per stream of the other rows")
    parser.add_argument("--load-gap", type=float, default=0.5,
                        help="seconds between events of each stream of the other rows")
    parser.add_argument("--no-freeze", action="store_true",
                        help="skip gc.freeze() after the warm-up (a server that never calls it)")
    parser.add_argument("--json", metavar="FILE", help="write the figures here")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    counts = [int(x) for x in args.stream_counts.split(",") if x]
    if args.quick:
        counts, args.streams, args.events, args.load_gap = [1, 5], 5, 20, 0.01
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed (apt-get install -y redis-server)")
        return 2
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a connection or two per stream
    port = _port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                                   tmp, "--save", "", "--appendonly", "no"],
                                  stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            print(f"# bench.redis\n\nload average: "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} · streamflow.compiled: "
                  f"{streamflow.compiled} · gc.freeze() after the warm-up: "
                  f"{'no' if args.no_freeze else 'yes'}\n")
            figures = anyio.run(measure, f"redis://127.0.0.1:{port}/0", counts, args.events,
                                args.gap, args.load_events, args.load_gap, args.streams,
                                not args.no_freeze)
            if args.json:
                with open(args.json, "w") as out:
                    json.dump(figures, out, indent=1)
        finally:
            server.kill()
            server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
