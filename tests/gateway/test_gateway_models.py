"""``GET /v1/models`` on the gateway: the upstream's list in the client dialect's shape.

The official SDKs are the clients (``openai.OpenAI(...).models.list()``,
``anthropic.Anthropic(...).models.list()``, run in a worker thread), under real
uvicorn, against a replayed upstream list of each upstream dialect.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import anyio
import httpx
import pytest

from streamflow.servers.replay import ReplayServer, Route

pytestmark = pytest.mark.anyio
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

from streamflow.servers.gateway import _models  # noqa: E402
from streamflow.wire.dialects import get_request  # noqa: E402

ANTHROPIC_LIST = {
    "data": [
        {"type": "model", "id": "claude-opus-4-6", "display_name": "Claude Opus 4.6",
         "created_at": "2026-02-04T00:00:00Z", "max_input_tokens": 200000,
         "max_tokens": 128000, "lifecycle": "active", "capabilities": {"batch": {}}},
        {"type": "model", "id": "claude-3-sonnet", "display_name": "Claude 3 Sonnet",
         "created_at": "2024-02-29T00:00:00Z", "lifecycle": "deprecated"},
        {"type": "model", "id": "claude-2", "display_name": "Claude 2",
         "created_at": "2023-07-11T00:00:00Z", "lifecycle": "retired"}],
    "has_more": False, "first_id": "claude-opus-4-6", "last_id": "claude-2"}
OPENAI_LIST = {  # OpenRouter's entries carry a name and limits
    "object": "list",
    "data": [
        {"id": "openai/gpt-5", "object": "model", "created": 1754587413, "owned_by": "openai",
         "name": "OpenAI: GPT-5", "context_length": 400000,
         "top_provider": {"max_completion_tokens": 128000}},
        {"id": "llama-3", "object": "model", "created": 1700000000},
        {"id": 7}, "not an object"]}
GEMINI_LIST = {
    "models": [
        {"name": "models/gemini-2.5-flash", "displayName": "Gemini 2.5 Flash",
         "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
         "supportedGenerationMethods": ["generateContent", "countTokens"]},
        {"name": "models/text-embedding-004", "displayName": "Text Embedding 004",
         "supportedGenerationMethods": ["embedContent"]}],
    "nextPageToken": "abc"}
LIST = {"anthropic": ANTHROPIC_LIST, "openai-chat": OPENAI_LIST,
        "openai-responses": OPENAI_LIST, "gemini": GEMINI_LIST}
LIST_PATH = {"anthropic": "/v1/models", "openai-chat": "/v1/models",
             "openai-responses": "/v1/models", "gemini": "/v1beta/models"}
SENT_PATH = {"anthropic": "/v1/models?limit=1000", "openai-chat": "/v1/models",
             "openai-responses": "/v1/models", "gemini": "/v1beta/models?pageSize=1000"}
IDS = {"anthropic": ["claude-opus-4-6", "claude-3-sonnet"],
       "openai-chat": ["openai/gpt-5", "llama-3"], "openai-responses": ["openai/gpt-5", "llama-3"],
       "gemini": ["gemini-2.5-flash"]}


def listed(dialect: str, **route: Any) -> dict[str, Route]:
    body = json.dumps(LIST[dialect]).encode()
    return {LIST_PATH[dialect]: Route(chunks=[body[:50], body[50:]],
                                      content_type="application/json", **route)}


async def openai_models(url: str, key: str = "client-key", **options: Any) -> list[Any]:
    def work() -> list[Any]:
        with openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0,
                           **options) as client:
            return list(client.models.list())
    return await anyio.to_thread.run_sync(work)


async def anthropic_models(url: str, key: str = "client-key") -> list[Any]:
    def work() -> list[Any]:
        with anthropic.Anthropic(base_url=url, api_key=key, max_retries=0) as client:
            return list(client.models.list())
    return await anyio.to_thread.run_sync(work)


async def get(url: str, headers: dict[str, str]) -> httpx.Response:
    """``GET /v1/models`` from a worker thread (the upstream runs on the test's loop)."""
    return await anyio.to_thread.run_sync(
        lambda: httpx.get(url + "/v1/models", headers=headers, timeout=10))


@pytest.mark.parametrize("upstream", ["anthropic", "openai-chat", "openai-responses", "gemini"])
async def test_each_sdk_lists_the_upstreams_models_in_its_own_shape(upstream: str,
                                                                    gateway: Any) -> None:
    async with ReplayServer(listed(upstream)) as server, gateway(server.url, upstream) as url:
        chat = await openai_models(url, default_headers={"x-private": "not for upstream"})
        messages = await anthropic_models(url)
    assert [m.id for m in chat] == IDS[upstream] == [m.id for m in messages]
    assert {m.object for m in chat} == {"model"}
    assert all(isinstance(m.created, int) and isinstance(m.owned_by, str) for m in chat)
    assert all(m.type == "model" and isinstance(m.created_at, datetime) and m.display_name
               for m in messages)
    assert [hit.path for hit in server.hits] == [SENT_PATH[upstream]] * 2
    assert {hit.method for hit in server.hits} == {"GET"}
    side = get_request(upstream)
    sent = {name: value for hit in server.hits for name, value in hit.headers.items()}
    assert "x-private" not in sent  # nothing of the client's but its key goes upstream
    assert sent[side.credential] == ("Bearer client-key" if side.bearer else "client-key")
    assert all(sent.get(name) == value for name, value in side.headers.items())


async def test_what_each_list_says_is_carried_across(gateway: Any) -> None:
    async with ReplayServer(listed("anthropic")) as server, \
            gateway(server.url, "anthropic") as url:
        chat = await openai_models(url)
    opus = chat[0]
    assert (opus.created, opus.owned_by) == (
        int(datetime(2026, 2, 4, tzinfo=UTC).timestamp()), "anthropic")
    async with ReplayServer(listed("openai-chat")) as server, \
            gateway(server.url, "openai-chat") as url:
        messages = await anthropic_models(url)
        raw = (await get(url, {"anthropic-version": "2023-06-01", "x-api-key": "k"})).json()
    gpt = messages[0]
    assert (gpt.display_name, gpt.max_input_tokens, gpt.max_tokens) == (
        "OpenAI: GPT-5", 400000, 128000)
    assert gpt.created_at == datetime.fromtimestamp(1754587413, UTC)
    assert messages[1].display_name == "llama-3"  # no name: its id
    assert (raw["has_more"], raw["first_id"], raw["last_id"]) == (False, "openai/gpt-5",
                                                                  "llama-3")
    assert [m["lifecycle"] for m in raw["data"]] == ["active", "active"]
    async with ReplayServer(listed("anthropic")) as server, \
            gateway(server.url, "anthropic") as url:
        raw = (await get(url, {"anthropic-version": "2023-06-01", "x-api-key": "k"})).json()
    assert [m["lifecycle"] for m in raw["data"]] == ["active", "deprecated"]  # retired: out


async def test_the_configured_key_goes_upstream_not_the_clients(gateway: Any) -> None:
    async with ReplayServer(listed("gemini")) as server, \
            gateway(server.url, "gemini", api_key="sk-configured") as url:
        models = await openai_models(url, key="client-key")
    assert [m.id for m in models] == ["gemini-2.5-flash"]
    assert server.hits[0].headers["x-goog-api-key"] == "sk-configured"
    assert "client-key" not in json.dumps(server.hits[0].headers)


async def test_a_configured_model_is_the_list_without_asking_the_upstream(gateway: Any) -> None:
    async with ReplayServer(listed("anthropic")) as server, \
            gateway(server.url, "anthropic", model="claude-sonnet-4-5") as url:
        chat = await openai_models(url)
        messages = await anthropic_models(url)
        bare = await get(url, {})  # no key, none configured
    assert [(m.id, m.owned_by) for m in chat] == [("claude-sonnet-4-5", "anthropic")]
    assert [m.id for m in messages] == ["claude-sonnet-4-5"]
    assert server.hits == []
    assert bare.status_code == 401 and "claude" not in bare.text


async def test_an_upstream_failure_is_each_sdks_own_error_and_leaks_nothing(
        gateway: Any) -> None:
    refusal = Route.error(401, {"error": {"type": "authentication_error", "message":
                                          "invalid x-api-key sk-configured at "
                                          "https://internal.example/keys"}})
    async with ReplayServer({"/v1/models": refusal}) as server, \
            gateway(server.url, "anthropic", api_key="sk-configured") as url:
        with pytest.raises(openai.AuthenticationError) as chat:
            await openai_models(url)
        with pytest.raises(anthropic.AuthenticationError) as messages:
            await anthropic_models(url)
    for error in (chat.value, messages.value):
        body = error.response.text
        assert "sk-configured" not in body and "internal.example" not in body
        assert "the upstream refused to list its models (status 401)" in body
    assert messages.value.response.json()["type"] == "error"  # Anthropic's envelope
    busy = Route.error(429, {"error": {"message": "slow down"}}, headers={"retry-after": "7"})
    async with ReplayServer({"/v1/models": busy}) as server, \
            gateway(server.url, "openai-chat") as url:
        answer = await get(url, {"authorization": "Bearer k"})
    assert (answer.status_code, answer.headers["retry-after"]) == (429, "7")
    assert "slow down" not in answer.text


@pytest.mark.parametrize(("route", "status"), [
    (Route(chunks=[b"<html>not json</html>"], content_type="text/html"), 502),
    (Route(chunks=[b"{}", b" " * (5 << 20)], content_type="application/json"), 502),
    (Route(chunks=[b"{}"], content_type="application/json", delays=[0, 2]), 504),
    (Route(status=302, headers={"location": "http://127.0.0.1:9/steal"}), 502),
    (Route(chunks=[json.dumps({"data": "nope"}).encode()], content_type="application/json"),
     502),
])
async def test_a_broken_slow_huge_or_redirecting_list_is_a_bounded_failure(
        route: Route, status: int, gateway: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_models, "MODELS_TIMEOUT", 1.0)
    if route.delays:
        route.chunks.append(b"")
    async with ReplayServer({"/v1/models": route}) as server, \
            gateway(server.url, "openai-chat") as url:
        answer = await get(url, {"authorization": "Bearer k"})
    assert answer.status_code == status
    assert answer.json()["error"]["message"]  # OpenAI's envelope
    assert len(server.hits) == 1  # a redirect is not followed


async def test_the_route_is_no_proxy(gateway: Any) -> None:
    async with ReplayServer(listed("openai-chat")) as server, \
            gateway(server.url, "openai-chat") as url:
        def ask() -> list[int]:
            with httpx.Client(base_url=url, headers={"authorization": "Bearer k"}) as client:
                return [client.get("/v1/models", params={"after_id": "x",
                                                         "url": "http://127.0.0.1:9/"}).status_code,
                        client.get("/v1/models/../../admin").status_code,
                        client.get("/v1/models/gpt-5").status_code,
                        client.post("/v1/models", json={}).status_code,
                        client.request("DELETE", "/v1/models").status_code]
        codes = await anyio.to_thread.run_sync(ask)
    assert codes == [200, 404, 404, 405, 405]
    assert [hit.path for hit in server.hits] == ["/v1/models"]
