"""Hostile request fields: each known crasher and out-of-range value is a 4xx, enveloped.

In-process for the matrix; the official SDKs under real uvicorn for the client's
view (``BadRequestError``, no retry: one request reaches the gateway).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gateway_parts import ROUTES, VALID, enveloped, in_process
from hostile import Counting, HostileUpstream, serve

pytest.importorskip("starlette", reason="the gateway extra is not installed")
from streamflow.servers.gateway import create_app

pytestmark = pytest.mark.anyio

HOSTILE: dict[str, list[dict[str, Any]]] = {
    "anthropic": [{"tool_choice": {"type": [1]}}, {"max_tokens": -1}, {"max_tokens": 1e30},
                  {"max_tokens": 0}, {"temperature": 7}, {"top_p": -1}, {"top_k": -3},
                  {"thinking": {"type": "enabled", "budget_tokens": [1]}},
                  {"messages": [{"role": "user", "content": [{"type": [1]}]}]},
                  {"messages": [{"role": "robot", "content": "x"}]},
                  {"system": {"a": 1}}, {"metadata": 1.5}],
    "openai-chat": [{"tool_choice": {"type": [1]}}, {"stream_options": 1.5},
                    {"reasoning_effort": [1]}, {"max_tokens": -1}, {"max_tokens": 1e30},
                    {"max_completion_tokens": 0}, {"temperature": -0.1}, {"n": 0},
                    {"n": 10_000}, {"frequency_penalty": 9}, {"stop": 5},
                    {"messages": "hi"}],
    "openai-responses": [{"reasoning": {"effort": [1]}}, {"tool_choice": {"type": [1]}},
                         {"stream_options": 1.5}, {"max_output_tokens": -1},
                         {"max_output_tokens": 1e30}, {"temperature": 3}, {"top_p": 2},
                         {"input": [{"type": [1]}]}, {"input": 5}],
}


@pytest.mark.parametrize("upstream", ["anthropic", "openai-chat"])
@pytest.mark.parametrize("dialect", list(ROUTES))
async def test_hostile_fields_are_4xx_in_the_routes_envelope(dialect: str, upstream: str) -> None:
    client, seen = in_process(upstream)
    async with client:
        for change in HOSTILE[dialect]:
            response = await client.post(ROUTES[dialect], json={**VALID[dialect], **change})
            assert 400 <= response.status_code < 500, (change, response.text)
            enveloped(dialect, response.json())
        surrogate = json.dumps(VALID[dialect])[:-1] + ', "model": "\\ud800"}'
        response = await client.post(ROUTES[dialect], content=surrogate)
        assert response.status_code == 400
        enveloped(dialect, response.json())
    assert seen == []


async def test_a_non_ascii_api_key_is_a_401_not_a_crash() -> None:
    client, seen = in_process("anthropic")
    async with client:
        response = await client.post(ROUTES["anthropic"], json=VALID["anthropic"],
                                     headers={"x-api-key": "kéy".encode()})
    assert response.status_code == 401
    enveloped("anthropic", response.json())
    assert seen == []


async def test_our_own_bug_is_an_enveloped_500_with_a_request_id(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamflow.servers.gateway import _app as app_module

    def broken(chat: Any, limits: Any) -> None:
        raise KeyError("a bug")
    monkeypatch.setattr(app_module, "check_ranges", broken)
    client, _ = in_process("anthropic")
    async with client:
        response = await client.post(ROUTES["openai-chat"], json=VALID["openai-chat"])
    assert response.status_code == 500
    message = enveloped("openai-chat", response.json())
    request_id = message.rsplit("request id ", 1)[1].rstrip(")")
    assert any(request_id in r.getMessage() and r.exc_info for r in caplog.records)


async def test_the_sdks_raise_bad_request_and_do_not_retry() -> None:
    anthropic = pytest.importorskip("anthropic")
    openai = pytest.importorskip("openai")
    with HostileUpstream([]) as upstream:
        app = Counting(create_app(upstream.url, "anthropic"))
        async with serve(app) as url:
            claude = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=2)
            with pytest.raises(anthropic.BadRequestError):
                await claude.messages.create(model="m", max_tokens=-1,
                                             messages=[{"role": "user", "content": "x"}])
            gpt = openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=2)
            with pytest.raises(openai.BadRequestError):
                await gpt.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}],
                    tool_choice={"type": [1]})  # type: ignore[arg-type]
            with pytest.raises(openai.BadRequestError):
                await gpt.responses.create(model="m", input="x",
                                           reasoning={"effort": [1]})  # type: ignore[typeddict-item]
            await claude.close()
            await gpt.close()
    assert app.requests == 3
    assert upstream.arrived == []


async def test_a_model_name_too_long_for_an_upstream_url_is_a_400_and_is_not_kept() -> None:
    """Gemini puts the model in the URL: one httpx cannot send is the client's error, and
    long ones (each request its own) are not cached by the gateway's URL cache."""
    import httpx

    from streamflow.servers.gateway._upstream import _parsed

    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=(
            b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},'
            b'"finishReason":"STOP"}]}\n\n'))

    upstream = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    app = create_app("http://upstream", "gemini", client=upstream, api_key="k")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://gw") as client:
        huge = {**VALID["openai-chat"], "model": "m" * 70_000}
        response = await client.post(ROUTES["openai-chat"], json=huge)
        assert response.status_code == 400
        assert "URL" in enveloped("openai-chat", response.json()) and seen == []
        cached = _parsed.cache_info().currsize
        for n in range(20):
            long = {**VALID["openai-chat"], "model": f"{n}" + "m" * 5_000}
            response = await client.post(ROUTES["openai-chat"], json=long)
            assert response.status_code == 200 and f"/models/{n}mmm" in str(seen[-1].url)
        assert _parsed.cache_info().currsize == cached
