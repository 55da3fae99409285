"""Models by name: ``Agent("anthropic:claude-sonnet-4-5")`` as pydantic-ai takes one.

The key and the base URL come from the environment variables the official SDKs read; each
run opens its own HTTP client and closes it. The provider plays a real loopback server
(the demo's two turns), so the whole tool loop runs.
"""

from __future__ import annotations

import gc
import warnings

import httpx
import pytest

import streamflow
from streamflow.app.providers import AnthropicProvider, OpenAIChatProvider, provider_for
from streamflow.demo import DEMO_PROMPT
from streamflow.demo.server import DemoServer
from streamflow.demo.tools import demo_tools

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("spec", "dialect", "key_env", "url_env"), [
    ("anthropic:claude-sonnet-4-5", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ("openai:gpt-4.1-mini", "openai-chat", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
])
async def test_an_agent_by_model_string_runs_the_tool_loop(
        spec: str, dialect: str, key_env: str, url_env: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with DemoServer(dialect, fast=True) as server:
        monkeypatch.setenv(key_env, "sk-from-env")
        monkeypatch.setenv(url_env, server.base_url)
        agent = streamflow.Agent(spec, demo_tools())
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)  # the run's client is closed
            result = await agent.run(DEMO_PROMPT)
            again = await agent.run(DEMO_PROMPT)  # a second run: a client of its own
            gc.collect()
        sent = [hit.json()["model"] for hit in server.hits]
        keys = [hit.headers.get("x-api-key") or hit.headers.get("authorization")
                for hit in server.hits]
    assert "bring a light jacket" in result.text and again.text == result.text
    assert sent == [spec.partition(":")[2]] * 4
    assert all(k is not None and k.endswith("sk-from-env") for k in keys)


def test_a_model_string_names_a_provider_and_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    claude = provider_for("anthropic:claude-opus-4-1", max_tokens=99)
    gpt = provider_for("openai:gpt-5")
    assert isinstance(claude, AnthropicProvider) and claude.model == "claude-opus-4-1"
    assert claude.max_tokens == 99 and claude.base_url == "https://api.anthropic.com"
    assert isinstance(gpt, OpenAIChatProvider) and gpt.base_url == "http://127.0.0.1:9/v1"
    assert provider_for("openai-chat:m", base_url="http://x").base_url == "http://x"  # wins


@pytest.mark.parametrize("bad", ["claude-sonnet-4-5", "anthropic:", ":m", "nobody:m"])
def test_a_bad_model_string_says_what_is_wanted(bad: str) -> None:
    with pytest.raises(ValueError, match=r"provider:model|unknown provider"):
        streamflow.Agent(bad)


async def test_a_send_of_the_callers_is_used_as_it_is() -> None:
    async with DemoServer("anthropic", fast=True) as server, \
            httpx.AsyncClient(trust_env=False) as client:
        agent = streamflow.Agent(
            AnthropicProvider(base_url=server.base_url, api_key="k", model="m"), demo_tools(),
            streamflow.app.agent.http_sender(client))
        result = await agent.run(DEMO_PROMPT)
        assert not client.is_closed  # the caller's client stays the caller's
    assert "bring a light jacket" in result.text


async def test_a_model_string_is_a_source_for_run_and_stream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``from_model`` takes the string Agent takes; each subscription its own client,
    closed when the stream ends (no ResourceWarning)."""
    async with DemoServer("openai-chat", fast=True) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        source = streamflow.from_model("openai:gpt-4.1-mini", DEMO_PROMPT, tools=demo_tools(),
                                       max_tokens=300)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            message = await streamflow.run(source)
            async with streamflow.stream(source) as s:  # cold: subscribed again, sent again
                kinds = [e.event_type async for e in s]
            gc.collect()
        sent = [hit.json() for hit in server.hits]
    assert message.finish_reason == "tool_call" and message.tool_calls[0].name == "get_weather"
    assert kinds[-1] == "stop" and len(sent) == 2
    assert sent[0]["model"] == "gpt-4.1-mini" and sent[0]["max_tokens"] == 300
    assert server.hits[0].headers["authorization"] == "Bearer sk-from-env"
