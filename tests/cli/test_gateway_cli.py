"""``streamflow gateway``: options, usage errors, and a real server process end to end."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from importlib import resources

import anyio
import httpx
import pytest

from streamflow.cli.main import main
from streamflow.servers.replay import ReplayServer, Route

pytest.importorskip("uvicorn", reason="the gateway extra is not installed")


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--listen", "--upstream", "--upstream-dialect", "--api-key-env"):
        assert option in out


def test_usage_errors_exit_2(monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gateway", "--upstream", "http://x", "--upstream-dialect", "nope"]) == 2
    assert main(["gateway", "--listen", "nowhere", "--upstream", "http://x",
                 "--upstream-dialect", "anthropic"]) == 2
    monkeypatch.delenv("SF_TEST_MISSING_KEY", raising=False)
    assert main(["gateway", "--upstream", "http://x", "--upstream-dialect", "anthropic",
                 "--api-key-env", "SF_TEST_MISSING_KEY"]) == 2
    assert "SF_TEST_MISSING_KEY" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _ask(client: httpx.AsyncClient, port: int, key: str) -> httpx.Response:
    """A streaming chat request to the gateway on ``port``, retried until it is up (or,
    with workers, until a connection to a killed one is replaced), 30 s at most."""
    with anyio.fail_after(30):
        while True:
            try:
                return await client.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    json={"model": "m", "stream": True,
                          "messages": [{"role": "user", "content": "hi"}]},
                    headers={"authorization": f"Bearer {key}"})
            except (httpx.ConnectError, httpx.RemoteProtocolError):
                await anyio.sleep(0.1)


@pytest.mark.anyio
async def test_the_command_serves_translated_streams_with_the_key_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = (resources.files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()
    port = _free_port()
    monkeypatch.setenv("SF_TEST_UPSTREAM_KEY", "sk-upstream")
    async with ReplayServer({"/v1/messages": Route.from_body(body)}) as server:
        process = await anyio.open_process(
            [sys.executable, "-m", "streamflow", "gateway", "--listen", f"127.0.0.1:{port}",
             "--upstream", server.url, "--upstream-dialect", "anthropic",
             "--api-key-env", "SF_TEST_UPSTREAM_KEY", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            async with httpx.AsyncClient() as client:
                response = await _ask(client, port, "client-key")
        finally:
            process.terminate()
            await process.wait()
    assert response.status_code == 200
    assert response.text.rstrip().endswith("data: [DONE]")
    assert '"get_weather"' in response.text
    assert server.hits[0].headers["x-api-key"] == "sk-upstream"


@pytest.mark.parametrize("flag", [[], ["--drop-unsupported"]])
def test_drop_unsupported_reaches_the_app(flag: list[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    served: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    assert main(["gateway", "--upstream", "http://127.0.0.1:9", "--upstream-dialect",
                 "anthropic", *flag]) == 0
    assert served[0].state.gateway.drop_unsupported is bool(flag)  # type: ignore[attr-defined]


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return {int(child) for child in listing.read().split()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
@pytest.mark.anyio
async def test_workers_share_one_socket_a_dead_one_is_replaced_and_sigterm_stops_all(
        ) -> None:
    body = (resources.files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()
    port = _free_port()
    async with ReplayServer({"/v1/messages": Route.from_body(body)}) as server:
        process = await anyio.open_process(
            [sys.executable, "-m", "streamflow", "gateway", "--workers", "2",
             "--listen", f"127.0.0.1:{port}", "--upstream", server.url,
             "--upstream-dialect", "anthropic", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        async def answers(client: httpx.AsyncClient, count: int) -> list[int]:
            statuses = []
            for _ in range(count):
                response = await _ask(client, port, "k")
                statuses.append(response.status_code)
                assert response.text.rstrip().endswith("data: [DONE]")
            return statuses

        async def children(count: int) -> set[int]:
            with anyio.fail_after(30):
                while len(found := _children(process.pid)) != count:
                    await anyio.sleep(0.1)
            return found

        try:
            async with httpx.AsyncClient() as client:
                assert await answers(client, 10) == [200] * 10
            first = await children(2)
            victim = min(first)
            os.kill(victim, signal.SIGKILL)
            with anyio.fail_after(30):
                while victim in (now := await children(2)):
                    await anyio.sleep(0.1)
            assert len(now - first) == 1  # one new worker in the dead one's place
            async with httpx.AsyncClient() as client:  # new connections, either worker
                assert await answers(client, 10) == [200] * 10
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):
                code = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert code == 0
    for pid in now:  # every worker is gone (and reaped) with the parent
        assert not os.path.exists(f"/proc/{pid}")


def test_workers_that_die_as_they_start_stop_the_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    from streamflow.cli._workers import GIVE_UP, supervise
    code = supervise(["gateway", "--no-such-option"], "127.0.0.1", _free_port(), 2, None)
    assert code == 1
    err = capsys.readouterr().err
    assert f"workers die as they start ({GIVE_UP} in a row)" in err


def test_workers_must_be_a_positive_number() -> None:
    assert main(["gateway", "--workers", "0", "--upstream", "http://x",
                 "--upstream-dialect", "anthropic"]) == 2


@pytest.mark.parametrize("level", [[], ["--log-level", "warning"]])
@pytest.mark.anyio
async def test_each_dropped_option_is_one_info_line_shown_by_default(level: list[str]) -> None:
    body = (resources.files("streamflow.wire.recordings") / "anthropic-turn1.sse").read_bytes()
    port = _free_port()
    async with ReplayServer({"/v1/messages": Route.from_body(body)}) as server:
        process = await anyio.open_process(
            [sys.executable, "-m", "streamflow", "gateway", "--listen", f"127.0.0.1:{port}",
             "--upstream", server.url, "--upstream-dialect", "anthropic", "--drop-unsupported",
             *level], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            async with httpx.AsyncClient() as client:
                await _ask(client, port, "k")  # up
                response = await client.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    json={"model": "m", "stream": True, "seed": 7,
                          "presence_penalty": 0.5,
                          "evil\nINFO:     forged": 1,
                          "messages": [{"role": "user", "content": "hi"}]},
                    headers={"authorization": "Bearer k"})
        finally:
            process.terminate()
            await process.wait()
        assert process.stderr is not None
        err = ""
        while chunk := await _more(process.stderr):
            err += chunk
    assert response.status_code == 200 and response.text.rstrip().endswith("data: [DONE]")
    dropped = [line for line in err.splitlines() if "dropped" in line]
    if level:
        assert dropped == []
        return
    assert sorted(dropped) == [f"INFO:     dropped {name}: the anthropic upstream cannot carry it"
                               for name in ("'evil\\nINFO:     forged'", "'presence_penalty'",
                                            "'seed'")]
    assert not any(line.startswith("INFO:     forged") for line in err.splitlines())


async def _more(stream: anyio.abc.ByteReceiveStream) -> str:
    try:
        return (await stream.receive(1 << 20)).decode()
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return ""
