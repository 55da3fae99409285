"""One measurement: a path at one concurrency, with the server's CPU and memory around it.

A :class:`Path` is a server in front of the upstream (or the upstream itself, for the
direct path) and a :class:`~bench.servers.answer.Route`. :func:`run_level` writes a
:class:`~bench.servers.clients.Job` per client process, starts the processes, samples
the server's RSS every 50 ms while they run, and reads the server's and the upstream's
CPU before (once every client has read its warm-up stream) and after. The result
merges every client process's latencies and counts.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path as FilePath

from .answer import Route, Shape, request_body, request_headers
from .clients import Job, Result
from .procs import ROOT, Server, cpu_seconds, python_module, rss_bytes

__all__ = ["Level", "Path", "percentile", "run_level"]


@dataclass
class Path:
    """What a client talks to: ``server`` (None: the upstream, directly) on ``route``."""

    name: str
    route: Route
    server: Server | None
    upstream: Server

    @property
    def url(self) -> str:
        """Where the client posts."""
        return (self.server or self.upstream).url + self.route.path

    @property
    def pid(self) -> int:
        """The process whose CPU and memory the measurement reads."""
        return (self.server or self.upstream).pid


@dataclass
class Level:
    """What one path did at one concurrency (times in µs, memory in bytes)."""

    path: str
    concurrency: int
    offered_per_s: float
    expected: int
    received: int
    streams_ok: int
    errors: int
    error_samples: list[str]
    p50_us: float
    p99_us: float
    wall_s: float
    server_cpu_s: float
    upstream_cpu_s: float
    client_cpu_s: float
    client_cores: float  # the busiest client process's CPU seconds per wall second
    idle_rss: int
    peak_rss: int
    added_p50_us: float | None = None
    added_p99_us: float | None = None
    latencies_us: list[int] = field(default_factory=list, repr=False)

    @property
    def lost(self) -> int:
        """Events the upstream sent that no client received."""
        return self.expected - self.received

    @property
    def cpu_per_event_us(self) -> float:
        """Server CPU per event delivered."""
        return self.server_cpu_s * 1e6 / max(1, self.received)

    @property
    def events_per_s(self) -> float:
        """Events delivered per second of the clients' wall time."""
        return self.received / self.wall_s if self.wall_s else 0.0

    @property
    def rss_per_stream(self) -> float:
        """The server's memory with the streams open beyond its idle memory, per stream."""
        return (self.peak_rss - self.idle_rss) / self.concurrency

    def summary(self) -> dict[str, object]:
        """The level as JSON (without the raw latencies)."""
        out = asdict(self)
        del out["latencies_us"]
        out.update(lost=self.lost, cpu_per_event_us=self.cpu_per_event_us,
                   events_per_s=self.events_per_s, rss_per_stream=self.rss_per_stream)
        return out


def percentile(values: list[int], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` (nearest rank); NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def run_level(path: Path, concurrency: int, shape: Shape, *, min_events: int,
              client_procs: int, timeout: float, raw: bool = False,
              open_rate: float = 0.0, warm: bool = True,
              watch: Callable[[], None] | None = None) -> Level:
    """Run ``concurrency`` streams on ``path`` (each slot repeating its stream until the
    level has ``min_events``), split over ``client_procs`` processes; ``watch`` is called
    every 50 ms while they run."""
    streams = max(1, math.ceil(min_events / (concurrency * shape.events)))
    procs = max(1, min(client_procs, concurrency))
    shares = [concurrency // procs + (i < concurrency % procs) for i in range(procs)]
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for i, share in enumerate(shares):
            job = Job(url=path.url, body=request_body(path.route).decode(),
                      headers=request_headers(), concurrency=share, streams=streams,
                      events=shape.events, timeout=timeout, out=f"{tmp}/result{i}.json",
                      raw=raw, open_rate=open_rate / procs, warm=warm)
            FilePath(f"{tmp}/job{i}.json").write_text(json.dumps(asdict(job)))
            jobs.append(job)
        clients = [subprocess.Popen(python_module("bench.servers.clients", f"{tmp}/job{i}.json"),
                                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                   for i in range(procs)]
        for client in clients:
            assert client.stdout is not None
            if client.stdout.readline().strip() != b"ready":
                raise RuntimeError(f"a client of {path.name} failed before its job")
        idle = rss_bytes(path.pid)
        cpu, upstream_cpu = cpu_seconds(path.pid), cpu_seconds(path.upstream.pid)
        for client in clients:
            assert client.stdin is not None
            client.stdin.write(b"go\n")
            client.stdin.close()
        peak = idle
        while any(client.poll() is None for client in clients):
            peak = max(peak, rss_bytes(path.pid))
            if watch is not None:
                watch()
            time.sleep(0.05)
        cpu, upstream_cpu = (cpu_seconds(path.pid) - cpu,
                             cpu_seconds(path.upstream.pid) - upstream_cpu)
        results = [Result(**json.loads(FilePath(job.out).read_text())) for job in jobs]
    latencies = [value for result in results for value in result.latencies_us]
    return Level(
        path=path.name, concurrency=concurrency,
        offered_per_s=concurrency * shape.per_chunk / shape.gap if shape.gap else math.inf,
        expected=sum(r.expected for r in results), received=sum(r.received for r in results),
        streams_ok=sum(r.streams_ok for r in results),
        errors=sum(r.error_count for r in results),
        error_samples=[e for r in results for e in r.errors][:5],
        p50_us=percentile(latencies, 0.5), p99_us=percentile(latencies, 0.99),
        wall_s=max(r.wall for r in results), server_cpu_s=cpu, upstream_cpu_s=upstream_cpu,
        client_cpu_s=sum(r.cpu for r in results),
        client_cores=max(r.cpu / r.wall if r.wall else 0.0 for r in results),
        idle_rss=idle, peak_rss=peak, latencies_us=latencies)
