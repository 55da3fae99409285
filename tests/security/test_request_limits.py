"""Request limits: body size refused while it is read, JSON depth, counts, head size, slowloris."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import time
from typing import Any

import anyio
import pytest
from gateway_parts import ROUTES, VALID, enveloped, in_process
from hostile import HOLD, Counting, HostileUpstream, serve

pytest.importorskip("starlette", reason="the gateway extra is not installed")
from streamflow.servers.gateway import create_app
from streamflow.servers.gateway.limits import GatewayLimits
from streamflow.servers.gateway.server import ServerLimits, server_config

pytestmark = pytest.mark.anyio
MIB = 1024 * 1024


def nested(body: dict[str, Any], depth: int) -> str:
    """``body`` with a ``metadata`` array nested ``depth`` deep (written as text)."""
    return json.dumps(body)[:-1] + ', "metadata": ' + "[" * depth + '"x"' + "]" * depth + "}"


def answer_of(sock: socket.socket, within: float = 5.0) -> bytes:
    """Everything the server sends on ``sock`` until it closes or goes quiet."""
    sock.settimeout(within)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and data.rstrip().endswith(b"}"):
                break
    except (TimeoutError, OSError):
        pass
    return data


@pytest.mark.parametrize("dialect", list(ROUTES))
async def test_limits_are_4xx_in_the_routes_envelope_and_nothing_goes_upstream(
        dialect: str) -> None:
    limits = GatewayLimits(max_body_bytes=MIB, max_messages=5, max_items=50)
    client, seen = in_process(request_limits=limits)
    many = [{"role": "user", "content": "hi"}] * 6
    turns = "input" if dialect == "openai-responses" else "messages"
    cases = {
        "too large": (json.dumps({**VALID[dialect], "pad": "x" * (2 * MIB)}), 413),
        "too deep": (nested(VALID[dialect], 1000), 400),
        "too deep for Python": (nested(VALID[dialect], 100_000), 400),
        "too many messages": (json.dumps({**VALID[dialect], turns: many}), 413),
        "too long an array": (json.dumps({**VALID[dialect], "stop": ["s"] * 51}), 413),
        "lone surrogate": (json.dumps(VALID[dialect])[:-1] + ', "user": "\\ud800"}', 400),
        "not JSON": ("{", 400),
    }
    async with client:
        for name, (body, status) in cases.items():
            response = await client.post(ROUTES[dialect], content=body,
                                         headers={"content-type": "application/json"})
            assert response.status_code == status, (name, response.text)
            enveloped(dialect, response.json())
    assert seen == []


async def test_the_default_limits_are_the_documented_ones() -> None:
    limits = GatewayLimits()
    assert (limits.max_body_bytes, limits.max_json_depth) == (32 * MIB, 64)
    docs = (pytest.importorskip("pathlib").Path(__file__).parents[2] / "docs" / "SECURITY.md")
    text = docs.read_text()
    for value in ("32 MiB", "| 64 |", "10 s", "30 s"):
        assert value in text, value


def _raw_post(url: str, path: str, head_extra: str = "") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(f"POST {path} HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\n"
                 f"transfer-encoding: chunked\r\n{head_extra}\r\n".encode())
    return sock


def _readable(sock: socket.socket, wait: float = 0.0) -> bool:
    import select
    return bool(select.select([sock], [], [], wait)[0])


async def test_a_body_over_the_limit_is_refused_while_it_is_still_arriving() -> None:
    with HostileUpstream(HOLD) as upstream:
        app = Counting(create_app(upstream.url, "anthropic",
                                  request_limits=GatewayLimits(max_body_bytes=MIB)))
        async with serve(app) as url:
            sock = _raw_post(url, "/v1/messages")
            chunk = b"x" * 65536
            sent = 0
            with sock:
                def push() -> int:
                    total = 0
                    while total < 256 * MIB and not _readable(sock):
                        try:
                            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        except OSError:
                            break
                        total += len(chunk)
                    _readable(sock, 5)
                    return total
                sent = await anyio.to_thread.run_sync(push)
                answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 64 * MIB, f"{sent} bytes were taken before the 413"
    assert upstream.arrived == []


async def test_a_declared_length_over_the_limit_is_refused_before_the_body() -> None:
    app = create_app("http://127.0.0.1:9", "anthropic",
                     request_limits=GatewayLimits(max_body_bytes=1000))
    async with serve(app) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: gw\r\n"
                         b"content-length: 100000000\r\n\r\n")
            answer = answer_of(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"type":"error"' in answer


async def test_a_body_that_does_not_arrive_in_time_is_a_408() -> None:
    app = create_app("http://127.0.0.1:9", "openai-chat",
                     request_limits=GatewayLimits(body_timeout=0.5))
    async with serve(app) as url:
        sock = _raw_post(url, "/v1/chat/completions")
        with sock:
            sock.sendall(b"1\r\n{\r\n")
            answer = await anyio.to_thread.run_sync(answer_of, sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"error"' in answer


PARSERS = pytest.mark.parametrize("http", ["h11", pytest.param(
    "httptools", marks=pytest.mark.skipif(importlib.util.find_spec("httptools") is None,
                                          reason="httptools is not installed"))])
"""uvicorn's two HTTP parsers: the gateway's limits hold under each."""


@PARSERS
async def test_a_request_head_sent_byte_by_byte_is_closed_after_the_header_timeout(
        http: str) -> None:
    app = create_app("http://127.0.0.1:9", "anthropic")
    config = server_config(ServerLimits(header_timeout=0.5), http)
    async with serve(app, **config) as url:
        host, port = url.removeprefix("http://").split(":")

        def slowloris() -> float:
            with socket.create_connection((host, int(port))) as sock:
                start = time.monotonic()
                for byte in b"POST /v1/messages HTTP/1.1\r\nhost: gw\r\nx-slow: " + b"a" * 200:
                    try:
                        sock.sendall(bytes([byte]))
                        if _readable(sock, 0.05) and not sock.recv(1):
                            return time.monotonic() - start
                    except OSError:
                        return time.monotonic() - start
                return float("inf")
        held = await anyio.to_thread.run_sync(slowloris)
    assert held < 3.0, "the slow connection was never closed"


@PARSERS
async def test_a_normal_request_still_passes_the_server_limits(http: str) -> None:
    client_ok = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    import httpx
    with HostileUpstream([(b"HTTP/1.1 429 X\r\ncontent-type: application/json\r\n"
                           b"content-length: 2\r\n\r\n{}", 0.0)]) as upstream:
        app = create_app(upstream.url, "anthropic")
        async with serve(app, **server_config(ServerLimits(header_timeout=0.5), http)) as url, \
                httpx.AsyncClient() as client:
            response = await client.post(url + "/v1/messages", json=client_ok)
            sock = _raw_post(url, "/v1/messages", "x-big: " + "a" * (128 * 1024) + "\r\n")
            with sock:
                huge = await anyio.to_thread.run_sync(answer_of, sock)
    assert response.status_code == 429
    # the head is over uvicorn's h11_max_incomplete_event_size: refused, never answered by the app
    assert huge == b"" or huge.startswith(b"HTTP/1.1 400"), huge[:200]
    assert len(upstream.arrived) == 1


@PARSERS
async def test_an_endless_header_is_refused_once_over_the_head_limit(http: str) -> None:
    """A header that never ends, sent in pieces: refused near the cap, not held in memory."""
    app = create_app("http://127.0.0.1:9", "anthropic")
    config = server_config(ServerLimits(header_timeout=30, max_header_bytes=8 * 1024), http)
    async with serve(app, **config) as url:
        host, port = url.removeprefix("http://").split(":")

        def endless() -> tuple[int, bytes]:
            with socket.create_connection((host, int(port))) as sock:
                sock.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: gw\r\nx-endless: ")
                sent = 0
                while sent < 4 * MIB:
                    try:
                        sock.sendall(b"a" * 1024)
                    except OSError:
                        break
                    sent += 1024
                    if _readable(sock, 0.01):
                        break
                return sent, answer_of(sock)
        sent, answer = await anyio.to_thread.run_sync(endless)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert sent < 1 * MIB, f"{sent} bytes of one header were taken before the refusal"


@pytest.mark.parametrize("http", ["h2", "auto-ish"])
def test_an_unknown_parser_name_is_refused(http: str) -> None:
    with pytest.raises(ValueError, match="h11"):
        server_config(ServerLimits(), http)


class _Socketless:
    """The transport face uvicorn's protocols read at ``connection_made`` (no socket)."""

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 8000) if name in ("peername", "sockname") else None

    def is_closing(self) -> bool:
        return False

    def set_write_buffer_limits(self, **_: Any) -> None:
        pass

    def close(self) -> None:
        pass


@PARSERS
def test_the_head_limits_cost_a_connection_no_more_than_uvicorns_own_protocol(
        http: str) -> None:
    """An open connection carries an instance dict the size of plain uvicorn's: the
    limits' state must not push it past the keys CPython shares between instances
    (that made every connection 1.3 KB bigger). uvicorn runs on asyncio only."""
    asyncio.run(_connection_dict_sizes(http))


async def _connection_dict_sizes(http: str) -> None:
    import sys

    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    ours = server_config(ServerLimits(), http)["http"]
    theirs = next(base for base in ours.__mro__ if base.__module__.startswith("uvicorn."))
    assert theirs is H11Protocol or http == "httptools"
    config = Config(create_app("http://127.0.0.1:9", "anthropic"))
    config.load()
    sizes = {}
    for cls in (theirs, ours):
        protocol = cls(config=config, server_state=ServerState(), app_state={})
        protocol.connection_made(_Socketless())
        sizes[cls] = sys.getsizeof(vars(protocol))
        if cls is ours:
            assert protocol._header_timer is not None  # the limits are armed all the same
            protocol._disarm_header_timer()
    # a shared dict's size varies by a few slots with the class's history (~300 B);
    # one of its own is about five times that
    assert sizes[ours] < 2 * sizes[theirs], sizes
