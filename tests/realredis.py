"""A real ``redis-server``, and the resume apps on it, for the tests that need them.

Import as ``from realredis import redis_url, own_redis`` (``tests/`` is on pytest's
``pythonpath``): the fixtures start Debian's ``redis-server`` on a free loopback port
with a temp dir, and skip, saying so, where it is not installed. Tests never fake
Redis. :class:`Instance` runs ``uvicorn examples.resumable_chat:app`` in its own
process; :func:`serving` a ``ResumableStreams`` app behind httpx's ASGI transport;
:class:`CuttingProxy` stands between a client and Redis to lose a reply;
:class:`HAProxy` is Debian's ``haproxy`` in front of instances, with the config of
docs/deployment.md.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from anyio.abc import SocketStream, TaskStatus
from docblocks import blocks
from parts import program, stop_process
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import streamflow
from streamflow.reactive.sources import from_bytes
from streamflow.servers.web.resume import ResumableStreams

ROOT = Path(__file__).resolve().parents[1]
DEMO_TURN = (files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()


def free_port() -> int:
    """A loopback TCP port nobody listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_pid(port: int) -> int | None:
    """The process id of the Redis answering on ``port``, or None when none answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"INFO server\r\n")
            reply = b""
            while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    line = reply.split(b"process_id:", 1)[1].split(b"\r\n", 1)[0]
    return int(line)


def ping(port: int) -> bool:
    """True when a Redis answers PING on ``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` on 127.0.0.1, files in ``tmp``; no persistence unless ``persist``."""

    def __init__(self, binary: str, tmp: Path, *, persist: bool = False) -> None:
        self.binary = binary
        self.tmp = tmp
        self.persist = persist  # an append-only file, synced at every write: survives a kill
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start on ``self.port``; on a fresh port when another process (a parallel
        pytest-xdist worker) took that one between :func:`free_port` and the bind."""
        for _attempt in range(3):
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                 str(self.tmp), "--save", "", "--appendonly", "yes" if self.persist else "no",
                 "--appendfsync", "always", "--daemonize", "no", "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while server_pid(self.port) != self.proc.pid:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            else:
                return
            self.stop()
            self.port = free_port()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)


@contextmanager
def running(tmp: Path, *, persist: bool = False) -> Iterator[RedisServer]:
    """A redis-server in ``tmp`` for the block (the test skips without one)."""
    server = RedisServer(program("redis-server"), tmp, persist=persist)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server shared by the tests that do not stop it."""
    with running(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test alone (for tests that stop or restart it)."""
    with running(tmp_path) as server:
        yield server


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> str:
    """The shared server's URL, on a database flushed for this test."""
    redis_server.flush()
    return redis_server.url



class Instance:
    """One uvicorn process serving the example app against ``redis_url``."""

    def __init__(self, redis_url: str, log: Path, *, app: str = "examples.resumable_chat:app",
                 args: tuple[str, ...] = (), **env: str) -> None:
        self.port = free_port()
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        environ = {**os.environ, "REDIS_URL": redis_url, **env}
        self.proc = subprocess.Popen(  # ``args``: more of uvicorn's (``--workers 4``)
            [sys.executable, "-m", "uvicorn", app, "--port", str(self.port),
             "--log-level", "warning", *args], cwd=ROOT, env=environ,
            stdout=subprocess.DEVNULL, stderr=self.log.open("wb"))

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"instance exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/chat/ready/stream", timeout=1).status_code == 204:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"instance on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no terminal entry, no more heartbeats."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        stop_process(self.proc)


class EventSourceClient:
    """Reads SSE like a browser's EventSource: whole events only, ``message`` events only
    (``event: replay`` frames are for fresh decoders), one decoder across reconnects."""

    def __init__(self) -> None:
        self.decoder = streamflow.StreamDecoder("uni")
        self.events = 0
        self.received: list[streamflow.UniEvent] = []  # the events, in order
        self.data: list[bytes] = []  # raw data lines, for the UI protocols
        self.last_id = ""
        self.token = ""  # the chat's resume token, from the response that started it

    async def read(self, response: httpx.Response, stop_after: int | None = None) -> None:
        pending = b""
        async for chunk in response.aiter_raw():
            pending += chunk
            whole, sep, pending = pending.rpartition(b"\n\n")
            if not sep:
                pending = whole
                continue
            events = [e + b"\n\n" for e in (whole + sep).split(b"\n\n")
                      if e.strip() and not e.startswith(b"event: replay")]  # onmessage only
            got = self.decoder.feed(b"".join(events))
            self.events += len(got)
            self.received += got
            if stop_after is not None and self.events >= stop_after:
                return  # hang up (the half-read event, if any, is dropped)

    def started(self, response: httpx.Response) -> None:
        """Keep the resume token of the response that started the chat."""
        assert response.status_code == 200
        self.token = response.headers["x-resume-token"]

    @property
    def headers(self) -> dict[str, str]:
        last = self.decoder.last_event_id
        return {"x-resume-token": self.token, **({"last-event-id": last} if last else {})}


class Collect:
    """A sink keeping every UniEvent it is given."""

    def __init__(self) -> None:
        self.events: list[streamflow.UniEvent] = []

    def on_next(self, item: Any) -> None:
        if type(item) is streamflow.UniEvent:
            self.events.append(item)

    def on_error(self, error: Exception) -> None:
        pass

    def on_completed(self) -> None:
        pass


def same(a: streamflow.Message, b: streamflow.Message) -> bool:
    """Equal messages (``created_at`` is the producer's clock)."""
    left, right = a.to_dict(), b.to_dict()
    left.pop("created_at", None)
    right.pop("created_at", None)
    return bool(left == right) and a.complete == b.complete


def chat_app(streams: ResumableStreams, source: Callable[[], Any] = lambda: from_bytes(DEMO_TURN)
             ) -> Starlette:
    """POST /chat/{id} starts an answer, GET /chat/{id}/stream resumes it (``?to=``)."""

    async def chat(request: Request) -> Response:
        return await streams.create(request, request.path_params["chat_id"], source(),
                                    target=request.query_params.get("to", "uni"))

    async def resume(request: Request) -> Response:
        return await streams.response(request, request.path_params["chat_id"],
                                      target=request.query_params.get("to", "uni"))

    return Starlette(routes=[Route("/chat/{chat_id}", chat, methods=["POST"]),
                             Route("/chat/{chat_id}/stream", resume)])


@asynccontextmanager
async def serving(streams: ResumableStreams, source: Callable[[], Any] | None = None,
                  peer: str = "127.0.0.1") -> AsyncIterator[httpx.AsyncClient]:
    """``streams`` running, its app behind an httpx client (the peer address ``peer``)."""
    app = chat_app(streams, source) if source else chat_app(streams)
    transport = httpx.ASGITransport(app=app, client=(peer, 4000))
    async with streams.running(), httpx.AsyncClient(transport=transport,
                                                    base_url="http://app") as http:
        yield http


def assert_refusal(response: httpx.Response, to: str, status: int, code: str) -> str:
    """The refusal is in the shape the protocol's client reads; returns its message."""
    assert response.status_code == status, response.text
    if to == "vercel-ui":  # the AI SDK throws new Error(await response.text())
        assert response.headers["content-type"].startswith("text/plain")
        return response.text
    body = response.json()
    if to == "ag-ui":  # HttpAgent attaches the parsed JSON as error.payload
        assert body["type"] == "RUN_ERROR" and body["code"] == code
        return str(body["message"])
    assert body["error"]["type"] == code  # streamflow's from_httpx: HTTPStatusError
    return str(body["error"]["message"])


async def live_count(streams: ResumableStreams, count: int) -> None:
    """Wait until ``count`` producers are live (a producer ends just after its last entry)."""
    with anyio.fail_after(10):
        while streams.live.total != count:
            await anyio.sleep(0.01)


class CuttingProxy:
    """A loopback TCP proxy to Redis that can drop the next reply Redis sends (and the
    connection with it): the command ran, the client never learns it did."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = 0
        self.cut_next = False
        self.cuts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        task_status.started()
        await listener.serve(self._relay)

    async def _relay(self, client: SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.target) as server, \
                anyio.create_task_group() as tg:

            async def up() -> None:
                async for data in client:
                    await server.send(data)
                tg.cancel_scope.cancel()

            async def down() -> None:
                async for data in server:
                    if self.cut_next:
                        self.cut_next, self.cuts = False, self.cuts + 1
                        break
                    await client.send(data)
                tg.cancel_scope.cancel()

            tg.start_soon(up)
            tg.start_soon(down)


def haproxy_config(port: int, backends: list[int]) -> str:
    """The ``haproxy`` block of docs/deployment.md (the config the guide gives), listening
    on ``port`` in front of the instances on ``backends`` instead of its four."""
    config, = (b.text for b in blocks("docs/deployment.md") if b.lang == "haproxy")
    lines = config.splitlines()
    servers = [i for i, line in enumerate(lines) if line.split()[:1] == ["server"]]
    binds = [i for i, line in enumerate(lines) if line.split()[:1] == ["bind"]]
    assert len(binds) == 1 and servers, "docs/deployment.md: one bind, the server lines"
    indent = lines[servers[0]][:len(lines[servers[0]]) - len(lines[servers[0]].lstrip())]
    template = lines[servers[0]].split()  # server app1 127.0.0.1:8001 check ...
    lines[binds[0]] = lines[binds[0]].replace(lines[binds[0]].split()[1], f"127.0.0.1:{port}")
    ours = [indent + " ".join(["server", f"app{n}", f"127.0.0.1:{backend}", *template[3:]])
            for n, backend in enumerate(backends, 1)]
    lines[servers[0]:servers[-1] + 1] = ours
    return "\n".join(lines) + "\n"


class HAProxy:
    """Debian's ``haproxy`` on a free loopback port in front of the instances on
    ``backends`` (their ports), with the guide's config (:func:`haproxy_config`: round
    robin, health checks, the backend's name in an ``x-instance`` response header);
    its config and log in ``tmp``. Skips the test where ``haproxy`` is not installed."""

    def __init__(self, backends: list[int], tmp: Path) -> None:
        self.binary = program("haproxy")
        self.backends = backends
        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Start in the foreground (``-db``) and wait until a request through it is
        answered (204: no chat to resume); on a fresh port when another process took this
        one meanwhile."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):
            config = self.tmp / "haproxy.cfg"
            config.write_text(haproxy_config(self.port, self.backends), encoding="utf-8")
            checked = subprocess.run([self.binary, "-c", "-q", "-f", str(config)],
                                     capture_output=True, text=True, timeout=30)
            if checked.returncode != 0:
                raise RuntimeError(f"haproxy -c: {checked.stdout}{checked.stderr}")
            with (self.tmp / "haproxy.log").open("ab") as log:
                self.proc = subprocess.Popen([self.binary, "-db", "-f", str(config)],
                                             stdout=log, stderr=log)
            deadline = time.monotonic() + 10
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    if httpx.get(f"{self.url}/chat/ready/stream", timeout=1).status_code == 204:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            self.stop()
            self.port = free_port()
        raise RuntimeError(f"haproxy did not start: {(self.tmp / 'haproxy.log').read_text()}")

    def stop(self) -> None:
        """SIGTERM (haproxy's hard stop: every connection closed at once), then wait."""
        if self.proc is not None:
            stop_process(self.proc)
        self.proc = None
