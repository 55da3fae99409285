"""``--open-streams N``: N slow streams held open through one server at once.

The target: 10,000 concurrent streams through the gateway, a slow upstream (one event
per second each), none lost, RSS per stream at most 32 KB beyond the baseline. The
upstream answers ``--open-events`` events ``--open-gap`` seconds apart; the clients are
the minimal socket client (``rawclient.py``: httpx's per-connection weight would make
the client, not the server, the subject), opening ``--open-rate`` streams per second
over ``--open-client-procs`` processes. While they run, the upstream's ``/_stats`` says
how many streams are mid-answer; the server's RSS is read while all N are, and its
idle RSS before any opened. Every event the upstream wrote is counted against every
event the clients received.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import httpx

from .answer import Shape, request_body, request_headers
from .levels import Level, Path, run_level
from .procs import rss_bytes

__all__ = ["OpenStreams", "open_streams", "open_streams_table"]


@dataclass
class OpenStreams:
    """What holding N streams open through a server did."""

    path: str
    streams: int
    sent: int
    level: Level
    idle_rss: int
    rss_all_open: int
    most_open: int

    @property
    def rss_per_stream(self) -> float:
        """The server's RSS with every stream open, beyond its idle RSS, per stream."""
        return (self.rss_all_open - self.idle_rss) / self.streams

    def summary(self) -> dict[str, object]:
        """The result as JSON."""
        return {"path": self.path, "streams": self.streams, "sent": self.sent,
                "received": self.level.received, "lost": self.sent - self.level.received,
                "streams_ok": self.level.streams_ok, "errors": self.level.errors,
                "error_samples": self.level.error_samples, "idle_rss": self.idle_rss,
                "rss_all_open": self.rss_all_open, "most_open": self.most_open,
                "rss_per_stream": self.rss_per_stream, "p50_us": self.level.p50_us,
                "p99_us": self.level.p99_us, "server_cpu_s": self.level.server_cpu_s,
                "client_cores": self.level.client_cores}


def open_streams(path: Path, streams: int, shape: Shape, *, rate: float, procs: int
                 ) -> OpenStreams:
    """Hold ``streams`` streams open on ``path`` and count what arrived."""
    stats = httpx.Client(base_url=path.upstream.url, timeout=10.0)
    stats.post("/_config", content=Shape(events=2, gap=0.001).to_json())
    httpx.post(path.url, content=request_body(path.route), headers=request_headers(),
               timeout=30.0).raise_for_status()  # first calls in the server
    stats.post("/_config", content=shape.to_json())
    sent_before = stats.get("/_stats").json()["sent"]
    idle = rss_bytes(path.pid)
    watched = {"open": 0, "rss": idle, "most": 0}
    ticks = [0]

    def watch() -> None:
        ticks[0] += 1
        if ticks[0] % 5:
            return  # every 250 ms
        now_open = int(stats.get("/_stats").json()["open"])
        watched["most"] = max(watched["most"], now_open)
        if now_open >= streams:
            watched["rss"] = max(watched["rss"], rss_bytes(path.pid))

    opening = streams / rate if rate else 0.0
    answer = math.ceil(shape.events / shape.per_chunk) * shape.gap
    level = run_level(path, streams, shape, min_events=1, client_procs=procs,
                      timeout=opening + answer + 120.0, raw=True, open_rate=rate, warm=False,
                      watch=watch)
    sent = int(stats.get("/_stats").json()["sent"]) - sent_before
    stats.close()
    return OpenStreams(path.name, streams, sent, level, idle, int(watched["rss"]),
                       int(watched["most"]))


def open_streams_table(results: list[OpenStreams]) -> str:
    """One row per server held open."""
    head = ["path", "streams", "most open at once", "events sent", "events received", "lost",
            "streams failed", "idle RSS MB", "RSS all open MB", "RSS/stream KB",
            "p50 ms", "p99 ms"]
    rows = [[r.path, r.streams, r.most_open, r.sent, r.level.received,
             r.sent - r.level.received, r.streams - r.level.streams_ok, f"{r.idle_rss / 2**20:.1f}",
             f"{r.rss_all_open / 2**20:.1f}" if r.most_open >= r.streams else "never all open",
             f"{r.rss_per_stream / 1024:.1f}" if r.most_open >= r.streams else "",
             f"{r.level.p50_us / 1e3:.1f}", f"{r.level.p99_us / 1e3:.1f}"] for r in results]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)

