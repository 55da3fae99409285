"""The live llama.cpp server the tests/live/ suite runs against (skipped without one).

``STREAMFLOW_LIVE_URL`` is a ``llama-server`` started with ``--jinja`` (its model's own
chat template); ``STREAMFLOW_LIVE_TOOLS_URL`` (optional) one started with a tool-use
template (``--chat-template-file models/templates/NousResearch-Hermes-2-Pro-Llama-3-8B-
tool_use.jinja``). See docs in tests/live/record.py and ../shared/real-server.md. Only
loopback servers are used. The recordings' tests (test_recorded.py) need neither.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from parts import stop_process

LOOPBACK = ("127.0.0.1", "localhost", "::1")
UPSTREAM_BASE = {"anthropic": "", "openai-chat": "/v1", "openai-responses": "/v1"}
"""What the upstream's base URL ends with for each dialect (OpenAI's base includes /v1)."""


def _server(variable: str, what: str) -> str:
    url = os.environ.get(variable, "").rstrip("/")
    if not url:
        pytest.skip(f"{variable} is not set: point it at a live llama.cpp llama-server "
                    f"({what}) to run the live suite")
    if urlsplit(url).hostname not in LOOPBACK:
        pytest.skip(f"{variable}={url} is not a loopback address; the live suite only "
                    "talks to 127.0.0.1")
    try:
        health = httpx.get(url + "/health", timeout=5)
    except httpx.HTTPError as exc:
        pytest.skip(f"{variable}={url} does not answer: {exc}")
    if health.status_code != 200:
        pytest.skip(f"{variable}={url} is not ready (/health: {health.status_code})")
    return url


@pytest.fixture(scope="session")
def live_url() -> str:
    """The llama-server with its model's own chat template."""
    return _server("STREAMFLOW_LIVE_URL", "started with --jinja")


@pytest.fixture(scope="session")
def tools_url() -> str:
    """The llama-server started with a tool-use chat template."""
    return _server("STREAMFLOW_LIVE_TOOLS_URL", "started with --jinja and a tool-use "
                   "--chat-template-file")


GatewayFactory = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def live_gateway() -> GatewayFactory:
    """``async with live_gateway(server_url, dialect) as url``: the gateway under uvicorn."""
    pytest.importorskip("uvicorn", reason="the gateway extra (uvicorn) is not installed")
    from gateway.conftest import serve  # tests/gateway/conftest.py: real uvicorn, loopback

    from streamflow.servers.gateway import create_app

    @asynccontextmanager
    async def start(server: str, dialect: str, **options: Any) -> AsyncIterator[str]:
        app = create_app(server + UPSTREAM_BASE[dialect], dialect, **options)
        async with serve(app) as url:
            yield url
    return start


# -- llama-server processes a test starts itself (tests/live/test_failover_live.py) ------------

LLAMA_ENV = ("STREAMFLOW_LLAMA_SERVER", "STREAMFLOW_LLAMA_MODEL")
"""The ``llama-server`` binary and the GGUF model the tests that start servers use."""


class LlamaServer:
    """One ``llama-server`` process on a loopback port, started by a test (which may kill,
    stop or continue it: ``signal``); ``url`` is its base URL (no ``/v1``)."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log

    def signal(self, number: int) -> None:
        """Send ``number`` (SIGKILL, SIGSTOP, SIGCONT) to the server, if it still runs."""
        if self.process.poll() is None:
            os.kill(self.process.pid, number)

    def tail(self, lines: int = 15) -> str:
        """The end of its log (for a failure message)."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def end(self) -> None:
        """Stop the process (continued first if it was stopped) and reap it."""
        if self.process.poll() is None:
            self.signal(signal.SIGCONT)
        stop_process(self.process)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _llama_paths() -> tuple[Path, Path]:
    paths = []
    for variable in LLAMA_ENV:
        value = os.environ.get(variable, "")
        if not value:
            pytest.skip(f"{variable} is not set: the failover live test starts its own "
                        "llama.cpp servers (STREAMFLOW_LLAMA_SERVER: the llama-server binary, "
                        "STREAMFLOW_LLAMA_MODEL: a GGUF chat model; ../shared/real-server.md)")
        path = Path(value)
        if not path.is_file():
            pytest.skip(f"{variable}={value} is not a file")
        paths.append(path)
    return paths[0], paths[1]


def _wait_healthy(server: LlamaServer, deadline: float) -> None:
    while True:
        code = server.process.poll()
        if code is not None:
            pytest.fail(f"llama-server on port {server.port} exited with {code} before it "
                        f"was ready (-4: SIGILL, a build for another CPU?):\n{server.tail()}")
        try:
            if httpx.get(server.url + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"llama-server on port {server.port} not ready after 120 s:\n"
                        f"{server.tail()}")
        time.sleep(0.1)


@pytest.fixture
def llama_servers(tmp_path: Path) -> Iterator[Callable[[int], list[LlamaServer]]]:
    """``llama_servers(n)``: ``n`` fresh llama-server processes (``STREAMFLOW_LLAMA_SERVER``
    with ``STREAMFLOW_LLAMA_MODEL``, ``--jinja``, one thread each), started together on free
    loopback ports and healthy; every one is ended after the test, stopped or not.
    Skipped when either variable is unset or names no file (CI has neither)."""
    binary, model = _llama_paths()
    started: list[LlamaServer] = []

    def start(count: int) -> list[LlamaServer]:
        env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(
            p for p in (str(binary.parent), os.environ.get("LD_LIBRARY_PATH", "")) if p)}
        servers = []
        for _ in range(count):
            port = _free_port()
            log = tmp_path / f"llama-server-{port}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                     "-c", "4096", "--parallel", "2", "--jinja", "-t", "1"],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
            server = LlamaServer(process, port, log)
            started.append(server)
            servers.append(server)
        deadline = time.monotonic() + 120
        for server in servers:
            _wait_healthy(server, deadline)
        return servers

    try:
        yield start
    finally:
        for server in started:
            server.end()
