"""``--base-url`` in either form for every dialect, and HTTP errors that name the URL."""

from __future__ import annotations

import os
import subprocess
import sys

import anyio.from_thread
import pytest

from streamflow.demo.plan import base_url_for, choose
from streamflow.demo.server import DemoServer

ANSWER = "bring a light jacket"


def streamflow(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return subprocess.run([sys.executable, "-m", "streamflow", *args], capture_output=True,
                          text=True, env={**base, **env}, timeout=60, check=False)


@pytest.mark.parametrize(("dialect", "form"), [
    ("anthropic", ""), ("anthropic", "/v1"), ("anthropic", "/v1/"), ("anthropic", "/v1/messages"),
    ("openai-chat", ""), ("openai-chat", "/v1"), ("openai-chat", "/v1/chat/completions"),
])
def test_both_base_url_forms_reach_the_endpoint(dialect: str, form: str) -> None:
    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(DemoServer(dialect, fast=True)) as server:
        done = streamflow("demo", "--dialect", dialect, "--base-url", server.url + form,
                          "--model", "local-model")
        paths = [hit.path for hit in server.hits]
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    assert paths == [server.path, server.path]  # never /v1/v1/messages


def test_an_http_error_names_the_method_and_url() -> None:
    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(DemoServer("anthropic", fast=True)) as server:
        url = server.url + "/proxy"  # the server answers 404 there
        done = streamflow("demo", "--dialect", "anthropic", "--base-url", url)
    assert done.returncode == 1
    assert f"HTTP 404 from POST {url}/v1/messages: " in done.stderr
    assert "Traceback" not in done.stderr


def test_plan_normalises_the_base_url() -> None:
    plan = choose({}, dialect="anthropic", base_url="http://127.0.0.1:8080/v1")
    assert plan.base_url == "http://127.0.0.1:8080"
    plan = choose({}, base_url="http://127.0.0.1:8080")
    assert (plan.dialect, plan.base_url) == ("openai-chat", "http://127.0.0.1:8080/v1")
    assert base_url_for("openai-chat", "https://openrouter.ai/api/v1") == \
        "https://openrouter.ai/api/v1"
    assert base_url_for("anthropic", "https://proxy.example/anthropic/") == \
        "https://proxy.example/anthropic"


def test_a_local_server_is_never_priced_as_the_real_provider() -> None:
    with anyio.from_thread.start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(DemoServer("anthropic", fast=True)) as server:
        local = streamflow("demo", "--dialect", "anthropic", "--base-url", server.url)
    bundled = streamflow("demo", "--fast", "--plain")
    assert local.returncode == 0 and bundled.returncode == 0
    footers = [line for line in local.stderr.splitlines() if " in · " in line]
    assert len(footers) == 2 and not any("$" in line for line in footers)
    assert footers[0].startswith("claude-sonnet-4-5")  # the name, just not its price
    priced = [line for line in bundled.stderr.splitlines() if " in · " in line]
    assert len(priced) == 2 and all("· $0.0" in line for line in priced)
