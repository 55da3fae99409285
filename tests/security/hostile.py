"""Test support: a hostile loopback upstream, and any ASGI app under real uvicorn.

:class:`HostileUpstream` is a plain-socket HTTP server (a thread per connection)
that answers every request with a script of ``(bytes, seconds to wait after)``
steps, then closes the connection (an empty script holds it open); it records
when each request arrived and when its client (the gateway) closed the
connection, so a test can assert the upstream was released. :func:`serve` (``async
with``) and :func:`serve_sync` (``with``) run an app -- the gateway, a web app -- under
real uvicorn in a thread of its own, on a random loopback port.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio

Step = tuple[bytes, float]

HOLD: list[Step] = []
"""Send nothing: the upstream's headers never come."""


def sse_head(status: int = 200, kind: str = "text/event-stream") -> bytes:
    return (f"HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\n"
            "connection: close\r\n\r\n").encode()


def chat_chunk(text: str) -> bytes:
    return (b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":'
            b'[{"index":0,"delta":{"content":"' + text.encode() + b'"}}]}\n\n')


def drip(head: bytes, piece: bytes, every: float = 0.1, count: int = 600) -> list[Step]:
    """``head`` then ``piece`` every ``every`` seconds, ``count`` times."""
    return [(head, 0.0)] + [(piece, every)] * count


class HostileUpstream:
    """A loopback upstream answering each request with ``script`` (see the module doc)."""

    def __init__(self, script: list[Step] | Callable[[bytes], list[Step]]) -> None:
        self.script = script
        self.arrived: list[float] = []
        self.closed: list[float] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> HostileUpstream:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = self._read_request(conn)
            if head is None:
                return
            self.arrived.append(time.monotonic())
            script = self.script(head) if callable(self.script) else self.script
            for data, wait in script:
                try:
                    conn.sendall(data)
                except OSError:
                    break
                if self._gone(conn, wait):
                    break
            else:
                if not script:  # HOLD: the headers never come
                    self._gone(conn, 60.0)
            self.closed.append(time.monotonic())

    def _gone(self, conn: socket.socket, wait: float) -> bool:
        """Wait up to ``wait`` s; true when the peer closed the connection meanwhile."""
        end = time.monotonic() + wait
        while not self._stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            readable, _, _ = select.select([conn], [], [], min(left, 0.05))
            if readable:
                try:
                    if not conn.recv(65536):
                        return True
                except OSError:
                    return True
        return True

    @staticmethod
    def _read_request(conn: socket.socket) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        return head + b"\r\n\r\n" + body

    async def wait_arrived(self, count: int = 1, within: float = 10.0) -> None:
        with anyio.fail_after(within):
            while len(self.arrived) < count:
                await anyio.sleep(0.01)

    async def wait_closed(self, count: int = 1, within: float = 10.0) -> float:
        """The monotonic time the ``count``-th upstream connection closed."""
        with anyio.fail_after(within):
            while len(self.closed) < count:
                await anyio.sleep(0.01)
        return self.closed[count - 1]


def _start(app: Any, config: dict[str, Any]) -> tuple[Any, threading.Thread]:
    """uvicorn serving ``app`` on a random loopback port, in a thread with its own loop."""
    import uvicorn

    options: dict[str, Any] = {"http": "h11", **config}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="on", loop="asyncio", **options))
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    return server, thread


def _url(server: Any, thread: threading.Thread, deadline: float) -> str | None:
    """The base URL once uvicorn started (None: not yet; raises when it never will)."""
    if server.started:
        return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    if not thread.is_alive() or time.monotonic() > deadline:
        raise RuntimeError("uvicorn did not start")
    return None


@asynccontextmanager
async def serve(app: Any, **config: Any) -> AsyncIterator[str]:
    """Run ``app`` under real uvicorn (own loop, in a thread); yield its base URL.

    The test's event loop (asyncio or trio) stays free while uvicorn starts and stops,
    for an upstream or a client running on it. ``config`` goes to ``uvicorn.Config``.
    """
    server, thread = _start(app, config)
    deadline = time.monotonic() + 10
    while (url := _url(server, thread, deadline)) is None:
        await anyio.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        await anyio.to_thread.run_sync(thread.join, 10)


@contextmanager
def serve_sync(app: Any, **config: Any) -> Iterator[str]:
    """:func:`serve` for a ``with`` block: waits for uvicorn by blocking the caller."""
    server, thread = _start(app, config)
    deadline = time.monotonic() + 10
    while (url := _url(server, thread, deadline)) is None:
        time.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


class Counting:
    """An ASGI wrapper counting the HTTP requests that reach the app (retries included)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests += 1
        await self.app(scope, receive, send)
