"""``Agent(output=T)`` against a real llama.cpp server: the schema the request carries is
enforced by the server itself (llama.cpp turns ``response_format``'s JSON schema into a
grammar), so even a 135M model answers with an object of the type, streamed as it grows.
(llama-server's ``/v1/responses`` and ``/v1/messages`` take no schema: ``text.format`` and
``output_config.format`` are ignored there, and SmolLM2 answers in prose, which
``Agent(output=)`` refuses with an ``OutputValidationError``; so only chat is tried.)

Skipped unless ``STREAMFLOW_LIVE_URL`` names the server (see tests/live/conftest.py).
"""

from __future__ import annotations

import os
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel
from test_agent_live import base_url, model_name

from streamflow.app.agent import Agent, http_sender
from streamflow.app.providers import make_provider

URL = os.environ.get("STREAMFLOW_LIVE_URL", "")

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not URL, reason="STREAMFLOW_LIVE_URL is not set "
                                                 "(a llama.cpp server started with --jinja)")]


class City(BaseModel):
    name: str
    country: str
    size: Literal["small", "medium", "large"]


async def test_a_live_server_holds_the_answer_to_the_schema() -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), trust_env=False) as client:
        provider = make_provider("openai-chat", base_url=base_url(), api_key="none",
                                 model=await model_name(client), max_tokens=120,
                                 extra_body={"temperature": 0, "seed": 7})
        agent = Agent(provider, send=http_sender(client), output=City)
        async with agent.stream("Describe Lisbon as a city: its name, its country and "
                                "its size.") as run:
            shown = [ev.output async for ev in run if ev.type == "output"]
    result = run.result
    assert isinstance(result.output, City)  # validated by pydantic, shaped by the server
    assert result.output.name and result.output.country
    assert len(shown) >= 2 and shown[-1] == result.output.model_dump()
    request = result.turns[-1].request.json
    assert request["response_format"]["json_schema"]["schema"] == City.model_json_schema()
