"""``python -m bench.idle``: what live answers cost a process while they wait for their model.

A resumable answer that has sent nothing for a while still costs its process: its
producer writes a heartbeat entry every ``heartbeat`` seconds, and the process looks at
the stop keys of all its answers every ``STOP_POLL`` seconds (one round trip: see
``servers/web/_resume_stop.py``). This starts a ``redis-server`` on loopback (the test
suite's helper, ``tests/realredis.py``), runs :class:`ResumableStreams` in this process
with ``--answers`` answers whose upstream sends its first bytes and then waits, and
prints per row the process's CPU (a fraction of one core, over ``--seconds``), its open
file descriptors and the Redis connections it holds (``INFO clients``: this process is
Redis's only client). ``--chain``: answers of a registered failover chain, whose
producers hold a lease (an answer another instance can take over).

``python -m bench.idle --answers 500,1000 --heartbeat 2,10`` takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio

from streamflow import Endpoint, Failover
from streamflow.core.requests import ChatRequest
from streamflow.reactive._redis.link import RedisLink
from streamflow.reactive.sources import from_async_iterable
from streamflow.servers.web.resume import ResumableStreams
from streamflow.wire.dialects.request_base import HTTPRequest

ROOT = Path(__file__).resolve().parents[1]
FIRST = (files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()[:200]


def waiting() -> Any:
    """An upstream that sends its first bytes, then waits (a slow model)."""
    async def body() -> Any:
        yield FIRST
        await anyio.sleep(3600)
    return from_async_iterable(body)


def a_chain() -> Failover:
    """A failover chain of one endpoint answering with :func:`waiting` (never sent)."""
    request = HTTPRequest("http://bench.invalid/v1/messages", {}, {})
    return Failover([Endpoint("anthropic", lambda chat: request, name="slow")],
                    send=lambda sent: waiting())


async def measure(url: str, answers: int, heartbeat: float, seconds: float,
                  chained: bool = False) -> dict[str, Any]:
    """One row: ``answers`` waiting answers, measured over ``seconds`` once all started;
    ``chained``: each from a registered chain (so its producer holds a lease)."""
    chain = a_chain()
    streams = ResumableStreams(url, heartbeat=heartbeat, max_live=None,
                               chains={"slow": chain} if chained else None)
    async with streams.running():
        for i in range(answers):
            source = chain.source(ChatRequest()) if chained else waiting()
            await streams.start(f"idle-{i}", source)
        await anyio.sleep(max(2.0, heartbeat))  # every producer in its waiting rhythm
        cpu, wall = time.process_time(), time.monotonic()
        await anyio.sleep(seconds)
        share = (time.process_time() - cpu) / (time.monotonic() - wall)
        clients = (await streams.link.call("info", "clients"))["connected_clients"]
        fds = len(os.listdir("/proc/self/fd"))
    link = RedisLink(url)  # the answers were handed over as the app stopped: drop them
    await link.call("flushall")
    await link.aclose()
    return {"answers": answers, "heartbeat": heartbeat, "chained": chained, "cpu": share,
            "fds": fds, "redis_connections": int(clients)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", default="500,1000", help="comma-separated row sizes")
    parser.add_argument("--heartbeat", default="2", help="comma-separated heartbeats (s)")
    parser.add_argument("--seconds", type=float, default=6.0, help="measured per row")
    parser.add_argument("--chain", action="store_true",
                        help="answers of a registered failover chain (leased, as taken over)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))  # the suite's real-server helpers
    from parts import program
    from realredis import RedisServer

    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(program("redis-server"), Path(tmp))
        server.start()
        try:
            print("| answers | heartbeat s | leased | CPU (one core) | fds | Redis connections |")
            print("|---|---|---|---|---|---|")
            for heartbeat in (float(h) for h in args.heartbeat.split(",")):
                for answers in (int(n) for n in args.answers.split(",")):
                    r = anyio.run(measure, server.url, answers, heartbeat, args.seconds,
                                  args.chain)
                    print(f"| {r['answers']:,} | {r['heartbeat']:g} | "
                          f"{'yes' if r['chained'] else 'no'} | {r['cpu']:.0%} | "
                          f"{r['fds']:,} | {r['redis_connections']:,} |", flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
