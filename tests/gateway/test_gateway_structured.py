"""Structured output through the gateway: each client SDK's own structured-output call, to
each upstream format, the schema translated into the upstream's own field and the answer
parsed by the SDK into its model.

The upstream is a loopback ReplayServer answering with the JSON answer encoded in its own
dialect; it records the request body the gateway sent, which is checked for the schema.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

import streamflow
from streamflow.servers.replay import ReplayServer, Route

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "structured"))
from conftest import OPENAI_BASE, serve
from recordings import MODEL, PATHS
from test_stream_output import text_events

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
gateway_app = pytest.importorskip("streamflow.servers.gateway")

UPSTREAMS = ["anthropic", "openai-chat", "openai-responses", "gemini"]


class City(BaseModel):
    name: str
    country: str
    population: int


CITY = City(name="Lisbon", country="Portugal", population=545_923)


def schema_sent(upstream: str, body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema in the upstream's own structured-output field."""
    if upstream == "anthropic":
        fmt = body["output_config"]["format"]
        assert fmt["type"] == "json_schema"
        return dict(fmt["schema"])
    if upstream == "openai-chat":
        assert body["response_format"]["type"] == "json_schema"
        return dict(body["response_format"]["json_schema"]["schema"])
    if upstream == "openai-responses":
        assert body["text"]["format"]["type"] == "json_schema"
        return dict(body["text"]["format"]["schema"])
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    return dict(config["responseJsonSchema"])


async def _through(upstream: str, call: Any) -> tuple[Any, dict[str, Any]]:
    answer = b"".join(streamflow.encode(text_events(CITY.model_dump_json()), upstream))
    async with ReplayServer({PATHS[upstream]: Route.from_body(answer)}) as server:
        app = gateway_app.create_app(server.url + OPENAI_BASE.get(upstream, ""), upstream,
                                     model=MODEL[upstream])
        async with serve(app) as url:
            result = await call(url)
        return result, server.hits[0].json()


@pytest.fixture(params=UPSTREAMS)
def upstream(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the SDK clients are asyncio's; uvicorn runs in its own thread


async def test_openai_chat_parse(upstream: str) -> None:
    async def call(url: str) -> Any:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        async with client:
            done = await client.chat.completions.parse(
                model="m", messages=[{"role": "user", "content": "Lisbon?"}],
                response_format=City)
            return done.choices[0].message.parsed
    parsed, sent = await _through(upstream, call)
    assert parsed == CITY
    assert set(schema_sent(upstream, sent)["properties"]) == {"name", "country", "population"}


async def test_openai_chat_stream(upstream: str) -> None:
    async def call(url: str) -> Any:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        async with client, client.chat.completions.stream(
                model="m", messages=[{"role": "user", "content": "Lisbon?"}],
                response_format=City) as stream:
            return (await stream.get_final_completion()).choices[0].message.parsed
    parsed, sent = await _through(upstream, call)
    assert parsed == CITY and schema_sent(upstream, sent)["required"]


async def test_openai_responses_parse(upstream: str) -> None:
    async def call(url: str) -> Any:
        client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        async with client:
            done = await client.responses.parse(model="m", input="Lisbon?", text_format=City)
            return done.output_parsed
    parsed, sent = await _through(upstream, call)
    assert parsed == CITY
    assert "population" in schema_sent(upstream, sent)["properties"]


async def test_anthropic_messages_parse(upstream: str) -> None:
    async def call(url: str) -> Any:
        client = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)
        async with client:
            done = await client.messages.parse(
                model="m", max_tokens=256, messages=[{"role": "user", "content": "Lisbon?"}],
                output_format=City)
            return done.parsed_output
    parsed, sent = await _through(upstream, call)
    assert parsed == CITY
    assert schema_sent(upstream, sent)["properties"]["population"]["type"] == "integer"


async def test_the_gateways_answer_streams_into_a_typed_partial(upstream: str) -> None:
    async def call(url: str) -> Any:
        async with httpx.AsyncClient(timeout=30) as http, http.stream(
                "POST", url + "/v1/chat/completions",
                json={"model": "m", "stream": True, "messages": [{"role": "user",
                                                                   "content": "Lisbon?"}],
                      "response_format": {"type": "json_schema", "json_schema": {
                          "name": "City", "schema": City.model_json_schema()}}}) as response:
            snapshots = []
            async with streamflow.stream(response, output=City) as s:
                async for _event in s:
                    snapshots.append(s.partial_output)
                return await s.final_output(), snapshots
    (final, snapshots), _ = await _through(upstream, call)
    assert final == CITY
    names = [p.name for p in snapshots if p is not None and p.name]
    assert names and names[-1] == "Lisbon"


@pytest.mark.parametrize("client", ["anthropic", "openai-chat", "openai-responses"])
def test_parsing_a_structured_request_leaves_the_clients_body_as_it_came(client: str) -> None:
    import copy

    from streamflow.wire.dialects import get_request
    schema = City.model_json_schema()
    bodies = {
        "anthropic": {"model": "m", "max_tokens": 9, "messages": [{"role": "user",
                                                                   "content": "x"}],
                      "output_config": {"format": {"type": "json_schema", "schema": schema},
                                        "effort": "low"}},
        "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "x"}],
                        "response_format": {"type": "json_schema", "json_schema": {
                            "name": "City", "schema": schema, "strict": True}}},
        "openai-responses": {"model": "m", "input": "x", "text": {
            "format": {"type": "json_schema", "name": "City", "schema": schema},
            "verbosity": "low"}},
    }
    body = bodies[client]
    before = copy.deepcopy(body)
    side = get_request(client)
    request = side.parse(body)
    assert body == before
    assert request.options["response_format"]["schema"] == schema
    rebuilt = side.build(request)  # the same format: the structured field as it was sent
    field = {"anthropic": "output_config", "openai-chat": "response_format",
             "openai-responses": "text"}[client]
    assert rebuilt[field] == body[field]
