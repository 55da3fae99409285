"""What the client asked for, through the gateway: options kept, translated or refused by name.

The official SDKs are the clients (under real uvicorn), so a refusal must be the
client format's own error envelope: each SDK raises its ``BadRequestError``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serve
from recordings import DATA, MODEL, PATHS, turn_bodies

from streamflow.app.providers import HTTPRequest
from streamflow.core.requests import ChatRequest, Turn
from streamflow.servers.gateway import Upstream, client_routes, create_app
from streamflow.servers.replay import ReplayServer, Route
from streamflow.wire.dialects import REQUESTS, credential_headers

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

ASK = [{"role": "user", "content": "hi"}]
N2 = (DATA / "openai_chat" / "n2_choices.sse").read_bytes()


def openai_client(url: str) -> Any:
    return openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


def anthropic_client(url: str) -> Any:
    return anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)


async def _chat(url: str, **options: Any) -> Any:
    client = openai_client(url)
    try:
        return await client.chat.completions.create(model="m", messages=ASK, **options)
    finally:
        await client.close()


async def test_an_option_the_upstream_cannot_carry_is_each_sdks_bad_request(
        gateway: Any) -> None:
    first, _ = turn_bodies("anthropic")
    async with ReplayServer({PATHS["anthropic"]: Route.from_body(first)}) as server, \
            gateway(server.url, "anthropic") as url:
        with pytest.raises(openai.BadRequestError) as chat:
            await _chat(url, seed=7)
        client = openai_client(url)
        with pytest.raises(openai.BadRequestError) as responses:
            await client.responses.create(model="m", input="hi", metadata={"team": "x"})
        await client.close()
        hits = len(server.hits)
    assert hits == 0  # refused before anything went upstream
    assert "seed" in chat.value.message and "anthropic" in chat.value.message
    assert "metadata" in responses.value.message


async def test_stop_sequences_towards_responses_are_refused_for_the_anthropic_sdk(
        gateway: Any) -> None:
    first, _ = turn_bodies("openai-responses")
    async with ReplayServer({PATHS["openai-responses"]: Route.from_body(first)}) as server, \
            gateway(server.url, "openai-responses") as url:
        client = anthropic_client(url)
        with pytest.raises(anthropic.BadRequestError) as info:
            await client.messages.create(model="m", max_tokens=10, messages=ASK,
                                         stop_sequences=["END"])
        await client.close()
    assert "stop_sequences" in info.value.message


async def test_drop_unsupported_sends_the_rest(gateway: Any) -> None:
    first, _ = turn_bodies("anthropic")
    async with ReplayServer({PATHS["anthropic"]: Route.from_body(first)}) as server, \
            gateway(server.url, "anthropic", drop_unsupported=True) as url:
        chat = await _chat(url, response_format={"type": "json_object"}, seed=3, temperature=0.5)
        sent = server.hits[0].json()
    assert chat.choices[0].message.tool_calls
    assert sent["temperature"] == 0.5
    assert not {"response_format", "seed", "output_format"} & set(sent)


@pytest.mark.parametrize(("upstream", "where"), [
    ("openai-responses", lambda body: body["text"]["format"]["schema"]),
    ("gemini", lambda body: body["generationConfig"]["responseJsonSchema"])])
async def test_response_format_is_translated_where_the_upstream_has_a_place(
        upstream: str, where: Any, gateway: Any) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    first, _ = turn_bodies(upstream)
    async with ReplayServer({PATHS[upstream]: Route.from_body(first)}) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        await _chat(url, response_format={"type": "json_schema", "json_schema": {
            "name": "City", "schema": schema}})
        sent = server.hits[0].json()
    assert where(sent) == schema


async def test_a_bad_value_gets_a_message_about_the_value(gateway: Any) -> None:
    async with gateway("http://127.0.0.1:9", "anthropic") as url:
        with pytest.raises(openai.BadRequestError) as info:
            await _chat(url, tool_choice="bogus")
    assert "tool_choice" in info.value.message and "'bogus'" in info.value.message


async def test_several_choices_come_back_apart_never_merged(gateway: Any) -> None:
    routes = {PATHS["openai-chat"]: [Route.from_body(N2), Route.from_body(N2)]}
    async with ReplayServer(routes) as server, gateway(server.url, "openai-chat") as url:
        whole = await _chat(url, n=2)
        client = openai_client(url)
        stream = await client.chat.completions.create(model="m", messages=ASK, n=2, stream=True)
        streamed: dict[int, str] = {}
        async for chunk in stream:
            for choice in chunk.choices:
                streamed[choice.index] = streamed.get(choice.index, "") + (
                    choice.delta.content or "")
        await client.close()
        with pytest.raises(openai.BadRequestError) as refused:
            async with gateway(server.url, "anthropic") as other:
                await _chat(other, n=2)
    answers = [(c.index, c.message.content, c.finish_reason) for c in whole.choices]
    assert answers == [(0, "Hi!", "stop"), (1, "Hello there", "length")]
    assert streamed == {0: "Hi!", 1: "Hello there"}
    assert "n" in refused.value.message and "anthropic" in refused.value.message


async def test_non_streaming_times_are_seconds_like_the_streams(gateway: Any) -> None:
    first, _ = turn_bodies("anthropic")
    routes = {PATHS["anthropic"]: [Route.from_body(first), Route.from_body(first)]}
    async with ReplayServer(routes) as server, gateway(server.url, "anthropic") as url:
        chat = await _chat(url)
        client = openai_client(url)
        response = await client.responses.create(model="m", input="hi")
        await client.close()
    now = time.time()
    assert now - 3600 < chat.created < now + 60
    assert now - 3600 < response.created_at < now + 60


THROWAWAY = '''
"""A dialect with only a request side: OpenAI chat bodies on its own path and key header."""
from streamflow.wire.dialects.openai_chat import request as chat
from streamflow.wire.dialects.request_base import RequestSide

REQUEST = RequestSide(
    name="throwaway", build=chat.build, parse=chat.parse, path="/chat",
    client_path="/throwaway/v1/chat/completions", credential="x-throwaway-key", bearer=False,
    error_body=chat.error_body, reply=chat.message_body, takes=chat.REQUEST.takes,
    codec="openai-chat")
'''


async def test_a_new_request_side_is_its_folder_and_one_registry_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "sf_throwaway"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "request.py").write_text(THROWAWAY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(REQUESTS, "throwaway", "sf_throwaway.request:REQUEST")
    monkeypatch.delitem(sys.modules, "sf_throwaway.request", raising=False)

    assert client_routes()["/throwaway/v1/chat/completions"] == "throwaway"
    assert "x-throwaway-key" in credential_headers()
    assert HTTPRequest("u", {"X-Throwaway-Key": "s"}, {}).redacted_headers() == {
        "X-Throwaway-Key": "<redacted>"}
    built = Upstream("https://up.test/base", "throwaway").request(
        ChatRequest(model="m", turns=[Turn.user("hi")]), {"x-throwaway-key": "tk"})
    assert built.url == "https://up.test/base/chat" and built.headers["x-throwaway-key"] == "tk"

    first, _ = turn_bodies("anthropic")
    async with ReplayServer({PATHS["anthropic"]: Route.from_body(first)}) as server, \
            serve(create_app(server.url, "anthropic")) as url:
        client = openai.AsyncOpenAI(base_url=url + "/throwaway/v1", api_key="k",
                                    max_retries=0)
        stream = await client.chat.completions.create(model="m", messages=ASK, stream=True)
        calls = [c async for c in stream if c.choices and c.choices[0].delta.tool_calls]
        await client.close()
        async with httpx.AsyncClient() as http:
            bad = await http.post(url + "/throwaway/v1/chat/completions",
                                  json={"model": "m"}, headers={"x-throwaway-key": "tk"})
        answered = await _raw(url, server)
    assert calls  # the openai SDK read the throwaway's stream (openai-chat bodies)
    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
    assert answered == "tk"  # the client's key, from the throwaway's header, went upstream


async def test_a_request_side_reusing_a_codec_serves_as_the_upstream_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request side whose streams are another dialect's (``codec``) as the upstream: its
    answer is decoded with the codec's decoder (it was a 500: no decoder of its name)."""
    package = tmp_path / "sf_throwaway"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "request.py").write_text(THROWAWAY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(REQUESTS, "throwaway", "sf_throwaway.request:REQUEST")
    monkeypatch.delitem(sys.modules, "sf_throwaway.request", raising=False)

    first, _ = turn_bodies("openai-chat")
    async with ReplayServer({"/chat": Route.from_body(first)}) as server, \
            serve(create_app(server.url, "throwaway")) as url:
        client = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)
        async with client.messages.stream(model="m", max_tokens=64, messages=ASK) as stream:
            message = await stream.get_final_message()
        await client.close()
    assert server.hits[-1].headers.get("x-throwaway-key") == "k"  # its own key header
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.stop_reason == "tool_use"


async def _raw(url: str, server: Any) -> str:
    async with httpx.AsyncClient() as http:
        await http.post(url + "/throwaway/v1/chat/completions",
                        json={"model": "m", "messages": ASK, "stream": True},
                        headers={"x-throwaway-key": "tk"})
    return str(server.hits[-1].headers.get("x-api-key"))
