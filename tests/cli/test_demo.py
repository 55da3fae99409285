"""``streamflow demo`` and ``streamflow replay`` as a user runs them: piped, in a terminal,
interrupted; plus the rules that pick the bundled recording or a live provider."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from terminal import run_in_pty

from streamflow.demo import recording_names
from streamflow.demo.plan import choose

ANSWER = "bring a light jacket"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def clean_env() -> dict[str, str]:
    """The environment of a user with no API key (the demo must not touch the network)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["COLUMNS"] = "120"
    return env


def streamflow(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamflow", *args], capture_output=True,
                          text=True, env={**clean_env(), **env}, timeout=60)


def in_terminal(args: list[str], until: bytes | None = None,
                *, columns: int = 120) -> tuple[int, str]:
    """Run ``streamflow ARGS`` in a pseudo-terminal; Ctrl-C typed once the output holds
    ``until``; the exit code and everything written."""
    shown = run_in_pty(args, columns=columns, interrupt_when=until)
    return shown.code, shown.output.decode(errors="replace")


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat"])
def test_demo_piped_prints_the_answer_the_tool_result_and_the_usage(dialect: str) -> None:
    done = streamflow("demo", "--fast", "--dialect", dialect)
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert "\x1b" not in done.stdout  # plain text for pipes, no escape codes
    assert "I'll check the current conditions in Lisbon" in done.stdout
    # everything but the answer goes to stderr: the tool result, each turn's footer, a total
    assert '✓ get_weather → {"city":"Lisbon","unit":"celsius","temperature":17' in done.stderr
    prompt_tokens = {"anthropic": "794 in", "openai-chat": "822 in"}[dialect]
    assert f"{prompt_tokens} · 97 out" in done.stderr
    assert "2 turns" in done.stderr and "228 output tokens" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat"])
def test_demo_in_a_terminal_renders_thinking_tool_call_and_answer(dialect: str) -> None:
    code, raw = in_terminal(["demo", "--fast", "--dialect", dialect])
    screen = " ".join(ANSI.sub("", raw).split())  # as read, whatever the line wrapping
    assert code == 0, screen
    assert "\x1b[" in raw  # a terminal gets styles
    assert "Thinking" in screen and "I should call get_weather for Lisbon" in screen
    assert '⚙ get_weather {"city": "Lisbon", "unit": "celsius"}' in screen
    assert "✓ get_weather →" in screen
    assert ANSWER in screen
    assert "97 out" in screen and "· stop" in screen


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_ctrl_c_keeps_the_partial_answer_and_exits_130() -> None:
    code, raw = in_terminal(["demo"], until=b"Lisbon for you")
    screen = " ".join(ANSI.sub("", raw).split())
    assert code == 130, screen
    assert "I'll check the current conditions in Lisbon for you." in screen
    assert "interrupted" in screen
    assert ANSWER not in screen


def test_replay_a_bundled_recording_by_name_and_by_path() -> None:
    assert "anthropic-turn2.sse" in recording_names()
    done = streamflow("replay", "anthropic-turn2.sse", "--speed", "0")
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout and "794 in · 97 out" in done.stderr
    import streamflow.wire.recordings as bundled

    path = os.path.join(os.path.dirname(bundled.__file__), "openai-chat-turn1.sse")
    done = streamflow("replay", path, "--speed", "50", "--dialect", "openai-chat")
    assert done.returncode == 0, done.stderr
    assert "I'll check the current conditions in Lisbon for you." in done.stdout
    assert "· tool_call" in done.stderr


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat"])
def test_live_mode_against_a_compatible_server(dialect: str) -> None:
    """``--base-url``: the live code path, pointed at a loopback server that checks the
    follow-up request like the real API (signed reasoning and call ids sent back)."""
    import anyio.from_thread

    from streamflow.demo.server import DemoServer

    key_var = {"anthropic": "ANTHROPIC_API_KEY", "openai-chat": "OPENAI_API_KEY"}[dialect]
    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(DemoServer(dialect, fast=True)) as server:
        done = streamflow("demo", "--dialect", dialect, "--base-url", server.base_url,
                          "--model", "local-model", **{key_var: "test-key"})
        first, second = server.hits[0], server.hits[1]
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert f"live from {server.base_url}" in done.stderr
    body = first.json()
    assert body["model"] == "local-model" and body["stream"] is True
    assert [t["name"] if dialect == "anthropic" else t["function"]["name"]
            for t in body["tools"]] == ["get_weather"]
    credential = first.headers.get("x-api-key") or first.headers.get("authorization")
    assert credential in ("test-key", "Bearer test-key")
    assert second.status == 200  # the follow-up passed the server's checks


def test_replay_a_streamflow_recording_file(tmp_path: Path) -> None:
    import anyio

    from streamflow.app.runtime import run
    from streamflow.demo import recording
    from streamflow.reactive.sinks.recorder import Recorder
    from streamflow.reactive.sources import from_bytes

    target = tmp_path / "turn2.sfrec.jsonl"

    async def record() -> None:
        with Recorder(target, dialect="openai-chat") as recorder:
            source = from_bytes(recording("openai-chat", 2), chunk_size=40)
            await run(recorder.tap(source), recorder, dialect="openai-chat")

    anyio.run(record)
    done = streamflow("replay", str(target), "--speed", "0")
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout and "822 in · 97 out" in done.stderr


def test_replay_of_a_cut_body_keeps_the_partial_and_exits_1(tmp_path: Path) -> None:
    from streamflow.demo import recording

    body = recording("anthropic", 2)
    cut = tmp_path / "cut.sse"
    cut.write_bytes(body[:body.index(b"Enjoy")])
    done = streamflow("replay", str(cut), "--speed", "0")
    assert done.returncode == 1
    assert "bring a light jacket" in done.stdout
    assert "IncompleteStreamError" in done.stderr


def test_unreachable_server_is_a_clean_error() -> None:
    import socket

    with socket.socket() as closed:  # bound, never listening: connection refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        done = streamflow("demo", "--base-url", f"http://127.0.0.1:{port}/v1")
    assert done.returncode == 1
    assert "TransportError" in done.stderr and "Traceback" not in done.stderr


def test_replay_of_a_missing_file_is_a_usage_error() -> None:
    done = streamflow("replay", "no-such-recording.sse")
    assert done.returncode == 2
    assert "no such file or bundled recording" in done.stderr


def test_prompt_needs_a_live_provider() -> None:
    done = streamflow("demo", "--prompt", "Hello?")
    assert done.returncode == 2
    assert "--prompt needs a live provider" in done.stderr


# -- choosing the source -------------------------------------------------------------------

def test_without_keys_the_demo_replays_the_bundled_recording() -> None:
    assert choose({}).mode == "replay" and choose({}).dialect == "anthropic"
    plan = choose({}, dialect="openai-chat")
    assert (plan.mode, plan.dialect, plan.api_key) == ("replay", "openai-chat", None)


def test_a_key_makes_the_demo_live() -> None:
    plan = choose({"ANTHROPIC_API_KEY": "sk-ant"})
    assert (plan.mode, plan.dialect, plan.api_key) == ("live", "anthropic", "sk-ant")
    plan = choose({"OPENAI_API_KEY": "sk-oai"})
    assert (plan.mode, plan.dialect, plan.api_key) == ("live", "openai-chat", "sk-oai")
    both = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    assert choose(both).dialect == "anthropic"
    assert choose(both, dialect="openai-chat").api_key == "o"
    # a key for the other provider does not make the chosen dialect live
    assert choose({"OPENAI_API_KEY": "o"}, dialect="anthropic").mode == "replay"


def test_offline_wins_and_base_url_means_a_compatible_server() -> None:
    assert choose({"ANTHROPIC_API_KEY": "a"}, offline=True).mode == "replay"
    local = choose({}, base_url="http://127.0.0.1:8080/v1")
    assert (local.mode, local.dialect, local.base_url, local.api_key) == (
        "live", "openai-chat", "http://127.0.0.1:8080/v1", None)
    assert choose({}, base_url="http://h", dialect="anthropic").dialect == "anthropic"
