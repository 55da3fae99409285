"""``python -m bench.idle``: what live answers cost a process while they wait for their model.

A resumable answer that has sent nothing for a while still costs its process: its
producer writes a heartbeat entry every ``heartbeat`` seconds, and the process looks at
the stop keys of all its answers every ``STOP_POLL`` seconds (one round trip: see
``servers/web/_resume_stop.py``). This starts a ``redis-server`` on loopback (the test
suite's helper, ``tests/realredis.py``), runs :class:`ResumableStreams` in this process
with ``--answers`` answers whose upstream sends its first bytes and then waits, and
prints per row the process's CPU (a fraction of one core, over ``--seconds``), its open
file descriptors and the Redis connections it holds (``INFO clients``, this process is
Redis's only client).

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

from streamflow.reactive.sources import from_async_iterable
from streamflow.servers.web.resume import ResumableStreams

ROOT = Path(__file__).resolve().parents[1]
FIRST = (files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()[:200]


def waiting() -> Any:
    """An upstream that sends its first bytes, then waits (a slow model)."""
    async def body() -> Any:
        yield FIRST
        await anyio.sleep(3600)
    return from_async_iterable(body)


async def measure(url: str, answers: int, heartbeat: float, seconds: float) -> dict[str, Any]:
    """One row: ``answers`` waiting answers, measured over ``seconds`` once all started."""
    streams = ResumableStreams(url, heartbeat=heartbeat, max_live=None)
    async with streams.running():
        for i in range(answers):
            await streams.start(f"idle-{i}", waiting())
        await anyio.sleep(max(2.0, heartbeat))  # every producer in its waiting rhythm
        cpu, wall = time.process_time(), time.monotonic()
        await anyio.sleep(seconds)
        share = (time.process_time() - cpu) / (time.monotonic() - wall)
        clients = (await streams.link.call("info", "clients"))["connected_clients"]
        fds = len(os.listdir("/proc/self/fd"))
        await streams.link.call("flushall")
        assert streams._group is not None
        streams._group.cancel_scope.cancel()
    return {"answers": answers, "heartbeat": heartbeat, "cpu": share,
            "fds": fds, "redis_connections": int(clients)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", default="500,1000", help="comma-separated row sizes")
    parser.add_argument("--heartbeat", default="2", help="comma-separated heartbeats (s)")
    parser.add_argument("--seconds", type=float, default=6.0, help="measured per row")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))  # the suite's real-server helpers
    from parts import program
    from realredis import RedisServer

    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(program("redis-server"), Path(tmp))
        server.start()
        try:
            print("| answers | heartbeat s | CPU (one core) | fds | Redis connections |")
            print("|---|---|---|---|---|")
            for heartbeat in (float(h) for h in args.heartbeat.split(",")):
                for answers in (int(n) for n in args.answers.split(",")):
                    r = anyio.run(measure, server.url, answers, heartbeat, args.seconds)
                    print(f"| {r['answers']:,} | {r['heartbeat']:g} | {r['cpu']:.0%} | "
                          f"{r['fds']:,} | {r['redis_connections']:,} |", flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
