"""The gateway's HTTP behaviour: errors, mid-stream failures, disconnects, concurrency, JSON."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import serve
from recordings import DATA, MODEL, PATHS, turn_bodies, turn_messages

from streamflow import assemble
from streamflow.servers.gateway import create_app
from streamflow.servers.replay import ReplayServer, Route, split_odd

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

ANTHROPIC_ERROR = {"type": "error", "error": {"type": "rate_limit_error",
                                              "message": "slow down"}}
OPENAI_ERROR = {"error": {"message": "bad model", "type": "invalid_request_error",
                          "param": "model", "code": "model_not_found"}}
ASK = [{"role": "user", "content": "hi"}]


def anthropic_client(url: str) -> Any:
    return anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)


def openai_client(url: str) -> Any:
    return openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


async def test_upstream_status_comes_back_as_the_client_dialects_error(gateway: Any) -> None:
    routes = {PATHS["anthropic"]: Route.error(429, ANTHROPIC_ERROR, headers={"retry-after": "3"})}
    async with ReplayServer(routes) as server, gateway(server.url, "anthropic") as url:
        client = openai_client(url)
        with pytest.raises(openai.RateLimitError) as caught:
            async with client.chat.completions.stream(model="m", messages=ASK) as stream:
                await stream.get_final_completion()
        assert "slow down" in str(caught.value)
        assert caught.value.response.headers["retry-after"] == "3"
        with pytest.raises(openai.RateLimitError):
            await client.responses.create(model="m", input="hi")
        await client.close()


async def test_openai_upstream_400_is_an_anthropic_bad_request(gateway: Any) -> None:
    routes = {PATHS["openai-chat"]: Route.error(400, OPENAI_ERROR)}
    async with ReplayServer(routes) as server, gateway(server.url, "openai-chat") as url:
        client = anthropic_client(url)
        with pytest.raises(anthropic.BadRequestError) as caught:
            await client.messages.create(model="m", max_tokens=10, messages=ASK)
        await client.close()
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["message"] == "bad model"  # type: ignore[index]


async def test_unreachable_upstream_is_a_502_envelope() -> None:
    with anyio.fail_after(20):
        app = create_app("http://127.0.0.1:9", "anthropic")  # discard port: refused
        async with serve(app) as url, httpx.AsyncClient() as client:
            response = await client.post(url + "/v1/chat/completions",
                                         json={"model": "m", "messages": ASK, "stream": True})
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "server_error"


async def test_a_request_the_gateway_cannot_read_is_a_400_in_the_clients_envelope() -> None:
    app = create_app("http://127.0.0.1:9", "openai-chat")
    async with serve(app) as url, httpx.AsyncClient() as client:
        bad_json = await client.post(url + "/v1/messages", content=b"{nope")
        no_messages = await client.post(url + "/v1/messages", json={"model": "m"})
        bad_role = await client.post(url + "/v1/chat/completions",
                                     json={"model": "m", "messages": [{"role": "wizard"}]})
    assert (bad_json.status_code, bad_json.json()["type"]) == (400, "error")
    assert no_messages.json()["error"]["type"] == "invalid_request_error"
    assert "messages" in no_messages.json()["error"]["message"]
    assert bad_role.status_code == 400 and "wizard" in bad_role.json()["error"]["message"]


@pytest.mark.parametrize(("upstream", "body"), [
    ("openai-chat", (DATA / "openai_chat" / "error_mid_stream.sse").read_bytes()),
    ("anthropic", (DATA / "cli" / "anthropic_overloaded.sse").read_bytes()),
    ("openai-responses", (DATA / "openai_responses" / "error_event.sse").read_bytes()),
])
async def test_a_mid_stream_upstream_error_raises_in_every_client_sdk(
        upstream: str, body: bytes, gateway: Any) -> None:
    async with ReplayServer({PATHS[upstream]: Route.from_body(body)}) as server, \
            gateway(server.url, upstream) as url:
        a, o = anthropic_client(url), openai_client(url)
        with pytest.raises(anthropic.APIStatusError):
            async with a.messages.stream(model="m", max_tokens=10, messages=ASK) as stream:
                await stream.get_final_message()
        with pytest.raises(openai.APIError):
            async with o.chat.completions.stream(model="m", messages=ASK) as chat:
                await chat.get_final_completion()
        with pytest.raises(openai.APIError):
            async with o.responses.stream(model="m", input="hi") as responses:
                await responses.get_final_response()
        await a.close()
        await o.close()


async def test_a_cut_upstream_body_ends_with_an_error_event_not_silently(gateway: Any) -> None:
    first, _ = turn_bodies("openai-chat")
    cut = Route(chunks=split_odd(first[: len(first) // 2]), abort=True)
    async with ReplayServer({PATHS["openai-chat"]: cut}) as server, \
            gateway(server.url, "openai-chat") as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/v1/messages",
                                     json={"model": "m", "max_tokens": 9, "messages": ASK,
                                           "stream": True})
    events = [line for line in response.text.splitlines() if line.startswith("event: ")]
    assert events[-1] == "event: error" and "event: message_stop" not in events


async def test_client_disconnect_closes_the_upstream_within_a_second(gateway: Any) -> None:
    first, _ = turn_bodies("anthropic")
    slow = Route(chunks=split_odd(first, (40,)), delays=0.05)  # ~6 s in all
    async with ReplayServer({PATHS["anthropic"]: slow}) as server, \
            gateway(server.url, "anthropic") as url:
        async with httpx.AsyncClient() as client, client.stream(
                "POST", url + "/v1/chat/completions",
                json={"model": "m", "messages": ASK, "stream": True}) as response:
            async for _ in response.aiter_raw():
                break
            left = time.monotonic()
        hit = await server.wait_disconnect(timeout=1.0)
        assert time.monotonic() - left < 1.0
    assert hit.disconnected and not hit.completed
    assert hit.chunks_sent < len(slow.chunks)


async def test_concurrent_requests_stay_apart(gateway: Any) -> None:
    bodies = [turn_bodies("openai-chat")[0], turn_bodies("openai-chat")[1],
              (DATA / "openai_chat" / "parallel_interleaved.sse").read_bytes(),
              (DATA / "openai_chat" / "deepseek_reasoning.sse").read_bytes()] * 2
    routes = {PATHS["openai-chat"]: [Route.from_body(b, sizes=(97, 151), delays=0.003)
                                     for b in bodies]}
    expected = sorted(json.dumps(assemble(b, "openai-chat").text) for b in bodies)
    got: list[str] = []
    async with ReplayServer(routes) as server, gateway(server.url, "openai-chat") as url:
        client = anthropic_client(url)

        async def one() -> None:
            async with client.messages.stream(model="m", max_tokens=10, messages=ASK) as stream:
                final = await stream.get_final_message()
            got.append(json.dumps("".join(b.text for b in final.content if b.type == "text")))

        async with anyio.create_task_group() as tg:
            for _ in bodies:
                tg.start_soon(one)
        await client.close()
    assert sorted(got) == expected


@pytest.mark.parametrize("upstream", ["anthropic", "openai-responses", "gemini"])
async def test_stream_false_gets_each_dialects_json_body(upstream: str, gateway: Any) -> None:
    first, _ = turn_bodies(upstream)
    turn1, _ = turn_messages(upstream)
    calls = [(c.name, c.arguments) for c in turn1.tool_calls]
    usage = turn1.usage_metadata
    assert usage is not None
    async with ReplayServer({PATHS[upstream]: Route.from_body(first)}) as server, \
            gateway(server.url, upstream, model=MODEL[upstream]) as url:
        a, o = anthropic_client(url), openai_client(url)
        message = await a.messages.create(model="m", max_tokens=10, messages=ASK)
        chat = await o.chat.completions.create(model="m", messages=ASK)
        response = await o.responses.create(model="m", input="hi")
        await a.close()
        await o.close()
        assert all(hit.json().get("stream") is not False for hit in server.hits)
    assert message.stop_reason == "tool_use"
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == calls
    assert message.usage.output_tokens == usage.response_tokens
    reply = chat.choices[0]
    assert reply.finish_reason == "tool_calls"
    assert [(c.function.name, json.loads(c.function.arguments))
            for c in reply.message.tool_calls or []] == calls
    assert chat.usage is not None and chat.usage.prompt_tokens == usage.prompt_tokens
    assert [(o.name, json.loads(o.arguments)) for o in response.output
            if o.type == "function_call"] == calls
    assert response.usage is not None and response.usage.output_tokens == usage.response_tokens
    assert response.output_text == turn1.text


async def test_the_app_mounts_inside_a_users_starlette_app() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    first, _ = turn_bodies("anthropic")
    async with ReplayServer({PATHS["anthropic"]: Route.from_body(first)}) as server:
        outer = Starlette(routes=[Mount("/llm", create_app(server.url, "anthropic"))])
        async with serve(outer) as url:
            client = openai.AsyncOpenAI(base_url=url + "/llm/v1", api_key="k", max_retries=0)
            chat = await client.chat.completions.create(model="m", messages=ASK)
            await client.close()
    assert chat.choices[0].message.tool_calls


def test_recordings_are_present() -> None:
    assert Path(DATA / "gateway" / "responses_answer.sse").exists()
