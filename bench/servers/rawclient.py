"""A minimal HTTP/1.1 streaming client on asyncio's protocols, for thousands of open streams.

httpx keeps a pool, a task and several objects per connection; holding 10,000 streams
open in one process with it costs more CPU and memory than the server under test. This
client is the least that still reads HTTP correctly: one ``asyncio.Protocol`` per
connection writes the request, checks the status line, undoes chunked transfer coding
and hands the body to the same :class:`~bench.servers.clients.Tally` the httpx client
uses; the stream ends at the last chunk (or at ``Content-Length``, or when the server
closes). One request per connection.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from .clients import Job, Result, Tally, settle

__all__ = ["StreamProtocol", "run"]


class StreamProtocol(asyncio.Protocol):
    """One request's response, its body fed to a :class:`Tally`."""

    def __init__(self, request: bytes, tally: Tally, done: asyncio.Future[None]) -> None:
        self.request, self.tally, self.done = request, tally, done
        self.buffer = b""
        self.head_done = self.chunked = False
        self.left = -1  # bytes left in the current chunk (or body); -1: no length
        self.state = "size"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.head_done:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if not sep:
                return
            status = head.split(b" ", 2)[1]
            if status != b"200":
                self._finish(RuntimeError(f"HTTP {status.decode()}: {rest[:200]!r}"))
                return
            lowered = head.lower()
            self.chunked = b"transfer-encoding: chunked" in lowered
            for line in lowered.split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    self.left = int(line.split(b":")[1])
            self.head_done, self.buffer = True, rest
        if self.chunked:
            self._dechunk()
        else:
            self.tally.feed(self.buffer)
            if self.left >= 0:
                self.left -= len(self.buffer)
                if self.left <= 0:
                    self._finish(None)
            self.buffer = b""

    def _dechunk(self) -> None:
        """Feed the chunks' data on; states: a size line, ``left`` bytes of data, a CRLF."""
        while self.buffer:
            if self.state == "size":
                line, sep, rest = self.buffer.partition(b"\r\n")
                if not sep:
                    return
                self.left, self.buffer = int(line.split(b";")[0], 16), rest
                if self.left == 0:
                    self._finish(None)
                    return
                self.state = "data"
            elif self.state == "data":
                piece = self.buffer[:self.left]
                self.tally.feed(piece)
                self.left -= len(piece)
                self.buffer = self.buffer[len(piece):]
                if self.left == 0:
                    self.state = "crlf"
            else:
                if len(self.buffer) < 2:
                    return
                self.buffer, self.state = self.buffer[2:], "size"

    def _finish(self, error: Exception | None) -> None:
        if not self.done.done():
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            if self.head_done and not self.chunked and self.left < 0:
                self.done.set_result(None)  # a body delimited by the connection's close
            else:
                self.done.set_exception(exc or ConnectionError("closed mid-answer"))


def _request(job: Job) -> tuple[str, int, bytes]:
    url = urlsplit(job.url)
    headers = {**job.headers, "host": url.netloc, "content-length": str(len(job.body)),
               "accept": "text/event-stream", "connection": "close"}
    head = f"POST {url.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return url.hostname or "127.0.0.1", url.port or 80, (head + "\r\n").encode() + job.body.encode()


async def _stream(host: str, port: int, request: bytes, result: Result, events: int) -> None:
    loop = asyncio.get_running_loop()
    tally = Tally(result)
    done: asyncio.Future[None] = loop.create_future()
    try:
        await loop.create_connection(lambda: StreamProtocol(request, tally, done), host, port)
        await done
        if tally.close() == events:
            result.streams_ok += 1
    except Exception as error:  # counted and reported; the run goes on
        if not done.done():
            done.cancel()
        tally.close()
        result.failed(error)


async def run(job: Job) -> Result:
    """Open ``job.concurrency`` streams (at ``job.open_rate`` per second), read them to the end."""
    result = Result(expected=job.concurrency * job.streams * job.events)
    host, port, request = _request(job)
    started, cpu = time.perf_counter(), time.process_time()

    async def slot(delay: float) -> None:
        await asyncio.sleep(delay)
        for _ in range(job.streams):
            await _stream(host, port, request, result, job.events)

    rate = job.open_rate
    tasks = [asyncio.create_task(slot(i / rate if rate else 0.0))
             for i in range(job.concurrency)]
    await settle(tasks, job.timeout, result)
    result.cpu, result.wall = time.process_time() - cpu, time.perf_counter() - started
    return result
