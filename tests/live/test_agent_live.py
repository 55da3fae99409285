"""One agent run against a real llama.cpp server (``llama-server --jinja``, for tools).

Skipped unless ``STREAMFLOW_LIVE_URL`` names the server (``http://127.0.0.1:8081`` or its
``/v1``); ``STREAMFLOW_LIVE_MODEL`` picks the model (default: the first one it lists).
The model is asked to use a progress-reporting tool, then to answer: the run's events
must show the call, its progress and its result, and a second turn with the answer. The
first request says ``tool_choice: "required"`` (llama.cpp then constrains the output to a
call), so even a small model makes one; the second leaves the model free to answer.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import replace

import anyio
import httpx
import pytest

from streamflow.app.agent import Agent, SendFn, http_sender
from streamflow.app.providers import HTTPRequest, make_provider
from streamflow.app.tools import Progress, ToolRegistry
from streamflow.reactive.sources import Source

URL = os.environ.get("STREAMFLOW_LIVE_URL", "")

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not URL, reason="STREAMFLOW_LIVE_URL is not set "
                                                 "(a llama.cpp server started with --jinja)")]


def base_url() -> str:
    url = URL.rstrip("/")
    return url if url.endswith("/v1") else f"{url}/v1"


async def model_name(client: httpx.AsyncClient) -> str:
    name = os.environ.get("STREAMFLOW_LIVE_MODEL")
    if name:
        return name
    listed = (await client.get(f"{base_url()}/models")).json()
    return str(listed["data"][0]["id"])


def first_call_required(send: SendFn) -> SendFn:
    """``send`` with ``tool_choice: "required"`` on the first request only."""
    sent: list[HTTPRequest] = []

    def forced(request: HTTPRequest) -> Source:
        if not sent:
            request = replace(request, json={**request.json, "tool_choice": "required"})
        sent.append(request)
        return send(request)

    return forced


async def test_a_live_run_calls_a_progress_tool_and_answers() -> None:
    tools = ToolRegistry()

    @tools.tool
    async def get_weather(city: str) -> AsyncIterator[Progress | dict]:
        """Get the current weather in a city. Always use this tool for weather questions."""
        yield Progress(f"asking the weather service about {city}")
        await anyio.sleep(0)
        yield {"city": city, "temperature_c": 17, "sky": "partly cloudy"}

    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0), trust_env=False) as client:
        provider = make_provider("openai-chat", base_url=base_url(), api_key="none",
                                 model=await model_name(client),
                                 extra_body={"max_tokens": 256})  # a bounded answer
        agent = Agent(provider, tools, first_call_required(http_sender(client)), max_turns=4)
        with anyio.fail_after(600):
            async with agent.stream("What is the weather in Lisbon right now? Use the "
                                    "get_weather tool, then answer in one sentence.") as run:
                kinds = [ev.type async for ev in run]
    result = run.result
    assert kinds[0] == "turn.start" and kinds[-1] == "run.end"
    calls = [t for t in result.turns if t.results]
    assert calls, f"the model called no tool: {result.turns[0].message.text!r}"
    assert calls[0].results[0].name == "get_weather" and not calls[0].results[0].is_error
    assert kinds.index("tool.start") < kinds.index("tool.progress") < kinds.index("tool.result")
    assert result.message.finish_reason == "stop" and result.text.strip()
    assert result.usage.prompt_tokens  # summed over both turns
