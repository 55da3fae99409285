"""Fuzzed gateway requests: valid-shaped JSON with wrong types and ranges in every field.

In-process (httpx.ASGITransport) over a canned upstream, every client route, both
a translating and a same-dialect upstream: never a 5xx, every 4xx in the route's
own error envelope. The ``ci`` hypothesis profile runs more examples.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from gateway_parts import ROUTES, VALID, enveloped, in_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the gateway extra is not installed")

SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=False) | st.sampled_from([-1, 0, 1, 1e30, -0.5, 2.5, 1e308])
           | st.text(max_size=8) | st.sampled_from(["\ud800", "auto", "none", "tool", "any",
                                                     "user", "assistant", "text", "function"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(
                          ["type", "text", "name", "id", "role", "content", "effort",
                           "budget_tokens", "arguments", "input", "call_id", "function",
                           "tool_use_id", "signature", "include_usage", "image_url", "url"])
                          | st.text(max_size=4), inner, max_size=3), max_leaves=6)

FIELDS = {
    "anthropic": ["model", "max_tokens", "messages", "system", "tools", "tool_choice",
                  "temperature", "top_p", "top_k", "stop_sequences", "stream", "thinking",
                  "metadata"],
    "openai-chat": ["model", "messages", "max_tokens", "max_completion_tokens", "temperature",
                    "top_p", "n", "stop", "stream", "stream_options", "tools", "tool_choice",
                    "reasoning_effort", "response_format", "seed", "frequency_penalty",
                    "presence_penalty", "parallel_tool_calls", "user"],
    "openai-responses": ["model", "input", "instructions", "max_output_tokens", "temperature",
                         "top_p", "tools", "tool_choice", "reasoning", "stream", "text",
                         "parallel_tool_calls", "stream_options", "include", "store"],
}
MESSAGE_FIELDS = ["role", "content", "tool_calls", "tool_call_id", "name", "type", "id",
                  "call_id", "arguments", "output", "summary", "encrypted_content"]


def _message_path(dialect: str) -> str:
    return "input" if dialect == "openai-responses" else "messages"


@st.composite
def hostile_body(draw: st.DrawFn, dialect: str) -> Any:
    body: dict[str, Any] = json.loads(json.dumps(VALID[dialect]))
    for field in draw(st.lists(st.sampled_from(FIELDS[dialect]), max_size=3, unique=True)):
        body[field] = draw(VALUES)
    if draw(st.booleans()):
        turn = {"role": "user", "content": "hi"}
        for field in draw(st.lists(st.sampled_from(MESSAGE_FIELDS), min_size=1, max_size=3,
                                   unique=True)):
            turn[field] = draw(VALUES)
        body[_message_path(dialect)] = [turn]
    return body


def _run(dialect: str, upstream: str, body: Any) -> None:
    async def go() -> None:
        client, _ = in_process(upstream)
        async with client:
            text = json.dumps(body)
            response = await client.post(ROUTES[dialect], content=text,
                                         headers={"content-type": "application/json",
                                                  "authorization": "Bearer k"})
        assert response.status_code < 500, (response.status_code, text, response.text)
        if response.status_code >= 400:
            enveloped(dialect, response.json())
    anyio.run(go)


@pytest.mark.parametrize("upstream", ["anthropic", "openai-chat"])
@pytest.mark.parametrize("dialect", list(ROUTES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_request_is_a_5xx_and_every_refusal_is_enveloped(
        dialect: str, upstream: str, data: st.DataObject) -> None:
    _run(dialect, upstream, data.draw(hostile_body(dialect)))
