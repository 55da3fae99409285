"""The load: concurrent streaming clients on httpx (the official SDKs' transport).

``python -m bench.servers.clients JOB.json`` reads a :class:`Job` and, in that process of
its own, runs ``concurrency``
tasks on one ``httpx.AsyncClient`` (a connection each, kept alive), each posting
``streams`` requests one after another and reading the answer with ``aiter_raw``; on
every read it notes, per new stamp, ``perf_counter_ns()`` minus the stamp. Before the job it
reads one stream, says ``ready`` and waits for ``go`` on stdin (so the parent reads the
server's CPU after every client's warm-up and starts them together). It writes a
:class:`Result` as JSON to ``job.out`` (a file, so a large result never blocks a pipe).
The client's own CPU time is in the result, so a run can tell when the client, not
the server, was the limit.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from .answer import STAMP

__all__ = ["Job", "Result", "Tally", "main", "run", "settle"]


@dataclass
class Job:
    """What one client process does."""

    url: str
    body: str
    headers: dict[str, str]
    concurrency: int
    streams: int  # per task, one after another
    events: int  # per stream (what the upstream sends)
    timeout: float
    out: str = ""
    raw: bool = False  # the minimal socket client (rawclient.py) instead of httpx
    open_rate: float = 0.0  # new streams per second (0: all at once)
    warm: bool = True  # read one stream before saying ready


@dataclass
class Result:
    """What one client process saw: a latency per event received (µs), counts, its CPU."""

    latencies_us: list[int] = field(default_factory=list)
    received: int = 0
    expected: int = 0
    streams_ok: int = 0
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    cpu: float = 0.0
    wall: float = 0.0

    def failed(self, error: BaseException) -> None:
        """Note a stream that raised (the first few messages are kept)."""
        self.error_count += 1
        if len(self.errors) < 5:
            self.errors.append(f"{type(error).__name__}: {error}")


class Tally:
    """One stream's stamps: each event's latency the first time its stamp is seen."""

    def __init__(self, result: Result) -> None:
        self.result, self.seen, self.tail = result, set[int](), b""

    def feed(self, data: bytes) -> None:
        """Find the stamps in ``data`` (with the tail of the previous read, which may hold
        the start of a stamp cut by the read)."""
        now = time.perf_counter_ns()
        text = self.tail + data
        for match in STAMP.finditer(text):
            seq = int(match[2])
            if seq not in self.seen:
                self.seen.add(seq)
                self.result.latencies_us.append((now - int(match[1])) // 1000)
        self.tail = text[-40:]

    def close(self) -> int:
        """Count this stream's events into the result; return how many arrived."""
        self.result.received += len(self.seen)
        return len(self.seen)


async def _slot(client: httpx.AsyncClient, job: Job, result: Result, delay: float) -> None:
    if delay:
        await asyncio.sleep(delay)
    for _ in range(job.streams):
        tally = Tally(result)
        try:
            async with client.stream("POST", job.url, content=job.body,
                                     headers=job.headers) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: "
                                       f"{(await response.aread())[:200]!r}")
                async for chunk in response.aiter_raw():
                    tally.feed(chunk)
            if tally.close() == job.events:
                result.streams_ok += 1
        except Exception as error:  # counted and reported; the run goes on
            tally.close()
            result.failed(error)


async def settle(tasks: list[asyncio.Task[None]], timeout: float, result: Result) -> None:
    """Wait for the tasks; cancel and count as failed those still running at ``timeout``."""
    _, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    result.error_count += len(pending)
    if pending:
        result.errors.append(f"{len(pending)} stream(s) still open after {timeout} s")
    await asyncio.gather(*pending, return_exceptions=True)


async def run(job: Job) -> Result:
    """Run the job's streams; a stream still open at ``job.timeout`` counts as failed."""
    result = Result(expected=job.concurrency * job.streams * job.events)
    limits = httpx.Limits(max_connections=job.concurrency,
                          max_keepalive_connections=job.concurrency)
    started, cpu = time.perf_counter(), time.process_time()
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None), limits=limits) as client:
        rate = job.open_rate
        tasks = [asyncio.create_task(_slot(client, job, result, i / rate if rate else 0.0))
                 for i in range(job.concurrency)]
        await settle(tasks, job.timeout, result)
    result.cpu, result.wall = time.process_time() - cpu, time.perf_counter() - started
    return result


async def _warm_then_run(job: Job) -> Result:
    """One stream first (imports, first calls, here and in the server), then, when the
    parent says ``go`` (after reading the server's CPU), the job."""
    from .rawclient import run as run_raw

    run_job = run_raw if job.raw else run
    warm = Job(**{**asdict(job), "concurrency": 1, "streams": 1, "open_rate": 0.0})
    if job.warm:
        await run_job(warm)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    return await run_job(job)


def main(argv: list[str] | None = None) -> int:
    """Run the job in the file named by the first argument; write its result."""
    from .procs import raise_nofile

    raise_nofile()
    job = Job(**json.loads(Path((argv or sys.argv[1:])[0]).read_text()))
    result = asyncio.run(_warm_then_run(job))
    Path(job.out).write_text(json.dumps(asdict(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
