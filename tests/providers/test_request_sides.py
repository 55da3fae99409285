"""The request side each dialect folder declares: endpoints, credentials, options kept, refused."""

from __future__ import annotations

from typing import Any

import pytest

from streamflow.app.providers import HTTPRequest, make_provider
from streamflow.core.errors import RequestError
from streamflow.core.requests import ChatRequest, Turn
from streamflow.wire.dialects import REQUESTS, credential_headers, get_request
from streamflow.wire.dialects.openai_chat.request import is_official

CLIENTS = ("anthropic", "openai-chat", "openai-responses")


def chat_body(**options: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **options}


def body_of(dialect: str, **options: Any) -> dict[str, Any]:
    if dialect == "openai-responses":
        return {"model": "m", "input": "Hi", **options}
    if dialect == "anthropic":
        return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}],
                **options}
    return chat_body(**options)


def test_every_registered_request_side_builds_its_streaming_request() -> None:
    request = ChatRequest(model="gemini/x", turns=[Turn.user("Hi")], max_tokens=5)
    urls = {name: get_request(name).http_request("https://h.test/base/", request,
                                                 api_key="K") for name in REQUESTS}
    assert {n: r.url for n, r in urls.items()} == {
        "anthropic": "https://h.test/base/v1/messages",
        "openai-chat": "https://h.test/base/chat/completions",
        "openai-responses": "https://h.test/base/responses",
        "gemini": "https://h.test/base/v1beta/models/gemini%2Fx:streamGenerateContent?alt=sse"}
    assert urls["anthropic"].headers["x-api-key"] == "K"
    assert urls["anthropic"].headers["anthropic-version"]
    assert urls["gemini"].headers["x-goog-api-key"] == "K"
    assert urls["openai-chat"].headers["authorization"] == "Bearer K"
    assert all(r.json["stream"] is True for n, r in urls.items() if n != "gemini")


def test_one_credential_list_masks_every_dialects_key_header() -> None:
    assert {"authorization", "x-api-key", "x-goog-api-key"} <= credential_headers()
    request = HTTPRequest("https://h.test", {"X-Goog-Api-Key": "secret", "x-api-key": "s",
                                             "Authorization": "Bearer s", "accept": "a"}, {})
    assert request.redacted_headers() == {"X-Goog-Api-Key": "<redacted>",
                                          "x-api-key": "<redacted>",
                                          "Authorization": "Bearer <redacted>", "accept": "a"}


@pytest.mark.parametrize(("url", "official"), [
    ("https://api.openai.com/v1", True), ("https://api.openai.com/v1/", True),
    ("http://127.0.0.1:8080/v1", False), ("https://proxy.test/api.openai.com/v1", False)])
def test_one_test_for_openais_own_api_used_by_the_provider_and_the_gateway(
        url: str, official: bool) -> None:
    assert is_official(url) is official
    key = "max_completion_tokens" if official else "max_tokens"
    provider = make_provider("openai-chat", base_url=url, api_key="k", max_tokens=7)
    assert provider.request([Turn.user("Hi")]).json[key] == 7
    built = get_request("openai-chat").http_request(
        url, ChatRequest(model="m", turns=[Turn.user("Hi")], max_tokens=7))
    assert built.json[key] == 7 and len([k for k in built.json if "max" in k]) == 1


@pytest.mark.parametrize(("client", "options", "upstream", "named"), [
    ("openai-chat", {"seed": 3}, "anthropic", "seed"),
    ("openai-chat", {"seed": 3}, "openai-responses", "seed"),
    ("openai-chat", {"stop": ["END"]}, "openai-responses", "stop"),
    ("openai-chat", {"n": 2}, "gemini", "n"),
    ("openai-chat", {"logit_bias": {"1": 2}}, "anthropic", "logit_bias"),
    ("openai-chat", {"parallel_tool_calls": False,
                     "tools": [{"type": "function", "function": {"name": "f"}}]}, "gemini",
     "parallel_tool_calls"),
    ("anthropic", {"stop_sequences": ["END"]}, "openai-responses", "stop_sequences"),
    ("anthropic", {"metadata": {"user_id": "u"}}, "gemini", "metadata.user_id"),
    ("openai-responses", {"metadata": {"team": "x"}}, "anthropic", "metadata"),
    ("openai-responses", {"previous_response_id": "resp_1"}, "openai-chat",
     "previous_response_id"),
])
def test_an_option_the_upstream_cannot_carry_is_named(
        client: str, options: dict[str, Any], upstream: str, named: str) -> None:
    parse = get_request(client).parse
    assert parse is not None
    request = parse(body_of(client, **options))
    assert named in get_request(upstream).unsupported(request)
    assert get_request(client).unsupported(request) == []  # its own format keeps everything
    get_request(upstream).drop(request, [named])
    assert get_request(upstream).unsupported(request) == []


def test_options_are_translated_where_the_upstream_has_a_place() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "A", "schema": schema, "strict": True}}
    chat = get_request("openai-chat")
    assert chat.parse is not None
    request = chat.parse(chat_body(response_format=fmt, seed=4, user="u", presence_penalty=0.5,
                                   metadata={"k": "v"}))
    assert get_request("openai-responses").build(request)["text"] == {
        "format": {"type": "json_schema", "name": "A", "schema": schema, "strict": True}}
    gemini = get_request("gemini").build(request)["generationConfig"]
    assert gemini["responseMimeType"] == "application/json"
    assert gemini["responseJsonSchema"] == schema
    assert (gemini["seed"], gemini["presencePenalty"]) == (4, 0.5)
    back = chat.build(request)
    assert back["response_format"] == fmt and back["seed"] == 4 and back["user"] == "u"
    anthropic = get_request("anthropic")
    assert anthropic.parse is not None
    claude = anthropic.parse(body_of("anthropic", top_k=5, metadata={"user_id": "u9"}))
    assert get_request("gemini").build(claude)["generationConfig"]["topK"] == 5
    assert chat.build(claude)["user"] == "u9"
    assert anthropic.build(claude)["metadata"] == {"user_id": "u9"}


@pytest.mark.parametrize(("client", "options", "words"), [
    ("openai-chat", {"tool_choice": "bogus"}, "not 'bogus'"),
    ("openai-responses", {"tool_choice": "bogus"}, "not 'bogus'"),
    ("anthropic", {"tool_choice": {"type": "bogus"}}, "not 'bogus'"),
    ("openai-chat", {"response_format": {"type": "yaml"}}, "not 'yaml'"),
    ("openai-chat", {"max_tokens": "ten"}, "not 'ten'"),
    ("openai-chat", {"n": 0}, "n must be at least 1"),
    ("openai-chat", {"seed": 1.5}, "seed must be an integer, not 1.5"),
])
def test_a_bad_value_gets_a_message_about_the_value(
        client: str, options: dict[str, Any], words: str) -> None:
    parse = get_request(client).parse
    assert parse is not None
    with pytest.raises(RequestError) as info:
        parse(body_of(client, **options))
    assert words in info.value.message


def test_each_client_format_has_its_route_and_error_envelope() -> None:
    from streamflow.wire.dialects.request_base import ErrorInfo
    paths = {name: get_request(name).client_path for name in REQUESTS}
    assert paths == {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions",
                     "openai-responses": "/v1/responses", "gemini": None}
    info = ErrorInfo(400, "bad")
    assert get_request("anthropic").error_body(info) == {
        "type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    assert get_request("openai-chat").error_body(info)["error"]["type"] == \
        "invalid_request_error"
    assert get_request("gemini").error_body(info) == {
        "error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}


@pytest.mark.parametrize("client", ["openai-chat", "openai-responses"])
def test_a_json_format_reaches_anthropic_as_its_output_config(client: str) -> None:
    parse = get_request(client).parse
    assert parse is not None
    options: dict[str, Any] = ({"response_format": {"type": "json_object"}} if client ==
                               "openai-chat" else {"text": {"format": {"type": "json_object"}}})
    request = parse(body_of(client, **options))
    assert get_request("anthropic").unsupported(request) == []
    built = get_request("anthropic").build(request)
    assert built["output_config"] == {"format": {"type": "json_schema",
                                                 "schema": {"type": "object"}}}
