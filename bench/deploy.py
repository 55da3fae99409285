"""``python -m bench.deploy``: resumable answers end to end, in the deployments of
docs/deployment.md.

Starts real servers on loopback (the test suite's helpers: ``tests/realredis.py``,
``tests/realcluster.py``) in one of these setups:

* ``one`` -- one ``uvicorn examples.resumable_chat:app`` process and one ``redis-server``,
  the clients on the process itself;
* ``haproxy`` -- four such processes behind Debian's ``haproxy`` (the guide's config:
  round robin), on one ``redis-server``;
* ``cluster`` -- the same four behind ``haproxy``, on a six-node Redis Cluster (three
  primaries, three replicas; ``redis+cluster://``);
* ``workers`` -- one ``uvicorn --workers 4`` (four processes on one socket), one Redis.

Every client does what a browser that loses its connection does: ``POST /chat/{id}``
(the app replays a recording, one SSE event per ``--delay`` s), reads a random number of
its 34 events, hangs up, waits ``--away`` s, and asks again (``GET /chat/{id}/stream``,
through the same address: in ``haproxy`` and ``cluster``, the next instance in the
rotation) with ``Last-Event-ID`` and the chat's resume token, and reads the rest. At each
of ``--concurrency`` (clients at once; ``--streams`` answers per level, default twice
that) it prints one row:

* the events delivered per second of wall time (both connections, replays not counted);
* reconnect -> the resumed body's first frame, p50 / p99: the request through the
  balancer, the token check, the catch-up read from Redis and the first write (its
  ``event: replay`` frames: what the client had); and -> the first event it did not
  have, which may also wait for the model (the next event is due ``--delay`` s after
  the one it hung up at);
* answer time over its ideal (39 x ``--delay``: the recording's pace), p50 / p99: 1.0
  is an answer as fast as its model, more is the deployment falling behind;
* CPU per delivered event of the serving side (every app process, ``haproxy``, every
  ``redis-server``: ``/proc/<pid>/stat``), and the load generator's own;
* how many resumes landed on another process than their ``POST`` (the ``x-instance``
  header that the guide's ``haproxy`` config sets), and the failures (none expected).

``--freeze`` serves the app through :func:`frozen_app` (``gc.freeze()`` once started, as
docs/performance.md says); ``--json FILE`` writes the rows. Keep runs short on a shared
machine: ``python -m bench.deploy --setup haproxy --concurrency 100,200,400`` takes about
a minute.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
SSE_EVENTS = 39  # the bundled recording's SSE events: the answer takes 39 x delay
UNI_EVENTS = 34  # the UniEvents they decode to: what a client of the app receives
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- one client --------------------------------------------------------------------------

@dataclass
class Resumed:
    """What one client saw of its answer: the events of each connection, the instances that
    served them, and when."""

    chat: str
    cut: int  # events read before hanging up
    first: list[tuple[str, str]] = field(default_factory=list)  # (id, data) before the cut
    rest: list[tuple[str, str]] = field(default_factory=list)  # after the reconnect
    replayed: list[str] = field(default_factory=list)  # the ids of the `event: replay` frames
    instances: list[str] = field(default_factory=list)  # x-instance of each response
    token: str = ""
    posted: float = 0.0  # perf_counter at the POST
    reconnected: float = 0.0  # at the GET
    first_frame: float | None = None  # at the first SSE event of the GET (a replay)
    first_resumed: float | None = None  # at the first event after the GET that is new
    ended: float = 0.0
    error: str | None = None

    @property
    def last_id(self) -> str:
        return self.first[-1][0] if self.first else ""

    @property
    def moved(self) -> bool:
        """The resume was served by another process than the POST."""
        return len(self.instances) == 2 and self.instances[0] != self.instances[1]


def frames(buffer: bytearray) -> Iterator[tuple[str, str, str]]:
    """The whole SSE events at the start of ``buffer`` as ``(event, id, data)``, removed
    from it (comments, such as heartbeats, skipped)."""
    while (end := buffer.find(b"\n\n")) >= 0:
        raw = bytes(buffer[:end])
        del buffer[:end + 2]
        event, ident, data = "message", "", []
        for line in raw.decode().split("\n"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "id":
                ident = value
            elif name == "data":
                data.append(value)
        if data:
            yield event, ident, "\n".join(data)


async def resumed(http: httpx.AsyncClient, url: str, cut: int, away: float,
                  clock: Any = time.perf_counter) -> Resumed:
    """One browser that loses its connection after ``cut`` events and comes back."""
    got = Resumed(uuid.uuid4().hex, cut)
    try:
        got.posted = clock()
        async with http.stream("POST", f"{url}/chat/{got.chat}") as response:
            if response.status_code != 200:
                raise RuntimeError(f"POST: {response.status_code} {await response.aread()!r}")
            got.token = response.headers["x-resume-token"]
            got.instances.append(response.headers.get("x-instance", ""))
            buffer = bytearray()
            async for chunk in response.aiter_raw():
                buffer += chunk
                for event, ident, data in frames(buffer):
                    got.first.append((ident, data))
                    if event != "message":
                        raise RuntimeError(f"a fresh answer sent {event!r}")
                    if len(got.first) == cut:
                        break
                if len(got.first) >= cut:
                    break  # hang up: what else arrived in this chunk is lost with the connection
        await anyio.sleep(away)
        got.reconnected = clock()
        headers = {"x-resume-token": got.token, "last-event-id": got.last_id}
        async with http.stream("GET", f"{url}/chat/{got.chat}/stream",
                               headers=headers) as response:
            if response.status_code != 200:
                raise RuntimeError(f"GET: {response.status_code} {await response.aread()!r}")
            got.instances.append(response.headers.get("x-instance", ""))
            buffer = bytearray()
            async for chunk in response.aiter_raw():
                buffer += chunk
                for event, ident, data in frames(buffer):
                    if got.first_frame is None:
                        got.first_frame = clock()
                    if event == "replay":  # what the client has, for a fresh decoder
                        got.replayed.append(ident)
                        continue
                    if got.first_resumed is None:
                        got.first_resumed = clock()
                    got.rest.append((ident, data))
        got.ended = clock()
    except Exception as error:  # counted and reported: the run goes on
        got.error = f"{type(error).__name__}: {error}"
    return got


async def drive(url: str, streams: int, concurrency: int, *, away: float = 0.1,
                seed: int = 38, ramp: float = 1.0) -> list[Resumed]:
    """``streams`` clients, ``concurrency`` at a time (the first ones started over ``ramp``
    s), each cut after a random 1..33 events; a new connection for every request."""
    rng = random.Random(seed)
    cuts = [rng.randint(1, UNI_EVENTS - 1) for _ in range(streams)]
    out: list[Resumed] = []
    limiter = anyio.CapacityLimiter(concurrency)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)

    async def one(i: int, http: httpx.AsyncClient) -> None:
        if i < concurrency:
            await anyio.sleep(ramp * i / concurrency)
        async with limiter:
            out.append(await resumed(http, url, cuts[i], away))

    async with httpx.AsyncClient(timeout=60, limits=limits) as http, \
            anyio.create_task_group() as tg:
        for i in range(streams):
            tg.start_soon(one, i, http)
    return out


# --- the figures --------------------------------------------------------------------------

def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` and all their descendants (``/proc``)."""
    total = 0.0
    seen: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
            for task in Path(f"/proc/{pid}/task").iterdir():
                children = (task / "children").read_text().split()
                todo.extend(int(c) for c in children)
        except (OSError, ValueError):
            continue  # gone meanwhile
    return total


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(results: list[Resumed], seconds: float, server_cpu: float, client_cpu: float,
            delay: float, away: float) -> dict[str, Any]:
    """One row of figures from one level's clients."""
    ok = [r for r in results if r.error is None]
    delivered = sum(len(r.first) + len(r.rest) for r in ok)
    complete = [r for r in ok if len(r.first) + len(r.rest) == UNI_EVENTS]
    frame_ms = [(r.first_frame - r.reconnected) * 1e3 for r in ok if r.first_frame is not None]
    resume_ms = [(r.first_resumed - r.reconnected) * 1e3 for r in ok
                 if r.first_resumed is not None]
    ideal = SSE_EVENTS * delay
    slowdown = [(r.ended - r.posted - away) / ideal for r in ok]
    return {"streams": len(results), "complete": len(complete),
            "failed": len(results) - len(ok),
            "errors": sorted({r.error for r in results if r.error})[:5],
            "seconds": seconds, "events": delivered, "events_per_s": delivered / seconds,
            "frame_p50_ms": quantile(frame_ms, 0.5), "frame_p99_ms": quantile(frame_ms, 0.99),
            "resume_p50_ms": quantile(resume_ms, 0.5), "resume_p99_ms": quantile(resume_ms, 0.99),
            "slowdown_p50": quantile(slowdown, 0.5), "slowdown_p99": quantile(slowdown, 0.99),
            "server_cpu_s": server_cpu, "client_cpu_s": client_cpu,
            "server_us_per_event": server_cpu / max(delivered, 1) * 1e6,
            "client_us_per_event": client_cpu / max(delivered, 1) * 1e6,
            "moved": sum(r.moved for r in ok), "resumed": len(ok)}


HEADER = ("| clients at once | answers | events/s | reconnect → first frame p50 / p99 ms | "
          "→ first new event p50 / p99 ms | answer time / ideal p50 / p99 | server CPU µs per "
          "event | client CPU µs per event | resumed elsewhere | failed |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def row(concurrency: int, s: dict[str, Any]) -> str:
    return (f"| {concurrency} | {s['complete']}/{s['streams']} | {s['events_per_s']:,.0f} | "
            f"{s['frame_p50_ms']:.1f} / {s['frame_p99_ms']:.1f} | "
            f"{s['resume_p50_ms']:.1f} / {s['resume_p99_ms']:.1f} | "
            f"{s['slowdown_p50']:.2f} / {s['slowdown_p99']:.2f} | "
            f"{s['server_us_per_event']:.0f} | {s['client_us_per_event']:.0f} | "
            f"{s['moved']}/{s['resumed']} | {s['failed']} |")


# --- the deployments ----------------------------------------------------------------------

def frozen_app() -> Any:
    """``examples.resumable_chat``'s app, with ``gc.freeze()`` once it has started
    (``uvicorn --factory bench.deploy:frozen_app``)."""
    from examples.resumable_chat import app, streams

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with streams.running():
            gc.collect()
            gc.freeze()
            yield

    app.router.lifespan_context = lifespan
    return app


@dataclass
class Deployment:
    url: str  # where the clients connect
    redis_url: str  # the Redis (or cluster) of the instances
    roles: dict[str, list[int]]  # "app", "haproxy", "redis": their processes (and children)

    @property
    def pids(self) -> list[int]:
        return [pid for pids in self.roles.values() for pid in pids]

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each role's processes."""
        return {role: cpu_seconds(pids) for role, pids in self.roles.items()}


@contextmanager
def deployed(setup: str, tmp: Path, delay: float, freeze: bool) -> Iterator[Deployment]:
    """The servers of ``setup`` (see the module doc), stopped on exit."""
    sys.path.insert(0, str(ROOT / "tests"))  # the suite's real-server helpers
    from parts import program
    from realcluster import Cluster
    from realredis import HAProxy, Instance, RedisServer

    env = {"STREAMFLOW_DELAY": str(delay), "STREAMFLOW_MAX_LIVE": "100000",
           "STREAMFLOW_MAX_LIVE_PER_CLIENT": "100000"}  # every client here is 127.0.0.1
    app = {"app": "bench.deploy:frozen_app", "args": ("--factory",)} if freeze else {}
    with ExitStack() as stack:
        if setup == "cluster":
            cluster = Cluster(tmp / "cluster")
            stack.callback(cluster.stop)
            cluster.start()
            redis_url = cluster.url
            redis_pids = [n.proc.pid for n in cluster.nodes if n.proc is not None]
        else:
            server = RedisServer(program("redis-server"), tmp)
            stack.callback(server.stop)
            server.start()
            redis_url = server.url
            redis_pids = [server.proc.pid] if server.proc is not None else []
        count = 1 if setup in ("one", "workers") else 4
        if setup == "workers":
            app = {**app, "args": (*app.get("args", ()), "--workers", "4")}
        instances = [Instance(redis_url, tmp / f"app{n}.log", **app, **env) for n in range(count)]
        for instance in instances:
            stack.callback(instance.stop)
        for instance in instances:
            instance.wait_ready()
        roles = {"app": [i.proc.pid for i in instances], "redis": redis_pids}
        url = instances[0].url
        if setup in ("haproxy", "cluster"):
            proxy = HAProxy([i.port for i in instances], tmp / "haproxy")
            stack.callback(proxy.stop)
            proxy.start()
            assert proxy.pid is not None
            roles["haproxy"] = [proxy.pid]
            url = proxy.url
        yield Deployment(url, redis_url, roles)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.deploy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setup", choices=("one", "haproxy", "cluster", "workers"),
                        default="haproxy")
    parser.add_argument("--concurrency", default="200",
                        help="clients at once, one row each (comma-separated)")
    parser.add_argument("--streams", type=int, help="answers per row (default 2 x clients)")
    parser.add_argument("--delay", type=float, default=0.05,
                        help="seconds per SSE event of the answer (default 0.05: 2 s answers)")
    parser.add_argument("--away", type=float, default=0.1,
                        help="seconds between hanging up and asking again")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() in the app")
    parser.add_argument("--json", metavar="FILE", help="write the rows here")
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.concurrency.split(",") if x]
    loop = {"use_uvloop": True} if find_spec("uvloop") else {}  # the client's loop, as uvicorn's
    rows = []
    rows_by_role: list[tuple[int, dict[str, float], int]] = []
    with tempfile.TemporaryDirectory() as tmp, \
            deployed(args.setup, Path(tmp), args.delay, args.freeze) as deployment:
        anyio.run(drive, deployment.url, 20, 10, backend_options=loop)  # warm
        print(f"{args.setup}: {args.delay * 1e3:g} ms per SSE event "
              f"(an answer is {SSE_EVENTS * args.delay:.2f} s), load {os.getloadavg()[0]:.1f}")
        print(HEADER)
        for concurrency in levels:
            streams = args.streams or 2 * concurrency
            server0, client0 = deployment.cpu(), time.process_time()
            started = time.perf_counter()
            results = anyio.run(lambda c=concurrency, n=streams: drive(
                deployment.url, n, c, away=args.away), backend_options=loop)
            seconds = time.perf_counter() - started
            server = {k: v - server0[k] for k, v in deployment.cpu().items()}
            figures = summary(results, seconds, sum(server.values()),
                              time.process_time() - client0, args.delay, args.away)
            figures["cpu_s_by_role"] = server
            rows.append({"setup": args.setup, "concurrency": concurrency,
                         "delay": args.delay, **figures})
            print(row(concurrency, figures), flush=True)
            rows_by_role.append((concurrency, server, figures["events"]))
            for error in figures["errors"]:
                print(f"  error: {error}")
    print("\nserver CPU µs per event, by role: " + "; ".join(
        f"{c} clients: " + ", ".join(f"{k} {v / max(n, 1) * 1e6:.0f}" for k, v in cpu.items())
        for c, cpu, n in rows_by_role))
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if all(r["failed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
