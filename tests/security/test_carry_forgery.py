"""Replay-state tokens are signed: a forged, truncated or foreign token is a 400, never a crash."""

from __future__ import annotations

import logging

import pytest
from gateway_parts import ROUTES, enveloped, in_process

pytest.importorskip("starlette", reason="the gateway extra is not installed")
from streamflow.core.errors import RequestError
from streamflow.servers.gateway import _carry as carry
from streamflow.servers.gateway._carry import pack, unpack

pytestmark = pytest.mark.anyio
KEY, OTHER = b"k" * 32, b"o" * 32


def test_a_token_verifies_only_under_its_own_key() -> None:
    token = pack({"f": {"extra_content": {"x": 1}}}, KEY)
    assert unpack(token, KEY) == {"f": {"extra_content": {"x": 1}}}
    for bad in (token[:-3], token[:10], "sf1_" + token[6:], pack({"f": 1}, OTHER),
                token[:-1] + ("A" if token[-1] != "A" else "B"), "sf1_", "sf1_é"):
        with pytest.raises(RequestError):
            unpack(bad, KEY)


def test_without_a_key_a_random_one_is_made_with_a_warning(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(carry, "_process_key", None)
    with caplog.at_level(logging.WARNING, "streamflow.servers.gateway"):
        token = pack([1])
    assert "do not survive a restart" in caplog.text
    assert unpack(token) == [1]
    monkeypatch.setattr(carry, "_process_key", None)
    with pytest.raises(RequestError):  # another process: another key
        unpack(token)


def _forged_turns(token: str) -> dict[str, dict[str, object]]:
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1__" + token, "type": "function",
         "function": {"name": "f", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "call_1__" + token, "content": "ok"}
    return {
        "openai-chat": {"model": "m", "messages": [
            {"role": "user", "content": "hi"}, call, result]},
        "anthropic": {"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": token},
                {"type": "text", "text": "x"}]},
            {"role": "user", "content": "more"}]},
        "openai-responses": {"model": "m", "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": token},
            {"role": "user", "content": "more"}]},
    }


@pytest.mark.parametrize("dialect", list(ROUTES))
async def test_forged_truncated_and_foreign_tokens_are_400s_and_never_reach_the_upstream(
        dialect: str) -> None:
    client, seen = in_process("openai-chat" if dialect != "openai-chat" else "anthropic",
                              carry_key=KEY)
    genuine = pack({"f": {"extra_content": {"google": {"thought_signature": "s"}}}}, KEY)
    forged = genuine[:4] + "A" * 22 + genuine[26:]
    async with client:
        for token in (forged, genuine[:-4], pack({"f": {"x": 1}}, OTHER)):
            response = await client.post(ROUTES[dialect], json=_forged_turns(token)[dialect])
            assert response.status_code == 400, response.text
            assert "replay-state token" in enveloped(dialect, response.json())
        assert seen == []
        response = await client.post(ROUTES[dialect], json=_forged_turns(genuine)[dialect])
    assert response.status_code == 200, response.text
    assert len(seen) == 1
